"""A difficulty-aware rating: models and test items rated jointly, next to Bradley–Terry.

Each answer is a game between a model and a test item: the model wins when it answers
correctly, the item wins otherwise. Rating both sides with the Bradley–Terry engine gives
model skills and item difficulties on one Elo scale (a Rasch / 1PL model fitted by joint
penalised maximum likelihood), so a model that solves hard items gains more than one that
solves easy ones. This follows the idea of unified rating systems that rate models and
test cases together (e.g. Elo-style ratings where items are players).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.core.validation import describe_rows
from scorebench.aggregate.pairwise import bt_fit, to_elo_scale
from scorebench.aggregate.registry import MethodResult, register_method

__all__ = ["DifficultyRating", "difficulty_rating", "response_matrix"]


@dataclass(frozen=True)
class DifficultyRating:
    """Model ratings (difficulty-aware, and plain Bradley–Terry) and item difficulties.

    Attributes
    ----------
    systems : DataFrame
        ``system``, ``rating`` (joint model/item rating), ``bt_rating`` (Bradley–Terry from
        model-vs-model battles on each item), ``accuracy``, ``n_items``.
    items : DataFrame
        ``item``, ``difficulty`` (on the same Elo scale as ``rating``), ``solve_rate``, ``n_systems``.
    """

    systems: pd.DataFrame
    items: pd.DataFrame


def response_matrix(table: pd.DataFrame, *, item_column: str | None = None,
                    value_column: str | None = None) -> tuple[np.ndarray, list[str], list[str]]:
    """Systems x items matrix of correctness in [0, 1] (NaN = not answered)."""
    if not isinstance(table, pd.DataFrame):
        raise InputError(f"expected a responses DataFrame (system, item, correct), got {type(table).__name__}")
    item_column = item_column or next((c for c in ("item", "id", "qid") if c in table.columns), None)
    value_column = value_column or next((c for c in ("correct", "score", "value") if c in table.columns), None)
    if "system" not in table.columns or item_column is None or value_column is None:
        raise InputError("responses table: expected columns system, item (or id), correct (or score/value); "
                         f"the table has {list(table.columns)[:12]}")
    dup = table.duplicated(subset=["system", item_column], keep=False).to_numpy()
    if dup.any():
        raise InputError(f"responses table: duplicate (system, {item_column}) in {describe_rows(dup, table.index)}")
    values = pd.to_numeric(table[value_column], errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    bad = np.isnan(values) | (values < 0) | (values > 1)
    if bad.any():
        raise InputError(f"responses table: column {value_column!r} must hold numbers in [0, 1] "
                         f"(1 = correct) in {describe_rows(bad, table.index)}")
    wide = pd.DataFrame({"system": table["system"].astype(str).to_numpy(),
                         "item": table[item_column].astype(str).to_numpy(), "v": values}) \
        .pivot(index="system", columns="item", values="v")
    return wide.to_numpy(dtype=np.float64), list(wide.index), list(wide.columns)


def difficulty_rating(table: pd.DataFrame, *, prior: float = 0.1, scale: float = 400.0, base: float = 10.0,
                      init: float = 1000.0, item_column: str | None = None,
                      value_column: str | None = None) -> DifficultyRating:
    r"""Rate models and items jointly; report plain Bradley–Terry next to it.

    With correctness :math:`c_{si} \in [0, 1]`, model ``s`` beats item ``i`` with weight
    :math:`c_{si}` and loses with weight :math:`1 - c_{si}`:

    .. math:: P(s \text{ solves } i) = \sigma(\theta_s - \delta_i)

    fitted with a Gaussian prior of precision ``prior`` on every :math:`\theta_s, \delta_i`
    (items every model solves would otherwise have difficulty :math:`-\infty`). The
    Bradley–Terry column comes from model-vs-model battles on each item answered by both:
    ``a`` beats ``b`` with probability :math:`c_a(1 - c_b)`, ties otherwise (half each).

    Examples
    --------
    >>> import pandas as pd
    >>> r = pd.DataFrame({"system": list("aabbcc"), "item": [1, 2] * 3, "correct": [1, 1, 1, 0, 0, 0]})
    >>> out = difficulty_rating(r)
    >>> out.systems["system"].tolist(), bool(out.systems["rating"].is_monotonic_decreasing)
    (['a', 'b', 'c'], True)
    """
    C, systems, items = response_matrix(table, item_column=item_column, value_column=value_column)
    n, q = C.shape
    if n < 2:
        raise InputError("difficulty_rating needs at least 2 systems")
    if not prior > 0:
        raise InputError(f"difficulty_rating: prior must be > 0 (item difficulties diverge otherwise), got {prior!r}")
    present = ~np.isnan(C)
    c = np.nan_to_num(C)
    W = np.zeros((n + q, n + q))
    W[:n, n:] = np.where(present, c, 0.0)
    W[n:, :n] = np.where(present, 1.0 - c, 0.0).T
    theta = bt_fit(W, prior=prior)
    # Model-vs-model battles per item.
    p = present.astype(float)
    win = (c * p) @ ((1.0 - c) * p).T
    tie = (c * p) @ (c * p).T + ((1.0 - c) * p) @ ((1.0 - c) * p).T
    Wbt = win + 0.5 * tie
    np.fill_diagonal(Wbt, 0.0)
    bt = bt_fit(Wbt, prior=prior)
    sys_frame = pd.DataFrame({
        "system": systems,
        "rating": to_elo_scale(theta[:n], scale=scale, base=base, init=init),
        "bt_rating": to_elo_scale(bt, scale=scale, base=base, init=init),
        "accuracy": np.nanmean(C, axis=1),
        "n_items": present.sum(axis=1),
    }).sort_values("rating", ascending=False, kind="stable").reset_index(drop=True)
    item_frame = pd.DataFrame({
        "item": items,
        "difficulty": to_elo_scale(theta[n:], scale=scale, base=base, init=init),
        "solve_rate": np.nanmean(C, axis=0),
        "n_systems": present.sum(axis=0),
    }).sort_values("difficulty", ascending=False, kind="stable").reset_index(drop=True)
    return DifficultyRating(sys_frame, item_frame)


@register_method("difficulty", family="pairwise", accepts=("table",),
                 missing="items a system did not answer are skipped",
                 citation="Rasch (1960); models and test items rated jointly as players")
def difficulty(table: Any, *, prior: float = 0.1, scale: float = 400.0, base: float = 10.0,
               init: float = 1000.0) -> MethodResult:
    """Difficulty-aware rating of models against test items (reads a responses table)."""
    out = difficulty_rating(table, prior=prior, scale=scale, base=base, init=init)
    frame = out.systems.sort_values("system", kind="stable")
    return MethodResult(frame["rating"].to_numpy(), {"systems": tuple(frame["system"]), "items": out.items,
                                                     "bt_rating": frame["bt_rating"].to_numpy()})
