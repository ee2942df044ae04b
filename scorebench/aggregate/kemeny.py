r"""Kemeny–Young: the ranking that disagrees least with the weighted ballots.

.. math::
    \pi^\star = \arg\min_{\pi} \sum_{a \succ_\pi b} P_{ba}

where :math:`P_{ba}` is the weight of the columns (or battles) preferring ``b`` to ``a``.

Solvers, chosen per strongly connected component of the (weak) majority graph — by the
extended Condorcet property every optimal ranking orders the components as the majority
does, so each is solved alone (Truchon, 1998):

* ``"dp"``: exact dynamic programming over subsets, :math:`O(2^n n)` time (Held–Karp style),
  for components up to ``dp_max`` systems; yields *all* co-optimal rankings (counted, and the
  expected position of each system over them);
* ``"milp"``: exact integer program with pairwise order variables and 3-cycle (transitivity)
  constraints, solved by HiGHS through :func:`scipy.optimize.milp`; co-optimal rankings are
  enumerated with no-good cuts when ``all_optimal=True``;
* ``"heuristic"``: Borda seed and KwikSort restarts, each refined by insertion local search,
  with the gap to the lower bound :math:`\sum_{a<b}\min(P_{ab}, P_{ba})`.
"""

from __future__ import annotations

import numpy as np

from scorebench.core.lazy import lazy_attr
from scorebench.core.errors import ConvergenceError, InputError
from scorebench.core.stats import rng_from_seed
from scorebench.core.validation import check_choice
from scorebench.aggregate.condorcet import pairwise
from scorebench.aggregate.input import Battles, ScoreMatrix
from scorebench.aggregate.profile import condorcet_winner
from scorebench.aggregate.registry import MethodResult, register_method

LinearConstraint, milp = lazy_attr("scipy.optimize", "LinearConstraint"), lazy_attr("scipy.optimize", "milp")
csr_matrix = lazy_attr("scipy.sparse", "csr_matrix")
connected_components = lazy_attr("scipy.sparse.csgraph", "connected_components")

__all__ = ["kemeny", "kemeny_cost", "kemeny_dp", "kemeny_milp", "kemeny_heuristic", "KEMENY_SOLVERS"]

KEMENY_SOLVERS = ("auto", "dp", "milp", "heuristic")
_DP_LIMIT = 24


def kemeny_cost(P: np.ndarray, order: np.ndarray) -> float:
    """Total weight of ballots disagreeing with ``order`` (best first)."""
    Q = P[np.ix_(order, order)]
    return float(np.tril(Q, -1).sum())


def _popcount(N: int, n: int) -> np.ndarray:
    pop = np.zeros(N, dtype=np.int8)
    for b in range(n):
        pop[1 << b: 2 << b] = pop[: 1 << b] + 1
    return pop


def kemeny_dp(P: np.ndarray, *, tol: float | None = None, max_rankings: int = 1000) -> dict:
    """Exact Kemeny by dynamic programming over subsets.

    ``f(S) = min_{a in S} f(S - a) + sum_{b in S - a} P[a, b]`` builds the ranking from the
    top; every optimal ``a`` is kept, so the co-optimal rankings are the paths of a DAG,
    counted forwards and backwards to give each system's expected position.

    Returns a dict with ``cost``, ``n_optimal``, ``rankings`` (up to ``max_rankings``, as
    index arrays best first), ``expected_position`` (1 = top).
    """
    n = len(P)
    if n > _DP_LIMIT:
        raise InputError(f"kemeny dp: {n} candidates exceed the limit of {_DP_LIMIT} (2^n states)")
    if n == 1:
        return {"cost": 0.0, "n_optimal": 1.0, "rankings": [np.array([0])], "expected_position": np.ones(1)}
    tol = 1e-9 * max(1.0, float(np.abs(P).sum())) if tol is None else tol
    N = 1 << n
    pop = _popcount(N, n)
    order = np.argsort(pop, kind="stable").astype(np.int64)
    bounds = np.concatenate([[0], np.cumsum(np.bincount(pop, minlength=n + 1))])
    pos = np.empty(N, dtype=np.int64)
    for k in range(n + 1):
        layer = order[bounds[k]:bounds[k + 1]]
        pos[layer] = np.arange(len(layer))
    shifts = np.arange(n, dtype=np.int64)
    f = np.zeros(N)
    mask = np.zeros(N, dtype=np.int64)
    count_f = np.zeros(N)
    count_f[0] = 1.0
    prev_cost = np.zeros((1, n))  # for T = {} : sum over empty set
    for k in range(1, n + 1):
        S = order[bounds[k]:bounds[k + 1]]
        bits = ((S[:, None] >> shifts[None, :]) & 1).astype(bool)
        rows, cols = np.nonzero(bits)  # k entries per row, row-major
        T = S[rows] ^ (np.int64(1) << cols)
        val = (f[T] + prev_cost[pos[T], cols]).reshape(len(S), k)
        best = val.min(axis=1)
        f[S] = best
        opt = val <= best[:, None] + tol
        a_idx = cols.reshape(len(S), k)
        mask[S] = np.where(opt, np.int64(1) << a_idx, 0).sum(axis=1)
        count_f[S] = np.where(opt, count_f[T].reshape(len(S), k), 0.0).sum(axis=1)
        if k < n:
            prev_cost = bits.astype(np.float64) @ P.T  # [s, a] = sum_{b in S} P[a, b]
    full = N - 1
    # Backward counts: number of optimal completions from S to the full set.
    count_b = np.zeros(N)
    count_b[full] = 1.0
    expected = np.zeros(n)
    total = count_f[full]
    for k in range(n, 0, -1):
        S = order[bounds[k]:bounds[k + 1]]
        m = mask[S]
        sel = ((m[:, None] >> shifts[None, :]) & 1).astype(bool)
        rows, cols = np.nonzero(sel)
        s_rows = S[rows]
        T = s_rows ^ (np.int64(1) << cols)
        ways = count_f[T] * count_b[s_rows]
        expected += k * np.bincount(cols, weights=ways, minlength=n)
        below = order[bounds[k - 1]:bounds[k]]
        count_b[below] += np.bincount(pos[T], weights=count_b[s_rows], minlength=len(below))
    expected /= total
    rankings: list[np.ndarray] = []
    _enumerate(mask, full, [], rankings, max_rankings)
    return {"cost": float(f[full]), "n_optimal": float(total), "rankings": rankings,
            "expected_position": expected}


def _enumerate(mask: np.ndarray, S: int, suffix: list[int], out: list[np.ndarray], limit: int) -> None:
    stack = [(S, suffix)]
    while stack and len(out) < limit:
        S, suffix = stack.pop()
        if S == 0:
            out.append(np.array(suffix[::-1], dtype=np.int64))
            continue
        m = int(mask[S])
        choices = [a for a in range(m.bit_length()) if (m >> a) & 1]
        for a in reversed(choices):
            stack.append((S ^ (1 << a), suffix + [a]))


def _triangle_constraints(n: int) -> LinearConstraint:
    idx = -np.ones((n, n), dtype=np.int64)
    iu, ju = np.triu_indices(n, 1)
    idx[iu, ju] = np.arange(len(iu))
    i, j, k = (t.ravel() for t in np.meshgrid(np.arange(n), np.arange(n), np.arange(n), indexing="ij"))
    keep = (i < j) & (j < k)
    i, j, k = i[keep], j[keep], k[keep]
    m = len(i)
    rows = np.repeat(np.arange(m), 3)
    cols = np.stack([idx[i, j], idx[j, k], idx[i, k]], axis=1).ravel()
    vals = np.tile([1.0, 1.0, -1.0], m)
    A = csr_matrix((vals, (rows, cols)), shape=(m, len(iu)))
    return LinearConstraint(A, 0.0, 1.0)


def _order_from_x(x: np.ndarray, n: int) -> np.ndarray:
    above = np.zeros((n, n))
    iu, ju = np.triu_indices(n, 1)
    xr = np.round(x)
    above[iu, ju] = xr
    above[ju, iu] = 1.0 - xr
    return np.argsort(-above.sum(axis=1), kind="stable")


def kemeny_milp(P: np.ndarray, *, all_optimal: bool = False, max_rankings: int = 1000,
                time_limit: float | None = None) -> dict:
    """Exact Kemeny by integer programming (HiGHS): order variables and 3-cycle constraints.

    Variables :math:`x_{ab} \\in \\{0, 1\\}` (``a < b``) mean "a above b"; minimise
    :math:`\\sum_{a<b} x_{ab} P_{ba} + (1 - x_{ab}) P_{ab}` subject to
    :math:`0 \\le x_{ab} + x_{bc} - x_{ac} \\le 1` for every triple ``a < b < c``.
    """
    n = len(P)
    if n == 1:
        return {"cost": 0.0, "n_optimal": 1.0, "rankings": [np.array([0])], "expected_position": np.ones(1)}
    iu, ju = np.triu_indices(n, 1)
    c = P[ju, iu] - P[iu, ju]
    const = float(P[iu, ju].sum())
    constraints = [_triangle_constraints(n)] if n >= 3 else []
    options = {"time_limit": time_limit} if time_limit else {}
    integrality = np.ones(len(c))
    res = milp(c, integrality=integrality, bounds=(0, 1), constraints=constraints, options=options)
    if res.x is None or res.status not in (0, 1):
        raise ConvergenceError(f"kemeny milp: HiGHS found no ranking ({res.message})")
    rankings = [_order_from_x(res.x, n)]
    if res.status == 1:  # time limit: the best ranking found, with HiGHS' dual bound as the gap
        order = rankings[0]
        positions = np.empty(n)
        positions[order] = np.arange(1, n + 1)
        cost = kemeny_cost(P, order)
        bound = getattr(res, "mip_dual_bound", None)
        lower = float(bound + const) if bound is not None and np.isfinite(bound) else float(
            np.minimum(P[iu, ju], P[ju, iu]).sum())
        return {"cost": cost, "n_optimal": float("nan"), "rankings": rankings, "expected_position": positions,
                "lower_bound": min(lower, cost), "gap": max(0.0, cost - lower), "timed_out": True}
    best = float(res.fun + const)
    tol = 1e-9 * max(1.0, float(np.abs(P).sum()))
    if all_optimal:
        cuts = list(constraints)
        xs = [np.round(res.x)]
        cuts.append(LinearConstraint(c[None, :], -np.inf, best - const + tol))
        while len(rankings) < max_rankings:
            x = xs[-1]
            cuts.append(LinearConstraint((2 * x - 1)[None, :], -np.inf, x.sum() - 1))
            r = milp(c, integrality=integrality, bounds=(0, 1), constraints=cuts, options=options)
            if r.status != 0 or r.x is None:
                break
            xs.append(np.round(r.x))
            rankings.append(_order_from_x(r.x, n))
    positions = np.zeros(n)
    for order in rankings:
        positions[order] += np.arange(1, n + 1)
    return {"cost": best, "n_optimal": float(len(rankings)) if all_optimal else float("nan"),
            "rankings": rankings, "expected_position": positions / len(rankings)}


def _insertion_search(P: np.ndarray, order: np.ndarray, max_passes: int = 1000) -> np.ndarray:
    order = order.copy()
    n = len(order)
    for _ in range(max_passes):
        improved = False
        for e in list(order):
            i = int(np.flatnonzero(order == e)[0])
            r = P[e, order] - P[order, e]  # change when e moves from above k to below k is -r_k ... see below
            # moving e left over k (k above e): change = P[e, k] ... expressed with r: -(-r_k) = r_k? no:
            # k above e costs P[e, k]; e above k costs P[k, e]; change = P[k, e] - P[e, k] = -r_k.
            left = np.zeros(n)
            if i > 0:
                seg = -r[:i]
                left[:i] = np.cumsum(seg[::-1])[::-1]
            # moving e right over k (e above k): change = P[e, k] - P[k, e] = r_k.
            right = np.zeros(n)
            if i < n - 1:
                right[i + 1:] = np.cumsum(r[i + 1:])
            delta = left + right
            j = int(np.argmin(delta))
            if delta[j] < -1e-12 * max(1.0, abs(delta).max()):
                order = np.insert(np.delete(order, i), j, e)
                improved = True
        if not improved:
            break
    return order


def _kwiksort(P: np.ndarray, items: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    if len(items) <= 1:
        return items
    p = items[rng.integers(len(items))]
    rest = items[items != p]
    above = P[rest, p] > P[p, rest]
    tie = P[rest, p] == P[p, rest]
    coin = rng.random(len(rest)) < 0.5
    go_up = above | (tie & coin)
    return np.concatenate([_kwiksort(P, rest[go_up], rng), [p], _kwiksort(P, rest[~go_up], rng)])


def kemeny_heuristic(P: np.ndarray, *, restarts: int = 10, seed: int = 0) -> dict:
    """Borda seed and ``restarts`` KwikSort orders, each refined by insertion local search.

    Returns the best order with its cost, the lower bound ``sum_{a<b} min(P_ab, P_ba)`` and the gap.
    """
    n = len(P)
    rng = rng_from_seed(seed)
    starts = [np.argsort(-(P.sum(axis=1) - P.sum(axis=0)), kind="stable")]
    starts += [_kwiksort(P, np.arange(n), rng) for _ in range(restarts)]
    best, best_cost = None, np.inf
    for s in starts:
        o = _insertion_search(P, s)
        c = kemeny_cost(P, o)
        if c < best_cost - 1e-12:
            best, best_cost = o, c
    iu, ju = np.triu_indices(n, 1)
    lower = float(np.minimum(P[iu, ju], P[ju, iu]).sum())
    positions = np.empty(n)
    positions[best] = np.arange(1, n + 1)
    return {"cost": best_cost, "lower_bound": lower, "gap": best_cost - lower, "rankings": [best],
            "n_optimal": float("nan"), "expected_position": positions}


def _components(P: np.ndarray) -> list[np.ndarray]:
    """Strong components of the weak-majority graph, best first."""
    weak = (P >= P.T)
    np.fill_diagonal(weak, False)
    n_comp, label = connected_components(csr_matrix(weak), directed=True, connection="strong")
    strict = P > P.T
    comps = [np.flatnonzero(label == c) for c in range(n_comp)]
    beaten = [int(strict[np.ix_(c, np.setdiff1d(np.arange(len(P)), c))].all(axis=0).sum()) for c in comps]
    return [comps[i] for i in np.argsort(-np.array(beaten), kind="stable")]


def _solve_component(sub: np.ndarray, solver: str, *, dp_max: int, milp_max: int, all_optimal: bool,
                     max_rankings: int, restarts: int, seed: int,
                     time_limit: float | None) -> tuple[str, dict, float | None]:
    """Solve one strongly connected component: the solver used, its answer, and the lower
    bound when the answer is heuristic (``None`` when it is optimal)."""
    size = len(sub)
    use = solver
    if solver == "auto":
        use = "dp" if size <= dp_max else ("milp" if size <= milp_max else "heuristic")
    if use == "heuristic":
        out = kemeny_heuristic(sub, restarts=restarts, seed=seed)
        return use, out, out["lower_bound"]
    try:
        out = kemeny_dp(sub, max_rankings=max_rankings) if use == "dp" else \
            kemeny_milp(sub, all_optimal=all_optimal, max_rankings=max_rankings, time_limit=time_limit)
    except ConvergenceError:
        if time_limit is None:
            raise
        # No incumbent within the time limit: fall back to the heuristic and its bound.
        out = kemeny_heuristic(sub, restarts=restarts, seed=seed)
        out["timed_out"] = True
    if out.get("timed_out"):
        return "milp (time limit)", out, out["lower_bound"]
    return use, out, None


@register_method("kemeny", family="condorcet", accepts=("matrix", "battles"),
                 missing="pairwise: a column where either system is missing is skipped for that pair",
                 citation="Kemeny (1959), Daedalus 88; Young & Levenglick (1978), SIAM J. Appl. Math. 35(2); "
                          "Conitzer, Davenport & Kalagnanam (2006), AAAI")
def kemeny(data: ScoreMatrix | Battles, *, solver: str = "auto", dp_max: int = 14, milp_max: int = 80,
           all_optimal: bool = False, max_rankings: int = 1000, restarts: int = 10, seed: int = 0,
           time_limit: float | None = None) -> MethodResult:
    r"""Kemeny–Young: the ranking minimising the weighted pairwise disagreements with the columns.

    The score of a system is minus its expected position over the co-optimal rankings
    found (all of them with the DP solver, or with ``all_optimal=True``), so systems
    that swap places between optimal rankings tie. ``details["winners"]`` lists every
    system ranked first by some co-optimal ranking (pref_voting's convention), which can be
    larger than the top tie group of the expected-position ranking. ``details`` holds the objective, the
    co-optimal rankings (names, best first), their number, the solver per component and,
    for the heuristic, the lower bound and gap.

    Examples
    --------
    >>> import pandas as pd
    >>> from scorebench.aggregate.input import as_matrix
    >>> m = as_matrix(pd.DataFrame({"t1": [3, 2, 1], "t2": [1, 3, 2], "t3": [3, 1, 2]}, index=["a", "b", "c"]))
    >>> r = kemeny(m)
    >>> r.details["rankings"], r.details["objective"]
    ([('a', 'b', 'c')], 3.0)
    """
    check_choice(solver, "solver", KEMENY_SOLVERS)
    if not 1 <= dp_max <= _DP_LIMIT:
        raise InputError(f"kemeny: dp_max must be in [1, {_DP_LIMIT}], got {dp_max}")
    P, _ = pairwise(data, ties=False)
    n = len(P)
    comps = _components(P)
    position = np.zeros(n)
    offset = 0
    n_optimal = 1.0
    lower = 0.0
    within = 0.0
    exact = True
    solvers = []
    per_comp_rankings = []
    for comp in comps:
        sub = P[np.ix_(comp, comp)]
        use, out, bound = _solve_component(sub, solver, dp_max=dp_max, milp_max=milp_max, all_optimal=all_optimal,
                                           max_rankings=max_rankings, restarts=restarts, seed=seed,
                                           time_limit=time_limit)
        if bound is not None:  # a heuristic answer: exact only where its gap closes
            exact = exact and out["gap"] <= 1e-9 * max(1.0, float(np.abs(sub).sum()))
        lower += out["cost"] if bound is None else bound
        within += out["cost"]
        solvers.append((use, len(comp)))
        position[comp] = offset + out["expected_position"]
        offset += len(comp)
        n_optimal *= out["n_optimal"]
        per_comp_rankings.append([comp[r] for r in out["rankings"]])
    # Co-optimal rankings: the product of the components' lists (capped).
    rankings = [np.array([], dtype=np.int64)]
    for options in per_comp_rankings:
        rankings = [np.concatenate([r, o]) for r in rankings for o in options][:max_rankings]
    named = [tuple(data.systems[i] for i in r) for r in rankings]
    total_cost = kemeny_cost(P, rankings[0])
    lower += total_cost - within  # pairs across components cost their minority weight in any ranking
    firsts = {r[0] for r in named}
    details = {"objective": total_cost, "rankings": named, "n_optimal": n_optimal,
               "winners": tuple(s for s in data.systems if s in firsts),
               "solvers": solvers, "exact": exact, "lower_bound": lower, "gap": total_cost - lower}
    cw = condorcet_winner(P)
    details["condorcet_winner"] = None if cw is None else data.systems[cw]
    return MethodResult(0.0 - position, details)
