"""Multiwinner selection of ``k`` systems: k-Borda, Chamberlin–Courant and PAV, exactly by MILP.

Each column is a voter (weighted) whose utility for a system is its Borda points in that
column (``k_borda``, ``chamberlin_courant``) or whose approval set is its top positions
(``pav``). Optional group-fairness constraints bound how many members come from each group,
as in subset selection with fairness constraints (Celis, Straszak & Vishnoi, 2018).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from scorebench.core.lazy import lazy_attr
from scorebench.core.errors import ConvergenceError, InputError
from scorebench.core.validation import check_choice
from scorebench.aggregate.input import ScoreMatrix, read_input
from scorebench.aggregate.positional import borda_points
from scorebench.aggregate.profile import column_ranks

LinearConstraint, milp = lazy_attr("scipy.optimize", "LinearConstraint"), lazy_attr("scipy.optimize", "milp")
coo_matrix, hstack = lazy_attr("scipy.sparse", "coo_matrix"), lazy_attr("scipy.sparse", "hstack")

__all__ = ["Committee", "select_committee", "RULES"]

RULES = ("k_borda", "chamberlin_courant", "pav")


@dataclass(frozen=True)
class Committee:
    """An optimal committee: its members, the objective value and the rule."""

    members: tuple[str, ...]
    objective: float
    rule: str
    k: int
    groups: Mapping[str, int] | None = None


def _group_rows(systems: tuple[str, ...], groups: Mapping[str, str] | None,
                group_bounds: Mapping[str, tuple[int | None, int | None]] | None, n_vars: int):
    if groups is None and group_bounds is None:
        return [], None
    if groups is None or group_bounds is None:
        raise InputError("group fairness needs both groups (system -> group) and group_bounds (group -> (lo, hi))")
    missing = [s for s in systems if s not in groups]
    if missing:
        raise InputError(f"groups: no group given for system(s) {missing[:5]}")
    unknown = [g for g in group_bounds if g not in set(groups.values())]
    if unknown:
        raise InputError(f"group_bounds: unknown group(s) {unknown}")
    rows, lo, hi = [], [], []
    for g, (a, b) in group_bounds.items():
        row = np.zeros(n_vars)
        row[[i for i, s in enumerate(systems) if groups[s] == g]] = 1.0
        rows.append(row)
        lo.append(-np.inf if a is None else float(a))
        hi.append(np.inf if b is None else float(b))
    return [LinearConstraint(np.array(rows), lo, hi)], {g: 0 for g in group_bounds}


def select_committee(table: Any, k: int, *, rule: str = "k_borda", approval_top: int | None = None,
                     groups: Mapping[str, str] | None = None,
                     group_bounds: Mapping[str, tuple[int | None, int | None]] | None = None,
                     weights: Any = None, higher_is_better: Any = None, time_limit: float | None = None,
                     **read_options: Any) -> Committee:
    r"""Choose ``k`` systems maximising a multiwinner objective, optionally with group bounds.

    * ``k_borda``: :math:`\max_{|S|=k} \sum_j w_j \sum_{a \in S} B_{ja}` (Borda points);
    * ``chamberlin_courant``: :math:`\max_{|S|=k} \sum_j w_j \max_{a \in S} B_{ja}` — each
      task is represented by its favourite member;
    * ``pav``: :math:`\max_{|S|=k} \sum_j w_j H(|A_j \cap S|)` with :math:`H(c) = \sum_{l \le c} 1/l`
      and :math:`A_j` the top ``approval_top`` (default ``k``) positions of column ``j``.

    Group fairness: ``groups`` maps each system to a group and ``group_bounds`` maps a group
    to ``(at_least, at_most)`` (None for no bound). Solved exactly with HiGHS (scipy ``milp``);
    one optimal committee is returned (ties between optimal committees are not enumerated).

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"t1": [4, 3, 2, 1], "t2": [4, 3, 1, 2], "t3": [1, 2, 3, 4]}, index=list("abcd"))
    >>> select_committee(t, 2, rule="k_borda").members
    ('a', 'b')
    >>> select_committee(t, 2, rule="chamberlin_courant").members
    ('a', 'd')
    """
    check_choice(rule, "rule", RULES)
    m = read_input(table, weights=weights, higher_is_better=higher_is_better, **read_options)
    if not isinstance(m, ScoreMatrix):
        raise InputError("select_committee needs a score table (systems x tasks), not battles")
    n = m.n_systems
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= n:
        raise InputError(f"k must be an integer in [1, {n}], got {k!r}")
    w = m.weights
    if rule == "k_borda":
        B = borda_points(m)
        c = -(B @ w)
        A = [LinearConstraint(np.ones((1, n)), k, k)]
        extra, _ = _group_rows(m.systems, groups, group_bounds, n)
        integrality = np.ones(n)
        n_vars = n
    elif rule == "chamberlin_courant":
        B = borda_points(m)  # n x J
        J = m.n_columns
        n_vars = n + J * n  # x_a, then y_ja
        c = np.concatenate([np.zeros(n), -(B.T * w[:, None]).ravel()])
        size = LinearConstraint(np.r_[np.ones(n), np.zeros(J * n)][None, :], k, k)
        assign = coo_matrix((np.ones(J * n), (np.repeat(np.arange(J), n), n + np.arange(J * n))), shape=(J, n_vars))
        rows = np.arange(J * n)
        link = coo_matrix((np.r_[np.ones(J * n), -np.ones(J * n)],
                           (np.r_[rows, rows], np.r_[n + rows, np.tile(np.arange(n), J)])), shape=(J * n, n_vars))
        A = [size, LinearConstraint(assign, 1, 1), LinearConstraint(link, -np.inf, 0)]
        extra, _ = _group_rows(m.systems, groups, group_bounds, n_vars)
        integrality = np.r_[np.ones(n), np.zeros(J * n)]
    else:
        top = k if approval_top is None else approval_top
        if isinstance(top, bool) or not isinstance(top, (int, np.integer)) or not 1 <= top <= n:
            raise InputError(f"approval_top must be an integer in [1, {n}], got {approval_top!r}")
        if m.has_missing:
            raise InputError("pav: missing scores; approval sets need complete columns")
        approve = (column_ranks(m, "min") <= top).T.astype(float)  # J x n
        J = m.n_columns
        n_vars = n + J * k  # x_a, then z_jl
        c = np.concatenate([np.zeros(n), -(w[:, None] / np.arange(1, k + 1)[None, :]).ravel()])
        size = LinearConstraint(np.r_[np.ones(n), np.zeros(J * k)][None, :], k, k)
        zpart = coo_matrix((np.ones(J * k), (np.repeat(np.arange(J), k), np.arange(J * k))), shape=(J, J * k))
        cover = hstack([coo_matrix(-approve), zpart])
        A = [size, LinearConstraint(cover, -np.inf, 0)]
        extra, _ = _group_rows(m.systems, groups, group_bounds, n_vars)
        integrality = np.r_[np.ones(n), np.zeros(J * k)]
    options = {"time_limit": time_limit} if time_limit else {}
    res = milp(c, integrality=integrality, bounds=(0, 1), constraints=A + extra, options=options)
    if res.status == 2:
        raise InputError("select_committee: no committee satisfies the size and group constraints")
    if res.status != 0 or res.x is None:
        raise ConvergenceError(f"select_committee: HiGHS did not prove optimality ({res.message})")
    chosen = np.flatnonzero(np.round(res.x[:n]) == 1)
    members = tuple(m.systems[i] for i in chosen)
    counts = None
    if groups is not None:
        counts = {}
        for s in members:
            counts[groups[s]] = counts.get(groups[s], 0) + 1
    return Committee(members, float(-res.fun), rule, int(k), counts)


