r"""Rank intervals and tie bands of systems scored on one task (the statistics behind a board's ranks).

Three rules, chosen by what the scores allow:

* **paired bootstrap** (:func:`paired_rank_intervals`): for a per-row metric the per-unit
  contributions form a units x systems matrix; its rows (units) are resampled jointly for
  all systems and the systems re-ranked each round (:func:`scorebench.aggregate` with
  ``method="mean"``); bands come from Holm-corrected paired tests
  (:mod:`scorebench.aggregate.ties`);
* **interval overlap** (:func:`overlap_rank_intervals`): for a set-level metric (ECE, AUROC)
  only each system's confidence interval is known; a system cannot rank above
  :math:`1 + \#\{b: lo_b > hi_a\}` (systems clearly better) nor below
  :math:`k - \#\{b: hi_b < lo_a\}`;
* **band from the rank intervals shown** (:func:`interval_bands`, what boards print): walking
  down the ranking, a system joins the current band when its rank interval reaches the rank of
  the band's top (``rank_low <= rank(top)``: it may be as good as the top), otherwise it opens
  the next band. Bands and rank intervals then tell one story: band 1 holds exactly the
  systems whose interval reaches rank 1, and a system in a later band has an interval that
  stops short of every better band's top.
* **band by rank-interval overlap** (:func:`tie_bands`, kept for callers): a system joins the
  current band when its rank interval overlaps that of the band's top. It can put a system
  whose interval never reaches rank 1 into band 1 (a top with interval 1–2 and a runner-up
  with 2–2), so boards no longer use it.

These used to live in the leaderboard renderer; they are statistics and belong here, so the
board only lays out their results.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError

__all__ = ["tie_bands", "interval_bands", "check_interval_bands", "overlap_rank_intervals", "paired_rank_intervals",
           "OVERLAP_BAND_RULE", "INTERVAL_BAND_RULE"]

OVERLAP_BAND_RULE = ("band: a system joins the current band when its rank interval overlaps that of the band's "
                     "top; otherwise it opens the next band")
INTERVAL_BAND_RULE = ("band (from the rank intervals shown, one procedure): walking down the ranking, a system joins "
                      "the current band when its rank interval reaches the rank of the band's top (lowest rank <= "
                      "the top's rank), otherwise it opens the next band; band 1 is exactly the systems whose "
                      "interval reaches rank 1")


def interval_bands(rank: np.ndarray, rank_low: np.ndarray) -> np.ndarray:
    """Band number (1 = best) of each system from its rank and rank interval, given in ranking order.

    Walking down the ranking, a system joins the current band when its interval reaches the
    rank of the band's top (``rank_low <= rank[top]``), else it opens the next band and becomes
    its top (see the module docstring).

    Examples
    --------
    >>> interval_bands(np.array([1, 2, 3, 4, 5]), np.array([1, 1, 2, 3, 5])).tolist()
    [1, 1, 2, 2, 3]
    >>> interval_bands(np.array([1, 2]), np.array([1, 2])).tolist()  # 2 (2-2) never reaches rank 1
    [1, 2]
    """
    rank = np.asarray(rank, dtype=np.float64)
    rank_low = np.asarray(rank_low, dtype=np.float64)
    if rank.shape != rank_low.shape or rank.ndim != 1:
        raise InputError(f"interval_bands: rank and rank_low must be 1-d of one length, got {rank.shape} "
                         f"and {rank_low.shape}")
    if (np.diff(rank) < 0).any():
        raise InputError("interval_bands: systems must be given in ranking order (ranks non-decreasing)")
    bands = np.empty(rank.size, dtype=np.int64)
    band, top_rank = 0, -np.inf
    for i, (r, lo) in enumerate(zip(rank, rank_low)):
        if lo > top_rank:
            band, top_rank = band + 1, r
        bands[i] = band
    return bands


def check_interval_bands(rank: np.ndarray, rank_low: np.ndarray, rank_high: np.ndarray,
                         bands: np.ndarray) -> list[str]:
    """Ways in which ``bands`` contradict the rank intervals (empty when consistent), in ranking order.

    Consistent means: bands start at 1 and step by at most 1; each system's interval contains
    its rank; a band member's interval reaches its top's rank and a band's top's interval stops
    short of the previous top's rank (:data:`INTERVAL_BAND_RULE`). Used by the board tests.

    Examples
    --------
    >>> check_interval_bands(np.array([1, 2]), np.array([1, 2]), np.array([2, 2]), np.array([1, 1]))
    ['position 1: in band 1 but its interval 2-2 does not reach rank 1 of the band top']
    """
    rank, low, high, bands = (np.asarray(a, dtype=np.float64) for a in (rank, rank_low, rank_high, bands))
    problems = []
    if bands.size and bands[0] != 1:
        problems.append(f"position 0: first band is {bands[0]:g}, expected 1")
    top = 0
    for i in range(bands.size):
        if not low[i] <= rank[i] <= high[i]:
            problems.append(f"position {i}: rank {rank[i]:g} outside its interval {low[i]:g}-{high[i]:g}")
        if i == 0:
            continue
        step = bands[i] - bands[i - 1]
        if step == 0 and low[i] > rank[top]:
            problems.append(f"position {i}: in band {bands[i]:g} but its interval {low[i]:g}-{high[i]:g} does not "
                            f"reach rank {rank[top]:g} of the band top")
        elif step == 1:
            if low[i] <= rank[top]:
                problems.append(f"position {i}: opens band {bands[i]:g} although its interval {low[i]:g}-"
                                f"{high[i]:g} reaches rank {rank[top]:g} of the previous band's top")
            top = i
        elif step not in (0, 1):
            problems.append(f"position {i}: band steps from {bands[i - 1]:g} to {bands[i]:g}")
    return problems


def tie_bands(rank_low: np.ndarray, rank_high: np.ndarray) -> np.ndarray:
    """Band number (1 = best) of each system, given intervals in ranking order.

    Examples
    --------
    >>> tie_bands(np.array([1, 1, 2, 4]), np.array([2, 3, 3, 4])).tolist()
    [1, 1, 1, 2]
    """
    bands = np.empty(len(rank_low), dtype=np.int64)
    band, leader_high = 0, -np.inf
    for i, (lo, hi) in enumerate(zip(rank_low, rank_high)):
        if lo > leader_high:
            band += 1
            leader_high = hi
        bands[i] = band
    return bands


def overlap_rank_intervals(value: np.ndarray, low: np.ndarray, high: np.ndarray,
                           higher_is_better: bool) -> tuple[np.ndarray, np.ndarray]:
    """Conservative rank range from confidence intervals (for set-level metrics).

    Examples
    --------
    >>> lo, hi = overlap_rank_intervals(np.array([0.9, 0.8, 0.2]), np.array([0.85, 0.7, 0.1]),
    ...                                 np.array([0.95, 0.88, 0.3]), True)
    >>> lo.tolist(), hi.tolist()
    ([1, 1, 3], [2, 2, 3])
    """
    if not higher_is_better:
        value, low, high = -value, -high, -low
    better = (low[None, :] > high[:, None]).sum(axis=1)
    worse = (high[None, :] < low[:, None]).sum(axis=1)
    return 1 + better, len(value) - worse


def paired_rank_intervals(units: pd.DataFrame, unit: str, *, name: str, higher_is_better: Any, n_boot: int,
                          seed: int, ci: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Rank, paired-bootstrap rank interval and Holm-adjusted pairwise p-values from per-unit values.

    ``units`` is long (``system``, ``unit``, ``value``: one row per system and unit, as
    ``evaluate(..., per_unit=True)`` gives); every system must be scored on every unit.
    Returns a frame indexed by system (``rank`` and, with ``n_boot``, ``rank_low``,
    ``rank_high``) and the systems x systems matrix of adjusted p-values.

    Examples
    --------
    >>> u = pd.DataFrame({"system": ["a"] * 3 + ["b"] * 3, "id": [1, 2, 3] * 2,
    ...                   "value": [1.0, 1.0, 0.9, 0.0, 0.1, 0.2]})
    >>> ranks, p = paired_rank_intervals(u, "id", name="m", higher_is_better=True, n_boot=0, seed=0, ci=0.95)
    >>> ranks["rank"].tolist()
    [1, 2]
    """
    import scorebench

    from scorebench.aggregate.means import MixedScaleWarning
    from scorebench.aggregate.ties import pairwise_p_values

    wide = units.pivot(index="system", columns=unit, values="value")
    if wide.isna().any().any():
        raise InputError(f"metric {name!r}: systems are not scored on the same units; paired rank intervals "
                         "need every unit for every system")
    wide.columns = [str(c) for c in wide.columns]
    with warnings.catch_warnings():  # the columns are units, not tasks: their ranges may differ
        warnings.simplefilter("ignore", MixedScaleWarning)
        ranking = scorebench.aggregate(wide, "mean", higher_is_better=bool(higher_is_better)
                                       if higher_is_better is not None else True, n_boot=n_boot, seed=seed, ci=ci)
    frame = ranking.to_frame().set_index("system")
    if n_boot and ranking.rank_low is None:  # too few units to resample: every rank is possible
        frame["rank_low"], frame["rank_high"] = 1, len(frame)
    p = pd.DataFrame(pairwise_p_values(wide.to_numpy().T), index=wide.index, columns=wide.index)
    return frame[["rank"] + (["rank_low", "rank_high"] if n_boot else [])], p
