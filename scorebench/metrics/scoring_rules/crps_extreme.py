r"""Closed-form CRPS of extreme-value and exponential-type distributions.

The generalised extreme value (GEV) and generalised Pareto (GPD) distributions, the
exponential with a point mass at its lower bound (``expM``) and the two-piece exponential.
All are location-scale families, :math:`\mathrm{CRPS}(F_{\mu,\sigma}, y) = \sigma\,
\mathrm{CRPS}(F, (y - \mu)/\sigma)`. The CRPS needs a finite mean: shape :math:`\xi < 1`.

References: Friederichs & Thorarinsdottir (2012), Environmetrics 23(7):579-594 (GEV and
GPD); Jordan, Krüger & Lerch (2019), J. Stat. Software 90(12).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scorebench.core.lazy import lazy_module

from scorebench.metrics.scoring_rules._incomplete import upper_gamma
from scorebench.metrics.scoring_rules.crps_closed import JKL
from scorebench.metrics.scoring_rules._dist import prep, register_dist

special = lazy_module("scipy.special")

__all__ = ["crps_gev", "crps_gpd", "crps_expm", "crps_2pexponential"]

FT = "Friederichs & Thorarinsdottir (2012), Environmetrics 23(7):579-594; " + JKL
_EULER = 0.57721566490153286060651209008240243
_LN2 = math.log(2.0)
_GEV = {"shape": ("(-inf, 1)", None), "mu": ("real", 0.0), "sigma": ("positive", 1.0)}
#: Below this |shape| the GEV closed form cancels (terms ~1/shape): interpolate instead.
_GEV_XI_SMALL = 1e-4


def _gev_std(s: np.ndarray, xi: np.ndarray) -> np.ndarray:
    """CRPS of the standard GEV (shape ``xi != 0``) at ``s``, the published formula."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        t = 1.0 + xi * s
        inside = t > 0
        x = np.where(inside, np.exp(-np.log(np.where(inside, t, 1.0)) / xi), 0.0)  # -log F
        below = ~inside & (xi > 0)  # left of the support: F = 0
        above = ~inside & (xi < 0)  # right of the support: F = 1
        f = np.where(below, 0.0, np.where(above, 1.0, np.exp(-x)))
        gam = special.gamma(1.0 - xi)  # shared by the three terms below
        g_in = (upper_gamma(1.0 - xi, x, np.abs(xi) >= _GEV_XI_CHEAP_Q) * gam - f) / xi
        g = np.where(below, 0.0, np.where(above, (gam - 1.0) / xi, g_in))
        const = (1.0 - (2.0 - 2.0 ** xi) * gam) / xi
        return s * (2.0 * f - 1.0) - 2.0 * g - const


#: Below this ``|shape|`` ``Q`` comes from ``gammaincc`` only: ``G`` divides
#: ``Gamma Q - F`` by the shape, and for small shapes ``gammaincc``'s rounding follows
#: ``F = exp(-x)``'s (at ``a = 1`` they agree), where ``1 - gammainc`` would not.
_GEV_XI_CHEAP_Q = 0.1


def _gumbel_std(s: np.ndarray) -> np.ndarray:
    """CRPS of the standard Gumbel distribution at ``s``."""
    with np.errstate(over="ignore"):
        log_f = -np.exp(-s)
    return -s - 2.0 * special.expi(log_f) + _EULER - _LN2


@register_dist("crps_gev", _GEV, "support of the GEV", FT,
               tested_against=(('scoringrules 0.7 (numpy backend)', 1e-13),
                                 ('scipy (distributions / numerical integration)', 1e-13),))
def crps_gev(obs: Any, shape: Any, mu: Any = 0.0, sigma: Any = 1.0) -> np.ndarray:
    r"""CRPS of the generalised extreme value distribution (shape :math:`\xi < 1`).

    With :math:`s = (y - \mu)/\sigma`, :math:`F` the standard GEV CDF
    :math:`\exp(-(1 + \xi s)^{-1/\xi})` and :math:`\Gamma_u` the upper incomplete gamma
    function, for :math:`\xi \ne 0`

    .. math:: \frac{\mathrm{CRPS}}{\sigma} = s(2F(s) - 1) - 2G(s)
              - \frac{1 - (2 - 2^\xi)\Gamma(1 - \xi)}{\xi},
              \qquad G(s) = \frac{\Gamma_u(1 - \xi, -\log F(s)) - F(s)}{\xi}

    inside the support (:math:`G = 0` left of it, :math:`(\Gamma(1-\xi) - 1)/\xi` right of
    it), and for the Gumbel case :math:`\xi = 0`,
    :math:`-s - 2\,\mathrm{Ei}(\log F(s)) + \gamma - \log 2`. For
    :math:`0 < |\xi| < 10^{-4}` the terms of order :math:`1/\xi` cancel, so the score is
    the quadratic through :math:`\xi \in \{-10^{-4}, 0, 10^{-4}\}` (error below
    :math:`10^{-11}` relative).

    Examples
    --------
    >>> round(float(crps_gev(0.3, 0.1)), 6)
    0.292471
    >>> bool(abs(crps_gev(0.3, 1e-9) - crps_gev(0.3, 0.0)) < 1e-8)
    True
    """
    obs, shape, mu, sigma = prep(obs, _GEV, dict(shape=shape, mu=mu, sigma=sigma))
    s = (obs - mu) / sigma
    small = np.abs(shape) < _GEV_XI_SMALL
    near = small & (np.abs(s) < 0.5 / _GEV_XI_SMALL)
    zero = shape == 0
    out = np.array(_gev_std(s, np.where(zero, np.nan, shape)))  # writable, also for 0-d input
    if zero.any():  # the Gumbel form (one expi) only where the shape is exactly 0
        out[zero] = _gumbel_std(s[zero])
    if near.any():
        h = _GEV_XI_SMALL
        sn, xn = s[near], shape[near]
        fm, f0, fp = _gev_std(sn, -h), _gumbel_std(sn), _gev_std(sn, h)
        # Lagrange quadratic through (-h, fm), (0, f0), (h, fp).
        r = xn / h
        out[near] = f0 + r * (fp - fm) / 2.0 + r * r * (fp - 2.0 * f0 + fm) / 2.0
    return sigma * out


_GPD = {"shape": ("(-inf, 1)", None), "mu": ("real", 0.0), "sigma": ("positive", 1.0),
        "mass": ("[0, 1]", 0.0)}


@register_dist("crps_gpd", _GPD, "[mu, inf) (or [mu, mu - sigma/shape] for shape < 0)", FT,
               tested_against=(('scoringrules 0.7 (numpy backend)', 1e-13),
                                 ('scipy (distributions / numerical integration)', 1e-13),))
def crps_gpd(obs: Any, shape: Any, mu: Any = 0.0, sigma: Any = 1.0, mass: Any = 0.0) -> np.ndarray:
    r"""CRPS of the generalised Pareto distribution (shape :math:`\xi < 1`) with a point mass
    :math:`M` at its lower bound :math:`\mu`.

    With :math:`\omega = (y - \mu)/\sigma` and :math:`F` the standard GPD CDF,
    :math:`1 - F(\omega) = (1 + \xi\omega)_+^{-1/\xi}` (:math:`e^{-\omega}` at
    :math:`\xi = 0`) for :math:`\omega \ge 0`,

    .. math:: \frac{\mathrm{CRPS}}{\sigma} = |\omega| - \frac{2(1 - M)}{1 - \xi}
              \bigl(1 - (1 - F(\omega))^{1-\xi}\bigr) + \frac{(1 - M)^2}{2 - \xi},

    evaluated with ``expm1``/``log1p`` so small :math:`\xi` and :math:`\omega` keep their
    digits.

    Examples
    --------
    >>> round(float(crps_gpd(0.3, 0.0)), 6) == round(float(np.abs(0.3) - 2 * (1 - np.exp(-0.3)) + 0.5), 6)
    True
    >>> round(float(crps_gpd(0.3, 0.5, 0.0, 1.0, 0.2)), 6)
    0.309275
    """
    obs, shape, mu, sigma, mass = prep(obs, _GPD, dict(shape=shape, mu=mu, sigma=sigma, mass=mass))
    w = (obs - mu) / sigma
    wp = np.maximum(w, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = shape * wp
        inside = t > -1.0
        # log(1 - F) = -log1p(xi w) / xi, -> -w as xi -> 0 (log1p(t)/xi keeps digits there).
        log_sf = np.where(shape == 0, -wp, -np.log1p(np.where(inside, t, 0.0)) / np.where(shape == 0, 1.0, shape))
        bracket = np.where(inside, -np.expm1((1.0 - shape) * log_sf), 1.0)
    a = 1.0 - mass
    return sigma * (np.abs(w) - 2.0 * a * bracket / (1.0 - shape) + a * a / (2.0 - shape))


_EXPM = {"mass": ("[0, 1]", 0.0), "mu": ("real", 0.0), "sigma": ("positive", 1.0)}


@register_dist("crps_expm", _EXPM, "[mu, inf)", JKL,
               tested_against=(('scoringrules 0.7 (numpy backend)', 1e-13),
                                 ('scipy (distributions / numerical integration)', 1e-13),))
def crps_expm(obs: Any, mass: Any = 0.0, mu: Any = 0.0, sigma: Any = 1.0) -> np.ndarray:
    r"""CRPS of the exponential distribution (location :math:`\mu`, scale :math:`\sigma`) with
    a point mass :math:`M` at :math:`\mu` (scoringrules' ``crps_exponentialM``).

    .. math:: \frac{\mathrm{CRPS}}{\sigma} = |\omega| - 2(1 - M)F(\omega) + \frac{(1 - M)^2}{2},
              \qquad F(\omega) = (1 - e^{-\omega})\mathbb 1\{\omega > 0\}.

    Examples
    --------
    >>> round(float(crps_expm(0.4, 0.2, 0.0, 1.0)), 6)
    0.192512
    """
    obs, mass, mu, sigma = prep(obs, _EXPM, dict(mass=mass, mu=mu, sigma=sigma))
    w = (obs - mu) / sigma
    cdf = -np.expm1(-np.maximum(w, 0.0))
    a = 1.0 - mass
    return sigma * (np.abs(w) - 2.0 * a * cdf + 0.5 * a * a)


_TWO_PIECE = {"scale1": ("positive", None), "scale2": ("positive", None), "mu": ("real", None)}


@register_dist("crps_2pexponential", _TWO_PIECE, "real", JKL,
               tested_against=(('scoringrules 0.7 (numpy backend)', 1e-13),
                                 ('scipy (distributions / numerical integration)', 1e-13),))
def crps_2pexponential(obs: Any, scale1: Any, scale2: Any, mu: Any) -> np.ndarray:
    r"""CRPS of the two-piece exponential distribution (scale ``scale1`` below ``mu``,
    ``scale2`` above; density :math:`e^{-|x - \mu|/\sigma_i}/(\sigma_1 + \sigma_2)`).

    With :math:`z = |y - \mu|` and :math:`i` the side of :math:`\mu` that :math:`y` is on,

    .. math:: \mathrm{CRPS} = z + \frac{2\sigma_i^2}{\sigma_1 + \sigma_2}(e^{-z/\sigma_i} - 1)
              + \frac{\sigma_1^3 + \sigma_2^3}{2(\sigma_1 + \sigma_2)^2}.

    Examples
    --------
    >>> round(float(crps_2pexponential(0.8, 3.0, 1.4, 0.0)), 6)
    1.180385
    """
    obs, scale1, scale2, mu = prep(obs, _TWO_PIECE, dict(scale1=scale1, scale2=scale2, mu=mu))
    d = obs - mu
    z = np.abs(d)
    total = scale1 + scale2
    side = np.where(d < 0, scale1, scale2)
    c3 = (scale1 ** 3 + scale2 ** 3) / (2.0 * total ** 2)
    return z + 2.0 * side * side / total * np.expm1(-z / side) + c3
