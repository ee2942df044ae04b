r"""Outcome-weighted and vertically re-scaled energy and variogram scores (Allen, Ginsbourger & Ziegel 2023).

All four use the box weight :math:`w(z) = \prod_k \mathbb 1\{a \le z_k \le b\}` (every
variable inside ``[a, b]``, bounds included, as
:func:`~scorebench.metrics.scoring_rules.weighted.owcrps_ensemble`); scoringrules'
``owenergy_score`` / ``vrenergy_score`` / ``owvariogram_score`` / ``vrvariogram_score``
with ``w_func = lambda z: np.all((a <= z) & (z <= b), axis=-1)`` compute the same. The
thresholds are parameters, so the registered metrics stay serialisable.

With member weights :math:`e_i` (``ens_w``, normalised; :math:`1/M` by default),
:math:`u_i = e_i\, w(x_i)` and :math:`\bar w = \sum_i u_i`:

* the outcome-weighted score is :math:`w(y)` times the score of the members inside the
  box, re-weighted by :math:`u_i / \bar w`;
* the vertically re-scaled score adds
  :math:`(\sum_i u_i \rho(x_i) - w(y)\rho(y))(\bar w - w(y))` to the :math:`u`-weighted
  kernel terms, with :math:`\rho(z) = \lVert z\rVert` (energy) or
  :math:`\lVert \gamma_z\rVert^2` (variogram), i.e. the origin as :math:`x_0`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from scorebench.core.errors import InputError
from scorebench.core.registry import register
from scorebench.core.validation import check_choice, describe_rows
from scorebench.metrics.scoring_rules._common import FAMILY, GNEITING_RAFTERY, SCORINGRULES, check_thresholds
from scorebench.metrics.scoring_rules._members import NAN_POLICIES, member_weights, omit_nan_members
from scorebench.metrics.scoring_rules.multivariate import energy_terms, pair_weights, variogram_order, variogram_terms
from scorebench.metrics.scoring_rules.weighted import ALLEN
from scorebench.metrics.scoring_rules.inputs import mv_inputs
from scorebench.core.docstrings import fill_doc
from scorebench.metrics.scoring_rules.docs import SECTIONS

__all__ = ["owenergy_score", "vrenergy_score", "owvariogram_score", "vrvariogram_score"]

SCHEUERER = "Scheuerer & Hamill (2015), Monthly Weather Review 143(4):1321-1334"


def box_inputs(obs: Any, ens: Any, a: Any, b: Any, ens_w: Any, nan_policy: str):
    """Flattened inputs, the observation weight ``w(y)``, the member weights ``u`` and ``w-bar``."""
    a, b = check_thresholds(a, b)
    check_choice(nan_policy, "nan_policy", NAN_POLICIES)
    obs_f, ens_f, batch = mv_inputs(obs, ens)
    n, m, _ = ens_f.shape
    e = np.full((n, m), 1.0 / m) if ens_w is None else member_weights(ens_w, n, m, batch)
    ens_f, e = omit_nan_members(ens_f, e, nan_policy, multivariate=True)
    wy = ((obs_f >= a) & (obs_f <= b)).all(axis=-1).astype(np.float64)
    wy[np.isnan(obs_f).any(axis=-1)] = np.nan
    u = e * ((ens_f >= a) & (ens_f <= b)).all(axis=-1)
    return obs_f, ens_f, batch, wy, u, u.sum(axis=1)


def check_outcome_rows(wy: np.ndarray, wbar: np.ndarray, name: str, a: Any, b: Any) -> np.ndarray:
    """Refuse rows with the observation in the box but no member there; return a safe ``w-bar``."""
    bad = (wy > 0) & (wbar <= 0)
    if bad.any():
        raise InputError(f"{name}: {describe_rows(bad)} have the observation inside [a, b] = [{a}, {b}] "
                         "but no ensemble member there; the outcome-weighted forecast is undefined "
                         "(widen the window or drop those rows)")
    return np.where(wbar > 0, wbar, 1.0)


# What the four registrations share; each adds its name, parameters and citation.
_ENTRY: dict[str, Any] = {"family": FAMILY, "kind": "multivariate", "inputs": ("y", "ens"), "higher_is_better": False,
                          "bounds": (0.0, math.inf), "proper": "proper", "per_row": True,
                          "tested_against": (SCORINGRULES, 1e-10)}
_WINDOW = {"a": -math.inf, "b": math.inf, "nan_policy": "propagate", "ens_w": None}
_VARIOGRAM = {"a": -math.inf, "b": math.inf, "p": 0.5, "weights": None, "nan_policy": "propagate", "ens_w": None}


@register("owenergy_score", params=_WINDOW, citation=ALLEN + "; " + GNEITING_RAFTERY, **_ENTRY)
def owenergy_score(obs: Any, ens: Any, *, a: float = -math.inf, b: float = math.inf,
                   nan_policy: str = "propagate", ens_w: Any = None) -> np.ndarray:
    r"""Outcome-weighted energy score for the box weight :math:`w(z) = \prod_k \mathbb 1\{a \le z_k \le b\}`.

    .. math:: \mathrm{owES}(F, y) = \frac{w(y)}{\bar w} \sum_i e_i w(x_i) \lVert x_i - y\rVert
              - \frac{w(y)}{2\bar w^2} \sum_{i,j} e_i e_j w(x_i) w(x_j) \lVert x_i - x_j\rVert,
              \qquad \bar w = \sum_i e_i w(x_i),

    with member weights :math:`e_i` (:math:`1/M` by default): the energy score of the
    members inside the box when the observation is inside it, 0 otherwise. Proper. A row
    with the observation inside the box and no member there raises (scoringrules: NaN); a
    row with the observation outside scores 0 (scoringrules: NaN when no member is inside).

    Parameters
    ----------
    %(mv_ensemble, window, members)s

    References
    ----------
    Allen, S., Ginsbourger, D. & Ziegel, J. (2023). Evaluating forecasts for high-impact
    events using transformed kernel scores. *SIAM/ASA J. Uncertainty Quantification* 11(3).

    Examples
    --------
    >>> round(float(owenergy_score([0.0, 0.0], [[3.0, 4.0], [-3.0, -4.0], [9.0, 9.0]], a=-5.0, b=5.0)), 12)
    2.5
    """
    obs_f, ens_f, batch, wy, u, wbar = box_inputs(obs, ens, a, b, ens_w, nan_policy)
    safe = check_outcome_rows(wy, wbar, "owenergy_score", a, b)
    near, pair = energy_terms(obs_f, ens_f, u)
    return (wy * (near / safe - 0.5 * pair / safe**2)).reshape(batch)


@register("vrenergy_score", params=_WINDOW, citation=ALLEN + "; " + GNEITING_RAFTERY, **_ENTRY)
def vrenergy_score(obs: Any, ens: Any, *, a: float = -math.inf, b: float = math.inf,
                   nan_policy: str = "propagate", ens_w: Any = None) -> np.ndarray:
    r"""Vertically re-scaled energy score for the box weight :math:`w(z) = \prod_k \mathbb 1\{a \le z_k \le b\}`.

    .. math:: \mathrm{vrES}(F, y) = w(y)\sum_i u_i \lVert x_i - y\rVert
              - \frac12 \sum_{i,j} u_i u_j \lVert x_i - x_j\rVert
              + \Bigl(\sum_i u_i \lVert x_i\rVert - w(y)\lVert y\rVert\Bigr)\bigl(\bar w - w(y)\bigr),

    :math:`u_i = e_i w(x_i)`, :math:`\bar w = \sum_i u_i` (Allen et al. 2023, with
    :math:`x_0 = 0`). With the whole space as the box it is the energy score. Proper.

    Parameters
    ----------
    %(mv_ensemble, window, members)s

    References
    ----------
    Allen, Ginsbourger & Ziegel (2023), SIAM/ASA JUQ 11(3).

    Examples
    --------
    >>> float(vrenergy_score([0.0, 0.0], [[3.0, 4.0], [-3.0, -4.0]]))
    2.5
    """
    obs_f, ens_f, batch, wy, u, wbar = box_inputs(obs, ens, a, b, ens_w, nan_policy)
    near, pair = energy_terms(obs_f, ens_f, u)
    rho = np.einsum("nm,nm->n", u, np.linalg.norm(ens_f, axis=-1))
    out = wy * near - 0.5 * pair + (rho - wy * np.linalg.norm(obs_f, axis=-1)) * (wbar - wy)
    return out.reshape(batch)


@register("owvariogram_score", params=_VARIOGRAM, citation=ALLEN + "; " + SCHEUERER, **_ENTRY)
def owvariogram_score(obs: Any, ens: Any, *, a: float = -math.inf, b: float = math.inf, p: float = 0.5,
                      weights: Any = None, nan_policy: str = "propagate", ens_w: Any = None) -> np.ndarray:
    r"""Outcome-weighted variogram score for the box weight :math:`w(z) = \prod_k \mathbb 1\{a \le z_k \le b\}`.

    With :math:`\gamma_z = (|z_i - z_j|^p)_{ij}` and :math:`\lVert A\rVert^2 = \sum_{ij} w_{ij} A_{ij}^2`,

    .. math:: \mathrm{owVS}_p(F, y) = \frac{w(y)}{\bar w}\sum_m u_m \lVert\gamma_{x_m} - \gamma_y\rVert^2
              - \frac{w(y)}{2\bar w^2}\sum_{m,k} u_m u_k \lVert\gamma_{x_m} - \gamma_{x_k}\rVert^2
              = w(y)\, \Bigl\lVert \gamma_y - \sum_m \tfrac{u_m}{\bar w}\gamma_{x_m}\Bigr\rVert^2,

    :math:`u_m = e_m w(x_m)`, :math:`\bar w = \sum_m u_m`. Proper. Rows with the
    observation inside the box and no member there raise.

    Parameters
    ----------
    %(mv_ensemble, window, variogram, members)s

    Examples
    --------
    >>> float(owvariogram_score([0.0, 1.0], [[0.0, 1.0], [0.0, 4.0], [9.0, 0.0]], p=1.0, a=-1.0, b=5.0))
    4.5
    """
    p = variogram_order(p)
    obs_f, ens_f, batch, wy, u, wbar = box_inputs(obs, ens, a, b, ens_w, nan_policy)
    check_outcome_rows(wy, wbar, "owvariogram_score", a, b)
    t = variogram_terms(obs_f, ens_f, u, p, pair_weights(weights, ens_f.shape[2]))
    return (wy * np.where(wbar > 0, t["mean"], 0.0)).reshape(batch)


@register("vrvariogram_score", params=_VARIOGRAM, citation=ALLEN + "; " + SCHEUERER, **_ENTRY)
def vrvariogram_score(obs: Any, ens: Any, *, a: float = -math.inf, b: float = math.inf, p: float = 0.5,
                      weights: Any = None, nan_policy: str = "propagate", ens_w: Any = None) -> np.ndarray:
    r"""Vertically re-scaled variogram score for the box weight :math:`w(z) = \prod_k \mathbb 1\{a \le z_k \le b\}`.

    .. math:: \mathrm{vrVS}_p(F, y) = w(y)\sum_m u_m \lVert\gamma_{x_m} - \gamma_y\rVert^2
              - \frac12\sum_{m,k} u_m u_k \lVert\gamma_{x_m} - \gamma_{x_k}\rVert^2
              + \Bigl(\sum_m u_m \lVert\gamma_{x_m}\rVert^2 - w(y)\lVert\gamma_y\rVert^2\Bigr)\bigl(\bar w - w(y)\bigr)

    (notation of :func:`owvariogram_score`). With the whole space as the box it is the
    variogram score. Proper.

    Parameters
    ----------
    %(mv_ensemble, window, variogram, members)s

    Examples
    --------
    >>> float(vrvariogram_score([0.0, 1.0], [[0.0, 1.0], [0.0, 4.0]], p=1.0))
    4.5
    """
    p = variogram_order(p)
    obs_f, ens_f, batch, wy, u, wbar = box_inputs(obs, ens, a, b, ens_w, nan_policy)
    t = variogram_terms(obs_f, ens_f, u, p, pair_weights(weights, ens_f.shape[2]),
                        ("near", "pair", "sq_ens", "sq_obs"))
    out = wy * t["near"] - 0.5 * t["pair"] + (t["sq_ens"] - wy * t["sq_obs"]) * (wbar - wy)
    return out.reshape(batch)


fill_doc(owenergy_score, vrenergy_score, owvariogram_score, vrvariogram_score, **SECTIONS)
