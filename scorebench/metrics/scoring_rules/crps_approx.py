r"""CRPS from quantiles, from a CDF by quadrature, and its threshold (Brier) decomposition.

* :func:`crps_quantile` approximates the CRPS of a forecast given by quantiles at levels
  :math:`\tau_1, \dots, \tau_Q` by the mean pinball loss (Berrisch & Ziel, 2023),
  :math:`\frac{2}{Q}\sum_q \rho_{\tau_q}(y - q_{\tau_q})`, the Riemann sum of
  :math:`\mathrm{CRPS} = 2\int_0^1 \rho_\tau(y - F^{-1}(\tau))\,d\tau`; it converges to the
  CRPS for equally spaced levels :math:`\tau_q = q/(Q + 1)` as :math:`Q \to \infty`.
* :func:`crps_quadrature` integrates :math:`\int (F(x) - \mathbb 1\{x \ge y\})^2 dx`
  numerically for any CDF (properscoring's ``crps_quadrature``).
* :func:`threshold_brier_score` is the Brier score of the ensemble's probability
  :math:`P(X \le t)` for the event :math:`y \le t` at each threshold :math:`t`; integrated
  over all thresholds it is the CRPS (Gneiting & Ranjan, 2011).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from scorebench.core.lazy import lazy_module

from scorebench.core.errors import InputError
from scorebench.core.registry import register
from scorebench.core.table_schema import Option
from scorebench.core.validation import as_float_array, check_positive_number
from scorebench.metrics.scoring_rules._common import FAMILY, GNEITING_RAFTERY
from scorebench.metrics.scoring_rules.quantile import pinball_loss
from scorebench.metrics.scoring_rules.inputs import ensemble_inputs, quantile_inputs

integrate = lazy_module("scipy.integrate")

__all__ = ["crps_quantile", "crps_quadrature", "threshold_brier_score"]

BZ = "Berrisch & Ziel (2023), J. Econometrics 237(2):105221"
GR = "Gneiting & Ranjan (2011), JBES 29(3):411-422"


@register("crps_quantile", family=FAMILY, kind="quantile", inputs=("y", "q", "levels"),
          higher_is_better=False, bounds=(0.0, math.inf), proper="proper", per_row=True, citation=BZ,
          tested_against=(('scoringrules 0.7 (numpy backend)', 1e-13),
                            ('scipy (distributions / numerical integration)', 1e-13),))
def crps_quantile(y: Any, q: Any, levels: Any) -> np.ndarray:
    r"""CRPS approximated from quantile forecasts (scoringrules' ``crps_quantile``).

    .. math:: \mathrm{qCRPS} = \frac{2}{Q}\sum_{q=1}^Q \rho_{\tau_q}(y - q_{\tau_q}),
              \qquad \rho_\tau(u) = u(\tau - \mathbb 1\{u < 0\}).

    It is a Riemann sum of the quantile form of the CRPS, so it approximates the CRPS
    only for many, evenly spread levels (it omits the tails beyond the extreme levels:
    with levels :math:`1/(Q+1), \dots, Q/(Q+1)` the error is :math:`O(1/Q)`). It is proper
    for the quantiles it scores, not strictly proper for the distribution.

    Parameters
    ----------
    y : array_like, shape (...)
        Observations.
    q : array_like, shape (..., Q)
        Predicted quantiles, one per level on the last axis.
    levels : array_like, shape (Q,)
        Strictly increasing levels in (0, 1).

    References
    ----------
    Berrisch, J. & Ziel, F. (2023). CRPS learning. *J. Econometrics* 237(2), 105221.

    Examples
    --------
    >>> float(crps_quantile(0.0, [-1.0, 0.0, 1.0], [0.25, 0.5, 0.75]))
    0.3333333333333333
    """
    y, q, lv = quantile_inputs(y, q, levels)
    return 2.0 * np.mean(pinball_loss(np.asarray(y)[..., None], q, lv), axis=-1)


def _bounds(cdf: Callable[[float], float], y: float, tol: float) -> tuple[float, float]:
    """Where the CDF is within ``tol`` of 0 and of 1, by doubling outward from ``y``."""
    lo, hi, step = y - 1.0, y + 1.0, 1.0
    while cdf(lo) >= tol:
        step *= 2.0
        lo = y - step
        if step > 1e300:
            raise InputError("crps_quadrature: the CDF does not approach 0 to the left; give xmin")
    step = 1.0
    while cdf(hi) <= 1.0 - tol:
        step *= 2.0
        hi = y + step
        if step > 1e300:
            raise InputError("crps_quadrature: the CDF does not approach 1 to the right; give xmax")
    return lo, hi


def _crps_quad_one(y: float, cdf: Callable[[float], float], xmin: float | None, xmax: float | None,
                   tol: float) -> float:
    if xmin is None or xmax is None:
        lo, hi = _bounds(cdf, y, tol)
        xmin = lo if xmin is None else xmin
        xmax = hi if xmax is None else xmax
    if cdf(xmin) >= tol or cdf(xmax) <= 1.0 - tol:
        side = "xmin" if cdf(xmin) >= tol else "xmax"
        raise InputError(f"crps_quadrature: the CDF is not within tol={tol} of "
                         f"{'0' if side == 'xmin' else '1'} at {side}; widen the bounds")
    total = 0.0
    for a, b, f in ((xmin, y, lambda x: cdf(x) ** 2), (y, xmax, lambda x: (1.0 - cdf(x)) ** 2)):
        if b > a:
            val, err = integrate.quad(f, a, b, limit=200)
            if err >= 0.5 * tol:
                raise InputError(f"crps_quadrature: the integral over [{a}, {b}] did not reach "
                                 f"tol={tol} (error estimate {err:.3g})")
            total += val
    # Outside [xmin, xmax] the integrand is 1 between y and the nearer bound.
    return total


def crps_quadrature(obs: Any, cdf: Callable[[float], float] | Sequence[Callable[[float], float]], *,
                    xmin: float | None = None, xmax: float | None = None, tol: float = 1e-6) -> np.ndarray:
    r"""CRPS of any forecast CDF by numerical quadrature (properscoring's ``crps_quadrature``).

    .. math:: \mathrm{CRPS} = \int_{x_{\min}}^{y} F(x)^2\,dx + \int_y^{x_{\max}} (1 - F(x))^2\,dx,

    with ``scipy.integrate.quad``. The bounds default to points, found by doubling
    outward from ``y``, where :math:`F < \mathrm{tol}` and :math:`F > 1 - \mathrm{tol}`;
    a CDF that misses ``tol`` at the bounds, or an integral whose error estimate reaches
    ``tol / 2``, raises :class:`~scorebench.core.errors.InputError`.

    Parameters
    ----------
    obs : array_like, shape (N,) or scalar
        Observations.
    cdf : callable or sequence of callables
        ``cdf(x) -> float``, the same for every observation, or one per observation
        (e.g. ``[stats.norm(m, s).cdf for m, s in ...]``).
    xmin, xmax : float, optional
        Integration bounds (the CDF must be within ``tol`` of 0 and 1 there).
    tol : float, default 1e-6

    Returns
    -------
    ndarray, shape of ``obs``

    References
    ----------
    Gneiting & Raftery (2007), JASA 102(477); properscoring (The Climate Corporation).

    Examples
    --------
    >>> from scipy import stats
    >>> round(float(crps_quadrature(0.0, stats.norm(0, 1).cdf)), 6)
    0.233695
    """
    tol = check_positive_number(tol, "tol")
    y = as_float_array(obs, "obs", check_inf=True)
    flat = y.ravel()
    cdfs = [cdf] * flat.size if callable(cdf) else list(cdf)
    if len(cdfs) != flat.size or not all(callable(c) for c in cdfs):
        raise InputError(f"cdf: expected a callable or {flat.size} callables (one per observation)")
    out = np.array([np.nan if np.isnan(v) else _crps_quad_one(float(v), c, xmin, xmax, tol)
                    for v, c in zip(flat, cdfs)])
    return out.reshape(y.shape)


def _quadrature_table(arrays: Mapping[str, np.ndarray], *, cdf: Any = None, xmin: Any = None,
                      xmax: Any = None, tol: float = 1e-6) -> np.ndarray:
    if cdf is None:
        raise InputError("crps_quadrature: give the forecast CDF, metric('crps_quadrature', cdf=...)")
    return crps_quadrature(arrays["y"], cdf, xmin=xmin, xmax=xmax, tol=tol)


register("crps_quadrature", family=FAMILY, kind="parametric", inputs=("y",), higher_is_better=False,
         bounds=(0.0, math.inf), proper="strict", per_row=True,
         params={"cdf": None, "xmin": None, "xmax": None, "tol": 1e-6}, table_fn=_quadrature_table,
         citation=GNEITING_RAFTERY + "; properscoring",
         tested_against=(('properscoring 0.1', 1e-13),
                           ('scipy (distributions / numerical integration)', 1e-13),))(crps_quadrature)


def threshold_brier_score(obs: Any, ens: Any, threshold: Any) -> np.ndarray:
    r"""Brier scores of an ensemble for the events :math:`y \le t` at thresholds :math:`t`
    (properscoring's ``threshold_brier_score``).

    .. math:: \mathrm{BS}_t = \bigl(\hat F(t) - \mathbb 1\{y \le t\}\bigr)^2, \qquad
              \hat F(t) = \frac1M \#\{i : x_i \le t\},

    ignoring ``NaN`` members (a row of only ``NaN`` members, or a ``NaN`` observation,
    scores ``NaN``). Summed over a fine grid of thresholds times its spacing it
    approximates the CRPS.

    Parameters
    ----------
    obs : array_like, shape (...)
    ens : array_like, shape (..., M)
        Ensemble members on the last axis.
    threshold : float or 1-D array_like, shape (T,)

    Returns
    -------
    ndarray, shape (...) for a scalar threshold, else (..., T)

    References
    ----------
    Gneiting, T. & Ranjan, R. (2011). Comparing density forecasts using threshold- and
    quantile-weighted scoring rules. *JBES* 29(3), 411-422.

    Examples
    --------
    >>> threshold_brier_score(0.5, [0.0, 1.0, 2.0, 3.0], [0.0, 1.0]).tolist()
    [0.0625, 0.25]
    """
    t = as_float_array(threshold, "threshold", check_inf=True)
    if t.ndim > 1:
        raise InputError(f"threshold: expected a scalar or a 1-D array, got shape {t.shape}")
    if np.isnan(t).any():
        raise InputError("threshold: expected numbers, got NaN")
    y, x, batch = ensemble_inputs(obs, ens)
    valid = ~np.isnan(x)
    count = valid.sum(axis=-1)
    xs = np.sort(np.where(valid, x, np.inf), axis=-1)  # NaN members sort last and never count
    tt = np.atleast_1d(t)
    below = np.stack([np.sum(xs <= v, axis=-1) for v in tt], axis=-1) if x.shape[0] else np.zeros((0, tt.size))
    with np.errstate(invalid="ignore", divide="ignore"):
        prob = below / count[:, None]
    event = (y[:, None] <= tt[None, :]).astype(float)
    out = (prob - event) ** 2
    out[np.isnan(y) | (count == 0)] = np.nan
    out = out.reshape(*batch, tt.size)
    return out[..., 0] if t.ndim == 0 else out


def _tbs_table(arrays: Mapping[str, np.ndarray], *, threshold: Any = None) -> np.ndarray:
    if threshold is None:
        raise InputError("threshold_brier_score: give the threshold(s), e.g. "
                         "metric('threshold_brier_score', threshold=[0, 1])")
    out = threshold_brier_score(arrays["y"], arrays["ens"], threshold)
    return out if np.ndim(threshold) == 0 else out.mean(axis=-1)


register("threshold_brier_score", family=FAMILY, kind="ensemble", inputs=("y", "ens"),
         higher_is_better=False, bounds=(0.0, 1.0), proper="proper", per_row=True,
         params={"threshold": Option("threshold", float, None, "the threshold z of 1{y <= z}")},
         table_fn=_tbs_table, citation=GR,
         tested_against=('properscoring 0.1', 1e-13))(threshold_brier_score)
