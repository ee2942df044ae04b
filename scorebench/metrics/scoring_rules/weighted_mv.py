r"""Threshold-weighted energy and variogram scores (Allen, Ginsbourger & Ziegel 2023).

The threshold-weighted version of a kernel score is the score after a *chaining
function* :math:`v` applied to the members and the observation. For the weight
:math:`w(z) = \prod_k \mathbb 1\{a < z_k < b\}` (every variable inside the window) a
chaining function is the componentwise clip :math:`v(z) = \min(\max(z, a), b)`, so

.. math:: \mathrm{twES}(F, y) = \mathrm{ES}(F \circ v^{-1}, v(y)), \qquad
          \mathrm{twVS}_p(F, y) = \mathrm{VS}_p(F \circ v^{-1}, v(y)).

Thresholds are parameters (serialisable), as scoringrules' ``twenergy_score`` /
``twvariogram_score`` with ``v_func = lambda z: np.clip(z, a, b)``. The cost is that of
the unweighted score plus one clip.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from scorebench.core.docstrings import fill_doc
from scorebench.core.registry import register
from scorebench.core.validation import as_float_array
from scorebench.metrics.scoring_rules._common import FAMILY, GNEITING_RAFTERY, check_thresholds
from scorebench.metrics.scoring_rules.docs import SECTIONS
from scorebench.metrics.scoring_rules.multivariate import energy_score, variogram_score
from scorebench.metrics.scoring_rules.weighted import ALLEN

__all__ = ["twenergy_score", "twvariogram_score"]


def threshold_chain(x: Any, name: str, a: float, b: float) -> np.ndarray:
    r"""The chaining function :math:`v(z) = \min(\max(z, a), b)` of the threshold weight
    :math:`w(z) = \mathbb 1\{a \le z \le b\}`, applied elementwise to ``x`` (read as float64)."""
    x = as_float_array(x, name)
    # One-sided windows: a single maximum/minimum (np.clip with an infinite bound is slower).
    if math.isfinite(a):
        x = np.maximum(x, a)
    if math.isfinite(b):
        x = np.minimum(x, b)
    return x


@register("twenergy_score", family=FAMILY, kind="multivariate", inputs=("y", "ens"),
          higher_is_better=False, bounds=(0.0, math.inf), proper="proper", per_row=True,
          params={"a": -math.inf, "b": math.inf, "estimator": "standard"}, citation=ALLEN + "; " + GNEITING_RAFTERY,
          tested_against=('scoringrules 0.7 (numpy backend)', 1e-10))
def twenergy_score(obs: Any, ens: Any, *, a: float = -math.inf, b: float = math.inf,
                   estimator: str = "standard") -> np.ndarray:
    r"""Threshold-weighted energy score: the energy score after clipping every variable to ``[a, b]``.

    .. math:: \mathrm{twES} = \frac1M \sum_i \lVert v(x_i) - v(y)\rVert
              - \frac{1}{2c} \sum_{i,j} \lVert v(x_i) - v(x_j) \rVert,
              \qquad v(z) = \min(\max(z, a), b)

    (``c`` as in :func:`~scorebench.metrics.scoring_rules.multivariate.energy_score`).
    Proper; it emphasises outcomes with every variable inside the window (e.g. all above
    ``a``).

    Parameters
    ----------
    %(mv_ensemble, window, estimator)s

    Examples
    --------
    >>> float(twenergy_score([0.0, 0.0], [[3.0, 4.0], [-3.0, -4.0]], a=0.0))
    1.25
    """
    a, b = check_thresholds(a, b)
    return energy_score(threshold_chain(obs, "obs", a, b), threshold_chain(ens, "ens", a, b), estimator=estimator)


@register("twvariogram_score", family=FAMILY, kind="multivariate", inputs=("y", "ens"),
          higher_is_better=False, bounds=(0.0, math.inf), proper="proper", per_row=True,
          params={"a": -math.inf, "b": math.inf, "p": 0.5, "weights": None},
          citation=ALLEN + "; Scheuerer & Hamill (2015), Monthly Weather Review 143(4):1321-1334",
          tested_against=('scoringrules 0.7 (numpy backend)', 1e-10))
def twvariogram_score(obs: Any, ens: Any, *, a: float = -math.inf, b: float = math.inf, p: float = 0.5,
                      weights: Any = None) -> np.ndarray:
    r"""Threshold-weighted variogram score: the variogram score after clipping to ``[a, b]``.

    .. math:: \mathrm{twVS}_p = \sum_{i,j} w_{ij} \Bigl(|v(y_i) - v(y_j)|^p
              - \frac1M \sum_m |v(x_{m,i}) - v(x_{m,j})|^p\Bigr)^2

    Parameters
    ----------
    %(mv_ensemble, window, variogram)s

    Examples
    --------
    >>> float(twvariogram_score([0.0, 1.0], [[0.0, 1.0], [0.0, 1.0]], a=0.5))
    0.0
    """
    a, b = check_thresholds(a, b)
    return variogram_score(threshold_chain(obs, "obs", a, b), threshold_chain(ens, "ens", a, b), p=p, weights=weights)


fill_doc(twenergy_score, twvariogram_score, **SECTIONS)
