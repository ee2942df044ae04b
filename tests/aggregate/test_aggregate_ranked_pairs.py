"""Ranked pairs with equal margins: winners over all tie-breaking orders (issue 13, item 3)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorebench.aggregate import aggregate
from scorebench.aggregate.condorcet import _ranked_pairs_scores
from scorebench.aggregate.input import as_matrix
from scorebench.aggregate.profile import pairwise_counts
from scorebench.aggregate.ranked_pairs_search import margin_groups, ranked_pairs_tb, ranked_pairs_winners
from scorebench.core.errors import InputError

pv = pytest.importorskip("pref_voting")
from pref_voting.margin_based_methods import ranked_pairs as pv_ranked_pairs  # noqa: E402
from pref_voting.margin_based_methods import ranked_pairs_tb as pv_ranked_pairs_tb  # noqa: E402
from pref_voting.weighted_majority_graphs import MarginGraph  # noqa: E402


def table_from(rankings, counts=None) -> pd.DataFrame:
    """Systems x voters score table from linear orders (best first), one column per ballot copy."""
    counts = counts or [1] * len(rankings)
    cols = [r for r, k in zip(rankings, counts) for _ in range(k)]
    n = len(rankings[0])
    scores = np.empty((n, len(cols)))
    for j, r in enumerate(cols):
        scores[list(r), j] = np.arange(n, 0, -1)
    return pd.DataFrame(scores, index=[f"s{i}" for i in range(n)])


def margins_of(rng, n, v):
    P = np.zeros((n, n))
    for _ in range(v):
        pos = np.empty(n, int)
        pos[rng.permutation(n)] = np.arange(n)
        P += pos[:, None] < pos[None, :]
    return P - P.T


def margin_graph(M):
    n = len(M)
    return MarginGraph(list(range(n)), [(a, b, int(M[a, b])) for a in range(n) for b in range(n) if M[a, b] > 0])


def test_issue_13_profile():
    # Candidate 1 loses to 2 and 3 and wins under no tie-breaking order; the old batch rule said {1, 2, 3}.
    t = table_from([[3, 1, 0, 2], [0, 2, 3, 1], [1, 0, 3, 2], [2, 3, 1, 0], [2, 1, 3, 0]], [3, 2, 3, 3, 3])
    r = aggregate(t, "ranked_pairs", n_boot=0)
    assert set(r.winners) == {"s2", "s3"}
    P, _ = pairwise_counts(as_matrix(t), ties=False)
    assert set(pv_ranked_pairs(margin_graph(P - P.T))) == {2, 3}
    assert r.details["n_states"] > 0  # the winners depend on the tie-breaking order
    assert r.scores[1] < 0


def test_three_cycle_all_win_and_scores():
    t = table_from([[0, 1, 2], [1, 2, 0], [2, 0, 1]])
    r = aggregate(t, "ranked_pairs", n_boot=0)
    assert set(r.winners) == {"s0", "s1", "s2"}
    assert r.scores.tolist() == [0.0, 0.0, 0.0]


def small_tie_structure(M) -> bool:
    """pref_voting enumerates every tie-breaking order (zero margins count as edges both ways)."""
    n = len(M)
    zeros = int(((M == 0).sum() - n) // 2)
    sizes = [len(g) for g in margin_groups(M)] + [2 * zeros]
    return math.prod(math.factorial(k) for k in sizes) <= 2000


@given(st.integers(0, 2**31 - 1), st.integers(2, 6), st.integers(1, 8))
@settings(max_examples=120, deadline=None)
def test_winners_match_pref_voting(seed, n, v):
    M = margins_of(np.random.default_rng(seed), n, v)
    if not small_tie_structure(M):
        return
    w, _ = ranked_pairs_winners(M)
    assert set(np.flatnonzero(w).tolist()) == set(pv_ranked_pairs(margin_graph(M)))


@pytest.mark.parametrize("seed", range(40))
def test_winners_match_pref_voting_even_voters(seed):
    # Even numbers of voters give zero margins and many equal margins.
    rng = np.random.default_rng(seed)
    while True:
        n, v = int(rng.integers(3, 7)), int(rng.choice([2, 4, 6]))
        M = margins_of(rng, n, v)
        if small_tie_structure(M):
            break
    w, _ = ranked_pairs_winners(M)
    assert set(np.flatnonzero(w).tolist()) == set(pv_ranked_pairs(margin_graph(M)))


@pytest.mark.parametrize("seed", range(20))
def test_tie_break_order_matches_pref_voting_tb(seed):
    rng = np.random.default_rng(1000 + seed)
    n, v = int(rng.integers(3, 7)), int(rng.choice([3, 5, 7]))  # odd: no zero margins, a linear order
    M = margins_of(rng, n, v)
    closure = ranked_pairs_tb(M)
    top = np.flatnonzero(closure.sum(axis=0) == 1).tolist()
    assert top == pv_ranked_pairs_tb(margin_graph(M))


def test_scores_without_ties_are_tideman_order():
    # Distinct margins: the single locked order; scores are minus the position.
    rng = np.random.default_rng(7)
    while True:
        n = 5
        rankings = [list(rng.permutation(n)) for _ in range(9)]
        weights = rng.integers(1, 60, size=9)
        t = table_from(rankings)
        r = aggregate(t, "ranked_pairs", n_boot=0, weights=list(weights))
        P, _ = pairwise_counts(as_matrix(t, weights=list(weights)), ties=False)
        M = P - P.T
        if all(len(g) == 1 for g in margin_groups(M)) and (M[~np.eye(n, dtype=bool)] != 0).all():
            break
    closure = ranked_pairs_tb(M)
    assert sorted(r.scores.tolist()) == [-4.0, -3.0, -2.0, -1.0, 0.0]
    np.testing.assert_array_equal(r.scores, 1.0 - closure.sum(axis=0))
    assert r.details["n_states"] == 0


def test_winners_lead_the_ranking_and_rest_follow_tb_order():
    rng = np.random.default_rng(3)
    for _ in range(30):
        n, v = int(rng.integers(3, 8)), int(rng.choice([2, 3, 4]))
        M = margins_of(rng, n, v)
        w, _ = ranked_pairs_winners(M)
        scores, _ = _ranked_pairs_scores(M, 10_000)
        assert set(np.flatnonzero(scores == 0).tolist()) == set(np.flatnonzero(w).tolist())
        assert (scores[~w] <= -1).all()
        # Below the winners, a system locked above another in the tie-broken run scores higher.
        closure = ranked_pairs_tb(M)
        for a, b in zip(*np.nonzero(closure)):
            if a != b and not w[a] and not w[b]:
                assert scores[a] > scores[b]


def test_state_cap_is_a_clear_error():
    M = margins_of(np.random.default_rng(0), 20, 3)
    with pytest.raises(InputError, match="max_states"):
        ranked_pairs_winners(M, max_states=2)
    t = pd.DataFrame(np.random.default_rng(0).permutation(20 * 3).reshape(20, 3).astype(float))
    with pytest.raises(InputError, match="max_states"):
        aggregate(t, "ranked_pairs", n_boot=0, max_states=0)


def test_float_weights_that_tie_are_one_group():
    M = np.array([[0.0, 0.1 + 0.2, 0.0], [-(0.1 + 0.2), 0.0, 0.3], [0.0, -0.3, 0.0]])
    assert margin_groups(M) == [[(0, 1), (1, 2)]]
