r"""Ensembles with member weights from a table: the ``weighted_ensemble`` and ``weighted_multivariate`` kinds.

The plain ``ensemble`` / ``multivariate`` kinds carry no member weights, so the weighted
scores read two kinds of their own:

``weighted_ensemble``
    wide: ``y``, member columns ``m0, m1, ...`` and one weight column ``w0, w1, ...`` per
    member; or long: ``id, member, value, weight, y`` (one row per member).
``weighted_multivariate``
    ``y.<d>``, ``m<j>.<d>`` as the ``multivariate`` kind, and ``w<j>`` per member.

Weights are non-negative with a positive total per row and are normalised per row. The
registered metrics ``crps_ensemble_w``, ``energy_score_w`` and ``variogram_score_w`` are
:func:`~scorebench.metrics.scoring_rules.crps_ensemble.crps_ensemble`,
:func:`~scorebench.metrics.scoring_rules.multivariate.energy_score` and
:func:`~scorebench.metrics.scoring_rules.multivariate.variogram_score` with ``ens_w``.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.core.registry import NO_EXTERNAL_REFERENCE, register
from scorebench.core.tables import Column, Inputs, check_long_members, multivariate_columns, numeric_column, register_kind, require_columns, \
    start_table, unit_frame
from scorebench.core.validation import describe_rows
from scorebench.metrics.scoring_rules._common import FAMILY, GNEITING_RAFTERY
from scorebench.metrics.scoring_rules.crps_ensemble import FERRO, crps_ensemble
from scorebench.metrics.scoring_rules.multivariate import energy_score, variogram_score

__all__ = ["crps_ensemble_w", "energy_score_w", "variogram_score_w"]

_MEMBER = re.compile(r"^m(\d+)$")


def _stack(df: pd.DataFrame, columns: list[str], nan_ok: bool) -> np.ndarray:
    return np.column_stack([numeric_column(df, c, nan_ok=nan_ok) for c in columns])


def _weight_columns(df: pd.DataFrame, members: list[int], kind: str) -> list[str]:
    weights = [f"w{j}" for j in members]
    require_columns(df, weights, kind)
    return weights


def _check_weights(w: np.ndarray, index: pd.Index) -> None:
    bad = (w < 0).any(axis=1) | ~(w.sum(axis=1) > 0)
    if bad.any():
        raise InputError(f"weight columns: negative weights or a zero total weight in {describe_rows(bad, index)}; "
                         "expected weights >= 0 with a positive total per row")


def _long_to_wide(df: pd.DataFrame) -> pd.DataFrame:
    """A long weighted ensemble (``id, member, value, weight, y``) as a wide one."""
    index, y = check_long_members(df, ["id", "member", "value", "weight", "y"], "weighted_ensemble",
                                  "long weighted ensemble table")
    value = df.pivot(index=index, columns="member", values="value")
    weight = df.pivot(index=index, columns="member", values="weight")
    if df.groupby(index, sort=False)["member"].size().nunique() > 1:
        raise InputError("long weighted ensemble table: ids have different members; expected the same "
                         "member set per id")
    k = value.shape[1]
    value.columns = [f"m{i}" for i in range(k)]
    weight.columns = [f"w{i}" for i in range(k)]
    return value.join(weight).join(y.first()).reset_index()


def _long_unit(columns: Any) -> str | None:
    return "id" if "member" in columns and "weight" in columns else None


@register_kind("weighted_ensemble", columns=(
    Column("y", "number", "the outcome"),
    Column("m<j>", "number", "ensemble member j", required=False, pattern=r"m\d+"),
    Column("w<j>", "number", "weight of member j (>= 0; a row's weights sum to more than 0)", required=False,
           pattern=r"w\d+"),
    Column("member", "label", "long layout: the member of each row (with id, value, weight)", required=False)),
    unit_column=_long_unit)
def extract_weighted_ensemble(df: pd.DataFrame, *, nan_policy: str = "raise") -> Inputs:
    """Real-valued outcomes with a weighted ensemble forecast per row."""
    if isinstance(df, pd.DataFrame) and "member" in df.columns and "weight" in df.columns:
        df = _long_to_wide(df)
    members = sorted(int(m.group(1)) for c in getattr(df, "columns", []) if isinstance(c, str) and (m := _MEMBER.match(c)))
    if not members:
        raise InputError("kind 'weighted_ensemble': expected member columns m0, m1, ... with weight columns "
                         "w0, w1, ... (or a long table with id, member, value, weight, y); found no member column")
    cols = [f"m{j}" for j in members]
    weights = _weight_columns(df, members, "weighted_ensemble")
    df, key = start_table(df, "weighted_ensemble", ["y", *cols, *weights], nan_policy)
    nan_ok = nan_policy == "propagate"
    w = _stack(df, weights, False)
    _check_weights(w, df.index)
    return Inputs(unit_frame(df, key), {"y": numeric_column(df, "y", nan_ok=nan_ok), "ens": _stack(df, cols, nan_ok),
                                        "ens_w": w}, key=key)


@register_kind("weighted_multivariate", columns=(
    Column("y.<d>", "number", "the outcome in dimension d", pattern=r"y\..+"),
    Column("m<j>.<d>", "number", "member j in dimension d", pattern=r"m\d+\..+"),
    Column("w<j>", "number", "weight of member j", pattern=r"w\d+")))
def extract_weighted_multivariate(df: pd.DataFrame, *, nan_policy: str = "raise") -> Inputs:
    """Vector-valued outcomes with a weighted ensemble forecast of the vector per row."""
    try:
        dims, members, needed = multivariate_columns(df, "weighted_multivariate")
    except InputError:
        raise InputError("kind 'weighted_multivariate': expected observation columns y.<dim>, member columns "
                         "m<j>.<dim> and weight columns w<j> (e.g. y.0, y.1, m0.0, m0.1, w0, m1.0, m1.1, w1)") from None
    weights = _weight_columns(df, members, "weighted_multivariate")
    obs_cols, ens_cols = needed[:len(dims)], needed[len(dims):]
    df, key = start_table(df, "weighted_multivariate", [*obs_cols, *ens_cols, *weights], nan_policy)
    nan_ok = nan_policy == "propagate"
    w = _stack(df, weights, False)
    _check_weights(w, df.index)
    ens = _stack(df, ens_cols, nan_ok).reshape(len(df), len(members), len(dims))
    return Inputs(unit_frame(df, key), {"y": _stack(df, obs_cols, nan_ok), "ens": ens, "ens_w": w},
                  {"dims": dims}, key=key)


@register("crps_ensemble_w", family=FAMILY, kind="weighted_ensemble", inputs=("y", "ens", "ens_w"),
          higher_is_better=False, bounds=(0.0, math.inf), proper="strict", per_row=True,
          params={"estimator": "standard", "nan_policy": "propagate"}, citation=GNEITING_RAFTERY + "; " + FERRO, tested_against=NO_EXTERNAL_REFERENCE)
def crps_ensemble_w(obs: Any, ens: Any, ens_w: Any, *, estimator: str = "standard",
                    nan_policy: str = "propagate") -> np.ndarray:
    r"""CRPS of a weighted ensemble :math:`\sum_i w_i \delta_{x_i}` (weights normalised per row).

    .. math:: \mathrm{CRPS} = \sum_i w_i |x_i - y| - \frac{1}{2c} \sum_{i,j} w_i w_j |x_i - x_j|,
              \qquad c = 1 \text{ (standard) or } 1 - \textstyle\sum_i w_i^2 \text{ (fair)}.

    :func:`~scorebench.metrics.scoring_rules.crps_ensemble.crps_ensemble` with ``ens_w``,
    for tables of kind ``weighted_ensemble``; equal weights give the unweighted CRPS.

    Parameters
    ----------
    obs : array_like, shape (...)
    ens : array_like, shape (..., M)
    ens_w : array_like, shape (..., M)
        Member weights >= 0.
    estimator : {"standard", "fair"}
    nan_policy : {"propagate", "omit"}

    References
    ----------
    Gneiting & Raftery (2007), JASA 102(477); Ferro (2014), QJRMS 140.

    Examples
    --------
    >>> float(crps_ensemble_w(0.0, [-1.0, 1.0], [1.0, 3.0]))
    0.625
    """
    return crps_ensemble(obs, ens, estimator=estimator, nan_policy=nan_policy, ens_w=ens_w)


@register("energy_score_w", family=FAMILY, kind="weighted_multivariate", inputs=("y", "ens", "ens_w"),
          higher_is_better=False, bounds=(0.0, math.inf), proper="strict", per_row=True,
          params={"estimator": "standard", "nan_policy": "propagate"}, citation=GNEITING_RAFTERY, tested_against=NO_EXTERNAL_REFERENCE)
def energy_score_w(obs: Any, ens: Any, ens_w: Any, *, estimator: str = "standard",
                   nan_policy: str = "propagate") -> np.ndarray:
    r"""Energy score of a weighted multivariate ensemble (weights normalised per row).

    .. math:: \mathrm{ES} = \sum_i w_i \lVert x_i - y\rVert
              - \frac{1}{2c} \sum_{i,j} w_i w_j \lVert x_i - x_j\rVert

    (:math:`c` as in :func:`crps_ensemble_w`); :func:`~scorebench.metrics.scoring_rules.multivariate.energy_score`
    with ``ens_w``, for tables of kind ``weighted_multivariate``.

    Parameters
    ----------
    obs : array_like, shape (..., d)
    ens : array_like, shape (..., M, d)
    ens_w : array_like, shape (..., M)
    estimator : {"standard", "fair"}
    nan_policy : {"propagate", "omit"}

    References
    ----------
    Gneiting & Raftery (2007), JASA 102(477).

    Examples
    --------
    >>> float(energy_score_w([0.0, 0.0], [[3.0, 4.0], [-3.0, -4.0]], [1.0, 1.0]))
    2.5
    """
    return energy_score(obs, ens, estimator=estimator, nan_policy=nan_policy, ens_w=ens_w)


@register("variogram_score_w", family=FAMILY, kind="weighted_multivariate", inputs=("y", "ens", "ens_w"),
          higher_is_better=False, bounds=(0.0, math.inf), proper="proper", per_row=True,
          params={"p": 0.5, "weights": None, "estimator": "standard", "nan_policy": "propagate"},
          citation="Scheuerer & Hamill (2015), Monthly Weather Review 143(4):1321-1334", tested_against=NO_EXTERNAL_REFERENCE)
def variogram_score_w(obs: Any, ens: Any, ens_w: Any, *, p: float = 0.5, weights: Any = None,
                      estimator: str = "standard", nan_policy: str = "propagate") -> np.ndarray:
    r"""Variogram score of order :math:`p` of a weighted multivariate ensemble.

    .. math:: \mathrm{VS}_p = \sum_{i,j} w_{ij} \Bigl(|y_i - y_j|^p - \sum_m e_m |x_{m,i} - x_{m,j}|^p\Bigr)^2

    with member weights :math:`e_m` normalised per row;
    :func:`~scorebench.metrics.scoring_rules.multivariate.variogram_score` with ``ens_w``,
    for tables of kind ``weighted_multivariate``.

    Parameters
    ----------
    obs : array_like, shape (..., d)
    ens : array_like, shape (..., M, d)
    ens_w : array_like, shape (..., M)
    p : float
    weights : array_like (d, d), optional
        Pair weights :math:`w_{ij}`.
    estimator : {"standard", "fair"}
    nan_policy : {"propagate", "omit"}

    Examples
    --------
    >>> float(variogram_score_w([0.0, 1.0], [[0.0, 1.0], [0.0, 4.0]], [3.0, 1.0], p=1.0))
    1.125
    """
    return variogram_score(obs, ens, p=p, weights=weights, estimator=estimator, nan_policy=nan_policy,
                           ens_w=ens_w)
