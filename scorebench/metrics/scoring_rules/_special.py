"""Special-function evaluations shared by the closed-form scores, chosen per element for speed."""

from __future__ import annotations

import numpy as np

from ..._lazy import lazy_module

special = lazy_module("scipy.special")

#: Below this ``x`` scipy's ``gammaincc`` is several times slower than ``gammainc`` (up to
#: ~15x for ``0.3 < x < 1``), so ``Q = 1 - P`` is taken from ``gammainc`` there ...
_GAMMA_X_SWITCH = 1.0
#: ... where ``P`` is at most this (``Q >= 0.1``: at most 4 bits of ``Q`` lost).
_GAMMA_P_MAX = 0.9


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
