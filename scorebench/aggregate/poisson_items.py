r"""Item-level rank intervals by the Poisson bootstrap: in memory, and on Dask from per-partition sums.

An item-level table has one row per system x task (x metric) x item with the item's score
(``evaluate(..., per_unit=True)``; its ``"all"`` rows are ignored here). The point value of a
column is the mean over its items; :func:`scorebench.aggregate` ranks the systems x columns
matrix of these means with any score-table method.

Resampling. The in-memory default (:func:`scorebench.aggregate.items.bootstrap_items`) draws
multinomial item counts, which need all items of a task together. This module draws
**Poisson(1) item weights** instead: item :math:`i` of task :math:`t` gets in round :math:`b`
the weight :math:`W_{bi}`, a function of (seed, hash of the text of :math:`t` and :math:`i`,
:math:`b`) only (:func:`scorebench.core.stats.poisson_weights`, the scheme of the Dask
``compare``), and the replicate of column :math:`c` for system :math:`a` is the ratio

.. math:: x^*_{bca} = \frac{\sum_i W_{bi}\, x_{ica}}{\sum_i W_{bi}}

(Hanley & MacGibbon, 2006). The same items get the same weight for every system and every
column of a task (paired). Numerator and denominator are sums over items, so they add over
any split of the rows: each Dask partition (rows co-partitioned by task and item with
:func:`scorebench.evaluation.dask_engine.co_partition`) reduces to its per-column sums and
per-round weighted sums, the client adds them, forms the replicate matrices and runs the
method on each. A round where a task's items all get weight 0 has no replicate and is counted
in ``details["n_boot_failed"]`` (probability :math:`e^{-n}` for a task of :math:`n` items).

``resample="tasks+items"`` (the default from :data:`~scorebench.aggregate.items.MIN_TASKS`
tasks on) also draws the tasks with replacement, on the client (seeded, ``rng_for(seed,
"aggregate", method, "poisson")``); the :math:`j`-th copy of a task in a round has item weights
of its own (the seed of copy :math:`j > 0` is derived from (seed, j)), so copies are
independent as in the multinomial two-level bootstrap.

``scorebench.aggregate(ddf, ...)`` on an item-level Dask table uses this scheme;
``scorebench.aggregate(pandas_table, ..., intervals="poisson")`` computes the same estimator
in memory, so the two give the same scores, intervals and rank intervals (up to the order of
floating-point additions) however the Dask table is partitioned. Tasks are taken in sorted
order, and the columns of a task in the order of their labels, in both.

Examples
--------
>>> import numpy as np, pandas as pd, dask.dataframe as dd, scorebench
>>> from scorebench.aggregate import aggregate
>>> rng = np.random.default_rng(0)
>>> t = pd.DataFrame({"system": np.repeat(["a", "b", "c"], 200), "task": np.tile(np.repeat(["x", "y"], 100), 3),
...                   "id": np.tile(np.arange(100), 6), "y": rng.integers(0, 2, 600), "p": rng.random(600)})
>>> units = scorebench.evaluate(t, "brier_score", n_boot=0, per_unit=True)  # one row per system x task x item
>>> mem = aggregate(units, "mean", n_boot=50, intervals="poisson", seed=1)  # in memory
>>> got = aggregate(dd.from_pandas(units, npartitions=3), "mean", n_boot=50, seed=1)
>>> bool(np.allclose(got.ci_low, mem.ci_low, rtol=1e-12)), got.resample, got.rank_low.tolist() == mem.rank_low.tolist()
(True, 'items', True)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from scorebench.aggregate.input import ScoreMatrix, as_matrix
from scorebench.aggregate.items import (
    ALL,
    ItemScores,
    column_label,
    item_keys,
    item_resample,
    replicate_matrix,
    run_replicates,
    splits_metrics,
    unit_column_of,
)
from scorebench.core.dask_tree import tree_reduce
from scorebench.core.errors import InputError
from scorebench.core.stats import PoissonRounds, rng_for, weighted_sums
from scorebench.core.tables import hash_labels

__all__ = ["PoissonItems", "ItemLayout", "ItemSums", "poisson_bootstrap_items", "read_dask_items", "is_dask_item_table",
           "item_layout", "partition_item_sums", "task_sums", "item_hashes", "copy_seed", "DETAIL", "MAX_PARTIAL_BYTES"]

DETAIL = "Poisson bootstrap (item weights from (seed, hash of task and item, round), shared by all systems)"
MAX_PARTIAL_BYTES = 1 << 30  # per-partition replicate sums (copies x rounds x columns x systems x 8 bytes)

_MERGE = 8  # per-system sums merged per task: a worker holds at most 8 partials


def item_hashes(task: str, units: Sequence[str] | np.ndarray) -> np.ndarray:
    """64-bit hashes of the items of ``task`` (of the text ``task`` + US + item), from which their
    Poisson weights derive; an item id repeated in another task gets other weights."""
    return hash_labels(pd.Series([f"{task}\x1f{u}" for u in units], dtype=object))


def copy_seed(seed: int, copy: int) -> int:
    """The seed of the item weights of the ``copy``-th draw of a task in a round (``seed`` itself
    for the first)."""
    if copy == 0:
        return int(seed)
    return int(np.random.SeedSequence([int(seed), int(copy)]).generate_state(1, dtype=np.uint64)[0])


def task_sums(values: np.ndarray, hashes: np.ndarray, *, seed: int, n_boot: int,
              copies: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sums over the items of one task: ``values`` is items x (columns x systems).

    Returns the plain sums (``values.sum(0)``), the Poisson-weighted sums per copy and round
    ``(copies, n_boot, width)`` and the total weights ``(copies, n_boot)``. Rounds are drawn a
    block at a time (:class:`~scorebench.core.stats.PoissonRounds`), so memory stays bounded
    whatever the number of items.
    """
    boot = np.zeros((copies, n_boot, values.shape[1]))
    weight = np.zeros((copies, n_boot))
    for j in range(copies):
        for first, w in PoissonRounds(hashes, copy_seed(seed, j), n_boot).blocks():
            boot[j, first:first + w.shape[0]] = weighted_sums(w, values)
            weight[j, first:first + w.shape[0]] = w.sum(axis=1)
    return values.sum(axis=0), boot, weight


def _draws(n_tasks: int, n_boot: int, resample: str, seed: int, method: str) -> np.ndarray:
    """Per round, the tasks drawn (``items``: every task once)."""
    if resample == "items":
        return np.tile(np.arange(n_tasks), (n_boot, 1))
    rng = rng_for(seed, "aggregate", method, "poisson")
    return rng.integers(n_tasks, size=(n_boot, n_tasks))


def _copies(draws: np.ndarray, n_tasks: int) -> np.ndarray:
    """Per task, the most times it is drawn in one round."""
    if draws.size == 0:
        return np.zeros(n_tasks, dtype=np.int64)
    counts = np.stack([np.bincount(row, minlength=n_tasks) for row in draws])
    return counts.max(axis=0)


@dataclass(frozen=True)
class PoissonItems:
    """The point matrix and the Poisson-weighted sums behind every bootstrap replicate.

    Attributes
    ----------
    matrix : ScoreMatrix
        Column means of the item scores (the point values), directions and weights.
    tasks : tuple of str
        The tasks, sorted.
    columns_of_task : tuple of ndarray
        Per task, the positions of its columns in ``matrix`` (in the order of their labels).
    draws : ndarray of int, (n_boot, slots)
        The tasks drawn in each round.
    boot : ndarray, (copies, n_boot, columns, systems)
        Per copy and round, the Poisson-weighted item sums of each column and system.
    weight : ndarray, (copies, n_boot, columns)
        The matching total weights.
    resample : str
        ``"items"`` or ``"tasks+items"``.
    """

    matrix: ScoreMatrix
    tasks: tuple[str, ...]
    columns_of_task: tuple[np.ndarray, ...]
    draws: np.ndarray
    boot: np.ndarray
    weight: np.ndarray
    resample: str

    def bootstrap(self, run: Callable[[ScoreMatrix], np.ndarray]) -> tuple[np.ndarray, int]:
        """Replicates of ``run(matrix) -> scores`` and the number of rounds without one."""
        return run_replicates((self._replicate(b, drawn) for b, drawn in enumerate(self.draws)), run)

    def _replicate(self, b: int, drawn: np.ndarray) -> ScoreMatrix | None:
        """Round ``b``'s matrix; ``None`` if a drawn task's items all got weight 0."""
        seen: dict[int, int] = {}
        blocks, cols = [], []
        for t in drawn:
            j = seen.get(int(t), 0)
            seen[int(t)] = j + 1
            c = self.columns_of_task[t]
            w = self.weight[j, b, c]
            if not np.all(w > 0):
                return None
            blocks.append(self.boot[j, b, c, :] / w[:, None])
            cols.append(c)
        return replicate_matrix(self.matrix, blocks, cols)


def _by_label(matrix: ScoreMatrix, tasks: Sequence[str], task_of_column: dict[str, str]) -> tuple[np.ndarray, ...]:
    """Per task, the positions of its columns in ``matrix`` in the order of the labels."""
    return tuple(np.array(sorted((i for i, c in enumerate(matrix.columns) if task_of_column[c] == t),
                                 key=lambda i: matrix.columns[i]), dtype=np.int64) for t in tasks)


def poisson_bootstrap_items(data: ItemScores, *, n_boot: int, seed: int, method: str,
                            resample: str | None) -> PoissonItems:
    """The Poisson item bootstrap of in-memory per-item scores (``aggregate(..., intervals="poisson")``)."""
    if len(data.units) != len(data.tasks):
        raise InputError("per-item scores without their item labels: read them with item_scores()")
    m = data.matrix
    order = sorted(range(len(data.tasks)), key=lambda t: data.tasks[t])
    tasks = tuple(data.tasks[t] for t in order)
    task_of_column = {m.columns[i]: data.tasks[t] for t in range(len(data.tasks)) for i in data.columns_of_task[t]}
    columns = _by_label(m, tasks, task_of_column)
    used = item_resample(resample, len(tasks))
    draws = _draws(len(tasks), n_boot, used, seed, method)
    copies = _copies(draws, len(tasks))
    boot = np.zeros((max(int(copies.max(initial=0)), 1), n_boot, m.n_columns, m.n_systems))
    weight = np.zeros(boot.shape[:3])
    for new, old in enumerate(order):
        block = data.items[old]  # items x (columns of task, in columns_of_task order) x systems
        pos = [list(data.columns_of_task[old]).index(i) for i in columns[new]]
        values = block[:, pos, :].reshape(block.shape[0], -1)
        _, wb, ww = task_sums(values, item_hashes(tasks[new], data.units[old]), seed=seed, n_boot=n_boot,
                              copies=int(copies[new]))
        j = int(copies[new])
        boot[:j, :, columns[new], :] = wb.reshape(j, n_boot, len(pos), m.n_systems)
        weight[:j, :, columns[new]] = ww[:, :, None]
    return PoissonItems(m, tasks, columns, draws, boot, weight, used)


# --- Dask ----------------------------------------------------------------------------------


def is_dask_item_table(ddf: Any) -> bool:
    """Whether a Dask DataFrame is an item-level table (``system``, ``value`` and one unit column)."""
    return unit_column_of(ddf.columns) is not None


@dataclass(frozen=True)
class ItemLayout:
    """The systems, tasks and columns of an item-level Dask table (first pass), in sorted order.

    ``labels`` are sorted by (task, label), so each task's columns are contiguous;
    ``first[t]`` is the position of task ``t``'s first column.
    """

    unit: str
    keys: tuple[str, ...]
    split: bool
    systems: tuple[str, ...]
    tasks: tuple[str, ...]
    labels: tuple[str, ...]
    task_of: np.ndarray
    first: np.ndarray
    metric_of: tuple[str, ...] = ()

    def label_text(self, rows: pd.DataFrame) -> pd.Series:
        """The column label of each row (as :func:`~scorebench.aggregate.items.item_scores` names it)."""
        return column_label(rows, self.keys, self.split)


def item_layout(ddf: Any) -> ItemLayout:
    """First pass: the distinct (system, task, metric) of the item rows."""
    unit = unit_column_of(ddf.columns)
    if unit is None:
        raise InputError("expected per-item scores: system, task and/or metric, one unit column (id, qid, item), "
                         f"value; the table has {list(ddf.columns)}")
    keys = item_keys(ddf.columns)
    rows = ddf[ddf[unit].astype(str) != ALL][["system", *keys]]
    combos = rows.astype(str).drop_duplicates(split_out=1).compute()  # a tree reduction, no shuffle
    if combos.empty:
        raise InputError("per-item scores: the table has no item rows")
    split = splits_metrics(combos, keys)
    frame = combos.assign(_task=combos["task"] if "task" in keys else ALL, _label=column_label(combos, keys, split))
    carried = ["_task", "_label", *(["metric"] if "metric" in keys else [])]
    pairs = frame[carried].drop_duplicates().sort_values(["_task", "_label"])
    if pairs["_label"].duplicated().any():
        raise InputError("per-item scores: a column label belongs to two tasks")
    tasks = tuple(sorted(pairs["_task"].unique()))
    task_of = pairs["_task"].map({t: i for i, t in enumerate(tasks)}).to_numpy(np.int64)
    first = np.searchsorted(task_of, np.arange(len(tasks)))
    return ItemLayout(unit, keys, split, tuple(sorted(combos["system"].unique())), tasks,
                      tuple(pairs["_label"]), task_of, first,
                      tuple(pairs["metric"]) if "metric" in keys else ())


@dataclass
class ItemSums:
    """Sums over some items (mergeable with ``+``): per column and system the item sums and
    counts, and per copy and round the Poisson-weighted sums and total weights."""

    sums: np.ndarray
    n: np.ndarray
    boot: np.ndarray
    weight: np.ndarray

    @classmethod
    def zeros(cls, columns: int, systems: int, copies: int, n_boot: int) -> ItemSums:
        return cls(np.zeros((columns, systems)), np.zeros(columns, np.int64),
                   np.zeros((copies, n_boot, columns, systems)), np.zeros((copies, n_boot, columns)))

    def __add__(self, other: ItemSums) -> ItemSums:
        return ItemSums(self.sums + other.sums, self.n + other.n, self.boot + other.boot, self.weight + other.weight)


def _codes(values: pd.Series, categories: Sequence[str], what: str) -> np.ndarray:
    codes = pd.Categorical(values, categories=list(categories)).codes.astype(np.int64)
    if (codes < 0).any():
        raise InputError(f"per-item scores: {what} {values[codes < 0].iloc[0]!r} was not in the first pass")
    return codes


def _pivot(units: pd.Series, label: np.ndarray, system: np.ndarray, value: np.ndarray, width: int,
           layout: ItemLayout, columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One task's rows as items x (columns x systems); every cell exactly once."""
    k = len(layout.systems)
    u, uniq = pd.factorize(units, sort=True)
    cell = (u * width + label) * k + system
    count = np.bincount(cell, minlength=len(uniq) * width * k)
    if (count != 1).any():
        bad = int(np.flatnonzero(count != 1)[0])
        item, rest = divmod(bad, width * k)
        col = layout.labels[columns[rest // k]]
        what = "no row" if count[bad] == 0 else f"{int(count[bad])} rows"
        raise InputError(f"per-item scores, column {col!r}: item {uniq[item]!r} has {what} for system "
                         f"{layout.systems[rest % k]!r}; item-level rank intervals need every system scored once "
                         "on every item")
    out = np.empty(len(uniq) * width * k)
    out[cell] = value
    return out.reshape(len(uniq), width * k), np.asarray(uniq, dtype=object)


def _values(rows: pd.DataFrame) -> np.ndarray:
    value = pd.to_numeric(rows["value"], errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isfinite(value)
    if bad.any():
        raise InputError(f"per-item scores: column 'value' must hold finite numbers; row {rows.index[bad][0]!r} holds "
                         f"{rows['value'].to_numpy()[bad][0]!r}")
    return value


def partition_item_sums(part: pd.DataFrame, layout: ItemLayout, copies: np.ndarray, seed: int,
                        n_boot: int) -> ItemSums:
    """One partition's :class:`ItemSums` (its rows hold whole items: co-partitioned by task and item)."""
    k = len(layout.systems)
    out = ItemSums.zeros(len(layout.labels), k, max(int(copies.max(initial=0)), 1), n_boot)
    rows = part[part[layout.unit].astype(str) != ALL]
    if len(rows) == 0:
        return out
    text = rows[["system", *layout.keys]].astype(str)
    system = _codes(text["system"], layout.systems, "system")
    label = _codes(layout.label_text(text), layout.labels, "column")
    value = _values(rows)
    task = layout.task_of[label]
    units = rows[layout.unit].astype(str).to_numpy(dtype=object)
    for t in np.unique(task):
        sel = task == t
        cols = np.flatnonzero(layout.task_of == t)
        values, uniq = _pivot(pd.Series(units[sel]), label[sel] - layout.first[t], system[sel], value[sel],
                              len(cols), layout, cols)
        plain, boot, weight = task_sums(values, item_hashes(layout.tasks[t], uniq), seed=seed, n_boot=n_boot,
                                        copies=int(copies[t]))
        j = int(copies[t])
        out.sums[cols] += plain.reshape(len(cols), k)
        out.n[cols] += values.shape[0]
        out.boot[:j, :, cols, :] += boot.reshape(j, n_boot, len(cols), k)
        out.weight[:j, :, cols] += weight[:, :, None]
    return out


def _merge(parts: Sequence[ItemSums]) -> ItemSums:
    total = parts[0]
    for p in parts[1:]:
        total = total + p
    return total


def read_dask_items(ddf: Any, *, n_boot: int, seed: int, method: str, resample: str | None,
                    weights: Any = None, higher_is_better: Any = None) -> PoissonItems:
    """Two passes over an item-level Dask table: the layout, then per-partition sums (items
    co-partitioned by task and item), merged on the client into :class:`PoissonItems`."""
    from scorebench.evaluation.dask_engine import co_partition

    layout = item_layout(ddf)
    used = item_resample(resample, len(layout.tasks))
    draws = _draws(len(layout.tasks), n_boot, used, seed, method)
    copies = _copies(draws, len(layout.tasks))
    size = max(int(copies.max(initial=0)), 1) * n_boot * len(layout.labels) * len(layout.systems) * 8
    if size > MAX_PARTIAL_BYTES:
        raise InputError(f"aggregate on a Dask item table: n_boot={n_boot} x {len(layout.labels)} columns x "
                         f"{len(layout.systems)} systems needs {size / 2**30:.1f} GiB of replicate sums per partition "
                         f"(limit {MAX_PARTIAL_BYTES / 2**30:.0f} GiB); lower n_boot")
    moved = co_partition(ddf, ["task", layout.unit] if "task" in layout.keys else [layout.unit])
    total: ItemSums = tree_reduce(moved, partition_item_sums, _merge, layout, copies, seed, n_boot, fan_in=_MERGE)
    if (total.n == 0).any():
        raise InputError(f"per-item scores: column {layout.labels[int(np.argmin(total.n))]!r} has no items")
    means = total.sums / total.n[:, None]
    return _finish(layout, total, means, draws, used, weights, higher_is_better)


def _finish(layout: ItemLayout, total: ItemSums, means: np.ndarray, draws: np.ndarray, used: str, weights: Any,
            higher_is_better: Any) -> PoissonItems:
    """The point matrix read as in memory (:func:`~scorebench.aggregate.input.as_matrix` of the means),
    and the replicate sums put in its row and column order."""
    c, s = np.meshgrid(np.arange(len(layout.labels)), np.arange(len(layout.systems)), indexing="ij")
    frame = pd.DataFrame({"system": np.asarray(layout.systems, dtype=object)[s.ravel()], "value": means.ravel()})
    parts = _key_columns(layout, c.ravel())
    matrix = as_matrix(frame.assign(**parts)[["system", *layout.keys, "value"]], weights=weights,
                       higher_is_better=higher_is_better)
    col = np.array([layout.labels.index(name) for name in matrix.columns], dtype=np.int64)
    row = np.array([layout.systems.index(name) for name in matrix.systems], dtype=np.int64)
    boot = total.boot[:, :, col, :][:, :, :, row]
    weight = total.weight[:, :, col]
    task_of_column = {matrix.columns[i]: layout.tasks[layout.task_of[col[i]]] for i in range(len(col))}
    columns = _by_label(matrix, layout.tasks, task_of_column)
    return PoissonItems(matrix, layout.tasks, columns, draws, boot, weight, used)


def _key_columns(layout: ItemLayout, column: np.ndarray) -> dict[str, np.ndarray]:
    """The task / metric values of the layout's columns (from their labels)."""
    out = {}
    if "task" in layout.keys:
        out["task"] = np.asarray(layout.tasks, dtype=object)[layout.task_of[column]]
    if "metric" in layout.keys:
        out["metric"] = np.asarray(layout.metric_of, dtype=object)[column]
    return out
