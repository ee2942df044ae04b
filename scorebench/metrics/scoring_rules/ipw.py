r"""The strictly proper scoring rule tailored to inverse-probability-weighted ATE estimation.

Propensity scores :math:`e(x) = P(T = 1 \mid x)` enter the IPW estimator of the average
treatment effect through :math:`T/e - (1-T)/(1-e)`, so errors near 0 and 1 are amplified.
Plaud, Perez-Lebel et al. (2026) derive a strictly proper scoring rule whose curvature
(Schervish weight) matches that of the downstream IPW error,

.. math:: w(q) = G''(q) = \frac{2}{q^2} + \frac{2}{(1-q)^2} + \frac{2}{q^3} + \frac{2}{(1-q)^3},

from the convex generator
:math:`G(q) = \frac1q + \frac1{1-q} - 2\log q - 2\log(1-q)`. The score
:math:`S(q, t) = -G(q) - G'(q)(t - q) + 4` is, in closed form,

.. math::
    S(q, 1) = \frac{1}{q^2} - \frac{2}{1-q} + 2\log\bigl(q(1-q)\bigr), \qquad
    S(q, 0) = \frac{1}{(1-q)^2} - \frac{2}{q} + 2\log\bigl(q(1-q)\bigr).

Its **canonical link** is :math:`\theta = G'(q)`,

.. math:: \theta(q) = \frac{1}{(1-q)^2} - \frac{1}{q^2} + \frac{2}{1-q} - \frac{2}{q}
          = (2q - 1)\,\frac{1 + 2q(1-q)}{q^2 (1-q)^2},

a quartic-type link (odd about :math:`q = 1/2`); modelling :math:`\theta` linearly and
mapping back with :func:`ipw_inverse_link` makes the score convex in the model's
parameters, as the logit does for the log score.

Reference: R. Plaud, A. Perez-Lebel, A. Saillenfest, T. Bonald, M. Le Morvan,
G. Varoquaux, M. Labeau (2026). Tailoring Strictly Proper Scoring Rules for Downstream
Tasks: An Application to Causal Inference. ICML 2026, arXiv:2606.03332.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from scorebench.core.registry import register
from scorebench.core.validation import as_float_array, check_probability
from scorebench.metrics.scoring_rules._common import FAMILY, PROB_CLIP, binary_inputs

__all__ = ["ipw_score", "ipw_link", "ipw_inverse_link"]

PLAUD = ("Plaud, Perez-Lebel et al. (2026), Tailoring Strictly Proper Scoring Rules for Downstream "
         "Tasks: An Application to Causal Inference, ICML 2026, arXiv:2606.03332")


@register("ipw_score", family=FAMILY, kind="binary", inputs=("y", "p"), higher_is_better=False,
          bounds=(-math.inf, math.inf), proper="strict", per_row=True, citation=PLAUD,
          tested_against=('scipy (distributions / numerical integration)', 1e-12))
def ipw_score(y: Any, p: Any) -> np.ndarray:
    r"""IPW-tailored strictly proper score of a propensity forecast (a loss).

    .. math:: S(q, 1) = \frac{1}{q^2} - \frac{2}{1-q} + 2\log(q(1-q)), \quad
              S(q, 0) = \frac{1}{(1-q)^2} - \frac{2}{q} + 2\log(q(1-q)),

    with :math:`q` the forecast probability of treatment clipped to
    ``[1e-15, 1 - 1e-15]`` (the same dtype-independent rule as :func:`log_score`). The
    score is not bounded below and can be negative; only differences between forecasts
    of the same outcomes are meaningful. See the module docstring for the generator,
    the curvature matched to the IPW error and the canonical link.

    Parameters
    ----------
    y : array_like
        Treatment indicators, 0 or 1.
    p : array_like
        Forecast propensity scores :math:`P(T = 1 \mid x)`.

    Returns
    -------
    ndarray
        One score per unit; lower is better.

    Examples
    --------
    >>> ipw_score([1, 0], [0.5, 0.5]).round(6).tolist()
    [-2.772589, -2.772589]
    """
    y, p = binary_inputs(y, p)
    q = np.clip(p, PROB_CLIP, 1.0 - PROB_CLIP)
    # S(q, y) depends on y only through the probability given to the outcome that occurred.
    hit = np.where(y == 1, q, 1.0 - q)
    miss = 1.0 - hit
    return 1.0 / (hit * hit) - 2.0 / miss + 2.0 * np.log(q * (1.0 - q))


def ipw_link(p: Any) -> np.ndarray:
    r"""Canonical link of :func:`ipw_score`: :math:`\theta = (2q-1)(1 + 2q(1-q)) / (q(1-q))^2`.

    Examples
    --------
    >>> ipw_link([0.5, 0.25]).tolist()
    [0.0, -19.555555555555557]
    """
    q = as_float_array(p, "p", check_inf=True)
    check_probability(q, "p")
    q = np.clip(q, PROB_CLIP, 1.0 - PROB_CLIP)
    u = q * (1.0 - q)
    return (2.0 * q - 1.0) * (1.0 + 2.0 * u) / (u * u)


def ipw_inverse_link(theta: Any) -> np.ndarray:
    r"""Inverse of :func:`ipw_link`: the probability :math:`q` with :math:`G'(q) = \theta`.

    Solved per element by Newton's method on :math:`t = \min(q, 1 - q)`, where
    :math:`h(t) = |\theta(t)|` is convex and decreasing on :math:`(0, 1/2]`; started at
    :math:`t_0 = 1/(\sqrt{|\theta| + 9} - 1) \le t^*` the iterates increase monotonically
    to the root (quadratic convergence, no overshoot).

    Examples
    --------
    >>> round(float(ipw_inverse_link(ipw_link(0.2))), 12)
    0.2
    """
    theta = as_float_array(theta, "theta", check_inf=True)
    target = np.abs(theta)
    t = 1.0 / (np.sqrt(target + 9.0) - 1.0)
    for _ in range(100):
        s = 1.0 - t
        h = 1.0 / (t * t) + 2.0 / t - 1.0 / (s * s) - 2.0 / s
        dh = -2.0 / t ** 3 - 2.0 / (t * t) - 2.0 / s ** 3 - 2.0 / (s * s)
        step = (h - target) / dh
        t_new = np.minimum(t - step, 0.5)
        if np.all(np.abs(t_new - t) <= 4 * np.finfo(float).eps * t_new):
            t = t_new
            break
        t = t_new
    return np.where(theta >= 0, 1.0 - t, t)
