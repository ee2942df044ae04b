"""The shared engine of the rank-based rules: per-column ranks and weighted pairwise counts.

Each column (task) of a :class:`~scorebench.aggregate.input.ScoreMatrix` is a voter whose
weight is the column weight and whose ballot ranks the systems by their (oriented) score,
ties allowed; a missing score leaves the system off that ballot.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.aggregate.input import ScoreMatrix

__all__ = ["pairwise_counts", "majority_margins", "column_ranks", "condorcet_winner", "require_complete"]



def pairwise_counts(m: ScoreMatrix, *, ties: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    r"""Weighted pairwise wins ``P`` and ties ``T`` between systems.

    .. math::
        P_{ab} = \sum_j w_j\,[x_{aj} > x_{bj}], \qquad T_{ab} = \sum_j w_j\,[x_{aj} = x_{bj}]

    over the columns ``j`` where both ``a`` and ``b`` are scored (missing pairs are skipped);
    the diagonal is zero. ``ties=False`` skips computing ``T`` (returned as None).

    Examples
    --------
    >>> import numpy as np
    >>> from scorebench.aggregate.input import as_matrix
    >>> import pandas as pd
    >>> m = as_matrix(pd.DataFrame({"t1": [3, 2, 1], "t2": [1, 2, 2]}, index=["a", "b", "c"]))
    >>> P, T = pairwise_counts(m)
    >>> P.tolist()
    [[0.0, 1.0, 1.0], [1.0, 0.0, 1.0], [1.0, 0.0, 0.0]]
    >>> float(T[1, 2])
    1.0
    """
    from scipy.stats import rankdata  # lazy: keeps `import scorebench` light

    x = m.oriented
    w = m.weights
    n, k = x.shape
    present = ~np.isnan(x)
    P = None
    complete = present.all(axis=0)
    rank_type = np.int16 if n < 2**15 else np.int32
    # Integer ranks (ties share one) compare faster than floats and give the same order.
    ranks = np.zeros((k, n), dtype=rank_type)
    if complete.any():
        ranks[complete] = rankdata(x[:, complete], method="min", axis=0).T.astype(rank_type)
    xt = np.ascontiguousarray(x.T)
    for weight in np.unique(w[w > 0]):
        cols = np.flatnonzero(w == weight)
        # The narrowest accumulator that cannot overflow; bool adds as uint8 without a cast.
        small = len(cols) < 2**8
        acc = np.zeros((n, n), dtype=np.uint8 if small else (np.uint16 if len(cols) < 2**16 else np.uint32))
        buf = np.empty((n, n), dtype=bool)
        for j in cols:
            if complete[j]:
                r = ranks[j]
                np.greater(r[:, None], r[None, :], out=buf)
            else:
                np.greater(xt[j][:, None], xt[j][None, :], out=buf)  # NaN compares False: pair skipped
            acc += buf.view(np.uint8) if small else buf
        part = acc.astype(np.float64)
        if weight != 1.0:
            part *= weight
        P = part if P is None else P + part
    if P is None:
        P = np.zeros((n, n))
    np.fill_diagonal(P, 0.0)
    if not ties:
        return P, None
    pw = present * w[None, :]
    both = pw @ present.T.astype(np.float64)  # weight of the columns scoring both a and b
    T = np.maximum(both - P - P.T, 0.0)
    np.fill_diagonal(T, 0.0)
    return P, T


def majority_margins(P: np.ndarray) -> np.ndarray:
    """Margins ``M = P - P^T`` (skew-symmetric)."""
    return P - P.T


def condorcet_winner(P: np.ndarray) -> int | None:
    """Index of the system that beats every other one by a strict weighted majority, if any."""
    M = P - P.T
    n = len(M)
    beats = (M > 0).sum(axis=1)
    hits = np.flatnonzero(beats == n - 1)
    return int(hits[0]) if len(hits) else None


def column_ranks(m: ScoreMatrix, ties: str = "min") -> np.ndarray:
    """Rank of each system within each column (1 = best); NaN where the score is missing.

    ``ties`` is pandas' tie method: ``"min"``, ``"max"`` or ``"average"``.
    """
    x = m.oriented
    if ties not in ("min", "max", "average"):
        return pd.DataFrame(x).rank(axis=0, method=ties, ascending=False).to_numpy(dtype=np.float64)
    # per column, by binary search in its sorted scored values: #{>= x} is the "max" rank and
    # 1 + #{> x} the "min" rank (exact comparisons, as pandas ranks); a column costs O(k log k)
    out = np.full(x.shape, np.nan)
    for j in range(x.shape[1]):
        col = x[:, j]
        rows = np.flatnonzero(~np.isnan(col))
        v = col[rows]
        asc = np.sort(v)
        k = asc.size
        at_least = k - np.searchsorted(asc, v, side="left")
        above = k - np.searchsorted(asc, v, side="right")
        ranks = {"max": at_least, "min": 1 + above, "average": (at_least + 1 + above) / 2.0}[ties]
        out[rows, j] = ranks
    return out


def require_complete(m: ScoreMatrix, method: str, hint: str = "") -> None:
    """Raise a clear error when a method that needs every score meets a missing one."""
    if m.has_missing:
        rows, cols = np.nonzero(np.isnan(m.values))
        shown = ", ".join(f"({m.systems[r]!r}, {m.columns[c]!r})" for r, c in zip(rows[:3], cols[:3]))
        more = f" and {len(rows) - 3} more" if len(rows) > 3 else ""
        raise InputError(f"method {method!r} needs a complete table, but scores are missing at {shown}{more}"
                         + (f"; {hint}" if hint else ""))
