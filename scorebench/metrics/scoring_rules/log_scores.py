r"""Logarithmic scores :math:`-\log f(y)` of parametric forecast distributions.

The log score is strictly proper and local: it depends on the forecast only through the
density (or mass) at the outcome. It is :math:`+\infty` for an outcome outside the support
(density 0) and can be negative for a density above 1. Each function takes the outcome
and the parameters of the matching ``crps_<dist>`` (same names, same supports, same
``parametric`` table columns); densities are evaluated in logs (``log_ndtr``,
``gammaln``, ``betaln``, ``xlogy``) so the tails do not underflow to :math:`\infty`.

References: Good (1952), JRSS B 14(1):107-114; Gneiting & Raftery (2007), JASA 102(477).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scorebench.core.lazy import lazy_module

from scorebench.core.registry import register
from scorebench.metrics.scoring_rules._common import FAMILY
from scorebench.metrics.scoring_rules.crps_closed import MIXNORM_DIST, log_ndtr_diff, mixnorm_columns, mixnorm_inputs
from scorebench.metrics.scoring_rules.crps_truncated import (BOUNDS_PARAMS, LOGISTIC_PARAMS, NORMAL_PARAMS, T_PARAMS,
                                                             TWO_PIECE_PARAMS, logis_diff, t_diff)
from scorebench.metrics.scoring_rules._dist import prep, register_dist
from scorebench.metrics.scoring_rules.crps_positive import log_location_scale

special = lazy_module("scipy.special")

__all__ = [
    "log_score_tnormal", "log_score_tlogistic", "log_score_tt", "log_score_logistic", "log_score_laplace",
    "log_score_exponential", "log_score_gamma", "log_score_lognormal", "log_score_uniform", "log_score_beta",
    "log_score_t", "log_score_2pnormal", "log_score_2pexponential", "log_score_gev", "log_score_gpd",
    "log_score_loglaplace", "log_score_loglogistic", "log_score_poisson", "log_score_negbinom",
    "log_score_binomial", "log_score_hypergeometric", "log_score_mixnorm",
]

GOOD = "Good (1952), JRSS B 14(1):107-114"
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def _outside(score: np.ndarray, outside: np.ndarray) -> np.ndarray:
    """``+inf`` where the outcome has density 0 (NaN outcomes stay NaN)."""
    return np.where(outside, np.inf, score)


def _shape_terms(obs: Any, spec: dict, shape: Any, mu: Any, sigma: Any,
                 from_mu: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    r"""Checked GEV / GPD parameters, :math:`\log t/\xi` with :math:`t = 1 + \xi (y - \mu)/\sigma`, and the
    rows outside the support.

    :math:`\log(1 + \xi s)/\xi` takes its limit :math:`s` at :math:`\xi = 0` (``log1p`` keeps small
    :math:`\xi` exact) and is 0 outside the support, which is :math:`t > 0`, and also :math:`y \ge \mu`
    when ``from_mu`` (the GPD).

    Returns
    -------
    shape, sigma, log_t_over_xi, outside : ndarray
        ``outside`` is False for NaN outcomes (they stay NaN).
    """
    obs, shape, mu, sigma = prep(obs, spec, dict(shape=shape, mu=mu, sigma=sigma))
    s = (obs - mu) / sigma
    with np.errstate(divide="ignore", invalid="ignore"):
        inside = shape * s > -1.0
        if from_mu:
            inside &= s >= 0
        xi = np.where(shape == 0, 1.0, shape)
        log_t_over_xi = np.where(shape == 0, s, np.log1p(np.where(inside, shape * s, 0.0)) / xi)
    return shape, sigma, log_t_over_xi, ~inside & ~np.isnan(s)


def _t_logpdf(z, df):
    return (special.gammaln((df + 1.0) / 2.0) - special.gammaln(df / 2.0) - 0.5 * np.log(df * math.pi)
            - (df + 1.0) / 2.0 * np.log1p(z * z / df))


@register_dist("log_score_tnormal", {**NORMAL_PARAMS, **BOUNDS_PARAMS}, "[lower, upper]", GOOD, log=True, tested_against=('scipy (distributions / numerical integration)', 1e-12))
def log_score_tnormal(obs: Any, mu: Any, sigma: Any, lower: Any = -math.inf, upper: Any = math.inf) -> np.ndarray:
    r"""Log score of the normal distribution truncated to :math:`[l, u]`:
    :math:`-\log\varphi(z) + \log\sigma + \log(\Phi(u) - \Phi(l))`.

    Examples
    --------
    >>> round(float(log_score_tnormal(0.5, 0.0, 1.0, 0.0, np.inf)), 6)
    0.350791
    """
    (mu, sigma), z, l, u, outside = _truncated(obs, NORMAL_PARAMS, mu=mu, sigma=sigma, lower=lower, upper=upper)
    _, log_d = log_ndtr_diff(u, l)
    return _outside(0.5 * z * z + _LOG_SQRT_2PI + np.log(sigma) + log_d, outside)


def _check_bounds(lower, upper):
    from scorebench.core.errors import InputError

    if (lower >= upper).any():
        raise InputError("lower/upper: expected lower < upper")


def _truncated(obs: Any, spec: dict, **values: Any) -> tuple:
    """Checked inputs of a location-scale distribution (``spec``, location and scale last)
    truncated to ``[lower, upper]``: its parameters, the standardised outcome and bounds
    ``z, l, u``, and the outcomes outside the bounds (density 0)."""
    obs, *params, lower, upper = prep(obs, {**spec, **BOUNDS_PARAMS}, values)
    _check_bounds(lower, upper)
    loc, scale = params[-2], params[-1]
    z, l, u = (obs - loc) / scale, (lower - loc) / scale, (upper - loc) / scale
    return params, z, l, u, (obs < lower) | (obs > upper)


@register_dist("log_score_tlogistic", {**LOGISTIC_PARAMS, **BOUNDS_PARAMS}, "[lower, upper]", GOOD, log=True, tested_against=('scipy (distributions / numerical integration)', 1e-12))
def log_score_tlogistic(obs: Any, mu: Any, s: Any, lower: Any = -math.inf, upper: Any = math.inf) -> np.ndarray:
    r"""Log score of the logistic distribution truncated to :math:`[l, u]`.

    Examples
    --------
    >>> round(float(log_score_tlogistic(0.5, 0.0, 1.0, 0.0, np.inf)), 6)
    0.755007
    """
    (mu, s), z, l, u, outside = _truncated(obs, LOGISTIC_PARAMS, mu=mu, s=s, lower=lower, upper=upper)
    log_pdf = special.log_expit(z) + special.log_expit(-z)
    return _outside(-log_pdf + np.log(s) + np.log(logis_diff(u, l)), outside)


@register_dist("log_score_tt", {**T_PARAMS, **BOUNDS_PARAMS}, "[lower, upper]", GOOD, log=True, tested_against=(('scoringrules 0.7 (numpy backend)', 1e-12), ('scipy (distributions / numerical integration)', 1e-12),))
def log_score_tt(obs: Any, df: Any, mu: Any = 0.0, sigma: Any = 1.0, lower: Any = -math.inf,
                 upper: Any = math.inf) -> np.ndarray:
    r"""Log score of the Student-t distribution truncated to :math:`[l, u]`.

    Examples
    --------
    >>> round(float(log_score_tt(0.5, 3.0, 0.0, 1.0, 0.0, np.inf)), 6)
    0.467827
    """
    (df, mu, sigma), z, l, u, outside = _truncated(obs, T_PARAMS, df=df, mu=mu, sigma=sigma, lower=lower,
                                                   upper=upper)
    return _outside(-_t_logpdf(z, df) + np.log(sigma) + np.log(t_diff(df, u, l)), outside)


_T_LOG = {**T_PARAMS, "df": ("positive", None)}  # a density needs no finite mean


@register_dist("log_score_t", _T_LOG, "real", GOOD, log=True, tested_against=('scipy (distributions / numerical integration)', 1e-12))
def log_score_t(obs: Any, df: Any, mu: Any = 0.0, sigma: Any = 1.0) -> np.ndarray:
    r"""Log score of the location-scale Student-t distribution.

    Examples
    --------
    >>> round(float(log_score_t(0.5, 3.0)), 6)
    1.160974
    """
    obs, df, mu, sigma = prep(obs, _T_LOG, dict(df=df, mu=mu, sigma=sigma))
    return -_t_logpdf((obs - mu) / sigma, df) + np.log(sigma)


@register_dist("log_score_logistic", LOGISTIC_PARAMS, "real", GOOD, log=True, tested_against=('scipy (distributions / numerical integration)', 1e-12))
def log_score_logistic(obs: Any, mu: Any, s: Any) -> np.ndarray:
    r"""Log score of the logistic distribution: :math:`z + 2\log(1 + e^{-z}) + \log s`.

    Examples
    --------
    >>> round(float(log_score_logistic(0.0, 0.0, 1.0)), 6)
    1.386294
    """
    obs, mu, s = prep(obs, LOGISTIC_PARAMS, dict(mu=mu, s=s))
    z = (obs - mu) / s
    return -(special.log_expit(z) + special.log_expit(-z)) + np.log(s)


_LAPLACE = {"mu": ("real", None), "b": ("positive", None)}


@register_dist("log_score_laplace", _LAPLACE, "real", GOOD, log=True, tested_against=('scipy (distributions / numerical integration)', 1e-12))
def log_score_laplace(obs: Any, mu: Any, b: Any) -> np.ndarray:
    r"""Log score of the Laplace distribution: :math:`|y - \mu|/b + \log(2b)`.

    Examples
    --------
    >>> round(float(log_score_laplace(0.0, 0.0, 1.0)), 6)
    0.693147
    """
    obs, mu, b = prep(obs, _LAPLACE, dict(mu=mu, b=b))
    return np.abs(obs - mu) / b + np.log(2.0 * b)


@register_dist("log_score_exponential", {"rate": ("positive", None)}, "[0, inf)", GOOD, log=True, tested_against=('scipy (distributions / numerical integration)', 1e-12))
def log_score_exponential(obs: Any, rate: Any) -> np.ndarray:
    r"""Log score of the exponential distribution: :math:`\lambda y - \log\lambda` (:math:`y \ge 0`).

    Examples
    --------
    >>> round(float(log_score_exponential(1.0, 2.0)), 6)
    1.306853
    """
    obs, rate = prep(obs, {"rate": ("positive", None)}, dict(rate=rate))
    return _outside(rate * obs - np.log(rate), obs < 0)


_GAMMA = {"shape": ("positive", None), "rate": ("positive", None)}


@register_dist("log_score_gamma", _GAMMA, "(0, inf)", GOOD, log=True, tested_against=('scipy (distributions / numerical integration)', 1e-12))
def log_score_gamma(obs: Any, shape: Any, rate: Any) -> np.ndarray:
    r"""Log score of the gamma distribution (shape :math:`\alpha`, rate :math:`\beta`).

    Examples
    --------
    >>> round(float(log_score_gamma(1.0, 2.0, 1.0)), 6)
    1.0
    """
    obs, shape, rate = prep(obs, _GAMMA, dict(shape=shape, rate=rate))
    pos = obs > 0
    yp = np.where(pos, obs, 1.0)
    val = -(special.xlogy(shape, rate) + special.xlogy(shape - 1.0, yp) - rate * yp - special.gammaln(shape))
    return _outside(val, ~pos & ~np.isnan(obs))


_LOGN = {"mulog": ("real", None), "sigmalog": ("positive", None)}


@register_dist("log_score_lognormal", _LOGN, "(0, inf)", GOOD, log=True, tested_against=('scipy (distributions / numerical integration)', 1e-12))
def log_score_lognormal(obs: Any, mulog: Any, sigmalog: Any) -> np.ndarray:
    r"""Log score of the log-normal distribution.

    Examples
    --------
    >>> round(float(log_score_lognormal(1.0, 0.0, 1.0)), 6)
    0.918939
    """
    obs, mulog, sigmalog, pos, ly, w = log_location_scale(obs, _LOGN, mulog, sigmalog)
    return _outside(0.5 * w * w + _LOG_SQRT_2PI + np.log(sigmalog) + ly, ~pos & ~np.isnan(obs))


_UNIF = {"low": ("real", None), "high": ("real", None)}


@register_dist("log_score_uniform", _UNIF, "[low, high]", GOOD, log=True, tested_against=('scipy (distributions / numerical integration)', 1e-12))
def log_score_uniform(obs: Any, low: Any, high: Any) -> np.ndarray:
    r"""Log score of the uniform distribution on :math:`[l, u]`: :math:`\log(u - l)` inside.

    Examples
    --------
    >>> round(float(log_score_uniform(0.5, 0.0, 2.0)), 6)
    0.693147
    """
    obs, low, high = prep(obs, _UNIF, dict(low=low, high=high))
    _check_bounds(low, high)
    return _outside(np.log(high - low), (obs < low) | (obs > high))


_BETA = {"a": ("positive", None), "b": ("positive", None), "lower": ("real", 0.0), "upper": ("real", 1.0)}


@register_dist("log_score_beta", _BETA, "[lower, upper]", GOOD, log=True, tested_against=('scipy (distributions / numerical integration)', 1e-12))
def log_score_beta(obs: Any, a: Any, b: Any, lower: Any = 0.0, upper: Any = 1.0) -> np.ndarray:
    r"""Log score of the beta distribution on :math:`[l, u]`.

    Examples
    --------
    >>> round(float(log_score_beta(0.5, 2.0, 2.0)), 6)
    -0.405465
    """
    obs, a, b, lower, upper = prep(obs, _BETA, dict(a=a, b=b, lower=lower, upper=upper))
    _check_bounds(lower, upper)
    width = upper - lower
    z = (obs - lower) / width
    inside = (z >= 0) & (z <= 1)
    zc = np.clip(z, 0.0, 1.0)
    with np.errstate(divide="ignore"):
        log_pdf = special.xlogy(a - 1.0, zc) + special.xlog1py(b - 1.0, -zc) - special.betaln(a, b)
    return _outside(-log_pdf + np.log(width), ~inside & ~np.isnan(z))


@register_dist("log_score_2pnormal", TWO_PIECE_PARAMS, "real", GOOD, log=True, tested_against=(('scoringrules 0.7 (numpy backend)', 1e-12), ('scipy (distributions / numerical integration)', 1e-12),))
def log_score_2pnormal(obs: Any, scale1: Any, scale2: Any, mu: Any) -> np.ndarray:
    r"""Log score of the two-piece normal: density :math:`\frac{2}{\sigma_1 + \sigma_2}
    \varphi((y - \mu)/\sigma_i)`, :math:`i` the side of :math:`\mu`.

    Examples
    --------
    >>> round(float(log_score_2pnormal(0.0, 0.4, 2.0, 0.1)), 6)
    1.13251
    """
    obs, scale1, scale2, mu = prep(obs, TWO_PIECE_PARAMS, dict(scale1=scale1, scale2=scale2, mu=mu))
    z = (obs - mu) / np.where(obs < mu, scale1, scale2)
    return 0.5 * z * z + _LOG_SQRT_2PI + np.log(0.5 * (scale1 + scale2))


@register_dist("log_score_2pexponential", TWO_PIECE_PARAMS, "real", GOOD, log=True, tested_against=('scipy (distributions / numerical integration)', 1e-12))
def log_score_2pexponential(obs: Any, scale1: Any, scale2: Any, mu: Any) -> np.ndarray:
    r"""Log score of the two-piece exponential: density :math:`e^{-|y - \mu|/\sigma_i}/(\sigma_1 + \sigma_2)`.

    Examples
    --------
    >>> round(float(log_score_2pexponential(0.8, 3.0, 1.4, 0.0)), 6)
    2.053033
    """
    obs, scale1, scale2, mu = prep(obs, TWO_PIECE_PARAMS, dict(scale1=scale1, scale2=scale2, mu=mu))
    return np.abs(obs - mu) / np.where(obs < mu, scale1, scale2) + np.log(scale1 + scale2)


_GEV = {"shape": ("real", None), "mu": ("real", 0.0), "sigma": ("positive", 1.0)}


@register_dist("log_score_gev", _GEV, "support of the GEV", GOOD, log=True, tested_against=(('scoringrules 0.7 (numpy backend)', 1e-12), ('scipy (distributions / numerical integration)', 1e-12),))
def log_score_gev(obs: Any, shape: Any, mu: Any = 0.0, sigma: Any = 1.0) -> np.ndarray:
    r"""Log score of the generalised extreme value distribution (any shape :math:`\xi`):
    :math:`\log\sigma + (1 + 1/\xi)\log t + t^{-1/\xi}`, :math:`t = 1 + \xi(y - \mu)/\sigma`
    (Gumbel :math:`s + e^{-s} + \log\sigma` at :math:`\xi = 0`; ``log1p`` keeps small
    :math:`\xi` exact).

    Examples
    --------
    >>> round(float(log_score_gev(0.3, 0.1)), 6)
    1.069241
    """
    shape, sigma, log_t_over_xi, outside = _shape_terms(obs, _GEV, shape, mu, sigma, from_mu=False)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        val = np.log(sigma) + (1.0 + shape) * log_t_over_xi + np.exp(-log_t_over_xi)
    return _outside(val, outside)


_GPD = {"shape": ("real", None), "mu": ("real", 0.0), "sigma": ("positive", 1.0)}


@register_dist("log_score_gpd", _GPD, "[mu, inf) (or [mu, mu - sigma/shape] for shape < 0)", GOOD, log=True, tested_against=(('scoringrules 0.7 (numpy backend)', 1e-12), ('scipy (distributions / numerical integration)', 1e-12),))
def log_score_gpd(obs: Any, shape: Any, mu: Any = 0.0, sigma: Any = 1.0) -> np.ndarray:
    r"""Log score of the generalised Pareto distribution:
    :math:`\log\sigma + (1 + 1/\xi)\log(1 + \xi\omega)` (:math:`\omega` at :math:`\xi = 0`).

    Examples
    --------
    >>> round(float(log_score_gpd(0.3, 0.5)), 6)
    0.419286
    """
    shape, sigma, log_t_over_xi, outside = _shape_terms(obs, _GPD, shape, mu, sigma, from_mu=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        val = np.log(sigma) + (1.0 + shape) * log_t_over_xi
    return _outside(val, outside)


_LOG = {"mulog": ("real", None), "sigmalog": ("positive", None)}


@register_dist("log_score_loglaplace", _LOG, "(0, inf)", GOOD, log=True, tested_against=('scipy (distributions / numerical integration)', 1e-12))
def log_score_loglaplace(obs: Any, mulog: Any, sigmalog: Any) -> np.ndarray:
    r"""Log score of the log-Laplace distribution: :math:`|w| + \log(2\sigma y)`,
    :math:`w = (\log y - \mu)/\sigma`.

    Examples
    --------
    >>> round(float(log_score_loglaplace(3.0, 0.1, 0.9)), 6)
    2.795968
    """
    obs, mulog, sigmalog, pos, ly, w = log_location_scale(obs, _LOG, mulog, sigmalog)
    return _outside(np.abs(w) + np.log(2.0 * sigmalog) + ly, ~pos & ~np.isnan(obs))


@register_dist("log_score_loglogistic", _LOG, "(0, inf)", GOOD, log=True, tested_against=(('scoringrules 0.7 (numpy backend)', 1e-12), ('scipy (distributions / numerical integration)', 1e-12),))
def log_score_loglogistic(obs: Any, mulog: Any, sigmalog: Any) -> np.ndarray:
    r"""Log score of the log-logistic distribution: the logistic log score of
    :math:`\log y` plus :math:`\log y`.

    Examples
    --------
    >>> round(float(log_score_loglogistic(3.0, 0.1, 0.9)), 6)
    2.672729
    """
    obs, mulog, sigmalog, pos, ly, w = log_location_scale(obs, _LOG, mulog, sigmalog)
    val = -(special.log_expit(w) + special.log_expit(-w)) + np.log(sigmalog) + ly
    return _outside(val, ~pos & ~np.isnan(obs))


def _not_count(obs: np.ndarray) -> np.ndarray:
    """Outcomes off the non-negative integers (NaN is not flagged: it propagates)."""
    return (obs < 0) | (np.isfinite(obs) & (obs != np.floor(obs)))


@register_dist("log_score_poisson", {"mean": ("positive", None)}, "{0, 1, 2, ...}", GOOD, log=True, tested_against=('scipy (distributions / numerical integration)', 1e-12))
def log_score_poisson(obs: Any, mean: Any) -> np.ndarray:
    r"""Log score of the Poisson distribution: :math:`\lambda - y\log\lambda + \log y!`
    (:math:`+\infty` off the non-negative integers).

    Examples
    --------
    >>> round(float(log_score_poisson(2.0, 3.0)), 6)
    1.495923
    """
    obs, mean = prep(obs, {"mean": ("positive", None)}, dict(mean=mean))
    k = np.where(_not_count(obs), 0.0, obs)
    return _outside(mean - special.xlogy(k, mean) + special.gammaln(k + 1.0), _not_count(obs) & ~np.isnan(obs))


_NB = {"n": ("positive", None), "prob": ("(0, 1]", None)}


@register_dist("log_score_negbinom", _NB, "{0, 1, 2, ...}", GOOD, log=True, tested_against=(('scoringrules 0.7 (numpy backend)', 1e-12), ('scipy (distributions / numerical integration)', 1e-12),))
def log_score_negbinom(obs: Any, n: Any, prob: Any) -> np.ndarray:
    r"""Log score of the negative binomial distribution (size :math:`n`, probability :math:`p`).

    Examples
    --------
    >>> round(float(log_score_negbinom(2.0, 5.0, 0.6)), 6)
    1.678659
    """
    obs, n, prob = prep(obs, _NB, dict(n=n, prob=prob))
    k = np.where(_not_count(obs), 0.0, obs)
    log_pmf = (special.gammaln(n + k) - special.gammaln(n) - special.gammaln(k + 1.0)
               + special.xlogy(n, prob) + special.xlog1py(k, -prob))
    return _outside(-log_pmf, _not_count(obs) & ~np.isnan(obs))


_BINOM = {"n": ("nonnegative integer", None), "prob": ("[0, 1]", None)}


@register_dist("log_score_binomial", _BINOM, "{0, ..., n}", GOOD, log=True, tested_against=(('scoringrules 0.7 (numpy backend)', 1e-12), ('scipy (distributions / numerical integration)', 1e-12),))
def log_score_binomial(obs: Any, n: Any, prob: Any) -> np.ndarray:
    r"""Log score of the binomial distribution.

    Examples
    --------
    >>> round(float(log_score_binomial(3.0, 10, 0.4)), 6)
    1.53716
    """
    obs, n, prob = prep(obs, _BINOM, dict(n=n, prob=prob))
    off = _not_count(obs) | (obs > n)
    k = np.where(off, 0.0, obs)
    with np.errstate(divide="ignore"):
        log_pmf = (special.gammaln(n + 1.0) - special.gammaln(k + 1.0) - special.gammaln(n - k + 1.0)
                   + special.xlogy(k, prob) + special.xlog1py(n - k, -prob))
    return _outside(-log_pmf, off & ~np.isnan(obs))


_HYPER = {"m": ("nonnegative integer", None), "n": ("nonnegative integer", None), "k": ("nonnegative integer", None)}


@register_dist("log_score_hypergeometric", _HYPER, "{max(0, k - n), ..., min(k, m)}", GOOD, log=True, tested_against=('scipy (distributions / numerical integration)', 1e-12))
def log_score_hypergeometric(obs: Any, m: Any, n: Any, k: Any) -> np.ndarray:
    r"""Log score of the hypergeometric distribution (parameters as :func:`crps_hypergeometric`).

    Examples
    --------
    >>> round(float(log_score_hypergeometric(5.0, 7, 13, 12)), 6)
    1.251525
    """
    obs, m, n, k = prep(obs, _HYPER, dict(m=m, n=n, k=k))
    off = _not_count(obs) | (obs > m) | (k - obs > n) | (obs > k)
    x = np.where(off, 0.0, obs)
    lc = lambda a, b: special.gammaln(a + 1.0) - special.gammaln(b + 1.0) - special.gammaln(a - b + 1.0)  # noqa: E731
    with np.errstate(invalid="ignore"):
        log_pmf = lc(m, x) + lc(n, k - x) - lc(m + n, k)
    return _outside(-log_pmf, off & ~np.isnan(obs))


@register("log_score_mixnorm", family=FAMILY, kind="parametric", inputs=("y",), higher_is_better=False,
          bounds=(-math.inf, math.inf), proper="strict", per_row=True, citation=GOOD, distribution=MIXNORM_DIST,
          table_fn=lambda arrays: log_score_mixnorm(*mixnorm_columns(arrays, "log_score_mixnorm")), tested_against=(('scoringrules 0.7 (numpy backend)', 1e-12), ('scipy (distributions / numerical integration)', 1e-12),))
def log_score_mixnorm(obs: Any, mu: Any, sigma: Any, w: Any = None) -> np.ndarray:
    r"""Log score of a mixture of normal distributions :math:`\sum_k w_k N(\mu_k, \sigma_k^2)`.

    .. math:: \mathrm{LS} = -\log \sum_k w_k \frac{1}{\sigma_k} \varphi\Big(\frac{y - \mu_k}{\sigma_k}\Big),

    summed in logs (``logsumexp``), so an outcome far from every component keeps a finite
    score. Arguments as :func:`~scorebench.metrics.scoring_rules.crps_mixnorm` (components
    on the last axis; a ``parametric`` table gives ``mu0, sigma0, w0, mu1, ...``).

    Examples
    --------
    >>> bool(np.isclose(log_score_mixnorm(0.2, [0.0, 0.0], [1.0, 1.0]), 0.5 * np.log(2 * np.pi) + 0.02))
    True
    >>> round(float(log_score_mixnorm(60.0, [0.0, 1.0], [1.0, 1.0])), 3)  # the density underflows
    1742.112
    """
    obs, mu, sigma, w = mixnorm_inputs(obs, mu, sigma, w)
    z = (obs[..., None] - mu) / sigma
    log_density = -0.5 * z * z - np.log(sigma) - _LOG_SQRT_2PI
    return -special.logsumexp(log_density, b=w, axis=-1)
