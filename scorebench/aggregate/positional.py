"""Positional (scoring) rules: plurality, Borda, Dowdall and the threshold rule / approval-k.

Each column is a weighted ballot that ranks the systems by score; a positional rule gives
points by position and sums them with the column weights. Tied systems share the points of
the positions they span according to the rule's ``ties`` convention.

Missing scores: plurality, Dowdall and threshold refuse them with a clear error. Borda
accepts ``missing="complete"``: the expected Borda score when every ballot is completed
uniformly at random among the complete rankings consistent with it (the partial-ranking
completion of Himmi et al., 2023), and ``missing="zero"``: the MTEB leaderboard's
convention, where a system earns ``n - rank`` points on a ballot it is on and 0 on one it
is not (a missing score loses to everyone).
"""

from __future__ import annotations

import numpy as np

from scorebench.core.validation import check_choice
from scorebench.aggregate.input import ScoreMatrix
from scorebench.aggregate.profile import column_ranks, require_complete
from scorebench.aggregate.registry import MethodResult, register_column_parts, register_method

__all__ = ["plurality", "borda", "dowdall", "threshold", "borda_points"]

_REFUSE = "refuses missing scores (positional rules need complete ballots)"


def borda_points(m: ScoreMatrix, ties: str = "average", missing: str = "refuse") -> np.ndarray:
    r"""Borda points of every system in every column (systems x columns).

    With ``n`` systems on a ballot, a system gets the number of systems it beats, plus for
    each system tied with it: half a point (``ties="average"``), nothing (``"min"``, the
    Vote'n'Rank convention ``n - max_rank``) or a full point (``"max"``).

    With ``missing="complete"``, a ballot that ranks ``k`` of the ``n`` systems is completed
    uniformly at random: an observed system with ``p`` points among the observed ones beats
    each of the ``n - k`` unobserved ones with probability :math:`(p + 1)/(k + 1)`, and an
    unobserved system expects :math:`(n - 1)/2` points.

    With ``missing="zero"`` (MTEB's leaderboard), an observed system gets :math:`n - r`
    points, :math:`r` its rank among the ``k`` observed systems (ties per ``ties``), and an
    unobserved one 0: as if it lost to every system, observed ones included.
    """
    check_choice(ties, "ties", ("average", "min", "max"))
    check_choice(missing, "missing", ("refuse", "complete", "zero"))
    if missing == "refuse":
        require_complete(m, "borda", "pass missing='complete' for the expected Borda score over completions")
    present = ~np.isnan(m.values)
    k = present.sum(axis=0).astype(np.float64)
    tie_method = {"average": "average", "min": "max", "max": "min"}[ties]
    ranks = column_ranks(m, tie_method)
    if missing == "zero":
        return np.where(present, m.n_systems - ranks, 0.0)
    points = k[None, :] - ranks
    if missing == "complete":
        n = m.n_systems
        extra = (n - k)[None, :] * (points + 1.0) / (k[None, :] + 1.0)
        points = np.where(present, points + extra, (n - 1) / 2.0)
    return points


@register_method("borda", family="positional",
                 missing="missing='refuse' (default) raises; missing='complete' gives the expected Borda score over "
                         "the uniform completions of each partial ballot (Himmi et al., 2023); missing='zero' gives "
                         "n - rank points on a ballot a system is on and 0 otherwise (the MTEB leaderboard)",
                 citation="de Borda (1781); Colombo et al. (2022), NeurIPS; Rofin et al. (2023), EACL")
def borda(m: ScoreMatrix, *, ties: str = "average", missing: str = "refuse") -> MethodResult:
    r"""Borda count: weighted sum over columns of the number of systems beaten.

    .. math:: s_a = \sum_j w_j \big(\#\{b: x_{aj} > x_{bj}\} + \tau\,\#\{b \ne a: x_{aj} = x_{bj}\}\big)

    with :math:`\tau = 1/2` for ``ties="average"`` (default), 0 for ``"min"`` (Vote'n'Rank),
    1 for ``"max"``.

    Examples
    --------
    >>> from scorebench.aggregate import as_matrix
    >>> m = as_matrix({"t1": [3, 2, 1], "t2": [1, 3, 2]}, systems=["a", "b", "c"])
    >>> borda(m).scores.tolist()
    [2.0, 3.0, 1.0]
    >>> gap = as_matrix({"t1": [3, 2, None], "t2": [1, 3, 2]}, systems=["a", "b", "c"])
    >>> borda(gap, missing="zero").scores.tolist()     # c misses t1: 0 points there
    [2.0, 3.0, 1.0]
    """
    return MethodResult(borda_points(m, ties, missing) @ m.weights)


@register_column_parts("borda")
def borda_parts(m: ScoreMatrix, *, ties: str = "average", missing: str = "refuse") -> tuple[np.ndarray, None]:
    """Borda's per-column points (the score is their weighted sum; no denominator)."""
    return borda_points(m, ties, missing), None


@register_method("plurality", family="positional", missing=_REFUSE,
                 citation="Rofin et al. (2023), Vote'n'Rank, EACL")
def plurality(m: ScoreMatrix, *, ties: str = "split") -> MethodResult:
    r"""Plurality: the weight of the columns in which a system is ranked first.

    .. math:: s_a = \sum_j w_j\, \frac{[a \text{ is best on } j]}{\#\text{best on } j}

    ``ties="split"`` (default) shares a column between the systems tied first;
    ``"none"`` gives tied-first systems nothing (Vote'n'Rank); ``"all"`` gives each a full vote.

    Examples
    --------
    ``a`` and ``b`` tie first on ``t1``; ``b`` alone is first on ``t2``:

    >>> from scorebench.aggregate import as_matrix
    >>> m = as_matrix({"t1": [3, 3, 1], "t2": [1, 3, 2]}, systems=["a", "b", "c"])
    >>> plurality(m).scores.tolist(), plurality(m, ties="none").scores.tolist()
    ([0.5, 1.5, 0.0], [0.0, 1.0, 0.0])
    """
    check_choice(ties, "ties", ("split", "none", "all"))
    require_complete(m, "plurality")
    x = m.oriented
    top = x == x.max(axis=0, keepdims=True)
    count = top.sum(axis=0)
    share = {"split": 1.0 / count, "none": (count == 1).astype(float), "all": np.ones_like(count, dtype=float)}[ties]
    return MethodResult((top * share[None, :]) @ m.weights)


@register_method("dowdall", family="positional", missing=_REFUSE,
                 citation="Fraenkel & Grofman (2014), Australian J. Political Science 49(2); Rofin et al. (2023)")
def dowdall(m: ScoreMatrix, *, ties: str = "average") -> MethodResult:
    r"""Dowdall (Nauru) rule: a system in position :math:`p` of a column gets :math:`1/p`.

    .. math:: s_a = \sum_j w_j / p_{aj}

    ``ties="average"`` (default) gives tied systems the mean of :math:`1/p` over the
    positions they span; ``"min"`` gives each :math:`1/p` of the best of them (Vote'n'Rank).

    Examples
    --------
    >>> from scorebench.aggregate import as_matrix
    >>> m = as_matrix({"t1": [3, 2, 1]}, systems=["a", "b", "c"])
    >>> [round(float(v), 4) for v in dowdall(m).scores]
    [1.0, 0.5, 0.3333]
    """
    check_choice(ties, "ties", ("average", "min"))
    require_complete(m, "dowdall")
    lo = column_ranks(m, "min")
    if ties == "min":
        points = 1.0 / lo
    else:
        hi = column_ranks(m, "max")
        n = m.n_systems
        harmonic = np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, n + 1))])
        points = (harmonic[hi.astype(int)] - harmonic[lo.astype(int) - 1]) / (hi - lo + 1)
    return MethodResult(points @ m.weights)


@register_method("threshold", family="positional", missing=_REFUSE,
                 citation="Aleskerov, Chistyakov & Kalyagin (2010), Economics Letters 107(1); Rofin et al. (2023)")
def threshold(m: ScoreMatrix, *, k: int | None = None) -> MethodResult:
    r"""Threshold rule (fewest last places, lexicographically from the bottom), or approval-k.

    Without ``k``: system ``a`` has the vector :math:`(L_n(a), L_{n-1}(a), \dots, L_2(a))` of
    the weight of columns that put it in position :math:`p` (tied systems take the worst
    position they span, as Vote'n'Rank does); smaller vectors (lexicographically) are better.
    The score is minus the position of the vector in lexicographic order (equal vectors tie).

    With ``k``: approval voting where each column approves its top ``k`` positions
    (a system tied into position ``k`` is approved), :math:`s_a = \sum_j w_j [p_{aj} \le k]`.

    Examples
    --------
    >>> from scorebench.aggregate import as_matrix
    >>> m = as_matrix({"t1": [3, 2, 1], "t2": [1, 3, 2], "t3": [3, 1, 2]}, systems=["a", "b", "c"])
    >>> threshold(m).scores.tolist()    # each is last once; a is never second-to-last
    [0.0, -1.0, -2.0]
    >>> threshold(m, k=1).scores.tolist()
    [2.0, 1.0, 0.0]
    """
    require_complete(m, "threshold")
    n = m.n_systems
    if k is not None:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= n:
            from scorebench.core.errors import InputError

            raise InputError(f"threshold: k must be an integer in [1, {n}], got {k!r}")
        return MethodResult((column_ranks(m, "min") <= k) @ m.weights)
    worst = column_ranks(m, "max").astype(int)
    counts = np.stack([(worst == p) @ m.weights for p in range(n, 1, -1)], axis=1)  # L_n ... L_2
    keys = [tuple(row) for row in np.round(counts, 12)]
    distinct = sorted(set(keys))
    position = {key: i for i, key in enumerate(distinct)}
    return MethodResult(0.0 - np.array([float(position[key]) for key in keys]))
