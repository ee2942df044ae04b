"""Inputs of aggregation: a validated systems x tasks score matrix, or a set of battles.

Each accepted table shape is a declared table kind of stage ``"aggregate"``
(:func:`scorebench.core.tables.register_kind`; ``scorebench kinds --stage aggregate`` lists them),
and each becomes one of two frozen containers:

* ``scores``: a long table (``system``, ``task`` and/or ``metric``, ``value``; the output of
  :func:`scorebench.evaluate`) -> :class:`ScoreMatrix`;
* ``wide``: a systems x tasks table (index = systems, or a text first column of system names)
  -> :class:`ScoreMatrix`;
* ``battles``: ``a``, ``b``, ``winner`` in {``a``, ``b``, ``tie``}, optional ``weight``
  -> :class:`Battles`;
* ``items`` (:mod:`scorebench.aggregate.items`): per-item scores, the output of
  ``evaluate(..., per_unit=True)``.

:func:`read_input` picks the kind a table fits (:func:`scorebench.core.tables.detect_kind`: the
most specific declaration whose required columns the table has) and checks the options
against that kind's declaration.

Leaderboard quirks are handled explicitly: cells such as ``"93.9/91.8"`` (GLUE's F1/accuracy
pairs) split a column into two columns ``<col>-a`` and ``<col>-b`` of half the weight each
(as Vote'n'Rank does); ``"-"`` (and empty cells) mean "missing"; duplicate system names raise
unless ``duplicates="suffix"`` (``name_1``, ``name_2``, ... as Vote'n'Rank's loader does) or
``duplicates="first"`` is given.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError, UnknownMetricError
from scorebench.core.table_schema import check_unique_columns
from scorebench.core.tables import Column, Option, detect_kind, get_kind, register_kind
from scorebench.core.validation import check_choice, describe_rows
from scorebench.aggregate.conventions import Convention, get_convention

__all__ = ["ScoreMatrix", "Battles", "as_matrix", "as_battles", "read_input", "MISSING_MARKERS",
           "DUPLICATE_POLICIES", "kind_options"]

MISSING_MARKERS = ("-", "", "–", "—", "n/a", "N/A", "NA", "nan", "NaN", "null", "None")
DUPLICATE_POLICIES = ("raise", "suffix", "first")
_PAIR = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*/\s*"
                   r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*$")
_SYSTEM_NAMES = ("system", "model", "Model", "System", "name", "Name")
_BATTLE_A = ("a", "model_a")
_BATTLE_B = ("b", "model_b")


@dataclass(frozen=True)
class ScoreMatrix:
    """Scores of ``n`` systems on ``m`` columns (tasks or task metrics).

    Attributes
    ----------
    values : ndarray, shape (n, m)
        Raw scores, float64; NaN marks a missing score.
    systems : tuple of str
        System names (unique), one per row.
    columns : tuple of str
        Column names (unique), one per column.
    higher_is_better : ndarray of bool, shape (m,)
        Direction of each column.
    weights : ndarray, shape (m,)
        Non-negative column weights (a voter's weight in social-choice rules).
    """

    values: np.ndarray
    systems: tuple[str, ...]
    columns: tuple[str, ...]
    higher_is_better: np.ndarray
    weights: np.ndarray

    @property
    def n_systems(self) -> int:
        return len(self.systems)

    @property
    def n_columns(self) -> int:
        return len(self.columns)

    @property
    def oriented(self) -> np.ndarray:
        """Values with lower-is-better columns negated, so higher is better everywhere."""
        return np.where(self.higher_is_better[None, :], self.values, -self.values)

    @property
    def has_missing(self) -> bool:
        return bool(np.isnan(self.values).any())

    @property
    def coverage(self) -> np.ndarray:
        """Fraction of the columns each system is scored on (1 = complete)."""
        return (~np.isnan(self.values)).mean(axis=1)

    def take_columns(self, index: np.ndarray) -> ScoreMatrix:
        """Columns at positions ``index`` (repeats allowed: a bootstrap resample of tasks)."""
        index = np.asarray(index, dtype=np.int64)
        names = tuple(f"{self.columns[i]}#{k}" for k, i in enumerate(index))
        return ScoreMatrix(self.values[:, index], self.systems, names,
                           self.higher_is_better[index], self.weights[index])

    def complete_systems(self) -> ScoreMatrix:
        """Only the systems scored on every column (what ``DataFrame.dropna()`` does in Vote'n'Rank)."""
        keep = ~np.isnan(self.values).any(axis=1)
        if keep.sum() < 2:
            raise InputError(f"only {int(keep.sum())} system(s) are scored on every column; need at least 2")
        return ScoreMatrix(self.values[keep], tuple(s for s, k in zip(self.systems, keep) if k), self.columns,
                           self.higher_is_better, self.weights)

    def drop_columns(self, index: int) -> ScoreMatrix:
        keep = np.array([j for j in range(self.n_columns) if j != index], dtype=np.int64)
        return ScoreMatrix(self.values[:, keep], self.systems, tuple(self.columns[j] for j in keep),
                           self.higher_is_better[keep], self.weights[keep])

    def to_frame(self) -> pd.DataFrame:
        """The matrix as a wide DataFrame (index = systems)."""
        return pd.DataFrame(self.values, index=pd.Index(self.systems, name="system"), columns=list(self.columns))


@dataclass(frozen=True)
class Battles:
    """Pairwise battles between systems: ``a`` against ``b`` with an outcome for ``a``.

    Attributes
    ----------
    systems : tuple of str
        System names; ``a`` and ``b`` index into it.
    a, b : ndarray of int
        The two players of each battle.
    outcome : ndarray of float
        1 if ``a`` won, 0 if ``b`` won, 0.5 for a tie.
    weight : ndarray of float
        Non-negative weight (multiplicity) of each battle.
    """

    systems: tuple[str, ...]
    a: np.ndarray
    b: np.ndarray
    outcome: np.ndarray
    weight: np.ndarray

    @property
    def n_systems(self) -> int:
        return len(self.systems)

    def take(self, index: np.ndarray) -> Battles:
        """Battles at positions ``index`` in that order (repeats allowed: a bootstrap resample)."""
        return Battles(self.systems, self.a[index], self.b[index], self.outcome[index], self.weight[index])

    def wins(self) -> np.ndarray:
        """Matrix ``W`` with ``W[i, j]`` = weighted wins of ``i`` over ``j`` (ties count half)."""
        n = self.n_systems
        w = np.zeros(n * n)
        np.add.at(w, self.a * n + self.b, self.weight * self.outcome)
        np.add.at(w, self.b * n + self.a, self.weight * (1.0 - self.outcome))
        return w.reshape(n, n)

    def decisive(self) -> tuple[np.ndarray, np.ndarray]:
        """Weighted strict wins ``P[i, j]`` and ties ``T[i, j]`` (symmetric) matrices."""
        n = self.n_systems
        P = np.zeros(n * n)
        T = np.zeros(n * n)
        win_a = self.outcome == 1.0
        win_b = self.outcome == 0.0
        tie = ~(win_a | win_b)
        np.add.at(P, self.a[win_a] * n + self.b[win_a], self.weight[win_a])
        np.add.at(P, self.b[win_b] * n + self.a[win_b], self.weight[win_b])
        np.add.at(T, self.a[tie] * n + self.b[tie], self.weight[tie])
        T = T.reshape(n, n)
        return P.reshape(n, n), T + T.T


# --- reading ---------------------------------------------------------------------------------


def read_input(table: Any, *, weights: Any = None, higher_is_better: Any = None,
               duplicates: str = "raise", system_column: str | None = None,
               exclude: Sequence[str] = (), convention: str | None = None) -> ScoreMatrix | Battles:
    """Turn any accepted table into a :class:`ScoreMatrix` or :class:`Battles`.

    ``ScoreMatrix`` and ``Battles`` pass through (weights/directions then may not be given).
    A DataFrame with columns ``a``, ``b``, ``winner`` is read as battles; one with ``system``
    and ``value`` (and ``task`` and/or ``metric``) as a long scores table; anything else as
    a wide systems x tasks table.
    """
    if isinstance(table, (ScoreMatrix, Battles)):
        if weights is not None or higher_is_better is not None or convention is not None:
            raise InputError("weights / higher_is_better cannot be applied to an already-built "
                             f"{type(table).__name__}; pass them when building it")
        return table
    data = read_table_kind(table, weights=weights, higher_is_better=higher_is_better, duplicates=duplicates,
                           system_column=system_column, exclude=exclude, convention=convention)
    return data if isinstance(data, (ScoreMatrix, Battles)) else data.matrix  # per-item scores: their means


# what read_input passes when the caller left an option alone: not given to the kind
_UNSET = {"weights": None, "higher_is_better": None, "duplicates": "raise", "system_column": None, "exclude": (),
          "convention": None}


def read_table_kind(table: Any, **options: Any) -> Any:
    """Read a DataFrame as the aggregate kind it fits (``scores``, ``wide``, ``battles``,
    ``items``), with the options that kind declares (others are refused by name)."""
    if not isinstance(table, pd.DataFrame):
        raise InputError(f"expected a pandas DataFrame (scores, wide or battles table), got {type(table).__name__}")
    check_unique_columns(table.columns)
    kind = detect_kind(table, "aggregate")
    return kind.extract(table, **kind_options(kind.name, **options))


def kind_options(kind: str, **options: Any) -> dict[str, Any]:
    """The reading ``options`` given (not left at their defaults), checked against what the
    aggregate kind ``kind`` declares: one that does not apply is refused by name, whichever
    engine reads the table."""
    given = {k: v for k, v in options.items() if not _is_unset(k, v)}
    return get_kind(kind, "aggregate").check_options(given)


def _is_unset(name: str, value: Any) -> bool:
    default = _UNSET.get(name, None)
    return value is None if default is None else (not len(value) if isinstance(default, tuple) else value == default)


#: Options shared by the score-table kinds (``scores`` here, ``items`` in :mod:`.items`).
WEIGHTS_OPTION = Option("weights", "any", None, "column (task) weights: a mapping or a sequence; default 1 each")
DIRECTION_OPTION = Option("higher_is_better", "any", None, "direction per column (bool, mapping or sequence); default: "
                          "the metric registry, else True")


@register_kind("scores", columns=(Column("system", "label", "the system"),
                                  Column("task", "label", "the task (or metric, or both: task/metric columns)",
                                         aliases=("metric",)),
                                  Column("value", "number", "the score")),
               options=(WEIGHTS_OPTION, DIRECTION_OPTION), stage="aggregate")
def read_scores(table: pd.DataFrame, *, weights: Any = None, higher_is_better: Any = None) -> ScoreMatrix:
    """A long scores table (the output of ``scorebench evaluate``): one value per system and column."""
    return as_matrix(table, weights=weights, higher_is_better=higher_is_better)


@register_kind("wide", columns=(Column("<system>", "label", "system names: the index, a system/model/name column or "
                                       "a text first column", required=False),
                                Column("<task>", "number", "one column per task; 'x/y' cells split into two half-weight "
                                       "columns; '-' or empty = missing", required=False)),
               options=(WEIGHTS_OPTION, DIRECTION_OPTION,
                        Option("duplicates", str, "raise", "repeated system names", choices=DUPLICATE_POLICIES),
                        Option("system_column", str, None, "the column of system names"),
                        Option("exclude", "any", (), "columns that are not scores (ranks, URLs, averages)"),
                        Option("convention", str, None, "a leaderboard's task units (scorebench.aggregate."
                               "conventions): 'glue' (GLUE's Score), 'superglue', 'votenrank'; default: "
                               "'x/y' cells split, every column a task")),
               stage="aggregate")
def read_wide(table: pd.DataFrame, *, weights: Any = None, higher_is_better: Any = None, duplicates: str = "raise",
              system_column: str | None = None, exclude: Sequence[str] = (),
              convention: str | None = None) -> ScoreMatrix:
    """A wide systems x tasks table (a leaderboard export)."""
    return as_matrix(table, weights=weights, higher_is_better=higher_is_better, duplicates=duplicates,
                     system_column=system_column, exclude=exclude, shape="wide", convention=convention)


def as_matrix(table: pd.DataFrame | Mapping[Any, Any], *, systems: Sequence[Any] | None = None,
              weights: Any = None, higher_is_better: Any = None,
              duplicates: str = "raise", system_column: str | None = None,
              exclude: Sequence[str] = (), shape: str | None = None,
              convention: str | None = None) -> ScoreMatrix:
    """Validate a long scores table or a wide systems x tasks table into a :class:`ScoreMatrix`.

    Parameters
    ----------
    table : DataFrame or mapping
        Long (``system``, ``task``/``metric``, ``value``) or wide (systems x tasks). A plain
        mapping of columns (``{"t1": [..], "t2": [..]}``, each a 1-D sequence of one length)
        is read as the DataFrame it builds: a wide table whose rows are named by ``systems``,
        or, without ``systems``, a table that names them itself (a ``system`` column; a long
        table's columns).
    systems : sequence, optional
        With a mapping of columns only: the system name of each row of the wide table
        (``table`` then holds only score columns, in the order of ``systems``).
    weights : mapping or sequence, optional
        Column weights (default 1 each). A mapping may name original columns (a split
        ``"F1/acc"`` column shares its weight equally), split columns, or tasks of a long
        table (shared equally between the task's metrics).
    higher_is_better : bool, mapping or sequence, optional
        Direction per column; a mapping may name columns, tasks or metrics. Default: the
        metric registry for registered metric names in a long table, otherwise True.
    duplicates : {"raise", "suffix", "first"}
        What to do with repeated system names in a wide table.
    system_column : str, optional
        Column of a wide table holding system names (default: when the index is a plain
        range, a column named ``system``, ``model``, ``Model``, ``System``, ``name`` or ``Name``,
        else the first column if it holds text; otherwise the index).
    exclude : sequence of str
        Wide-table columns that are not scores (ranks, URLs, team names, overall score).
    shape : {"scores", "wide"}, optional
        Read the table as this kind; default: ``scores`` when it has the declared columns of
        a long scores table (``system``, ``task`` or ``metric``, ``value``), else ``wide``.
    convention : str, optional
        Wide tables: a leaderboard's task units (:mod:`scorebench.aggregate.conventions`).
        ``"glue"``: nine tasks, each ``"x/y"`` pair averaged and MNLI-m/MNLI-mm averaged into
        ``MNLI``, so the mean reproduces GLUE's published ``Score``; ``"votenrank"``: Vote'n'Rank's
        ten units (pairs split into half-weight columns, MNLI-m and MNLI-mm two tasks), the
        same as the default.

    Examples
    --------
    >>> import pandas as pd
    >>> wide = pd.DataFrame({"CoLA": [60.0, 55.0], "MRPC": ["90.0/88.0", "-"]}, index=["x", "y"])
    >>> m = as_matrix(wide)
    >>> m.columns, m.weights.tolist()
    (('CoLA', 'MRPC-a', 'MRPC-b'), [1.0, 0.5, 0.5])
    >>> m.values[1].tolist()
    [55.0, nan, nan]

    A mapping of columns with the systems named by keyword builds the same matrix without
    pandas in the caller's code:

    >>> as_matrix({"t1": [3, 2], "t2": [1, 3]}, systems=["a", "b"]).values.tolist()
    [[3.0, 1.0], [2.0, 3.0]]
    """
    check_choice(duplicates, "duplicates", DUPLICATE_POLICIES)
    table = _columns_frame(table, systems, system_column)
    check_unique_columns(table.columns)
    if len(table) == 0:
        raise InputError("the scores table has no rows")
    check_choice(shape, "shape", (None, "scores", "wide"))
    if shape == "scores" or (shape is None and get_kind("scores", "aggregate").fits(table)):
        if systems is not None:
            raise InputError("systems= names the rows of a wide table; this is a long scores table, whose "
                             "'system' column names them: leave systems= out")
        if convention is not None:
            raise InputError(f"convention={convention!r} applies to wide leaderboard tables, not to a long "
                             "scores table")
        return _from_long(table, weights, higher_is_better)
    return _from_wide(table, weights, higher_is_better, duplicates, system_column, tuple(exclude),
                      None if convention is None else get_convention(convention))


def _columns_frame(table: Any, systems: Sequence[Any] | None, system_column: str | None) -> pd.DataFrame:
    """``table`` itself when it is a DataFrame (``systems`` must then be left out); a mapping of
    1-D columns as the DataFrame it builds, indexed by ``systems`` when they are given."""
    if isinstance(table, pd.DataFrame):
        if systems is not None:
            raise InputError("systems= names the rows of a mapping of columns; a DataFrame names its systems "
                             "itself (its index or a system column)")
        return table
    if not isinstance(table, Mapping):
        raise InputError(f"expected a pandas DataFrame or a mapping of columns, got {type(table).__name__}")
    columns = {key: _column_cells(key, value) for key, value in table.items()}
    lengths = {key: len(cells) for key, cells in columns.items()}
    if systems is not None:
        if not _is_1d(systems):
            raise InputError(f"systems: expected a sequence of system names, got {systems!r}")
        if system_column is not None:
            raise InputError("give the system names either as systems= or as system_column=, not both")
        lengths = {"systems=": len(systems), **lengths}
    if len(set(lengths.values())) > 1:
        raise InputError(f"columns of different lengths: {lengths}; expected one cell per row in each column")
    return pd.DataFrame(columns, index=None if systems is None else pd.Index(list(systems)))


def _column_cells(key: Any, value: Any) -> list[Any]:
    """One column of a mapping as a list of its cells (a 1-D sequence, not text or a scalar)."""
    if not _is_1d(value):
        raise InputError(f"column {key!r}: expected a 1-D sequence (one cell per row), got {value!r}")
    return list(value)


def _is_1d(value: Any) -> bool:
    """A flat sequence of cells (a list, tuple, array or Series; not text, a scalar or nested lists)."""
    if isinstance(value, (str, bytes)):
        return False
    try:
        return bool(np.ndim(value) == 1)
    except ValueError:  # ragged nesting
        return False


def _from_long(df: pd.DataFrame, weights: Any, higher_is_better: Any) -> ScoreMatrix:
    keys = [c for c in ("task", "metric") if c in df.columns]
    for c in ["system", *keys]:
        if df[c].isna().any():
            raise InputError(f"column {c!r}: missing values in {describe_rows(df[c].isna().to_numpy(), df.index)}")
    frame = df[["system", *keys]].astype(str)
    value = _numeric_cells(df["value"], "value", df.index)
    dup = frame.duplicated(keep=False).to_numpy()
    if dup.any():
        raise InputError(f"scores table: duplicate ({', '.join(['system', *keys])}) in "
                         f"{describe_rows(dup, df.index)}; expected one value per system and column")
    if len(keys) == 2:
        per_task = frame.groupby("task", sort=False)["metric"].nunique()
        split = bool((per_task > 1).any())
        labels = (frame["task"] + "/" + frame["metric"]) if split else frame["task"]
    else:
        labels = frame[keys[0]]
    systems = list(dict.fromkeys(frame["system"]))
    columns = list(dict.fromkeys(labels))
    # Per column: the task (weight unit) and metric (direction lookup) it comes from.
    first = pd.DataFrame({"label": labels, **{k: frame[k] for k in keys}}).drop_duplicates("label")
    task_of = dict(zip(first["label"], first["task"])) if "task" in keys else {c: c for c in columns}
    metric_of = dict(zip(first["label"], first["metric"])) if "metric" in keys else {}
    s_index = {s: i for i, s in enumerate(systems)}
    c_index = {c: j for j, c in enumerate(columns)}
    values = np.full((len(systems), len(columns)), np.nan)
    values[frame["system"].map(s_index).to_numpy(), labels.map(c_index).to_numpy()] = value
    # Weights: a task's weight is shared equally between its metrics.
    n_per_task = pd.Series(task_of).value_counts()
    base = {c: 1.0 / n_per_task[task_of[c]] for c in columns}
    groups = {c: task_of[c] for c in columns}
    w = _resolve_weights(weights, columns, base, groups)
    hib = _resolve_direction(higher_is_better, columns, groups, metric_of)
    return _finish(values, systems, columns, hib, w)


def _from_wide(df: pd.DataFrame, weights: Any, higher_is_better: Any, duplicates: str,
               system_column: str | None, exclude: tuple[str, ...],
               convention: Convention | None = None) -> ScoreMatrix:
    df = _strip_headers(df)
    missing = [c for c in exclude if c not in df.columns]
    if missing:
        raise InputError(f"exclude: column(s) {missing} are not in the table")
    names, body = _split_names(df, system_column, exclude)
    if body.shape[1] == 0:
        raise InputError("the wide table has no score columns")
    systems = _dedupe(_clean_names(names, df.index), duplicates)
    keep = np.array([s is not None for s in systems])
    body = body.loc[keep]
    systems = [s for s in systems if s is not None]
    columns, values, base, groups = _score_columns(body, "split" if convention is None else convention.pairs)
    if convention is not None and convention.merge:
        columns, values, base, groups = _merge_columns(columns, values, base, groups, convention)
    w = _resolve_weights(weights, columns, base, groups)
    hib = _resolve_direction(higher_is_better, columns, groups, {})
    return _finish(values, systems, columns, hib, w)


def _strip_headers(df: pd.DataFrame) -> pd.DataFrame:
    """Leaderboard exports often carry stray whitespace in headers ("\\tScore"): strip it."""
    stripped = [str(c).strip() for c in df.columns]
    if len(set(stripped)) != len(stripped):
        raise InputError(f"column names collide once surrounding whitespace is stripped: {stripped}")
    return df.set_axis(stripped, axis=1)


def _split_names(df: pd.DataFrame, system_column: str | None,
                 exclude: tuple[str, ...]) -> tuple[pd.Series, pd.DataFrame]:
    """System names (a named column, a text first column or the index) and the score columns."""
    if system_column is None and isinstance(df.index, pd.RangeIndex):
        system_column = next((c for c in _SYSTEM_NAMES if c in df.columns and c not in exclude), None)
    if system_column is not None:
        if system_column not in df.columns:
            raise InputError(f"system_column {system_column!r} is not a column of the table")
        return df[system_column], df.drop(columns=[system_column, *exclude])
    if _first_column_is_names(df):
        return df.iloc[:, 0], df.drop(columns=[df.columns[0], *exclude])
    return pd.Series(df.index, index=df.index), df.drop(columns=list(exclude))


def _first_column_is_names(df: pd.DataFrame) -> bool:
    """A range-indexed table whose first column holds text (not numbers or 'x/y' pairs)."""
    return (isinstance(df.index, pd.RangeIndex) and df.shape[1] > 0
            and not pd.api.types.is_numeric_dtype(df.iloc[:, 0]) and not _looks_numeric(df.iloc[:, 0]))


def _clean_names(names: pd.Series, labels: pd.Index) -> list[str]:
    """Names as stripped text; empty ones raise (rows described by ``labels``)."""
    names = names.astype(str).str.strip()
    if names.isin(["", "nan", "None"]).any():
        bad = names.isin(["", "nan", "None"]).to_numpy()
        raise InputError(f"system names: empty names in {describe_rows(bad, list(labels))}")
    return names.tolist()


def _score_columns(body: pd.DataFrame, pairs: str = "split"
                   ) -> tuple[list[str], np.ndarray, dict[str, float], dict[str, str]]:
    """Column names, values, base weights and weight groups; an 'x/y' column becomes two half-weight
    columns (``pairs="split"``) or one column holding the mean of the pair (``pairs="average"``;
    missing when either half is)."""
    columns: list[str] = []
    parts: list[np.ndarray] = []
    base: dict[str, float] = {}
    groups: dict[str, str] = {}
    for col in body.columns:
        name = str(col)
        pair = _pair_cells(body[col], name, body.index)
        if pair is None:
            split: tuple[tuple[str, np.ndarray, float], ...] = ((name, _numeric_cells(body[col], name, body.index),
                                                                 1.0),)
        elif pairs == "average":
            split = ((name, (pair[0] + pair[1]) / 2.0, 1.0),)
        else:
            split = ((name + "-a", pair[0], 0.5), (name + "-b", pair[1], 0.5))
        for label, arr, weight in split:
            columns.append(label)
            parts.append(arr)
            base[label] = weight
            groups[label] = name
    if len(set(columns)) != len(columns):
        raise InputError(f"column names collide after splitting pair columns: {columns}")
    return columns, np.column_stack(parts), base, groups


def _merge_columns(columns: list[str], values: np.ndarray, base: dict[str, float], groups: dict[str, str],
                   convention: Convention) -> tuple[list[str], np.ndarray, dict[str, float], dict[str, str]]:
    """Replace each merged group of columns by one task column (their mean, at the first one's place)."""
    cols = list(columns)
    data = {c: values[:, j] for j, c in enumerate(columns)}
    for task, parts in convention.merge:
        absent = [p for p in parts if p not in data]
        if absent:
            raise InputError(f"convention {convention.name!r}: column(s) {absent} are not in the table (columns: "
                             f"{cols}); it merges {list(parts)} into {task!r}")
        if task in data and task not in parts:
            raise InputError(f"convention {convention.name!r}: merged task {task!r} collides with a column")
        merged = np.mean(np.column_stack([data[p] for p in parts]), axis=1)  # NaN when any part is missing
        at = cols.index(parts[0])
        cols = [c for c in cols[:at] if c not in parts] + [task] + [c for c in cols[at:] if c not in parts]
        for p in parts:
            del data[p]
            base.pop(p)
            groups.pop(p)
        data[task] = merged
        base[task] = 1.0
        groups[task] = task
    return cols, np.column_stack([data[c] for c in cols]), base, groups


def _looks_numeric(series: pd.Series) -> bool:
    text = series.dropna().astype(str).str.strip()
    text = text[~text.isin(MISSING_MARKERS)]
    return len(text) > 0 and bool(pd.to_numeric(text, errors="coerce").notna().all() or text.str.match(_PAIR).all())


def _dedupe(names: list[str], policy: str) -> list[str | None]:
    counts = pd.Series(names).value_counts()
    repeated = counts[counts > 1]
    if repeated.empty:
        return list(names)
    if policy == "raise":
        shown = ", ".join(f"{n!r} x{c}" for n, c in repeated.head(5).items())
        raise InputError(f"duplicate system names: {shown}; pass duplicates='suffix' to rename them "
                         "name_1, name_2, ... (as Vote'n'Rank does) or duplicates='first' to keep the first")
    seen: dict[str, int] = {}
    out: list[str | None] = []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        if n in repeated.index:
            out.append(f"{n}_{seen[n]}" if policy == "suffix" else (n if seen[n] == 1 else None))
        else:
            out.append(n)
    if policy == "suffix" and len(set(o for o in out if o is not None)) != len(out):
        raise InputError("duplicate system names: suffixed names collide with existing names")
    return out


def _is_missing_text(series: pd.Series) -> np.ndarray:
    text = series.astype(str).str.strip()
    return (series.isna() | text.isin(MISSING_MARKERS)).to_numpy()


def _numeric_cells(series: pd.Series, name: str, labels: Any) -> np.ndarray:
    if pd.api.types.is_bool_dtype(series):
        return series.to_numpy(dtype=np.float64)
    if pd.api.types.is_numeric_dtype(series):
        values = series.to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        missing = _is_missing_text(series)
        converted = pd.to_numeric(series.where(~missing), errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        bad = np.isnan(converted) & ~missing
        if bad.any():
            raise InputError(f"column {name!r}: expected numbers (or '-' for missing), got "
                             f"{series[bad].iloc[0]!r} in {describe_rows(bad, list(labels))}; "
                             "exclude non-score columns with exclude=[...]")
        values = converted
    inf = np.isinf(values)
    if inf.any():
        raise InputError(f"column {name!r}: infinite values in {describe_rows(inf, list(labels))}")
    return values


def _pair_cells(series: pd.Series, name: str, labels: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """Split ``"x/y"`` cells into two arrays; None when the column is not a pair column.

    Either half may be a missing marker (GLUE has ``"NaN/99.8"``).
    """
    if pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
        return None
    missing = _is_missing_text(series)
    text = series.astype(str).str.strip()
    is_pair = text.str.match(_PAIR).to_numpy(dtype=bool)
    if not is_pair.any():
        return None
    parts = text.str.split("/", n=1, expand=True).reindex(columns=[0, 1])
    halves = []
    bad = ~missing & (parts[1].isna().to_numpy())
    for k in (0, 1):
        half = parts[k].fillna("").str.strip()
        miss = half.isin(MISSING_MARKERS).to_numpy() | missing
        num = pd.to_numeric(half.where(~miss), errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        bad |= np.isnan(num) & ~miss
        halves.append(np.where(missing, np.nan, num))
    if bad.any():
        raise InputError(f"column {name!r}: mixes 'x/y' pair cells with {series[bad].iloc[0]!r} in "
                         f"{describe_rows(bad, list(labels))}; expected every cell as 'x/y' or '-'")
    for arr in halves:
        if np.isinf(arr).any():
            raise InputError(f"column {name!r}: infinite values in a pair cell")
    return halves[0], halves[1]


def _resolve_weights(weights: Any, columns: list[str], base: dict[str, float],
                     groups: dict[str, str]) -> np.ndarray:
    if weights is None:
        out = np.array([base[c] for c in columns], dtype=np.float64)
    elif isinstance(weights, Mapping):
        group_names = set(groups.values())
        unknown = [k for k in weights if k not in columns and k not in group_names]
        if unknown:
            raise InputError(f"weights: unknown column(s) {unknown}; columns are {columns}")
        out = np.empty(len(columns))
        for j, c in enumerate(columns):
            if c in weights:
                out[j] = _weight(weights[c], c)
            elif groups[c] in weights:
                out[j] = _weight(weights[groups[c]], groups[c]) * base[c]
            else:
                out[j] = base[c]
    else:
        arr = np.asarray(weights, dtype=object).ravel()
        if arr.size != len(columns):
            raise InputError(f"weights: expected {len(columns)} values (one per column {columns}), got {arr.size}")
        out = np.array([_weight(v, c) for v, c in zip(arr, columns)])
    if not (out > 0).any():
        raise InputError("weights: all column weights are zero; expected at least one positive weight")
    return out


def _weight(value: Any, name: str) -> float:
    try:
        w = float(value)
    except (TypeError, ValueError):
        raise InputError(f"weights: weight of {name!r} must be a number, got {value!r}") from None
    if not np.isfinite(w) or w < 0:
        raise InputError(f"weights: weight of {name!r} must be finite and >= 0, got {value!r}")
    return w


def _resolve_direction(hib: Any, columns: list[str], groups: dict[str, str],
                       metric_of: dict[str, str]) -> np.ndarray:
    if isinstance(hib, (bool, np.bool_)):
        return np.full(len(columns), bool(hib))
    out = np.array([_registry_direction(metric_of.get(c)) for c in columns], dtype=bool)
    if hib is None:
        return out
    if isinstance(hib, Mapping):
        known = set(columns) | set(groups.values()) | set(metric_of.values())
        unknown = [k for k in hib if k not in known]
        if unknown:
            raise InputError(f"higher_is_better: unknown column(s) {unknown}; columns are {columns}")
        for j, c in enumerate(columns):
            for key in (c, groups[c], metric_of.get(c)):
                if key is not None and key in hib:
                    out[j] = _bool(hib[key], key)
                    break
        return out
    arr = list(hib)
    if len(arr) != len(columns):
        raise InputError(f"higher_is_better: expected {len(columns)} values (one per column), got {len(arr)}")
    return np.array([_bool(v, c) for v, c in zip(arr, columns)], dtype=bool)


def _bool(value: Any, name: str) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise InputError(f"higher_is_better[{name!r}]: expected True or False, got {value!r}")


def _registry_direction(metric_name: str | None) -> bool:
    """Direction from the metric registry; unregistered names (and wide tables) default to True."""
    if metric_name is None:
        return True
    from scorebench.core.registry import metric

    try:
        record = metric(metric_name)
    except UnknownMetricError:
        return True
    if record.higher_is_better is None:
        raise InputError(f"metric {metric_name!r} has no order (higher_is_better=None in the registry); "
                         "it cannot be ranked; drop it or pass higher_is_better for it")
    return bool(record.higher_is_better)


def _finish(values: np.ndarray, systems: list[str], columns: list[str], hib: np.ndarray,
            weights: np.ndarray) -> ScoreMatrix:
    empty_rows = np.isnan(values).all(axis=1)
    if empty_rows.any():
        raise InputError(f"system(s) {[systems[i] for i in np.flatnonzero(empty_rows)[:5]]} have no scores at all; "
                         "drop them before aggregating")
    empty_cols = np.isnan(values).all(axis=0)
    if empty_cols.any():
        raise InputError(f"column(s) {[columns[j] for j in np.flatnonzero(empty_cols)[:5]]} have no scores at all")
    if len(systems) < 2:
        raise InputError(f"aggregation needs at least 2 systems, got {len(systems)}")
    return ScoreMatrix(values.astype(np.float64), tuple(systems), tuple(columns), hib.astype(bool),
                       weights.astype(np.float64))


# --- battles ------------------------------------------------------------------------------


@register_kind("battles", columns=(Column("a", "label", "the first player", aliases=("model_a",)),
                                   Column("b", "label", "the second player", aliases=("model_b",)),
                                   Column("winner", "label", "a, b, tie (also model_a, model_b, tie (bothbad), "
                                          "draw) or the winner's name"),
                                   Column("weight", "number", "the battle's weight (>= 0)", required=False)),
               stage="aggregate")
def as_battles(table: pd.DataFrame | Mapping[Any, Any]) -> Battles:
    """Pairwise battles between systems: who played whom and who won.

    The columns are ``a``/``model_a``, ``b``/``model_b``, ``winner`` and an optional ``weight``,
    as a DataFrame or a plain mapping of columns (each a 1-D sequence of one length).

    ``winner`` holds ``a``/``b``/``tie`` (also ``model_a``, ``model_b``, ``tie (bothbad)``,
    ``both_bad``, ``draw``) or the winning system's name.

    Examples
    --------
    >>> import pandas as pd
    >>> b = as_battles(pd.DataFrame({"a": ["x", "x"], "b": ["y", "z"], "winner": ["a", "tie"]}))
    >>> b.systems, b.outcome.tolist()
    (('x', 'y', 'z'), [1.0, 0.5])
    >>> as_battles({"model_a": ["x"], "model_b": ["y"], "winner": ["y"], "weight": [2.0]}).outcome.tolist()
    [0.0]
    """
    if not isinstance(table, (pd.DataFrame, Mapping)):
        raise InputError(f"battles: expected a DataFrame or a mapping of columns, got {type(table).__name__}")
    table = _columns_frame(table, None, None)
    col_a, col_b = _battle_columns(table)
    # factorise first and convert only the distinct names to str (O(rows) integer work at Arena scale)
    code_a, names_a = pd.factorize(table[col_a])
    code_b, names_b = pd.factorize(table[col_b])
    str_a = [str(v) for v in names_a]
    str_b = [str(v) for v in names_b]
    systems = tuple(sorted(set(str_a) | set(str_b)))
    index = {s: i for i, s in enumerate(systems)}
    ia = np.array([index[s] for s in str_a], dtype=np.int64)[code_a]
    ib = np.array([index[s] for s in str_b], dtype=np.int64)[code_b]
    same = ia == ib
    if same.any():
        raise InputError(f"battles table: a system plays itself in {describe_rows(same, table.index)}")
    outcome = _battle_outcomes(table, np.array(systems, dtype=object), ia, ib)
    weight = _battle_weights(table)
    if len(systems) < 2:
        raise InputError("battles table: fewer than 2 distinct systems")
    return Battles(systems, ia, ib, outcome, weight)


def _battle_columns(table: pd.DataFrame) -> tuple[str, str]:
    """The two player columns; the table must also have ``winner`` and no missing players or winners."""
    col_a = next((c for c in _BATTLE_A if c in table.columns), None)
    col_b = next((c for c in _BATTLE_B if c in table.columns), None)
    if col_a is None or col_b is None or "winner" not in table.columns:
        raise InputError(f"battles table: expected columns a, b, winner; the table has {list(table.columns)[:12]}")
    if len(table) == 0:
        raise InputError("battles table: no rows")
    for c in (col_a, col_b, "winner"):
        bad = table[c].isna().to_numpy()
        if bad.any():
            raise InputError(f"battles table: column {c!r} is missing in {describe_rows(bad, table.index)}")
    return col_a, col_b


def _battle_outcomes(table: pd.DataFrame, systems: np.ndarray, ia: np.ndarray, ib: np.ndarray) -> np.ndarray:
    """Outcome for ``a`` (1, 0, 0.5) from ``winner``: a side label, a tie label or a player's name.

    The labels are read once per distinct value (factorised), so the cost per battle is an
    integer lookup; only battles whose winner is a player's name compare strings.
    """
    codes, distinct = pd.factorize(table["winner"])
    labels = np.array([str(v).strip() for v in distinct] + [""], dtype=object)
    low = np.array([v.lower() for v in labels], dtype=object)
    value = np.full(len(labels), np.nan)
    value[np.isin(low, ("a", "model_a"))] = 1.0
    value[np.isin(low, ("b", "model_b"))] = 0.0
    value[np.isin(low, ("tie", "tie (bothbad)", "both_bad", "bothbad", "draw"))] = 0.5
    outcome = value[codes]
    by_name = np.flatnonzero(np.isnan(outcome))
    if len(by_name):
        winner = labels[codes[by_name]]
        outcome[by_name] = np.where(winner == systems[ia[by_name]], 1.0,
                                    np.where(winner == systems[ib[by_name]], 0.0, np.nan))
    bad = np.isnan(outcome)
    if bad.any():
        raise InputError(f"battles table: column 'winner' has {labels[codes[bad]][0]!r} in "
                         f"{describe_rows(bad, table.index)}; expected 'a', 'b', 'tie' or a player's name")
    return outcome


def _battle_weights(table: pd.DataFrame) -> np.ndarray:
    """The optional ``weight`` column (finite, >= 0); 1 per battle without it."""
    if "weight" not in table.columns:
        return np.ones(len(table))
    weight = _numeric_cells(table["weight"], "weight", table.index)
    bad = np.isnan(weight) | (weight < 0)
    if bad.any():
        raise InputError(f"battles table: column 'weight' must be >= 0 in {describe_rows(bad, table.index)}")
    return weight


def battles_from_matrix(m: ScoreMatrix) -> Battles:
    """Every pair of systems scored on a column plays one battle there, weighted by the column weight.

    The battles are listed column by column, then pair by pair (i < j) in system order;
    order matters only to Elo.
    """
    x = m.oriented
    n = m.n_systems
    i, j = np.triu_indices(n, k=1)
    a_list, b_list, o_list, w_list = [], [], [], []
    for c in range(m.n_columns):
        xi, xj = x[i, c], x[j, c]
        ok = ~(np.isnan(xi) | np.isnan(xj))
        if m.weights[c] == 0 or not ok.any():
            continue
        a_list.append(i[ok])
        b_list.append(j[ok])
        o_list.append(np.where(xi[ok] > xj[ok], 1.0, np.where(xi[ok] < xj[ok], 0.0, 0.5)))
        w_list.append(np.full(int(ok.sum()), m.weights[c]))
    if not a_list:
        raise InputError("no pair of systems is scored on a common column with positive weight")
    return Battles(m.systems, np.concatenate(a_list), np.concatenate(b_list), np.concatenate(o_list),
                   np.concatenate(w_list))
