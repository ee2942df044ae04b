r"""The Rogan-Gladen correction of a judge's accuracy (pass rate) for its sensitivity and specificity.

A binary judge marks every row right (1) or wrong (0); on the human-labelled rows its
sensitivity :math:`\widehat{se} = P(f = 1 \mid y = 1)` and specificity
:math:`\widehat{sp} = P(f = 0 \mid y = 0)` are estimated. With :math:`\hat q` the share of
rows the judge passes (all rows), the true pass rate is estimated by

.. math:: \hat\theta = \frac{\hat q + \widehat{sp} - 1}{\widehat{se} + \widehat{sp} - 1},

truncated to [0, 1] (Rogan & Gladen 1978). Its interval must carry the calibration set's
uncertainty: the delta method (Greenland 1996; Lang & Reiczigel 2014) gives

.. math:: \widehat{\operatorname{Var}}(\hat\theta) = \frac{\hat q(1-\hat q)/M
          + \hat\theta^2\, \widehat{se}(1-\widehat{se})/n_1
          + (1-\hat\theta)^2\, \widehat{sp}(1-\widehat{sp})/n_0}{(\widehat{se} + \widehat{sp} - 1)^2},

(:func:`rogan_gladen_interval`); :func:`scorebench.evaluate` resamples the rows, labelled
and unlabelled together, which carries it as well. A judge no better than chance
(:math:`\widehat{se} + \widehat{sp} \le 1`) makes the correction undefined and is refused.

References
----------
Rogan & Gladen (1978), Estimating prevalence from the results of a screening test, American
Journal of Epidemiology 107(1). Lang & Reiczigel (2014), Confidence limits for prevalence of
disease adjusted for estimated sensitivity and specificity, Preventive Veterinary Medicine 113(1).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from scorebench.core.errors import InputError

__all__ = ["rogan_gladen", "rogan_gladen_interval", "rogan_gladen_stats", "rogan_gladen_finalize"]


def _binary(judge: Any, human: Any) -> tuple[np.ndarray, np.ndarray]:
    f = np.asarray(judge, dtype=np.float64).ravel()
    y = np.asarray(human, dtype=np.float64).ravel()
    if f.shape != y.shape:
        raise InputError(f"rogan_gladen: judge and human have different lengths ({f.size} and {y.size})")
    for name, v in (("judge", f), ("human", y[~np.isnan(y)])):
        bad = (v != 0) & (v != 1)
        if bad.any():
            raise InputError(f"rogan_gladen: column {name!r} has {v[bad][0]!r}; expected verdicts 0 or 1")
    return f, y


def rogan_gladen_stats(judge: Any, human: Any, weights: Any = None) -> np.ndarray:
    """Sums ``[rows, judge passes, labelled right, judge passes among them, labelled wrong,
    judge fails among them]``, shape ``(6,)`` or ``(B, 6)`` under row weights."""
    f, y = _binary(judge, human)
    pos, neg = y == 1, y == 0
    cols = np.column_stack([np.ones_like(f), f, pos, pos & (f == 1), neg, neg & (f == 0)]).astype(np.float64)
    return cols.sum(axis=0) if weights is None else np.asarray(weights, dtype=np.float64) @ cols


def rogan_gladen_finalize(stats: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(estimate, delta-method variance)`` from the sums (batched); NaN where undefined."""
    s = np.asarray(stats, dtype=np.float64)
    m, passed, n1, tp, n0, tn = (s[..., j] for j in range(6))
    with np.errstate(invalid="ignore", divide="ignore"):
        q, se, sp = passed / m, tp / n1, tn / n0
        j = se + sp - 1.0
        theta = np.clip((q + sp - 1.0) / j, 0.0, 1.0)
        var = (q * (1 - q) / m + theta ** 2 * se * (1 - se) / n1 + (1 - theta) ** 2 * sp * (1 - sp) / n0) / j ** 2
    bad = ~(j > 0) | (n1 == 0) | (n0 == 0)
    return np.where(bad, np.nan, theta), np.where(bad, np.nan, var)


def _checked(judge: Any, human: Any) -> tuple[float, float]:
    theta, var = rogan_gladen_finalize(rogan_gladen_stats(judge, human))
    if np.isnan(theta):
        f, y = _binary(judge, human)
        n1, n0 = int((y == 1).sum()), int((y == 0).sum())
        if n1 == 0 or n0 == 0:
            raise InputError(f"rogan_gladen: the human labels hold {n1} right and {n0} wrong row(s); estimating the "
                             "judge's sensitivity and specificity needs both")
        raise InputError("rogan_gladen: the judge is no better than chance on the labelled rows (sensitivity + "
                         "specificity <= 1); the correction is undefined")
    return float(theta), float(var)


def rogan_gladen(judge: Any, human: Any) -> float:
    r"""Rogan-Gladen corrected pass rate from a binary judge on all rows and human labels on some.

    Examples
    --------
    >>> import numpy as np
    >>> judge = np.array([1, 1, 0, 0, 1, 1, 1, 0, 1, 1])
    >>> human = np.array([1, 0, 0, 0, 1, 1, np.nan, np.nan, np.nan, np.nan])
    >>> round(rogan_gladen(judge, human), 4)
    0.55
    """
    return _checked(judge, human)[0]


def rogan_gladen_interval(judge: Any, human: Any, *, ci: float = 0.95) -> tuple[float, float, float]:
    """The corrected pass rate and its delta-method interval (clipped to [0, 1])."""
    from scipy.stats import norm

    theta, var = _checked(judge, human)
    half = norm.ppf(0.5 + ci / 2.0) * np.sqrt(var)
    return theta, max(0.0, theta - half), min(1.0, theta + half)
