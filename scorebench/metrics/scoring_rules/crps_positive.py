r"""Closed-form CRPS of distributions on the positive half-line.

The censored shifted gamma (``csg0``, precipitation post-processing), the log-Laplace and
the log-logistic distribution. The log families need :math:`\sigma < 1` for a finite mean.

References: Scheuerer & Hamill (2015), Monthly Weather Review 143(11):4578-4596 (csg0);
Jordan, Krüger & Lerch (2019), J. Stat. Software 90(12) (log-Laplace, log-logistic).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scorebench.core.lazy import lazy_module

from scorebench.metrics.scoring_rules._common import SCIPY, SCORINGRULES
from scorebench.metrics.scoring_rules.crps_closed import JKL
from scorebench.metrics.scoring_rules._dist import prep, register_dist
from scorebench.metrics.scoring_rules._incomplete import gammainc_next, upper_gamma

special = lazy_module("scipy.special")

__all__ = ["crps_csg0", "crps_loglaplace", "crps_loglogistic"]

SH = "Scheuerer & Hamill (2015), Monthly Weather Review 143(11):4578-4596"
_CSG0 = {"shape": ("positive", None), "rate": ("positive", None), "shift": ("nonnegative", 0.0)}


# What every CRPS here is tested against (tests/metrics/scoring_rules/).
_TESTED = ((SCORINGRULES, 1e-13), (SCIPY, 1e-13))


@register_dist("crps_csg0", _CSG0, "[0, inf)", SH, tested_against=_TESTED)
def crps_csg0(obs: Any, shape: Any, rate: Any, shift: Any = 0.0) -> np.ndarray:
    r"""CRPS of the censored shifted gamma distribution, :math:`X = \max(0, Z - \delta)` with
    :math:`Z \sim \Gamma(\alpha, \beta)` (shape, rate) and shift :math:`\delta \ge 0`.

    With :math:`F_a` the gamma CDF of shape :math:`a` and rate :math:`\beta`,
    :math:`\tilde y = y + \delta` and :math:`y \ge 0`,

    .. math:: \mathrm{CRPS} = \tilde y(2F_\alpha(\tilde y) - 1)
              - \frac{\alpha}{\beta\pi}B(\tfrac12, \alpha + \tfrac12)(1 - F_{2\alpha}(2\delta))
              + \frac{\alpha}{\beta}\bigl(1 + 2F_\alpha(\delta)F_{\alpha+1}(\delta)
              - F_\alpha(\delta)^2 - 2F_{\alpha+1}(\tilde y)\bigr) - \delta F_\alpha(\delta)^2;

    below the support (:math:`y < 0`) the score is :math:`\mathrm{CRPS}(0) - y`.

    Examples
    --------
    >>> round(float(crps_csg0(0.7, 0.5, 2.0, 0.3)), 6)
    0.541104
    """
    obs, shape, rate, shift = prep(obs, _CSG0, dict(shape=shape, rate=rate, shift=shift))
    yp = np.maximum(obs, 0.0)
    yt = yp + shift
    f_y = special.gammainc(shape, rate * yt)
    lg1 = special.gammaln(shape + 1.0)
    f1_y = gammainc_next(shape, rate * yt, f_y, lg1)
    f_d = special.gammainc(shape, rate * shift)
    f1_d = gammainc_next(shape, rate * shift, f_d, lg1)
    tail2 = upper_gamma(2.0 * shape, 2.0 * rate * shift)
    beta_term = _half_beta(shape, lg1) / math.pi
    mean = shape / rate
    out = (yt * (2.0 * f_y - 1.0) - mean * beta_term * tail2
           + mean * (1.0 + 2.0 * f_d * f1_d - f_d * f_d - 2.0 * f1_y) - shift * f_d * f_d)
    return out + (yp - obs)


#: Above this shape ``B(1/2, a + 1/2)`` comes from ``betaln``: the two log-gamma values
#: it is otherwise the difference of would cancel (~eps log Gamma(a) absolute).
_HALF_BETA_MAX_SHAPE = 10.0


def _half_beta(a: np.ndarray, lg1: np.ndarray) -> np.ndarray:
    """``B(1/2, a + 1/2) = sqrt(pi) Gamma(a + 1/2) / Gamma(a + 1)`` (``lg1 = log Gamma(a + 1)``),
    ``betaln`` for large ``a``, where the log-gamma difference would cancel."""
    out = np.array(np.exp(0.5 * math.log(math.pi) + special.gammaln(a + 0.5) - lg1))
    far = a > _HALF_BETA_MAX_SHAPE
    if far.any():
        out[far] = np.exp(special.betaln(0.5, a[far] + 0.5))
    return out


def log_location_scale(obs: Any, spec: dict, mulog: Any, sigmalog: Any, *,
                       outside: float | None = None) -> tuple[np.ndarray, ...]:
    r"""Checked ``obs, mulog, sigmalog`` (``spec`` as for :func:`prep`) of a distribution of
    :math:`\log X` with location :math:`\mu` and scale :math:`\sigma`, and for the outcome
    ``pos`` (:math:`y > 0`) and the standardised log outcome
    :math:`w = (\log y - \mu)/\sigma` (computed with :math:`\log y = 0` where :math:`y \le 0`,
    or set to ``outside`` there when it is given).

    Shared by the CRPS and log scores of the log-Laplace, log-logistic and log-normal
    distributions; returns ``(obs, mulog, sigmalog, pos, log_y, w)``.
    """
    obs, mulog, sigmalog = prep(obs, spec, dict(mulog=mulog, sigmalog=sigmalog))
    pos = obs > 0
    log_y = np.log(np.where(pos, obs, 1.0))
    w = (log_y - mulog) / sigmalog
    return obs, mulog, sigmalog, pos, log_y, w if outside is None else np.where(pos, w, outside)


_LOG = {"mulog": ("real", None), "sigmalog": ("(0, 1)", None)}


@register_dist("crps_loglaplace", _LOG, "(0, inf)", JKL, tested_against=_TESTED)
def crps_loglaplace(obs: Any, mulog: Any, sigmalog: Any) -> np.ndarray:
    r"""CRPS of the log-Laplace distribution (:math:`\log X` Laplace with location
    :math:`\mu` and scale :math:`\sigma \in (0, 1)`).

    With :math:`w = (\log y - \mu)/\sigma`, :math:`F(y) = \tfrac12 e^{w}` below
    :math:`e^\mu` and :math:`1 - \tfrac12 e^{-w}` above,

    .. math:: \mathrm{CRPS} = y(2F(y) - 1) + e^\mu\Bigl(\frac{\sigma}{4 - \sigma^2} + A(y)\Bigr),

    :math:`A = \frac{1}{1 + \sigma}(1 - (2F)^{1+\sigma})` below :math:`e^\mu`,
    :math:`A = \frac{-1}{1 - \sigma}(1 - (2(1 - F))^{1-\sigma})` above (written with
    ``expm1``), and :math:`F = 0`, :math:`A = 1/(1 + \sigma)` for :math:`y \le 0`.

    Examples
    --------
    >>> round(float(crps_loglaplace(3.0, 0.1, 0.9)), 6)
    1.162021
    """
    obs, mulog, sigmalog, _, _, w = log_location_scale(obs, _LOG, mulog, sigmalog, outside=-np.inf)
    low = w < 0
    wl, wh = np.minimum(w, 0.0), np.maximum(w, 0.0)
    cdf = np.where(low, 0.5 * np.exp(wl), 1.0 - 0.5 * np.exp(-wh))
    a = np.where(low, -np.expm1((1.0 + sigmalog) * wl) / (1.0 + sigmalog),
                 np.expm1(-(1.0 - sigmalog) * wh) / (1.0 - sigmalog))
    # y (2F - 1) above the median is y (1 - e^{-w}); exp(mu) A is O(exp(mu)): no cancellation.
    return obs * (2.0 * cdf - 1.0) + np.exp(mulog) * (sigmalog / (4.0 - sigmalog ** 2) + a)


@register_dist("crps_loglogistic", _LOG, "(0, inf)", JKL, tested_against=_TESTED)
def crps_loglogistic(obs: Any, mulog: Any, sigmalog: Any) -> np.ndarray:
    r"""CRPS of the log-logistic distribution (:math:`\log X` logistic with location
    :math:`\mu` and scale :math:`\sigma \in (0, 1)`).

    With :math:`F(y) = \Lambda((\log y - \mu)/\sigma)` and :math:`I` the regularised
    incomplete beta function,

    .. math:: \mathrm{CRPS} = y(2F(y) - 1) - e^\mu B(1 + \sigma, 1 - \sigma)
              \bigl(2 I_{F(y)}(1 + \sigma, 1 - \sigma) + \sigma - 1\bigr),

    with :math:`2I - 1` taken as :math:`1 - 2I_{1-F}(1 - \sigma, 1 + \sigma)` from the
    exact upper tail :math:`1 - F = \Lambda(-w)`.

    Examples
    --------
    >>> round(float(crps_loglogistic(3.0, 0.1, 0.9)), 6)
    1.132953
    """
    obs, mulog, sigmalog, _, _, w = log_location_scale(obs, _LOG, mulog, sigmalog, outside=-np.inf)
    cdf, sf = special.expit(w), special.expit(-w)
    upper = w > 0
    # One betainc per element (on the side where its argument is the small tail), not two.
    s, up = np.broadcast_to(sigmalog, w.shape).ravel(), upper.ravel()
    two_i_minus_1 = np.empty(w.size)
    two_i_minus_1[up] = 1.0 - 2.0 * special.betainc(1.0 - s[up], 1.0 + s[up], sf.ravel()[up])
    two_i_minus_1[~up] = 2.0 * special.betainc(1.0 + s[~up], 1.0 - s[~up], cdf.ravel()[~up]) - 1.0
    two_i_minus_1 = two_i_minus_1.reshape(w.shape)
    # B(1 + s, 1 - s) = Gamma(1 + s) Gamma(1 - s) = pi s / sin(pi s) (reflection formula)
    b = np.pi * sigmalog / np.sin(np.pi * sigmalog)
    return obs * (2.0 * cdf - 1.0) - np.exp(mulog) * b * (two_i_minus_1 + sigmalog)
