r"""Outcome-weighted and vertically re-scaled CRPS of ensembles (Allen, Ginsbourger & Ziegel 2023).

Both use the indicator weight :math:`w(z) = \mathbb 1\{a \le z \le b\}` (scoringrules'
default ``w_func``; thresholds are parameters so the registered metrics stay
serialisable). The threshold-weighted CRPS is
:func:`~scorebench.metrics.scoring_rules.crps_ensemble.twcrps_ensemble`.

With :math:`S` the members inside :math:`[a, b]`, :math:`K = |S|`,
:math:`\bar w = K / M`, both are computed in :math:`O(M \log M)` per row from the sorted
members: :math:`\sum_{i,j \in S} |x_i - x_j| = 2 \sum_k (2k - K - 1)\, x_{(k)}` over the
sorted members of :math:`S`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...errors import InputError
from ...registry import register
from ...validation import describe_rows
from ._common import FAMILY, check_thresholds
from .crps_ensemble import _ensemble_inputs

__all__ = ["owcrps_ensemble", "vrcrps_ensemble"]

ALLEN = "Allen, Ginsbourger & Ziegel (2023), SIAM/ASA JUQ 11(2):906-940"
HOLZMANN = "Holzmann & Klar (2017), Annals of Applied Statistics 11(4):2404-2431"


def _window_terms(obs: np.ndarray, ens: np.ndarray, a: float, b: float):
    """Per row: w(y), K, sum_{S} |x - y|, sum_{i,j in S} |x_i - x_j|, sum_S |x|."""
    wy = ((obs >= a) & (obs <= b)).astype(np.float64)
    xs = np.sort(ens, axis=1)
    inside = (xs >= a) & (xs <= b)
    k = inside.sum(axis=1).astype(np.float64)
    rank = np.cumsum(inside, axis=1)  # 1-based rank among the members in S
    pair = 2.0 * np.where(inside, (2.0 * rank - k[:, None] - 1.0) * xs, 0.0).sum(axis=1)
    near = np.where(inside, np.abs(xs - obs[:, None]), 0.0).sum(axis=1)
    absx = np.where(inside, np.abs(xs), 0.0).sum(axis=1)
    return wy, k, near, pair, absx


@register("owcrps_ensemble", family=FAMILY, kind="ensemble", inputs=("y", "ens"),
          higher_is_better=False, bounds=(0.0, math.inf), proper="proper", per_row=True,
          params={"a": -math.inf, "b": math.inf}, citation=HOLZMANN + "; " + ALLEN)
def owcrps_ensemble(obs: Any, ens: Any, *, a: float = -math.inf, b: float = math.inf) -> np.ndarray:
    r"""Outcome-weighted CRPS of an ensemble for the weight :math:`w(z) = \mathbb 1\{a \le z \le b\}`.

    .. math:: \mathrm{owCRPS}(F, y) = \frac{w(y)}{M \bar w} \sum_i |x_i - y|\, w(x_i)
              - \frac{w(y)}{2 M^2 \bar w^2} \sum_{i,j} |x_i - x_j|\, w(x_i) w(x_j),

    :math:`\bar w = \frac1M \sum_i w(x_i)`: the CRPS of the members inside the window
    when the observation is inside it, 0 otherwise (Holzmann & Klar 2017; Allen et al.
    2023; scoringrules' ``owcrps_ensemble``). A row whose observation is inside the window
    but with no member inside is undefined and raises (scoringrules returns NaN); a row
    with the observation outside scores 0 even when no member is inside (scoringrules: NaN).

    Parameters
    ----------
    obs : array_like, shape (...)
    ens : array_like, shape (..., M)
    a, b : float
        Window of the weight (``a < b``), bounds included.

    Examples
    --------
    >>> float(owcrps_ensemble(0.5, [0.0, 1.0, 5.0], a=-1.0, b=2.0))
    0.25
    """
    a, b = check_thresholds(a, b)
    obs_f, ens_f, batch = _ensemble_inputs(obs, ens)
    wy, k, near, pair, _ = _window_terms(obs_f, ens_f, a, b)
    bad = (wy > 0) & (k == 0)
    if bad.any():
        raise InputError(f"owcrps_ensemble: {describe_rows(np.flatnonzero(bad))} have the observation inside "
                         f"[a, b] = [{a}, {b}] but no ensemble member there; the outcome-weighted forecast is "
                         "undefined (widen the window or drop those rows)")
    kk = np.maximum(k, 1.0)
    out = wy * (near / kk - 0.5 * pair / kk**2)
    return out.reshape(batch)


@register("vrcrps_ensemble", family=FAMILY, kind="ensemble", inputs=("y", "ens"),
          higher_is_better=False, bounds=(0.0, math.inf), proper="proper", per_row=True,
          params={"a": -math.inf, "b": math.inf}, citation=ALLEN)
def vrcrps_ensemble(obs: Any, ens: Any, *, a: float = -math.inf, b: float = math.inf) -> np.ndarray:
    r"""Vertically re-scaled CRPS of an ensemble for the weight :math:`w(z) = \mathbb 1\{a \le z \le b\}`.

    .. math:: \mathrm{vrCRPS}(F, y) = \frac{w(y)}{M} \sum_i |x_i - y|\, w(x_i)
              - \frac{1}{2M^2} \sum_{i,j} |x_i - x_j|\, w(x_i) w(x_j)
              + \Big(\frac1M \sum_i |x_i|\, w(x_i) - |y|\, w(y)\Big)\big(\bar w - w(y)\big)

    (Allen, Ginsbourger & Ziegel 2023, with :math:`x_0 = 0`; scoringrules'
    ``vrcrps_ensemble``). With :math:`a = -\infty, b = \infty` it is the CRPS.

    Parameters
    ----------
    obs : array_like, shape (...)
    ens : array_like, shape (..., M)
    a, b : float
        Window of the weight (``a < b``), bounds included.

    Examples
    --------
    >>> float(vrcrps_ensemble(0.5, [0.0, 1.0]))
    0.25
    """
    a, b = check_thresholds(a, b)
    obs_f, ens_f, batch = _ensemble_inputs(obs, ens)
    m = ens_f.shape[1]
    wy, k, near, pair, absx = _window_terms(obs_f, ens_f, a, b)
    out = wy * near / m - 0.5 * pair / m**2 + (absx / m - np.abs(obs_f) * wy) * (k / m - wy)
    return out.reshape(batch)
