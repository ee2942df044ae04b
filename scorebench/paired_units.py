"""Per-unit values of every system, paired across systems: the data behind gates and reports.

:func:`paired_units` scores a result table per unit (item, query) with one per-row metric
through :func:`scorebench.evaluate` (``per_unit=True``), so every table kind and reader
output works, and returns, for each task, a units x systems matrix of contributions with
the cluster of each unit when items come in groups. Systems must be scored on the same
units (matched by the kind's key, e.g. ``id``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.evaluation.evaluate import evaluate, resolve_metrics
from scorebench.core.registry import Metric

__all__ = ["PairedUnits", "paired_units", "usable_rows"]


@dataclass(frozen=True)
class PairedUnits:
    """Units x systems values of one task.

    Attributes
    ----------
    task : object
        The task (None when the table has no ``task`` column).
    units : list of str
        The unit keys (ids), in sorted order.
    systems : list of str
        System names, in sorted order.
    matrix : (n_units, n_systems) array
        The metric's contribution of each system on each unit.
    clusters : (n_units,) array or None
        The cluster of each unit (``cluster=``), else None.
    """

    task: Any
    units: list[str]
    systems: list[str]
    matrix: np.ndarray
    clusters: np.ndarray | None

    def column(self, system: str) -> np.ndarray:
        """The values of ``system`` on every unit."""
        if system not in self.systems:
            raise InputError(f"system {system!r} not found; the systems are {self.systems}")
        return self.matrix[:, self.systems.index(system)]


def usable_rows(table: pd.DataFrame, record: Metric) -> pd.DataFrame:
    """Rows of a per-sample table that carry the metric's score column.

    A reader's ``samples`` table holds one column per score and leaves a cell empty where a
    task did not compute that score (lm-eval: ``acc`` for multiple choice, ``exact_match`` for
    generation). For ``sample_mean@COL`` the rows without ``COL`` are dropped, so the tasks
    that have it are compared; other metrics keep every row.
    """
    name = record.name
    if isinstance(table, pd.DataFrame) and name.startswith("sample_mean@"):
        column = name.split("@", 1)[1]
        if column in table.columns:
            kept = table[table[column].notna()]
            if kept.empty:
                raise InputError(f"metric {name!r}: column {column!r} has no values")
            return kept
    return table


def paired_units(table: Any, metric: str | Metric, *, kind: str | None = None, cluster: str | None = None,
                 nan_policy: str = "raise", **kind_options: Any) -> tuple[Metric, list[PairedUnits]]:
    """The metric's per-unit values of every system, per task, paired by unit key.

    Parameters
    ----------
    table : DataFrame or path
        A result table of the metric's kind with a unit key (``id``, ``qid``).
    metric : str or Metric
        A per-row metric (``accuracy``, ``sample_mean@acc,none``, ``brier_score``, ...).
    cluster : str, optional
        Column with the cluster of each unit (one cluster per unit, the same in every system).

    Returns
    -------
    (Metric, list of PairedUnits)
        The resolved metric and one :class:`PairedUnits` per task (task order sorted).

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"system": ["a"] * 3 + ["b"] * 3, "id": [1, 2, 3] * 2, "correct": [1, 1, 0, 0, 1, 0]})
    >>> record, (units,) = paired_units(t, "accuracy")
    >>> units.systems, units.matrix.tolist()
    (['a', 'b'], [[1.0, 0.0], [1.0, 1.0], [0.0, 0.0]])
    """
    record = resolve_metrics(metric)[0]
    if not record.per_row:
        raise InputError(f"metric {record.name!r} is set-level; a paired comparison needs a per-row metric "
                         "(one contribution per item)")
    if isinstance(table, pd.DataFrame):
        table = usable_rows(table, record)
    scores = evaluate(table, [record], kind=kind, n_boot=0, per_unit=True, nan_policy=nan_policy, **kind_options)
    key = scores.attrs.get("unit_key")
    if key is None:
        raise InputError(f"metric {record.name!r}: the table's units have no key (id); a paired comparison needs "
                         "the same ids in every system")
    by = [c for c in ("system", "task") if c in scores.columns]
    n_groups = len(scores[by].drop_duplicates())
    units = scores.iloc[: len(scores) - n_groups]
    if units.empty:
        raise InputError("no per-unit values to compare")
    labels = _cluster_map(table, key, cluster) if cluster is not None else None
    out = []
    tasks = sorted(units["task"].unique().tolist(), key=str) if "task" in units.columns else [None]
    for task in tasks:
        sub = units if task is None else units[units["task"] == task]
        wide = sub.pivot_table(index=key, columns="system", values="value", aggfunc="first", dropna=False)
        wide = wide.sort_index()
        where = "" if task is None else f" in task {task!r}"
        if wide.shape[1] < 2:
            raise InputError(f"a paired comparison needs at least two systems{where}; found {list(wide.columns)}")
        missing = wide.isna().any(axis=1)
        if missing.any():
            bad = wide.index[missing.to_numpy()][:5].tolist()
            raise InputError(f"systems are not scored on the same units{where}: {key} {bad} missing or undefined for "
                             "some systems; every unit needs a value for every system")
        clusters = None
        if labels is not None:
            keys = wide.index.astype(str) if task is None else pd.MultiIndex.from_arrays(
                [[str(task)] * len(wide), wide.index.astype(str)])
            clusters = labels.reindex(keys).to_numpy()
            if pd.isna(clusters).any():
                raise InputError(f"column {cluster!r}: missing cluster labels{where}; every unit needs a cluster")
        out.append(PairedUnits(task, [str(u) for u in wide.index], [str(s) for s in wide.columns],
                               wide.to_numpy(dtype=np.float64), clusters))
    return record, out


def _cluster_map(table: Any, key: str, cluster: str) -> pd.Series:
    """Cluster label of each (task,) unit; one label per unit across systems."""
    if not isinstance(table, pd.DataFrame):
        from scorebench.io.tables import read_table

        table = read_table(table)
    if cluster not in table.columns:
        raise InputError(f"column {cluster!r} (cluster) not found; the table has {list(table.columns)}")
    if key not in table.columns:
        raise InputError(f"cluster= needs the unit key column {key!r} in the table")
    cols = (["task"] if "task" in table.columns else []) + [key]
    frame = table[cols + [cluster]].copy()
    for c in cols:
        frame[c] = frame[c].astype(str)
    counts = frame.groupby(cols, sort=False)[cluster].nunique(dropna=False)
    if (counts > 1).any():
        bad = counts.index[(counts > 1).to_numpy()][:5].tolist()
        raise InputError(f"column {cluster!r}: unit(s) {bad} carry different clusters in different systems; "
                         "expected one cluster per unit")
    first = frame.drop_duplicates(cols).set_index(cols)[cluster]
    return first
