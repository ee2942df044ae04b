"""Parity with arena-rank 0.1.1 (lmarena) on fixed seeded synthetic battles.

The reference numbers come from ``tests/reference/arena_rank_reference.py`` run in its own
virtual environment (arena-rank pins numpy 2.3.3 and jax 0.8.1); see that script's docstring
to regenerate ``tests/fixtures/arena_rank/``. The battles (2,500, 7 models, 19% ties, very
uneven pair sampling, 2 style features) are in the fixture.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import scorebench
from scorebench.aggregate.contextual_bt import bradley_terry_contextual, bradley_terry_contextual_sandwich
from scorebench.aggregate.input import as_battles
from scorebench.aggregate.pair_counts import ipw_weights, normal_bounds, pair_counts
from scorebench.aggregate.pairwise import bradley_terry_sandwich, bt_fit, to_elo_scale

HERE = Path(__file__).parents[1] / "fixtures" / "arena_rank"
REF = json.loads((HERE / "reference.json").read_text())
BATTLES = pd.read_csv(HERE / "battles.csv")


def _bounds(scores, cov):
    return normal_bounds(scores, np.sqrt(np.diag(cov)), 0.95)


def test_fixture_is_arena_rank_0_1_1():
    assert REF["arena_rank_version"] == "0.1.1"
    assert REF["bt_unweighted"]["competitors"] == list(as_battles(BATTLES).systems)


@pytest.mark.parametrize("case", ["bt_unweighted", "bt_ipw"])
def test_deduplicated_rows_equal_arena_rank(case):
    b = as_battles(BATTLES)
    pc = pair_counts(ipw_weights(b) if case == "bt_ipw" else b)
    rows = REF[case]["rows"]
    np.testing.assert_array_equal(pc.a, rows["a"])
    np.testing.assert_array_equal(pc.b, rows["b"])
    np.testing.assert_array_equal(pc.outcome, rows["outcome"])
    np.testing.assert_array_equal(pc.count, rows["count"])
    np.testing.assert_allclose(pc.weight / pc.count, rows["weight"], rtol=1e-13)
    assert pc.n_battles == len(BATTLES) == int(sum(rows["count"]))


def test_plain_bt_sandwich_equals_arena_rank():
    ref = REF["bt_unweighted"]
    scores, cov = bradley_terry_sandwich(as_battles(BATTLES))
    np.testing.assert_allclose(scores, ref["ratings"], rtol=0, atol=1e-6)
    np.testing.assert_allclose(np.diag(cov), ref["variances"], rtol=1e-8)
    lo, hi = _bounds(scores, cov)
    np.testing.assert_allclose(lo, ref["rating_lower"], rtol=0, atol=1e-6)
    np.testing.assert_allclose(hi, ref["rating_upper"], rtol=0, atol=1e-6)


def test_inverse_propensity_weighted_bt_equals_arena_rank():
    # arena-rank inverts H + 1e-5 I as it is (condition number ~1.5e5 here): its own JAX and NumPy
    # inverses of that matrix differ by 5e-8 relative in the variances, so the bounds are compared
    # to 1e-5 Elo (the ratings, which need no inverse, to 1e-6).
    ref = REF["bt_ipw"]
    scores, cov = bradley_terry_sandwich(as_battles(BATTLES), reweight=True)
    np.testing.assert_allclose(scores, ref["ratings"], rtol=0, atol=1e-6)
    np.testing.assert_allclose(np.diag(cov), ref["variances"], rtol=3e-7)
    lo, hi = _bounds(scores, cov)
    np.testing.assert_allclose(lo, ref["rating_lower"], rtol=0, atol=1e-5)
    np.testing.assert_allclose(hi, ref["rating_upper"], rtol=0, atol=1e-5)
    unweighted = REF["bt_unweighted"]["ratings"]
    assert np.abs(scores - unweighted).max() > 1.0  # the weights do move the ratings


def test_aggregate_defaults_to_sandwich_intervals_for_bt():
    ref = REF["bt_unweighted"]
    r = scorebench.aggregate(BATTLES, "bradley_terry", n_boot=100, seed=0)
    assert r.resample == "sandwich"
    np.testing.assert_allclose(r.ci_low, ref["rating_lower"], atol=1e-6)
    np.testing.assert_allclose(r.ci_high, ref["rating_upper"], atol=1e-6)
    boot = scorebench.aggregate(BATTLES, "bradley_terry", n_boot=100, seed=0, intervals="bootstrap")
    assert boot.resample == "battles"
    np.testing.assert_allclose(boot.ci_high - boot.ci_low, r.ci_high - r.ci_low, rtol=0.35)


def test_multinomial_bootstrap_refits_equal_arena_rank():
    ref = REF["bootstrap"]
    pc = pair_counts(as_battles(BATTLES))
    counts = np.array(ref["boot_counts"])
    assert counts.shape[1] == len(pc.count) and (counts.sum(axis=1) == pc.n_battles).all()
    fits = np.array([to_elo_scale(bt_fit(pc.wins(weight=c), tol=1e-12)) for c in counts])
    np.testing.assert_allclose(fits, ref["boot_ratings"], rtol=0, atol=1e-6)
    np.testing.assert_allclose(np.quantile(fits, 0.025, axis=0), ref["rating_lower"], atol=1e-6)
    np.testing.assert_allclose(np.quantile(fits, 0.975, axis=0), ref["rating_upper"], atol=1e-6)


def test_contextual_bt_equals_arena_rank():
    ref = REF["contextual"]
    r = bradley_terry_contextual(BATTLES, features=ref["features"])
    np.testing.assert_allclose(r.scores, ref["ratings"], rtol=0, atol=1e-6)
    np.testing.assert_allclose(list(r.details["coefficients"].values()), ref["coeffs"], rtol=1e-8, atol=1e-10)
    scores, cov = bradley_terry_contextual_sandwich(BATTLES, features=ref["features"])
    lo, hi = _bounds(scores, cov)
    np.testing.assert_allclose(lo, ref["rating_lower"], rtol=0, atol=1e-6)
    np.testing.assert_allclose(hi, ref["rating_upper"], rtol=0, atol=1e-6)
    np.testing.assert_allclose(np.diag(cov), ref["variances"], rtol=1e-7)


def test_sandwich_choice_errors_are_clear():
    with pytest.raises(scorebench.core.errors.InputError, match="no covariance"):
        scorebench.aggregate(BATTLES, "elo", n_boot=10, intervals="sandwich")
    with pytest.raises(scorebench.core.errors.InputError, match="intervals"):
        scorebench.aggregate(BATTLES, "bradley_terry", n_boot=10, intervals="jackknife")


def test_sandwich_interval_coverage_under_ties():
    """95% Wald intervals of the rating gap cover the truth ~95% of the time (ties: a misspecified BT)."""
    rng = np.random.default_rng(5)
    truth = np.array([0.0, 0.4, 0.9])
    n, reps, hits = 600, 120, 0
    pairs = np.array([(0, 1), (1, 2), (0, 2)])
    for _ in range(reps):
        k = rng.integers(3, size=n)
        a, b = pairs[k, 0], pairs[k, 1]
        d = truth[a] - truth[b]
        pa, pb = np.exp(d / 2), np.exp(-d / 2)
        u = rng.random(n) * (pa + pb + 0.8)
        y = np.where(u < pa, 1.0, np.where(u < pa + pb, 0.0, 0.5))
        from scorebench.aggregate.input import Battles

        bt = Battles(("x", "y", "z"), a, b, y, np.ones(n))
        pc = pair_counts(bt)
        th = bt_fit(pc.wins())
        _, cov = bradley_terry_sandwich(bt)
        # the tie-as-half BT target: the population solution, estimated once from a big sample
        se = np.sqrt(cov[0, 0] + cov[2, 2] - 2 * cov[0, 2]) / to_elo_scale(1.0, init=0.0)
        hits += abs((th[2] - th[0]) - TARGET_GAP) < 1.96 * se
    assert 0.88 <= hits / reps <= 0.995


def _population_gap() -> float:
    truth = np.array([0.0, 0.4, 0.9])
    W = np.zeros((3, 3))
    for i, j in [(0, 1), (1, 2), (0, 2)]:
        d = truth[i] - truth[j]
        pa, pb = np.exp(d / 2), np.exp(-d / 2)
        z = pa + pb + 0.8
        W[i, j] += (pa + 0.4) / z
        W[j, i] += (pb + 0.4) / z
    th = bt_fit(W)
    return float(th[2] - th[0])


TARGET_GAP = _population_gap()


def test_contextual_bootstrap_agrees_with_its_sandwich():
    ref = REF["contextual"]
    sand = scorebench.aggregate(BATTLES, "bradley_terry_contextual", n_boot=60, features=ref["features"])
    boot = scorebench.aggregate(BATTLES, "bradley_terry_contextual", n_boot=60, features=ref["features"],
                                intervals="bootstrap", seed=3)
    assert sand.resample == "sandwich" and boot.resample == "battles"
    np.testing.assert_allclose(boot.ci_high - boot.ci_low, sand.ci_high - sand.ci_low, rtol=0.4)
