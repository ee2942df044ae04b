"""The all-pairs matrix engine of compare: same numbers as the per-pair tests, mergeable, deterministic."""

import numpy as np
import pandas as pd
import pytest

import scorebench
from scorebench.core.errors import InputError
from scorebench.evaluation.pairwise import pair_sums, pair_tests, permutation_rounds
from scorebench.core.stats import paired_bootstrap, paired_permutation, paired_t
from scorebench.analysis.stats_tests import mcnemar, minimum_detectable_effect


def _long(matrix, systems=None):
    n, k = matrix.shape
    systems = systems or [f"s{j}" for j in range(k)]
    return pd.DataFrame({"system": np.repeat(systems, n), "id": np.tile([f"q{i}" for i in range(n)], k),
                         "correct": matrix.T.ravel()})


def _binary(rng, n, k):
    skill = rng.uniform(0.4, 0.8, k)
    ease = rng.normal(0, 1, n)
    m = (rng.random((n, k)) < 1 / (1 + np.exp(-(ease[:, None] + 3 * (skill - 0.6))))).astype(float)
    m[:, 1] = m[:, 0]  # identical systems: no discordant units, constant differences
    return m


@pytest.mark.parametrize("n", [12, 40, 300])
def test_deterministic_tests_equal_the_per_pair_path(n):
    rng = np.random.default_rng(n)
    S = _binary(rng, n, 6)
    out = scorebench.compare(_long(S), "accuracy", tests=["mcnemar", "t"], n_boot=0)
    pos = {f"s{j}": j for j in range(6)}
    assert len(out) == 2 * 15
    for row in out.itertuples():
        a, b = S[:, pos[row.system_a]], S[:, pos[row.system_b]]
        ref = mcnemar(a, b) if row.test == "mcnemar" else paired_t(a - b)
        detail = f"{ref.method}; discordant {ref.b} vs {ref.c}" if row.test == "mcnemar" else ref.detail
        assert (row.statistic, row.detail) == (pytest.approx(ref.statistic, rel=1e-12, abs=0), detail)
        assert row.p_value == pytest.approx(ref.p_value, rel=1e-12, abs=1e-300)
        assert row.mean_diff == (a - b).mean()
        se = (a - b).std(ddof=1) / np.sqrt(n)
        assert row.mde == pytest.approx(minimum_detectable_effect(se, df=n - 1), rel=1e-12, abs=1e-15)


def test_float_scores_t_and_near_identical_systems():
    rng = np.random.default_rng(1)
    n = 200
    base = rng.random(n)
    S = np.c_[base, base + 0.25, base + 1e-9 * rng.normal(size=n), rng.random(n)]  # constant shift, near-equal
    for i, j in [(0, 1), (0, 2), (0, 3), (2, 3)]:
        res = pair_tests(pair_sums(S, np.arange(n, dtype=np.uint64), seed=0), np.array([i]), np.array([j]), ["t"],
                         matrix=S)
        ref = paired_t(S[:, i] - S[:, j])
        assert res["t"][0][0] == pytest.approx(ref.statistic, rel=1e-9)
        assert res["t"][1][0] == pytest.approx(ref.p_value, rel=1e-9, abs=1e-300)
        assert res["t"][2][0] == ref.detail


def test_exact_sign_flips_equal_the_per_pair_path():
    rng = np.random.default_rng(2)
    S = rng.random((11, 4))
    out = scorebench.compare(_long(S).rename(columns={"correct": "value"}).assign(y=0.0, p=lambda t: t.value),
                             "brier_score", tests=["permutation"], n_boot=0)
    wide = S**2  # brier of p against y = 0
    for row in out.itertuples():
        ref = paired_permutation(wide[:, int(row.system_a[1])] - wide[:, int(row.system_b[1])], 100,
                                 np.random.default_rng(0))
        assert (row.p_value, row.detail) == (ref.p_value, ref.detail)


def test_resampling_tests_agree_with_the_per_pair_path_within_monte_carlo_error():
    rng = np.random.default_rng(3)
    n = 400
    S = _binary(rng, n, 4)
    S[:, 3] = np.where(rng.random(n) < 0.1, 1 - S[:, 2], S[:, 2])  # close to system 2
    out = scorebench.compare(_long(S), "accuracy", tests=["bootstrap", "permutation"], n_boot=2000, n_perm=4000)
    for row in out.itertuples():
        d = S[:, int(row.system_a[1])] - S[:, int(row.system_b[1])]
        if row.test == "bootstrap":
            ref, reps = paired_bootstrap(d, 4000, np.random.default_rng(0))
            sd = reps.std()
            assert abs(row.ci_low - np.quantile(reps, 0.025)) < 0.15 * sd + 1e-12
            assert abs(row.ci_high - np.quantile(reps, 0.975)) < 0.15 * sd + 1e-12
        else:
            ref = paired_permutation(d, 4000, np.random.default_rng(0))
        se = np.sqrt(ref.p_value * (1 - ref.p_value) / 2000) + 2e-3
        assert abs(row.p_value - ref.p_value) < 5 * se, (row.system_a, row.system_b, row.test)


def test_same_seed_same_output_and_pairs_do_not_depend_on_other_systems():
    rng = np.random.default_rng(4)
    S = _binary(rng, 150, 5)
    t = _long(S)
    one = scorebench.compare(t, "accuracy", n_boot=300, n_perm=300, seed=7)
    pd.testing.assert_frame_equal(one, scorebench.compare(t.sample(frac=1, random_state=1), "accuracy", n_boot=300,
                                                          n_perm=300, seed=7))
    other = scorebench.compare(t, "accuracy", n_boot=300, n_perm=300, seed=8)
    assert not np.array_equal(one["ci_low"], other["ci_low"])
    few = scorebench.compare(t[t.system.isin(["s2", "s4"])], "accuracy", n_boot=300, n_perm=300, seed=7)
    ref = one[(one.system_a == "s2") & (one.system_b == "s4")].reset_index(drop=True)
    cols = ["mean_diff", "ci_low", "ci_high", "statistic", "p_value"]
    np.testing.assert_allclose(few[cols].to_numpy(float), ref[cols].to_numpy(float), rtol=1e-12)
    base = scorebench.compare(t, "accuracy", baseline="s4", n_boot=300, n_perm=300, seed=7)
    got = base[base.system_a == "s2"].reset_index(drop=True)
    np.testing.assert_allclose(got[cols].to_numpy(float), ref[cols].to_numpy(float), rtol=1e-12)


def test_partials_add_over_any_split_of_units():
    rng = np.random.default_rng(5)
    S = rng.random((500, 7))
    h = rng.integers(0, 2**63, 500).astype(np.uint64)
    whole = pair_sums(S, h, seed=3, n_boot=64, n_perm=40)
    order = rng.permutation(500)
    parts = [pair_sums(S[idx], h[idx], seed=3, n_boot=64, n_perm=40) for idx in np.array_split(order, 4)]
    merged = parts[0] + parts[1] + parts[2] + parts[3]
    for name in ("sums", "gram", "boot", "weight", "flips"):
        np.testing.assert_allclose(getattr(merged, name), getattr(whole, name), rtol=1e-12)
    assert merged.n == 500 and not merged.binary
    small = pair_sums(S, h, seed=3, n_boot=64, n_perm=40, cells=1000)  # blocks of 15 units
    np.testing.assert_allclose(small.boot, whole.boot, rtol=1e-12)


def test_bootstrap_interval_covers_the_true_difference():
    rng = np.random.default_rng(6)
    n, sims, hits = 120, 150, 0
    for sim in range(sims):
        S = np.c_[rng.normal(0.3, 1, n), rng.normal(0.0, 1, n)]
        res = pair_tests(pair_sums(S, rng.integers(0, 2**63, n).astype(np.uint64), seed=sim, n_boot=300),
                         np.array([0]), np.array([1]), ["bootstrap"], n_boot=300)
        hits += res["ci_low"][0] <= 0.3 <= res["ci_high"][0]
    assert 0.89 <= hits / sims <= 0.99


def test_bad_input_one_clear_error():
    rng = np.random.default_rng(7)
    t = _long(_binary(rng, 30, 3))
    with pytest.raises(InputError, match="not scored on the same units"):
        scorebench.compare(t.drop(index=[5]), "accuracy")
    with pytest.raises(InputError, match="at least 2 paired rows"):
        scorebench.compare(t[t.id == "q0"], "accuracy")
    with pytest.raises(InputError, match="needs right/wrong"):
        pair_tests(pair_sums(rng.random((5, 2)), np.arange(5, dtype=np.uint64), seed=0), [0], [1], ["mcnemar"])
    assert permutation_rounds(100_000, 10_000) == 500 and permutation_rounds(16, 10) == 2**16
