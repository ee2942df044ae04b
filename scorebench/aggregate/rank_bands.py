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
* **band by rank-interval overlap** (:func:`tie_bands`): walking down the ranking, a system
  joins the current band when its rank interval overlaps that of the band's top.

These used to live in the leaderboard renderer; they are statistics and belong here, so the
board only lays out their results.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError

__all__ = ["tie_bands", "overlap_rank_intervals", "paired_rank_intervals", "OVERLAP_BAND_RULE"]

OVERLAP_BAND_RULE = ("band: a system joins the current band when its rank interval overlaps that of the band's "
                     "top; otherwise it opens the next band")


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

    from .means import MixedScaleWarning
    from .ties import pairwise_p_values

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
