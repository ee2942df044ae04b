"""Item-level scores behind a score matrix, and the rank bootstrap that resamples them.

A systems x tasks score matrix hides how many items each number came from. When the
per-item contributions are known — the output of ``scorebench.evaluate(..., per_unit=True)``
for per-row metrics: one row per (system, task, metric, unit) plus the ``"all"`` rows — rank
intervals resample *items within tasks* (paired: the same items for every system), and the
tasks themselves too when there are enough of them (:data:`MIN_TASKS`):

* ``"tasks+items"`` (two-level, at least :data:`MIN_TASKS` tasks): draw tasks with
  replacement, then items with replacement within each drawn task;
* ``"items"`` (fewer tasks): the tasks are held fixed — the ranking is about these tasks —
  and only their items are resampled.

With only a wide (or long, aggregated) table and fewer than :data:`MIN_TASKS` task columns,
a bootstrap over columns has at most ``C(2m - 1, m)`` distinct resamples (3 for two columns)
and cannot estimate how much the ranking would move; :func:`scorebench.aggregate` then gives
no intervals and says so in ``Ranking.warning``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError, ScorebenchError
from scorebench.core.tables import Column, register_kind
from scorebench.aggregate.input import DIRECTION_OPTION, WEIGHTS_OPTION, ScoreMatrix, as_matrix

__all__ = ["MIN_TASKS", "ITEM_RESAMPLE", "ItemScores", "item_scores", "is_item_table", "bootstrap_items",
           "unit_column_of", "replicate_matrix", "run_replicates", "item_resample", "item_keys", "splits_metrics",
           "column_label"]

MIN_TASKS = 5  # fewest task columns for a column (task) bootstrap
ITEM_RESAMPLE = ("items", "tasks+items")
_SCORE_COLUMNS = {"system", "task", "metric", "value", "ci_low", "ci_high", "n"}
ALL = "all"


@dataclass(frozen=True)
class ItemScores:
    """A score matrix with the per-item contributions of each column.

    Attributes
    ----------
    matrix : ScoreMatrix
        Means of the item contributions (the point values), directions and weights.
    tasks : tuple of str
        The tasks; items are shared by the columns (metrics) of one task.
    items : tuple of ndarray
        Per task, contributions of shape ``(n_items, n_columns_of_task, n_systems)``.
    columns_of_task : tuple of ndarray
        Per task, the positions of its columns in ``matrix``.
    units : tuple of ndarray
        Per task, the item labels (text) in the order of the rows of ``items``.
    """

    matrix: ScoreMatrix
    tasks: tuple[str, ...]
    items: tuple[np.ndarray, ...]
    columns_of_task: tuple[np.ndarray, ...]
    units: tuple[np.ndarray, ...] = ()

    @property
    def n_items(self) -> tuple[int, ...]:
        return tuple(a.shape[0] for a in self.items)


def unit_column_of(columns: Any) -> str | None:
    """The unit column of an item-level table by its column names alone: the one column besides
    ``system``, ``task``, ``metric``, ``value`` (and ``ci_low``, ``ci_high``, ``n``); ``None``
    if there is not exactly one or ``system`` / ``value`` are missing."""
    names = [str(c) for c in columns]
    extra = [c for c in names if c not in _SCORE_COLUMNS]
    if len(extra) != 1 or "system" not in names or "value" not in names:
        return None
    return extra[0]


def _unit_column(table: pd.DataFrame) -> str | None:
    col = unit_column_of(table.columns)
    if col is None:
        return None
    return col if (table[col].astype(str) == ALL).any() and (table[col].astype(str) != ALL).any() else None


def item_keys(columns: Any) -> tuple[str, ...]:
    """The key columns of per-item scores (``task``, ``metric`` or both); one line if neither."""
    keys = tuple(c for c in ("task", "metric") if c in columns)
    if not keys:
        raise InputError("per-item scores need a task and/or metric column")
    return keys


def splits_metrics(rows: pd.DataFrame, keys: Sequence[str]) -> bool:
    """Whether some task of ``rows`` has several metrics (its columns are then ``task/metric``)."""
    return len(keys) == 2 and bool((rows.groupby("task")["metric"].nunique() > 1).any())


def column_label(rows: pd.DataFrame, keys: Sequence[str], split: bool) -> pd.Series:
    """The score-matrix column of each row of text keys, as :func:`~scorebench.aggregate.input.as_matrix`
    names it: ``task/metric`` when ``split`` (:func:`splits_metrics`), else the task (or the
    one key column there is)."""
    if len(keys) == 2:
        return rows["task"] + "/" + rows["metric"] if split else rows["task"]
    return rows[keys[0]]


def is_item_table(table: Any) -> bool:
    """Whether ``table`` is an ``evaluate(..., per_unit=True)`` output (unit rows and ``"all"`` rows)."""
    return isinstance(table, pd.DataFrame) and _unit_column(table) is not None


@register_kind("items", columns=(Column("system", "label", "the system"),
                                 Column("task", "label", "the task (or metric, or both)", aliases=("metric",)),
                                 Column("<unit>", "label", "one unit column (id, qid, item) holding 'all' on the "
                                        "per-group rows"),
                                 Column("value", "number", "the unit's contribution (the group's mean on 'all' rows)")),
               options=(WEIGHTS_OPTION, DIRECTION_OPTION), stage="aggregate", detect=is_item_table)
def item_scores(table: pd.DataFrame, *, weights: Any = None, higher_is_better: Any = None) -> ItemScores:
    """Per-item scores (``evaluate(..., per_unit=True)`` output): the items behind a score matrix.

    Every system must be scored on the same items of a task (the resampling is paired).

    Examples
    --------
    >>> import pandas as pd, scorebench
    >>> t = pd.DataFrame({"system": list("aabb") * 2, "task": ["x"] * 4 + ["y"] * 4, "id": [1, 2] * 4,
    ...                   "y": [1, 0] * 4, "p": [0.9, 0.2, 0.6, 0.5, 0.7, 0.1, 0.5, 0.5]})
    >>> units = scorebench.evaluate(t, "brier_score", n_boot=0, per_unit=True)
    >>> data = item_scores(units)
    >>> data.matrix.columns, data.n_items
    (('x', 'y'), (2, 2))
    """
    unit = _unit_column(table)
    if unit is None:
        raise InputError("expected per-item scores: the output of scorebench.evaluate(..., per_unit=True), with one "
                         "unit column (id, qid, item) holding 'all' on the group rows")
    rows = table[table[unit].astype(str) != ALL]
    keys = item_keys(rows.columns)
    rows = rows.assign(**{c: rows[c].astype(str) for c in ["system", *keys]}, _unit=rows[unit].astype(str))
    means = rows.groupby(["system", *keys], sort=False)["value"].mean().reset_index()
    matrix = as_matrix(means, weights=weights, higher_is_better=higher_is_better)
    task = rows["task"] if "task" in keys else pd.Series(ALL, index=rows.index)
    label = column_label(rows, keys, splits_metrics(rows, keys))
    rows = rows.assign(_task=task.to_numpy(), _label=label.to_numpy())
    tasks = list(dict.fromkeys(rows["_task"]))
    items, positions, unit_labels = [], [], []
    for t in tasks:
        sub = rows[rows["_task"] == t]
        units = sorted(sub["_unit"].unique())
        unit_labels.append(np.array(units, dtype=object))
        labels = list(dict.fromkeys(sub["_label"]))
        block = np.empty((len(units), len(labels), matrix.n_systems))
        for j, lab in enumerate(labels):
            wide = sub[sub["_label"] == lab].pivot(index="_unit", columns="system", values="value")
            wide = wide.reindex(index=units, columns=list(matrix.systems))
            if wide.isna().any().any():
                raise InputError(f"per-item scores, column {lab!r}: not every system is scored on every item; "
                                 "item-level rank intervals resample items jointly for all systems")
            block[:, j, :] = wide.to_numpy()
        items.append(block)
        positions.append(np.array([matrix.columns.index(lab) for lab in labels], dtype=np.int64))
    return ItemScores(matrix, tuple(tasks), tuple(items), tuple(positions), tuple(unit_labels))


def bootstrap_items(data: ItemScores, run: Any, n_boot: int, rng: np.random.Generator,
                    resample: str) -> tuple[np.ndarray, int]:
    """Replicates of ``run(matrix) -> scores`` over item (and task) resamples, and the failures.

    ``resample="tasks+items"`` draws tasks with replacement, then items within each drawn
    task; ``"items"`` keeps the tasks and draws items only. The same items are drawn for
    every system and every column of a task (paired).
    """
    return run_replicates((_multinomial_replicate(data, rng, resample) for _ in range(n_boot)), run)


def _multinomial_replicate(data: ItemScores, rng: np.random.Generator, resample: str) -> ScoreMatrix:
    """One round of :func:`bootstrap_items`: the drawn tasks, each with multinomial item counts."""
    n_tasks = len(data.tasks)
    drawn = rng.integers(n_tasks, size=n_tasks) if resample == "tasks+items" else np.arange(n_tasks)
    blocks, cols = [], []
    for t in drawn:
        block = data.items[t]
        n = block.shape[0]
        w = np.bincount(rng.integers(n, size=n), minlength=n) / n
        blocks.append(np.tensordot(w, block, axes=1))  # (columns of task, systems)
        cols.append(data.columns_of_task[t])
    return replicate_matrix(data.matrix, blocks, cols)


def run_replicates(replicates: Iterable[ScoreMatrix | None],
                   run: Callable[[ScoreMatrix], np.ndarray]) -> tuple[np.ndarray, int]:
    """``run(matrix) -> scores`` on each bootstrap replicate, and the number of rounds without
    a result (a replicate of ``None``, or one on which the method raised a
    :class:`~scorebench.core.errors.ScorebenchError`); one line if no round has one."""
    out, failed = [], 0
    for replicate in replicates:
        if replicate is None:
            failed += 1
            continue
        try:
            out.append(run(replicate))
        except ScorebenchError:
            failed += 1
    if not out:
        raise InputError("the method failed on every bootstrap replicate")
    return np.array(out), failed


def item_resample(resample: str | None, n_tasks: int) -> str:
    """The resampling of per-item scores over ``n_tasks`` tasks: ``resample``, by default
    ``"tasks+items"`` from :data:`MIN_TASKS` tasks on and ``"items"`` below; one line if it
    does not apply."""
    used = resample or ("tasks+items" if n_tasks >= MIN_TASKS else "items")
    if used not in ITEM_RESAMPLE:
        raise InputError(f"resample={used!r} does not apply to per-item scores (use one of {ITEM_RESAMPLE})")
    return used


def replicate_matrix(m: ScoreMatrix, blocks: list[np.ndarray], columns: list[np.ndarray]) -> ScoreMatrix:
    """One bootstrap replicate of ``m``: the drawn tasks' resampled column values side by side.

    ``blocks[i]`` holds the values (columns of the task x systems) of the ``i``-th drawn task,
    ``columns[i]`` their positions in ``m``; a task drawn twice gives two sets of columns
    (named ``column#position``), each with its weight and direction.
    """
    index = np.concatenate(columns)
    values = np.concatenate(blocks, axis=0).T
    names = tuple(f"{m.columns[i]}#{k}" for k, i in enumerate(index))
    return ScoreMatrix(values, m.systems, names, m.higher_is_better[index], m.weights[index])
