"""Style Bradley–Terry on (pair, outcome, style row) cells equals the per-battle fit; bootstrap by reweighting."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scorebench.aggregate.contextual_bt import (bradley_terry_contextual_bootstrap, bradley_terry_contextual_sandwich,
                                                contextual_sandwich, fit_contextual)
from scorebench.aggregate.input import as_battles
from scorebench.aggregate.pair_counts import ipw_weights
from scorebench.aggregate.pairwise import to_elo_scale
from scorebench.aggregate.style_cells import resample_cell_weights, style_cells
from scorebench.aggregate.style_control import bradley_terry_style_bootstrap, fit_contextual_bt, style_features
from scorebench.core.errors import InputError


def _table(n=3000, seed=0, levels=2, weights=False):
    """Battles among 5 models with 2 discrete style features (few levels: many repeated rows)."""
    rng = np.random.default_rng(seed)
    s = np.linspace(-0.8, 0.8, 5)
    a = rng.integers(5, size=n)
    b = (a + rng.integers(1, 5, size=n)) % 5
    f = {k: (rng.integers(levels, size=n), rng.integers(levels, size=n)) for k in ("len", "bold")}
    x = (f["len"][0] - f["len"][1]) / (f["len"][0] + f["len"][1] + 1.0)
    p = 1 / (1 + np.exp(-(s[a] - s[b] + 0.7 * x)))
    u = rng.random(n)
    winner = np.where(u < 0.2, "tie", np.where(u < 0.2 + 0.8 * p, "model_a", "model_b"))
    t = pd.DataFrame({"model_a": [f"m{i}" for i in a], "model_b": [f"m{j}" for j in b], "winner": winner})
    for k, (fa, fb) in f.items():
        t[f"style_{k}_a"], t[f"style_{k}_b"] = fa, fb
    if weights:
        t["weight"] = rng.uniform(0.5, 2.0, n)
    return t


def _per_battle(t, reweight):
    b = as_battles(t)
    X = style_features(t, ["len", "bold"])[0]
    w = ipw_weights(b, min_pair_count=50.0).weight if reweight else b.weight
    w = w / w.mean() if reweight else w
    return b, X, np.asarray(w, dtype=float)


@pytest.mark.parametrize("reweight,weights", [(True, False), (False, True)])
def test_cells_fit_and_sandwich_equal_per_battle(reweight, weights):
    t = _table(weights=weights)
    b, X, w = _per_battle(t, reweight)
    cells = style_cells(b.a, b.b, b.outcome, X, w)
    assert cells.n_cells < len(b.a) / 4  # discrete features: real reduction
    np.testing.assert_allclose(cells.weight.sum(), w.sum(), rtol=1e-12)
    theta, gamma = fit_contextual(b.a, b.b, b.outcome, X, w, b.n_systems)
    cov = contextual_sandwich(b.a, b.b, b.outcome, X, w, b.n_systems, theta, gamma)
    ratings, cov_elo = bradley_terry_contextual_sandwich(t, features=["len", "bold"], reweight=reweight)
    unit = to_elo_scale(1.0, init=0.0)
    np.testing.assert_allclose(ratings, to_elo_scale(theta), atol=1e-8)
    np.testing.assert_allclose(cov_elo, unit ** 2 * cov[:5, :5], rtol=1e-8, atol=1e-10)


def test_cells_bootstrap_equals_per_battle_resamples():
    t = _table(1500, seed=1)
    b, X, w = _per_battle(t, True)
    full = fit_contextual(b.a, b.b, b.outcome, X, w, b.n_systems)
    rng = np.random.default_rng(7)
    expected = []
    for _ in range(5):
        counts = np.bincount(rng.integers(len(b.a), size=len(b.a)), minlength=len(b.a)).astype(float)
        theta, _ = fit_contextual(b.a, b.b, b.outcome, X, w * counts, b.n_systems, start=full)
        expected.append(to_elo_scale(theta))
    got = bradley_terry_contextual_bootstrap(t, 5, np.random.default_rng(7), features=["len", "bold"])
    np.testing.assert_allclose(got, np.array(expected), atol=1e-6)
    assert np.ptp(got, axis=0).min() > 1.0  # the rounds really differ


def test_fastchat_bootstrap_on_cells_equals_per_battle():
    t = _table(1200, seed=2)
    b = as_battles(t)
    X = style_features(t, ["len", "bold"])[0]
    alpha = float(np.log(10.0))
    start = fit_contextual_bt(b.a, b.b, X, b.outcome, 5, weights=b.weight, alpha=alpha, reg=0.5)
    got = bradley_terry_style_bootstrap(t, 4, np.random.default_rng(3), features=["len", "bold"])
    rng = np.random.default_rng(3)
    N = len(b.a)
    for i in range(4):
        counts = np.bincount(rng.integers(N, size=N), minlength=N).astype(float)
        want = fit_contextual_bt(b.a, b.b, X, b.outcome, 5, weights=counts * b.weight, alpha=alpha, reg=0.5,
                                 start=start)
        np.testing.assert_allclose(got[i], 1000.0 + 400.0 * want[:5], atol=1e-5)


def test_continuous_features_keep_every_row_and_resample_totals():
    rng = np.random.default_rng(0)
    a = rng.integers(4, size=200)
    b = (a + 1) % 4
    X = rng.normal(size=(200, 3))
    cells = style_cells(a, b, np.ones(200), X, np.full(200, 2.0))
    assert cells.n_cells == 200
    np.testing.assert_array_equal(np.sort(cells.inverse), np.arange(200))
    wts = resample_cell_weights(cells, np.random.default_rng(1))
    assert wts.sum() == pytest.approx(400.0) and np.all(wts % 2.0 == 0)


def test_signed_zero_is_one_value_and_errors():
    a, b, y = np.array([0, 0]), np.array([1, 1]), np.array([1.0, 1.0])
    assert style_cells(a, b, y, np.array([[0.0], [-0.0]]), np.ones(2)).n_cells == 1
    with pytest.raises(InputError, match="0, 0.5 or 1"):
        style_cells(a, b, np.array([1.0, 0.3]), np.zeros((2, 0)), np.ones(2))
    with pytest.raises(InputError, match="one length"):
        style_cells(a, b, y, np.zeros((3, 1)), np.ones(2))
    with pytest.raises(InputError, match="no battles"):
        style_cells(a[:0], b[:0], y[:0], np.zeros((0, 1)), np.ones(0))
