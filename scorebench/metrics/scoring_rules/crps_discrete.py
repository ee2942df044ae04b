r"""Closed-form CRPS of count distributions: Poisson, negative binomial, binomial, hypergeometric.

For an integer-valued forecast the CDF is a step function, so the CRPS integral is a sum
over unit cells,

.. math:: \mathrm{CRPS}(F, y) = \sum_{k} \bigl[F(k)^2\,b_k + (1 - F(k))^2 (1 - b_k)\bigr]
          + (-y)_+ + (y - N)_+, \qquad b_k = \min(\max(y - k, 0), 1),

over :math:`k = 0, \dots, N - 1` for a support :math:`\{0, \dots, N\}`. The binomial and
hypergeometric scores use it (each term non-negative, the upper tail :math:`1 - F` summed
from the top, so nothing cancels; see :mod:`._lattice`); the Poisson and negative
binomial, whose support is unbounded, have closed forms. The outcome may be any real number.

References: Wei & Held (2014), TEST 23:787-805; Jordan, Krüger & Lerch (2019), J. Stat.
Software 90(12).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scorebench.core.lazy import lazy_module

from scorebench.core.errors import InputError
from scorebench.metrics.scoring_rules.crps_closed import JKL
from scorebench.metrics.scoring_rules._lattice import lattice_crps
from scorebench.metrics.scoring_rules._dist import prep, register_dist

special = lazy_module("scipy.special")

__all__ = ["crps_poisson", "crps_negbinom", "crps_binomial", "crps_hypergeometric"]

WH = "Wei & Held (2014), TEST 23:787-805; " + JKL
_POIS = {"mean": ("positive", None)}


@register_dist("crps_poisson", _POIS, "{0, 1, 2, ...}", WH,
               tested_against=(('scoringrules 0.7 (numpy backend)', 1e-13),
                                 ('scipy (distributions / numerical integration)', 0.02),))
def crps_poisson(obs: Any, mean: Any) -> np.ndarray:
    r"""CRPS of the Poisson distribution with mean :math:`\lambda`.

    .. math:: \mathrm{CRPS} = (y - \lambda)(2F(y) - 1) + 2\lambda f(\lfloor y\rfloor)
              - \lambda e^{-2\lambda}\bigl(I_0(2\lambda) + I_1(2\lambda)\bigr),

    with :math:`f, F` the Poisson mass and CDF (0 for :math:`y < 0`) and :math:`I_0, I_1`
    modified Bessel functions (taken exponentially scaled, so large means do not overflow).

    Examples
    --------
    >>> round(float(crps_poisson(1.0, 3.0)), 6)
    1.143447
    """
    obs, mean = prep(obs, _POIS, dict(mean=mean))
    k = np.floor(obs)
    neg = k < 0
    kk = np.where(neg, 0.0, k)
    cdf = np.where(neg, 0.0, special.pdtr(kk, mean))
    pmf = np.where(neg, 0.0, np.exp(special.xlogy(kk, mean) - mean - special.gammaln(kk + 1.0)))
    bessel = special.i0e(2.0 * mean) + special.i1e(2.0 * mean)
    return (obs - mean) * (2.0 * cdf - 1.0) + 2.0 * mean * pmf - mean * bessel


_NB = {"n": ("positive", None), "prob": ("(0, 1]", None)}


@register_dist("crps_negbinom", _NB, "{0, 1, 2, ...}", WH,
               tested_against=(('scoringrules 0.7 (numpy backend)', 1e-13),
                                 ('scipy (distributions / numerical integration)', 0.02),))
def crps_negbinom(obs: Any, n: Any, prob: Any = None, *, mu: Any = None) -> np.ndarray:
    r"""CRPS of the negative binomial distribution (size :math:`n > 0`, success probability
    :math:`p`, mean :math:`n(1-p)/p`); give ``prob`` or the mean ``mu``.

    .. math:: \mathrm{CRPS} = y(2F_{n,p}(y) - 1) - \frac{n(1-p)}{p^2}\Bigl(p\,(2F_{n+1,p}(y - 1) - 1)
              + {}_2F_1\bigl(n + 1, \tfrac12; 2; -\tfrac{4(1-p)}{p^2}\bigr)\Bigr),

    where :math:`F_{n,p}(k) = I_p(n, \lfloor k\rfloor + 1)` is the CDF (0 below 0).

    Examples
    --------
    >>> round(float(crps_negbinom(2.0, 5.0, 0.6)), 6)
    0.675048
    >>> bool(np.isclose(crps_negbinom(2.0, 5.0, mu=5.0 * 0.4 / 0.6), crps_negbinom(2.0, 5.0, 0.6)))
    True
    """
    if (prob is None) == (mu is None):
        raise InputError("crps_negbinom: give exactly one of prob and mu")
    if prob is None:
        mu_arr = prep(mu, {"n": _NB["n"]}, dict(n=n))
        if (mu_arr[0] < 0).any():
            raise InputError("mu: expected a non-negative mean")
        prob = mu_arr[1] / (mu_arr[1] + mu_arr[0])
    obs, n, prob = prep(obs, _NB, dict(n=n, prob=prob))
    q = 1.0 - prob
    mean = n * q / prob
    cdf, partial = _negbinom_cdf_partial(np.floor(obs), n, prob, mean)
    f2 = special.hyp2f1(n + 1.0, 0.5, 2.0, -4.0 * q / prob ** 2)
    return obs * (2.0 * cdf - 1.0) - 2.0 * partial + mean - mean / prob * f2


#: Up to this ``floor(y)`` the negative binomial CDF is summed from its masses (cheaper
#: than two ``betainc`` calls; the summed masses keep ~``k`` ulps).
_NB_SUM_MAX = 64
#: Smallest ``log f(0) = n log p`` that is summed from (the first mass stays normal).
_NB_LOG_F0_MIN = -700.0


def _negbinom_cdf_partial(k: np.ndarray, n: np.ndarray, prob: np.ndarray,
                          mean: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""The CDF :math:`F(k) = I_p(n, k + 1)` and partial mean :math:`E[X\,1\{X \le k\}] =
    \mu\,I_p(n + 1, k)` at ``k = floor(y)`` (both 0 below 0): summed from the masses for
    small ``k``, from ``betainc`` otherwise."""
    with np.errstate(divide="ignore", invalid="ignore"):
        log_f0 = n * np.log(prob)
    summed = (k >= 0) & (k <= _NB_SUM_MAX) & (log_f0 > _NB_LOG_F0_MIN)
    cdf, partial = np.zeros(k.shape), np.zeros(k.shape)
    cdf[summed], partial[summed] = _negbinom_sums(k[summed], n[summed], 1.0 - prob[summed],
                                                  np.exp(log_f0[summed]))
    rest = ~summed & ~(k < 0)  # NaN rows take this path and stay NaN
    kr, nr, pr = k[rest], n[rest], prob[rest]
    cdf[rest] = special.betainc(nr, kr + 1.0, pr)
    partial[rest] = np.where(kr < 1, 0.0, mean[rest] * special.betainc(nr + 1.0, np.maximum(kr, 1.0), pr))
    return cdf, partial


def _negbinom_sums(k: np.ndarray, n: np.ndarray, q: np.ndarray, f0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r""":math:`\sum_{j \le k} f(j)` and :math:`\sum_{j \le k} j f(j)` from the recurrence
    :math:`j f(j) = (n + j - 1)\,q\,f(j - 1)`, rows sorted by ``k`` so that the rows still
    summing at step ``j`` are a prefix."""
    order = np.argsort(-k.astype(np.int16), kind="stable")  # a radix sort, k <= _NB_SUM_MAX
    active = np.searchsorted(-k[order], -np.arange(1, int(k.max(initial=0)) + 1), side="right")
    n1, qs, f = n[order] - 1.0, q[order], f0[order]
    cdf, partial, step = f.copy(), np.zeros(f.size), np.empty(f.size)
    for j, c in enumerate(active, start=1):
        t = np.add(n1[:c], j, out=step[:c])
        t *= qs[:c]
        f[:c] *= t  # now j f(j)
        partial[:c] += f[:c]
        f[:c] *= 1.0 / j
        cdf[:c] += f[:c]
    out_cdf, out_partial = np.empty(f.size), np.empty(f.size)
    out_cdf[order], out_partial[order] = cdf, partial
    return out_cdf, out_partial


_BINOM = {"n": ("nonnegative integer", None), "prob": ("[0, 1]", None)}


@register_dist("crps_binomial", _BINOM, "{0, ..., n}", JKL,
               tested_against=(('scoringrules 0.7 (numpy backend)', 1e-13),
                                 ('scipy (distributions / numerical integration)', 0.02),))
def crps_binomial(obs: Any, n: Any, prob: Any) -> np.ndarray:
    r"""CRPS of the binomial distribution with :math:`n` trials and success probability :math:`p`.

    The cell sum of the module docstring over :math:`k = 0, \dots, n - 1`, the masses from
    the ratios :math:`f(k + 1)/f(k) = \frac{n - k}{k + 1}\frac{p}{1 - p}` (work grows with
    the sum of the ``n``; :math:`p \in \{0, 1\}` are point masses).

    Examples
    --------
    >>> round(float(crps_binomial(3.0, 10, 0.4)), 6)
    0.57715
    """
    obs, n, prob = prep(obs, _BINOM, dict(n=n, prob=prob))
    q = 1.0 - prob
    odds = prob / np.where(q > 0.0, q, 1.0)
    lo = np.where(prob == 1.0, n, 0.0)  # p = 0 and p = 1 are point masses at 0 and n
    size = np.where((prob > 0.0) & (q > 0.0), n, 0.0)
    mode = np.minimum(np.floor((n + 1.0) * prob), n)
    fn, fodds = n.ravel(), odds.ravel()

    def log_ratio(rows: np.ndarray, i: np.ndarray) -> np.ndarray:
        # f(i + 1)/f(i) = (n - i)/(i + 1) * p/(1 - p); <= 0 from i = n on
        t = fn[rows] - i
        t *= 1.0 / (i + 1.0)
        t *= fodds[rows]
        return np.log(t, out=t)

    return lattice_crps(obs, lo, size, mode, log_ratio)


_HYPER = {"m": ("nonnegative integer", None), "n": ("nonnegative integer", None),
          "k": ("nonnegative integer", None)}


@register_dist("crps_hypergeometric", _HYPER, "{max(0, k - n), ..., min(k, m)}", JKL,
               tested_against=(('scoringrules 0.7 (numpy backend)', 1e-13),
                                 ('scipy (distributions / numerical integration)', 0.02),))
def crps_hypergeometric(obs: Any, m: Any, n: Any, k: Any) -> np.ndarray:
    r"""CRPS of the hypergeometric distribution: successes in :math:`k` draws without
    replacement from :math:`m` successes and :math:`n` failures (R's ``dhyper(x, m, n, k)``).

    The mass is :math:`f(x) = \binom{m}{x}\binom{n}{k - x}/\binom{m + n}{k}`, taken from
    the ratios :math:`f(x + 1)/f(x) = \frac{(m - x)(k - x)}{(x + 1)(n - k + x + 1)}` and
    summed over cells as in the module docstring (work grows with the support widths).

    Examples
    --------
    >>> round(float(crps_hypergeometric(5.0, 7, 13, 12)), 6)
    0.446974
    """
    obs, m, n, k = prep(obs, _HYPER, dict(m=m, n=n, k=k))
    if (k > m + n).any():
        raise InputError(f"k: expected at most m + n draws, got k={float(k[k > m + n].ravel()[0])!r}")
    lo = np.maximum(k - n, 0.0)
    size = np.minimum(k, m) - lo
    mode = np.clip(np.floor((k + 1.0) * (m + 1.0) / (m + n + 2.0)) - lo, 0.0, size)
    far = np.maximum(m, k) - lo  # the other factor of the upper ratio, >= size
    first, second = lo + 1.0, n - k + lo + 1.0
    fsize, ffar, ffirst, fsecond = (a.ravel() for a in (size, far, first, second))

    def log_ratio(rows: np.ndarray, i: np.ndarray) -> np.ndarray:
        # f(x + 1)/f(x) = (m - x)(k - x)/((x + 1)(n - k + x + 1)) at x = lo + i; 0 from i = size on
        t = np.maximum(fsize[rows] - i, 0.0)
        t *= ffar[rows] - i
        t /= (ffirst[rows] + i) * (fsecond[rows] + i)
        return np.log(t, out=t)

    return lattice_crps(obs, lo, size, mode, log_ratio)
