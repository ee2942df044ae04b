"""The ``responses`` table kind: systems answering items right (1) or wrong (0).

A response table is either *long* (one row per answer: ``system``, ``item``, ``correct``
in {0, 1}, optional ``topic`` per item) or *wide* (rows = systems, columns = items,
``NaN`` = not answered). :func:`response_matrix` turns either into a
:class:`ResponseMatrix`; missing answers stay missing (they are never scored as wrong).

This module is deliberately light (numpy and pandas only): it is imported when
``scorebench`` is imported, so that the ``responses`` kind is registered.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.core.table_schema import check_unique_columns
from scorebench.core.tables import Column, Inputs, unit_frame, start_table, numeric_column, register_kind
from scorebench.core.validation import describe_rows

__all__ = ["ResponseMatrix", "response_matrix", "complete_response_matrix", "extract_responses"]

LONG_COLUMNS = ("system", "item", "correct")


@dataclass(frozen=True)
class ResponseMatrix:
    """A systems x items matrix of 0/1 answers with ``NaN`` for missing ones.

    Attributes
    ----------
    values : ndarray of float64, shape (n_systems, n_items)
        1.0 = correct, 0.0 = wrong, NaN = not answered.
    systems : Index
        Row labels.
    items : Index
        Column labels.
    topics : Series or None
        Topic of each item (indexed by item), when the input had one.
    """

    values: np.ndarray
    systems: pd.Index
    items: pd.Index
    topics: pd.Series | None = None

    @property
    def shape(self) -> tuple[int, int]:
        return self.values.shape

    @property
    def has_missing(self) -> bool:
        return bool(np.isnan(self.values).any())

    def to_frame(self) -> pd.DataFrame:
        """The wide matrix as a DataFrame (rows = systems, columns = items)."""
        return pd.DataFrame(self.values, index=self.systems, columns=self.items)

    def subset(self, rows: Any = None, cols: Any = None) -> ResponseMatrix:
        """Positional subset of rows and/or columns."""
        rows = slice(None) if rows is None else rows
        cols = slice(None) if cols is None else cols
        topics = None if self.topics is None else self.topics.iloc[cols]
        return ResponseMatrix(self.values[rows][:, cols], self.systems[rows], self.items[cols], topics)


def _check_binary(values: np.ndarray, where: str, labels: Any = None, ordinal: bool = False) -> None:
    if ordinal:
        _check_ordinal(values, where, labels)
        return
    bad = ~np.isnan(values) & (values != 0.0) & (values != 1.0)
    if bad.any():
        example = values[bad].ravel()[0]
        raise InputError(f"{where}: value {example!r} in {describe_rows(bad, labels)}; "
                         "expected answers scored 0 (wrong) or 1 (right), NaN for missing")


def _check_ordinal(values: np.ndarray, where: str, labels: Any = None) -> None:
    """Polytomous answers: integer scores 0, 1, ..., K (NaN = not answered)."""
    bad = ~np.isnan(values) & ((values < 0) | (values != np.round(values)) | np.isinf(values))
    if bad.any():
        example = values[bad].ravel()[0]
        raise InputError(f"{where}: value {example!r} in {describe_rows(bad, labels)}; "
                         "expected integer scores 0, 1, ..., K (NaN for missing)")


def _from_long(df: pd.DataFrame, nan_policy: str, ordinal: bool = False) -> ResponseMatrix:
    df, _ = start_table(df, "responses", list(LONG_COLUMNS), nan_policy)
    correct = numeric_column(df, "correct", nan_ok=True)
    _check_binary(correct, "column 'correct'", df.index, ordinal)
    if nan_policy == "raise" and np.isnan(correct).any():
        raise InputError(f"column 'correct': NaN (missing values) in "
                         f"{describe_rows(np.isnan(correct), df.index)}; expected "
                         f"{'an integer score 0..K' if ordinal else '0 or 1'} "
                         "(use nan_policy='omit' to drop such rows; they then count as not answered)")
    dup = df.duplicated(subset=["system", "item"], keep=False).to_numpy()
    if dup.any():
        raise InputError(f"columns 'system'/'item': the same system answers the same item more than once "
                         f"in {describe_rows(dup, df.index)}; expected each (system, item) once")
    systems = pd.Index(pd.unique(df["system"]), name="system")
    items = pd.Index(pd.unique(df["item"]), name="item")
    values = np.full((len(systems), len(items)), np.nan)
    values[systems.get_indexer(df["system"]), items.get_indexer(df["item"])] = correct
    topics = None
    if "topic" in df.columns:
        per_item = df.groupby("item", sort=False)["topic"].nunique(dropna=False)
        if (per_item > 1).any():
            first = per_item.index[per_item.to_numpy() > 1][0]
            raise InputError(f"column 'topic': item {first!r} has more than one topic; expected one topic per item")
        topics = df.drop_duplicates("item").set_index("item")["topic"].reindex(items)
    return ResponseMatrix(values, systems, items, topics)


def response_matrix(data: Any, *, topics: Any = None, nan_policy: str = "raise",
                    min_systems: int = 1, ordinal: bool = False) -> ResponseMatrix:
    """Read responses from a long table, a wide DataFrame or a 2-D array.

    Parameters
    ----------
    data : DataFrame, ndarray or ResponseMatrix
        Long table with columns ``system``, ``item``, ``correct`` (and optionally ``topic``),
        or a wide matrix (rows = systems, columns = items, NaN = not answered).
    topics : mapping or Series, optional
        Topic of each item for wide input (ignored when the long table has ``topic``).
    nan_policy : {"raise", "omit"}
        For long tables: what a missing ``correct`` means (``omit``: not answered).
    min_systems : int
        Fewest systems accepted (fitting needs 2; scoring one system is fine).
    ordinal : bool
        Accept polytomous scores: non-negative integers 0, 1, ..., K (for the graded, partial
        credit and rating scale models); otherwise answers must be 0 or 1.

    Returns
    -------
    ResponseMatrix

    Examples
    --------
    >>> import pandas as pd
    >>> long = pd.DataFrame({"system": ["s1", "s1", "s2"], "item": ["q1", "q2", "q1"],
    ...                      "correct": [1, 0, 1]})
    >>> m = response_matrix(long)
    >>> m.values.tolist()
    [[1.0, 0.0], [1.0, nan]]
    """
    if isinstance(data, ResponseMatrix):
        rm = data
        _check_binary(rm.values, "responses", rm.systems, ordinal)
    elif isinstance(data, pd.DataFrame) and all(c in data.columns for c in LONG_COLUMNS):
        rm = _from_long(data, nan_policy, ordinal)
    elif isinstance(data, pd.DataFrame):
        check_unique_columns(data.columns, "wide responses (one column per item)")
        values = np.column_stack([numeric_column(data, c, nan_ok=True) for c in data.columns]) \
            if data.shape[1] else np.empty((len(data), 0))
        _check_binary(values, "wide responses", data.index, ordinal)
        rm = ResponseMatrix(values, pd.Index(data.index, name="system"), pd.Index(data.columns, name="item"))
    else:
        try:
            arr = np.asarray(data, dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError(f"responses: expected a DataFrame or a 2-D array of 0/1, got {type(data).__name__}") from None
        if arr.ndim != 2:
            raise InputError(f"responses: expected a 2-D array (systems x items), got shape {arr.shape}")
        if np.isinf(arr).any():
            raise InputError("responses: infinite values; expected "
                             + ("integer scores 0..K" if ordinal else "0, 1") + " or NaN")
        _check_binary(arr, "responses", ordinal=ordinal)
        rm = ResponseMatrix(arr, pd.RangeIndex(arr.shape[0], name="system"),
                            pd.RangeIndex(arr.shape[1], name="item"))
    if rm.values.shape[0] < min_systems or rm.values.shape[1] < 1:
        raise InputError(f"responses: need at least {min_systems} system(s) and 1 item, "
                         f"got shape {rm.values.shape}")
    if topics is not None and rm.topics is None:
        series = pd.Series(topics)
        missing = [i for i in rm.items if i not in series.index]
        if missing:
            raise InputError(f"topics: no topic for item(s) {missing[:5]}; expected one topic per item")
        rm = ResponseMatrix(rm.values, rm.systems, rm.items, series.reindex(rm.items))
    return rm



def complete_response_matrix(data: Any, what: str, *, min_systems: int = 2) -> ResponseMatrix:
    """:func:`response_matrix` of ``data`` refusing missing answers, for the analyses that
    need every system to answer every item; the error names ``what`` and the first
    system/item pair without an answer.

    Examples
    --------
    >>> complete_response_matrix([[1, 0], [0, 1]], "demo").values.shape
    (2, 2)
    """
    rm = response_matrix(data, min_systems=min_systems)
    if np.isnan(rm.values).any():
        i, j = np.argwhere(np.isnan(rm.values))[0]
        raise InputError(f"{what}: needs complete answers; system {rm.systems[i]!r} has no answer to item "
                         f"{rm.items[j]!r}")
    return rm

@register_kind("responses", columns=(Column("system", "label", "the answering system"),
                                     Column("item", "label", "the question"),
                                     Column("correct", "count", "1 = right, 0 = wrong, or an integer score 0..K "
                                            "(polytomous models)"),
                                     Column("topic", "label", "the item's topic", required=False)))
def extract_responses(df: pd.DataFrame, *, nan_policy: str = "raise") -> Inputs:
    """Answers of systems to items, scored right (1) / wrong (0) or with integer scores 0..K
    (partial credit, rubric or judge scores, for the polytomous IRT models)."""
    df, _ = start_table(df, "responses", list(LONG_COLUMNS), nan_policy)
    correct = numeric_column(df, "correct", nan_ok=nan_policy == "propagate")
    _check_ordinal(correct, "column 'correct'", df.index)
    dup = df.duplicated(subset=[c for c in ("system", "task", "item") if c in df.columns], keep=False).to_numpy()
    if dup.any():
        raise InputError(f"columns 'system'/'item': duplicate answers in {describe_rows(dup, df.index)}; "
                         "expected each (system, item) once")
    return Inputs(unit_frame(df, "item"), {"correct": correct}, key="item")
