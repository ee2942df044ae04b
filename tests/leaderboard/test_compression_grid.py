"""Issue 29 item 2: the Open LLM compression board as a selection x scoring grid over splits.

tinyBenchmarks' anchor points (Maia Polo et al., 2024: k-means of the items' correctness
patterns, anchor = item nearest the centroid, weight = cluster size), the vectorised scoring of
random subsets against the per-draw definitions, and the split summaries.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scorebench.core.errors import InputError
from scorebench.irt.scoring import score_abilities
from scorebench.irt.simulate import simulate_2pl
from scorebench.irt.tiny import (
    anchor_estimate,
    anchor_points,
    complete_params,
    irt_estimate,
    pirt_estimate,
    score_draws,
)
from scorebench.leaderboard.compression import (
    SCORINGS,
    SELECTIONS,
    compression_curve,
    compression_splits,
    summarise_splits,
)


def _planted(seed: int = 0, sizes=(7, 12, 5, 9), n: int = 80, flip: float = 0.05):
    """Items in groups; each group's items copy one random answer pattern, with a few answers flipped."""
    rng = np.random.default_rng(seed)
    cols, truth = [], []
    for g, size in enumerate(sizes):
        proto = rng.random(n) < 0.5
        for _ in range(size):
            cols.append(np.where(rng.random(n) < flip, ~proto, proto))
            truth.append(g)
    order = rng.permutation(len(cols))
    return np.column_stack(cols).astype(float)[:, order], np.array(truth)[order]


def test_anchor_points_recover_planted_clusters_and_weights_sum_to_items():
    y, truth = _planted()
    ap = anchor_points(y, 4, seed=3, n_init=5)
    assert ap.weights.sum() == y.shape[1] and ap.items.size == 4
    # the partition is the planted one (cluster numbers aside)
    pairs_same = truth[:, None] == truth[None, :]
    assert np.array_equal(ap.labels[:, None] == ap.labels[None, :], pairs_same)
    # one anchor per planted group, weighted by that group's size
    assert sorted(truth[ap.items].tolist()) == [0, 1, 2, 3]
    assert dict(zip(truth[ap.items].tolist(), ap.weights.tolist())) == {0: 7, 1: 12, 2: 5, 3: 9}
    assert np.array_equal(ap.labels[ap.items], np.arange(4))


def test_anchor_points_edge_cases_and_errors():
    y, _ = _planted(sizes=(3, 3), n=20, flip=0.0)  # only 2 distinct patterns
    ap = anchor_points(y, 4)
    assert ap.weights.sum() == 6 and ap.items.size == 2  # empty clusters dropped, weights still sum to J
    every = anchor_points(simulate_2pl(60, 12, seed=2), 12)
    assert every.weights.sum() == 12 and every.items.size <= 12
    with pytest.raises(InputError, match="between 1 and the number of items"):
        anchor_points(y, 7)
    with pytest.raises(InputError, match="0/1"):
        anchor_points(np.where(y == 1, 2.0, 0.0), 2)
    # k = J: every item its own anchor (when all patterns differ) and the weighted mean is the accuracy
    z = simulate_2pl(200, 10, seed=4)
    full = anchor_points(z, 10)
    if full.items.size == 10:
        assert np.allclose(anchor_estimate(z[:, full.items], full.weights), z.mean(axis=1))
    assert anchor_estimate([[1, 0, 1]], [2, 1, 1]).tolist() == [0.75]
    with pytest.raises(InputError, match="weights"):
        anchor_estimate([[1, 0]], [0, 0])


def _bank(j: int, seed: int, guess: float = 0.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a, b = rng.uniform(0.6, 2.5, j), rng.normal(size=j)
    return np.column_stack([a, -a * b, np.full(j, guess), np.ones(j)])


@pytest.mark.parametrize("guess", [0.0, 0.2])  # 2PL (sufficient-statistic path) and 3PL (general path)
def test_vectorised_random_arm_equals_the_loop(guess):
    params = _bank(15, 1, guess)
    rng = np.random.default_rng(5)
    theta = rng.normal(size=40)
    from scorebench.irt.models import prob

    y = (rng.random((40, 15)) < prob(params, theta).T).astype(float)
    draws = np.argsort(rng.random((7, 15)), axis=1)[:, :4]
    out = score_draws(params, y, draws, chunk=3)
    assert out.pirt.shape == (40, 7)
    for d, seen in enumerate(draws):
        # abilities: the adaptive-grid EAP of score_abilities, to the fixed grid's accuracy
        ref = score_abilities(y[:, seen], params[seen], method="eap").theta
        assert np.abs(out.theta[:, d] - ref).max() < 1e-4
        # the estimates: the per-draw definitions at the same abilities
        th = out.theta[:, d]
        assert np.allclose(out.pirt[:, d], pirt_estimate(params, y[:, seen], seen, theta=th), atol=1e-9, rtol=0)
        assert np.allclose(out.irt[:, d], irt_estimate(params, y[:, seen], seen, theta=th), atol=1e-9, rtol=0)
        assert np.array_equal(out.mean[:, d], y[:, seen].mean(axis=1))
    # chunking does not change the result
    again = score_draws(params, y, draws, chunk=64)
    assert np.allclose(again.pirt, out.pirt, atol=1e-12, rtol=0)


def test_score_draws_input_errors():
    params = _bank(6, 0)
    y = simulate_2pl(10, 6)
    with pytest.raises(InputError, match="twice"):
        score_draws(params, y, [[0, 0]])
    with pytest.raises(InputError, match="positions"):
        score_draws(params, y, [[0, 6]])
    with pytest.raises(InputError, match="finite"):
        score_draws(np.where(np.eye(6, 4) == 1, np.nan, params), y, [[0, 1]])
    with pytest.raises(InputError, match="0/1"):
        score_draws(params, y * 2, [[0, 1]])
    # complete_params gives constant items a flat curve at their training proportion
    full = complete_params(np.vstack([params[:5], [np.nan] * 4]), np.column_stack([y[:, :5], np.ones(10)]))
    assert np.isfinite(full).all() and full[5, 0] == 0.0


def test_splits_grid_columns_and_intervals():
    y = simulate_2pl(300, 40, seed=6, slopes=(0.8, 2.5))
    splits = compression_splits(y, [8, 40], n_splits=4, n_random=30, seed=2, label="b")
    again = compression_splits(y, [8, 40], n_splits=4, n_random=30, seed=2, label="b")
    pd.testing.assert_frame_equal(splits, again)  # seeded: identical
    assert len(splits) == 4 * 2 * len(SELECTIONS) * len(SCORINGS)
    assert set(splits["selection"]) == set(SELECTIONS) and set(splits["scoring"]) == set(SCORINGS)
    assert (splits.loc[splits["selection"] == "random", "n_draws"] == 30).all()
    assert splits["converged"].dtype == bool  # each split's fit convergence is recorded (and summarised)
    # the splits differ (different held-out systems)
    per = splits[(splits["selection"] == "random") & (splits["scoring"] == "mean") & (splits["size"] == 8)]
    assert per["mae"].nunique() == 4
    # keeping every item, plain mean and p-IRT are the target itself
    whole = splits[(splits["size"] == 40) & splits["scoring"].isin(["mean", "p-IRT"])]
    assert np.allclose(whole["mae"], 0.0, atol=1e-9)  # p-IRT: spline of the test curve, minus the seen part
    summary = summarise_splits(splits, 0.95)
    for m in ("mae", "rmse"):
        assert ((summary[f"{m}_low"] <= summary[m]) & (summary[m] <= summary[f"{m}_high"])).all()
    # with 4 splits and ci = 0.95 the range is the smallest and largest per-split value
    cell = summary.set_index(["size", "selection", "scoring"]).loc[(8, "random", "mean")]
    assert cell["mae_low"] == per["mae"].min() and cell["mae_high"] == per["mae"].max()
    assert cell["mae"] == pytest.approx(per["mae"].mean()) and cell["n_splits"] == 4
    assert 0.0 <= cell["converged"] <= 1.0
    # a narrower level takes inner order statistics (values a split actually produced)
    inner = summarise_splits(splits, 0.5).set_index(["size", "selection", "scoring"]).loc[(8, "random", "mean")]
    assert inner["mae_low"] in per["mae"].to_numpy() and inner["mae_low"] >= cell["mae_low"]
    with pytest.raises(InputError, match="ci"):
        summarise_splits(splits, 1.0)


def test_grid_orders_the_estimators_as_expected_on_2pl_data():
    y = simulate_2pl(500, 60, seed=7, slopes=(0.8, 2.5))
    out = compression_curve(y, [10], n_splits=3, n_random=40, seed=1).set_index(["selection", "scoring"])["mae"]
    assert out["random", "p-IRT"] < out["random", "mean"]  # the model adds information to 10 random answers
    assert out["IRT-selected", "IRT"] < out["IRT-selected", "mean"]  # informative items are not representative
    assert out["anchor points", "mean"] < out["random", "mean"]  # cluster weights make the mean representative
    assert out["random", "gp-IRT"] <= max(out["random", "mean"], out["random", "p-IRT"]) + 1e-12


def test_compression_input_errors():
    y = simulate_2pl(40, 20)  # sizes, test_size, few systems: test_board_compression.py
    with pytest.raises(InputError, match="n_splits"):
        compression_splits(y, [5], n_splits=0)
    bad = y.copy()
    bad[3, 4] = np.nan
    with pytest.raises(InputError, match="row 3, item 4"):
        compression_splits(bad, [5])
