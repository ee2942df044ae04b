r"""Scores of multivariate ensemble forecasts: energy score and variogram score.

Axis convention: ``obs`` has shape ``(..., d)`` (variables on the last axis) and ``ens``
has shape ``(..., M, d)`` (members on axis -2, variables on axis -1).

Both are computed chunk by chunk over the rows so that the working memory stays within a
fixed budget (a few MiB) whatever the number of rows.

The energy score's pair term :math:`\sum_{i,j}\lVert x_i - x_j\rVert` is formed from
one batched matrix product per chunk: with members shifted by the observation,
:math:`\lVert x_i - x_j\rVert^2 = \lVert x_i\rVert^2 + \lVert x_j\rVert^2 - 2\langle x_i,
x_j\rangle`, written as a single product of the augmented vectors
:math:`(x_i, \lVert x_i\rVert^2, 1)` and :math:`(-2x_j, 1, \lVert x_j\rVert^2)`. Pairs whose
squared distance is small relative to the norms involved (where that identity loses
digits to cancellation) are recomputed directly, so the result keeps full accuracy.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...errors import InputError
from ...registry import register
from ...validation import as_float_array, check_choice
from ._common import FAMILY, GNEITING_RAFTERY, check_batch, chunk_slices, run_engine

__all__ = ["energy_score", "variogram_score"]

#: Pairs with squared distance below ``_REFINE * max_i ||x_i||^2`` (within a row) are
#: recomputed directly; the Gram identity's relative error there is about eps / _REFINE.
_REFINE = 2e-2
#: Size of one chunk's pair-distance block: about 1 MiB stays in cache between passes.
_PAIR_CHUNK_BYTES = 1 << 20


def _mv_inputs(obs: Any, ens: Any, *, check_inf: bool = True) -> tuple[np.ndarray, np.ndarray, tuple]:
    obs = as_float_array(obs, "obs", check_inf=check_inf)
    ens = as_float_array(ens, "ens", check_inf=check_inf)
    if ens.ndim < 2:
        raise InputError(f"ens: expected shape (..., M, d) with members on axis -2 and variables on "
                         f"axis -1, got shape {ens.shape}")
    if obs.ndim < 1 or obs.shape[-1] != ens.shape[-1]:
        raise InputError(f"mismatched lengths: obs has shape {obs.shape} but ens has shape {ens.shape}; "
                         f"expected obs of shape (..., {ens.shape[-1]}) with the same variables")
    batch = check_batch(obs[..., 0], ens[..., 0], "obs", "ens", core=1)
    m, d = ens.shape[-2:]
    if m == 0 or d == 0:
        raise InputError(f"ens: expected at least one member and one variable, got shape {ens.shape}")
    ens = np.broadcast_to(ens, (*batch, m, d)).reshape(-1, m, d)
    obs = np.broadcast_to(obs, (*batch, d)).reshape(-1, d)
    return obs, ens, batch


def _energy_engine(obs: np.ndarray, ens: np.ndarray, fair: bool) -> np.ndarray:
    n, m, d = ens.shape
    out = np.empty(n)
    rows = min(n, max(1, _PAIR_CHUNK_BYTES // (8 * m * m)))
    shifted = np.empty((rows, m, d))
    left = np.empty((rows, m, d + 2))   # (x_i, |x_i|^2, 1)
    right = np.empty((rows, m, d + 2))  # (-2 x_j, 1, |x_j|^2)
    left[..., d + 1] = 1.0
    right[..., d] = 1.0
    dist = np.empty((rows, m, m))
    diag = np.arange(m)
    ones = np.ones(m * m)
    denom = m * (m - 1.0) if fair else m * m
    for start in range(0, n, rows):
        stop = min(n, start + rows)
        r = stop - start
        x, a, b, dd = shifted[:r], left[:r], right[:r], dist[:r]
        np.subtract(ens[start:stop], obs[start:stop, None, :], out=x)  # shift by the observation
        sq = np.einsum("rmd,rmd->rm", x, x)
        a[..., :d] = x
        a[..., d] = sq
        np.multiply(x, -2.0, out=b[..., :d])
        b[..., d + 1] = sq
        np.matmul(a, b.transpose(0, 2, 1), out=dd)  # squared distances, all pairs
        flat = dd.reshape(r, -1)
        dd[:, diag, diag] = np.inf
        limit = _REFINE * sq.max(axis=1)
        low = np.flatnonzero(flat.min(axis=1) < limit)
        if low.size:  # recompute the pairs where the Gram identity lost digits
            sub = dd[low]
            ri, ii, jj = np.nonzero(sub < limit[low, None, None])
            ri = low[ri]
            diff = x[ri, ii] - x[ri, jj]
            dd[ri, ii, jj] = np.einsum("kd,kd->k", diff, diff)
        dd[:, diag, diag] = 0.0
        np.sqrt(flat, out=flat)
        out[start:stop] = np.sqrt(sq).sum(axis=1) / m - 0.5 * (flat @ ones) / denom
    return out


@register("energy_score", family=FAMILY, kind="multivariate", inputs=("y", "ens"),
          higher_is_better=False, bounds=(0.0, math.inf), proper="strict", per_row=True,
          params={"estimator": "standard"}, citation=GNEITING_RAFTERY)
def energy_score(obs: Any, ens: Any, *, estimator: str = "standard") -> np.ndarray:
    r"""Energy score of a multivariate ensemble forecast.

    .. math:: \mathrm{ES} = \frac1M \sum_{i=1}^M \lVert x_i - y\rVert
              - \frac{1}{2c} \sum_{i,j=1}^M \lVert x_i - x_j \rVert,
              \qquad c = M^2 \text{ (standard) or } M(M-1) \text{ (fair)},

    with the Euclidean norm. It generalises the CRPS (``d = 1``) and is strictly proper
    for distributions with finite first moment.

    Parameters
    ----------
    obs : array_like, shape (..., d)
        Observed vectors.
    ens : array_like, shape (..., M, d)
        Ensemble members on axis -2, variables on axis -1.
    estimator : {"standard", "fair"}, default "standard"
        The empirical-distribution estimator, or the unbiased (fair) one.

    Returns
    -------
    ndarray, shape (...)

    References
    ----------
    Gneiting, T. & Raftery, A. E. (2007), JASA 102(477), 359-378.

    Examples
    --------
    >>> float(energy_score([0.0, 0.0], [[3.0, 4.0], [-3.0, -4.0]]))
    2.5
    """
    check_choice(estimator, "estimator", ("standard", "fair"))
    obs_f, ens_f, batch = _mv_inputs(obs, ens, check_inf=False)
    if estimator == "fair" and ens_f.shape[1] < 2:
        raise InputError("ens: the fair estimator needs at least 2 members")
    return run_engine(_energy_engine, obs_f, ens_f, batch, estimator == "fair")


@register("variogram_score", family=FAMILY, kind="multivariate", inputs=("y", "ens"),
          higher_is_better=False, bounds=(0.0, math.inf), proper="proper", per_row=True,
          params={"p": 0.5, "weights": None},
          citation="Scheuerer & Hamill (2015), Monthly Weather Review 143(4):1321-1334")
def variogram_score(obs: Any, ens: Any, *, p: float = 0.5, weights: Any = None) -> np.ndarray:
    r"""Variogram score of order :math:`p` of a multivariate ensemble forecast.

    .. math:: \mathrm{VS}_p = \sum_{i,j=1}^d w_{ij} \Bigl(|y_i - y_j|^p
              - \frac1M \sum_{m=1}^M |x_{m,i} - x_{m,j}|^p\Bigr)^2 .

    It compares the forecast's pairwise variograms with the observation's and is
    sensitive to the dependence between variables; it is proper (not strictly).

    Parameters
    ----------
    obs : array_like, shape (..., d)
    ens : array_like, shape (..., M, d)
    p : float, default 0.5
        Order of the variogram (> 0); 0.5 is the usual choice.
    weights : array_like, shape (d, d), optional
        Non-negative pair weights :math:`w_{ij}` (all ones by default).

    Examples
    --------
    >>> float(variogram_score([0.0, 1.0], [[0.0, 1.0], [0.0, 4.0]], p=1.0))
    4.5
    """
    try:
        p = float(p)
    except (TypeError, ValueError):
        raise InputError(f"p: expected a number > 0, got {p!r}") from None
    if not (math.isfinite(p) and p > 0):
        raise InputError(f"p: expected a number > 0, got {p!r}")
    obs_f, ens_f, batch = _mv_inputs(obs, ens)
    n, m, d = ens_f.shape
    if weights is None:
        w = np.ones((d, d))
    else:
        w = as_float_array(weights, "weights", check_inf=True)
        if w.shape != (d, d):
            raise InputError(f"weights: expected a ({d}, {d}) matrix, got shape {w.shape}")
        if np.isnan(w).any() or (w < 0).any():
            raise InputError("weights: expected non-negative pair weights")
    out = np.empty(n)
    for sl in chunk_slices(n, 8 * (m + 2) * d * d):
        x = ens_f[sl]
        vx = np.abs(x[..., :, None] - x[..., None, :]) ** p       # (r, M, d, d)
        vy = np.abs(obs_f[sl, :, None] - obs_f[sl, None, :]) ** p  # (r, d, d)
        diff = vy - vx.mean(axis=1)
        out[sl] = np.einsum("rij,ij->r", diff * diff, w)
    return out.reshape(batch)
