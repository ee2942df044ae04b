"""Pairwise ratings: Bradley-Terry and Plackett-Luce against choix, Elo, bootstrap, intransitivity."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scorebench.aggregate import aggregate, as_battles, difficulty_rating, get_method, intransitivity
from scorebench.aggregate.pairwise import bt_fit, bt_loglik, to_elo_scale
from scorebench.core.errors import InputError

choix = pytest.importorskip("choix")


def simulate_battles(rng, n, n_battles, tie_rate=0.0):
    strength = np.linspace(-1.5, 1.5, n)
    a = rng.integers(n, size=n_battles)
    b = (a + rng.integers(1, n, size=n_battles)) % n
    p = 1 / (1 + np.exp(-(strength[a] - strength[b])))
    u = rng.random(n_battles)
    tie = rng.random(n_battles) < tie_rate
    winner = np.where(tie, "tie", np.where(u < p, "a", "b"))
    names = np.array([f"m{i:02d}" for i in range(n)])
    return pd.DataFrame({"a": names[a], "b": names[b], "winner": winner})


@pytest.mark.parametrize("seed", range(4))
def test_bradley_terry_matches_choix(seed):
    rng = np.random.default_rng(seed)
    df = simulate_battles(rng, 6, 400)
    battles = as_battles(df)
    W = battles.wins()
    ours = bt_fit(W)
    data = [(int(w), int(l)) for w, l in zip(np.where(battles.outcome == 1, battles.a, battles.b),
                                            np.where(battles.outcome == 1, battles.b, battles.a))]
    ref = choix.ilsr_pairwise(6, data, alpha=0.0, tol=1e-12)
    np.testing.assert_allclose(ours, ref - ref.mean(), atol=1e-7)
    # Regularised: choix's opt_pairwise penalises alpha * ||theta||^2 (its docstring says a prior
    # of variance 1/alpha, but the code has no 1/2), so choix's alpha is our prior / 2.
    ours_map = bt_fit(W, prior=1.0)
    ref_map = choix.opt_pairwise(6, data, alpha=0.5, tol=1e-12)
    np.testing.assert_allclose(ours_map, ref_map, atol=1e-6)
    r = aggregate(df, "bradley_terry", n_boot=0)
    np.testing.assert_allclose(r.scores, to_elo_scale(ours))
    assert r.details["loglik"] == pytest.approx(bt_loglik(W, ours))


def test_bradley_terry_ties_count_half():
    df = pd.DataFrame({"a": ["x", "x", "x", "x"], "b": ["y", "y", "y", "y"], "winner": ["a", "a", "b", "tie"]})
    th = bt_fit(as_battles(df).wins())
    # x: 2.5 wins, y: 1.5 wins -> theta_x - theta_y = log(2.5 / 1.5)
    assert th[0] - th[1] == pytest.approx(np.log(2.5 / 1.5))


def test_bradley_terry_requires_connectivity():
    df = pd.DataFrame({"a": ["x", "x", "y"], "b": ["y", "z", "z"], "winner": ["a", "a", "a"]})
    with pytest.raises(InputError, match="prior"):
        aggregate(df, "bradley_terry", n_boot=0)
    r = aggregate(df, "bradley_terry", n_boot=0, prior=1.0)
    assert r.order == ("x", "y", "z")


@pytest.mark.parametrize("seed", range(3))
def test_plackett_luce_matches_choix(seed):
    rng = np.random.default_rng(seed)
    n, k = 6, 25
    quality = rng.normal(size=n)
    table = pd.DataFrame(quality[:, None] + rng.gumbel(size=(n, k)), index=[f"s{i}" for i in range(n)])
    rankings = [list(np.argsort(-table[c].to_numpy())) for c in table.columns]
    ref = choix.ilsr_rankings(n, rankings, alpha=0.0, tol=1e-12)
    r = aggregate(table, "plackett_luce", n_boot=0)
    np.testing.assert_allclose(r.details["theta"], ref - ref.mean(), atol=1e-6)


def test_plackett_luce_on_pairs_equals_bradley_terry():
    rng = np.random.default_rng(5)
    df = simulate_battles(rng, 5, 300)
    bt = aggregate(df, "bradley_terry", n_boot=0).scores
    pl = aggregate(df, "plackett_luce", n_boot=0).scores
    np.testing.assert_allclose(bt, pl, atol=1e-4)


def test_elo_is_online_and_order_dependent():
    df = pd.DataFrame({"a": ["x", "y"], "b": ["y", "x"], "winner": ["a", "a"]})
    r = aggregate(df, "elo", n_boot=0, k=32)
    # x beats y: +16 / -16; then y (984) beats x (1016): y gains 32 * (1 - E)
    e = 1 / (1 + 10 ** ((1016 - 984) / 400))
    np.testing.assert_allclose(r.scores, [1016 - 32 * (1 - e), 984 + 32 * (1 - e)])
    swapped = aggregate(df.iloc[::-1], "elo", n_boot=0, k=32)
    assert not np.allclose(swapped.scores, r.scores[::-1][::-1])
    assert r.details["order_dependent"]


def test_bootstrap_fast_path_matches_resampling_distribution():
    rng = np.random.default_rng(0)
    df = simulate_battles(rng, 5, 3000, tie_rate=0.1)
    fast = aggregate(df, "bradley_terry", n_boot=300, seed=1, intervals="bootstrap")
    again = aggregate(df, "bradley_terry", n_boot=300, seed=1, intervals="bootstrap")
    np.testing.assert_array_equal(fast.ci_low, again.ci_low)  # seeded
    battles = as_battles(df)
    method = get_method("bradley_terry")
    from scorebench.aggregate.uncertainty import bootstrap_scores

    slow_method = method.__class__(**{**method.__dict__, "bootstrap": None})
    slow, _ = bootstrap_scores(battles, slow_method, {}, 300, np.random.default_rng(2))
    width_fast = fast.ci_high - fast.ci_low
    width_slow = np.quantile(slow, 0.975, axis=0) - np.quantile(slow, 0.025, axis=0)
    np.testing.assert_allclose(width_fast, width_slow, rtol=0.25)
    np.testing.assert_allclose(fast.score_median, np.median(slow, axis=0), atol=0.3 * width_fast.max())


def test_arena_style_rank_upper_bound():
    rng = np.random.default_rng(1)
    df = simulate_battles(rng, 4, 4000)
    r = aggregate(df, "bradley_terry", n_boot=200, seed=0)
    frame = r.to_frame()
    for _, row in frame.iterrows():
        expected = 1 + int((frame["ci_low"] > row["ci_high"]).sum())
        assert row["rank_ub"] == expected
    assert list(frame["system"]) == ["m03", "m02", "m01", "m00"]
    assert (frame["rank_low"] <= frame["rank"]).all() and (frame["rank"] <= frame["rank_high"]).all()


def test_ratings_from_score_matrix_and_missing_pairs():
    t = pd.DataFrame({"t1": [3.0, 2.0, 1.0], "t2": [1.0, 3.0, np.nan], "t3": [3.0, 1.0, 2.0]}, index=list("abc"))
    r = aggregate(t, "bradley_terry", n_boot=0, prior=0.5)
    assert r.order[0] == "a"
    pl = aggregate(t, "plackett_luce", n_boot=0, prior=0.5)
    assert pl.order[0] == "a"


def test_intransitivity():
    rps = pd.DataFrame({"a": ["r", "p", "s"] * 20, "b": ["s", "r", "p"] * 20, "winner": ["a"] * 60})
    upsets = rps.head(15).assign(winner="b")
    out = intransitivity(as_battles(pd.concat([rps, upsets])))
    assert out.n_three_cycles == 1 and not out.transitive
    assert out.loglik_gpm > out.loglik_bt and out.p_value < 1e-3
    rng = np.random.default_rng(0)
    clean = intransitivity(as_battles(simulate_battles(rng, 5, 2000)))
    assert clean.n_three_cycles == 0 and clean.transitive
    assert clean.loglik_gpm >= clean.loglik_bt - 1e-6
    assert clean.p_value > 1e-3


def test_difficulty_rating():
    rng = np.random.default_rng(0)
    skill = np.array([1.5, 0.5, -0.5])
    hard = rng.normal(size=60)
    rows = []
    for s, th in zip("abc", skill):
        for i, d in enumerate(hard):
            rows.append({"system": s, "item": i, "correct": int(rng.random() < 1 / (1 + np.exp(-(th - d))))})
    out = difficulty_rating(pd.DataFrame(rows))
    assert out.systems["system"].tolist() == ["a", "b", "c"]
    assert {"rating", "bt_rating", "accuracy"} <= set(out.systems.columns)
    corr = np.corrcoef(out.items.sort_values("item", key=lambda s: s.astype(int))["difficulty"], hard)[0, 1]
    assert corr > 0.3
    r = aggregate(pd.DataFrame(rows), "difficulty", n_boot=0)
    assert r.order == ("a", "b", "c")
    with pytest.raises(InputError, match="correct"):
        difficulty_rating(pd.DataFrame({"system": ["a"], "item": [1], "correct": [2.0]}))


def test_battles_table_validation():
    with pytest.raises(InputError, match="winner"):
        as_battles(pd.DataFrame({"a": ["x"], "b": ["y"], "winner": ["draw?"]}))
    with pytest.raises(InputError, match="plays itself"):
        as_battles(pd.DataFrame({"a": ["x"], "b": ["x"], "winner": ["a"]}))
    b = as_battles(pd.DataFrame({"model_a": ["x", "y"], "model_b": ["y", "x"], "winner": ["model_b", "x"]}))
    assert b.outcome.tolist() == [0.0, 0.0]
    with pytest.raises(InputError, match="battles"):
        aggregate(pd.DataFrame({"a": ["x"], "b": ["y"], "winner": ["a"]}), "borda", n_boot=0)
