"""Readers for TREC run and qrels files, the formats ``trec_eval`` reads.

A *run* file has one retrieved document per line, six whitespace-separated fields::

    qid  Q0  docid  rank  score  tag

and a *qrels* file one judgment per line, four fields::

    qid  iteration  docid  relevance

Lines whose first character is ``#`` are comments (as in trec_eval 10.0) and blank lines are
skipped. A malformed line raises :class:`~scorebench.core.errors.InputError` naming the file and
the line number. Both readers return DataFrames in the column conventions of the
``ranking`` table kind (:mod:`scorebench.metrics.ranking`): the run tag becomes the
``system`` column, ids are strings, scores are float64 and relevance is an integer
(or float64 when the file holds non-integer grades).
"""

from __future__ import annotations

import io
import os
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.io.atomic import atomic_write, text_writer

__all__ = ["read_trec_run", "read_trec_qrels", "write_trec_run", "looks_like_trec", "first_data_fields", "read_fields",
           "read_judgments", "trec_layout", "detect_run", "detect_qrels"]

_RUN_FIELDS = ("qid", "q0", "docid", "rank", "score", "system")
_QRELS_FIELDS = ("qid", "iteration", "docid", "relevance")


def read_trec_run(path: str | os.PathLike) -> pd.DataFrame:
    """Read a TREC run file into a DataFrame ``qid, docid, rank, score, system``.

    Parameters
    ----------
    path : str or path-like
        A file of ``qid Q0 docid rank score tag`` lines (``#`` comment lines allowed).
        As in trec_eval, fields after the tag are ignored and the rank field is not
        interpreted.

    Returns
    -------
    DataFrame
        Columns ``qid`` (str), ``docid`` (str), ``rank`` (int64 when every rank is an
        integer, else the text; the ranking kind ignores it and orders by score), ``score`` (float64) and ``system``
        (the run tag), in file order.

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".run", delete=False) as f:
    ...     _ = f.write("# a comment\\n1 Q0 d1 1 2.5 bm25\\n1 Q0 d2 2 1.0 bm25\\n")
    >>> run = read_trec_run(f.name)
    >>> run[["qid", "docid", "score", "system"]].values.tolist()
    [['1', 'd1', 2.5, 'bm25'], ['1', 'd2', 1.0, 'bm25']]
    >>> os.unlink(f.name)
    """
    frame = read_fields(path, _RUN_FIELDS, numeric={"score": "number"}, what="run", extra_ok=True)
    rank = pd.to_numeric(frame["rank"], errors="coerce")
    if rank.notna().all() and (rank == rank.round()).all():
        frame["rank"] = rank.to_numpy().astype(np.int64)
    return frame[["qid", "docid", "rank", "score", "system"]]


def read_trec_qrels(path: str | os.PathLike) -> pd.DataFrame:
    """Read a TREC qrels file into a DataFrame ``qid, docid, relevance``.

    Parameters
    ----------
    path : str or path-like
        A file of ``qid iteration docid relevance`` lines (``#`` comment lines allowed).
        Relevance is graded and may be negative (trec_eval reads a negative value as
        "in the pool but not judged").

    Returns
    -------
    DataFrame
        Columns ``qid`` (str), ``docid`` (str) and ``relevance`` (int64, or float64 when
        some grade is not an integer), in file order.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "judged.qrels"
    >>> _ = path.write_text("1 0 d1 2\\n1 0 d3 0\\n")
    >>> read_trec_qrels(path).values.tolist()
    [['1', 'd1', 2], ['1', 'd3', 0]]
    """
    frame = read_judgments(path, _QRELS_FIELDS, what="qrels")
    rel = frame["relevance"].to_numpy()
    if rel.size and np.all(rel == np.round(rel)) and np.abs(rel).max() < 2**53:
        frame["relevance"] = rel.astype(np.int64)
    return frame[["qid", "docid", "relevance"]]


def write_trec_run(run: pd.DataFrame, path: str | os.PathLike, *, tag: str = "scorebench") -> None:
    """Write a run DataFrame (``qid``, ``docid``, ``score``, optional ``system``) as TREC lines.

    Documents are written per query by descending score with ranks from 1; the
    ``system`` column (or ``tag``) becomes the run tag. The file is written atomically.
    """
    for col in ("qid", "docid", "score"):
        if col not in run.columns:
            raise InputError(f"write_trec_run: missing column {col!r}")
    df = run.sort_values(["qid", "score", "docid"], ascending=[True, False, False], kind="stable")
    ranks = df.groupby("qid", sort=False).cumcount() + 1
    tags = df["system"].astype(str) if "system" in df.columns else pd.Series(tag, index=df.index)
    lines = (df["qid"].astype(str) + " Q0 " + df["docid"].astype(str) + " " + ranks.astype(str) + " "
             + df["score"].map(repr) + " " + tags)
    atomic_write({Path(path): text_writer("\n".join(lines) + ("\n" if len(lines) else ""))})


def looks_like_trec(path: str | os.PathLike) -> str | None:
    """Return ``"run"`` or ``"qrels"`` when the file's first data line has that many fields.

    Used by the format registry (:mod:`scorebench.io.formats`) to recognise files named
    ``*.run``/``*.qrels`` or without a table extension. Returns None when the file looks
    like neither.
    """
    fields = first_data_fields(path)
    return None if fields is None else {6: "run", 4: "qrels"}.get(fields)


def trec_layout(path: str | os.PathLike) -> int | None:
    """The number of fields on the first data line of a file laid out like TREC (whitespace
    separated), or None: a ``.txt`` file whose first data line holds a comma is comma-separated
    text with spaces in its fields, not TREC."""
    path = Path(path)
    n = first_data_fields(path)
    if n is not None and path.suffix.lower() == ".txt":
        try:
            with open(path, "rb") as fh:
                line = next((raw for raw in fh if raw.strip() and not raw.startswith(b"#")), b"")
        except OSError:
            return None
        if b"," in line:
            return None
    return n


def detect_run(path: str | os.PathLike) -> bool:
    """Whether ``path`` is laid out like a TREC run (six fields a line): the format registry's detector."""
    return trec_layout(path) == 6


def detect_qrels(path: str | os.PathLike) -> bool:
    """Whether ``path`` is laid out like TREC qrels (four fields a line): the format registry's detector."""
    return trec_layout(path) == 4


def first_data_fields(path: str | os.PathLike) -> int | None:
    """The number of whitespace-separated fields on the first line that is neither blank nor a
    ``#`` comment; None when there is no such line or the file cannot be read.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "judged.txt"
    >>> _ = path.write_text("# header\\n\\n1 0 d1 2\\n")
    >>> first_data_fields(path)
    4
    """
    try:
        with open(path, "rb") as fh:
            for raw in fh:
                line = raw.strip()
                if line and not line.startswith(b"#"):
                    return len(line.split())
    except (OSError, UnicodeDecodeError):
        return None
    return None


def read_judgments(path: str | os.PathLike, fields: tuple[str, ...], *, what: str, integer: bool = False,
                   valid: Callable[[np.ndarray], np.ndarray] | None = None, expected: str = "") -> pd.DataFrame:
    """Judgment lines whose fields include ``qid``, ``docid`` and a last field ``relevance``.

    ``relevance`` is read as a finite number (an integer with ``integer=True``). With
    ``valid`` (relevance values -> boolean mask of the acceptable ones) the first line whose
    value fails raises one :class:`~scorebench.core.errors.InputError`: ``"<what> file
    '<path>': <expected>, got <value> for query <qid>, document <docid>"``. The TREC qrels,
    prefs and qrels_jg readers (:mod:`scorebench.io.trec_prefs`) all read through it.

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".qrels", delete=False) as f:
    ...     _ = f.write("1 0 d1 -1\\n")
    >>> read_judgments(f.name, ("qid", "iteration", "docid", "relevance"), what="qrels",
    ...                valid=lambda rel: rel >= 0, expected="relevance must be >= 0")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    scorebench.core.errors.InputError: qrels file '...': relevance must be >= 0, got -1.0 for query '1', document 'd1'
    >>> os.unlink(f.name)
    """
    frame = read_fields(path, fields, numeric={"relevance": "integer" if integer else "number"}, what=what)
    if valid is not None:
        bad = np.flatnonzero(~np.asarray(valid(frame["relevance"].to_numpy()), dtype=bool))
        if bad.size:
            row = frame.iloc[bad[0]]
            raise InputError(f"{what} file {str(path)!r}: {expected}, got {row['relevance']} for query "
                             f"{row['qid']!r}, document {row['docid']!r}")
    return frame


def read_fields(path: str | os.PathLike, fields: tuple[str, ...], *, numeric: dict[str, str],
                what: str, extra_ok: bool = False) -> pd.DataFrame:
    """Whitespace-separated lines of ``fields`` (``#`` comments and blank lines skipped) as text
    columns, the ``numeric`` ones (``{column: "number" | "integer"}``) converted.

    Parsed with pandas' C parser; a line-by-line pass, which names the first malformed line
    in an :class:`~scorebench.core.errors.InputError` (``"<what> file '<path>', line N: ..."``),
    runs when that fails. With ``extra_ok`` fields after the last are ignored (TREC runs).
    """
    path = Path(path)
    data = path.read_bytes()
    if data.startswith(b"#") or b"\n#" in data:
        data = b"\n".join(line for line in data.split(b"\n") if not line.startswith(b"#"))
    try:
        # one spare column catches a line with too many fields
        with warnings.catch_warnings():  # lines with 2+ extra fields: the check below or the fallback
            warnings.simplefilter("ignore", pd.errors.ParserWarning)
            frame = pd.read_csv(io.BytesIO(data), sep=r"\s+", header=None, names=[*fields, "_extra"],
                                dtype=str, engine="c", skip_blank_lines=True, na_filter=False, index_col=False)
        if len(frame) and ((frame[fields[-1]] == "").any() or (not extra_ok and (frame["_extra"] != "").any())):
            raise ValueError("short or long line")
        frame = frame[list(fields)]
    except (pd.errors.ParserError, ValueError, UnicodeDecodeError):
        frame = _parse_lines(path, fields, numeric, what, extra_ok)
    for col, expected in numeric.items():
        arr = pd.to_numeric(frame[col], errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        bad = ~np.isfinite(arr)
        if expected == "integer":
            bad |= arr != np.round(arr)
        if bad.any():
            _parse_lines(path, fields, numeric, what, extra_ok)  # raises naming the line
        frame[col] = arr if expected == "number" else arr.astype(np.int64)
    if len(frame) == 0:
        raise InputError(f"{what} file {str(path)!r}: no data lines")
    return frame


def _parse_lines(path: Path, fields: tuple[str, ...], numeric: dict[str, str], what: str,
                 extra_ok: bool) -> pd.DataFrame:
    """Line-by-line parse; raises for the first line that does not fit ``fields``."""
    expected = " ".join(fields)
    rows = []
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, start=1):
            if raw.startswith(b"#") or not raw.strip():
                continue
            try:
                parts = raw.decode("utf-8").split()
            except UnicodeDecodeError:
                raise InputError(f"{what} file {str(path)!r}, line {number}: not valid UTF-8 text") from None
            if len(parts) < len(fields) or (len(parts) > len(fields) and not extra_ok):
                raise InputError(f"{what} file {str(path)!r}, line {number}: expected {len(fields)} "
                                 f"whitespace-separated fields ({expected}), got {len(parts)}: "
                                 f"{raw.decode('utf-8', 'replace').strip()!r}")
            parts = parts[:len(fields)]
            for col, kind in numeric.items():
                value = parts[fields.index(col)]
                try:
                    number_value = float(value)
                except ValueError:
                    number_value = float("nan")
                good = np.isfinite(number_value) and (kind != "integer" or number_value == round(number_value))
                if not good:
                    noun = "an integer" if kind == "integer" else "a finite number"
                    raise InputError(f"{what} file {str(path)!r}, line {number}: field {col!r} must be "
                                     f"{noun}, got {value!r}")
            rows.append(parts)
    return pd.DataFrame(rows, columns=list(fields), dtype=str)
