"""McNemar, proportion intervals, cluster-robust and two-level inference, and compare's design options."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from click.testing import CliRunner
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.proportion import proportion_confint

import scorebench
from scorebench.cli import cli
from scorebench.core.errors import InputError
from scorebench.analysis.stats_tests import (cluster_bootstrap_means, cluster_robust_se, cluster_t, jeffreys_interval, mcnemar,
                                    minimum_detectable_effect, two_level_bootstrap, wilson_interval)


@pytest.mark.parametrize("k,n", [(0, 1), (1, 1), (0, 10), (3, 10), (10, 10), (57, 200), (999, 1000)])
@pytest.mark.parametrize("ci", [0.9, 0.95, 0.99])
def test_wilson_matches_statsmodels(k, n, ci):
    np.testing.assert_allclose(wilson_interval(k, n, ci), proportion_confint(k, n, alpha=1 - ci, method="wilson"),
                               rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("k,n", [(1, 10), (3, 10), (57, 200), (999, 1000)])
def test_jeffreys_matches_statsmodels_inside(k, n):
    np.testing.assert_allclose(jeffreys_interval(k, n), proportion_confint(k, n, method="jeffreys"), rtol=1e-12)


def test_jeffreys_boundaries_follow_brown_cai_dasgupta():
    # statsmodels keeps the raw beta quantile at k = 0 / k = n; BCD (2001) set 0 / 1 there.
    assert jeffreys_interval(0, 10)[0] == 0.0 and proportion_confint(0, 10, method="jeffreys")[0] > 0
    assert jeffreys_interval(10, 10)[1] == 1.0 and proportion_confint(10, 10, method="jeffreys")[1] < 1
    np.testing.assert_allclose(jeffreys_interval(0, 10)[1], proportion_confint(0, 10, method="jeffreys")[1])


def _pairs(b, c, both=30, neither=10):
    a = [1] * b + [0] * c + [1] * both + [0] * neither
    bb = [0] * b + [1] * c + [1] * both + [0] * neither
    return np.array(a), np.array(bb)


@pytest.mark.parametrize("b,c", [(0, 0), (5, 0), (3, 9), (12, 12), (20, 4), (40, 22), (100, 70)])
@pytest.mark.parametrize("correction", [True, False])
def test_mcnemar_matches_statsmodels(b, c, correction):
    a, bb = _pairs(b, c)
    res = mcnemar(a, bb, correction=correction)
    table = [[30, b], [c, 10]]
    exact = b + c < 25
    ref = sm_mcnemar(table, exact=exact, correction=correction)
    if b + c == 0:
        assert res.p_value == 1.0
        return
    assert res.method.startswith("exact" if exact else "chi-square")
    np.testing.assert_allclose([res.statistic, res.p_value], [ref.statistic, ref.pvalue], rtol=1e-12)
    forced = mcnemar(a, bb, exact=not exact, correction=correction)
    ref2 = sm_mcnemar(table, exact=not exact, correction=correction)
    np.testing.assert_allclose(forced.p_value, ref2.pvalue, rtol=1e-12)


def test_mcnemar_refuses_non_binary():
    with pytest.raises(InputError, match="must be 0 or 1"):
        mcnemar([0.5, 1], [1, 0])


def test_cluster_robust_se_by_hand_and_statsmodels(rng):
    d = rng.normal(size=23)
    g = np.repeat(np.arange(6), [5, 3, 4, 4, 2, 5])
    # By hand: G/(G-1) * sum_g (sum_{i in g} (d_i - mean))^2 / n^2.
    resid = d - d.mean()
    meat = sum(resid[g == k].sum() ** 2 for k in range(6))
    by_hand = np.sqrt(6 / 5 * meat / 23**2)
    se, n_clusters = cluster_robust_se(d, g)
    assert n_clusters == 6
    np.testing.assert_allclose(se, by_hand, rtol=1e-12)
    fit = sm.OLS(d, np.ones(23)).fit(cov_type="cluster", cov_kwds={"groups": g})
    np.testing.assert_allclose(se, fit.bse[0], rtol=1e-10)
    t, p, _, _ = cluster_t(d, g)
    from scipy import stats

    np.testing.assert_allclose(p, 2 * stats.t.sf(abs(d.mean() / by_hand), 5), rtol=1e-12)


def test_cluster_se_reduces_to_iid_with_singletons(rng):
    d = rng.normal(size=30)
    se, _ = cluster_robust_se(d, np.arange(30))
    # G/(G-1) * sum(resid^2)/n^2 = var(ddof=1)/n
    np.testing.assert_allclose(se, d.std(ddof=1) / np.sqrt(30), rtol=1e-12)


def test_cluster_bootstrap_sd_tracks_cr1(rng):
    d = rng.normal(size=400) + np.repeat(rng.normal(size=40), 10)  # strong within-cluster correlation
    g = np.repeat(np.arange(40), 10)
    reps = cluster_bootstrap_means(d, g, 4000, np.random.default_rng(0))
    se, _ = cluster_robust_se(d, g)
    iid = d.std(ddof=1) / np.sqrt(d.size)
    assert se > 2 * iid  # clustering matters here
    np.testing.assert_allclose(reps.std(), se, rtol=0.1)  # MC error of a sd from 4000 draws ~1%, plus G/(G-1)


def test_two_level_bootstrap_variance(rng):
    # 300 items x 5 samples, item effects sd 1, sample noise sd 1: the two-level scheme's
    # variance of the grand mean is about (s_b^2 + s_w^2 (1/r) (1 + (r-1)/r)) / n.
    n, r = 300, 5
    item = np.repeat(np.arange(n), r)
    x = np.repeat(rng.normal(size=n), r) + rng.normal(size=n * r)
    reps = two_level_bootstrap([(x, item)], n, 2000, np.random.default_rng(1))
    means = np.bincount(item, weights=x) / r
    simple = means.var(ddof=1) / n  # items-only bootstrap variance
    assert simple <= reps.var() <= simple * 1.5
    assert abs(reps.mean() - x.mean()) < 4 * np.sqrt(simple / 2000) + 1e-9


def test_minimum_detectable_effect():
    from scipy.stats import norm

    np.testing.assert_allclose(minimum_detectable_effect(0.02), (norm.ppf(0.975) + norm.ppf(0.8)) * 0.02, rtol=1e-12)
    assert minimum_detectable_effect(0.02, df=5) > minimum_detectable_effect(0.02)
    with pytest.raises(InputError, match="power"):
        minimum_detectable_effect(0.02, power=1.2)


# --- compare -----------------------------------------------------------------------------


def _correct(rng, n=200, p=(0.75, 0.7, 0.7)):
    base = rng.random(n)
    return pd.concat([pd.DataFrame({"system": s, "id": np.arange(n),
                                    "correct": ((base + 0.3 * rng.random(n)) / 1.3 < q).astype(int)})
                      for s, q in zip("abc", p)], ignore_index=True)


def test_compare_mcnemar_pairs_by_id(rng):
    t = _correct(rng)
    shuffled = t.sample(frac=1.0, random_state=0)  # pairing is by id, not by row order
    out = scorebench.compare(shuffled, "accuracy", baseline="b", tests=["mcnemar"])
    wide = t.pivot(index="id", columns="system", values="correct")
    for row in out.itertuples():
        x, y = wide[row.system_a].to_numpy(), wide["b"].to_numpy()
        b, c = int(((x == 1) & (y == 0)).sum()), int(((x == 0) & (y == 1)).sum())
        ref = sm_mcnemar([[0, b], [c, 0]], exact=b + c < 25, correction=True)
        np.testing.assert_allclose(row.p_value, ref.pvalue, rtol=1e-12)
        np.testing.assert_allclose(row.mean_diff, x.mean() - y.mean(), rtol=1e-12)


def test_compare_defaults_include_mcnemar_only_for_binary(rng):
    t = _correct(rng, n=60)
    assert "mcnemar" in set(scorebench.compare(t, "accuracy", n_boot=50, n_perm=50)["test"])
    y = rng.integers(0, 2, 40)
    binary = pd.DataFrame({"system": np.repeat(["a", "b"], 40), "id": np.tile(np.arange(40), 2),
                           "y": np.tile(y, 2), "p": rng.random(80)})
    assert "mcnemar" not in set(scorebench.compare(binary, "brier_score", n_boot=50, n_perm=50)["test"])
    with pytest.raises(InputError, match="needs right/wrong"):
        scorebench.compare(binary, "brier_score", tests=["mcnemar"])


def test_better_is_empty_unless_holm_significant(rng):
    n = 30
    y = rng.normal(size=n)
    t = pd.concat([pd.DataFrame({"system": "a", "id": range(n), "y": y, "mu": y + rng.normal(0, 1, n), "sigma": 1.0}),
                   pd.DataFrame({"system": "b", "id": range(n), "y": y, "mu": y + rng.normal(0, 1.05, n),
                                 "sigma": 1.0})])
    out = scorebench.compare(t, "crps_normal", baseline="b", n_boot=200, n_perm=500)
    for row in out.itertuples():
        assert (row.better != "") == (row.p_holm < 0.05)
    loose = scorebench.compare(t, "crps_normal", baseline="b", n_boot=200, n_perm=500, alpha=0.999)
    assert (loose["better"] != "").all()
    assert out.attrs["alpha"] == 0.05 and "Holm" in out.attrs["better"]


def test_diebold_mariano_horizon_must_be_below_n():
    t = pd.DataFrame({"system": np.repeat(["a", "b"], 3), "id": np.tile(range(3), 2), "y": np.tile([0.1, 0.5, -1.0], 2),
                      "mu": [0.0, 0.2, -0.5, 0.3, 0.1, 0.2], "sigma": 1.0})
    for h in (3, 10, 1000):
        with pytest.raises(InputError, match=f"horizon {h} must be smaller than the number of paired rows"):
            scorebench.compare(t, "crps_normal", tests=["diebold_mariano"], horizon=h)
    assert np.isfinite(scorebench.compare(t, "crps_normal", tests=["diebold_mariano"], horizon=2)["p_value"]).all()


def test_compare_cluster_matches_cr1(rng):
    t = _correct(rng, n=120)
    t["passage"] = "p" + (t["id"] // 6).astype(str)
    out = scorebench.compare(t, "accuracy", baseline="b", cluster="passage", tests=["t", "bootstrap", "permutation"],
                             n_boot=500, n_perm=300)
    wide = t.pivot(index="id", columns="system", values="correct")
    d = (wide["a"] - wide["b"]).to_numpy()
    g = (wide.index.to_numpy() // 6)
    fit = sm.OLS(d, np.ones(d.size)).fit(cov_type="cluster", cov_kwds={"groups": g})
    row = out[(out.system_a == "a") & (out.test == "t")].iloc[0]
    np.testing.assert_allclose(row.statistic, d.mean() / fit.bse[0], rtol=1e-10)
    assert row.n_clusters == 20 and "CR1" in row.detail
    assert set(out["detail"]) >= {"cluster bootstrap", "cluster-robust CR1 SE %.4g, df=19" % fit.bse[0]}
    with pytest.raises(InputError, match="assumes one independent row"):
        scorebench.compare(t, "accuracy", cluster="passage", tests=["mcnemar"])


def test_compare_cluster_must_be_constant_per_unit(rng):
    t = _correct(rng, n=20)
    t["passage"] = np.arange(len(t)) % 3  # differs between systems for the same id
    with pytest.raises(InputError, match="different clusters"):
        scorebench.compare(t, "accuracy", cluster="passage")


def test_compare_repeats_uses_item_means(rng):
    t = pd.concat([_correct(rng, n=50).assign(sample=k) for k in range(4)], ignore_index=True)
    out = scorebench.compare(t, "accuracy", baseline="b", repeats="sample", n_boot=300, n_perm=300)
    assert "mcnemar" not in set(out["test"])
    means = t.groupby(["system", "id"])["correct"].mean().unstack("system")
    d = (means["a"] - means["b"]).to_numpy()
    row = out[(out.system_a == "a") & (out.test == "t")].iloc[0]
    np.testing.assert_allclose(row.statistic, d.mean() / (d.std(ddof=1) / np.sqrt(d.size)), rtol=1e-12)
    assert row.n == 50
    assert "two-level" in out[out.test == "bootstrap"]["detail"].iloc[0]
    with pytest.raises(InputError, match="cannot be combined"):
        scorebench.compare(t, "accuracy", repeats="sample", cluster="id")


def test_compare_mde_column(rng):
    t = _correct(rng, n=100)
    out = scorebench.compare(t, "accuracy", baseline="b", tests=["t"], power=0.9)
    wide = t.pivot(index="id", columns="system", values="correct")
    d = (wide["a"] - wide["b"]).to_numpy()
    expected = minimum_detectable_effect(d.std(ddof=1) / 10, power=0.9, df=99)
    np.testing.assert_allclose(out[out.system_a == "a"]["mde"].iloc[0], expected, rtol=1e-12)


# --- CLI ---------------------------------------------------------------------------------


@pytest.fixture
def correct_csv(tmp_path, rng):
    t = _correct(rng, n=80)
    t["passage"] = t["id"] // 4
    path = tmp_path / "t.csv"
    t.to_csv(path, index=False)
    return path


def _run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_cli_compare_mcnemar(correct_csv, tmp_path):
    out = tmp_path / "out.csv"
    res = subprocess.run([sys.executable, "-m", "scorebench.cli", "compare", str(correct_csv), "-m", "accuracy",
                          "--test", "mcnemar", "--baseline", "a", "-o", str(out)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    table = scorebench.read_table(out)
    assert set(table["test"]) == {"mcnemar"} and set(table["system_b"]) == {"a"}
    expected = scorebench.compare(pd.read_csv(correct_csv), "accuracy", baseline="a", tests=["mcnemar"])
    np.testing.assert_allclose(table["p_value"], expected["p_value"], rtol=1e-9)


def test_cli_compare_cluster_and_repeats(correct_csv, tmp_path):
    res = _run("compare", correct_csv, "-m", "accuracy", "--baseline", "a", "--cluster", "passage",
               "--test", "t")
    assert res.exit_code == 0, res.output
    assert "CR1" in res.output and "n_clusters" in res.output
    t = pd.read_csv(correct_csv)
    rep = pd.concat([t.assign(sample=0), t.assign(sample=1)])
    path = tmp_path / "rep.csv"
    rep.to_csv(path, index=False)
    res = _run("compare", path, "-m", "accuracy", "--repeats", "sample", "--test", "bootstrap", "--bootstrap", "100")
    assert res.exit_code == 0 and "two-level" in res.output, res.output
    bad = _run("compare", correct_csv, "-m", "accuracy", "--cluster", "nope")
    assert bad.exit_code == 2 and "nope" in bad.output


def test_cli_evaluate_accuracy_wilson(correct_csv):
    res = _run("evaluate", correct_csv, "-m", "accuracy")
    assert res.exit_code == 0, res.output
    jeff = _run("evaluate", correct_csv, "-m", "accuracy", "--proportion-interval", "jeffreys")
    assert jeff.exit_code == 0 and jeff.output != res.output
    from statsmodels.stats.proportion import proportion_confint

    k = int(pd.read_csv(correct_csv).query("system == 'a'")["correct"].sum())
    assert f"{proportion_confint(k, 80, method='wilson')[0]:.4f}"[:5] in res.output


def test_cli_horizon_error(tmp_path):
    t = pd.DataFrame({"system": np.repeat(["a", "b"], 3), "id": np.tile(range(3), 2), "y": 0.0,
                      "mu": [0.0, 0.2, -0.5, 0.3, 0.1, 0.2], "sigma": 1.0})
    path = tmp_path / "f.csv"
    t.to_csv(path, index=False)
    res = _run("compare", path, "-m", "crps_normal", "--test", "diebold_mariano", "--horizon", "3")
    assert res.exit_code == 2 and "horizon 3 must be smaller" in res.output
