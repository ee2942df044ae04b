r"""Person fit :math:`l_z` for polytomous and mixed item sets (Drasgow, Levine & Williams, 1985).

With :math:`\delta_{jk} = [y_{ij} = k]` over the items system :math:`i` answered, at ability
:math:`\theta_i`,

.. math::

    l_0 = \sum_j\sum_k \delta_{jk}\log P_{jk},\qquad E = \sum_j\sum_k P_{jk}\log P_{jk},\qquad
    V = \sum_j\Big[\sum_k P_{jk}(\log P_{jk})^2 - \Big(\sum_k P_{jk}\log P_{jk}\Big)^2\Big],

:math:`l_z = (l_0 - E)/\sqrt V`. For 0/1 items it is the dichotomous
:func:`~scorebench.irt.lz`. Large negative values flag aberrant score patterns.

Reference: Drasgow, F., Levine, M. V., & Williams, E. A. (1985). *British Journal of
Mathematical and Statistical Psychology* 38, 67-86.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from scorebench.core.errors import InputError
from scorebench.core.validation import as_float_array, check_finite

__all__ = ["lz_poly"]


def lz_poly(fit: Any, theta: Any = None, values: Any = None) -> np.ndarray:
    """:math:`l_z` of every system of a ``PolyIRTFit`` (at its EAPs unless ``theta`` is given).

    ``theta`` is on the fit's reported scale; ``values`` defaults to the fitted responses.

    Examples
    --------
    >>> import numpy as np
    >>> from scorebench.irt import fit
    >>> from scorebench.irt.polymodels import simulate
    >>> rng = np.random.default_rng(0)
    >>> y = simulate("graded", np.full(8, 1.5), np.tile([1.0, -1.0], (8, 1)), rng.normal(size=300), rng)
    >>> z = lz_poly(fit(y, "grm"))
    >>> z.shape, bool(abs(z.mean()) < 0.5)
    ((300,), True)
    """
    from scorebench.irt.polymodels import log_category_probs

    y = fit.values if values is None else as_float_array(values, "values", ndim=2)
    if y.shape[1] != len(fit.items):
        raise InputError(f"values: expected {len(fit.items)} item columns, got {y.shape[1]}")
    th = fit.abilities["theta"].to_numpy() if theta is None else as_float_array(theta, "theta", ndim=1)
    check_finite(th, "theta")
    if th.shape[0] != y.shape[0]:
        raise InputError(f"theta: expected {y.shape[0]} abilities, got {th.shape[0]}")
    th = th / fit.latent_sd
    l0 = np.zeros(len(th))
    e = np.zeros(len(th))
    v = np.zeros(len(th))
    for (kind, K), idx in fit.layout.groups().items():
        lp = log_category_probs(kind, fit.a[idx], fit.d[idx, :K], th)         # (G, K+1, N)
        p = np.exp(lp)
        yy = y[:, idx].T                                                       # (G, N)
        obs = ~np.isnan(yy)
        if np.any(obs & ((yy < 0) | (yy > K) | (yy != np.round(yy)))):
            raise InputError(f"values: scores outside 0..{K} for items scored 0..{K}")
        k = np.where(obs, yy, 0).astype(int)
        picked = np.take_along_axis(lp, k[:, None, :], axis=1)[:, 0]
        m1 = (p * lp).sum(axis=1)
        m2 = (p * lp * lp).sum(axis=1)
        l0 += np.where(obs, picked, 0.0).sum(axis=0)
        e += np.where(obs, m1, 0.0).sum(axis=0)
        v += np.where(obs, m2 - m1 * m1, 0.0).sum(axis=0)
    out = np.full(len(th), np.nan)
    np.divide(l0 - e, np.sqrt(v), out=out, where=v > 0)
    return out
