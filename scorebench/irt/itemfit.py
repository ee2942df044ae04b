r"""Item fit: infit and outfit mean squares (Wright & Masters, 1982).

With abilities :math:`\hat\theta_i` (EAP) and standardised residuals
:math:`z_{ij} = (y_{ij} - P_{ij}) / \sqrt{P_{ij}(1 - P_{ij})}` over the answered items,

.. math::

    \text{outfit}_j = \frac{1}{n_j}\sum_i z_{ij}^2, \qquad
    \text{infit}_j = \frac{\sum_i (y_{ij} - P_{ij})^2}{\sum_i P_{ij}(1 - P_{ij})}.

Both have expectation 1 under the model; values well above 1 (say > 1.3) flag items whose
answers the model does not explain (noise, miskeys), values well below 1 flag items that
discriminate more sharply than the model expects.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

__all__ = ["infit_outfit"]


def infit_outfit(values: np.ndarray, params: np.ndarray, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Infit and outfit mean squares of each item, shape (J,) each (NaN for unusable items).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> theta = rng.normal(size=4000)
    >>> items = np.array([[1.0, 0.0, 0.0, 1.0], [1.5, 0.5, 0.0, 1.0]])
    >>> y = (rng.random((4000, 2)) < 1 / (1 + np.exp(-(theta[:, None] * items[:, 0] + items[:, 1])))) * 1.0
    >>> infit, outfit = infit_outfit(y, items, theta)
    >>> bool(np.all(np.abs(infit - 1) < 0.1))
    True
    """
    J = values.shape[1]
    num = np.zeros(J)
    var_sum = np.zeros(J)
    z2 = np.zeros(J)
    n = np.zeros(J)
    a, d, c, u = (params[:, k][None, :] for k in range(4))
    rows = max(1, 2_000_000 // max(1, J))
    for start in range(0, values.shape[0], rows):
        v = values[start:start + rows]
        obs = ~np.isnan(v)
        P = np.clip(c + (u - c) * expit(a * theta[start:start + rows, None] + d), 1e-12, 1 - 1e-12)
        res2 = np.where(obs, (np.nan_to_num(v) - P) ** 2, 0.0)
        w = P * (1 - P)
        num += res2.sum(axis=0)
        var_sum += np.where(obs, w, 0.0).sum(axis=0)
        z2 += (res2 / w).sum(axis=0)
        n += obs.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return num / var_sum, z2 / n
