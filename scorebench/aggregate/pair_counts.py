r"""Battles deduplicated to (pair, outcome) counts, inverse-propensity weights, sandwich covariance.

Arena-scale Bradley–Terry never needs the battles one by one: the likelihood, its gradient and
the sandwich ("robust") covariance depend on the battles only through, for every ordered pair
``(a, b)`` and outcome ``y`` (1 = ``a`` won, 0 = ``b`` won, 0.5 = tie), the number of battles
:math:`c`, the sum of their weights :math:`\sum w` and the sum of squared weights
:math:`\sum w^2`. :func:`pair_counts` reduces millions of battles to at most
:math:`3 n (n - 1)` such cells in one ``bincount`` pass; :func:`bt_sandwich` is the robust
covariance of the Bradley–Terry estimate, as arena-rank computes it:

.. math::
    \hat\Sigma = H^{-1} G H^{-1},\quad
    H = \sum_{\text{cells}} \Big(\sum w\Big) p(1 - p)\, L_{ab} + \epsilon I,\quad
    G = \sum_{\text{cells}} \Big(\sum w^2\Big) (y - p)^2\, L_{ab}

with :math:`p = \sigma(\theta_a - \theta_b)`, :math:`L_{ab} = (e_a - e_b)(e_a - e_b)^\top`, and
the ridge :math:`\epsilon` = ``hessian_reg`` times the number of battles when every weight is 1
(``hessian_reg`` alone otherwise). :math:`G` is the sum of per-battle squared scores, so the
interval stays valid when the model is wrong (ties counted as half wins are not a Bradley–Terry
outcome) and under any per-battle weights.

References: Huber (1967), Proc. 5th Berkeley Symp.; White (1982), Econometrica 50(1);
lmarena/arena-rank 0.1.1 (``BradleyTerry.compute_hessian_and_covariance``,
``PairDataset.from_pandas``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scorebench.core.lazy import lazy_attr
from scorebench.core.errors import InputError
from scorebench.aggregate.input import Battles

expit = lazy_attr("scipy.special", "expit")
ndtri = lazy_attr("scipy.special", "ndtri")

__all__ = ["PairCounts", "pair_counts", "ipw_weights", "bt_sandwich", "laplacian", "normal_bounds", "HESSIAN_REG"]

HESSIAN_REG = 1e-5  # arena-rank's default ridge on the Hessian's diagonal
_BINCOUNT_LIMIT = 50_000_000


@dataclass(frozen=True)
class PairCounts:
    """Battles reduced to one row per distinct (a, b, outcome): the sufficient statistics.

    Attributes
    ----------
    systems : tuple of str
    a, b : ndarray of int
        The ordered pair of each cell (orientation as in the battles: (a, b) and (b, a) are
        different cells, as in arena-rank).
    outcome : ndarray of float
        Outcome for ``a`` (1, 0 or 0.5).
    count : ndarray of float
        Number of battles in the cell.
    weight : ndarray of float
        Sum of the battles' weights (equals ``count`` when unweighted).
    weight_sq : ndarray of float
        Sum of the squared weights (the sandwich's meat).
    n_battles : int
    unweighted : bool
        Every battle weight is 1 (to ``np.allclose``), as arena-rank tests it.
    """

    systems: tuple[str, ...]
    a: np.ndarray
    b: np.ndarray
    outcome: np.ndarray
    count: np.ndarray
    weight: np.ndarray
    weight_sq: np.ndarray
    n_battles: int
    unweighted: bool

    @property
    def n_systems(self) -> int:
        return len(self.systems)

    def wins(self, weight: np.ndarray | None = None) -> np.ndarray:
        """Wins matrix ``W[i, j]`` (weighted, ties half each way) from the cells' weights (or ``weight``)."""
        n = self.n_systems
        w = self.weight if weight is None else weight
        flat = np.bincount(self.a * n + self.b, w * self.outcome, n * n)
        flat += np.bincount(self.b * n + self.a, w * (1.0 - self.outcome), n * n)
        return flat.reshape(n, n)


def _outcome_codes(outcome: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Small integer codes of the outcome values and the values (no sort for 0 / 0.5 / 1)."""
    twice = outcome * 2.0
    code = np.rint(twice)
    if np.array_equal(code, twice) and code.min() >= 0 and code.max() <= 2:
        return code.astype(np.int64), np.array([0.0, 0.5, 1.0])
    values, inverse = np.unique(outcome, return_inverse=True)
    return inverse.astype(np.int64), values


def pair_counts(battles: Battles) -> PairCounts:
    """Deduplicate battles to (a, b, outcome) cells with counts and weight sums.

    Examples
    --------
    >>> import pandas as pd
    >>> from scorebench.aggregate.input import as_battles
    >>> b = as_battles(pd.DataFrame({"a": ["x", "x", "x", "y"], "b": ["y", "y", "y", "x"],
    ...                              "winner": ["a", "a", "tie", "a"]}))
    >>> pc = pair_counts(b)
    >>> list(zip(pc.a.tolist(), pc.b.tolist(), pc.outcome.tolist(), pc.count.tolist()))
    [(0, 1, 0.5, 1.0), (0, 1, 1.0, 2.0), (1, 0, 1.0, 1.0)]
    """
    if not isinstance(battles, Battles):
        raise InputError(f"pair_counts: expected Battles (scorebench.aggregate.as_battles), got {type(battles).__name__}")
    n = battles.n_systems
    code, values = _outcome_codes(np.asarray(battles.outcome, dtype=np.float64))
    k = len(values)
    key = (battles.a.astype(np.int64) * n + battles.b) * k + code
    w = np.asarray(battles.weight, dtype=np.float64)
    size = n * n * k
    if size <= _BINCOUNT_LIMIT:
        count = np.bincount(key, minlength=size)
        cells = np.flatnonzero(count)
        count = count[cells].astype(np.float64)
        wsum = np.bincount(key, w, size)[cells]
        wsq = np.bincount(key, w * w, size)[cells]
    else:
        cells, inverse, count = np.unique(key, return_inverse=True, return_counts=True)
        count = count.astype(np.float64)
        wsum = np.bincount(inverse, w, len(cells))
        wsq = np.bincount(inverse, w * w, len(cells))
    rest = cells // k
    return PairCounts(battles.systems, rest // n, rest % n, values[cells % k], count, wsum, wsq,
                      len(battles.a), bool(np.allclose(w, 1.0)))


def ipw_weights(battles: Battles, *, min_pair_count: float = 50.0) -> Battles:
    r"""The battles with arena-rank's inverse-propensity weights :math:`w = 1/\max(n_{\{a,b\}}, m)`.

    :math:`n_{\{a,b\}}` counts the battles of the unordered pair (either orientation, any
    outcome) and :math:`m` = ``min_pair_count`` caps the weight of rare pairs. Each pair then
    weighs about as much as any other, undoing non-uniform model sampling. The battles' own
    weights are replaced (arena-rank has no other weights).

    Examples
    --------
    >>> import pandas as pd
    >>> from scorebench.aggregate.input import as_battles
    >>> b = as_battles(pd.DataFrame({"a": ["x", "y", "x"], "b": ["y", "x", "z"], "winner": ["a", "a", "b"]}))
    >>> ipw_weights(b, min_pair_count=1).weight.tolist()
    [0.5, 0.5, 1.0]
    """
    if not (np.isfinite(min_pair_count) and min_pair_count > 0):
        raise InputError(f"min_pair_count: expected a positive number, got {min_pair_count!r}")
    n = battles.n_systems
    lo = np.minimum(battles.a, battles.b).astype(np.int64)
    hi = np.maximum(battles.a, battles.b)
    key = lo * n + hi
    per_pair = np.bincount(key, minlength=n * n)[key].astype(np.float64)
    w = 1.0 / np.maximum(per_pair, float(min_pair_count))
    return Battles(battles.systems, battles.a, battles.b, battles.outcome, w)


def laplacian(n: int, a: np.ndarray, b: np.ndarray, values: np.ndarray) -> np.ndarray:
    r""":math:`\sum_c v_c (e_{a_c} - e_{b_c})(e_{a_c} - e_{b_c})^\top` as a dense ``(n, n)`` matrix."""
    off = np.bincount(a * n + b, values, n * n).reshape(n, n)
    off = off + off.T
    out = -off
    out[np.diag_indices(n)] += off.sum(axis=1)
    return out


def bt_sandwich(pc: PairCounts, theta: np.ndarray, *, prior: float = 0.0,
                hessian_reg: float = HESSIAN_REG) -> np.ndarray:
    r"""Sandwich covariance :math:`H^{-1} G H^{-1}` of Bradley–Terry log-strengths (module docstring).

    ``prior`` (the Gaussian penalty :math:`\lambda` of :func:`~scorebench.aggregate.pairwise.bt_fit`)
    adds :math:`\lambda I` to :math:`H`; ``hessian_reg`` is arena-rank's ridge.

    Examples
    --------
    >>> import pandas as pd
    >>> from scorebench.aggregate.input import as_battles
    >>> b = as_battles(pd.DataFrame({"a": ["x"] * 4, "b": ["y"] * 4, "winner": ["a", "a", "a", "b"]}))
    >>> pc = pair_counts(b)
    >>> cov = bt_sandwich(pc, np.log([3.0, 1.0]) - np.log(3.0) / 2)   # the MLE: x won 3 of 4
    >>> round(float(cov[0, 0] + cov[1, 1] - 2 * cov[0, 1]), 4)   # var of theta_x - theta_y
    1.3333
    """
    if not (np.isfinite(hessian_reg) and hessian_reg >= 0):
        raise InputError(f"hessian_reg: expected a finite value >= 0, got {hessian_reg!r}")
    n = pc.n_systems
    theta = np.asarray(theta, dtype=np.float64)
    p = expit(theta[pc.a] - theta[pc.b])
    H = laplacian(n, pc.a, pc.b, pc.weight * p * (1.0 - p))
    G = laplacian(n, pc.a, pc.b, pc.weight_sq * (pc.outcome - p) ** 2)
    ridge = hessian_reg * (pc.count.sum() if pc.unweighted else 1.0) + prior
    H[np.diag_indices(n)] += ridge
    # The constant vector is an eigenvector of H (eigenvalue = ridge) and G kills it, so the
    # sandwich does not depend on that eigenvalue: lifting it to the scale of H gives the same
    # matrix with a well-conditioned inverse (arena-rank inverts H + ridge I as it is, which is
    # exact in theory and loses ~1e-7 relative at ridge 1e-5).
    H += (np.trace(H) / n) / n
    H_inv = np.linalg.inv(H)
    cov = H_inv @ G @ H_inv
    return (cov + cov.T) / 2.0


def normal_bounds(estimate: np.ndarray, se: np.ndarray, ci: float) -> tuple[np.ndarray, np.ndarray]:
    """Wald interval ``estimate ± z se`` with ``z`` the ``(1 + ci)/2`` normal quantile."""
    z = float(ndtri(0.5 + ci / 2.0))
    return estimate - z * se, estimate + z * se
