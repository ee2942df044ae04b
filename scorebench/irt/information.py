r"""Observed information of the item parameters (Louis, 1982) and standard errors.

For one system the complete-data log-likelihood is :math:`\sum_j \log f_{ij}` with
:math:`f_{ij} = P_j^{y_{ij}}(1 - P_j)^{1 - y_{ij}}`. Louis' identity gives the observed
information of the marginal likelihood from posterior expectations only:

.. math::

    I(\eta) = \sum_i \Big( E_i[-\partial^2 \log f_i] - E_i[s_i s_i^\top] + m_i m_i^\top \Big),
    \qquad s_i = \partial \log f_i,\ m_i = E_i[s_i],

where :math:`E_i` averages over system :math:`i`'s posterior on the grid. Within one item
:math:`-\partial^2\log f - s s^\top = -\partial^2 f / f`, so the diagonal block of item
:math:`j` is :math:`\sum_i m_{ij} m_{ij}^\top - \sum_q [r_{jq}\partial^2 P_{jq}/P_{jq}
- (n_{jq} - r_{jq})\partial^2 P_{jq}/(1 - P_{jq})]`, computed with matrix products. For
small problems (:func:`item_covariance` with ``full=True``) the cross-item blocks
:math:`\sum_i (m_{ij} m_{ik}^\top - E_i[s_{ij} s_{ik}^\top])` are added and the whole
matrix is inverted; for large ones the blocks are inverted item by item.

Reference: Louis, T. A. (1982). Finding the observed information matrix when using the EM
algorithm. *JRSS B* 44, 226-233.
"""

from __future__ import annotations

import numpy as np

from scorebench.core.errors import InputError
from scorebench.irt.models import curvature_sums, derivatives
from scorebench.irt.quadrature import Grid, Posterior, ResponseOps

__all__ = ["item_covariance", "standard_errors", "se_of_b"]

_EPS = 1e-12
#: Largest working set of the full (cross-item) information: the per-system score tensor
#: (systems x grid x items x 4) and the inverted matrix. Beyond it full_se=True is refused.
FULL_INFO_BYTES = 4 * 2**30


def _free_index(free: np.ndarray, common_slope: bool) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """Columns of the full (J*4) parameter vector that are free, and a (item, param) list."""
    cols = [(j, k) for j in range(free.shape[0]) for k in range(4) if free[j, k]]
    return np.array([j * 4 + k for j, k in cols], dtype=int), cols


def item_covariance(ops: ResponseOps, params: np.ndarray, grid: Grid, post: Posterior,
                    free: np.ndarray, *, common_slope: bool = False, full: bool | None = None,
                    prior_info: np.ndarray | None = None) -> np.ndarray:
    """Covariance of each item's parameters ``(a, d, c, u)``, shape (J, 4, 4).

    Entries of parameters that are not estimated are NaN. With ``common_slope`` the slope
    column holds the variance of the one shared slope. ``prior_info`` (J, 4) adds the
    prior's negative second derivative (standard errors of posterior modes).
    """
    J = params.shape[0]
    N, Q = post.post.shape
    if common_slope:
        free = free.copy()
        free[:, 0] = True
    if full is None:
        full = N * Q * J * 4 <= 4e6
    # only the parameter columns estimated for some item: their first derivatives and the
    # curvature sums of their pairs (3 entries for the 2PL, not the 16 of the whole 4x4)
    idx = tuple(k for k in range(4) if free[:, k].any())
    plain = bool(np.all(params[:, 2] == 0.0) and np.all(params[:, 3] == 1.0))
    scores_from_p = plain and not full and set(idx) <= {0, 1}  # the 2PL scores need P only
    P, D = derivatives(params, grid.theta, which=() if scores_from_p else idx)
    P = np.clip(P, _EPS, 1 - _EPS)
    r, n = post.r, post.n
    curv = curvature_sums(params, grid.theta, r / P - (n - r) / (1 - P), idx)  # (4, 4, J)
    prior = np.zeros((J, 4)) if prior_info is None else prior_info
    if not full:
        return _blockwise_covariance(ops, params, grid, post, free, P, D, curv, prior, plain, common_slope)
    need = 8.0 * N * Q * J * 4 + 8.0 * (J * 4) ** 2
    if need > FULL_INFO_BYTES:
        raise InputError(f"full_se=True: the whole observed information of {N} systems x {J} items on {Q} grid points "
                         f"needs about {need / 2**30:.1f} GiB (limit {FULL_INFO_BYTES / 2**30:.0f} GiB); leave "
                         "full_se unset for item-by-item standard errors")
    return _full_covariance(ops, post, free, D / P[None], D / (1 - P)[None], curv, prior, common_slope)


def _blockwise_covariance(ops: ResponseOps, params: np.ndarray, grid: Grid, post: Posterior, free: np.ndarray,
                          P: np.ndarray, D: np.ndarray, curv: np.ndarray, prior: np.ndarray, plain: bool,
                          common_slope: bool) -> np.ndarray:
    """Item covariances from each item's own 4x4 information block (cross-item terms ignored)."""
    J = params.shape[0]
    idx = [k for k in range(4) if free[:, k].any()]
    blocks = np.zeros((J, 4, 4))
    _mm_blocks(ops, post.post, P, D, idx, blocks, plain, grid.theta)
    blocks -= np.moveaxis(curv, -1, 0)
    blocks[:, range(4), range(4)] += prior
    a_var = None
    if common_slope:  # the shared slope's information is the sum over items (cross terms ignored)
        a_info = blocks[:, 0, 0].sum()
        a_var = 1.0 / a_info if a_info > 0 else np.nan
    own = free.copy()
    if common_slope:
        own[:, 0] = False
    cov = _inverse_blocks(blocks, own)
    if common_slope:
        cov[:, 0, 0] = a_var
    return cov


def _inverse_blocks(blocks: np.ndarray, free: np.ndarray) -> np.ndarray:
    """Inverse of each item's block restricted to its free entries, (J, 4, 4) with NaN elsewhere.

    Items sharing a pattern of free entries are inverted in one batched call; a pattern whose
    batch holds a singular block falls back to item by item (NaN for the singular ones).
    """
    J = blocks.shape[0]
    cov = np.full((J, 4, 4), np.nan)
    patterns, which = np.unique(free, axis=0, return_inverse=True)
    for p, pattern in enumerate(patterns):
        k = np.flatnonzero(pattern)
        if k.size == 0:
            continue
        items = np.flatnonzero(which.ravel() == p)
        sub = blocks[np.ix_(items, k, k)]
        try:
            inv = np.linalg.inv(sub)
        except np.linalg.LinAlgError:
            inv = np.stack([_inv(b) for b in sub])
        cov[np.ix_(items, k, k)] = inv
    return cov


def _full_covariance(ops: ResponseOps, post: Posterior, free: np.ndarray, dP: np.ndarray, dQ: np.ndarray,
                     curv: np.ndarray, prior: np.ndarray, common_slope: bool) -> np.ndarray:
    """Item covariances from the inverse of the full information matrix of all free parameters."""
    J = free.shape[0]
    cov = np.full((J, 4, 4), np.nan)
    cols, pairs = _free_index(free, False)
    mat = _full_info(ops, post.post, dP, dQ, curv)[np.ix_(cols, cols)]
    mat[np.diag_indices_from(mat)] += np.array([prior[j, k] for j, k in pairs])
    if common_slope:  # tie the slopes: eta_full = T phi, phi = (a, the other free parameters)
        a_cols = [x for x, (_, k) in enumerate(pairs) if k == 0]
        other = [x for x in range(len(pairs)) if x not in a_cols]
        T = np.zeros((len(pairs), len(other) + 1))
        T[a_cols, 0] = 1.0
        T[other, np.arange(1, len(other) + 1)] = 1.0
        big = T @ _inv(T.T @ mat @ T) @ T.T
    else:
        big = _inv(mat)
    for j in range(J):
        sel = [x for x, (jj, _) in enumerate(pairs) if jj == j]
        ks = [pairs[x][1] for x in sel]
        cov[j][np.ix_(ks, ks)] = big[np.ix_(sel, sel)]
    return cov


def _inv(mat: np.ndarray) -> np.ndarray:
    try:
        out = np.linalg.inv(mat)
    except np.linalg.LinAlgError:
        return np.full(mat.shape, np.nan)
    return out


def standard_errors(cov: np.ndarray) -> np.ndarray:
    """Square roots of the variances in ``cov`` (J, 4, 4), NaN where not positive."""
    d = np.diagonal(cov, axis1=1, axis2=2)
    with np.errstate(invalid="ignore"):
        return np.where(d > 0, np.sqrt(np.abs(d)), np.nan)


def _m_chunks(ops: ResponseOps, post: np.ndarray, P: np.ndarray, D: np.ndarray, idx: list[int],
              plain: bool, theta: np.ndarray):
    """Yield (columns, m) with m (len(idx), N, chunk) = posterior mean scores E_i[s_ij].

    ``P`` (J, Q) is the clipped response probability and ``D`` (4, J, Q) its derivatives; the
    scores' factors ``D / P`` and ``D / (1 - P)`` are formed a chunk of items at a time.
    """
    N, J = ops.shape
    two_pl = plain and set(idx) <= {0, 1}
    width = max(1, 2_000_000 // max(N, 1))
    et = (post @ theta)[:, None]
    for start in range(0, J, width):
        sl = slice(start, min(J, start + width))
        y = ops.y[:, sl].astype(np.float64)
        obs = None if ops.m is None else ops.m[:, sl].astype(np.float64)
        if two_pl:  # E_i[(y - P) x] with x = (theta, 1): two products instead of four
            ep = post @ P[sl].T
            etp = post @ (P[sl] * theta[None, :]).T
            m = np.stack([y * et - etp if k == 0 else y - ep for k in idx])
            if obs is not None:
                m *= obs[None]
        else:
            wrong = 1.0 - y if obs is None else obs - y
            m = np.stack([y * (post @ (D[k, sl] / P[sl]).T) - wrong * (post @ (D[k, sl] / (1.0 - P[sl])).T)
                          for k in idx])
        yield sl, m


def _mm_blocks(ops, post, P, D, idx, blocks, plain, theta):
    for sl, m in _m_chunks(ops, post, P, D, idx, plain, theta):
        for x, k in enumerate(idx):
            for z, l in enumerate(idx[x:], start=x):
                blocks[sl, k, l] = blocks[sl, l, k] = (m[x] * m[z]).sum(axis=0)


def _full_info(ops, post, dP, dQ, curv):
    """The whole (J*4) x (J*4) observed information (small problems)."""
    N, J = ops.shape
    Q = post.shape[1]
    y = ops.y.astype(np.float64)
    obs = np.ones_like(y) if ops.m is None else ops.m.astype(np.float64)
    # s_ij(q) for every system, node, item, parameter: (N, Q, J, 4)
    S = (y[:, None, :, None] * dP.transpose(2, 1, 0)[None]
         - (obs - y)[:, None, :, None] * dQ.transpose(2, 1, 0)[None])
    m = np.einsum("iq,iqjk->ijk", post, S).reshape(N, J * 4)
    X = (np.sqrt(post)[:, :, None, None] * S).reshape(N * Q, J * 4)
    info = m.T @ m - X.T @ X
    for j in range(J):
        sl = slice(4 * j, 4 * j + 4)
        Xj = X[:, sl]
        info[sl, sl] += Xj.T @ Xj - curv[:, :, j]
    return info


def se_of_b(a: np.ndarray, d: np.ndarray, var_a: np.ndarray, var_d: np.ndarray,
            cov_ad: np.ndarray | None = None) -> np.ndarray:
    r"""Delta-method standard error of :math:`b = -d/a`:
    :math:`\operatorname{Var}(b) \approx (d/a^2)^2 \operatorname{Var}(a) + \operatorname{Var}(d)/a^2
    - 2 (d/a^3) \operatorname{Cov}(a, d)`."""
    cov = 0.0 if cov_ad is None else cov_ad
    var = (d / a**2) ** 2 * var_a + var_d / a**2 - 2.0 * d / a**3 * cov
    return np.sqrt(np.maximum(var, 0.0))
