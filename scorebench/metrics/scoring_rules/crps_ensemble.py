r"""Scores of ensemble (sample) forecasts: CRPS, threshold-weighted CRPS, KDE log score, DSS.

Axis convention: ``ens`` has the members on the **last axis**, shape ``(..., M)``;
``obs`` has the batch shape ``(...)`` (or broadcasts to it).

Two CRPS estimators are offered, as clearly named options:

``"standard"``
    the CRPS of the empirical distribution of the members (scoringrules' ``"nrg"``,
    ``"qd"`` and ``"int"``; properscoring's ``crps_ensemble``):

    .. math:: \widehat{\mathrm{CRPS}} = \frac1M \sum_i |x_i - y|
              - \frac{1}{2M^2} \sum_{i,j} |x_i - x_j| .

    As an estimate of the CRPS of the distribution the members are drawn from it is biased
    upward by :math:`\mathbb E|X - X'| / (2M)`, so it favours larger ensembles.

``"fair"``
    the unbiased ("fair") estimator of Ferro (2014) (scoringrules' ``"fair"`` and
    ``"pwm"``), dividing the pair term by :math:`M(M-1)` instead of :math:`M^2`; use it
    to compare ensembles of different sizes.

Both are computed in :math:`O(M \log M)` per row: for members sorted ascending,
:math:`\sum_{i,j}|x_i - x_j| = 2\sum_i (2i - M - 1)\,x_{(i)}`. Rows are processed in
cache-sized chunks; the members are shifted by the observation before sorting (the pair
term is shift-invariant), which also keeps large offsets from cancelling.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from scorebench.core.lazy import lazy_module
from scorebench.core.errors import InputError
from scorebench.core.registry import register
from scorebench.core.table_schema import Option
from scorebench.core.validation import as_float_array, check_choice, check_positive, describe_rows
from scorebench.metrics.scoring_rules._common import (FAMILY, GNEITING_RAFTERY, check_thresholds, chunk_slices,
                                                      run_engine)
from scorebench.metrics.scoring_rules._members import fair_denominator, member_weights, omit_nan_members
from scorebench.metrics.scoring_rules.inputs import broadcast_rows, ensemble_inputs

special = lazy_module("scipy.special")

__all__ = ["crps_ensemble", "twcrps_ensemble", "log_score_ensemble", "dawid_sebastiani_ensemble",
           "ESTIMATORS"]

ESTIMATORS = ("standard", "fair")
FERRO = "Ferro (2014), QJRMS 140:1917-1923"
_CRPS_CHUNK_BYTES = 1 << 18  # 256 KiB per working buffer: stays in L2 while sorted



def _crps_engine(obs: np.ndarray, ens: np.ndarray, fair: bool,
                 bounds: tuple[float, float] | None = None) -> np.ndarray:
    """CRPS of rows of ``ens (N, M)`` against ``obs (N,)``; ``bounds`` clips both first."""
    n, m = ens.shape
    if fair and m < 2:
        raise InputError("ens: the fair estimator needs at least 2 members per row")
    weights = (2.0 * np.arange(1, m + 1) - m - 1.0) / (m * (m - 1.0) if fair else m * m)
    ones = np.full(m, 1.0 / m)
    out = np.empty(n)
    rows = max(1, _CRPS_CHUNK_BYTES // (8 * m))
    buf = np.empty((min(rows, n), m))
    if bounds is not None:
        obs = np.clip(obs, *bounds)
    for start in range(0, n, rows):
        stop = min(n, start + rows)
        d = buf[: stop - start]
        if bounds is None:
            np.subtract(ens[start:stop], obs[start:stop, None], out=d)
        else:
            np.clip(ens[start:stop], *bounds, out=d)
            d -= obs[start:stop, None]
        d.sort(axis=-1)
        pair = d @ weights
        np.abs(d, out=d)
        np.subtract(d @ ones, pair, out=out[start:stop])
    return out


def _crps_engine_w(obs: np.ndarray, ens: np.ndarray, w: np.ndarray, fair: bool) -> np.ndarray:
    r"""Weighted CRPS of rows ``ens (N, M)`` with weights ``w (N, M)`` summing to 1 per row.

    For members sorted ascending with cumulative weights :math:`C_i`,
    :math:`\tfrac12\sum_{i,j} w_i w_j |x_i - x_j| = \sum_i w_i x_{(i)} (2C_i - w_i - 1)`;
    the fair estimator divides it by :math:`1 - \sum_i w_i^2`.
    """
    c = fair_denominator(w, ens.shape[1]) if fair else 1.0
    out = np.empty(obs.shape)
    for sl in chunk_slices(obs.size, 4 * 8 * ens.shape[1], budget=_CRPS_CHUNK_BYTES * 4):
        d = ens[sl] - obs[sl, None]
        order = np.argsort(d, axis=1)
        d = np.take_along_axis(d, order, axis=1)
        ws = np.take_along_axis(w[sl], order, axis=1)
        half_pair = np.einsum("nm,nm->n", ws * d, 2.0 * np.cumsum(ws, axis=1) - ws - 1.0)
        out[sl] = np.einsum("nm,nm->n", ws, np.abs(d)) - half_pair / (c if np.isscalar(c) else c[sl])
    return out


@register("crps_ensemble", family=FAMILY, kind="ensemble", inputs=("y", "ens"),
          higher_is_better=False, bounds=(0.0, math.inf), proper="strict", per_row=True,
          params={"estimator": "standard", "nan_policy": "propagate", "ens_w": None},
          citation=GNEITING_RAFTERY + "; " + FERRO, tested_against=(('scoringrules 0.7 (numpy backend)', 1e-12), ('properscoring 0.1', 1e-12),))
def crps_ensemble(obs: Any, ens: Any, *, estimator: str = "standard", nan_policy: str = "propagate",
                  ens_w: Any = None) -> np.ndarray:
    r"""CRPS of an ensemble forecast, with the standard or the fair estimator.

    .. math:: \mathrm{CRPS}_{\text{standard}} = \frac1M \sum_{i=1}^M |x_i - y|
              - \frac{1}{2M^2} \sum_{i,j} |x_i - x_j|, \qquad
              \mathrm{CRPS}_{\text{fair}} = \frac1M \sum_{i=1}^M |x_i - y|
              - \frac{1}{2M(M-1)} \sum_{i,j} |x_i - x_j| .

    Parameters
    ----------
    obs : array_like, shape (...)
        Observations.
    ens : array_like, shape (..., M)
        Ensemble members on the last axis.
    estimator : {"standard", "fair"}, default "standard"
        ``"standard"``: the CRPS of the empirical distribution of the members (biased
        upward by :math:`\mathbb E|X-X'|/(2M)` for the underlying distribution).
        ``"fair"``: Ferro's unbiased estimator; compare ensembles of different sizes with it.
    nan_policy : {"propagate", "omit"}, default "propagate"
        ``"omit"`` scores each row on its non-NaN members only (properscoring's behaviour;
        a row without members, or a NaN observation, scores NaN); ``"propagate"`` gives
        NaN for any row with a NaN member. In a table, ``"omit"`` needs the table-level
        ``nan_policy="propagate"`` so that such rows reach the metric.
    ens_w : array_like, shape (..., M), optional
        Non-negative member weights :math:`w_i` (normalised to sum to 1 per row; scoringrules'
        ``ens_w``). The forecast is then :math:`\sum_i w_i \delta_{x_i}`:
        :math:`\sum_i w_i |x_i - y| - \frac{1}{2c}\sum_{i,j} w_i w_j |x_i - x_j|` with
        :math:`c = 1` (standard) or :math:`1 - \sum_i w_i^2` (fair); equal weights give the
        unweighted scores. With ``nan_policy="omit"`` NaN members get weight 0
        (a row left without members, or with one under the fair estimator, scores NaN).

    Returns
    -------
    ndarray, shape (...)
        One score per observation. ``NaN`` in a row gives ``NaN`` for that row.

    References
    ----------
    Gneiting & Raftery (2007), JASA 102(477); Ferro, C. A. T. (2014). Fair scores for
    ensemble forecasts. *QJRMS* 140, 1917-1923.

    Examples
    --------
    >>> crps_ensemble(0.0, [-1.0, 1.0]).tolist()
    0.5
    >>> crps_ensemble(0.0, [-1.0, 1.0], estimator="fair").tolist()
    0.0
    >>> crps_ensemble(0.0, [-1.0, np.nan, 1.0], nan_policy="omit").tolist()
    0.5
    >>> crps_ensemble(0.0, [-1.0, 1.0, 3.0], ens_w=[1.0, 1.0, 0.0]).tolist()
    0.5
    """
    check_choice(estimator, "estimator", ESTIMATORS)
    check_choice(nan_policy, "nan_policy", ("propagate", "omit"))
    obs_f, ens_f, batch = ensemble_inputs(obs, ens, check_inf=False)
    if ens_w is not None:
        w = member_weights(ens_w, obs_f.size, ens_f.shape[1], batch)
        if estimator == "fair":
            fair_denominator(w, ens_f.shape[1])  # weights on a single member: refused, as M = 1 is
        ens_f, w = omit_nan_members(ens_f, w, nan_policy, empty="nan")
        if estimator == "fair" and nan_policy == "omit":  # one member left after omission: NaN, as unweighted
            w = np.where((np.einsum("nm,nm->n", w, w) >= 1.0 - 1e-12)[:, None], np.nan, w)
        return run_engine(_crps_engine_w, obs_f, ens_f, batch, w, estimator == "fair")
    if nan_policy == "omit" and np.isnan(ens_f).any():
        return run_engine(_omit_nan_members, obs_f, ens_f, batch, estimator == "fair")
    return run_engine(_crps_engine, obs_f, ens_f, batch, estimator == "fair")


def _omit_nan_members(obs: np.ndarray, ens: np.ndarray, fair: bool) -> np.ndarray:
    """:func:`_crps_engine` on each row's non-NaN members: rows are grouped by their
    member count, NaNs sorted to the end of each row and cut off."""
    counts = (~np.isnan(ens)).sum(axis=-1)
    out = np.full(obs.shape, np.nan)
    for m in np.unique(counts):
        if m == 0 or (fair and m < 2):
            continue  # no members (or too few for the fair estimator): NaN
        rows = np.flatnonzero(counts == m)
        members = np.sort(ens[rows], axis=-1)[:, :m]  # np.sort puts NaN last
        out[rows] = _crps_engine(obs[rows], members, fair)
    return out


@register("twcrps_ensemble", family=FAMILY, kind="ensemble", inputs=("y", "ens"),
          higher_is_better=False, bounds=(0.0, math.inf), proper="proper", per_row=True,
          params={"a": -math.inf, "b": math.inf, "estimator": "standard", "nan_policy": "propagate",
                  "ens_w": None},
          citation="Gneiting & Ranjan (2011), JBES 29(3):411-422; Allen et al. (2023), SIAM/ASA JUQ 11(2)", tested_against=('scoringrules 0.7 (numpy backend)', 1e-10))
def twcrps_ensemble(obs: Any, ens: Any, *, a: float = -math.inf, b: float = math.inf,
                    estimator: str = "standard", nan_policy: str = "propagate", ens_w: Any = None) -> np.ndarray:
    r"""Threshold-weighted CRPS of an ensemble for the weight :math:`w(z) = \mathbb 1\{a < z < b\}`.

    .. math:: \mathrm{twCRPS}(F, y) = \int (F(z) - \mathbb 1\{y \le z\})^2\, w(z)\, dz
              = \mathrm{CRPS}(F \circ v^{-1}, v(y)), \qquad v(z) = \min(\max(z, a), b),

    i.e. the CRPS of the members and the observation after the chaining function
    :math:`v` (Allen et al. 2023). It emphasises the region of interest (e.g. extremes
    above ``a``); it is proper, and strictly proper only for the forecast restricted to
    :math:`(a, b)`.

    Parameters
    ----------
    obs : array_like, shape (...)
    ens : array_like, shape (..., M)
    a, b : float
        Lower and upper thresholds of the weight (``a < b``).
    estimator : {"standard", "fair"}
    nan_policy, ens_w
        As for :func:`crps_ensemble`, applied to the clipped members.

    Examples
    --------
    >>> twcrps_ensemble(0.0, [-1.0, 1.0], a=0.0).tolist()
    0.25
    """
    check_choice(estimator, "estimator", ESTIMATORS)
    a, b = check_thresholds(a, b)
    obs_f, ens_f, batch = ensemble_inputs(obs, ens, check_inf=False)
    if ens_w is not None or nan_policy != "propagate":
        chained = lambda x: np.clip(x, a, b)  # noqa: E731  (v of the docstring)
        return crps_ensemble(chained(obs_f.reshape(batch)), chained(ens_f.reshape(*batch, -1)),
                             estimator=estimator, nan_policy=nan_policy, ens_w=ens_w)
    return run_engine(_crps_engine, obs_f, ens_f, batch, estimator == "fair", bounds=(a, b))


def _check_spread(spread: np.ndarray, why: str) -> None:
    """Refuse rows (of the flattened batch) whose ensemble ``spread`` is zero."""
    zero = spread <= 0
    if zero.any():
        raise InputError(f"ens: members are all equal in {describe_rows(zero)}; {why}")


def silverman_bandwidth(ens: np.ndarray) -> np.ndarray:
    r"""Silverman's rule of thumb per row: :math:`1.06 \min(\hat\sigma, \mathrm{IQR}/1.34) M^{-1/5}`.

    :math:`\hat\sigma` uses ``ddof=1`` and the IQR linear interpolation, as scoringrules does.
    """
    m = ens.shape[-1]
    sd = np.std(ens, axis=-1, ddof=1) if m > 1 else np.zeros(ens.shape[:-1])
    q75, q25 = np.quantile(ens, [0.75, 0.25], axis=-1)
    return 1.06 * np.minimum(sd, (q75 - q25) / 1.34) * m ** (-0.2)


def kde_bandwidth(bandwidth: Any, ens: np.ndarray, batch: tuple[int, ...]) -> np.ndarray:
    """Per-row kernel bandwidths ``(N,)`` for ``ens (N, M)``: Silverman's rule, or the given ones (> 0)."""
    if bandwidth is None:
        h = silverman_bandwidth(ens)
        _check_spread(h, "so no bandwidth can be estimated; pass bandwidth=")
        return h
    h = as_float_array(bandwidth, "bandwidth", check_inf=True)
    check_positive(h, "bandwidth")
    return broadcast_rows(h, "bandwidth", batch)


@register("log_score_ensemble", family=FAMILY, kind="ensemble", inputs=("y", "ens"),
          higher_is_better=False, bounds=(-math.inf, math.inf), proper=None, per_row=True,
          params={"bandwidth": Option("bandwidth", float, None, "kernel bandwidth (None: Silverman's rule)")},
          citation="Krüger et al. (2021), Int. J. Forecasting 37(1):23-40; Silverman (1986)", tested_against=('scoringrules 0.7 (numpy backend)', 1e-10))
def log_score_ensemble(obs: Any, ens: Any, *, bandwidth: Any = None) -> np.ndarray:
    r"""Log score of the Gaussian kernel density estimate of an ensemble.

    .. math:: \mathrm{LS} = -\log \Bigl(\frac{1}{M} \sum_{i=1}^M \frac1h\,
              \varphi\Bigl(\frac{y - x_i}{h}\Bigr)\Bigr),

    with bandwidth :math:`h` per row (Silverman's rule, :func:`silverman_bandwidth`, by
    default). Evaluated with log-sum-exp, so observations far from every member get a
    large finite score rather than ``inf``. The log score is strictly proper for
    densities; this plug-in estimate from a finite sample is not registered as proper.

    Parameters
    ----------
    obs : array_like, shape (...)
    ens : array_like, shape (..., M)
    bandwidth : float or array_like, shape (...), optional
        Kernel bandwidth(s) > 0. Rows whose members are all equal have no default bandwidth.

    Examples
    --------
    >>> round(float(log_score_ensemble(0.0, [-1.0, 1.0], bandwidth=1.0)), 6)
    1.418939
    """
    obs_f, ens_f, batch = ensemble_inputs(obs, ens)
    h = kde_bandwidth(bandwidth, ens_f, batch)
    m = ens_f.shape[-1]
    out = np.empty(obs_f.shape)
    for sl in chunk_slices(out.size, 3 * 8 * m):  # bounded working memory
        z = (obs_f[sl, None] - ens_f[sl]) / h[sl, None]
        out[sl] = special.logsumexp(-0.5 * z * z, axis=-1)
    out -= np.log(m * h) + 0.5 * math.log(2 * math.pi)
    return (-out).reshape(batch)


@register("dawid_sebastiani_ensemble", family=FAMILY, kind="ensemble", inputs=("y", "ens"),
          higher_is_better=False, bounds=(-math.inf, math.inf), proper="proper", per_row=True,
          params={"ddof": 1}, citation="Dawid & Sebastiani (1999), Annals of Statistics 27(1):65-81", tested_against=('scoringrules 0.7 (numpy backend)', 1e-10))
def dawid_sebastiani_ensemble(obs: Any, ens: Any, *, ddof: int = 1) -> np.ndarray:
    r"""Dawid-Sebastiani score from the ensemble mean and standard deviation.

    .. math:: \mathrm{DSS} = \Bigl(\frac{y - \bar x}{s}\Bigr)^2 + 2\log s,
              \qquad s^2 = \frac{1}{M - \text{ddof}} \sum_i (x_i - \bar x)^2 .

    Examples
    --------
    >>> round(float(dawid_sebastiani_ensemble(1.0, [-1.0, 1.0])), 6)
    1.193147
    """
    obs_f, ens_f, batch = ensemble_inputs(obs, ens)
    m = ens_f.shape[-1]
    if not isinstance(ddof, (int, np.integer)) or not 0 <= ddof < m:
        raise InputError(f"ddof: expected an integer in [0, {m - 1}] for {m} members, got {ddof!r}")
    mean = ens_f.mean(axis=-1)
    sd = ens_f.std(axis=-1, ddof=ddof)
    _check_spread(sd, "the Dawid-Sebastiani score needs a positive spread")
    z = (obs_f - mean) / sd
    return (z * z + 2.0 * np.log(sd)).reshape(batch)
