"""Input readers shared by the scoring-rule modules: ensembles, multivariate ensembles,
quantile forecasts and multiclass probability forecasts.

Each reader validates one forecast layout at the boundary (float64 conversion, refused
infinities, shapes that broadcast) and returns arrays in the flat layout the engines use,
with the batch shape to give the result back.

Examples
--------
>>> obs, ens, batch = ensemble_inputs([0.0, 1.0], [[0.0, 1.0, 2.0], [1.0, 1.0, 1.0]])
>>> ens.shape, batch
((2, 3), (2,))
>>> quantile_levels([0.1, 0.5, 0.9]).tolist()
[0.1, 0.5, 0.9]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from scorebench.core.errors import InputError
from scorebench.core.validation import as_class_index, as_float_array
from scorebench.metrics.scoring_rules._common import check_batch, probability_matrix

__all__ = ["ensemble_inputs", "mv_inputs", "quantile_levels", "quantile_inputs", "multiclass_inputs", "broadcast_rows"]


def ensemble_inputs(obs: Any, ens: Any, *, check_inf: bool = True) -> tuple[np.ndarray, np.ndarray, tuple]:
    """An ensemble forecast ``ens (..., M)`` (members on the last axis) and its observations.

    Parameters
    ----------
    obs : array_like, shape (...)
        Observations; broadcast with the batch shape of ``ens``.
    ens : array_like, shape (..., M)
        Ensemble members on the last axis, ``M >= 1``.
    check_inf : bool
        Refuse infinite values here (``False`` for engines that check a non-finite result
        afterwards with :func:`~scorebench.metrics.scoring_rules._common.run_engine`).

    Returns
    -------
    obs : ndarray, shape (N,)
    ens : ndarray, shape (N, M)
    batch : tuple of int
        The broadcast batch shape (``N`` is its product), to reshape per-row results.
    """
    obs = as_float_array(obs, "obs", check_inf=check_inf)
    ens = as_float_array(ens, "ens", check_inf=check_inf)
    if ens.ndim == 0:
        raise InputError("ens: expected ensemble members on the last axis, got a scalar")
    batch = check_batch(obs, ens, "obs", "ens", core=1)
    m = ens.shape[-1]
    if m == 0:
        raise InputError("ens: the ensemble has no members (last axis has length 0)")
    ens = np.broadcast_to(ens, (*batch, m)).reshape(-1, m)
    obs = np.broadcast_to(obs, batch).reshape(-1)
    return obs, ens, batch


def mv_inputs(obs: Any, ens: Any, *, check_inf: bool = True) -> tuple[np.ndarray, np.ndarray, tuple]:
    """A multivariate ensemble ``ens (..., M, d)`` and its observations ``obs (..., d)``.

    Members are on axis -2 and variables on axis -1; ``obs`` has the same ``d`` variables
    and broadcasts with the batch shape of ``ens``.

    Returns
    -------
    obs : ndarray, shape (N, d)
    ens : ndarray, shape (N, M, d)
    batch : tuple of int
        The broadcast batch shape, to reshape per-row results.
    """
    obs = as_float_array(obs, "obs", check_inf=check_inf)
    ens = as_float_array(ens, "ens", check_inf=check_inf)
    if ens.ndim < 2:
        raise InputError(f"ens: expected shape (..., M, d) with members on axis -2 and variables on "
                         f"axis -1, got shape {ens.shape}")
    if obs.ndim < 1 or obs.shape[-1] != ens.shape[-1]:
        raise InputError(f"mismatched lengths: obs has shape {obs.shape} but ens has shape {ens.shape}; "
                         f"expected obs of shape (..., {ens.shape[-1]}) with the same variables")
    batch = check_batch(obs[..., 0], ens[..., 0], "obs", "ens", core=1)
    m, d = ens.shape[-2:]
    if m == 0 or d == 0:
        raise InputError(f"ens: expected at least one member and one variable, got shape {ens.shape}")
    ens = np.broadcast_to(ens, (*batch, m, d)).reshape(-1, m, d)
    obs = np.broadcast_to(obs, (*batch, d)).reshape(-1, d)
    return obs, ens, batch


def quantile_levels(levels: Any) -> np.ndarray:
    """Quantile levels as a 1-D float64 array, strictly increasing and inside ``(0, 1)``."""
    lv = as_float_array(levels, "levels", check_inf=True)
    if lv.ndim != 1 or lv.size == 0:
        raise InputError(f"levels: expected a 1-D array of quantile levels, got shape {lv.shape}")
    if np.isnan(lv).any() or ((lv <= 0) | (lv >= 1)).any():
        raise InputError(f"levels: expected quantile levels strictly between 0 and 1, got {lv.tolist()}")
    if (np.diff(lv) <= 0).any():
        raise InputError(f"levels: expected strictly increasing quantile levels (the columns of q in "
                         f"the same order), got {lv.tolist()}")
    return lv


def quantile_inputs(y: Any, q: Any, levels: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Observations ``y (...)``, quantile forecasts ``q (..., Q)`` and their ``Q`` levels.

    The quantiles are on the last axis of ``q``, one per level (see :func:`quantile_levels`);
    ``y`` broadcasts with the batch shape of ``q``. Returns ``(y, q, levels)`` as float64.
    """
    lv = quantile_levels(levels)
    y = as_float_array(y, "y", check_inf=True)
    q = as_float_array(q, "q", check_inf=True)
    if q.ndim == 0 or q.shape[-1] != lv.size:
        raise InputError(f"mismatched lengths: q has shape {q.shape} but there are {lv.size} levels; "
                         "expected the quantiles on the last axis of q, one per level")
    check_batch(y, q, "y", "q", core=1)
    return y, q, lv


def multiclass_inputs(y: Any, P: Any) -> tuple[np.ndarray, np.ndarray]:
    """Class indices ``y (...)`` in ``0..K-1`` and probability vectors ``P (..., K)``,
    broadcast to a common batch shape; returns ``(idx, P)``."""
    P = probability_matrix(P)
    idx = as_class_index(y, P.shape[-1], of="P")
    shape = check_batch(idx, P, "y", "P", core=1)
    if idx.shape != P.shape[:-1]:
        idx = np.broadcast_to(idx, shape)
        P = np.broadcast_to(P, (*shape, P.shape[-1]))
    return idx, P


def broadcast_rows(values: np.ndarray, name: str, batch: tuple[int, ...]) -> np.ndarray:
    """A parameter ``values`` (a scalar or one value per row) broadcast to the forecast's
    ``batch`` shape and flattened to ``(N,)``; one error naming the argument otherwise.

    >>> broadcast_rows(np.array(2.0), "bandwidth", (2, 2)).tolist()
    [2.0, 2.0, 2.0, 2.0]
    """
    try:
        return np.broadcast_to(values, batch).reshape(-1)
    except ValueError:
        raise InputError(f"{name}: shape {np.shape(values)} does not match the batch shape {batch}") from None
