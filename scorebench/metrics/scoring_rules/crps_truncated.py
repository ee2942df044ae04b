r"""Closed-form CRPS of truncated, censored and generalised truncated-censored distributions.

A generalised truncated-censored (gtc) distribution puts a point mass :math:`L` on the lower
bound :math:`l`, a point mass :math:`U` on the upper bound :math:`u`, and spreads the
remaining :math:`m = 1 - L - U` as the base distribution :math:`F` truncated to
:math:`(l, u)`. Truncation is :math:`L = U = 0`; censoring puts the base distribution's
tail probabilities on the bounds, :math:`L = F(l)`, :math:`U = 1 - F(u)`.

With :math:`\omega = (y - \mu)/\sigma`, :math:`z = \min(\max(\omega, l), u)` (bounds
standardised alike), :math:`D = F(u) - F(l)`, the truncated CDF
:math:`T(z) = (F(z) - F(l))/D` and the partial first moment
:math:`P(x) = \int_{-\infty}^x t\,dF(t)`,

.. math::

   \frac{\mathrm{CRPS}}{\sigma} = |\omega - z| + u U^2 - l L^2
      + z\bigl(m(2T(z) - 1) - U + L\bigr)
      - \frac{2m}{D}\bigl(P(z) - U P(u) - L P(l)\bigr) - \frac{m^2}{D^2} K(l, u),

where :math:`K(l, u) = D^2 \tfrac12 \mathbb E_T|X - X'| - D\,(P(u) + P(l))`, which is
:math:`(\Phi(\sqrt2 u) - \Phi(\sqrt2 l))/\sqrt\pi` for the normal. This is the formula of
Jordan, Krüger & Lerch (2019, appendix) rearranged so that every piece is a ratio of tail
probabilities: :math:`D`, :math:`T` and :math:`P/D` are evaluated from differences of
upper-tail (or log) CDFs, so truncation far in a tail keeps its digits where the published
form divides 0 by 0.

Each family (normal, logistic, Student t) has three scores: ``crps_gtc<family>`` (bounds
and free masses), ``crps_t<family>`` (truncated: the gtc score with no masses) and
``crps_c<family>`` (censored: the gtc score with the tail masses :math:`F(l)`, :math:`1 - F(u)`).
With no bounds and no masses, each is the CRPS of its base distribution:

>>> import numpy as np
>>> from scipy.stats import norm
>>> from scorebench.metrics.scoring_rules import crps_cnormal, crps_gtcnormal, crps_normal
>>> bool(np.isclose(crps_gtcnormal(0.3, 0.0, 1.0), crps_normal(0.3, 0.0, 1.0)))
True
>>> censored = crps_cnormal(0.3, 0.0, 1.0, -1.0, 2.0)
>>> bool(np.isclose(censored, crps_gtcnormal(0.3, 0.0, 1.0, -1.0, 2.0, norm.cdf(-1.0), norm.sf(2.0))))
True

In a ``parametric`` table the parameters are columns ``mu``, ``sigma`` (``s`` for the
logistic, plus ``df`` for Student's t) and, optionally, ``lower``, ``upper``, ``lmass``,
``umass`` (defaults :math:`-\infty`, :math:`\infty`, 0, 0).

References: Jordan, Krüger & Lerch (2019), J. Stat. Software 90(12); Gneiting & Thorarinsdottir
(2010), "Predicting inflation: professional experts versus no-change forecasts", arXiv:1010.2318;
Thorarinsdottir & Gneiting (2010), JRSS A 173(2):371-388.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from scorebench.core.lazy import lazy_module

from scorebench.core.errors import InputError
from scorebench.metrics.scoring_rules._common import SCIPY, SCORINGRULES
from scorebench.metrics.scoring_rules.crps_closed import JKL
from scorebench.metrics.scoring_rules._dist import prep, register_dist
from scorebench.core.docstrings import fill_doc
from scorebench.metrics.scoring_rules.docs import SECTIONS

special = lazy_module("scipy.special")

__all__ = [
    "crps_gtcnormal", "crps_tnormal", "crps_cnormal",
    "crps_gtclogistic", "crps_tlogistic", "crps_clogistic",
    "crps_gtct", "crps_tt", "crps_ct", "crps_2pnormal",
]

_INF = math.inf
_SQRT2 = math.sqrt(2.0)
#: Parameter declarations (kind, default) shared with the log scores and weighted closed forms.
BOUNDS_PARAMS = {"lower": ("real", -_INF), "upper": ("real", _INF)}
_MASSES = {"lmass": ("[0, 1]", 0.0), "umass": ("[0, 1]", 0.0)}
NORMAL_PARAMS = {"mu": ("real", None), "sigma": ("positive", None)}
LOGISTIC_PARAMS = {"mu": ("real", None), "s": ("positive", None)}
T_PARAMS = {"df": ("(1, inf)", None), "mu": ("real", 0.0), "sigma": ("positive", 1.0)}
GTC = "Jordan, Krüger & Lerch (2019), J. Stat. Software 90(12), appendix A"
_NORMAL = {**NORMAL_PARAMS, **BOUNDS_PARAMS}
_LOGISTIC = {**LOGISTIC_PARAMS, **BOUNDS_PARAMS}
_T = {**T_PARAMS, **BOUNDS_PARAMS}
_GTCNORMAL_SPEC = {**_NORMAL, **_MASSES}
_GTCLOGISTIC_SPEC = {**_LOGISTIC, **_MASSES}
_GTCT_SPEC = {**_T, **_MASSES}
#: ``tested_against``: scoringrules, and scipy's quadrature of the CDF to 1e-13 (``_EXACT``) or
#: to 0.02 (``_QUADRATURE``: a coarse grid that only confirms the formula, the tails are
#: checked against the high-precision quadrature of the test suite).
_EXACT = ((SCORINGRULES, 1e-13), (SCIPY, 1e-13))
_QUADRATURE = ((SCORINGRULES, 1e-13), (SCIPY, 0.02))


def _standardise(obs, mu, scale, lower, upper, lmass, umass):
    """Standardised ``omega, l, u`` after checking bounds and masses."""
    if (lower >= upper).any():
        bad = lower >= upper
        raise InputError(f"lower/upper: expected lower < upper, got lower={float(lower[bad].ravel()[0])!r}, "
                         f"upper={float(upper[bad].ravel()[0])!r}")
    if lmass is not None:
        total = lmass + umass
        if (total > 1).any():
            raise InputError(f"lmass + umass: expected a total point mass <= 1, got {float(total[total > 1][0])!r}")
        if ((lmass > 0) & np.isneginf(lower)).any() or ((umass > 0) & np.isposinf(upper)).any():
            raise InputError("lmass/umass: a point mass needs a finite bound (lower > -inf for lmass > 0, "
                             "upper < inf for umass > 0)")
    omega = (obs - mu) / scale
    l, u = (lower - mu) / scale, (upper - mu) / scale
    return omega, l, u


def _assemble(omega, l, u, lmass, umass, t_z, rp_z, rp_u, rp_l, r2k):
    """The gtc formula of the module docstring, given ``r = m / D``, ``rp_* = r P(.)`` and
    ``r2k = r^2 K``."""
    z = np.clip(omega, l, u)
    m = 1.0 - lmass - umass
    with np.errstate(invalid="ignore"):
        edge = np.where(umass == 0, 0.0, u * umass ** 2) - np.where(lmass == 0, 0.0, l * lmass ** 2)
    s1 = np.abs(omega - z) + edge
    s2 = z * (m * (2.0 * t_z - 1.0) - umass + lmass)
    s3 = 2.0 * (rp_z - umass * rp_u - lmass * rp_l)
    return s1 + s2 - s3 - r2k


def _tail_diff(ca: np.ndarray, cb: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``F(a) - F(b)`` for ``a >= b`` of a symmetric distribution from its smaller tails
    ``c = F(-|x|)`` at ``a`` and ``b``: a difference of upper tails when ``b > 0``, of
    lower tails when ``a < 0``, never ``1 - 1``."""
    return np.where(b > 0, cb - ca, np.where(a < 0, ca - cb, 1.0 - ca - cb))


# --- normal -------------------------------------------------------------------------------


def _log_diff(log_a: np.ndarray, log_b: np.ndarray) -> np.ndarray:
    """``log(exp(log_a) - exp(log_b))`` for ``log_a >= log_b`` (``-inf`` when equal)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return log_a + np.log1p(-np.exp(log_b - log_a))


def _log_ndtr_between(log_hi: np.ndarray, log_lo: np.ndarray, flip: np.ndarray) -> np.ndarray:
    """``log(Phi(b) - Phi(a))`` for ``a <= b`` from ``log_ndtr`` at ``+-a``, ``+-b``: the
    arguments were negated where ``flip`` (``a > 0``), so both are lower tails, the larger
    one ``-a`` there."""
    return _log_diff(np.where(flip, log_lo, log_hi), np.where(flip, log_hi, log_lo))


def gtcnormal_core(obs, mu, sigma, lower, upper, lmass, umass, censored=False):
    """CRPS of the generalised truncated/censored normal on checked, broadcast float arrays
    (bounds and point masses are checked here); ``censored=True`` skips the point-mass check,
    for callers passing the distribution's own tail masses. Shared by :func:`crps_gtcnormal`
    and the weighted closed forms."""
    omega, l, u = _standardise(obs, mu, sigma, lower, upper, None if censored else lmass, umass)
    z = np.clip(omega, l, u)
    # D, T(z) and the ratios phi(.)/D and D2/D^2 are taken in logs: they survive D
    # underflowing. Above 0 the upper tails are used (Phi(-x)), so nothing is 1 - 1; one
    # log_ndtr per point serves D, T(z) and the censored masses.
    flip = l > 0
    side = np.where(flip, -1.0, 1.0)
    log_l, log_u, log_z = (special.log_ndtr(side * x) for x in (l, u, z))
    log_d = _log_ndtr_between(log_u, log_l, flip)
    t_z = np.exp(_log_ndtr_between(log_z, log_l, flip) - log_d)
    log_d2 = _log_ndtr_between(special.log_ndtr(side * _SQRT2 * u), special.log_ndtr(side * _SQRT2 * l), flip)
    if censored:  # Phi(l) and Phi(-u) from the log tails above
        lmass = np.where(flip, -np.expm1(log_l), np.exp(log_l))
        umass = np.where(flip, np.exp(log_u), -np.expm1(log_u))
        log_ratio = np.zeros_like(log_d)
    else:
        with np.errstate(divide="ignore"):
            log_ratio = np.log(1.0 - lmass - umass) - log_d
    with np.errstate(invalid="ignore", over="ignore"):
        rp = lambda x: -np.exp(-0.5 * x * x - 0.5 * math.log(2.0 * math.pi) + log_ratio)  # noqa: E731
        r2k = np.exp(log_d2 + 2.0 * log_ratio) / math.sqrt(math.pi)
        return sigma * _assemble(omega, l, u, lmass, umass, t_z, rp(z), rp(u), rp(l), r2k)


@register_dist("crps_gtcnormal", _GTCNORMAL_SPEC, "real", GTC, tested_against=_EXACT)
def crps_gtcnormal(obs: Any, mu: Any, sigma: Any, lower: Any = -_INF, upper: Any = _INF,
                   lmass: Any = 0.0, umass: Any = 0.0) -> np.ndarray:
    r"""CRPS of the generalised truncated-censored normal distribution.

    The normal :math:`N(\mu, \sigma^2)` truncated to :math:`(l, u)` with weight
    :math:`1 - L - U`, plus point masses :math:`L` at :math:`l` and :math:`U` at :math:`u`
    (formula in the module docstring; :math:`K = (\Phi(\sqrt2 u) - \Phi(\sqrt2 l))/\sqrt\pi`).

    Parameters
    ----------
    obs : array_like
        Observations.
    mu, sigma : array_like
        Location and scale (``sigma > 0``) of the untruncated normal.
    lower, upper : array_like
        Bounds, ``lower < upper`` (infinite allowed).
    lmass, umass : array_like
        Point masses on the bounds, in [0, 1] with ``lmass + umass <= 1``; a mass needs a
        finite bound.

    Returns
    -------
    %(crps_returns)s

    References
    ----------
    Jordan, A., Krüger, F. & Lerch, S. (2019). Evaluating probabilistic forecasts with
    scoringRules. *J. Stat. Software* 90(12).

    Examples
    --------
    >>> round(float(crps_gtcnormal(0.5, 0.0, 1.0, -1.0, 2.0, 0.1, 0.2)), 6)
    0.308741
    """
    args = prep(obs, _GTCNORMAL_SPEC, dict(mu=mu, sigma=sigma, lower=lower, upper=upper, lmass=lmass, umass=umass))
    return gtcnormal_core(*args)


@register_dist("crps_tnormal", _NORMAL, "[lower, upper]", GTC, tested_against=_EXACT)
def crps_tnormal(obs: Any, mu: Any, sigma: Any, lower: Any = -_INF, upper: Any = _INF) -> np.ndarray:
    r"""CRPS of the normal distribution :math:`N(\mu, \sigma^2)` truncated to :math:`(l, u)`.

    The gtc normal of :func:`crps_gtcnormal` with no point masses.

    Examples
    --------
    >>> round(float(crps_tnormal(0.5, 0.0, 1.0, 0.0, np.inf)), 6)
    0.162807
    >>> round(float(crps_tnormal(40.0, 0.0, 1.0, 38.0, 45.0)), 6)  # scoringrules: nan
    1.960585
    """
    return crps_gtcnormal(obs, mu, sigma, lower, upper)


@register_dist("crps_cnormal", _NORMAL, "[lower, upper]", GTC, tested_against=_QUADRATURE)
def crps_cnormal(obs: Any, mu: Any, sigma: Any, lower: Any = -_INF, upper: Any = _INF) -> np.ndarray:
    r"""CRPS of the normal distribution :math:`N(\mu, \sigma^2)` censored to :math:`[l, u]`.

    The tail probabilities :math:`\Phi(l)` and :math:`1 - \Phi(u)` sit on the bounds (a
    censored observation such as precipitation at 0).

    Examples
    --------
    >>> round(float(crps_cnormal(0.0, 0.5, 1.0, 0.0, np.inf)), 6)
    0.297015
    """
    args = prep(obs, _NORMAL, dict(mu=mu, sigma=sigma, lower=lower, upper=upper))
    return gtcnormal_core(*args, None, None, censored=True)


# --- logistic -----------------------------------------------------------------------------


def _logis_tail(x: np.ndarray) -> np.ndarray:
    """The logistic distribution's smaller tail ``Lambda(-|x|)``."""
    return special.expit(-np.abs(x))


def logis_diff(a, b):
    """``Lambda(a) - Lambda(b)`` for ``a >= b`` without cancellation (upper tails when b > 0)."""
    return _tail_diff(_logis_tail(a), _logis_tail(b), a, b)


def logis_partial_moment(x):
    """Partial first moment ``P(x) = x Lambda(x) - log(1 + e^x)`` (0 at +-inf)."""
    ax = np.abs(x)
    with np.errstate(invalid="ignore", over="ignore"):
        # For x > 0 both terms are written with Lambda(-x), which avoids x - x; P is even.
        val = -ax * special.expit(-ax) - np.log1p(np.exp(-ax))
    return np.where(np.isinf(x), 0.0, val)


def _g_small(t):
    """``log1p(t) - t / (1 + t)`` for ``0 <= t <= 1`` without cancellation at small t."""
    shape = np.shape(t)
    t = np.atleast_1d(np.asarray(t, dtype=float))
    with np.errstate(invalid="ignore"):
        out = np.log1p(t) - t / (1.0 + t)
    small = t < 0.05
    if small.any():
        k = np.arange(2, 22)
        out[small] = np.sum((-1.0) ** k * (k - 1) / k * t[small][:, None] ** k, axis=-1)
    return out.reshape(shape)


def _logis_h_upper(x):
    """``H(x) - 1`` for ``x >= 0``, ``H(x) = F - x F^2 + (1 - 2F) log F(-x)``, cancellation-free."""
    with np.errstate(over="ignore", invalid="ignore"):
        t = np.exp(-x)
        a = special.expit(-x)
        val = _g_small(t) - x * a * a - 2.0 * a * np.log1p(t)
    return np.where(np.isposinf(x), 0.0, val)


def _logis_h(x):
    """``H(x)`` for ``x < 0`` (small, no cancellation that matters next to ``H(u)``)."""
    f = special.expit(x)
    with np.errstate(invalid="ignore"):
        val = f - x * f * f + (1.0 - 2.0 * f) * special.log_expit(-x)
    return np.where(np.isneginf(x), 0.0, val)


def _logis_k(l, u):
    """``K(l, u) = H(u) - H(l)`` evaluated on the side where the interval lies (K is
    mirror-symmetric, ``K(l, u) = K(-u, -l)``)."""
    flip = l + u < 0
    l, u = np.where(flip, -u, l), np.where(flip, -l, u)
    both = l >= 0
    hu = _logis_h_upper(np.maximum(u, 0.0))
    hl_up = _logis_h_upper(np.maximum(l, 0.0))
    hl_low = _logis_h(np.minimum(l, 0.0))
    return np.where(both, hu - hl_up, 1.0 + hu - hl_low)


def gtclogistic_core(obs, mu, s, lower, upper, lmass, umass, censored=False):
    """CRPS of the generalised truncated/censored logistic on checked, broadcast float arrays
    ``censored`` as in :func:`gtcnormal_core`."""
    omega, l, u = _standardise(obs, mu, s, lower, upper, None if censored else lmass, umass)
    z = np.clip(omega, l, u)
    cl, cu = _logis_tail(l), _logis_tail(u)
    d = _tail_diff(cu, cl, u, l)
    t_z = _tail_diff(_logis_tail(z), cl, z, l) / d
    if censored:
        lmass, umass = np.where(l < 0, cl, 1.0 - cl), np.where(u > 0, cu, 1.0 - cu)
        ratio = np.ones_like(d)
    else:
        ratio = (1.0 - lmass - umass) / d
    with np.errstate(invalid="ignore"):
        out = _assemble(omega, l, u, lmass, umass, t_z, ratio * logis_partial_moment(z),
                        ratio * logis_partial_moment(u),
                        ratio * logis_partial_moment(l), ratio * ratio * _logis_k(l, u))
    return s * out


@register_dist("crps_gtclogistic", _GTCLOGISTIC_SPEC, "real", GTC, tested_against=_QUADRATURE)
def crps_gtclogistic(obs: Any, mu: Any, s: Any, lower: Any = -_INF, upper: Any = _INF,
                     lmass: Any = 0.0, umass: Any = 0.0) -> np.ndarray:
    r"""CRPS of the generalised truncated-censored logistic distribution.

    The logistic distribution (location :math:`\mu`, scale :math:`s`) truncated to
    :math:`(l, u)` with weight :math:`1 - L - U` plus point masses :math:`L, U` on the
    bounds; :math:`P(x) = x\Lambda(x) + \log\Lambda(-x)` and
    :math:`K = H(u) - H(l)`, :math:`H(x) = \Lambda(x) - x\Lambda(x)^2 + (1 - 2\Lambda(x))\log\Lambda(-x)`.

    Examples
    --------
    >>> round(float(crps_gtclogistic(0.5, 0.0, 1.0, -1.0, 2.0, 0.1, 0.2)), 6)
    0.325741

    A point mass on the bound the observation falls on lowers the score:

    >>> crps_gtclogistic(2.0, 0.0, 1.0, -1.0, 2.0, umass=[0.0, 0.2]).round(6)
    array([1.184022, 0.757774])
    """
    args = prep(obs, _GTCLOGISTIC_SPEC, dict(mu=mu, s=s, lower=lower, upper=upper, lmass=lmass, umass=umass))
    return gtclogistic_core(*args)


@register_dist("crps_tlogistic", _LOGISTIC, "[lower, upper]", GTC, tested_against=_QUADRATURE)
def crps_tlogistic(obs: Any, mu: Any, s: Any, lower: Any = -_INF, upper: Any = _INF) -> np.ndarray:
    r"""CRPS of the logistic distribution truncated to :math:`(l, u)` (:func:`crps_gtclogistic`
    without point masses).

    Examples
    --------
    >>> round(float(crps_tlogistic(0.5, 0.0, 1.0, 0.0, np.inf)), 6)
    0.396308
    """
    return crps_gtclogistic(obs, mu, s, lower, upper)


@register_dist("crps_clogistic", _LOGISTIC, "[lower, upper]", GTC, tested_against=_QUADRATURE)
def crps_clogistic(obs: Any, mu: Any, s: Any, lower: Any = -_INF, upper: Any = _INF) -> np.ndarray:
    r"""CRPS of the logistic distribution censored to :math:`[l, u]` (tail probabilities on
    the bounds).

    Examples
    --------
    Between the bounds the censored score is the logistic CRPS less the constant
    :math:`\int_{-\infty}^{l} F^2 + \int_u^\infty (1 - F)^2`, so with :math:`\mu = 0.5`
    an observation on the bound 0 scores as one at 1:

    >>> crps_clogistic([0.0, 1.0], 0.5, 1.0, 0.0, np.inf).round(6)
    array([0.351618, 0.351618])
    """
    args = prep(obs, _LOGISTIC, dict(mu=mu, s=s, lower=lower, upper=upper))
    return gtclogistic_core(*args, None, None, censored=True)


# --- Student t ----------------------------------------------------------------------------


def _inner_tail(tail: Callable[..., np.ndarray], omega: np.ndarray, l: np.ndarray, u: np.ndarray,
                cl: np.ndarray, cu: np.ndarray, *params: np.ndarray) -> np.ndarray:
    """The smaller tail ``tail(z, *params)`` at ``z = clip(omega, l, u)``, evaluated only
    where ``l < omega < u`` (elsewhere it is the bound's, ``cl`` or ``cu``)."""
    inside = (omega > l) & (omega < u)
    if inside.all():
        return tail(omega, *params)
    out = np.where(omega <= l, cl, cu)
    out[inside] = tail(omega[inside], *(p[inside] for p in params))
    return out


def _t_tail(x: np.ndarray, df: np.ndarray) -> np.ndarray:
    """The t distribution's smaller tail ``F_nu(-|x|)`` (0 at +-inf)."""
    return special.stdtr(df, -np.abs(x))


def t_diff(df, a, b):
    """``F_nu(a) - F_nu(b)`` for ``a >= b`` (two ``stdtr`` calls)."""
    return _tail_diff(_t_tail(a, df), _t_tail(b, df), a, b)


def t_partial_moment(df, x, log_f0):
    """Partial first moment ``P(x) = -f_nu(x) (nu + x^2) / (nu - 1)`` (0 at +-inf), with
    ``log_f0 = log f_nu(0)``."""
    with np.errstate(over="ignore", invalid="ignore"):
        # f (nu + x^2) = exp(log f + log(nu + x^2)): stays finite for huge |x|.
        val = -np.exp(log_f0 + np.log(df) - 0.5 * (df - 1.0) * np.log1p(x * x / df)) / (df - 1.0)
    return np.where(np.isinf(x), 0.0, val)


def _t_h_tail(df, x):
    """``1 - I_{x^2/(nu+x^2)}(1/2, nu - 1/2)`` computed from ``nu/(nu + x^2)`` directly."""
    with np.errstate(invalid="ignore"):
        val = special.betainc(df - 0.5, 0.5, df / (df + x * x))
    return np.where(np.isinf(x), 0.0, val)


def _t_k(df, l, u, beta_half):
    """``Bbar (H(u) - H(l))`` with ``H(x) = (1 + sign(x) I(x)) / 2``, from the tails."""
    cu, cl = _t_h_tail(df, u), _t_h_tail(df, l)
    # H(x) = 1 - c(x)/2 above 0 and c(x)/2 below: the difference of the two tails' halves.
    diff = _tail_diff(0.5 * cu, 0.5 * cl, u, l)
    log_bbar = (math.log(2.0) + 0.5 * np.log(df) - np.log(df - 1.0) + special.betaln(0.5, df - 0.5)
                - 2.0 * beta_half)
    return np.exp(log_bbar) * diff


def gtct_core(obs, df, mu, sigma, lower, upper, lmass, umass, censored=False):
    """CRPS of the generalised truncated/censored Student t on checked, broadcast float arrays
    ``censored`` as in :func:`gtcnormal_core`."""
    omega, l, u = _standardise(obs, mu, sigma, lower, upper, None if censored else lmass, umass)
    z = np.clip(omega, l, u)
    # One t tail per point (stdtr is the cost): F at l, u and z all come from them.
    cl, cu = _t_tail(l, df), _t_tail(u, df)
    cz = _inner_tail(_t_tail, omega, l, u, cl, cu, df)
    d = _tail_diff(cu, cl, u, l)
    t_z = _tail_diff(cz, cl, z, l) / d
    if censored:
        lmass, umass = np.where(l < 0, cl, 1.0 - cl), np.where(u > 0, cu, 1.0 - cu)
        ratio = np.ones_like(d)
    else:
        ratio = (1.0 - lmass - umass) / d
    beta_half = special.betaln(0.5, df / 2.0)  # f_nu(0) = 1 / (sqrt(nu) B(1/2, nu/2))
    log_f0 = -0.5 * np.log(df) - beta_half
    with np.errstate(invalid="ignore"):
        out = _assemble(omega, l, u, lmass, umass, t_z, ratio * t_partial_moment(df, z, log_f0),
                        ratio * t_partial_moment(df, u, log_f0),
                        ratio * t_partial_moment(df, l, log_f0), ratio * ratio * _t_k(df, l, u, beta_half))
    return sigma * out


@register_dist("crps_gtct", _GTCT_SPEC, "real", GTC, tested_against=_QUADRATURE)
def crps_gtct(obs: Any, df: Any, mu: Any = 0.0, sigma: Any = 1.0, lower: Any = -_INF, upper: Any = _INF,
              lmass: Any = 0.0, umass: Any = 0.0) -> np.ndarray:
    r"""CRPS of the generalised truncated-censored Student-t distribution (``df > 1``).

    :math:`P(x) = -f_\nu(x)(\nu + x^2)/(\nu - 1)`, :math:`K = \bar B\,(H(u) - H(l))` with
    :math:`\bar B = \frac{2\sqrt\nu}{\nu - 1}\frac{B(1/2, \nu - 1/2)}{B(1/2, \nu/2)^2}` and
    :math:`H(x) = \tfrac12(1 + \operatorname{sign}(x)\,I_{x^2/(\nu + x^2)}(\tfrac12, \nu - \tfrac12))`.

    Examples
    --------
    >>> round(float(crps_gtct(0.5, 3.0, 0.0, 1.0, -1.0, 2.0, 0.1, 0.2)), 6)
    0.309908
    """
    args = prep(obs, _GTCT_SPEC, dict(df=df, mu=mu, sigma=sigma, lower=lower, upper=upper, lmass=lmass, umass=umass))
    return gtct_core(*args)


@register_dist("crps_tt", _T, "[lower, upper]", GTC, tested_against=_QUADRATURE)
def crps_tt(obs: Any, df: Any, mu: Any = 0.0, sigma: Any = 1.0, lower: Any = -_INF,
            upper: Any = _INF) -> np.ndarray:
    r"""CRPS of the Student-t distribution truncated to :math:`(l, u)` (``df > 1``).

    Examples
    --------
    >>> round(float(crps_tt(0.5, 3.0, 0.0, 1.0, 0.0, np.inf)), 6)
    0.230241
    """
    return crps_gtct(obs, df, mu, sigma, lower, upper)


@register_dist("crps_ct", _T, "[lower, upper]", GTC, tested_against=_QUADRATURE)
def crps_ct(obs: Any, df: Any, mu: Any = 0.0, sigma: Any = 1.0, lower: Any = -_INF,
            upper: Any = _INF) -> np.ndarray:
    r"""CRPS of the Student-t distribution censored to :math:`[l, u]` (``df > 1``).

    Examples
    --------
    >>> round(float(crps_ct(0.0, 3.0, 0.5, 1.0, 0.0, np.inf)), 6)
    0.31284
    """
    args = prep(obs, _T, dict(df=df, mu=mu, sigma=sigma, lower=lower, upper=upper))
    return gtct_core(*args, None, None, censored=True)


# --- two-piece normal ---------------------------------------------------------------------

#: Parameters of the two-piece distributions (shared with their log scores).
TWO_PIECE_PARAMS = {"scale1": ("positive", None), "scale2": ("positive", None), "mu": ("real", None)}


@register_dist("crps_2pnormal", TWO_PIECE_PARAMS, "real", JKL,
               tested_against=_EXACT)
def crps_2pnormal(obs: Any, scale1: Any, scale2: Any, mu: Any) -> np.ndarray:
    r"""CRPS of the two-piece normal distribution (scale ``scale1`` below ``mu``, ``scale2`` above).

    Its CDF is :math:`\frac{2\sigma_1}{\sigma_1 + \sigma_2}\Phi((x - \mu)/\sigma_1)` below
    :math:`\mu` and :math:`\frac{\sigma_1 - \sigma_2}{\sigma_1 + \sigma_2} +
    \frac{2\sigma_2}{\sigma_1 + \sigma_2}\Phi((x - \mu)/\sigma_2)` above, and

    .. math:: \mathrm{CRPS} = \sigma_1\,\mathrm{CRPS}\bigl(F_{-\infty, 0}^{0, \sigma_2/(\sigma_1+\sigma_2)},
              \tfrac{\min(0, y - \mu)}{\sigma_1}\bigr) + \sigma_2\,\mathrm{CRPS}\bigl(
              F_{0, \sigma_1/(\sigma_1+\sigma_2)}^{\infty, 0}, \tfrac{\max(0, y - \mu)}{\sigma_2}\bigr)

    with :math:`F_{l, L}^{u, U}` the gtc standard normal.

    Examples
    --------
    >>> round(float(crps_2pnormal(0.0, 0.4, 2.0, 0.1)), 6)
    0.72432
    """
    obs, scale1, scale2, mu = prep(obs, TWO_PIECE_PARAMS, dict(scale1=scale1, scale2=scale2, mu=mu))
    total = scale1 + scale2
    below = _half_normal_piece(np.minimum(0.0, obs - mu) / scale1, 2.0 * scale1 / total)
    above = _half_normal_piece(np.minimum(0.0, mu - obs) / scale2, 2.0 * scale2 / total)
    return scale1 * below + scale2 * above


#: int_{-inf}^0 Phi(t)^2 dt = (sqrt 2 - 1) / (2 sqrt pi): half the standard normal's CRPS at 0.
_HALF_PHI2 = (math.sqrt(2.0) - 1.0) / (2.0 * math.sqrt(math.pi))
_PHI0 = 1.0 / math.sqrt(2.0 * math.pi)


def _half_normal_piece(z: np.ndarray, c: np.ndarray) -> np.ndarray:
    r"""CRPS at ``z <= 0`` of :math:`F(x) = c\,\Phi(x)` on :math:`x < 0` with the rest of the mass at 0.

    :math:`\int_z^0 (1 - c\Phi)^2 + \int_{-\infty}^z c^2\Phi^2
    = -z - 2c\,(\varphi(0) - z\Phi(z) - \varphi(z)) + c^2 \int_{-\infty}^0 \Phi^2`, using
    :math:`\int_{-\infty}^x \Phi = x\Phi(x) + \varphi(x)`. Each piece of the two-piece normal
    is one of these (the upper one reflected), so the CRPS needs one ``ndtr`` and one ``exp``
    per piece instead of the general gtc-normal form.
    """
    pdf = _PHI0 * np.exp(-0.5 * z * z)
    return -z - 2.0 * c * (_PHI0 - z * special.ndtr(z) - pdf) + c * c * _HALF_PHI2


fill_doc(crps_gtcnormal, **SECTIONS)
