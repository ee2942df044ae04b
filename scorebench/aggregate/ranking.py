"""The result of an aggregation: a :class:`Ranking` of systems with explicit ties."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["Ranking", "competition_ranks", "tie_groups"]

_REL_TOL = 1e-9
_QUADRATIC_UP_TO = 64  # systems per ranking below which the all-pairs comparison is the faster form


def competition_ranks(scores: np.ndarray, *, rtol: float = _REL_TOL) -> np.ndarray:
    r"""Competition ("min") ranks of ``scores`` (higher is better): ties share the best rank.

    .. math:: r_i = 1 + \#\{j : s_j > s_i + \epsilon_{ij}\}, \quad
              \epsilon_{ij} = \mathrm{rtol}\,\max(1, |s_i|, |s_j|)

    The relative tolerance keeps floating-point noise from summation order from breaking a
    tie silently. ``scores`` may be 2-d (one ranking per row).

    Examples
    --------
    >>> competition_ranks(np.array([3.0, 5.0, 3.0, 1.0])).tolist()
    [2, 1, 2, 4]
    """
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim in (1, 2) and s.shape[-1] > _QUADRATIC_UP_TO and np.isfinite(s).all():
        return _sorted_competition_ranks(s, rtol)
    a = s[..., None, :]  # s_j
    b = s[..., :, None]  # s_i
    eps = rtol * np.maximum(1.0, np.maximum(np.abs(a), np.abs(b)))
    return 1 + ((a - b) > eps).sum(axis=-1)


def _sorted_competition_ranks(s: np.ndarray, rtol: float) -> np.ndarray:
    """:func:`competition_ranks` in ``O(n log n)`` per row, for finite scores.

    For a fixed ``s_i``, ``g(s_j) = s_j - s_i - rtol max(1, |s_i|, |s_j|)`` increases with
    ``s_j`` (its slope is at least ``1 - rtol > 0``), so the ``j`` with ``g > 0`` are an upper
    tail of the sorted scores. Its start is found by a binary search for
    ``s_i + rtol max(1, |s_i|)`` and then moved, one sorted position at a time, until the
    quadratic form's own comparison holds there and not just before, so the ranks are identical.
    """
    rows = np.atleast_2d(s)
    n = rows.shape[-1]
    out = np.empty(rows.shape, dtype=np.int64)

    def above(sj: np.ndarray, si: np.ndarray) -> np.ndarray:
        return (sj - si) > rtol * np.maximum(1.0, np.maximum(np.abs(sj), np.abs(si)))

    for r, row in enumerate(rows):
        asc = np.sort(row)
        k = np.searchsorted(asc, row + rtol * np.maximum(1.0, np.abs(row)), side="right")
        while True:  # step down while the previous sorted score is already above
            move = (k > 0) & above(asc[np.maximum(k - 1, 0)], row)
            if not move.any():
                break
            k = k - move
        while True:  # step up while the score at k is not above
            move = (k < n) & ~above(asc[np.minimum(k, n - 1)], row)
            if not move.any():
                break
            k = k + move
        out[r] = 1 + (n - k)
    return out.reshape(s.shape)


def tie_groups(systems: tuple[str, ...], ranks: np.ndarray) -> tuple[tuple[str, ...], ...]:
    """Systems grouped by rank, best group first; names inside a group in input order."""
    out = []
    for r in np.unique(ranks):
        out.append(tuple(systems[i] for i in np.flatnonzero(ranks == r)))
    return tuple(out)


@dataclass(frozen=True)
class Ranking:
    """Systems ordered by an aggregation method.

    Attributes
    ----------
    systems : tuple of str
        System names in input order.
    scores : ndarray
        The method's score per system; higher is better for every method.
    ranks : ndarray of int
        Competition ("min") ranks from ``scores``: tied systems share the best rank.
    method : str
        Registered method name.
    params : mapping
        Parameters the method ran with.
    details : mapping
        Method-specific extras (Condorcet winner, Kemeny objective and co-optimal rankings, ...).
    n_boot, seed : int or None
        Bootstrap rounds and seed when intervals were computed.
    resample : str or None
        What the bootstrap resampled (``"tasks"`` or ``"battles"``).
    ci_low, ci_high, score_median : ndarray or None
        Percentile interval (2.5 / 97.5 by default) and median of the bootstrap scores.
    rank_low, rank_high : ndarray or None
        Percentile interval of the bootstrap ranks.
    rank_ub : ndarray or None
        Chatbot-Arena style rank: 1 + number of systems whose ``ci_low`` exceeds this
        system's ``ci_high`` (statistically separable from above).
    warning : str or None
        What a reader must know before trusting the ranking or its intervals (too few tasks
        for a column bootstrap, columns on different scales averaged without normalising);
        boards print it above the table.
    unscored : tuple of str
        Systems the method leaves blank (``missing="blank"``: not scored on every column, as
        MTEB's *Mean (Task)* is blank for a model that lacks a task). They are not ranked;
        :meth:`to_frame` lists them last with empty score and rank and a ``note``.
    """

    systems: tuple[str, ...]
    scores: np.ndarray
    method: str
    params: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    details: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}), repr=False)
    n_boot: int | None = None
    seed: int | None = None
    resample: str | None = None
    ci_low: np.ndarray | None = field(default=None, repr=False)
    ci_high: np.ndarray | None = field(default=None, repr=False)
    score_median: np.ndarray | None = field(default=None, repr=False)
    rank_low: np.ndarray | None = field(default=None, repr=False)
    rank_high: np.ndarray | None = field(default=None, repr=False)
    warning: str | None = None
    unscored: tuple[str, ...] = ()
    ranks: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        scores = np.asarray(self.scores, dtype=np.float64)
        if scores.shape != (len(self.systems),):
            raise ValueError(f"scores must have one value per system ({len(self.systems)}), got {scores.shape}")
        if np.isnan(scores).any():
            raise ValueError("a ranking cannot hold NaN scores")
        object.__setattr__(self, "scores", scores)
        object.__setattr__(self, "ranks", competition_ranks(scores))
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))
        object.__setattr__(self, "details", MappingProxyType(dict(self.details)))
        object.__setattr__(self, "unscored", tuple(self.unscored))
        clash = set(self.unscored) & set(self.systems)
        if clash:
            raise ValueError(f"systems both ranked and unscored: {sorted(clash)[:5]}")

    @property
    def tie_groups(self) -> tuple[tuple[str, ...], ...]:
        """Systems grouped by shared rank, best first."""
        return tie_groups(self.systems, self.ranks)

    @property
    def winners(self) -> tuple[str, ...]:
        """The systems ranked first (more than one when tied)."""
        return self.tie_groups[0]

    @property
    def order(self) -> tuple[str, ...]:
        """Systems from best to worst (tied systems in input order)."""
        return tuple(self.systems[i] for i in np.argsort(self.ranks, kind="stable"))

    @property
    def rank_ub(self) -> np.ndarray | None:
        if self.ci_low is None or self.ci_high is None:
            return None
        return 1 + (self.ci_low[None, :] > self.ci_high[:, None]).sum(axis=1)

    def score_of(self, system: str) -> float:
        return float(self.scores[self.systems.index(system)])

    def rank_of(self, system: str) -> int:
        return int(self.ranks[self.systems.index(system)])

    def to_frame(self) -> pd.DataFrame:
        """One row per system, best first: ``system``, ``score``, ``rank`` (+ intervals).

        With a bootstrap, the columns ``ci_low``, ``ci_high``, ``score_median``,
        ``rank_low``, ``rank_high`` and ``rank_ub`` follow. ``attrs`` records the method,
        its parameters, the seed and the bootstrap size.
        """
        data: dict[str, Any] = {"system": list(self.systems), "score": self.scores, "rank": self.ranks}
        if self.ci_low is not None:
            data.update(ci_low=self.ci_low, ci_high=self.ci_high, score_median=self.score_median,
                        rank_low=self.rank_low, rank_high=self.rank_high, rank_ub=self.rank_ub)
        frame = pd.DataFrame(data)
        order = np.lexsort((np.arange(len(self.systems)), self.ranks))
        frame = frame.iloc[order].reset_index(drop=True)
        if self.unscored:
            frame["rank"] = frame["rank"].astype("Int64")
            for col in ("rank_low", "rank_high", "rank_ub"):
                if col in frame:
                    frame[col] = frame[col].astype("Int64")
            frame["note"] = ""
            blank = pd.DataFrame({"system": list(self.unscored),
                                  "note": "blank: not scored on every column (missing='blank')"})
            frame = pd.concat([frame, blank], ignore_index=True)
            frame.attrs["unscored"] = list(self.unscored)
        frame.attrs.update(method=self.method, params=_plain(self.params), n_boot=self.n_boot,
                           seed=self.seed, resample=self.resample)
        if self.warning:
            frame.attrs["warning"] = self.warning
        return frame

    def __str__(self) -> str:
        head = f"Ranking(method={self.method!r}"
        if self.params:
            head += ", " + ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        head += ")\n" + (f"warning: {self.warning}\n" if self.warning else "")
        return head + self.to_frame().to_string(index=False)


def _plain(params: Mapping[str, Any]) -> dict[str, Any]:
    return {k: (v if isinstance(v, (int, float, str, bool, type(None))) else repr(v)) for k, v in params.items()}
