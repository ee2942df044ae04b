r"""Person fit: the standardised log-likelihood statistic :math:`l_z` (Drasgow, Levine &
Williams, 1985).

For system :math:`i` with ability :math:`\theta_i` and the items it answered,

.. math::

    l_0 = \sum_j y_{ij}\log P_{ij} + (1 - y_{ij})\log(1 - P_{ij}),\qquad
    E = \sum_j P_{ij}\log P_{ij} + (1 - P_{ij})\log(1 - P_{ij}),

    V = \sum_j P_{ij}(1 - P_{ij})\Big[\log\frac{P_{ij}}{1 - P_{ij}}\Big]^2,\qquad
    l_z = \frac{l_0 - E}{\sqrt V}.

Under the model and at the true ability :math:`l_z` is approximately standard normal; large
negative values flag aberrant answer patterns (a system right on hard items and wrong on
easy ones: memorised or contaminated items, broken answer extraction). With an estimated
ability the variance is below 1 (Snijders, 2001, derives the correction :math:`l_z^*`,
not implemented here).

References: Drasgow, F., Levine, M. V., & Williams, E. A. (1985). Appropriateness
measurement with polychotomous item response models and standardized indices. *British
Journal of Mathematical and Statistical Psychology* 38, 67-86.
"""

from __future__ import annotations

import numpy as np

from scorebench.core.errors import InputError
from scorebench.core.validation import as_float_array, check_finite
from scorebench.irt.models import log_prob

__all__ = ["lz"]


def lz(values: np.ndarray, params: np.ndarray, theta: np.ndarray) -> np.ndarray:
    r"""Person-fit :math:`l_z` of each system (rows of ``values``; NaN = not answered).

    Parameters
    ----------
    values : ndarray, shape (N, J)
        0/1 answers, NaN where the system did not answer.
    params : ndarray, shape (J, 4)
        Item parameters ``(a, d, c, u)`` (e.g. ``IRTFit.params``).
    theta : ndarray, shape (N,)
        Abilities at which to evaluate (e.g. ``IRTFit.abilities["theta"]`` on the model scale).

    Returns
    -------
    ndarray, shape (N,)
        :math:`l_z`; NaN for a system with :math:`V = 0` (no informative item answered).

    Examples
    --------
    >>> import numpy as np
    >>> items = np.array([[1.0, 2.0, 0.0, 1.0], [1.0, 0.0, 0.0, 1.0], [1.0, -2.0, 0.0, 1.0]])
    >>> lz(np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0]]), items, np.zeros(2)).round(4)
    array([ 0.5203, -3.8442])
    """
    y = as_float_array(values, "values", ndim=2)
    params = as_float_array(params, "params", ndim=2)
    theta = as_float_array(theta, "theta", ndim=1)
    if params.shape != (y.shape[1], 4) or theta.shape[0] != y.shape[0]:
        raise InputError(f"lz: expected params of shape ({y.shape[1]}, 4) and theta of length {y.shape[0]}, "
                         f"got {params.shape} and {theta.shape[0]}")
    check_finite(params, "params")
    check_finite(theta, "theta")
    obs = ~np.isnan(y)
    if not np.all(np.isin(y[obs], (0.0, 1.0))):
        raise InputError("values: expected 0/1 answers (NaN = not answered)")
    log_p, log_q = (x.T for x in log_prob(params, theta))  # (N, J)
    p = np.exp(log_p)
    y0 = np.nan_to_num(y)
    l0 = np.where(obs, y0 * log_p + (1 - y0) * log_q, 0.0).sum(axis=1)
    e = np.where(obs, p * log_p + (1 - p) * log_q, 0.0).sum(axis=1)
    v = np.where(obs, p * (1 - p) * (log_p - log_q) ** 2, 0.0).sum(axis=1)
    out = np.full(len(theta), np.nan)
    np.divide(l0 - e, np.sqrt(v), out=out, where=v > 0)
    return out
