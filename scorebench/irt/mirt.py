r"""Multidimensional 2PL with a few factors, by marginal ML (EM on a product grid).

.. math::

    P(y_{ij} = 1 \mid \boldsymbol\theta_i) = \sigma(\mathbf a_j^\top \boldsymbol\theta_i + d_j),
    \qquad \boldsymbol\theta_i \sim N(\mathbf 0, I_K).

The rotation is fixed by setting :math:`a_{jk} = 0` for :math:`k > j` (the first item loads
on the first factor only, the second on the first two, ...), the usual exploratory
identification (Bock, Gibbons & Muraki, 1988); rotate the loadings afterwards if a simple
structure is wanted. Each iteration is parameter-expanded (the factors' posterior mean and
Cholesky factor of their covariance are folded into the items), which keeps EM from
crawling along the scale directions. The E-step is the same matrix product as the unidimensional one, on a
product grid of ``nodes`` points per factor over [-5, 5]; such a fixed grid is accurate for
tests of up to a few hundred items (beyond that, posteriors become narrower than the grid
spacing and slopes shrink: use the unidimensional adaptive fit, or per-topic models).

Reference: Bock, R. D., Gibbons, R., & Muraki, E. (1988). Full-information item factor
analysis. *Applied Psychological Measurement* 12, 261-280.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import product
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError, warn_user
from scorebench.metrics.irt_kind import response_matrix
from scorebench.irt.blas import blas_limit
from scorebench.irt.quadrature import ResponseOps
from scorebench.irt.result import FitSummary, IRTWarning

__all__ = ["MIRTFit", "fit_mirt"]


@dataclass(frozen=True)
class MIRTFit(FitSummary):
    """A fitted multidimensional 2PL.

    Attributes
    ----------
    items : DataFrame
        Loadings ``a1 .. aK``, intercept ``d``, and the multidimensional discrimination
        ``mdisc`` :math:`= \\lVert \\mathbf a_j \\rVert`.
    abilities : DataFrame
        EAP estimates ``theta1 .. thetaK`` with posterior SDs ``se1 .. seK``.
    """

    history: tuple = field(default=(), repr=False)


def _nodes(k: int, per_dim: int) -> tuple[np.ndarray, np.ndarray]:
    x = np.linspace(-5.0, 5.0, per_dim)
    grid = np.array(list(product(x, repeat=k)))
    logw = -0.5 * (grid**2).sum(axis=1) - 0.5 * k * math.log(2 * math.pi) + k * math.log(x[1] - x[0])
    return grid, logw


def _estep(ops: ResponseOps, A: np.ndarray, d: np.ndarray, grid: np.ndarray, logw: np.ndarray):
    z = A @ grid.T + d[:, None]
    log_p, log_q = -np.logaddexp(0.0, -z), -np.logaddexp(0.0, z)
    ll = ops.loglik_nodes(log_p, log_q) + logw[None, :]
    top = ll.max(axis=1, keepdims=True)
    post = np.exp(ll - top)
    total = post.sum(axis=1, keepdims=True)
    post /= total
    r, n = ops.counts(post)
    return post, float((top[:, 0] + np.log(total[:, 0])).sum()), r, n


def _mstep(A, d, r, n, grid, free, iters=2):
    X = np.column_stack([grid, np.ones(len(grid))])  # (Q, K+1)
    B = np.column_stack([A, d])                       # (J, K+1)
    mask = np.column_stack([free, np.ones(len(d), dtype=bool)])
    for _ in range(iters):
        P = 1.0 / (1.0 + np.exp(-(B @ X.T)))
        g = (r - n * P) @ X                                    # (J, K+1)
        W = n * P * (1 - P)
        m = X.shape[1]
        XX = (X[:, :, None] * X[:, None, :]).reshape(len(X), m * m)
        H = (W @ XX).reshape(-1, m, m) + 1e-8 * np.eye(m)
        g = np.where(mask, g, 0.0)
        keep = mask[:, :, None] & mask[:, None, :]
        H = np.where(keep, H, np.eye(X.shape[1])[None])
        step = np.linalg.solve(H, g[..., None])[..., 0]
        step /= np.maximum(1.0, np.abs(step).max(axis=1, keepdims=True))
        B = B + step
    return B[:, :-1], B[:, -1]


def fit_mirt(responses: Any, n_factors: int = 2, *, nodes: int | None = None, max_iter: int = 500,
             tol: float = 1e-4, warn: bool = True) -> MIRTFit:
    """Fit a multidimensional 2PL with ``n_factors`` (1-3) factors.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> theta = rng.normal(size=(400, 2))
    >>> A = np.zeros((10, 2)); A[:5, 0] = 1.5; A[5:, 1] = 1.5
    >>> y = (rng.random((400, 10)) < 1 / (1 + np.exp(-(theta @ A.T)))).astype(float)
    >>> m = fit_mirt(y, 2, nodes=15, tol=1e-3)
    >>> m.converged, list(m.items.columns)
    (True, ['a1', 'a2', 'd', 'mdisc'])
    """
    if n_factors not in (1, 2, 3):
        raise InputError(f"n_factors: expected 1, 2 or 3, got {n_factors!r}")
    rm = _dichotomous(responses)
    values = rm.values
    N, J = values.shape
    if J < 2 * n_factors + 1:
        raise InputError(f"fit_mirt: {J} items are too few for {n_factors} factors")
    per_dim = nodes or {1: 61, 2: 25, 3: 13}[n_factors]
    grid, logw = _nodes(n_factors, per_dim)

    with blas_limit(float(N) * J * len(grid)):
        return _fit(values, rm, n_factors, grid, logw, max_iter, tol, warn)


def _dichotomous(responses: Any):
    """The 0/1 response matrix; items scored 0..K get an error naming the models that take them."""
    rm = response_matrix(responses, ordinal=True)
    top = np.nanmax(rm.values) if np.isfinite(rm.values).any() else 0.0
    if top > 1:
        raise InputError(f"fit_mirt fits the multidimensional 2PL of right/wrong (0/1) answers; these responses "
                         f"are scored up to {top:g}. Items scored 0..K take the unidimensional polytomous models: "
                         "scorebench.irt.fit(responses, model='grm'|'gpcm'|'pcm'|'rsm' or one model per item)")
    return response_matrix(responses)


def _fit(values, rm, n_factors, grid, logw, max_iter, tol, warn) -> MIRTFit:
    N, J = values.shape
    ops = ResponseOps(values)
    obs = ~np.isnan(values)
    filled = np.where(obs, values, np.nanmean(values, axis=0))
    z = (filled - filled.mean(axis=0)) / (filled.std(axis=0) + 1e-9)
    _, s, vt = np.linalg.svd(z, full_matrices=False)
    A = 1.7 * (vt[:n_factors].T * s[:n_factors] / math.sqrt(N))
    free = np.ones((J, n_factors), dtype=bool)
    for k in range(1, n_factors):
        free[:k, k] = False
    A = np.where(free, A, 0.0)
    p = np.clip(np.nanmean(values, axis=0), 0.01, 0.99)
    d = np.log(p / (1 - p)) * np.sqrt(1 + (A**2).sum(axis=1) / 2.9)
    history = []
    converged = False
    change = np.inf
    it = 0
    for it in range(1, max_iter + 1):
        post, ll, r, n = _estep(ops, A, d, grid, logw)
        history.append(ll)
        A_new, d_new = _mstep(A, d, r, n, grid, free)
        # PX-EM: fold the posterior mean and covariance of the factors back into the items
        # (a Cholesky factor keeps the zero pattern of the loadings).
        w = post.sum(axis=0) / N
        mu = w @ grid
        cov = (grid - mu).T @ ((grid - mu) * w[:, None])
        try:
            L = np.linalg.cholesky(cov)
        except np.linalg.LinAlgError:
            L = np.eye(n_factors)
        d_new = d_new + A_new @ mu
        A_new = np.where(free, A_new @ L, 0.0)
        change = float(max(np.abs(A_new - A).max(), np.abs(d_new - d).max()))
        A, d = A_new, d_new
        if change < tol:
            converged = True
            break
    sign = np.where(A.sum(axis=0) < 0, -1.0, 1.0)  # orient each factor: loadings mostly positive
    A = A * sign
    post, ll, _, _ = _estep(ops, A, d, grid, logw)
    mean = post @ grid
    sd = np.sqrt(np.maximum(post @ grid**2 - mean**2, 0.0))
    message = (f"EM converged in {it} iterations (largest change {change:.2e} < tol {tol:g})" if converged
               else f"EM did not converge in {max_iter} iterations (largest change {change:.2e} >= tol {tol:g})")
    cols = {f"a{k + 1}": A[:, k] for k in range(n_factors)}
    items = pd.DataFrame({**cols, "d": d, "mdisc": np.sqrt((A**2).sum(axis=1))},
                         index=pd.Index(rm.items, name="item"))
    ab = pd.DataFrame({**{f"theta{k + 1}": mean[:, k] for k in range(n_factors)},
                       **{f"se{k + 1}": sd[:, k] for k in range(n_factors)}},
                      index=pd.Index(rm.systems, name="system"))
    n_params = int(free.sum()) + J
    result = MIRTFit(items, ab, ll, n_params, N, converged, it, message, tuple(history))
    if warn and not converged:
        warn_user(f"multidimensional IRT fit did not converge: {message}", IRTWarning)
    return result
