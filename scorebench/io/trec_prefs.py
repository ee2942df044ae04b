"""Readers for trec_eval's other judgment formats: preferences (``-R prefs``) and qrels with
judgment groups (``-R qrels_jg``).

* prefs: ``qid ujg ujsubg docno rel_level`` lines. Within one judgment sub-group (JSG) a
  document with a higher ``rel_level`` is preferred to one with a lower level; the values
  only order the documents (``rel_level`` is a non-negative number).
* qrels_jg: ``qid ujg docno rel`` lines, an ordinary qrels whose second field names the
  judgment group (the user, or assessor) instead of the unused iteration; ``rel`` is an
  integer in [-127, 127], and a (query, group, document) may be judged only once.

Both readers accept ``#`` comment lines (trec_eval 10.0). :func:`qrels_of_group` takes one
group's judgments as the ``qid, docid, relevance`` qrels the ranking kind reads.

Reference: trec_eval 10.0, NIST (https://github.com/usnistgov/trec_eval), ``get_prefs.c``,
``get_qrels_jg.c`` and its README.

Examples
--------
>>> import pathlib, tempfile
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "f0").write_text("q1 u1 s1 d1 3.0\\nq1 u1 s1 d2 2\\n")
>>> read_trec_prefs(folder / "f0").values.tolist()
[['q1', 'u1', 's1', 'd1', 3.0], ['q1', 'u1', 's1', 'd2', 2.0]]
>>> _ = (folder / "f1").write_text("301 0 d1 1\\n301 1 d1 0\\n")
>>> read_trec_qrels_jg(folder / "f1").values.tolist()
[['301', '0', 'd1', 1], ['301', '1', 'd1', 0]]
>>> _ = (folder / "f2").write_text("301 0 d1 1\\n301 0 d2 0.5\\n")
>>> read_trec_qrels_prefs(folder / "f2").values.tolist()
[['301', '0', '0', 'd1', 1.0], ['301', '0', '0', 'd2', 0.5]]
"""

from __future__ import annotations

import os

import pandas as pd

from scorebench.core.errors import InputError
from scorebench.io.trec import first_data_fields, read_judgments, trec_layout

__all__ = ["read_trec_prefs", "read_trec_qrels_jg", "read_trec_qrels_prefs", "read_prefs_judgments",
           "looks_like_prefs", "detect_prefs", "qrels_of_group"]


def read_trec_prefs(path: str | os.PathLike) -> pd.DataFrame:
    """Read a trec_eval preferences file into ``qid, jg, jsg, docid, relevance``.

    See the module's examples.
    """
    frame = read_judgments(path, ("qid", "jg", "jsg", "docid", "relevance"), what="prefs", valid=lambda rel: rel >= 0,
                           expected="rel_level must be >= 0 (it orders documents within a judgment sub-group)")
    return frame[["qid", "jg", "jsg", "docid", "relevance"]]


def read_trec_qrels_jg(path: str | os.PathLike) -> pd.DataFrame:
    """Read a trec_eval qrels file with judgment groups into ``qid, jg, docid, relevance``.

    See the module's examples.
    """
    frame = read_judgments(path, ("qid", "jg", "docid", "relevance"), what="qrels_jg", integer=True,
                           valid=lambda rel: (rel >= -127) & (rel <= 127),
                           expected="relevance must be an integer in [-127, 127]")
    dup = frame.duplicated(["qid", "jg", "docid"])
    if dup.any():
        row = frame[dup].iloc[0]
        raise InputError(f"qrels_jg file {str(path)!r}: document {row['docid']!r} is judged twice for query "
                         f"{row['qid']!r} in judgment group {row['jg']!r}")
    return frame[["qid", "jg", "docid", "relevance"]]


def read_trec_qrels_prefs(path: str | os.PathLike) -> pd.DataFrame:
    """Read qrels as trec_eval's ``-R qrels_prefs`` does: ``qid jg docno rel`` lines, each
    judgment group one judgment sub-group (``jsg`` = ``"0"``), ``rel`` any number (``atof``).

    Returns ``qid, jg, jsg, docid, relevance``, the columns of :func:`read_trec_prefs`.

    See the module's examples.
    """
    frame = read_judgments(path, ("qid", "jg", "docid", "relevance"), what="qrels_prefs")
    frame.insert(2, "jsg", "0")
    return frame[["qid", "jg", "jsg", "docid", "relevance"]]


def looks_like_prefs(path: str | os.PathLike) -> bool:
    """Whether the first data line has the five fields of a prefs file (``qid ujg ujsubg docno rel``)."""
    return first_data_fields(path) == 5


def detect_prefs(path: str | os.PathLike) -> bool:
    """Whether ``path`` is laid out like a prefs file (five fields a line, no comma in a ``.txt``):
    the format registry's detector."""
    return trec_layout(path) == 5


def read_prefs_judgments(path: str | os.PathLike) -> pd.DataFrame:
    """A prefs file (5 fields a line) or qrels read as prefs (4 fields), as ``qid, jg, jsg, docid,
    relevance``: trec_eval's ``-R prefs`` and ``-R qrels_prefs``, chosen from the file's layout."""
    return read_trec_prefs(path) if looks_like_prefs(path) else read_trec_qrels_prefs(path)


def qrels_of_group(qrels_jg: pd.DataFrame, jg: str) -> pd.DataFrame:
    """The judgments of one group as ``qid, docid, relevance`` (the ranking kind's qrels).

    Examples
    --------
    >>> t = pd.DataFrame({"qid": ["1", "1"], "jg": ["0", "1"], "docid": ["a", "a"], "relevance": [1, 0]})
    >>> qrels_of_group(t, "1").values.tolist()
    [['1', 'a', 0]]
    """
    missing = [c for c in ("qid", "jg", "docid", "relevance") if c not in qrels_jg.columns]
    if missing:
        raise InputError(f"qrels_of_group: the table lacks the column(s) {missing}")
    groups = qrels_jg["jg"].astype(str)
    if str(jg) not in set(groups):
        raise InputError(f"qrels_of_group: no judgment group {jg!r}; the table has {sorted(set(groups))}")
    return qrels_jg.loc[groups == str(jg), ["qid", "docid", "relevance"]].reset_index(drop=True)
