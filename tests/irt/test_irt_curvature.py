"""Item covariances with the curvature sums restricted to the free parameters equal the full computation.

The reference below is the computation before the restriction: the whole (4, 4, J, Q) second-derivative
tensor, the scores' factors D / P and D / (1 - P) for all four parameters, the Louis blocks from the
general score formula and one inversion per item.
"""

import numpy as np
import pytest

from scorebench.irt.em import Priors, fit_em
from scorebench.irt.information import item_covariance
from scorebench.irt.models import curvature_sums, derivatives, get_model
from scorebench.irt.quadrature import ResponseOps


def _responses(n_sys, n_items, seed, missing=0.0, guess=0.0):
    rng = np.random.default_rng(seed)
    a, b, th = rng.uniform(0.6, 2.0, n_items), rng.normal(0, 1, n_items), rng.normal(0, 1, n_sys)
    p = guess + (1 - guess) / (1 + np.exp(-a * (th[:, None] - b)))
    y = (rng.random((n_sys, n_items)) < p).astype(float)
    if missing:
        y[rng.random(y.shape) < missing] = np.nan
    return y


def _reference(y, params, theta, post, free, common_slope, prior, full):
    """The whole-tensor computation (curvature of all 16 entries, general scores)."""
    J = params.shape[0]
    P, D, D2 = derivatives(params, theta, second=True)
    P = np.clip(P, 1e-12, 1 - 1e-12)
    curv = (D2 * (post.r / P - (post.n - post.r) / (1 - P))[None, None]).sum(axis=-1)
    dP, dQ = D / P[None], D / (1 - P)[None]
    obs = (~np.isnan(y)).astype(float)
    y0 = np.nan_to_num(y)
    free = free.copy()
    if common_slope:
        free[:, 0] = True
    # s_ij(q) for every system, node, item, parameter and the posterior means m_ij
    S = y0[:, None, :, None] * dP.transpose(2, 1, 0)[None] - (obs - y0)[:, None, :, None] * dQ.transpose(2, 1, 0)[None]
    m = np.einsum("iq,iqjk->ijk", post.post, S)
    cov = np.full((J, 4, 4), np.nan)
    if full:
        X = (np.sqrt(post.post)[:, :, None, None] * S).reshape(-1, J * 4)
        mm = m.reshape(-1, J * 4)
        info = mm.T @ mm - X.T @ X
        for j in range(J):
            sl = slice(4 * j, 4 * j + 4)
            info[sl, sl] += X[:, sl].T @ X[:, sl] - curv[:, :, j]
        cols = [(j, k) for j in range(J) for k in range(4) if free[j, k]]
        flat = [4 * j + k for j, k in cols]
        mat = info[np.ix_(flat, flat)] + np.diag([prior[j, k] for j, k in cols])
        if common_slope:  # one shared slope: eta = T phi
            a_cols = [x for x, (_, k) in enumerate(cols) if k == 0]
            other = [x for x in range(len(cols)) if x not in a_cols]
            T = np.zeros((len(cols), len(other) + 1))
            T[a_cols, 0] = 1.0
            T[other, np.arange(1, len(other) + 1)] = 1.0
            big = T @ np.linalg.inv(T.T @ mat @ T) @ T.T
        else:
            big = np.linalg.inv(mat)
        for j in range(J):
            sel = [x for x, (jj, _) in enumerate(cols) if jj == j]
            ks = [cols[x][1] for x in sel]
            cov[j][np.ix_(ks, ks)] = big[np.ix_(sel, sel)]
        return cov
    blocks = np.einsum("ijk,ijl->jkl", m, m) - np.moveaxis(curv, -1, 0)
    blocks[:, range(4), range(4)] += prior
    a_var = 1.0 / blocks[:, 0, 0].sum() if common_slope else None
    for j in range(J):
        k = [i for i in range(4) if free[j, i] and not (common_slope and i == 0)]
        cov[j][np.ix_(k, k)] = np.linalg.inv(blocks[j][np.ix_(k, k)])
        if common_slope:
            cov[j, 0, 0] = a_var
    return cov


@pytest.mark.parametrize("which", [(0, 1), (1,), (0, 1, 2), (0, 1, 2, 3), (1, 3), (2, 3)])
def test_curvature_sums_equal_the_whole_tensor_on_the_kept_entries(which):
    rng = np.random.default_rng(4)
    J, Q = 7, 23
    params = np.column_stack([rng.uniform(0.3, 2.5, J), rng.normal(0, 1, J),
                              rng.uniform(0, 0.3, J), rng.uniform(0.8, 1.0, J)])
    theta = np.linspace(-4, 4, Q)
    w = rng.normal(0, 5, (J, Q))
    _, _, D2 = derivatives(params, theta, second=True)
    whole = (D2 * w[None, None]).sum(axis=-1)
    got = curvature_sums(params, theta, w, which)
    keep = np.zeros((4, 4), bool)
    keep[np.ix_(which, which)] = True
    np.testing.assert_allclose(got[keep], whole[keep], rtol=1e-12, atol=1e-12)
    assert np.all(got[~keep] == 0.0)


@pytest.mark.parametrize("model,missing,guess,anchored,full", [
    ("2pl", 0.0, 0.0, False, False),
    ("2pl", 0.3, 0.0, False, False),
    ("2pl", 0.0, 0.0, True, False),
    ("2pl", 0.2, 0.0, False, True),
    ("1pl", 0.0, 0.0, False, False),
    ("1pl", 0.1, 0.0, False, True),
    ("3pl", 0.0, 0.2, False, False),
    ("3pl", 0.15, 0.2, True, True),
])
def test_item_covariance_equals_the_whole_computation(model, missing, guess, anchored, full):
    spec = get_model(model)
    y = _responses(400, 9, seed=hash((model, missing, anchored, full)) % 1000, missing=missing, guess=guess)
    J = y.shape[1]
    fixed = None
    if anchored:  # mixed patterns of free entries: some slopes held fixed
        fixed = np.zeros((J, 4), bool)
        fixed[[1, 4], 0] = True
    ops = ResponseOps(y)
    res = fit_em(ops, spec, priors=Priors(), fixed=fixed, max_iter=40, init=None)
    free = np.tile(spec.free_mask, (J, 1))
    if fixed is not None:
        free &= ~fixed
    prior = np.where(free, np.random.default_rng(1).uniform(0, 0.5, (J, 4)), 0.0)
    got = item_covariance(ops, res.params, res.grid, res.posterior, free, common_slope=spec.common_slope,
                          full=full, prior_info=prior)
    want = _reference(y, res.params, res.grid.theta, res.posterior, free, spec.common_slope, prior, full)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.isfinite(got).any()
    np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-13)
