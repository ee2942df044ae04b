r"""``aggregate`` on a Dask DataFrame of battles: one pass to cell counts, the rest on the client.

A method claims Dask support by registering a :class:`CountsMethod` (:func:`register_counts`):
its point estimate, its covariance and its bootstrap are functions of the distinct battle cells
alone. A cell is (lower system, higher system, outcome for the lower one, battle weight) with its
multiplicity, so 100 M battles among 400 models are < 500,000 cells. Each partition is read
exactly as in memory (:func:`~scorebench.aggregate.input.as_battles`: the same columns, winner
labels, weights and errors), reduced to its cells keyed by the systems' names, and the partial
tables are summed on the client.

Rank intervals need no further pass over the battles. Resampling :math:`N` battles with
replacement is drawing multinomial counts over the :math:`K` distinct cells,

.. math:: (c^*_1, \dots, c^*_K) \sim \mathrm{Multinomial}(N; c_1/N, \dots, c_K/N),

which the client does (``intervals="bootstrap"``); the default sandwich intervals come from the
counts' covariance and normal draws. The cells are put in the order the in-memory bootstrap
builds them, so a Dask table and the same battles in pandas give the same scores, the same
intervals and the same rank intervals for the same seed, whatever the partitioning.

Methods without a counts record (Elo is order-dependent; the score-table methods read a
systems x tasks matrix) are refused on Dask with one line naming those that have one.

Examples
--------
>>> import pandas as pd, dask.dataframe as dd
>>> import scorebench
>>> t = pd.DataFrame({"a": ["x", "x", "y", "z"] * 3, "b": ["y", "z", "z", "x"] * 3,
...                   "winner": ["a", "tie", "b", "a", "b", "a", "a", "tie", "a", "b", "tie", "b"]})
>>> r = scorebench.aggregate(dd.from_pandas(t, npartitions=3), "bradley_terry", n_boot=0)
>>> p = scorebench.aggregate(t, "bradley_terry", n_boot=0)
>>> r.systems == p.systems, bool(abs(r.scores - p.scores).max() < 1e-9)
(True, True)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from scorebench.aggregate.input import as_battles
from scorebench.aggregate.pair_counts import PairCounts
from scorebench.aggregate.pair_counts_dask import bt_from_counts, index_cell_systems
from scorebench.aggregate.pairwise import bt_bootstrap_cells, bt_fit, bt_loglik, to_elo_scale
from scorebench.aggregate.ranking import Ranking
from scorebench.aggregate.registry import MethodResult, get_method
from scorebench.aggregate.uncertainty import INTERVALS, sandwich_summary, summarize_bootstrap
from scorebench.core.dask_tree import tree_reduce
from scorebench.core.errors import InputError
from scorebench.core.stats import rng_for
from scorebench.core.validation import check_choice

__all__ = ["BattleCells", "CountsMethod", "register_counts", "dask_methods", "battle_cells", "merge_cells",
           "partition_battle_cells", "aggregate_dask"]

_CELL_COLUMNS = ("lo", "hi", "out", "weight", "count")


@dataclass(frozen=True)
class BattleCells:
    """Distinct battle cells in increasing (lo, hi, out, weight) order, with multiplicities.

    Attributes
    ----------
    systems : tuple of str
        Sorted system names (as :func:`~scorebench.aggregate.input.as_battles` orders them).
    lo, hi : ndarray of int
        Indices of the pair, ``lo < hi``.
    out : ndarray of float
        Outcome for ``lo`` (1 won, 0 lost, 0.5 tie).
    weight : ndarray of float
        The battle weight of the cell.
    count : ndarray of int
        Number of battles in the cell.
    """

    systems: tuple[str, ...]
    lo: np.ndarray
    hi: np.ndarray
    out: np.ndarray
    weight: np.ndarray
    count: np.ndarray

    @property
    def n_battles(self) -> int:
        return int(self.count.sum())

    def pair_counts(self) -> PairCounts:
        """The sufficient statistics of the fit and the sandwich (cells oriented lo -> hi).

        Merging a cell (a, b, y) with (b, a, 1 - y) leaves the likelihood, the Hessian and the
        sandwich's meat :math:`\\sum w^2 (y - p)^2 L_{ab}` unchanged.
        """
        c = self.count.astype(np.float64)
        return PairCounts(self.systems, self.lo, self.hi, self.out, c, self.weight * c, self.weight ** 2 * c,
                          self.n_battles, bool(np.allclose(self.weight, 1.0)))


@dataclass(frozen=True)
class CountsMethod:
    """How a method runs from battle cells (its claim of Dask support).

    ``fit(cells, **params) -> MethodResult``; ``intervals(cells, **params) -> (scores, cov)`` or
    ``None``; ``bootstrap(cells, n_boot, rng, **params) -> (n_boot, n) scores`` or ``None``;
    ``refuse`` maps a parameter name to the value that cannot run from cells and why.
    """

    name: str
    fit: Callable[..., MethodResult]
    intervals: Callable[..., tuple[np.ndarray, np.ndarray]] | None = None
    bootstrap: Callable[..., np.ndarray] | None = None
    refuse: tuple[tuple[str, Any, str], ...] = ()


_COUNTS: dict[str, CountsMethod] = {}
_MERGE = 8  # partial cell tables added per merge task


def register_counts(record: CountsMethod) -> CountsMethod:
    """Register ``record`` so that ``aggregate(dask_table, record.name)`` runs from battle cells."""
    get_method(record.name)  # must be a registered aggregation method
    _COUNTS[record.name] = record
    return record


def dask_methods() -> tuple[str, ...]:
    """Names of the aggregation methods that run on a Dask battles table."""
    return tuple(sorted(_COUNTS))


def partition_battle_cells(part: pd.DataFrame) -> pd.DataFrame:
    """One partition's battles as cells keyed by the systems' names (mergeable partial counts)."""
    if len(part) == 0:
        return pd.DataFrame({"lo": pd.Series(dtype=object), "hi": pd.Series(dtype=object),
                             "out": pd.Series(dtype=float), "weight": pd.Series(dtype=float),
                             "count": pd.Series(dtype=np.int64)})
    b = as_battles(part)
    names = np.array(b.systems, dtype=object)
    lo, hi = np.minimum(b.a, b.b), np.maximum(b.a, b.b)
    frame = pd.DataFrame({"lo": names[lo], "hi": names[hi], "out": np.where(b.a == lo, b.outcome, 1.0 - b.outcome),
                          "weight": np.asarray(b.weight, dtype=np.float64), "count": np.ones(len(lo), np.int64)})
    return frame.groupby(["lo", "hi", "out", "weight"], sort=False)["count"].sum().reset_index()


def merge_cells(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """Partial cell tables added into one (a table of at most the distinct cells)."""
    both = pd.concat(parts, ignore_index=True)
    return both.groupby(["lo", "hi", "out", "weight"], sort=False)["count"].sum().reset_index()


def battle_cells(cells: pd.DataFrame) -> BattleCells:
    """Sum partial cell tables (from :func:`partition_battle_cells`) into :class:`BattleCells`."""
    if len(cells) == 0:
        raise InputError("battles table: no rows")
    merged = merge_cells([cells])
    systems, lo, hi = index_cell_systems(merged, "lo", "hi")
    out = merged["out"].to_numpy(dtype=np.float64)
    weight = merged["weight"].to_numpy(dtype=np.float64)
    order = np.lexsort((weight, out, hi, lo))  # the in-memory bootstrap's cell order
    return BattleCells(systems, lo[order], hi[order], out[order], weight[order],
                       merged["count"].to_numpy(dtype=np.int64)[order])


def _bt_fit(cells: BattleCells, *, prior: float = 0.0, scale: float = 400.0, base: float = 10.0,
            init: float = 1000.0, **_: Any) -> MethodResult:
    W = cells.pair_counts().wins()
    theta = bt_fit(W, prior=prior)
    return MethodResult(to_elo_scale(theta, scale=scale, base=base, init=init),
                        {"theta": theta, "loglik": bt_loglik(W, theta), "n_battles": cells.n_battles})


def _bt_intervals(cells: BattleCells, *, prior: float = 0.0, scale: float = 400.0, base: float = 10.0,
                  init: float = 1000.0, **_: Any) -> tuple[np.ndarray, np.ndarray]:
    return bt_from_counts(cells.pair_counts(), prior=prior, scale=scale, base=base, init=init)


def _bt_bootstrap(cells: BattleCells, n_boot: int, rng: np.random.Generator, *, prior: float = 0.0,
                  scale: float = 400.0, base: float = 10.0, init: float = 1000.0, **_: Any) -> np.ndarray:
    return bt_bootstrap_cells(len(cells.systems), cells.lo, cells.hi, cells.out, cells.weight, cells.count,
                              n_boot, rng, prior=prior, scale=scale, base=base, init=init)


register_counts(CountsMethod(
    "bradley_terry", _bt_fit, _bt_intervals, _bt_bootstrap,
    refuse=(("reweight", True, ("inverse-propensity weights need the battles one by one; "
                                "pass reweight=False or a pandas table")),)))


def aggregate_dask(ddf: Any, method: str, *, n_boot: int, seed: int, ci: float, intervals: str | None,
                   resample: str | None, params: dict[str, Any]) -> Ranking:
    """``aggregate`` of a Dask battles table (called by :func:`scorebench.aggregate`, which checks
    ``method``, ``params``, ``n_boot``, ``seed`` and ``ci`` first)."""
    record = _COUNTS.get(method)
    if record is None:
        raise InputError(f"aggregate on a Dask table: method {method!r} does not run from battle counts "
                         f"(methods that do: {', '.join(dask_methods())}); compute() the table for the others")
    for name, value, why in record.refuse:
        if params.get(name) == value:
            raise InputError(f"aggregate on a Dask table: {method} {name}={value!r}: {why}")
    if resample not in (None, "battles"):
        raise InputError(f"aggregate on a Dask table: resample={resample!r} does not apply (battles are resampled)")
    how = "sandwich" if intervals is None and record.intervals is not None else (intervals or "bootstrap")
    check_choice(how, "intervals", INTERVALS)
    cells = battle_cells(tree_reduce(ddf, partition_battle_cells, merge_cells, fan_in=_MERGE))
    result = record.fit(cells, **params)
    details = dict(result.details)
    boot: dict[str, Any] = {}
    used = None
    if n_boot > 0 and how == "sandwich":
        if record.intervals is None:
            raise InputError(f"intervals='sandwich': method {method!r} has no covariance; use intervals='bootstrap'")
        boot = sandwich_summary(record.intervals(cells, **params), n_boot,
                                rng_for(seed, "aggregate", method, "sandwich"), ci)
        used = "sandwich"
    elif n_boot > 0:
        if record.bootstrap is None:
            raise InputError(f"intervals='bootstrap': method {method!r} has no bootstrap from battle counts")
        replicates = record.bootstrap(cells, int(n_boot), rng_for(seed, "aggregate", method), **params)
        boot = summarize_bootstrap(replicates, ci)
        used = "battles"
        details["n_boot_failed"] = 0
    return Ranking(cells.systems, result.scores, method, params=params, details=details,
                   n_boot=n_boot if n_boot > 0 else None, seed=seed if n_boot > 0 else None,
                   resample=used, warning=None, unscored=(), **boot)
