"""Vote'n'Rank's possible winners: task weights under which a system is the Condorcet winner.

Strict (default): the system beats every rival by a positive weighted majority margin.
Weak (``weak=True``): no rival beats it (margins >= 0), the condition Vote'n'Rank's Condorcet
search solves (its linear program's constraints are non-strict), so its published lists of
"prospective" models are reproduced with ``weak=True``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.lazy import lazy_attr
from scorebench.core.errors import ConvergenceError, InputError
from scorebench.aggregate.input import ScoreMatrix, read_input

linprog = lazy_attr("scipy.optimize", "linprog")

__all__ = ["possible_winners", "condorcet_weights"]


def condorcet_weights(m: ScoreMatrix, system: str, *, min_weight: float = 0.0) -> tuple[float, np.ndarray]:
    r"""Weights maximising the smallest weighted majority margin of ``system`` over every rival.

    Solves the linear program

    .. math::
        \max_{w, t}\ t \quad \text{s.t.}\quad \sum_j w_j\,\mathrm{sign}(x_{cj} - x_{bj}) \ge t\ \ \forall b \ne c,
        \qquad \sum_j w_j = 1,\ w_j \ge w_{\min}

    (a column where either system is missing contributes 0). ``system`` is a possible
    Condorcet winner exactly when the optimum :math:`t^\star > 0`. Returns ``(t*, w*)``.
    """
    if system not in m.systems:
        raise InputError(f"unknown system {system!r}")
    k = m.n_columns
    if not 0 <= min_weight <= 1.0 / k:
        raise InputError(f"min_weight must lie in [0, 1/{k}], got {min_weight!r}")
    x = m.oriented
    c = m.systems.index(system)
    d = np.sign(x[c][None, :] - x)  # rivals x columns
    d = np.nan_to_num(d, nan=0.0)
    d = np.delete(d, c, axis=0)
    # variables: w (k), t ; minimise -t ; constraints: -d w + t <= 0
    A_ub = np.hstack([-d, np.ones((len(d), 1))])
    b_ub = np.zeros(len(d))
    A_eq = np.hstack([np.ones((1, k)), np.zeros((1, 1))])
    bounds = [(min_weight, 1.0)] * k + [(-1.0, 1.0)]
    res = linprog(np.r_[np.zeros(k), -1.0], A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=[1.0], bounds=bounds,
                  method="highs")
    if res.status != 0:
        raise ConvergenceError(f"possible winners: the linear program failed ({res.message})")
    return float(res.x[-1]), res.x[:k]


def possible_winners(table: Any, systems: Sequence[str] | None = None, *, higher_is_better: Any = None,
                     min_weight: float = 0.0, weak: bool = False, tol: float = 1e-9,
                     **read_options: Any) -> pd.DataFrame:
    r"""For each system, whether some task weighting makes it the Condorcet winner (Vote'n'Rank).

    With :math:`t^\star` the optimum of :func:`condorcet_weights` (the largest smallest
    weighted margin over the rivals), a system is a possible *strict* Condorcet winner when
    :math:`t^\star > 0` (default) and a possible *weak* one (``weak=True``: no rival beats
    it, ties allowed) when :math:`t^\star \ge 0`, as Vote'n'Rank's ``find_weights_for_condorcet``
    (whose published "prospective" models are the weak ones: a system that ties everyone on
    some task qualifies). ``tol`` is the tolerance on :math:`t^\star`.

    Returns one row per system: ``system``, ``possible`` (bool), ``margin`` (the optimal
    smallest margin with weights summing to 1) and ``weights`` (a dict column -> weight,
    or None when impossible). ``min_weight`` forces every task to keep at least that weight.

    Reference: Rofin et al. (2023), "Vote'n'Rank: Revision of Benchmarking with Social
    Choice Theory", EACL, Section 3.3.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"t1": [3, 2, 1], "t2": [1, 3, 2]}, index=["a", "b", "c"])
    >>> possible_winners(t)[["system", "possible"]].values.tolist()
    [['a', True], ['b', True], ['c', False]]
    >>> tied = pd.DataFrame({"t1": [2, 2, 1]}, index=["a", "b", "c"])  # a and b tie everywhere
    >>> possible_winners(tied, weak=True)["possible"].tolist(), possible_winners(tied)["possible"].tolist()
    ([True, True, False], [False, False, False])
    """
    if not isinstance(weak, (bool, np.bool_)):
        raise InputError(f"weak: expected True or False, got {weak!r}")
    m = read_input(table, higher_is_better=higher_is_better, **read_options)
    if not isinstance(m, ScoreMatrix):
        raise InputError("possible_winners needs a score table (systems x tasks), not battles")
    rows = []
    for s in (systems if systems is not None else m.systems):
        t, w = condorcet_weights(m, s, min_weight=min_weight)
        ok = t >= -tol if weak else t > tol
        rows.append({"system": s, "possible": ok, "margin": t,
                     "weights": {c: float(v) for c, v in zip(m.columns, w)} if ok else None})
    return pd.DataFrame(rows)
