r"""Threshold-, outcome-weighted and vertically re-scaled CRPS of closed-form distributions.

The weight is the indicator :math:`w(z) = \mathbb 1\{a \le z \le b\}` of a window (the
ensemble versions in :mod:`.weighted` and :mod:`.crps_ensemble` use the same one). For a
forecast :math:`F` with density :math:`f`, write :math:`p = F(b) - F(a)` for the mass in the
window, :math:`F_{[a,b]}` for :math:`F` truncated to it and :math:`F^{c}_{[a,b]}` for
:math:`F` censored to it (the tail masses sit on the bounds). Then, with
:math:`v(y) = \min(\max(y, a), b)`,

.. math::

    \mathrm{twCRPS}(F, y) &= \int_a^b (F(z) - \mathbb 1\{y \le z\})^2 \,dz
                          = \mathrm{CRPS}(F^{c}_{[a,b]}, v(y)),\\
    \mathrm{owCRPS}(F, y) &= w(y)\, \mathrm{CRPS}(F_{[a,b]}, y),\\
    \mathrm{vrCRPS}(F, y) &= w(y)\, A(y) - \tfrac12 G + \big(A(0) - |y|\, w(y)\big)\big(p - w(y)\big),

where :math:`A(y) = E|X - y|\, w(X)` and :math:`G = E|X - X'|\, w(X) w(X')` for independent
:math:`X, X' \sim F` (Allen, Ginsbourger & Ziegel 2023, eqs. for the kernel form with
:math:`x_0 = 0`, as scoringrules' ``vrcrps_ensemble``). :math:`A` needs only the mass and
the partial first moment of the standard distribution on an interval; :math:`G` follows from
the truncated CRPS, :math:`G = 2p\,A(c) - 2p^2\,\mathrm{CRPS}(F_{[a,b]}, c)` for any
:math:`c` in the window (we take :math:`c = v(\mu)`, where the truncated mass sits, so the
two terms do not cancel). Masses of intervals above the centre are taken from upper tails,
so windows far in a tail keep their relative accuracy.

With :math:`a = -\infty, b = \infty` all three are the CRPS. scoringrules has these scores
for ensembles only; the closed forms here are checked against numerical integration of the
definitions and against the ensemble estimators at large ensemble sizes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from scorebench.core.lazy import lazy_module
from scorebench.metrics.scoring_rules._common import check_thresholds
from scorebench.metrics.scoring_rules._dist import prep, register_dist
from scorebench.metrics.scoring_rules.crps_truncated import (LOGISTIC_PARAMS, NORMAL_PARAMS, T_PARAMS,
                                                             gtclogistic_core, gtcnormal_core, gtct_core,
                                                             logis_partial_moment, t_partial_moment)

special = lazy_module("scipy.special")

__all__ = ["twcrps_normal", "owcrps_normal", "vrcrps_normal",
           "twcrps_logistic", "owcrps_logistic", "vrcrps_logistic",
           "twcrps_t", "owcrps_t", "vrcrps_t"]

ALLEN = "Allen, Ginsbourger & Ziegel (2023), SIAM/ASA JUQ 11(2):906-940"
HOLZMANN = "Holzmann & Klar (2017), Annals of Applied Statistics 11(4):2404-2431"
_WINDOW = {"a": -math.inf, "b": math.inf}


@dataclass(frozen=True)
class _Family:
    """What the weighted forms need of a location-scale family, standardised (symmetric,
    mean 0): ``tail(z, *shape)`` = P(Z <= -|z|), ``moment(z, *shape)`` = the partial first
    moment E[Z 1{Z <= z}] (even in z, 0 at +-inf), and its generalised truncated-censored
    CRPS ``gtc(obs, *params, lower, upper, lmass, umass, censored=False)`` in original units."""

    tail: Callable[..., np.ndarray]
    moment: Callable[..., np.ndarray]
    gtc: Callable[..., np.ndarray]

    def truncated(self, obs, params, a: float, b: float) -> np.ndarray:
        zero = np.zeros(np.shape(obs))
        return self.gtc(obs, *params, np.float64(a), np.float64(b), zero, zero)

    def censored(self, obs, params, a: float, b: float) -> np.ndarray:
        return self.gtc(obs, *params, np.float64(a), np.float64(b), None, None, censored=True)


def _normal_moment(z):
    with np.errstate(under="ignore"):
        return -np.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)


def _t_log_f0(df):
    """``log f_nu(0) = -log(nu)/2 - log B(1/2, nu/2)``, the constant :func:`t_partial_moment` takes."""
    return -0.5 * np.log(df) - special.betaln(0.5, df / 2.0)


_FAMILIES = {
    "normal": _Family(lambda z: special.ndtr(-np.abs(z)), _normal_moment, gtcnormal_core),
    "logistic": _Family(lambda z: special.expit(-np.abs(z)), logis_partial_moment, gtclogistic_core),
    "t": _Family(lambda z, df: special.stdtr(df, -np.abs(z)), lambda z, df: t_partial_moment(df, z, _t_log_f0(df)), gtct_core),
}


@dataclass(frozen=True)
class _Point:
    """A standardised point with its CDF, survival function and partial moment, each from
    one evaluation of the tail (exact on both sides of the centre)."""

    z: np.ndarray
    cdf: np.ndarray
    sf: np.ndarray
    moment: np.ndarray

    @classmethod
    def at(cls, fam: _Family, z: np.ndarray, shape: tuple) -> _Point:
        tail = fam.tail(z, *shape)
        return cls(z, np.where(z <= 0, tail, 1.0 - tail), np.where(z >= 0, tail, 1.0 - tail),
                   fam.moment(z, *shape))


def _mass(lo: _Point, hi: _Point) -> np.ndarray:
    """P(lo <= Z <= hi), from the upper tails when the interval lies above the centre."""
    return np.where(lo.z > 0, lo.sf - hi.sf, hi.cdf - lo.cdf)


def _abs_moment(fam: _Family, eta, alpha: _Point, beta: _Point, shape) -> np.ndarray:
    """``E|Z - eta| 1{alpha <= Z <= beta}`` for the standard variable ``Z``: the window split
    at ``k = clip(eta)``, each side as ``eta * mass -+ (partial moment difference)``."""
    k = _Point.at(fam, np.clip(eta, alpha.z, beta.z), shape)
    below = eta * _mass(alpha, k) - (k.moment - alpha.moment)
    above = (beta.moment - k.moment) - eta * _mass(k, beta)
    return below + above


def _vrcrps(fam: _Family, obs, loc, scale, shape, params, a: float, b: float) -> np.ndarray:
    """vrCRPS of the module docstring in the original units; ``params`` are the family's
    parameters in its CRPS functions' order (``shape`` the extra standard-form ones)."""
    alpha = _Point.at(fam, (a - loc) / scale, shape)
    beta = _Point.at(fam, (b - loc) / scale, shape)
    wy = ((obs >= a) & (obs <= b)).astype(np.float64)
    p = _mass(alpha, beta)
    near = scale * _abs_moment(fam, (obs - loc) / scale, alpha, beta, shape)
    absx = scale * _abs_moment(fam, -loc / scale, alpha, beta, shape)
    centre = np.clip(loc, a, b)
    pair = 2.0 * p * scale * _abs_moment(fam, (centre - loc) / scale, alpha, beta, shape)
    pair = pair - 2.0 * p * p * fam.truncated(centre, params, a, b)
    return wy * near - 0.5 * pair + (absx - np.abs(obs) * wy) * (p - wy)


def _make(rule: str, family: str, spec: dict, proper: str, citation: str, doc: str) -> Callable:
    """Register and return ``{rule}crps_{family}`` with signature
    ``(obs, *spec parameters, a=-inf, b=inf)``, built from the family's pieces."""
    fam = _FAMILIES[family]
    name = f"{rule}crps_{family}"

    def fn(obs: Any, *args: Any, a: float = -math.inf, b: float = math.inf, **kwargs: Any) -> np.ndarray:
        a, b = check_thresholds(a, b)
        values = dict(zip(spec, args), **kwargs)
        obs, *params = prep(obs, spec, {p: values.get(p) for p in spec})
        if rule == "tw":
            return fam.censored(np.clip(obs, a, b), params, a, b)
        if rule == "ow":
            return np.where((obs >= a) & (obs <= b), fam.truncated(obs, params, a, b), 0.0)
        shape, (loc, scale) = (params[:1], params[1:]) if family == "t" else ((), params)
        return _vrcrps(fam, obs, loc, scale, shape, params, a, b)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    fn.__module__ = __name__
    return register_dist(name, spec, "real", citation, params=_WINDOW, proper=proper,
                         tested_against=("closed form vs 40-digit quadrature of the definition (mpmath)", 1e-12))(fn)


_PARAMETERS = """    Parameters
    ----------
    obs : array_like
    {params}
    a, b : float
        Window of the weight (``a < b``), bounds included.
"""

#: The example shared by the tw and vr templates: without a window the score is the CRPS.
_EQUALS_CRPS = """    >>> from scorebench.metrics.scoring_rules import {crps}
    >>> bool(np.isclose({name}(0.3, {args}), {crps}(0.3, {args})))
    True
"""

_TW_DOC = r"""Threshold-weighted CRPS of the {dist} for :math:`w(z) = \mathbb 1\{{a \le z \le b\}}`.

    :math:`\int_a^b (F(z) - \mathbb 1\{{y \le z\}})^2 dz`, computed as the CRPS of the
    forecast censored to :math:`[a, b]` at :math:`\min(\max(y, a), b)` (the module docstring).
    Proper, not strictly: outcomes and forecasts outside the window are not told apart.

{parameters}
    Examples
    --------
""" + _EQUALS_CRPS + r"""    >>> round(float({name}(-5.0, {args}, a=0.0)), 6) == round(float({name}(0.0, {args}, a=0.0)), 6)
    True
    """

_OW_DOC = r"""Outcome-weighted CRPS of the {dist} for :math:`w(z) = \mathbb 1\{{a \le z \le b\}}`.

    :math:`w(y)\,\mathrm{{CRPS}}(F_{{[a, b]}}, y)`: the CRPS of the forecast truncated to the
    window when the outcome is in it, 0 otherwise (Holzmann & Klar 2017). Proper, not
    strictly.

{parameters}
    Examples
    --------
    >>> float({name}(5.0, {args}, a=-1.0, b=1.0))
    0.0
    >>> bool(np.isclose({name}(0.3, {args}), {name}(0.3, {args}, a=-np.inf)))
    True
    """

_VR_DOC = r"""Vertically re-scaled CRPS of the {dist} for :math:`w(z) = \mathbb 1\{{a \le z \le b\}}`.

    .. math:: w(y) E|X - y| w(X) - \tfrac12 E|X - X'| w(X) w(X')
              + (E|X| w(X) - |y| w(y)) (E w(X) - w(y))

    (Allen, Ginsbourger & Ziegel 2023; the module docstring gives the closed form). With
    :math:`a = -\infty, b = \infty` it is the CRPS. Proper, not strictly.

{parameters}
    Examples
    --------
""" + _EQUALS_CRPS + """    """

_DISTS = {
    "normal": ("normal distribution :math:`N(\\mu, \\sigma^2)`", NORMAL_PARAMS,
               "mu, sigma : array_like\n        Mean and standard deviation (> 0).", "0.0, 1.0", "crps_normal"),
    "logistic": ("logistic distribution", LOGISTIC_PARAMS,
                 "mu, s : array_like\n        Location and scale (> 0).", "0.0, 1.0", "crps_logistic"),
    "t": ("location-scale Student t distribution", T_PARAMS,
          "df, mu, sigma : array_like\n        Degrees of freedom (> 1), location and scale (> 0).",
          "3.0, 0.0, 1.0", "crps_t"),
}


def _register_all() -> dict[str, Callable]:
    made = {}
    for family, (dist, spec, params, args, crps) in _DISTS.items():
        for rule, template, proper, citation in (("tw", _TW_DOC, "proper", ALLEN),
                                                 ("ow", _OW_DOC, "proper", HOLZMANN + "; " + ALLEN),
                                                 ("vr", _VR_DOC, "proper", ALLEN)):
            name = f"{rule}crps_{family}"
            doc = template.format(dist=dist, parameters=_PARAMETERS.format(params=params), args=args,
                                  crps=crps, name=name)
            made[name] = _make(rule, family, spec, proper, citation, doc)
    return made


_MADE = _register_all()
twcrps_normal, owcrps_normal, vrcrps_normal = (_MADE[f"{r}crps_normal"] for r in ("tw", "ow", "vr"))
twcrps_logistic, owcrps_logistic, vrcrps_logistic = (_MADE[f"{r}crps_logistic"] for r in ("tw", "ow", "vr"))
twcrps_t, owcrps_t, vrcrps_t = (_MADE[f"{r}crps_t"] for r in ("tw", "ow", "vr"))
