r"""GREAT score: global adversarial robustness of a classifier, estimated from generated samples.

For samples :math:`x_j = G(z_j)` from a (class-conditional) generative model with class
:math:`c_j`, and a classifier with class probabilities :math:`f(x)`, the local certified
:math:`L_2` robustness lower bound is

.. math:: g(x_j) = \sqrt{\pi/2}\;\max\Bigl(0,\ f_{c_j}(x_j) - \max_{k\ne c_j} f_k(x_j)\Bigr),

and the GREAT score is its mean over samples, an unbiased estimate of the global
robustness :math:`\mathbb{E}_{z}[g(G(z))]`. Misclassified samples contribute 0.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from scorebench.core.errors import InputError
from scorebench.core.registry import NO_EXTERNAL_REFERENCE, register
from scorebench.core.validation import as_float_array, check_finite, check_simplex

__all__ = ["great_score"]

_SQRT_HALF_PI = math.sqrt(math.pi / 2.0)


@register("great_score", family="generative", kind="multiclass", inputs=("y", "P"),
          higher_is_better=True, bounds=(0.0, _SQRT_HALF_PI), per_row=True,
          citation="Li, Chen, Tsai & Ho (2024), GREAT Score: Global Robustness Evaluation of "
                   "Adversarial Perturbation using Generative Models, NeurIPS", tested_against=NO_EXTERNAL_REFERENCE)
def great_score(y: Any, P: Any) -> np.ndarray:
    r"""Per-sample GREAT robustness certificates; their mean is the GREAT score.

    .. math:: g_j = \sqrt{\pi/2}\,\max\bigl(0,\ P_{j,y_j} - \max_{k\ne y_j} P_{jk}\bigr)

    Parameters
    ----------
    y : array_like of int, shape (n,)
        Class of each generated sample (the class it was generated for).
    P : array_like of shape (n, n_classes)
        The classifier's class probabilities (softmax outputs) on the samples.

    Returns
    -------
    ndarray of shape (n,)
        Contributions in :math:`[0, \sqrt{\pi/2}]`; the table value is their mean.

    References
    ----------
    Li, Chen, Tsai & Ho (2024), "GREAT Score: Global Robustness Evaluation of Adversarial
    Perturbation using Generative Models", NeurIPS.

    Examples
    --------
    >>> import numpy as np
    >>> g = great_score([0, 1], [[0.9, 0.1], [0.8, 0.2]])
    >>> np.round(g / np.sqrt(np.pi / 2), 12).tolist()
    [0.8, 0.0]
    """
    p = as_float_array(P, "P", ndim=2)
    check_finite(p, "P")
    p = check_simplex(p, "P", atol=1e-4)
    labels = as_float_array(y, "y", ndim=1)
    if labels.size != p.shape[0]:
        raise InputError(f"y has {labels.size} label(s) but P has {p.shape[0]} rows; expected one label per row")
    check_finite(labels, "y")
    bad = (labels != np.round(labels)) | (labels < 0) | (labels >= p.shape[1])
    if bad.any():
        raise InputError(f"y: expected class indices 0..{p.shape[1] - 1}, got {labels[bad][0]!r}")
    idx = labels.astype(np.int64)
    rows = np.arange(p.shape[0])
    true = p[rows, idx]
    others = p.copy()
    others[rows, idx] = -np.inf
    margin = true - others.max(axis=1) if p.shape[1] > 1 else true
    return _SQRT_HALF_PI * np.clip(margin, 0.0, None)
