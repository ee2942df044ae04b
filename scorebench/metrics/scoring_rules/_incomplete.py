r"""Regularised incomplete gamma and beta functions, evaluated the cheaper way per element.

Several closed forms need :math:`P(a + 1, x)` beside :math:`P(a, x)` (the gamma CDF) or
:math:`I_x(a + 1, b)` beside :math:`I_x(a, b)`. The recurrences

.. math:: P(a + 1, x) = P(a, x) - d_\Gamma, \quad d_\Gamma = \frac{x^a e^{-x}}{\Gamma(a + 1)},
          \qquad I_x(a + 1, b) = I_x(a, b) - d_B, \quad d_B = \frac{x^a (1 - x)^b}{a\,B(a, b)},

cost an exponential instead of a continued fraction, but subtract: where the result is
small next to the known value (small ``x``) digits cancel. So the recurrence is used only
where the result is at least 1/8 of the known value (at most 3 bits lost). Below that the
lower-tail series

.. math:: P(a + 1, x) = d_\Gamma \sum_{n \ge 1} \frac{x^n}{(a + 1) \cdots (a + n)}, \qquad
          I_x(a + 1, b) = d_B \sum_{n \ge 1} \prod_{i=1}^{n}\frac{x (a + b + i - 1)}{a + i}

(all terms positive) is summed where its terms shrink at least 4-fold, and the special
function is evaluated directly on the elements left. The exponential term carries the
rounding of its logarithm, ~eps times the sum of the magnitudes of the logarithm's parts,
so the shortcuts are taken only where that sum is at most 64 (a result within ~6e-14
relative; SciPy's direct evaluation is ~1e-15, and wrong, with relative error 1, for some
results below 1e-240 that the shortcuts get right).

:func:`upper_gamma` is :math:`Q(a, x)`, taken as ``1 - gammainc`` where scipy's
``gammaincc`` is slow and the difference keeps its digits.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from scorebench.core.lazy import lazy_module

special = lazy_module("scipy.special")

__all__ = ["gammainc_next", "betainc_next", "upper_gamma"]

#: Smallest ratio (result / known value) at which the recurrence is trusted.
_SAFE_RATIO = 0.125
#: Largest ratio of successive series terms at which the series is summed, and the
#: number of terms that takes to reach eps at worst.
_SERIES_RATIO = 0.25
_SERIES_MAX_TERMS = 32
#: Largest sum of the magnitudes of the parts of ``log d`` at which ``d`` is trusted.
_MAX_LOG_PARTS = 64.0
#: Below this ``x`` scipy's ``gammaincc`` is several times slower than ``gammainc`` (up to
#: ~15x for ``0.3 < x < 1``), so ``Q = 1 - P`` is taken from ``gammainc`` there ...
_GAMMA_X_SWITCH = 1.0
#: ... where ``P`` is at most this (``Q >= 0.1``: at most 4 bits of ``Q`` lost).
_GAMMA_P_MAX = 0.9


def _series(ratio: Callable[[int], np.ndarray]) -> np.ndarray:
    """``sum_{n >= 1} prod_{i <= n} ratio(i)`` for term ratios at most ``_SERIES_RATIO``,
    until every term is below ``eps`` of its sum (checked every 4 terms)."""
    term = ratio(1)
    total = term.copy()
    i = 1
    while i < _SERIES_MAX_TERMS:
        for _ in range(4):
            i += 1
            term = term * ratio(i)
            total += term
        if not (term > 1e-17 * total).any():
            break
    return total


def _trusted(term: np.ndarray, *log_parts: np.ndarray) -> np.ndarray:
    """Where the term ``exp(sum(log_parts))`` keeps ~eps * 64 relative (or is exactly 0)."""
    return (sum(np.abs(v) for v in log_parts) <= _MAX_LOG_PARTS) | (term == 0.0)


def _patch(estimate: np.ndarray, known: np.ndarray, trusted: np.ndarray, fast: np.ndarray,
           series: Callable[..., np.ndarray], direct: Callable[..., np.ndarray], *args: np.ndarray) -> np.ndarray:
    """``estimate`` where it keeps its digits; elsewhere ``series`` on the ``fast`` rows and
    ``direct`` on the rest (each on its subset of ``args``)."""
    with np.errstate(invalid="ignore"):
        unsafe = ~(trusted & (estimate >= _SAFE_RATIO * known))
    estimate = np.array(estimate, dtype=np.float64)  # an array also for 0-d inputs
    for rows, fn in ((unsafe & fast & trusted, series), (unsafe & ~(fast & trusted), direct)):
        if rows.any():
            estimate[rows] = fn(*(a[rows] for a in args))
    return estimate


def gammainc_next(a: np.ndarray, x: np.ndarray, p_a: np.ndarray,
                  log_gamma: np.ndarray | None = None) -> np.ndarray:
    """``P(a + 1, x)`` (lower regularised incomplete gamma) given ``p_a = P(a, x)``;
    ``log_gamma`` is ``log Gamma(a + 1)`` when the caller has it.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import special
    >>> a, x = np.array([0.5, 2.0, 3.0]), np.array([4.0, 1e-3, 2.5])
    >>> bool(np.allclose(gammainc_next(a, x, special.gammainc(a, x)), special.gammainc(a + 1, x), rtol=1e-14))
    True
    """
    a, x, p_a = np.broadcast_arrays(np.asarray(a, float), np.asarray(x, float), np.asarray(p_a, float))
    log_gamma = special.gammaln(a + 1.0) if log_gamma is None else log_gamma
    with np.errstate(divide="ignore", invalid="ignore", under="ignore"):
        power = a * np.log(x)  # a > 0: x = 0 gives -inf, a zero term
        term = np.exp(power - x - log_gamma)
        trusted = _trusted(term, power, x, log_gamma)
        fast = x <= _SERIES_RATIO * (a + 2.0)  # term ratios x / (a + n), n >= 2

    def series(aa, xx, tt):
        return tt * _series(lambda i: xx / (aa + i))

    return _patch(p_a - term, p_a, trusted, fast, series,
                  lambda aa, xx, tt: special.gammainc(aa + 1.0, xx), a, x, term)


def betainc_next(a: np.ndarray, b: np.ndarray, x: np.ndarray, i_a: np.ndarray,
                 log_beta: np.ndarray | None = None) -> np.ndarray:
    """``I_x(a + 1, b)`` (regularised incomplete beta) given ``i_a = I_x(a, b)``;
    ``log_beta`` is ``log B(a, b)`` when the caller has it.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import special
    >>> a, b, x = np.array([0.5, 2.0, 3.0]), np.array([1.5, 0.3, 4.0]), np.array([0.9, 1e-4, 0.4])
    >>> bool(np.allclose(betainc_next(a, b, x, special.betainc(a, b, x)), special.betainc(a + 1, b, x),
    ...                  rtol=1e-14))
    True
    """
    a, b, x, i_a = np.broadcast_arrays(*(np.asarray(v, float) for v in (a, b, x, i_a)))
    log_beta = special.betaln(a, b) if log_beta is None else log_beta
    with np.errstate(divide="ignore", invalid="ignore", under="ignore"):
        parts = (a * np.log(x), b * np.log1p(-x), np.log(a), log_beta)  # a, b > 0
        term = np.exp(parts[0] + parts[1] - parts[2] - parts[3])
        trusted = _trusted(term, *parts)
        # the term ratios x (a + b + i - 1)/(a + i) are monotone in i: at most the first or x
        fast = x * np.maximum((a + b) / (a + 1.0), 1.0) <= _SERIES_RATIO

    def series(aa, bb, xx, tt):
        top = aa + bb - 1.0
        return tt * _series(lambda i: xx * (top + i) / (aa + i))

    return _patch(i_a - term, i_a, trusted, fast, series,
                  lambda aa, bb, xx, tt: special.betainc(aa + 1.0, bb, xx), a, b, x, term)


def upper_gamma(a: np.ndarray, x: np.ndarray, allowed: np.ndarray | bool = True) -> np.ndarray:
    """The regularised upper incomplete gamma function ``Q(a, x)``.

    As ``1 - gammainc(a, x)`` where ``x < 1``, ``allowed`` and ``gammainc <= 0.9``, by
    ``gammaincc`` elsewhere (``allowed`` lets a caller whose formula amplifies the absolute
    error of ``Q`` keep ``gammaincc`` on some rows).

    Examples
    --------
    >>> from scipy import special
    >>> a, x = np.array([0.5, 2.0, 0.05]), np.array([0.4, 3.0, 0.5])
    >>> bool(np.allclose(upper_gamma(a, x), special.gammaincc(a, x), rtol=1e-14, atol=0))
    True
    """
    shape = np.broadcast_shapes(np.shape(a), np.shape(x), np.shape(allowed))
    a, x, allowed = (np.ravel(v) for v in np.broadcast_arrays(a, x, allowed))
    cheap = allowed & (x < _GAMMA_X_SWITCH)
    if not cheap.any():
        return special.gammaincc(a, x).reshape(shape)
    out = np.empty(x.shape)
    p = special.gammainc(a[cheap], x[cheap])
    out[cheap] = 1.0 - p
    direct = ~cheap
    direct[cheap] = p > _GAMMA_P_MAX
    out[direct] = special.gammaincc(a[direct], x[direct])
    return out.reshape(shape)
