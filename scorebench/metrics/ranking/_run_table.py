"""The run side of the judged-run kinds (``diversity``, ``prefs``): ids as text, checked once.

Both kinds read a TREC run (``qid, docid, score`` and optional ``system``/``task``) the same
way; only their qrels differ.
"""

from __future__ import annotations

import os
from typing import Any

import pandas as pd

from scorebench.core.errors import InputError
from scorebench.core.tables import GROUP_COLUMNS, NAN_POLICIES, Column, Option, label_text, numeric_column
from scorebench.core.table_schema import check_declared_columns
from scorebench.core.validation import check_choice, describe_rows

__all__ = ["id_frame", "checked_run", "RUN_COLUMNS", "qrels_option", "judgments_frame"]

# the run of every judged-run kind (ranking, diversity, prefs): a TREC run as a table
RUN_COLUMNS = (Column("qid", "label", "the query"), Column("docid", "label", "the retrieved document"),
               Column("score", "number", "retrieval score: higher ranks first (ties by docid, as trec_eval)"),
               Column("rank", "any", "ignored: the order comes from score", required=False))


def qrels_option(doc: str, formats: tuple[str, ...]) -> Option:
    """The ``qrels`` option of a judged-run kind: a table, or a file in one of ``formats``
    (read by the evaluation layer before the kind runs, see :attr:`Option.formats`)."""
    return Option("qrels", "table", None, doc, flag=True, formats=formats)


def judgments_frame(qrels: Any, kind: str, required: str) -> pd.DataFrame:
    """The ``qrels`` option of kind ``kind`` as the DataFrame it must be; ``required`` says
    what the kind expects when it is missing. A path is refused here: the evaluation layer
    (:func:`scorebench.evaluate`, the CLI) reads files, a kind receives tables."""
    if qrels is None:
        raise InputError(f"kind {kind!r}: {required}")
    if isinstance(qrels, (str, os.PathLike)):
        raise InputError(f"qrels: kind {kind!r} takes a DataFrame; a file path ({os.fspath(qrels)!r}) is read by "
                         "scorebench.evaluate, or read it with scorebench.io.option_files.read_option_file")
    if not isinstance(qrels, pd.DataFrame):
        raise InputError(f"qrels: expected a DataFrame or a file path, got {type(qrels).__name__}")
    return qrels


def id_frame(frame: pd.DataFrame, columns: tuple[str, ...], name: str) -> pd.DataFrame:
    """``columns`` of ``frame`` as text ids (``7``, ``7.0`` and ``"7"`` agree); a missing id
    is an error naming the ``name`` table, its column and rows."""
    out = {}
    for col in columns:
        missing = frame[col].isna().to_numpy()
        if missing.any():
            raise InputError(f"{name} column {col!r}: missing ids in {describe_rows(missing, frame.index)}")
        out[col] = label_text(frame[col]).astype(str).to_numpy()
    return pd.DataFrame(out, index=frame.index)


def checked_run(df: pd.DataFrame, kind: str, nan_policy: str) -> tuple[pd.DataFrame, list[str]]:
    """The run as ``qid, docid, score`` plus its grouping columns, and those columns.

    Rows with a missing qid/docid/score are dropped under ``nan_policy="omit"`` (refused
    otherwise); a document retrieved twice for one query of one group is refused.
    """
    check_choice(nan_policy, "nan_policy", NAN_POLICIES)
    check_declared_columns(df, RUN_COLUMNS, kind)
    run = df.loc[df[["qid", "docid", "score"]].notna().all(axis=1).to_numpy()] if nan_policy == "omit" else df
    groups = [c for c in GROUP_COLUMNS if c in run.columns]
    ids = id_frame(run, ("qid", "docid"), "run")
    ids["score"] = numeric_column(run, "score")
    for col in groups:
        missing = run[col].isna().to_numpy()
        if missing.any():
            raise InputError(f"run column {col!r}: missing values in {describe_rows(missing, run.index)}")
        ids[col] = run[col].to_numpy()
    dup = ids.duplicated([*groups, "qid", "docid"]).to_numpy()
    if dup.any():
        raise InputError(f"run: the same document is retrieved twice for one query in {describe_rows(dup, run.index)}; "
                         "expected each (system, qid, docid) once")
    return ids, groups
