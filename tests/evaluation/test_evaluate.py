"""The evaluate engine: values, intervals, grouping, determinism, NaN policy, errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

import scorebench
from scorebench.core import stats
from scorebench.core.errors import InputError


def _binary(rng, n=300, systems=("a", "b")):
    y = rng.integers(0, 2, n)
    frames = []
    for k, s in enumerate(systems):
        p = np.clip(np.where(y == 1, 0.7 - 0.1 * k, 0.3 + 0.1 * k) + rng.normal(0, 0.05, n), 0, 1)
        frames.append(pd.DataFrame({"system": s, "id": np.arange(n), "y": y, "p": p}))
    return pd.concat(frames, ignore_index=True)


def test_values_are_group_means_of_contributions(rng):
    t = _binary(rng)
    scores = scorebench.evaluate(t, ["brier_score", "log_score"], n_boot=100)
    for (system, name), row in scores.set_index(["system", "metric"]).iterrows():
        sub = t[t.system == system]
        expected = scorebench.metric(name).fn(sub.y.to_numpy(), sub.p.to_numpy()).mean()
        assert row.value == pytest.approx(expected, rel=1e-12)
        assert row.ci_low <= row.value <= row.ci_high
        assert row.n == len(sub)
    assert list(scores.columns) == ["system", "metric", "value", "ci_low", "ci_high", "n"]


def test_same_seed_identical_other_seed_different(rng):
    t = _binary(rng)
    a = scorebench.evaluate(t, "brier_score", seed=3)
    b = scorebench.evaluate(t, "brier_score", seed=3)
    c = scorebench.evaluate(t, "brier_score", seed=4)
    pd.testing.assert_frame_equal(a, b)
    assert not np.allclose(a.ci_low, c.ci_low)
    assert a.attrs["seed"] == 3 and "bootstrap" in a.attrs["interval"]


def test_adding_a_metric_does_not_move_another_interval(rng):
    t = _binary(rng)
    alone = scorebench.evaluate(t, "brier_score", seed=1)
    both = scorebench.evaluate(t, ["log_score", "brier_score"], seed=1)
    pd.testing.assert_frame_equal(alone.reset_index(drop=True),
                                  both[both.metric == "brier_score"].reset_index(drop=True))


def test_bootstrap_interval_covers_like_normal_theory(rng):
    x = rng.gamma(2.0, size=4000)
    res = stats.bootstrap_means(x, 2000, np.random.default_rng(0))
    assert res.method == "multinomial"
    assert res.means.std() == pytest.approx(x.std() / np.sqrt(x.size), rel=0.08)


def test_stratified_bootstrap_matches_exact_distribution(rng):
    x = rng.lognormal(size=200_000)
    exact = stats._exact_means(x, 400, np.random.default_rng(1))
    strat = stats._stratified_means(x, 4000, np.random.default_rng(2))
    # Same distribution to Monte Carlo error: compare spreads and central quantiles.
    assert strat.std() == pytest.approx(exact.std(), rel=0.12)
    assert np.median(strat) == pytest.approx(np.median(exact), abs=2 * exact.std() / np.sqrt(400) * 3)
    assert sps.ks_2samp(exact, strat).pvalue > 1e-3


def test_grouping_by_task_and_label_column(rng):
    t = _binary(rng)
    t["task"] = np.where(t.id % 2 == 0, "even", "odd")
    t["dataset"] = np.where(t.id < 150, "d1", "d2")
    scores = scorebench.evaluate(t, "brier_score", n_boot=0)
    assert set(zip(scores.system, scores.task)) == {(s, k) for s in "ab" for k in ("even", "odd")}
    by_ds = scorebench.evaluate(t, "brier_score", by="dataset", n_boot=0)
    assert list(by_ds.dataset) == ["d1", "d2"]
    whole = scorebench.evaluate(t, "brier_score", by=[], n_boot=0)
    assert len(whole) == 1 and whole.n.iloc[0] == len(t)
    with pytest.raises(InputError, match="by: column"):
        scorebench.evaluate(t, "brier_score", by="nope")


def test_n_boot_zero_gives_no_interval(rng):
    scores = scorebench.evaluate(_binary(rng), "brier_score", n_boot=0)
    assert scores.ci_low.isna().all() and scores.attrs["interval"] == "none"


def test_nan_policy(rng):
    t = _binary(rng, n=20)
    t.loc[3, "p"] = np.nan
    with pytest.raises(InputError, match=r"column 'p': NaN .* data row 4"):
        scorebench.evaluate(t, "brier_score")
    omit = scorebench.evaluate(t, "brier_score", nan_policy="omit", n_boot=0)
    assert omit.set_index("system").n["a"] == 19
    prop = scorebench.evaluate(t, "brier_score", nan_policy="propagate", n_boot=0)
    assert np.isnan(prop.set_index("system").value["a"])
    assert np.isfinite(prop.set_index("system").value["b"])


@pytest.mark.parametrize("column, value, message", [
    ("p", 1.5, r"column 'p': value 1.5 outside \[0, 1\]"),
    ("p", -0.1, "outside"),
    ("y", 2, "expected binary outcomes"),
    ("p", "high", "expected numbers"),
])
def test_binary_validation_names_column_and_row(rng, column, value, message):
    t = _binary(rng, n=10)
    t[column] = t[column].astype(object)
    t.loc[4, column] = value
    with pytest.raises(InputError, match=message):
        scorebench.evaluate(t, "brier_score")


def test_missing_columns_and_empty_tables():
    with pytest.raises(InputError, match=r"missing column\(s\) \['p'\]"):
        scorebench.evaluate(pd.DataFrame({"y": [1]}), "brier_score")
    with pytest.raises(InputError, match="no rows"):
        scorebench.evaluate(pd.DataFrame({"y": [], "p": []}), "brier_score")
    with pytest.raises(InputError, match="duplicate ids"):
        scorebench.evaluate(pd.DataFrame({"id": [1, 1], "y": [1, 0], "p": [0.5, 0.5]}), "brier_score")


def test_kind_mismatch_and_unknown_options(rng):
    t = _binary(rng)
    with pytest.raises(InputError, match="different table kinds"):
        scorebench.evaluate(t, ["brier_score", "crps_normal"])
    with pytest.raises(InputError, match="do not apply to kind 'binary'"):
        scorebench.evaluate(t, "brier_score", qrels=t)
    with pytest.raises(InputError, match="requested more than once"):
        scorebench.evaluate(t, ["brier_score", "brier_score"])
    with pytest.raises(InputError, match="n_boot"):
        scorebench.evaluate(t, "brier_score", n_boot=-1)
    with pytest.raises(InputError, match="ci"):
        scorebench.evaluate(t, "brier_score", ci=1.5)


def test_integer_inputs_are_not_truncated():
    t = pd.DataFrame({"y": [3, 5], "mu": [2, 2], "sigma": [1, 2]})  # all integers
    scores = scorebench.evaluate(t, "crps_normal", n_boot=0)
    expected = scorebench.metric("crps_normal").fn(np.array([3.0, 5.0]), np.array([2.0, 2.0]),
                                                    np.array([1.0, 2.0])).mean()
    assert scores.value.iloc[0] == pytest.approx(expected, rel=1e-14)
    with pytest.raises(InputError, match="sigma"):
        scorebench.evaluate(t.assign(sigma=[1, 0]), "crps_normal", n_boot=0)


def test_multiclass_validation_and_renormalize():
    t = pd.DataFrame({"y": ["cat", "dog", "cat"], "p_cat": [0.7, 0.2, 0.5], "p_dog": [0.3, 0.8, 0.4]})
    with pytest.raises(InputError, match="sum to 0.9 in data row 3"):
        scorebench.evaluate(t, "brier_score_multiclass")
    ok = scorebench.evaluate(t, "brier_score_multiclass", renormalize=True, n_boot=0)
    assert np.isfinite(ok.value).all()
    loose = scorebench.evaluate(t, "brier_score_multiclass", atol=0.2, n_boot=0)
    assert np.isfinite(loose.value).all()
    with pytest.raises(InputError, match="label 'bird' in data row 2 is not among the classes"):
        scorebench.evaluate(t.assign(y=["cat", "bird", "cat"]), "brier_score_multiclass", renormalize=True)


def test_ensemble_long_and_wide_agree(rng):
    n, m = 30, 8
    ens = rng.normal(size=(n, m))
    y = rng.normal(size=n)
    wide = pd.DataFrame({"id": np.arange(n), "y": y, **{f"m{j}": ens[:, j] for j in range(m)}})
    long = wide.melt(id_vars=["id", "y"], var_name="member", value_name="value")
    a = scorebench.evaluate(wide, "crps_ensemble", n_boot=0)
    b = scorebench.evaluate(long, "crps_ensemble", n_boot=0)
    assert a.value.iloc[0] == pytest.approx(b.value.iloc[0], rel=1e-12)


def test_quantile_columns_in_any_order_and_interval_errors(rng):
    y = rng.normal(size=40)
    t = pd.DataFrame({"y": y, "q0.9": y + 1, "q0.1": y - 1, "q0.5": y})
    s1 = scorebench.evaluate(t, "quantile_score", n_boot=0).value.iloc[0]
    s2 = scorebench.evaluate(t[["y", "q0.1", "q0.5", "q0.9"]], "quantile_score", n_boot=0).value.iloc[0]
    assert s1 == pytest.approx(s2, rel=1e-14)
    bad = pd.DataFrame({"y": [0.0, 1.0], "lower": [-1.0, 2.0], "upper": [1.0, 1.5]})
    with pytest.raises(InputError, match="lower > upper in data row 2"):
        scorebench.evaluate(bad, "interval_score")


def test_set_level_metric_resamples_rows(rng):
    t = _binary(rng, n=400)
    scores = scorebench.evaluate(t, "ece", n_boot=50)
    assert (scores.ci_low <= scores.value).all() and (scores.value <= scores.ci_high + 1e-12).all()
    assert "row resampling" in scores.attrs["bootstrap"]


def test_accessor_and_path_input(rng, tmp_path):
    t = _binary(rng)
    path = tmp_path / "t.parquet"
    scorebench.write_table(t, path)
    a = t.scorebench.evaluate("brier_score", n_boot=20)
    b = scorebench.evaluate(str(path), "brier_score", n_boot=20)
    pd.testing.assert_frame_equal(a, b)


# --- compare ---------------------------------------------------------------------------


def test_compare_pairs_tests_and_corrections(rng):
    t = _binary(rng, n=200, systems=("a", "b", "c"))
    out = scorebench.compare(t, "brier_score", n_boot=300, n_perm=500)
    assert set(out.test) == {"bootstrap", "permutation", "t", "diebold_mariano"}
    assert len(out) == 3 * 4
    from statsmodels.stats.multitest import multipletests

    for test, sub in out.groupby("test"):
        assert np.allclose(sub.p_holm, multipletests(sub.p_value, method="holm")[1])
        assert np.allclose(sub.p_bh, multipletests(sub.p_value, method="fdr_bh")[1])
    ab = out[(out.system_a == "a") & (out.system_b == "b") & (out.test == "t")].iloc[0]
    wide = t.pivot(index="id", columns="system", values="p")
    y = t[t.system == "a"].set_index("id").y
    d = (wide["a"] - y) ** 2 - (wide["b"] - y) ** 2
    assert ab.mean_diff == pytest.approx(d.mean(), rel=1e-12)
    assert ab.p_value == pytest.approx(sps.ttest_rel((wide["a"] - y) ** 2, (wide["b"] - y) ** 2).pvalue,
                                       rel=1e-9)
    assert ab.better == "a"


def test_compare_baseline_and_unpaired_error(rng):
    t = _binary(rng, n=50, systems=("a", "b", "c"))
    out = scorebench.compare(t, "brier_score", baseline="c", tests=["t"])
    assert set(zip(out.system_a, out.system_b)) == {("a", "c"), ("b", "c")}
    with pytest.raises(InputError, match="baseline 'zz'"):
        scorebench.compare(t, "brier_score", baseline="zz")
    with pytest.raises(InputError, match="not scored on the same units"):
        scorebench.compare(t.drop(index=[0]), "brier_score")
    with pytest.raises(InputError, match="set-level"):
        scorebench.compare(t, "ece")


def test_diebold_mariano_matches_manual_hac(rng):
    d = rng.normal(0.1, 1, 300) + 0.5 * np.r_[0, rng.normal(size=299)]
    res = stats.diebold_mariano(d, horizon=3)
    n, h = d.size, 3
    dc = d - d.mean()
    gamma = [dc[k:] @ dc[: n - k] / n for k in range(h)]
    lrv = gamma[0] + 2 * sum((1 - k / h) * gamma[k] for k in range(1, h))
    dm = d.mean() / np.sqrt(lrv / n)
    hln = np.sqrt((n + 1 - 2 * h + h * (h - 1) / n) / n)
    assert res.statistic == pytest.approx(dm * hln, rel=1e-10)
