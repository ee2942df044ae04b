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

from scorebench.core.errors import InputError
from scorebench.core.registry import register
from scorebench.core.validation import as_float_array, check_choice
from scorebench.metrics.scoring_rules._common import FAMILY, GNEITING_RAFTERY, chunk_slices, run_engine
from scorebench.metrics.scoring_rules._members import NAN_POLICIES, fair_denominator, member_weights, omit_nan_members
from scorebench.metrics.scoring_rules.inputs import mv_inputs

__all__ = ["energy_score", "variogram_score"]

#: Pairs with squared distance below ``_REFINE * max_i ||x_i||^2`` (within a row) are
#: recomputed directly; the Gram identity's relative error there is about eps / _REFINE.
_REFINE = 2e-2
#: Size of one chunk's pair-distance block: about 1 MiB stays in cache between passes.
_PAIR_CHUNK_BYTES = 1 << 20



def energy_terms(obs: np.ndarray, ens: np.ndarray, w: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    r"""Per row :math:`A = \sum_i w_i \lVert x_i - y\rVert` and :math:`B = \sum_{i,j} w_i w_j
    \lVert x_i - x_j\rVert`; ``w (N, M)`` need not sum to 1 (``None``: :math:`w_i = 1/M`)."""
    n, m, d = ens.shape
    near, pair = np.empty(n), np.empty(n)
    rows = max(1, min(n, _PAIR_CHUNK_BYTES // (8 * m * m)))  # >= 1 also for an empty batch
    shifted = np.empty((rows, m, d))
    left = np.empty((rows, m, d + 2))   # (x_i, |x_i|^2, 1)
    right = np.empty((rows, m, d + 2))  # (-2 x_j, 1, |x_j|^2)
    left[..., d + 1] = 1.0
    right[..., d] = 1.0
    dist = np.empty((rows, m, m))
    diag = np.arange(m)
    ones = np.full(m * m, 1.0 / (m * m))
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
        if (flat.min(axis=1) < limit).any():  # recompute the pairs where the Gram identity lost digits
            # one flat scan of the block (np.nonzero on 3-d arrays is several times slower)
            ids = np.flatnonzero(dd < limit[:, None, None])
            ri, rest = np.divmod(ids, m * m)
            ii, jj = np.divmod(rest, m)
            diff = x[ri, ii] - x[ri, jj]
            flat.reshape(-1)[ids] = np.einsum("kd,kd->k", diff, diff)
        dd[:, diag, diag] = 0.0
        np.sqrt(flat, out=flat)
        np.sqrt(sq, out=sq)
        if w is None:
            near[start:stop] = sq.sum(axis=1) / m
            pair[start:stop] = flat @ ones
        else:
            ws = w[start:stop]
            near[start:stop] = np.einsum("rm,rm->r", sq, ws)
            pair[start:stop] = np.einsum("rm,rm->r", np.matmul(dd, ws[..., None])[..., 0], ws)
    return near, pair


def _energy_engine(obs: np.ndarray, ens: np.ndarray, fair: bool, w: np.ndarray | None = None) -> np.ndarray:
    near, pair = energy_terms(obs, ens, w)
    c = fair_denominator(w, ens.shape[1]) if fair else 1.0
    return near - 0.5 * pair / c


@register("energy_score", family=FAMILY, kind="multivariate", inputs=("y", "ens"),
          higher_is_better=False, bounds=(0.0, math.inf), proper="strict", per_row=True,
          params={"estimator": "standard", "nan_policy": "propagate", "ens_w": None}, citation=GNEITING_RAFTERY,
          tested_against=(('scoringrules 0.7 (numpy backend)', 1e-12),
                            ('scipy (distributions / numerical integration)', 1e-12),))
def energy_score(obs: Any, ens: Any, *, estimator: str = "standard", nan_policy: str = "propagate",
                 ens_w: Any = None) -> np.ndarray:
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
    nan_policy : {"propagate", "omit"}, default "propagate"
        ``"omit"`` scores each row on its members without NaN (a member with any NaN
        variable is skipped, as properscoring does for the CRPS); a row whose members are
        all NaN raises. ``"propagate"``: a NaN member makes its row NaN.
    ens_w : array_like, shape (..., M), optional
        Non-negative member weights (normalised per row; scoringrules' ``ens_w``):
        :math:`\sum_i w_i\lVert x_i - y\rVert - \frac{1}{2c}\sum_{i,j} w_i w_j \lVert x_i - x_j\rVert`
        with :math:`c = 1` (standard) or :math:`1 - \sum_i w_i^2` (fair). Equal weights
        give the unweighted score.

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
    >>> float(energy_score([0.0, 0.0], [[3.0, 4.0], [np.nan, 1.0]], nan_policy="omit"))
    5.0
    >>> float(energy_score([0.0, 0.0], [[3.0, 4.0], [-3.0, -4.0]], ens_w=[3.0, 1.0]))
    3.125
    """
    check_choice(estimator, "estimator", ("standard", "fair"))
    check_choice(nan_policy, "nan_policy", NAN_POLICIES)
    obs_f, ens_f, batch = mv_inputs(obs, ens, check_inf=False)
    n, m, _ = ens_f.shape
    w = None if ens_w is None else member_weights(ens_w, n, m, batch)
    ens_f, w = omit_nan_members(ens_f, w, nan_policy, multivariate=True)
    if estimator == "fair":
        fair_denominator(w, m)  # refuse single-member rows before the work
    return run_engine(_energy_engine, obs_f, ens_f, batch, estimator == "fair", w)


def variogram_order(p: Any) -> float:
    """The variogram order ``p`` as a float, refusing anything but a finite number > 0."""
    try:
        p = float(p)
    except (TypeError, ValueError):
        raise InputError(f"p: expected a number > 0, got {p!r}") from None
    if not (math.isfinite(p) and p > 0):
        raise InputError(f"p: expected a number > 0, got {p!r}")
    return p


def pair_weights(weights: Any, d: int) -> np.ndarray:
    """The ``(d, d)`` non-negative pair weights :math:`w_{ij}` of a variogram score (``None``: all 1)."""
    if weights is None:
        return np.ones((d, d))
    w = as_float_array(weights, "weights", check_inf=True)
    if w.shape != (d, d):
        raise InputError(f"weights: expected a ({d}, {d}) matrix, got shape {w.shape}")
    if np.isnan(w).any() or (w < 0).any():
        raise InputError("weights: expected non-negative pair weights")
    return w


def variogram_terms(obs: np.ndarray, ens: np.ndarray, u: np.ndarray | None, p: float, pw: np.ndarray,
                    terms: tuple[str, ...] = ("mean",)) -> dict[str, np.ndarray]:
    r"""Per-row sums behind the (weighted) variogram scores, with :math:`\gamma_m = |x_{m,i} -
    x_{m,j}|^p`, :math:`\gamma_y = |y_i - y_j|^p`, :math:`\lVert A\rVert^2 = \sum_{ij} w_{ij} A_{ij}^2`
    and member weights :math:`u_m` (``None``: :math:`1/M`; they need not sum to 1, :math:`U = \sum u_m`):

    ``"mean"``  :math:`\lVert \gamma_y - \bar\gamma\rVert^2`, :math:`\bar\gamma = \sum_m u_m \gamma_m / U`;
    ``"near"``  :math:`\sum_m u_m \lVert \gamma_m - \gamma_y\rVert^2`;
    ``"pair"``  :math:`\sum_{m,k} u_m u_k \lVert \gamma_m - \gamma_k\rVert^2
    = 2U \sum_m u_m \lVert \gamma_m - \bar\gamma\rVert^2` (the centred form, free of cancellation);
    ``"sq_ens"`` :math:`\sum_m u_m \lVert\gamma_m\rVert^2`; ``"sq_obs"`` :math:`\lVert\gamma_y\rVert^2`.
    The pair term costs :math:`O(M d^2)`, not :math:`O(M^2 d^2)`.
    """
    n, m, d = ens.shape
    out = {t: np.empty(n) for t in terms}
    for sl in chunk_slices(n, 8 * (2 * m + 2) * d * d):
        x = ens[sl]
        vx = np.abs(x[..., :, None] - x[..., None, :]) ** p       # (r, M, d, d)
        vy = np.abs(obs[sl, :, None] - obs[sl, None, :]) ** p  # (r, d, d)
        uu = np.full(vx.shape[:2], 1.0 / m) if u is None else u[sl]
        total = uu.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):  # U = 0: weighted terms are 0 anyway
            mean = np.einsum("rmij,rm->rij", vx, uu) / total[:, None, None]
        if "mean" in out:
            diff = vy - mean
            out["mean"][sl] = np.einsum("rij,ij->r", diff * diff, pw)
        if "near" in out:
            diff = vx - vy[:, None]
            out["near"][sl] = np.einsum("rmij,ij,rm->r", diff * diff, pw, uu)
        if "pair" in out:
            diff = vx - np.nan_to_num(mean)[:, None]
            out["pair"][sl] = 2.0 * total * np.einsum("rmij,ij,rm->r", diff * diff, pw, uu)
        if "sq_ens" in out:
            out["sq_ens"][sl] = np.einsum("rmij,ij,rm->r", vx * vx, pw, uu)
        if "sq_obs" in out:
            out["sq_obs"][sl] = np.einsum("rij,ij->r", vy * vy, pw)
    return out


@register("variogram_score", family=FAMILY, kind="multivariate", inputs=("y", "ens"),
          higher_is_better=False, bounds=(0.0, math.inf), proper="proper", per_row=True,
          params={"p": 0.5, "weights": None, "estimator": "standard", "nan_policy": "propagate", "ens_w": None},
          citation="Scheuerer & Hamill (2015), Monthly Weather Review 143(4):1321-1334",
          tested_against=(('scoringrules 0.7 (numpy backend)', 1e-12),
                            ('scipy (distributions / numerical integration)', 1e-12),))
def variogram_score(obs: Any, ens: Any, *, p: float = 0.5, weights: Any = None, estimator: str = "standard",
                    nan_policy: str = "propagate", ens_w: Any = None) -> np.ndarray:
    r"""Variogram score of order :math:`p` of a multivariate ensemble forecast.

    .. math:: \mathrm{VS}_p = \sum_{i,j=1}^d w_{ij} \Bigl(|y_i - y_j|^p
              - \frac1M \sum_{m=1}^M |x_{m,i} - x_{m,j}|^p\Bigr)^2 .

    It compares the forecast's pairwise variograms with the observation's and is
    sensitive to the dependence between variables; it is proper (not strictly).

    The fair estimator (scoringrules' ``estimator="fair"``) removes the finite-ensemble
    bias of the squared mean: with :math:`\gamma_m` the member variograms,
    :math:`\gamma_y` the observation's and :math:`\lVert A\rVert^2 = \sum_{ij} w_{ij}A_{ij}^2`,

    .. math:: \mathrm{VS}^{\text{fair}}_p = \frac1M \sum_m \lVert\gamma_m - \gamma_y\rVert^2
              - \frac{1}{2M(M-1)} \sum_{m,k} \lVert\gamma_m - \gamma_k\rVert^2 ,

    an unbiased estimate of :math:`\lVert \mathbb E\gamma_X - \gamma_y\rVert^2` for
    exchangeable members (a U-statistic).

    Parameters
    ----------
    obs : array_like, shape (..., d)
    ens : array_like, shape (..., M, d)
    p : float, default 0.5
        Order of the variogram (> 0); 0.5 is the usual choice.
    weights : array_like, shape (d, d), optional
        Non-negative pair weights :math:`w_{ij}` (all ones by default).
    estimator : {"standard", "fair"}, default "standard"
    nan_policy : {"propagate", "omit"}, default "propagate"
        ``"omit"`` skips members with any NaN variable per row (a row with none left raises).
    ens_w : array_like, shape (..., M), optional
        Member weights (normalised per row; scoringrules' ``ens_w``): :math:`\frac1M\sum_m`
        becomes :math:`\sum_m w_m`, and the fair pair term is divided by
        :math:`1 - \sum_m w_m^2` instead of :math:`M(M-1)/M^2`.

    References
    ----------
    Scheuerer, M. & Hamill, T. M. (2015), Monthly Weather Review 143(4), 1321-1334.

    Examples
    --------
    >>> float(variogram_score([0.0, 1.0], [[0.0, 1.0], [0.0, 4.0]], p=1.0))
    4.5
    >>> float(variogram_score([0.0, 1.0], [[0.0, 1.0], [0.0, 4.0]], p=1.0, estimator="fair"))
    0.0
    """
    p = variogram_order(p)
    check_choice(estimator, "estimator", ("standard", "fair"))
    check_choice(nan_policy, "nan_policy", NAN_POLICIES)
    obs_f, ens_f, batch = mv_inputs(obs, ens)
    n, m, d = ens_f.shape
    pw = pair_weights(weights, d)
    u = None if ens_w is None else member_weights(ens_w, n, m, batch)
    ens_f, u = omit_nan_members(ens_f, u, nan_policy, multivariate=True)
    if estimator == "standard":
        return variogram_terms(obs_f, ens_f, u, p, pw)["mean"].reshape(batch)
    c = fair_denominator(u, m)
    t = variogram_terms(obs_f, ens_f, u, p, pw, ("near", "pair"))
    return (t["near"] - 0.5 * t["pair"] / c).reshape(batch)
