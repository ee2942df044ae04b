r"""Adaptive dense quadrature and the E-step shared by every marginal estimator.

The marginal likelihood of system :math:`i` integrates its response likelihood over the
ability distribution :math:`g(\theta) = N(\mu, \sigma^2)`; it is evaluated on an equally
spaced grid (the trapezoidal rule),

.. math::

    L_i = \int \prod_j P_j(\theta)^{y_{ij}} (1 - P_j(\theta))^{1 - y_{ij}} g(\theta)\,d\theta
        \approx h \sum_q \exp\Big(\sum_j y_{ij}\log\tfrac{P_{jq}}{1 - P_{jq}}
        + \sum_j m_{ij}\log(1 - P_{jq})\Big) g(\theta_q),

where :math:`m_{ij}` marks observed answers. Both sums over items are matrix products, so an
E-step costs two BLAS products of size systems x items x nodes.

Why the grid adapts: the posterior of a system answering :math:`J` items has standard
deviation about :math:`1/\sqrt{I(\theta)}`, which is 0.04 for 2,000 items. A fixed 21- or
61-point grid is far coarser than that, each posterior collapses onto one node and the slopes
shrink (by 18-33% at 500-2,000 items). The trapezoidal rule on a smooth bell of width
:math:`s` has relative error about :math:`2\exp(-2\pi^2 s^2/h^2)` (Davis & Rabinowitz, 1984,
section 2.9), so a spacing :math:`h \le s` is exact to about :math:`10^{-8}`.
:func:`choose_grid` therefore takes the spacing from the smallest posterior standard
deviation of the current estimates, and the range from where the posteriors lie.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scorebench.irt.bands import BAND_MIN_CELLS, MAX_FRACTION, banded_estep, concave, find_bands, normalise
from scorebench.irt.models import item_information, log_prob

__all__ = ["Grid", "Posterior", "ResponseOps", "choose_grid", "estep"]

_DENSE_LIMIT = 40_000_000   # above this many cells the 0/1 matrix is kept as int8 and chunked
_CHUNK = 4_000_000


@dataclass(frozen=True)
class Grid:
    """Quadrature nodes ``theta`` (equally spaced by ``h``) under ``N(mu, sigma^2)``."""

    theta: np.ndarray
    h: float
    mu: float = 0.0
    sigma: float = 1.0

    @property
    def log_weights(self) -> np.ndarray:
        """:math:`\\log(h\\,g(\\theta_q))` (unnormalised trapezoid weights)."""
        z = (self.theta - self.mu) / self.sigma
        return -0.5 * z * z - math.log(self.sigma * math.sqrt(2.0 * math.pi)) + math.log(self.h)

    def with_prior(self, mu: float, sigma: float) -> Grid:
        return Grid(self.theta, self.h, float(mu), float(sigma))


class ResponseOps:
    """The 0/1 matrix and the two matrix products an E-step needs (NumPy backend).

    ``values`` is float64 with NaN for missing answers. Large matrices are stored as int8
    and multiplied in column chunks so that memory stays near the size of the data.
    """

    backend = "numpy"

    def __init__(self, values: np.ndarray) -> None:
        observed = ~np.isnan(values)
        self.shape = values.shape
        self.has_missing = not bool(observed.all())
        self.dense = values.size <= _DENSE_LIMIT
        dtype = np.float64 if self.dense else np.int8
        self.y = np.where(observed, values, 0.0).astype(dtype)
        self.m = observed.astype(dtype) if self.has_missing else None
        self.n_obs_items = observed.sum(axis=0).astype(np.float64)
        self.n_obs_persons = observed.sum(axis=1).astype(np.float64)
        cols = max(1, _CHUNK // max(1, values.shape[0]))
        self._chunks = [slice(s, min(s + cols, values.shape[1])) for s in range(0, values.shape[1], cols)]

    def _left(self, x: np.ndarray, w: np.ndarray) -> np.ndarray:
        """``x @ w`` with x (N, J) stored dense or int8."""
        if self.dense:
            return x @ w
        out = np.zeros((x.shape[0], w.shape[1]))
        for sl in self._chunks:
            out += x[:, sl].astype(np.float64) @ w[sl]
        return out

    def _right(self, x: np.ndarray, post: np.ndarray) -> np.ndarray:
        """``x.T @ post`` with x (N, J) stored dense or int8."""
        if self.dense:
            return x.T @ post
        return np.concatenate([x[:, sl].astype(np.float64).T @ post for sl in self._chunks])

    def loglik_nodes(self, log_p: np.ndarray, log_q: np.ndarray) -> np.ndarray:
        """Response log-likelihood of every system at every node, shape (N, Q)."""
        out = self._left(self.y, log_p - log_q)
        if self.m is None:
            out += log_q.sum(axis=0)[None, :]
        else:
            out += self._left(self.m, log_q)
        return out

    def answered_sum(self, w: np.ndarray) -> np.ndarray:
        """``sum_j m_ij w_jq`` over the items each system answered, shape (N, Q)."""
        if self.m is None:
            return np.broadcast_to(w.sum(axis=0)[None, :], (self.shape[0], w.shape[1])).copy()
        return self._left(self.m, w)

    def counts(self, post: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Expected numbers right ``r`` and answered ``n`` per item and node, shape (J, Q)."""
        r = self._right(self.y, post)
        n = np.broadcast_to(post.sum(axis=0)[None, :], r.shape) if self.m is None else self._right(self.m, post)
        return r, n

    def block(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """The responses and the answered mask (``None`` without missing cells) of the systems
        ``rows`` as float64, shapes (len(rows), J)."""
        m = None if self.m is None else self.m[rows].astype(np.float64, copy=False)
        return self.y[rows].astype(np.float64, copy=False), m

    def rows(self, index: np.ndarray) -> np.ndarray:
        """Selected rows as float64 with NaN for missing (used by scoring)."""
        y = self.y[index].astype(np.float64)
        if self.m is not None:
            y[self.m[index] == 0] = np.nan
        return y


@dataclass(frozen=True)
class Posterior:
    """Result of an E-step: posterior weights and expected counts."""

    post: np.ndarray          # (N, Q), rows sum to 1
    loglik_person: np.ndarray  # (N,) marginal log-likelihood of each system
    r: np.ndarray             # (J, Q) expected number right
    n: np.ndarray             # (J, Q) expected number answered

    @property
    def loglik(self) -> float:
        return float(self.loglik_person.sum())


def estep(ops: ResponseOps, params: np.ndarray, grid: Grid, *, counts: bool = True,
          banded: bool | None = None) -> Posterior:
    """Posterior over the grid for every system, the marginal log-likelihood and counts.

    ``banded`` (default: automatic) restricts the products to the nodes where each posterior
    is not negligible (:mod:`scorebench.irt.bands`; same numbers to float64 rounding): used for
    1PL/2PL parameters on the NumPy backend above ``BAND_MIN_CELLS`` systems x items x nodes
    when the windows cover at most ``MAX_FRACTION`` of the cells.
    """
    if banded is None:
        banded = (ops.backend == "numpy" and grid.theta.size >= 32
                  and ops.shape[0] * ops.shape[1] * grid.theta.size > BAND_MIN_CELLS)
    if banded and concave(params):
        bands = find_bands(ops, params, grid)
        if bands.fraction <= MAX_FRACTION:
            return Posterior(*banded_estep(ops, params, grid, bands, counts=counts))
    log_p, log_q = log_prob(params, grid.theta)
    post, lse = normalise(ops.loglik_nodes(log_p, log_q) + grid.log_weights[None, :])
    if not counts:
        return Posterior(post, lse, np.empty((0, 0)), np.empty((0, 0)))
    r, n = ops.counts(post)
    return Posterior(post, lse, r, n)


def choose_grid(params: np.ndarray, theta_hat: np.ndarray, ops: ResponseOps, *,
                spacing: float | None = None, mu: float = 0.0, sigma: float = 1.0,
                max_spacing: float = 0.1, max_nodes: int = 1201, width: float = 7.0,
                min_spacing: float = 0.005) -> Grid:
    r"""An equally spaced grid fine enough for the narrowest posterior.

    The posterior standard deviation of system :math:`i` is approximated by
    :math:`s_i = (I_i(\hat\theta_i) + 1/\sigma^2)^{-1/2}` with the information of the items it
    answered at its current estimate; the spacing is :math:`h = \min(\text{max\_spacing},
    \min_i s_i)` (or ``spacing`` when given) and the grid covers :math:`\hat\theta_i \pm`
    ``width`` :math:`s_i` for every system, and :math:`\mu \pm 6\sigma` for short tests.
    """
    theta_hat = np.asarray(theta_hat, dtype=np.float64)
    lo_t, hi_t = float(theta_hat.min()) - 0.5, float(theta_hat.max()) + 0.5
    coarse = np.linspace(lo_t, hi_t, 101)
    bounded = params.copy()  # diverging slopes (separation) must not dictate the spacing
    bounded[:, 0] = np.clip(bounded[:, 0], -4.0, 4.0)
    per_node = ops.answered_sum(item_information(bounded, coarse))          # (N, 101)
    pos = np.clip((theta_hat - lo_t) / (coarse[1] - coarse[0]), 0, 100)
    k = np.minimum(pos.astype(int), 99)
    frac = pos - k
    rows = np.arange(len(theta_hat))
    test_info = (1 - frac) * per_node[rows, k] + frac * per_node[rows, k + 1] + 1.0 / sigma**2
    s = 1.0 / np.sqrt(test_info)
    h = float(spacing) if spacing is not None else min(max_spacing, max(min_spacing, float(np.min(s))))
    lo = max(float(np.min(theta_hat - width * s)), mu - 8.0 * sigma)
    hi = min(float(np.max(theta_hat + width * s)), mu + 8.0 * sigma)
    if s.max() > 0.25:  # short tests: posteriors are wide, cover the prior as well
        lo, hi = min(lo, mu - 6.0 * sigma), max(hi, mu + 6.0 * sigma)
    n = int(math.ceil((hi - lo) / h)) + 1
    if n > max_nodes:
        n = max_nodes
        h = (hi - lo) / (n - 1)
    return Grid(np.linspace(lo, lo + h * (n - 1), n), h, mu, sigma)
