r"""Composite Bradley–Terry: one set of strengths fitted to several weighted loss components.

Battles often come from several sources that should count by design rather than by volume
(human votes and LLM-judge votes, several arenas, categories, time windows). With a
``component`` label per battle and weights :math:`\lambda_k`, the strengths minimise

.. math::
    L(\theta) = -\sum_k \lambda_k \frac{1}{W_k}\sum_{i \in k} w_i
    \bigl[y_i \log\sigma(\theta_{a_i} - \theta_{b_i}) + (1 - y_i)\log\sigma(\theta_{b_i} - \theta_{a_i})\bigr]

(:math:`W_k = \sum_{i\in k} w_i`, ties :math:`y = 1/2`), so each component weighs
:math:`\lambda_k` whatever its size. This is Bradley–Terry with per-battle weights
:math:`\omega_i = \lambda_k w_i / W_k`, fitted on the deduplicated counts, with the sandwich
covariance of :func:`~scorebench.aggregate.pair_counts.bt_sandwich` (valid under any such
weights). arena-rank 0.1.1 ships no composite model, so this definition is scorebench's own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.aggregate.input import Battles, as_battles
from scorebench.aggregate.pair_counts import bt_sandwich, pair_counts
from scorebench.aggregate.pairwise import bt_fit, bt_loglik, to_elo_scale
from scorebench.aggregate.registry import MethodResult, register_intervals, register_method

__all__ = ["composite_weights", "bradley_terry_composite"]


def composite_weights(table: pd.DataFrame, component: str = "component",
                      weights: Mapping[str, float] | None = None) -> tuple[Battles, dict[str, float]]:
    """The battles with weights :math:`\\lambda_k w_i / W_k` and the component weights used.

    ``weights`` maps each component label to :math:`\\lambda_k \\ge 0` (default: 1 each); every
    label in the table needs a weight (0 drops the component), and no weight may name an absent label.

    Examples
    --------
    >>> t = pd.DataFrame({"a": ["x", "x", "x", "y"], "b": ["y", "y", "y", "x"], "winner": ["a"] * 4,
    ...                   "component": ["human", "human", "human", "judge"]})
    >>> b, lam = composite_weights(t)
    >>> np.round(b.weight, 4).tolist(), lam
    ([0.3333, 0.3333, 0.3333, 1.0], {'human': 1.0, 'judge': 1.0})
    """
    if not isinstance(table, pd.DataFrame):
        raise InputError(f"composite Bradley-Terry: expected a battles DataFrame, got {type(table).__name__}")
    if component not in table.columns:
        raise InputError(f"composite Bradley-Terry: no {component!r} column (the component label of each battle); "
                         f"columns: {list(table.columns)[:12]}")
    labels = table[component]
    if labels.isna().any():
        raise InputError(f"composite Bradley-Terry: column {component!r} has missing labels")
    labels = labels.astype(str).to_numpy()
    present = sorted(set(labels))
    if weights is None:
        lam = {k: 1.0 for k in present}
    else:
        if not isinstance(weights, Mapping):
            raise InputError(f"component_weights: expected a mapping label -> weight, got {type(weights).__name__}")
        lam = {str(k): v for k, v in weights.items()}
        missing = [k for k in present if k not in lam]
        unknown = [k for k in lam if k not in present]
        if missing or unknown:
            raise InputError(f"component_weights: labels without a weight {missing[:6]}, weights for absent labels "
                             f"{unknown[:6]}; the table's components are {present[:12]}")
        bad = {k: v for k, v in lam.items() if isinstance(v, bool) or not isinstance(v, (int, float))
               or not np.isfinite(v) or v < 0}
        if bad:
            raise InputError(f"component_weights: weights must be finite numbers >= 0, got {bad}")
        lam = {k: float(v) for k, v in lam.items()}
        if not any(lam.values()):
            raise InputError("component_weights: every component has weight 0")
    b = as_battles(table)
    code = np.searchsorted(np.array(present), labels)
    total = np.bincount(code, b.weight, len(present))
    if (total[[lam[k] > 0 for k in present]] <= 0).any():
        raise InputError("composite Bradley-Terry: a component with positive weight has no (weighted) battles")
    factor = np.array([lam[k] / t if t > 0 else 0.0 for k, t in zip(present, total)])
    return Battles(b.systems, b.a, b.b, b.outcome, b.weight * factor[code]), lam


def _check(scale: float, base: float) -> None:
    if not (scale > 0 and base > 1):
        raise InputError(f"composite Bradley-Terry: expected scale > 0 and base > 1, got {scale!r}, {base!r}")


@register_method("bradley_terry_composite", family="pairwise", accepts=("table",),
                 missing="battles are only between the models that met; every battle needs a component label",
                 citation="Bradley & Terry (1952); weighted composite likelihood (Lindsay 1988, Contemp. Math. 80)")
def bradley_terry_composite(table: pd.DataFrame, *, component: str = "component", component_weights: Any = None,
                            prior: float = 0.0, scale: float = 400.0, base: float = 10.0,
                            init: float = 1000.0) -> MethodResult:
    r"""Bradley–Terry strengths shared by several weighted loss components (module docstring), Elo scale.

    Default intervals: sandwich. ``details["component_weights"]`` holds :math:`\lambda`.

    Examples
    --------
    >>> t = pd.DataFrame({"a": ["x", "x", "y", "x"], "b": ["y", "y", "x", "y"], "winner": ["a", "a", "a", "b"],
    ...                   "component": ["human", "human", "human", "judge"]})
    >>> r = bradley_terry_composite(t, component_weights={"human": 1.0, "judge": 0.0})
    >>> round(float(r.scores[0] - r.scores[1]), 2)   # humans alone: x won 2 of 3
    120.41
    """
    _check(scale, base)
    b, lam = composite_weights(table, component, component_weights)
    W = pair_counts(b).wins()
    theta = bt_fit(W, prior=prior)
    return MethodResult(to_elo_scale(theta, scale=scale, base=base, init=init),
                        {"systems": b.systems, "theta": theta, "loglik": bt_loglik(W, theta),
                         "component_weights": lam, "n_battles": len(b.a)})


@register_intervals("bradley_terry_composite")
def bradley_terry_composite_sandwich(table: pd.DataFrame, *, component: str = "component",
                                     component_weights: Any = None, prior: float = 0.0, scale: float = 400.0,
                                     base: float = 10.0, init: float = 1000.0) -> tuple[np.ndarray, np.ndarray]:
    """Composite ratings and their sandwich covariance on the Elo scale."""
    _check(scale, base)
    b, _ = composite_weights(table, component, component_weights)
    pc = pair_counts(b)
    theta = bt_fit(pc.wins(), prior=prior, tol=1e-12)
    unit = to_elo_scale(1.0, scale=scale, base=base, init=0.0)
    return to_elo_scale(theta, scale=scale, base=base, init=init), unit ** 2 * bt_sandwich(pc, theta, prior=prior)
