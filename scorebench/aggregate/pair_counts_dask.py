"""Battles too many for one machine's memory: (pair, outcome) counts on the Dask engine, fit in memory.

A Bradley–Terry fit and its sandwich covariance need only the per-cell counts and weight sums
of :class:`~scorebench.aggregate.pair_counts.PairCounts`, which add up across partitions. Each
partition is read exactly as in memory (:func:`~scorebench.aggregate.input.as_battles`, so the
same column names, winner labels, weights and errors), reduced to at most three rows per ordered
pair of models, and the small partial tables are summed on the client. 100 M battles among 400
models become < 500,000 cells, which :func:`bt_from_counts` fits in a second.

Examples
--------
>>> import pandas as pd, dask.dataframe as dd
>>> t = pd.DataFrame({"a": ["x", "x", "y", "z"] * 3, "b": ["y", "z", "z", "x"] * 3,
...                   "winner": ["a", "tie", "b", "a", "b", "a", "a", "tie", "a", "b", "tie", "b"]})
>>> pc = pair_counts_dask(dd.from_pandas(t, npartitions=3))
>>> pc.n_battles, pc.systems
(12, ('x', 'y', 'z'))
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.aggregate.input import as_battles
from scorebench.aggregate.pair_counts import PairCounts, bt_sandwich, pair_counts
from scorebench.aggregate.pairwise import bt_fit, to_elo_scale

__all__ = ["pair_counts_dask", "partition_cells", "cells_to_counts", "bt_from_counts"]

_CELL_COLUMNS = ("a", "b", "outcome", "count", "weight", "weight_sq", "n_battles", "unweighted")


def partition_cells(part: pd.DataFrame) -> pd.DataFrame:
    """One partition's battles as cells keyed by the models' names (mergeable partial counts)."""
    if len(part) == 0:
        return pd.DataFrame({c: pd.Series(dtype=object if c in ("a", "b") else float) for c in _CELL_COLUMNS})
    pc = pair_counts(as_battles(part))
    names = np.array(pc.systems, dtype=object)
    return pd.DataFrame({"a": names[pc.a], "b": names[pc.b], "outcome": pc.outcome, "count": pc.count,
                         "weight": pc.weight, "weight_sq": pc.weight_sq,
                         "n_battles": float(pc.n_battles), "unweighted": float(pc.unweighted)})


def index_cell_systems(merged: pd.DataFrame, first: str, second: str) -> tuple[tuple, np.ndarray, np.ndarray]:
    """The sorted model names of a summed cell table and each cell's two models as indices into them.

    Parameters
    ----------
    merged : DataFrame
        Summed cells, with model names in the columns ``first`` and ``second``.
    first, second : str
        The two columns of model names.

    Returns
    -------
    systems : tuple
        The distinct model names, sorted.
    first_index, second_index : (n_cells,) int64 arrays
        Positions in ``systems`` of each cell's two models.

    Raises
    ------
    InputError
        If fewer than 2 distinct models appear.

    Examples
    --------
    >>> import pandas as pd
    >>> index_cell_systems(pd.DataFrame({"a": ["y", "x"], "b": ["z", "y"]}), "a", "b")
    (('x', 'y', 'z'), array([1, 0]), array([2, 1]))
    """
    systems = tuple(sorted(set(merged[first]) | set(merged[second])))
    if len(systems) < 2:
        raise InputError("battles table: fewer than 2 distinct systems")
    index = {s: i for i, s in enumerate(systems)}
    return (systems, merged[first].map(index).to_numpy(dtype=np.int64),
            merged[second].map(index).to_numpy(dtype=np.int64))


def cells_to_counts(cells: pd.DataFrame) -> PairCounts:
    """Sum partial cell tables (from :func:`partition_cells`) into one :class:`PairCounts`."""
    if len(cells) == 0:
        raise InputError("battles table: no rows")
    merged = cells.groupby(["a", "b", "outcome"], sort=False, observed=True)[["count", "weight", "weight_sq"]].sum()
    merged = merged.reset_index()
    systems, a, b = index_cell_systems(merged, "a", "b")
    outcome = merged["outcome"].to_numpy(dtype=np.float64)
    order = np.lexsort((outcome, b, a))  # the in-memory cell order: (a, b, outcome)
    count = merged["count"].to_numpy(dtype=np.float64)[order]
    return PairCounts(systems, a[order], b[order], outcome[order], count,
                      merged["weight"].to_numpy(dtype=np.float64)[order],
                      merged["weight_sq"].to_numpy(dtype=np.float64)[order],
                      int(round(count.sum())), bool((cells["unweighted"] == 1.0).all()))


def pair_counts_dask(ddf: Any) -> PairCounts:
    """(pair, outcome) counts of a Dask DataFrame of battles (columns as :func:`as_battles` reads)."""
    try:
        import dask.dataframe as dd
    except ImportError as exc:  # pragma: no cover - dask is an optional extra
        raise InputError("pair_counts_dask needs dask (pip install 'dask[dataframe]')") from exc
    if not isinstance(ddf, dd.DataFrame):
        raise InputError(f"pair_counts_dask: expected a dask DataFrame, got {type(ddf).__name__}")
    meta = partition_cells(pd.DataFrame(columns=_CELL_COLUMNS))
    cells = ddf.map_partitions(partition_cells, meta=meta).compute()
    return cells_to_counts(cells)


def bt_from_counts(pc: PairCounts, *, prior: float = 0.0, scale: float = 400.0, base: float = 10.0,
                   init: float = 1000.0) -> tuple[np.ndarray, np.ndarray]:
    """Bradley–Terry ratings and their sandwich covariance (Elo scale) from counts.

    The same numbers as :func:`~scorebench.aggregate.pairwise.bradley_terry_sandwich` on the
    battles the counts came from.
    """
    theta = bt_fit(pc.wins(), prior=prior, tol=1e-12)
    unit = to_elo_scale(1.0, scale=scale, base=base, init=0.0)
    return to_elo_scale(theta, scale=scale, base=base, init=init), unit ** 2 * bt_sandwich(pc, theta, prior=prior)
