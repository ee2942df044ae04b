r"""Scores of quantile and interval forecasts: pinball, interval (Winkler), weighted interval.

Shapes: ``y`` has shape ``(...)``; quantile forecasts ``q`` have shape ``(..., Q)`` with
the levels ``levels`` (shape ``(Q,)``, strictly increasing in ``(0, 1)``) on the last axis.

One engine, the pinball loss :math:`\rho_\tau(y - q) = (\mathbb 1\{y < q\} - \tau)(q - y)`,
serves all three: the interval score of a central :math:`(1-\alpha)` interval is
:math:`\tfrac{2}{\alpha}[\rho_{\alpha/2}(y - l) + \rho_{1-\alpha/2}(y - u)]`, and the
weighted interval score is :math:`\frac{1}{K + 1/2}\sum_{\text{levels}} \rho_\tau`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from scorebench.core.errors import InputError
from scorebench.core.registry import register
from scorebench.core.table_schema import Option
from scorebench.core.validation import as_float_array, broadcast_arrays, describe_rows, show_value
from scorebench.metrics.scoring_rules._common import FAMILY, GNEITING_RAFTERY
from scorebench.metrics.scoring_rules.inputs import quantile_inputs

__all__ = ["pinball_loss", "quantile_score", "interval_score", "weighted_interval_score"]

BRACHER = "Bracher et al. (2021), PLoS Comput. Biol. 17(2):e1008618"


def pinball_loss(y: np.ndarray, q: np.ndarray, tau: np.ndarray) -> np.ndarray:
    r"""Elementwise pinball loss :math:`(\mathbb 1\{y < q\} - \tau)(q - y)` (no validation)."""
    diff = q - y
    return diff * ((diff > 0) - tau)




@register("quantile_score", family=FAMILY, kind="quantile", inputs=("y", "q", "levels"),
          higher_is_better=False, bounds=(0.0, math.inf), proper="proper", per_row=True,
          citation="Koenker & Bassett (1978), Econometrica 46(1):33-50; " + GNEITING_RAFTERY,
          tested_against=(('scoringrules 0.7 (numpy backend)', 1e-10),
                            ('scipy (distributions / numerical integration)', 1e-12),))
def quantile_score(y: Any, q: Any, levels: Any) -> np.ndarray:
    r"""Quantile (pinball) loss averaged over the forecast's quantile levels.

    .. math:: \mathrm{QS}(q, y) = \frac1Q \sum_{j=1}^{Q} \rho_{\tau_j}(y - q_j),
              \qquad \rho_\tau(u) = u\,(\tau - \mathbb 1\{u < 0\}).

    Each term is proper for the :math:`\tau_j`-quantile; twice the average over many
    evenly spaced levels approximates the CRPS.

    Parameters
    ----------
    y : array_like, shape (...)
        Observations.
    q : array_like, shape (..., Q)
        Forecast quantiles, one column per level.
    levels : array_like, shape (Q,)
        Quantile levels, strictly increasing in (0, 1).

    Returns
    -------
    ndarray, shape (...)

    Examples
    --------
    >>> quantile_score([0.3], [[0.5]], [0.2]).round(6).tolist()
    [0.16]
    >>> quantile_score([1.0], [[0.0, 2.0]], [0.25, 0.75]).tolist()
    [0.25]
    """
    y, q, lv = quantile_inputs(y, q, levels)
    return pinball_loss(y[..., None], q, lv).mean(axis=-1)


def _interval_table(arrays: Mapping[str, np.ndarray], *, alpha: Any = 0.1) -> np.ndarray:
    """Interval score of an ``interval`` table: a per-row ``alpha`` column overrides ``alpha``."""
    return interval_score(arrays["y"], arrays["lower"], arrays["upper"], alpha=arrays.get("alpha", alpha))


@register("interval_score", family=FAMILY, kind="interval", inputs=("y", "lower", "upper"),
          higher_is_better=False, bounds=(0.0, math.inf), proper="proper", per_row=True,
          params={"alpha": Option("alpha", float, 0.1, "the interval's miss rate (central 1 - alpha interval)")},
          table_fn=_interval_table,
          citation="Winkler (1972), JASA 67(337):187-191; " + GNEITING_RAFTERY,
          tested_against=(('scoringrules 0.7 (numpy backend)', 1e-10),
                            ('scipy (distributions / numerical integration)', 1e-12),))
def interval_score(y: Any, lower: Any, upper: Any, *, alpha: Any = 0.1) -> np.ndarray:
    r"""Interval (Winkler) score of a central :math:`(1 - \alpha)` prediction interval :math:`[l, u]`.

    .. math:: \mathrm{IS}_\alpha(l, u; y) = (u - l) + \frac{2}{\alpha}(l - y)\,\mathbb 1\{y < l\}
              + \frac{2}{\alpha}(y - u)\,\mathbb 1\{y > u\}.

    Parameters
    ----------
    y, lower, upper : array_like
        Observations and interval bounds (``lower <= upper``); broadcast together.
    alpha : float or array_like, default 0.1
        Nominal miss rate in (0, 1): the interval is the central 90% interval for 0.1.
        In an ``interval`` table, an ``alpha`` column (one miss rate per row) takes
        precedence over this parameter.

    Examples
    --------
    >>> interval_score([0.5, 2.0], [0.0, 0.0], [1.0, 1.0], alpha=0.5).tolist()
    [1.0, 5.0]
    """
    named = {"y": y, "lower": lower, "upper": upper, "alpha": alpha}
    y, lower, upper, alpha = broadcast_arrays(**{k: as_float_array(v, k, check_inf=True) for k, v in named.items()})
    outside = (alpha <= 0) | (alpha >= 1)
    if outside.any():
        raise InputError(f"alpha: expected a miss rate strictly between 0 and 1, got "
                         f"{show_value(alpha[outside].ravel()[0])} in {describe_rows(outside)}")
    crossed = lower > upper
    if crossed.any():
        raise InputError(f"lower/upper: lower > upper in {describe_rows(crossed)}; expected lower <= upper")
    return (upper - lower) + (2.0 / alpha) * (np.maximum(lower - y, 0.0) + np.maximum(y - upper, 0.0))


@register("weighted_interval_score", family=FAMILY, kind="quantile", inputs=("y", "q", "levels"),
          higher_is_better=False, bounds=(0.0, math.inf), proper="proper", per_row=True,
          params={"weights": None, "weight_median": None}, citation=BRACHER,
          tested_against=(('scoringrules 0.7 (numpy backend)', 1e-10),
                            ('scipy (distributions / numerical integration)', 1e-10),))
def weighted_interval_score(y: Any, q: Any, levels: Any, *, weights: Any = None,
                            weight_median: float | None = None) -> np.ndarray:
    r"""Weighted interval score (WIS) of central intervals and (optionally) the median.

    The levels must pair up symmetrically, :math:`\tau` with :math:`1 - \tau`: ``K`` central
    intervals with :math:`\alpha_k = 2\tau_k`, plus the median if 0.5 is among them. With
    the canonical weights :math:`w_k = \alpha_k/2`, :math:`w_0 = 1/2`,

    .. math:: \mathrm{WIS} = \frac{1}{K + \tfrac12}\Bigl(\tfrac12 |y - m|
              + \sum_{k=1}^K \frac{\alpha_k}{2}\,\mathrm{IS}_{\alpha_k}(l_k, u_k; y)\Bigr)
              = \frac{1}{K + \tfrac12} \sum_{j} \rho_{\tau_j}(y - q_j)

    (without a median: :math:`\frac1K \sum_k \frac{\alpha_k}{2} \mathrm{IS}_{\alpha_k}`).

    Note: scoringrules 0.10 (numpy backend) adds :math:`w_0 \cdot m` instead of
    :math:`w_0 |y - m|`; scorebench follows Bracher et al. (2021).

    Parameters
    ----------
    y : array_like, shape (...)
    q : array_like, shape (..., Q)
    levels : array_like, shape (Q,)
        Symmetric quantile levels, strictly increasing.
    weights : array_like, shape (K,), optional
        Custom non-negative interval weights :math:`w_k`, one per central interval, ordered
        as the lower levels (widest interval first); default :math:`\alpha_k / 2`.
    weight_median : float, optional
        Custom weight :math:`w_0 \ge 0` of :math:`|y - m|`; default 1/2.

    Notes
    -----
    The normaliser stays :math:`1/(K + \tfrac12)` (:math:`1/K` without a median) whatever
    the weights, as in Bracher et al. (2021, eq. 2).

    Examples
    --------
    >>> weighted_interval_score([1.0], [[0.0, 0.5, 2.0]], [0.25, 0.5, 0.75]).tolist()
    [0.5]
    >>> weighted_interval_score([1.0], [[0.0, 0.5, 2.0]], [0.25, 0.5, 0.75], weights=[0.25],
    ...                         weight_median=0.5).tolist()  # the canonical weights again
    [0.5]
    """
    y, q, lv = quantile_inputs(y, q, levels)
    if not np.allclose(lv + lv[::-1], 1.0, rtol=0.0, atol=1e-9):
        raise InputError(f"levels: the weighted interval score needs symmetric levels (tau paired with "
                         f"1 - tau, optionally with 0.5 for the median), got {lv.tolist()}")
    has_median = lv.size % 2 == 1
    k = lv.size // 2
    factor = np.ones(lv.size)  # pinball weight per level: 1 for the canonical weights
    if weights is not None:
        w = as_float_array(weights, "weights", check_inf=True)
        if w.shape != (k,) or np.isnan(w).any() or (w < 0).any():
            raise InputError(f"weights: expected {k} non-negative interval weights (one per central "
                             f"interval, widest first), got {np.asarray(weights).tolist()}")
        # w_k IS_alpha = w_k (2 / alpha) (rho_{alpha/2}(y - l) + rho_{1 - alpha/2}(y - u)).
        per = w / lv[:k]
        factor[:k], factor[lv.size - k:] = per, per[::-1]
    if weight_median is not None:
        if not has_median:
            raise InputError("weight_median: the levels have no median (0.5) to weight")
        if not np.isfinite(weight_median) or weight_median < 0:
            raise InputError(f"weight_median: expected a non-negative number, got {weight_median!r}")
        factor[k] = 2.0 * weight_median  # w0 |y - m| = 2 w0 rho_{1/2}(y - m)
    total = (pinball_loss(y[..., None], q, lv) * factor).sum(axis=-1)
    return total / (k + 0.5) if has_median else total / k
