r"""Empirical reliability of IRT ability estimates.

.. math::

    \hat\rho = \frac{\widehat{\mathrm{Var}}(\hat\theta)}
    {\widehat{\mathrm{Var}}(\hat\theta) + \overline{\mathrm{SE}^2}},

the share of the variance of the estimates that is not measurement error. With EAP
estimates and posterior standard deviations as SEs the denominator estimates the latent
variance (the law of total variance), so :math:`\hat\rho` estimates the squared
correlation between the EAPs and the true abilities. This is the empirical reliability of
du Toit (2003) and of R mirt's ``empirical_rxx``.

Reference: du Toit, M. (2003). *IRT from SSI*. Scientific Software International.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from scorebench.core.errors import InputError
from scorebench.core.validation import as_float_array, check_finite

__all__ = ["empirical_reliability"]


def empirical_reliability(theta: Any, se: Any) -> float:
    r"""Empirical reliability of ability estimates ``theta`` with standard errors ``se``.

    Parameters
    ----------
    theta, se : array-like, shape (N,)
        Estimates and their standard errors (e.g. ``fit.abilities["theta"]`` and ``["se"]``).

    Returns
    -------
    float
        :math:`\mathrm{Var}(\hat\theta) / (\mathrm{Var}(\hat\theta) + \mathrm{mean}(\mathrm{SE}^2))`
        (sample variance, ``ddof=1``, as mirt's ``empirical_rxx``).

    Examples
    --------
    >>> empirical_reliability([-1.0, 0.0, 1.0], [0.5, 0.5, 0.5])
    0.8
    """
    t = as_float_array(theta, "theta", ndim=1)
    s = as_float_array(se, "se", ndim=1)
    check_finite(t, "theta")
    check_finite(s, "se")
    if t.shape != s.shape or t.size < 2:
        raise InputError(f"theta, se: expected two arrays of the same length >= 2, got {t.size} and {s.size}")
    if np.any(s < 0):
        raise InputError("se: standard errors must be >= 0")
    var = float(np.var(t, ddof=1))  # the sample variance, as mirt's var()
    err = float(np.mean(s * s))
    if var + err == 0:
        raise InputError("theta, se: all estimates equal with zero standard errors; reliability is undefined")
    return var / (var + err)
