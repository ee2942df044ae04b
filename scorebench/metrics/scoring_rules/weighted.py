r"""Outcome-weighted and vertically re-scaled CRPS of ensembles (Allen, Ginsbourger & Ziegel 2023).

Both use the indicator weight :math:`w(z) = \mathbb 1\{a \le z \le b\}` (scoringrules'
default ``w_func``; thresholds are parameters so the registered metrics stay
serialisable). The threshold-weighted CRPS is
:func:`~scorebench.metrics.scoring_rules.crps_ensemble.twcrps_ensemble`.

With member weights :math:`e_i` (``ens_w``, normalised; :math:`1/M` by default),
:math:`u_i = e_i w(x_i)` and :math:`\bar w = \sum_i u_i`, both are computed in
:math:`O(M \log M)` per row from the sorted members:
:math:`\sum_{i,j} u_i u_j |x_i - x_j| = 2 \sum_k u_{(k)} x_{(k)} (2 C_k - u_{(k)} - \bar w)`
with :math:`C_k` the cumulative weight up to the k-th smallest member.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from scorebench.core.docstrings import fill_doc
from scorebench.core.errors import InputError
from scorebench.core.registry import register
from scorebench.core.validation import describe_rows
from scorebench.metrics.scoring_rules._common import FAMILY, check_thresholds
from scorebench.metrics.scoring_rules._members import member_weights, omit_nan_members
from scorebench.metrics.scoring_rules.docs import SECTIONS
from scorebench.metrics.scoring_rules.inputs import ensemble_inputs

__all__ = ["owcrps_ensemble", "vrcrps_ensemble"]

ALLEN = "Allen, Ginsbourger & Ziegel (2023), SIAM/ASA JUQ 11(2):906-940"
HOLZMANN = "Holzmann & Klar (2017), Annals of Applied Statistics 11(4):2404-2431"
_PARAMS = {"a": -math.inf, "b": math.inf, "nan_policy": "propagate", "ens_w": None}


def _window_terms(obs: Any, ens: Any, a: float, b: float, ens_w: Any, nan_policy: str):
    """Flattened inputs and per row: w(y), w-bar = sum_S u_i, sum_S u_i |x_i - y|,
    sum_{i,j in S} u_i u_j |x_i - x_j| and sum_S u_i |x_i| for the member weights ``u``
    (``e_i`` normalised, 0 outside the window ``S``)."""
    obs_f, ens_f, batch = ensemble_inputs(obs, ens)
    n, m = ens_f.shape
    e = np.full((n, m), 1.0 / m) if ens_w is None else member_weights(ens_w, n, m, batch)
    ens_f, e = omit_nan_members(ens_f, e, nan_policy)
    wy = ((obs_f >= a) & (obs_f <= b)).astype(np.float64)
    order = np.argsort(ens_f, axis=1)
    xs, u = np.take_along_axis(ens_f, order, axis=1), np.take_along_axis(e, order, axis=1)
    u = np.where((xs >= a) & (xs <= b), u, 0.0)
    wbar = u.sum(axis=1)
    # sorted: sum_{i,j} u_i u_j |x_i - x_j| = 2 sum_k u_k x_k (2 C_k - u_k - w-bar), C = cumsum(u)
    pair = 2.0 * (u * xs * (2.0 * np.cumsum(u, axis=1) - u - wbar[:, None])).sum(axis=1)
    near = (u * np.abs(xs - obs_f[:, None])).sum(axis=1)
    absx = (u * np.abs(xs)).sum(axis=1)
    return obs_f, batch, wy, wbar, near, pair, absx


@register("owcrps_ensemble", family=FAMILY, kind="ensemble", inputs=("y", "ens"),
          higher_is_better=False, bounds=(0.0, math.inf), proper="proper", per_row=True,
          params=_PARAMS, citation=HOLZMANN + "; " + ALLEN, tested_against=('scoringrules 0.7 (numpy backend)', 1e-12))
def owcrps_ensemble(obs: Any, ens: Any, *, a: float = -math.inf, b: float = math.inf,
                    nan_policy: str = "propagate", ens_w: Any = None) -> np.ndarray:
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
    %(ensemble, window, members)s

    Examples
    --------
    >>> round(float(owcrps_ensemble(0.5, [0.0, 1.0, 5.0], a=-1.0, b=2.0)), 12)
    0.25
    """
    a, b = check_thresholds(a, b)
    obs_f, batch, wy, wbar, near, pair, _ = _window_terms(obs, ens, a, b, ens_w, nan_policy)
    bad = (wy > 0) & (wbar <= 0)
    if bad.any():
        raise InputError(f"owcrps_ensemble: {describe_rows(np.flatnonzero(bad))} have the observation inside "
                         f"[a, b] = [{a}, {b}] but no ensemble member there; the outcome-weighted forecast is "
                         "undefined (widen the window or drop those rows)")
    safe = np.where(wbar > 0, wbar, 1.0)
    return (wy * (near / safe - 0.5 * pair / safe**2)).reshape(batch)


@register("vrcrps_ensemble", family=FAMILY, kind="ensemble", inputs=("y", "ens"),
          higher_is_better=False, bounds=(0.0, math.inf), proper="proper", per_row=True,
          params=_PARAMS, citation=ALLEN, tested_against=('scoringrules 0.7 (numpy backend)', 1e-12))
def vrcrps_ensemble(obs: Any, ens: Any, *, a: float = -math.inf, b: float = math.inf,
                    nan_policy: str = "propagate", ens_w: Any = None) -> np.ndarray:
    r"""Vertically re-scaled CRPS of an ensemble for the weight :math:`w(z) = \mathbb 1\{a \le z \le b\}`.

    .. math:: \mathrm{vrCRPS}(F, y) = \frac{w(y)}{M} \sum_i |x_i - y|\, w(x_i)
              - \frac{1}{2M^2} \sum_{i,j} |x_i - x_j|\, w(x_i) w(x_j)
              + \Big(\frac1M \sum_i |x_i|\, w(x_i) - |y|\, w(y)\Big)\big(\bar w - w(y)\big)

    (Allen, Ginsbourger & Ziegel 2023, with :math:`x_0 = 0`; scoringrules'
    ``vrcrps_ensemble``). With :math:`a = -\infty, b = \infty` it is the CRPS.

    Parameters
    ----------
    %(ensemble, window, members)s

    Examples
    --------
    >>> float(vrcrps_ensemble(0.5, [0.0, 1.0]))
    0.25
    """
    a, b = check_thresholds(a, b)
    obs_f, batch, wy, wbar, near, pair, absx = _window_terms(obs, ens, a, b, ens_w, nan_policy)
    out = wy * near - 0.5 * pair + (absx - np.abs(obs_f) * wy) * (wbar - wy)
    return out.reshape(batch)


fill_doc(owcrps_ensemble, vrcrps_ensemble, **SECTIONS)
