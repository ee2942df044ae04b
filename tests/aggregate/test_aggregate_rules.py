"""Social-choice rules: exact toy values, pref_voting on random profiles, and properties."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorebench.aggregate import aggregate, as_matrix, get_method
from scorebench.aggregate.kemeny import kemeny_cost, kemeny_dp, kemeny_heuristic, kemeny_milp
from scorebench.aggregate.profile import pairwise_counts
from scorebench.core.errors import InputError

pv = pytest.importorskip("pref_voting")
from pref_voting import c1_methods, margin_based_methods  # noqa: E402
from pref_voting.profiles_with_ties import ProfileWithTies  # noqa: E402

# pref_voting's numba-compiled ``Profile`` costs ~30 s of JIT on first use; ``ProfileWithTies``
# is pure Python and gives the same answers on linear orders, so the tests use it.


def Profile(rankings, rcounts=None):  # noqa: N802  (mirrors pref_voting's constructor)
    ballots = [{int(c): i for i, c in enumerate(r)} for r in rankings]
    return ProfileWithTies(ballots, rcounts=rcounts)


def elimination_winners(rankings, weights, rule):
    """Textbook Baldwin / Nanson (strict) on linear orders: eliminate on Borda scores of those left."""
    alive = set(range(len(rankings[0])))
    while True:
        scores = {c: 0.0 for c in alive}
        for r, w in zip(rankings, weights):
            order = [c for c in r if c in alive]
            for pos, c in enumerate(order):
                scores[c] += w * (len(order) - 1 - pos)
        values = list(scores.values())
        if max(values) == min(values):
            return alive
        if rule == "baldwin":
            out = {c for c in alive if scores[c] == min(values)}
        else:
            mean = sum(values) / len(values)
            out = {c for c in alive if scores[c] < mean}
        alive -= out

CONDORCET_RULES = ["copeland", "minimax", "schulze", "ranked_pairs", "baldwin", "nanson", "black", "kemeny"]


def random_profile(rng: np.random.Generator, n_cands: int, n_voters: int) -> tuple[list[list[int]], pd.DataFrame]:
    """Linear orders (best first) and the equivalent systems x tasks score table."""
    rankings = [list(rng.permutation(n_cands)) for _ in range(n_voters)]
    scores = np.empty((n_cands, n_voters))
    for j, r in enumerate(rankings):
        scores[r, j] = np.arange(n_cands, 0, -1)
    table = pd.DataFrame(scores, index=[f"s{i}" for i in range(n_cands)],
                         columns=[f"t{j}" for j in range(n_voters)])
    return rankings, table


def winners(table: pd.DataFrame, method: str, **params) -> set[int]:
    r = aggregate(table, method, n_boot=0, **params)
    return {int(s[1:]) for s in r.winners}


TOY = pd.DataFrame({"t1": [3, 2, 1], "t2": [1, 3, 2], "t3": [3, 1, 2]}, index=["a", "b", "c"])


def test_toy_values():
    assert aggregate(TOY, "borda", n_boot=0).scores.tolist() == [4.0, 3.0, 2.0]
    assert aggregate(TOY, "plurality", n_boot=0).scores.tolist() == [2.0, 1.0, 0.0]
    assert aggregate(TOY, "copeland", n_boot=0).scores.tolist() == [2.0, 0.0, -2.0]
    assert aggregate(TOY, "minimax", n_boot=0).scores.tolist() == [1.0, -1.0, -1.0]
    np.testing.assert_allclose(aggregate(TOY, "dowdall", n_boot=0).scores, [1 + 1 / 3 + 1, 0.5 + 1 + 1 / 3, 1 / 3 + 0.5 + 0.5])
    np.testing.assert_allclose(aggregate(TOY, "mean", n_boot=0).scores, [7 / 3, 2.0, 5 / 3])
    k = aggregate(TOY, "kemeny", n_boot=0)
    assert k.details["rankings"] == [("a", "b", "c")] and k.details["objective"] == 3.0
    assert k.details["condorcet_winner"] == "a"


def test_ties_are_explicit():
    t = pd.DataFrame({"t1": [2, 1], "t2": [1, 2]}, index=["x", "y"])
    for method in ["borda", "copeland", "kemeny", "mean", "schulze", "ranked_pairs", "baldwin", "nanson"]:
        r = aggregate(t, method, n_boot=0)
        assert r.ranks.tolist() == [1, 1], method
        assert r.tie_groups == (("x", "y"),), method
    k = aggregate(t, "kemeny", n_boot=0)
    assert k.details["n_optimal"] == 2.0 and set(k.details["rankings"]) == {("x", "y"), ("y", "x")}


def test_borda_tie_conventions():
    t = pd.DataFrame({"t1": [2, 2, 1]}, index=list("abc"))
    assert aggregate(t, "borda", n_boot=0).scores.tolist() == [1.5, 1.5, 0.0]
    assert aggregate(t, "borda", n_boot=0, ties="min").scores.tolist() == [1.0, 1.0, 0.0]
    assert aggregate(t, "borda", n_boot=0, ties="max").scores.tolist() == [2.0, 2.0, 0.0]
    assert aggregate(t, "plurality", n_boot=0).scores.tolist() == [0.5, 0.5, 0.0]
    assert aggregate(t, "plurality", n_boot=0, ties="none").scores.tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("seed", range(12))
def test_against_pref_voting_random_profiles(seed):
    rng = np.random.default_rng(seed)
    n_c, n_v = int(rng.integers(3, 7)), int(rng.integers(3, 12))
    rankings, table = random_profile(rng, n_c, n_v)
    prof = Profile(rankings)
    # Scores where pref_voting exposes them.
    borda = aggregate(table, "borda", n_boot=0).scores
    # ProfileWithTies reports the symmetric Borda score (wins - losses) = 2 B - n_v (n_c - 1).
    np.testing.assert_allclose(2 * borda - n_v * (n_c - 1), [prof.borda_scores()[c] for c in range(n_c)])
    plur = aggregate(table, "plurality", n_boot=0).scores
    np.testing.assert_allclose(plur, [prof.plurality_scores()[c] for c in range(n_c)])
    cop = aggregate(table, "copeland", n_boot=0).scores
    np.testing.assert_allclose(cop, [prof.copeland_scores()[c] for c in range(n_c)])
    mm = aggregate(table, "minimax", n_boot=0).scores
    ref_mm = margin_based_methods.minimax_scores(prof)
    # pref_voting clips the score at 0 (no defeat); ours keeps the smallest win, so the
    # Condorcet winner is strictly ahead of a system that only ties.
    np.testing.assert_allclose(np.minimum(mm, 0.0), [ref_mm[c] for c in range(n_c)])
    P, _ = pairwise_counts(as_matrix(table))
    np.testing.assert_allclose(P - P.T, [[prof.margin(a, b) for b in range(n_c)] for a in range(n_c)])
    # Winner sets.
    assert winners(table, "copeland") == set(c1_methods.copeland(prof))
    assert winners(table, "minimax") == set(margin_based_methods.minimax(prof))
    assert winners(table, "schulze") == set(margin_based_methods.beat_path(prof))
    ones = [1.0] * n_v
    assert winners(table, "baldwin") == elimination_winners(rankings, ones, "baldwin")
    assert winners(table, "nanson") == elimination_winners(rankings, ones, "nanson")
    # Kemeny: pref_voting's kemeny_young is brute force over permutations and needs the
    # numba Profile; the same brute force is done here directly.
    kem = aggregate(table, "kemeny", n_boot=0)
    perms = list(itertools.permutations(range(n_c)))
    costs = np.array([kemeny_cost(P, np.array(p)) for p in perms])
    ref_rankings = {p for p, c in zip(perms, costs) if c <= costs.min() + 1e-9}
    assert {tuple(int(s[1:]) for s in r) for r in kem.details["rankings"]} == ref_rankings
    assert {int(s[1:]) for s in kem.details["winners"]} == {r[0] for r in ref_rankings}
    assert set(kem.winners) <= set(kem.details["winners"])


@pytest.mark.parametrize("seed", range(8))
def test_ranked_pairs_against_pref_voting_without_tied_margins(seed):
    # pref_voting's ranked_pairs returns the winners over all tie-breakings of equal margins;
    # with distinct margins the rule is resolute and both must agree.
    rng = np.random.default_rng(100 + seed)
    n_c = int(rng.integers(3, 6))
    while True:
        rankings, table = random_profile(rng, n_c, 9)
        weights = rng.integers(1, 50, size=9)
        prof = Profile(rankings, rcounts=list(map(int, weights)))
        margins = np.array([prof.margin(a, b) for a, b in zip(*np.triu_indices(n_c, 1))])
        if len(set(np.abs(margins))) == len(margins) and (margins != 0).all():
            break
    ours = aggregate(table, "ranked_pairs", n_boot=0, weights=list(weights)).winners
    assert {int(s[1:]) for s in ours} == set(margin_based_methods.ranked_pairs(prof))


@given(st.integers(0, 10_000), st.integers(3, 6), st.integers(1, 9))
@settings(max_examples=25, deadline=None)
def test_condorcet_consistency(seed, n_c, n_v):
    rng = np.random.default_rng(seed)
    _, table = random_profile(rng, n_c, n_v)
    cw = aggregate(table, "copeland", n_boot=0).details["condorcet_winner"]
    if cw is None:
        return
    for method in CONDORCET_RULES:
        assert aggregate(table, method, n_boot=0).winners == (cw,), method


@given(st.integers(0, 10_000), st.integers(2, 6), st.integers(1, 7))
@settings(max_examples=12, deadline=None)
def test_invariances(seed, n_c, n_v):
    rng = np.random.default_rng(seed)
    _, table = random_profile(rng, n_c, n_v)
    scaled = table * 3.0 + 7.0  # monotone transform of each column
    flipped = -table
    for method in ["borda", "copeland", "schulze", "kemeny", "plurality", "dowdall", "threshold", "win_rate",
                   "baldwin", "nanson"]:
        base = aggregate(table, method, n_boot=0).ranks
        assert aggregate(scaled, method, n_boot=0).ranks.tolist() == base.tolist(), method
        assert aggregate(flipped, method, n_boot=0, higher_is_better=False).ranks.tolist() == base.tolist(), method
    # Doubling every weight changes nothing; duplicating a column equals weight 2.
    w = rng.integers(1, 4, size=n_v)
    a = aggregate(table, "borda", n_boot=0, weights=list(w)).scores
    dup = pd.concat([table[c] for c, k in zip(table.columns, w) for _ in range(k)], axis=1)
    dup.columns = range(dup.shape[1])
    np.testing.assert_allclose(a, aggregate(dup, "borda", n_boot=0).scores)
    # Borda reversal symmetry: reversing every ballot reverses the Borda scores.
    b = aggregate(table, "borda", n_boot=0).scores
    np.testing.assert_allclose(aggregate(-table, "borda", n_boot=0).scores, n_v * (n_c - 1) - b)


@pytest.mark.parametrize("n", [3, 5, 6, 7])
def test_kemeny_solvers_agree_with_brute_force(n):
    rng = np.random.default_rng(n)
    P = rng.integers(0, 5, size=(n, n)).astype(float)
    np.fill_diagonal(P, 0)
    perms = list(itertools.permutations(range(n)))
    costs = np.array([kemeny_cost(P, np.array(p)) for p in perms])
    best = costs.min()
    optimal = [p for p, c in zip(perms, costs) if abs(c - best) < 1e-9]
    dp = kemeny_dp(P)
    assert dp["cost"] == pytest.approx(best) and dp["n_optimal"] == len(optimal)
    assert {tuple(r) for r in dp["rankings"]} == set(optimal)
    expected = np.zeros(n)
    for p in optimal:
        expected[list(p)] += np.arange(1, n + 1)
    np.testing.assert_allclose(dp["expected_position"], expected / len(optimal))
    ml = kemeny_milp(P, all_optimal=True)
    assert ml["cost"] == pytest.approx(best) and ml["n_optimal"] == len(optimal)
    h = kemeny_heuristic(P)
    assert h["cost"] >= best - 1e-9 and h["lower_bound"] <= best + 1e-9


def test_kemeny_decomposition_and_solver_choice():
    rng = np.random.default_rng(3)
    _, table = random_profile(rng, 18, 7)
    m = as_matrix(table)
    auto = get_method("kemeny").fn(m)
    milp = get_method("kemeny").fn(m, solver="milp")
    assert auto.details["objective"] == pytest.approx(milp.details["objective"])
    assert auto.details["exact"] and auto.details["gap"] == pytest.approx(0.0)
    heur = get_method("kemeny").fn(m, solver="heuristic")
    assert heur.details["objective"] >= auto.details["objective"] - 1e-9
    assert heur.details["gap"] >= -1e-9
    # Strict-majority blocks are solved separately: a dominant block stays on top.
    sizes = [s for _, s in auto.details["solvers"]]
    assert sum(sizes) == 18


def test_missing_value_policies():
    t = pd.DataFrame({"t1": [3.0, 2.0, np.nan], "t2": [1.0, 3.0, 2.0], "t3": [3.0, 1.0, 2.0]}, index=list("abc"))
    for method in ["plurality", "dowdall", "threshold", "borda"]:
        with pytest.raises(InputError, match="missing"):
            aggregate(t, method, n_boot=0)
    with pytest.raises(InputError, match="missing='available'"):
        aggregate(t, "mean", n_boot=0)
    np.testing.assert_allclose(aggregate(t, "mean", n_boot=0, missing="available").scores, [7 / 3, 2.0, 2.0])
    # Completion: c, unobserved on t1, expects (n - 1) / 2 = 1 point there.
    b = aggregate(t, "borda", n_boot=0, missing="complete").scores
    # a: 1 beaten among 2 observed on t1 -> 1 + 1 * (1 + 1) / 3; b: 0 + 1 * 1 / 3.
    np.testing.assert_allclose(b, [1 + 2 / 3 + 0 + 2, 1 / 3 + 2 + 0, 1 + 1 + 1])
    # Pairwise rules skip the missing pair: a-c only compared on t2, t3.
    P, _ = pairwise_counts(as_matrix(t))
    assert P[0, 2] + P[2, 0] == 2.0
    for method in ["copeland", "schulze", "kemeny", "ranked_pairs", "win_rate", "median"]:
        aggregate(t, method, n_boot=0)


def test_threshold_and_approval():
    t = pd.DataFrame({"t1": [3, 2, 1], "t2": [1, 3, 2], "t3": [3, 1, 2]}, index=list("abc"))
    assert aggregate(t, "threshold", n_boot=0).winners == ("a",)
    assert aggregate(t, "threshold", n_boot=0, k=2).scores.tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(InputError, match="k must be"):
        aggregate(t, "threshold", n_boot=0, k=0)


def test_normalised_means():
    t = pd.DataFrame({"acc": [0.9, 0.8, 0.7], "loss": [2.0, 1.0, 4.0]}, index=list("abc"))
    hib = {"loss": False}
    mm = aggregate(t, "mean", n_boot=0, higher_is_better=hib, normalize="minmax").scores
    np.testing.assert_allclose(mm, [(1 + 2 / 3) / 2, (0.5 + 1) / 2, 0.0])
    z = aggregate(t, "mean", n_boot=0, higher_is_better=hib, normalize="zscore").scores
    assert abs(z.sum()) < 1e-12
    ref = aggregate(t, "mean", n_boot=0, higher_is_better=hib, normalize="reference", reference="b").scores
    np.testing.assert_allclose(ref, [(0.9 / 0.8 + 1 / 2) / 2, 1.0, (0.7 / 0.8 + 1 / 4) / 2])
    g = aggregate(t, "geometric_mean", n_boot=0, higher_is_better=hib).scores
    np.testing.assert_allclose(g, np.sqrt([0.9 / 2.0, 0.8 / 1.0, 0.7 / 4.0]))
    med = aggregate(pd.DataFrame({"x": [1.0, 5.0], "y": [3.0, 1.0], "z": [2.0, 9.0]}, index=["a", "b"]),
                    "median", n_boot=0).scores
    assert med.tolist() == [2.0, 5.0]
    with pytest.raises(InputError, match="reference"):
        aggregate(t, "mean", n_boot=0, normalize="reference")
    with pytest.raises(InputError, match="non-negative"):
        aggregate(t - 1.0, "geometric_mean", n_boot=0)
    with pytest.raises(InputError, match="lower-is-better"):
        aggregate(t.assign(loss=[2.0, 0.0, 4.0]), "geometric_mean", n_boot=0, higher_is_better=hib)
    zero = aggregate(t.assign(acc=[0.9, 0.0, 0.7]), "geometric_mean", n_boot=0, higher_is_better=hib).scores
    np.testing.assert_allclose(zero, [g[0], 0.0, g[2]])


def test_win_rate_helm_ties_half():
    t = pd.DataFrame({"s1": [1.0, 1.0, 0.0], "s2": [0.0, 1.0, 1.0]}, index=list("abc"))
    # s1: a ties b, beats c -> 0.75 ; s2: a loses to both -> 0 ; mean 0.375.
    np.testing.assert_allclose(aggregate(t, "win_rate", n_boot=0).scores, [0.375, 0.75, 0.375])


def test_unknown_method_and_params():
    with pytest.raises(InputError, match="did you mean 'borda'"):
        aggregate(TOY, "bordaa")
    with pytest.raises(InputError, match="unknown parameter"):
        aggregate(TOY, "borda", n_boot=0, tie="min")
    with pytest.raises(InputError, match="ties"):
        aggregate(TOY, "borda", n_boot=0, ties="random")


def test_kemeny_milp_time_limit_reports_a_gap():
    rng = np.random.default_rng(11)
    _, table = random_profile(rng, 45, 9)
    r = aggregate(table, "kemeny", n_boot=0, time_limit=0.05)
    d = r.details
    assert d["objective"] >= d["lower_bound"] - 1e-9 and d["gap"] == pytest.approx(d["objective"] - d["lower_bound"])
    assert d["exact"] == (d["gap"] <= 1e-6) or any(s == "milp" for s, _ in d["solvers"])
    assert sorted(sum((list(rk) for rk in d["rankings"][:1]), [])) == sorted(table.index)
