r"""Closed-form CRPS (and log / Dawid-Sebastiani scores) of parametric forecasts.

The continuous ranked probability score of a forecast distribution :math:`F` for the
outcome :math:`y` is

.. math:: \mathrm{CRPS}(F, y) = \int_{-\infty}^{\infty} (F(x) - \mathbb 1\{x \ge y\})^2 \,dx
          = \mathbb E|X - y| - \tfrac12 \mathbb E|X - X'| ,

with :math:`X, X' \sim F` independent. It is strictly proper on distributions with a
finite mean, has the unit of :math:`y`, and is 0 only for a point mass at :math:`y`.

Every function takes the observations first, then the distribution parameters; all
arguments broadcast together and the result has the broadcast shape. In a
``parametric`` table the parameters are columns named as the function's arguments
(``mu``, ``sigma``, ``s``, ``b``, ``rate``, ``shape``, ``mulog``, ``sigmalog``,
``low``, ``high``, ``a``, ``df``); the mixture of normals reads ``mu<k>``, ``sigma<k>``
and ``w<k>`` columns.

References: Gneiting & Raftery (2007); Jordan, Krüger & Lerch (2019), "Evaluating
probabilistic forecasts with scoringRules", J. Stat. Software 90(12), whose formulae
these are.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from scorebench.core.lazy import lazy_module
from scorebench.core.errors import InputError
from scorebench.core.registry import register
from scorebench.core.table_schema import Option
from scorebench.core.validation import as_float_array, broadcast_arrays, check_positive
from scorebench.metrics.scoring_rules._common import FAMILY, GNEITING_RAFTERY, SCIPY, SCORINGRULES, check_batch
from scorebench.metrics.scoring_rules._dist import prep, register_dist
from scorebench.metrics.scoring_rules._incomplete import betainc_next
from scorebench.core.docstrings import fill_doc
from scorebench.metrics.scoring_rules.docs import SECTIONS

special = lazy_module("scipy.special")

__all__ = [
    "crps_normal", "crps_logistic", "crps_laplace", "crps_exponential", "crps_gamma",
    "crps_lognormal", "crps_uniform", "crps_beta", "crps_t", "crps_mixnorm",
    "log_score_normal", "dawid_sebastiani_score",
]

JKL = "Jordan, Krüger & Lerch (2019), J. Stat. Software 90(12)"
#: ``tested_against`` of the closed forms checked against scoringrules and properscoring,
#: and against scoringrules and scipy's distributions (integrals of the CDF).
_VS_PROPERSCORING = ((SCORINGRULES, 1e-10), ("properscoring 0.1", 1e-10))
_VS_SCIPY = ((SCORINGRULES, 1e-10), (SCIPY, 1e-12))
_SQRT_PI = math.sqrt(math.pi)


def _norm_pdf(z: np.ndarray) -> np.ndarray:
    # scipy.special rather than scipy.stats keeps `import scorebench` light.
    return np.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)


def _prep(obs: Any, *, positive: tuple[str, ...] = (), **params: Any) -> list[np.ndarray]:
    """``obs`` and the parameters as broadcast float64 arrays; the ``positive`` ones must be > 0."""
    arrays = {"obs": as_float_array(obs, "obs", check_inf=True)}
    arrays.update({name: as_float_array(v, name, check_inf=True) for name, v in params.items()})
    arrays = dict(zip(arrays, broadcast_arrays(**arrays)))
    for name in positive:
        check_positive(arrays[name], name)
    return list(arrays.values())


def _standardised(obs: Any, mu: Any, scale: Any, scale_name: str = "sigma") -> tuple[np.ndarray, np.ndarray]:
    """``z = (y - mu) / scale`` and ``scale`` of a location-scale forecast, broadcast
    together; ``scale`` (named ``scale_name`` in errors) must be > 0."""
    obs, mu, scale = _prep(obs, mu=mu, **{scale_name: scale}, positive=(scale_name,))
    return (obs - mu) / scale, scale


def _parametric(name: str, columns: tuple[str, ...], citation: str, params: dict | None = None, *,
                tested_against: Any):
    return register(name, family=FAMILY, kind="parametric", inputs=("y", *columns),
                    higher_is_better=False, bounds=(0.0, math.inf), proper="strict", per_row=True,
                    params=params, citation=citation, tested_against=tested_against)


@_parametric("crps_normal", ("mu", "sigma"), GNEITING_RAFTERY, tested_against=((SCORINGRULES, 1e-10), ("properscoring 0.1", 1e-13)))
def crps_normal(obs: Any, mu: Any, sigma: Any) -> np.ndarray:
    r"""CRPS of the normal distribution :math:`N(\mu, \sigma^2)`.

    .. math:: \mathrm{CRPS} = \sigma\Bigl[z\,(2\Phi(z) - 1) + 2\varphi(z) - \tfrac{1}{\sqrt\pi}\Bigr],
              \qquad z = \frac{y - \mu}{\sigma}.

    Parameters
    ----------
    obs : array_like
        Observations.
    mu, sigma : array_like
        Mean and standard deviation (``sigma > 0``); broadcast with ``obs``.

    Returns
    -------
    %(crps_returns)s

    References
    ----------
    Gneiting, T. & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and
    estimation. *JASA* 102(477), 359-378.

    Examples
    --------
    >>> round(float(crps_normal(0.0, 0.0, 1.0)), 6)
    0.233695
    """
    z, sigma = _standardised(obs, mu, sigma)
    return sigma * (z * special.erf(z / math.sqrt(2.0)) + 2.0 * _norm_pdf(z) - 1.0 / _SQRT_PI)


@_parametric("crps_logistic", ("mu", "s"), JKL, tested_against=_VS_PROPERSCORING)
def crps_logistic(obs: Any, mu: Any, s: Any) -> np.ndarray:
    r"""CRPS of the logistic distribution with location :math:`\mu` and scale :math:`s`.

    .. math:: \mathrm{CRPS} = s\,\bigl[z - 2 \log \Lambda(z) - 1\bigr], \qquad z = \frac{y - \mu}{s},

    with :math:`\Lambda` the standard logistic CDF (evaluated as ``log_expit`` for accuracy
    in the tails).

    Examples
    --------
    >>> round(float(crps_logistic(0.0, 0.0, 1.0)), 6)
    0.386294
    """
    z, s = _standardised(obs, mu, s, "s")
    return s * (z - 2.0 * special.log_expit(z) - 1.0)


@_parametric("crps_laplace", ("mu", "b"), JKL, tested_against=_VS_PROPERSCORING)
def crps_laplace(obs: Any, mu: Any, b: Any) -> np.ndarray:
    r"""CRPS of the Laplace distribution with location :math:`\mu` and scale :math:`b`.

    .. math:: \mathrm{CRPS} = b\,\bigl[|z| + e^{-|z|} - \tfrac34\bigr], \qquad z = \frac{y - \mu}{b}.

    Examples
    --------
    >>> float(crps_laplace(0.0, 0.0, 1.0))
    0.25
    """
    z, b = _standardised(obs, mu, b, "b")
    return b * (np.abs(z) + np.exp(-np.abs(z)) - 0.75)


@_parametric("crps_exponential", ("rate",), JKL, tested_against=_VS_SCIPY)
def crps_exponential(obs: Any, rate: Any) -> np.ndarray:
    r"""CRPS of the exponential distribution with rate :math:`\lambda` (support :math:`[0, \infty)`).

    .. math:: \mathrm{CRPS} = |y| - \frac{2 F(y)}{\lambda} + \frac{1}{2\lambda},
              \qquad F(y) = (1 - e^{-\lambda y})\,\mathbb 1\{y > 0\}.

    Examples
    --------
    >>> float(crps_exponential(0.0, 2.0))
    0.25
    """
    obs, rate = _prep(obs, rate=rate, positive=("rate",))
    cdf = -np.expm1(-rate * np.maximum(obs, 0.0))
    return np.abs(obs) - 2.0 * cdf / rate + 0.5 / rate


@_parametric("crps_gamma", ("shape", "rate"), JKL, tested_against=_VS_SCIPY)
def crps_gamma(obs: Any, shape: Any, rate: Any) -> np.ndarray:
    r"""CRPS of the gamma distribution with shape :math:`\alpha` and rate :math:`\beta`.

    .. math:: \mathrm{CRPS} = y\,(2F_\alpha(y) - 1) - \frac{\alpha}{\beta}(2F_{\alpha+1}(y) - 1)
              - \frac{1}{\beta\,B(\tfrac12, \alpha)},

    where :math:`F_a` is the CDF of the gamma distribution with shape :math:`a` and rate
    :math:`\beta` (0 for :math:`y \le 0`).

    Examples
    --------
    >>> round(float(crps_gamma(1.0, 1.0, 1.0)), 6) == round(float(crps_exponential(1.0, 1.0)), 6)
    True
    """
    obs, shape, rate = _prep(obs, shape=shape, rate=rate, positive=("shape", "rate"))
    x = rate * np.maximum(obs, 0.0)
    f0 = special.gammainc(shape, x)
    f1 = special.gammainc(shape + 1.0, x)
    inv_beta = _gamma_ratio_half(shape) / _SQRT_PI  # 1 / B(1/2, shape)
    return obs * (2.0 * f0 - 1.0) - shape / rate * (2.0 * f1 - 1.0) - inv_beta / rate


def _gamma_ratio_half(a: np.ndarray) -> np.ndarray:
    """``Gamma(a + 1/2) / Gamma(a)``, accurate for every ``a > 0``.

    ``special.beta(0.5, a)`` loses up to 9 digits near ``a = 1e6``; below 100 the gamma
    functions are exact enough, above it the asymptotic series of the log ratio is.
    """
    a = np.asarray(a, dtype=float)
    small = np.minimum(a, 100.0)
    direct = special.gamma(small + 0.5) / special.gamma(small)
    big = np.maximum(a, 100.0)
    series = np.sqrt(big) * np.exp(-1.0 / (8.0 * big) + 1.0 / (192.0 * big ** 3) - 1.0 / (640.0 * big ** 5))
    return np.where(a < 100.0, direct, series)


@_parametric("crps_lognormal", ("mulog", "sigmalog"), "Baran & Lerch (2015), QJRMS 141:2289-2299; " + JKL, tested_against=_VS_SCIPY)
def crps_lognormal(obs: Any, mulog: Any, sigmalog: Any) -> np.ndarray:
    r"""CRPS of the log-normal distribution (:math:`\log X \sim N(\mu, \sigma^2)`).

    .. math:: \mathrm{CRPS} = y\,(2\Phi(w) - 1) - 2 e^{\mu + \sigma^2/2}
              \Bigl[\Phi(w - \sigma) - \Phi\bigl(-\tfrac{\sigma}{\sqrt 2}\bigr)\Bigr],
              \qquad w = \frac{\log y - \mu}{\sigma},

    with :math:`\Phi(w) = \Phi(w - \sigma) = 0` for :math:`y \le 0`. The bracket is the
    published :math:`\Phi(w - \sigma) + \Phi(\sigma/\sqrt 2) - 1`, evaluated as a difference
    of normal CDFs in logs, so large ``sigmalog`` keeps full precision (the sum form returns
    0 for ``crps_lognormal(1, 0, 12)``, whose value is about :math:`4.0 \cdot 10^{14}`).

    Examples
    --------
    >>> round(float(crps_lognormal(1.0, 0.0, 1.0)), 6)
    0.267405
    >>> float(crps_lognormal(1.0, 0.0, 12.0))  # doctest: +ELLIPSIS
    399981265934...
    """
    obs, mulog, sigmalog = _prep(obs, mulog=mulog, sigmalog=sigmalog, positive=("sigmalog",))
    positive = obs > 0
    w = np.where(positive, (np.log(np.where(positive, obs, 1.0)) - mulog) / sigmalog, -np.inf)
    # Phi(w - s) + Phi(s/sqrt2) - 1 written as Phi(w - s) - Phi(-s/sqrt2): the sum cancels to
    # nothing once s is large (Phi(s/sqrt2) rounds to 1); the difference, taken in logs, keeps
    # every digit and lets exp(mu + s^2/2) and the tiny difference meet without overflow.
    sign, log_diff = log_ndtr_diff(w - sigmalog, -sigmalog / math.sqrt(2.0))
    with np.errstate(over="ignore"):
        second = sign * np.exp(mulog + 0.5 * sigmalog ** 2 + log_diff)
    return obs * (2.0 * special.ndtr(w) - 1.0) - 2.0 * second


def log_ndtr_diff(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(sign, log|Phi(a) - Phi(b)|)`` without cancellation, also far in either tail."""
    sign = np.where(a >= b, 1.0, -1.0)
    hi, lo = np.maximum(a, b), np.minimum(a, b)
    # Both in the upper tail: Phi(hi) - Phi(lo) = Phi(-lo) - Phi(-hi), both small and exact.
    upper = lo > 0
    hi, lo = np.where(upper, -lo, hi), np.where(upper, -hi, lo)
    log_hi, log_lo = special.log_ndtr(hi), special.log_ndtr(lo)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_diff = log_hi + np.log1p(-np.exp(log_lo - log_hi))
    return sign, np.where(hi == lo, -np.inf, log_diff)


_UNIFORM = {"low": ("real", None), "high": ("real", None), "lmass": ("[0, 1]", 0.0), "umass": ("[0, 1]", 0.0)}


@register_dist("crps_uniform", _UNIFORM, "[low, high]", JKL, tested_against=((SCORINGRULES, 1e-13), (SCIPY, 1e-12)))
def crps_uniform(obs: Any, low: Any, high: Any, lmass: Any = 0.0, umass: Any = 0.0) -> np.ndarray:
    r"""CRPS of the uniform distribution on :math:`[l, u]`, optionally with point masses
    :math:`L` at :math:`l` and :math:`U` at :math:`u` (the rest, :math:`1 - L - U`, uniform).

    With :math:`z = (y - l)/(u - l)` and :math:`F(z) = \min(\max(z, 0), 1)`,

    .. math:: \frac{\mathrm{CRPS}}{u - l} = |z - F(z)| + F(z)^2 (1 - L - U) - F(z)(1 - 2L)
              + \frac{(1 - L - U)^2}{3} + (1 - L)U.

    Examples
    --------
    >>> round(float(crps_uniform(0.5, 0.0, 1.0)), 6)
    0.083333
    >>> round(float(crps_uniform(0.5, 0.0, 1.0, 0.1, 0.2)), 6)
    0.118333
    """
    obs, low, high, lmass, umass = prep(obs, _UNIFORM, dict(low=low, high=high, lmass=lmass, umass=umass))
    width = high - low
    check_positive(width, "high - low")
    m = 1.0 - lmass - umass
    if (m < 0).any():
        raise InputError(f"lmass + umass: expected a total point mass <= 1, got {float((1.0 - m)[m < 0][0])!r}")
    z = (obs - low) / width
    f = np.clip(z, 0.0, 1.0)
    return width * (np.abs(z - f) + f * f * m - f * (1.0 - 2.0 * lmass) + m * m / 3.0 + (1.0 - lmass) * umass)


def _lgamma1p(x: np.ndarray) -> np.ndarray:
    """``log Gamma(1 + x)`` with full relative precision also for tiny ``x`` (Taylor series
    with zeta values below 0.2, where ``gammaln(1 + x)`` loses the digits of ``x``)."""
    shape = np.shape(x)
    x = np.atleast_1d(np.asarray(x, dtype=float))
    out = special.gammaln(1.0 + x)
    small = x < 0.2
    if small.any():
        k = np.arange(2, 40)
        coef = (-1.0) ** k * special.zeta(k) / k
        xs = x[small]
        out[small] = -np.euler_gamma * xs + np.sum(coef * xs[:, None] ** k, axis=-1)
    return out.reshape(shape)


def _lgamma_shift(x: np.ndarray, d: np.ndarray) -> np.ndarray:
    """``log Gamma(x + d) - log Gamma(x)`` for ``x >= 1``, by its Taylor series in ``d``
    (polygamma coefficients) when ``d <= 0.01``, where the direct difference cancels."""
    ds = np.minimum(d, 0.01)
    series = np.zeros(np.broadcast(x, d).shape)
    term = np.ones_like(series)
    for n in range(1, 10):
        term = term * ds / n
        series = series + term * special.polygamma(n - 1, x)
    return np.where(d <= 0.01, series, special.gammaln(x + d) - special.gammaln(x))


def _beta_half_gini_ratio(a: np.ndarray, b: np.ndarray, log_beta: np.ndarray | None = None) -> np.ndarray:
    """``1 - 2 B(2a, 2b) / (a B(a, b)^2)`` without cancellation for small shapes.

    The log of the ratio is ``log(b / (a + b))`` plus log-gamma terms that are small when a
    shape ``s = min(a, b)`` is: grouped as ``lgamma1p(2s) - 2 lgamma1p(s)`` and shifts of
    ``log Gamma`` by ``s`` and ``2s``, each evaluated by series, the ``-log s`` parts of the
    beta functions cancel exactly instead of in floating point (which cost ~1e-7 relative
    at ``s = 1e-8``). ``log_beta`` is ``log B(a, b)`` when the caller has it.
    """
    shape = np.broadcast(a, b).shape
    a, b = (np.atleast_1d(v).ravel() for v in np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(b, dtype=float)))
    log_beta = special.betaln(a, b) if log_beta is None else np.ravel(log_beta)
    log_ratio = math.log(2.0) + special.betaln(2 * a, 2 * b) - np.log(a) - 2 * log_beta
    out = -np.expm1(log_ratio)
    # The direct form loses ~eps |log s| / s relative for the smaller shape s: below 1e-3
    # (> 1e-12) the log-gamma terms are regrouped so the -log s parts cancel exactly.
    tiny = np.minimum(a, b) < 1e-3
    if tiny.any():
        at, bt = a[tiny], b[tiny]
        small, large = np.minimum(at, bt), np.maximum(at, bt)
        rest = (_lgamma1p(2 * small) - 2 * _lgamma1p(small)
                - _lgamma_shift(1 + 2 * large, 2 * small) + 2 * _lgamma_shift(1 + large, small))
        out[tiny] = -np.expm1(-np.log1p(at / bt) + rest)
    return out.reshape(shape)


@register_dist("crps_beta", {"a": ("positive", None), "b": ("positive", None),
                             "lower": ("real", 0.0), "upper": ("real", 1.0)}, "[lower, upper]", JKL,
               params={"lower": Option("lower", float, None, "lower end of the support (None: column, else 0)"),
                       "upper": Option("upper", float, None, "upper end of the support (None: column, else 1)")}, tested_against=_VS_SCIPY)
def crps_beta(obs: Any, a: Any, b: Any, lower: Any = 0.0, upper: Any = 1.0) -> np.ndarray:
    r"""CRPS of the beta distribution :math:`\mathrm{Beta}(a, b)` on :math:`[l, u]`.

    On :math:`[0, 1]`, with :math:`F_{a,b}` the beta CDF,

    .. math:: \mathrm{CRPS} = y\,(2F_{a,b}(y) - 1) + \frac{a}{a+b}\Bigl[1 - 2F_{a+1,b}(y)
              - \frac{2\,B(2a, 2b)}{a\,B(a, b)^2}\Bigr],

    and on :math:`[l, u]` the score of the rescaled outcome is multiplied by :math:`u - l`.
    Above the middle the mirror image is scored (:math:`\mathrm{Beta}(b, a)` at
    :math:`1 - y`), and the last two terms are taken together from log-gamma series, so
    tiny shapes (mass piled on a bound) keep full relative precision.

    Examples
    --------
    >>> round(float(crps_beta(0.5, 1.0, 1.0)), 6) == round(float(crps_uniform(0.5, 0.0, 1.0)), 6)
    True
    >>> float(crps_beta(1.0, 1.45, 2e-8))  # mpmath: 4.93140042431273e-16; scoringrules: 6.7e-16
    4.931400424312728e-16
    """
    obs, a, b, lower_, upper_ = prep(obs, {"a": ("positive", None), "b": ("positive", None),
                                           "lower": ("real", 0.0), "upper": ("real", 1.0)},
                                     dict(a=a, b=b, lower=lower, upper=upper))
    width = upper_ - lower_
    check_positive(width, "upper - lower")
    z = (obs - lower_) / width
    flip = z > 0.5
    a, b, z = np.where(flip, b, a), np.where(flip, a, b), np.where(flip, 1.0 - z, z)
    zc = np.clip(z, 0.0, 1.0)
    f0 = special.betainc(a, b, zc)
    log_beta = special.betaln(a, b)
    f1 = betainc_next(a, b, zc, f0, log_beta)
    core = z * (2.0 * f0 - 1.0) + a / (a + b) * (_beta_half_gini_ratio(a, b, log_beta) - 2.0 * f1)
    return width * core


@_parametric("crps_t", ("df", "mu", "sigma"), JKL, tested_against=_VS_SCIPY)
def crps_t(obs: Any, df: Any, mu: Any = 0.0, sigma: Any = 1.0) -> np.ndarray:
    r"""CRPS of the location-scale Student-t distribution with :math:`\nu > 1` degrees of freedom.

    .. math:: \mathrm{CRPS} = \sigma\Bigl[z(2F_\nu(z) - 1) + 2 f_\nu(z)\frac{\nu + z^2}{\nu - 1}
              - \frac{2\sqrt\nu\,B(\tfrac12, \nu - \tfrac12)}{(\nu - 1)\,B(\tfrac12, \tfrac\nu2)^2}\Bigr],
              \qquad z = \frac{y - \mu}{\sigma}.

    The CRPS needs a finite mean, hence ``df > 1``.

    Examples
    --------
    >>> bool(abs(crps_t(0.3, 1e7, 0.0, 1.0) - crps_normal(0.3, 0.0, 1.0)) < 1e-6)
    True
    """
    obs, df, mu, sigma = _prep(obs, df=df, mu=mu, sigma=sigma, positive=("sigma",))
    bad = df <= 1
    if bad.any():
        raise InputError(f"df: expected degrees of freedom > 1 (the CRPS needs a finite mean), "
                         f"got {float(df[bad].ravel()[0])!r}")
    z = (obs - mu) / sigma
    cdf = special.stdtr(df, z)
    pdf = np.exp(special.gammaln((df + 1.0) / 2.0) - special.gammaln(df / 2.0) - 0.5 * np.log(df * math.pi)
                 - (df + 1.0) / 2.0 * np.log1p(z * z / df))
    log_const = special.betaln(0.5, df - 0.5) - 2.0 * special.betaln(0.5, df / 2.0)
    const = 2.0 * np.sqrt(df) / (df - 1.0) * np.exp(log_const)
    return sigma * (z * (2.0 * cdf - 1.0) + 2.0 * pdf * (df + z * z) / (df - 1.0) - const)


def _mixnorm_A(mean: np.ndarray, var: np.ndarray) -> np.ndarray:
    # E|Z| for Z ~ N(mean, var)
    sd = np.sqrt(var)
    z = mean / sd
    return mean * special.erf(z / math.sqrt(2.0)) + 2.0 * sd * _norm_pdf(z)


#: The mixture's parameters, one column per component ``k`` in a ``parametric`` table.
MIXNORM_DIST = {"parameters": {"mu<k>": ("real", None), "sigma<k>": ("positive", None),
                               "w<k>": ("nonnegative", None)}, "support": "real"}


def mixnorm_columns(arrays: Mapping[str, np.ndarray], name: str) -> tuple[np.ndarray, ...]:
    """``y`` and the stacked ``mu<k>``, ``sigma<k>``, ``w<k>`` columns of a parametric table."""
    comps = sorted(int(m.group(1)) for key in arrays if (m := re.fullmatch(r"mu(\d+)", key)))
    if not comps:
        raise InputError(f"{name}: expected parameter columns mu0, sigma0, w0, mu1, sigma1, w1, ...")
    missing = [f"{p}{k}" for k in comps for p in ("sigma", "w") if f"{p}{k}" not in arrays]
    if missing:
        raise InputError(f"{name}: missing parameter column(s) {missing}")
    stack = lambda p: np.stack([arrays[f"{p}{k}"] for k in comps], axis=-1)  # noqa: E731
    return arrays["y"], stack("mu"), stack("sigma"), stack("w")


def mixnorm_inputs(obs: Any, mu: Any, sigma: Any, w: Any) -> tuple[np.ndarray, ...]:
    """Checked ``obs`` (broadcast to the batch), ``mu``, ``sigma`` and normalised ``w``
    with the mixture components on the last axis."""
    obs = as_float_array(obs, "obs", check_inf=True)
    mu, sigma = broadcast_arrays(mu=as_float_array(mu, "mu", check_inf=True),
                                 sigma=as_float_array(sigma, "sigma", check_inf=True))
    if mu.ndim == 0:
        raise InputError("mu: expected the mixture components on the last axis, got a scalar")
    check_positive(sigma, "sigma")
    w = np.ones(mu.shape) if w is None else as_float_array(w, "w", check_inf=True)
    if (w < 0).any():
        raise InputError("w: expected non-negative mixture weights")
    mu, sigma, w = broadcast_arrays(mu=mu, sigma=sigma, w=w)
    total = w.sum(axis=-1, keepdims=True)
    if (total <= 0).any():
        raise InputError("w: mixture weights sum to 0 in some rows; expected a positive total")
    obs = np.broadcast_to(obs, check_batch(obs, mu, "obs", "mu", core=1))
    return obs, mu, sigma, w / total


@register("crps_mixnorm", family=FAMILY, kind="parametric", inputs=("y",), higher_is_better=False,
          bounds=(0.0, math.inf), proper="strict", per_row=True, table_fn=lambda arrays: crps_mixnorm(*mixnorm_columns(arrays, "crps_mixnorm")),
          distribution=MIXNORM_DIST,
          citation="Grimit et al. (2006), QJRMS 132:2925-2942; " + JKL, tested_against=((SCORINGRULES, 1e-12), (SCIPY, 1e-12)))
def crps_mixnorm(obs: Any, mu: Any, sigma: Any, w: Any = None) -> np.ndarray:
    r"""CRPS of a mixture of normal distributions :math:`\sum_k w_k N(\mu_k, \sigma_k^2)`.

    .. math:: \mathrm{CRPS} = \sum_k w_k A(y - \mu_k, \sigma_k^2)
              - \tfrac12 \sum_{k,l} w_k w_l A(\mu_k - \mu_l, \sigma_k^2 + \sigma_l^2),

    with :math:`A(m, v) = \mathbb E|Z|` for :math:`Z \sim N(m, v)`, i.e.
    :math:`A(m, v) = m(2\Phi(m/\sqrt v) - 1) + 2\sqrt v\,\varphi(m/\sqrt v)`.

    Parameters
    ----------
    obs : array_like, shape (...)
    mu, sigma : array_like, shape (..., K)
        Component means and standard deviations (components on the last axis).
    w : array_like, shape (..., K), optional
        Non-negative component weights (normalised to sum 1); equal weights by default.

    Examples
    --------
    >>> bool(np.isclose(crps_mixnorm(0.2, [0.0, 0.0], [1.0, 1.0]), crps_normal(0.2, 0.0, 1.0)))
    True
    """
    obs, mu, sigma, w = mixnorm_inputs(obs, mu, sigma, w)
    var = sigma * sigma
    first = np.sum(w * _mixnorm_A(obs[..., None] - mu, var), axis=-1)
    pair = _mixnorm_A(mu[..., :, None] - mu[..., None, :], var[..., :, None] + var[..., None, :])
    second = np.einsum("...k,...kl,...l->...", w, pair, w)
    return first - 0.5 * second


@register("log_score_normal", family=FAMILY, kind="parametric", inputs=("y", "mu", "sigma"),
          higher_is_better=False, bounds=(-math.inf, math.inf), proper="strict", per_row=True,
          citation="Good (1952); " + GNEITING_RAFTERY, tested_against=_VS_PROPERSCORING)
def log_score_normal(obs: Any, mu: Any, sigma: Any) -> np.ndarray:
    r"""Logarithmic score (negative log density) of :math:`N(\mu, \sigma^2)`.

    .. math:: \mathrm{LS} = \tfrac12 \log(2\pi) + \log\sigma + \tfrac12 z^2, \qquad z = \frac{y-\mu}{\sigma}.

    Unlike the CRPS it can be negative (a density exceeds 1 when :math:`\sigma` is small).

    Examples
    --------
    >>> round(float(log_score_normal(0.0, 0.0, 1.0)), 6)
    0.918939
    """
    z, sigma = _standardised(obs, mu, sigma)
    return 0.5 * math.log(2.0 * math.pi) + np.log(sigma) + 0.5 * z * z


@register("dawid_sebastiani_score", family=FAMILY, kind="parametric", inputs=("y", "mu", "sigma"),
          higher_is_better=False, bounds=(-math.inf, math.inf), proper="proper", per_row=True,
          citation="Dawid & Sebastiani (1999), Annals of Statistics 27(1):65-81", tested_against=(SCIPY, 1e-12))
def dawid_sebastiani_score(obs: Any, mu: Any, sigma: Any) -> np.ndarray:
    r"""Dawid-Sebastiani score of a forecast with mean :math:`\mu` and standard deviation :math:`\sigma`.

    .. math:: \mathrm{DSS} = \Bigl(\frac{y - \mu}{\sigma}\Bigr)^2 + 2 \log \sigma .

    It depends on the forecast only through its first two moments, so it is proper (not
    strictly): distributions with the true mean and variance all score alike.

    Examples
    --------
    >>> float(dawid_sebastiani_score(1.0, 0.0, 1.0))
    1.0
    """
    z, sigma = _standardised(obs, mu, sigma)
    return z * z + 2.0 * np.log(sigma)


fill_doc(crps_normal, **SECTIONS)
