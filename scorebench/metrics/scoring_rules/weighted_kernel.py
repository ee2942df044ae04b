r"""Threshold-, outcome-weighted and vertically re-scaled Gaussian kernel scores of ensembles.

The weight is the box :math:`w(z) = \prod_k \mathbb 1\{a \le z_k \le b\}` (a window for a
univariate ensemble), as for the weighted energy scores
(:mod:`.weighted_mv`, :mod:`.weighted_mv_outcome`). With member weights :math:`e_i`
(``ens_w``, normalised; :math:`1/M` by default), :math:`u_i = e_i w(x_i)`,
:math:`\bar w = \sum_i u_i` and the Gaussian kernel :math:`k` of :mod:`.kernel`:

.. math::

    \mathrm{twGKS}(F, y) &= \mathrm{GKS}(F \circ v^{-1}, v(y)), \quad v(z) = \min(\max(z, a), b),\\
    \mathrm{owGKS}(F, y) &= w(y)\Big(\tfrac12 + \frac{1}{2\bar w^2} \sum_{i,j} u_i u_j k(x_i, x_j)
                           - \frac{1}{\bar w} \sum_i u_i k(x_i, y)\Big),\\
    \mathrm{vrGKS}(F, y) &= \tfrac12 w(y) + \tfrac12 \sum_{i,j} u_i u_j k(x_i, x_j)
                           - w(y) \sum_i u_i k(x_i, y)

(Allen, Ginsbourger & Ziegel 2023; scoringrules' ``twgksuv_ensemble``, ``owgksuv_ensemble``,
``vrgksuv_ensemble`` and their ``mv`` forms with ``w_func`` the box indicator compute the
same). All three lie in [0, 1]. A row with the observation inside the box and no member
there has no outcome-weighted forecast and raises (scoringrules: NaN); with the
observation outside, the outcome-weighted score is 0.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from scorebench.core.docstrings import fill_doc
from scorebench.core.registry import register
from scorebench.core.validation import as_float_array
from scorebench.metrics.scoring_rules._common import FAMILY, GNEITING_RAFTERY, SCORINGRULES, check_thresholds
from scorebench.metrics.scoring_rules.docs import SECTIONS
from scorebench.metrics.scoring_rules.inputs import mv_inputs
from scorebench.metrics.scoring_rules.kernel import gks_score, gks_terms
from scorebench.metrics.scoring_rules.weighted import ALLEN
from scorebench.metrics.scoring_rules.weighted_mv import threshold_chain
from scorebench.metrics.scoring_rules.weighted_mv_outcome import box_inputs, check_outcome_rows

__all__ = ["twgksuv_ensemble", "owgksuv_ensemble", "vrgksuv_ensemble",
           "twgksmv_ensemble", "owgksmv_ensemble", "vrgksmv_ensemble"]

_INF = math.inf
_PARAMS = {"a": -_INF, "b": _INF, "nan_policy": "propagate", "ens_w": None}


def _as_multivariate(obs: Any, ens: Any) -> tuple[np.ndarray, np.ndarray]:
    """A univariate ensemble ``(..., M)`` as a one-variable multivariate one ``(..., M, 1)``:
    the univariate scores are the multivariate ones of that ensemble."""
    return as_float_array(obs, "obs")[..., None], as_float_array(ens, "ens")[..., None]


# The three scores of a multivariate ensemble ``obs (..., d)``, ``ens (..., M, d)``.
def _tw(obs, ens, a, b, estimator, nan_policy, ens_w) -> np.ndarray:
    a, b = check_thresholds(a, b)
    obs_f, ens_f, batch = mv_inputs(threshold_chain(obs, "obs", a, b), threshold_chain(ens, "ens", a, b))
    return gks_score(obs_f, ens_f, batch, estimator, nan_policy, ens_w)


def _ow(obs, ens, a, b, nan_policy, ens_w, name: str) -> np.ndarray:
    obs_f, ens_f, batch, wy, u, wbar = box_inputs(obs, ens, a, b, ens_w, nan_policy)
    safe = check_outcome_rows(wy, wbar, name, a, b)
    near, pair = gks_terms(obs_f, ens_f, u / safe[:, None])
    return (wy * (0.5 + 0.5 * pair - near)).reshape(batch)


def _vr(obs, ens, a, b, nan_policy, ens_w) -> np.ndarray:
    obs_f, ens_f, batch, wy, u, _ = box_inputs(obs, ens, a, b, ens_w, nan_policy)
    near, pair = gks_terms(obs_f, ens_f, u)
    return (0.5 * wy + 0.5 * pair - wy * near).reshape(batch)


# What the six registrations share; each adds its name, kind and parameters.
_ENTRY: dict[str, Any] = {"family": FAMILY, "inputs": ("y", "ens"), "higher_is_better": False,
                          "bounds": (0.0, 1.0), "proper": "proper", "per_row": True,
                          "citation": ALLEN + "; " + GNEITING_RAFTERY,
                          "tested_against": (SCORINGRULES, 1e-10)}


@register("twgksuv_ensemble", kind="ensemble", params={**_PARAMS, "estimator": "standard"}, **_ENTRY)
def twgksuv_ensemble(obs: Any, ens: Any, *, a: float = -_INF, b: float = _INF, estimator: str = "standard",
                     nan_policy: str = "propagate", ens_w: Any = None) -> np.ndarray:
    r"""Threshold-weighted Gaussian kernel score of a univariate ensemble.

    The kernel score of the members and the observation clipped to ``[a, b]`` (the module
    docstring). Proper.

    Parameters
    ----------
    %(ensemble, window, estimator, members)s

    Examples
    --------
    >>> round(float(twgksuv_ensemble(0.0, [1.0, -1.0])), 6)
    0.177303
    >>> float(twgksuv_ensemble(-3.0, [-1.0, -2.0], a=0.0))  # all clipped to 0
    0.0
    """
    return _tw(*_as_multivariate(obs, ens), a, b, estimator, nan_policy, ens_w)


@register("owgksuv_ensemble", kind="ensemble", params=_PARAMS, **_ENTRY)
def owgksuv_ensemble(obs: Any, ens: Any, *, a: float = -_INF, b: float = _INF,
                     nan_policy: str = "propagate", ens_w: Any = None) -> np.ndarray:
    r"""Outcome-weighted Gaussian kernel score of a univariate ensemble.

    :math:`w(y)` times the kernel score of the members inside ``[a, b]`` (the module
    docstring). Proper.

    Parameters
    ----------
    %(ensemble, window, members)s

    Examples
    --------
    >>> round(float(owgksuv_ensemble(0.0, [1.0, -1.0, 9.0], a=-2.0, b=2.0)), 6)
    0.177303
    >>> float(owgksuv_ensemble(5.0, [1.0, -1.0], a=-2.0, b=2.0))
    0.0
    """
    return _ow(*_as_multivariate(obs, ens), a, b, nan_policy, ens_w, "owgksuv_ensemble")


@register("vrgksuv_ensemble", kind="ensemble", params=_PARAMS, **_ENTRY)
def vrgksuv_ensemble(obs: Any, ens: Any, *, a: float = -_INF, b: float = _INF,
                     nan_policy: str = "propagate", ens_w: Any = None) -> np.ndarray:
    r"""Vertically re-scaled Gaussian kernel score of a univariate ensemble.

    The vrGKS of the module docstring; with no window it is the kernel score
    (:func:`~scorebench.metrics.scoring_rules.kernel.gksuv_ensemble`). Proper.

    Parameters
    ----------
    %(ensemble, window, members)s

    Examples
    --------
    >>> round(float(vrgksuv_ensemble(0.0, [1.0, -1.0])), 6)
    0.177303
    """
    return _vr(*_as_multivariate(obs, ens), a, b, nan_policy, ens_w)


@register("twgksmv_ensemble", kind="multivariate", params={**_PARAMS, "estimator": "standard"}, **_ENTRY)
def twgksmv_ensemble(obs: Any, ens: Any, *, a: float = -_INF, b: float = _INF, estimator: str = "standard",
                     nan_policy: str = "propagate", ens_w: Any = None) -> np.ndarray:
    r"""Threshold-weighted Gaussian kernel score of a multivariate ensemble.

    The kernel score of the members and the observation with every variable clipped to
    ``[a, b]`` (the module docstring). Proper.

    Parameters
    ----------
    %(mv_ensemble, window, estimator, members)s

    Examples
    --------
    >>> round(float(twgksmv_ensemble([0.0, 0.0], [[1.0, 0.0], [-1.0, 0.0]])), 6)
    0.177303
    """
    return _tw(obs, ens, a, b, estimator, nan_policy, ens_w)


@register("owgksmv_ensemble", kind="multivariate", params=_PARAMS, **_ENTRY)
def owgksmv_ensemble(obs: Any, ens: Any, *, a: float = -_INF, b: float = _INF,
                     nan_policy: str = "propagate", ens_w: Any = None) -> np.ndarray:
    r"""Outcome-weighted Gaussian kernel score of a multivariate ensemble.

    :math:`w(y)` times the kernel score of the members inside the box :math:`[a, b]^d`
    (the module docstring). Proper.

    Parameters
    ----------
    %(mv_ensemble, window, members)s

    Examples
    --------
    A member or an outcome with one variable outside the box has weight 0 (the member
    ``[0, 9]`` is left out; the second outcome scores 0):

    >>> ens = [[1.0, 0.0], [-1.0, 0.0], [0.0, 9.0]]
    >>> owgksmv_ensemble([[0.0, 0.0], [0.0, 5.0]], ens, a=-2.0, b=2.0).round(6)
    array([0.177303, 0.      ])
    """
    return _ow(obs, ens, a, b, nan_policy, ens_w, "owgksmv_ensemble")


@register("vrgksmv_ensemble", kind="multivariate", params=_PARAMS, **_ENTRY)
def vrgksmv_ensemble(obs: Any, ens: Any, *, a: float = -_INF, b: float = _INF,
                     nan_policy: str = "propagate", ens_w: Any = None) -> np.ndarray:
    r"""Vertically re-scaled Gaussian kernel score of a multivariate ensemble.

    The vrGKS of the module docstring with the box :math:`[a, b]^d` as the weight; with no
    window it is :func:`~scorebench.metrics.scoring_rules.kernel.gksmv_ensemble`. Proper.

    Parameters
    ----------
    %(mv_ensemble, window, members)s

    Examples
    --------
    An outcome inside the box :math:`[a, b]^d` scores as with the kernel score here (all
    members are inside); one outside it scores :math:`\tfrac12 \sum_{i,j} u_i u_j k(x_i, x_j)`,
    the forecast's weight in the box:

    >>> ens = [[1.0, 0.0], [-1.0, 0.0]]
    >>> vrgksmv_ensemble([[0.0, 0.0], [0.0, 5.0]], ens, a=-2.0, b=2.0).round(6)
    array([0.177303, 0.283834])
    """
    return _vr(obs, ens, a, b, nan_policy, ens_w)


fill_doc(twgksuv_ensemble, owgksuv_ensemble, vrgksuv_ensemble,
         twgksmv_ensemble, owgksmv_ensemble, vrgksmv_ensemble, **SECTIONS)
