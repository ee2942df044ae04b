"""What each interval covers: the population value or the estimator's mean at this n (issue 29, item 6).

Coverage of the *population* value is simulated (small designs, fixed seeds). Biased plug-in
estimators (ECE, FID) are recorded as covering the estimator's mean at this n, and their
intervals miss the population value far more often than the nominal 5%; the estimators whose
records say ``covers="population"`` (the debiased l2 calibration error, FID∞, the unbiased KID)
cover it near the nominal level.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import linalg

import scorebench
from scorebench.metrics.generative import fid, fid_infinity, fid_infinity_details, mmd2_unbiased
from scorebench.core.registry import metric


def _evaluate(table, metrics, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return scorebench.evaluate(table, metrics, **kw)


def test_registry_states_what_each_interval_covers():
    assert metric("l2_calibration_error").interval_covers == "population"
    assert metric("kid").interval_covers == "population"
    assert metric("fid_infinity").interval_covers == "population"
    assert metric("fid").interval_covers == "estimator_mean"
    assert metric("ece").interval_covers == "estimator_mean"
    assert metric("brier_score").interval_covers == "population"  # mean of per-row scores
    table = scorebench.list_metrics()
    assert table["interval_covers"].notna().all()
    assert table.set_index("name").loc["fid", "interval_covers"].startswith("the estimator's mean")


def test_cli_metrics_shows_what_intervals_cover():
    from click.testing import CliRunner

    from scorebench.cli import cli

    res = CliRunner().invoke(cli, ["metrics", "--family", "generative", "--format", "csv"])
    assert res.exit_code == 0, res.output
    table = pd.read_csv(__import__("io").StringIO(res.output)).set_index("name")
    assert table.loc["fid_infinity", "interval_covers"].startswith("the population value")
    assert table.loc["fid", "interval_covers"].startswith("the estimator's mean at this n")
    res = CliRunner().invoke(cli, ["metrics", "--family", "generative"])
    assert res.exit_code == 0 and "estimator mean at this n" in res.output and "population value" in res.output


def _binned_truth(f, n_bins=15, grid=200_001):
    """Population binned l2 calibration error and ECE of p ~ U(0, 1), P(y = 1 | p) = f(p)."""
    p = np.linspace(0, 1, grid)
    q = f(p)
    ids = np.minimum((p * n_bins).astype(int), n_bins - 1)
    gaps = np.array([p[ids == b].mean() - q[ids == b].mean() for b in range(n_bins)])
    w = np.bincount(ids, minlength=n_bins) / grid
    return float(np.sqrt((w * gaps ** 2).sum())), float((w * np.abs(gaps)).sum())


def test_debiased_calibration_error_covers_the_population_value_and_ece_does_not():
    f = lambda p: np.clip(p + 0.08 * np.sin(2 * np.pi * p), 0, 1)  # noqa: E731
    l2_true, ece_true = _binned_truth(f)
    rng = np.random.default_rng(1)
    reps, hits = 150, {"l2_calibration_error": 0, "ece": 0}
    for r in range(reps):
        p = rng.uniform(size=300)
        y = (rng.uniform(size=300) < f(p)).astype(int)
        out = _evaluate(pd.DataFrame({"y": y, "p": p}), ["l2_calibration_error", "ece"], n_boot=200, seed=r)
        for row in out.itertuples():
            truth = l2_true if row.metric == "l2_calibration_error" else ece_true
            hits[row.metric] += row.ci_low <= truth <= row.ci_high
    assert hits["l2_calibration_error"] / reps >= 0.85  # 0.90 here (nominal 0.95)
    assert hits["ece"] / reps <= 0.70  # 0.49 here: the interval is around the biased plug-in


def test_perfectly_calibrated_forecaster():
    rng = np.random.default_rng(2)
    low_l2, low_ece = [], []
    for r in range(40):
        p = rng.uniform(size=500)
        y = (rng.uniform(size=500) < p).astype(int)
        out = _evaluate(pd.DataFrame({"y": y, "p": p}), ["l2_calibration_error", "ece"], n_boot=200,
                        seed=r).set_index("metric")
        low_l2.append(out.loc["l2_calibration_error", "ci_low"])
        low_ece.append(out.loc["ece", "ci_low"])
    assert np.mean(np.array(low_l2) <= 1e-12) >= 0.85  # the debiased interval reaches 0
    assert np.mean(np.array(low_ece) <= 1e-12) <= 0.1  # the plug-in ECE's almost never does


def _gaussians(d):
    rng = np.random.default_rng(0)
    a = rng.normal(size=(d, d)) / np.sqrt(d)
    c2 = a @ a.T + 0.5 * np.eye(d)
    mu2 = np.full(d, 0.1)
    true = float(mu2 @ mu2 + np.trace(np.eye(d) + c2 - 2 * linalg.sqrtm(c2).real))
    return np.linalg.cholesky(c2), mu2, true


def _features(x, y):
    d = x.shape[1]
    df = pd.DataFrame(np.vstack([x, y]), columns=[f"f{i}" for i in range(d)])
    df.insert(0, "system", ["real"] * len(x) + ["gen"] * len(y))
    return df


def test_fid_infinity_is_nearly_unbiased_where_fid_is_not():
    chol, mu2, true = _gaussians(32)
    rng = np.random.default_rng(3)
    plug, inf = [], []
    for _ in range(12):
        x, y = rng.normal(size=(500, 32)), rng.normal(size=(500, 32)) @ chol.T + mu2
        plug.append(fid(x, y))
        inf.append(fid_infinity(x, y))
    plug, inf = np.array(plug), np.array(inf)
    se = inf.std(ddof=1) / np.sqrt(len(inf))
    assert plug.mean() - true > 4 * plug.std(ddof=1) / np.sqrt(len(plug))  # bias +1.4 at 500 + 500
    assert abs(inf.mean() - true) < 3.5 * se + 0.05


def test_fid_infinity_interval_covers_the_population_distance():
    chol, mu2, true = _gaussians(16)
    rng = np.random.default_rng(4)
    reps, hits = 36, {"fid": 0, "fid_infinity": 0}
    for r in range(reps):
        x, y = rng.normal(size=(300, 16)), rng.normal(size=(300, 16)) @ chol.T + mu2
        out = _evaluate(_features(x, y), ["fid", "fid_infinity"], n_boot=40, seed=r)
        for row in out.itertuples():
            hits[row.metric] += row.ci_low <= true <= row.ci_high
    assert hits["fid_infinity"] / reps >= 0.84  # 0.93 in a 60-replicate run
    assert hits["fid"] / reps <= 0.65  # 0.40


def test_kid_interval_covers_the_population_mmd():
    d = 8
    chol, mu2, _ = _gaussians(d)
    rng = np.random.default_rng(5)
    # the population MMD^2: the unbiased estimator averaged over large independent samples
    true = np.mean([mmd2_unbiased(rng.normal(size=(1500, d)), rng.normal(size=(1500, d)) @ chol.T + mu2)
                    for _ in range(6)])
    reps, hits = 40, 0
    for r in range(reps):
        x, y = rng.normal(size=(200, d)), rng.normal(size=(200, d)) @ chol.T + mu2
        out = _evaluate(_features(x, y), [metric("kid", n_subsets=5, subset_size=200)], n_boot=40, seed=r)
        hits += out["ci_low"].iloc[0] <= true <= out["ci_high"].iloc[0]
    assert hits / reps >= 0.82


def test_fid_infinity_details_and_errors():
    rng = np.random.default_rng(6)
    x, y = rng.normal(size=(100, 3)), rng.normal(1.0, 1.0, size=(100, 3))
    r = fid_infinity_details(x, y, n_points=4, min_fraction=0.5, seed=1)
    np.testing.assert_allclose(r.fractions, [0.5, 2 / 3, 5 / 6, 1.0])
    assert r.fids[-1] == pytest.approx(fid(x, y))
    assert fid_infinity(x, y, seed=1) == fid_infinity(x, y, seed=1)
    from scorebench.core.errors import InputError

    with pytest.raises(InputError, match="min_fraction"):
        fid_infinity(x, y, min_fraction=1.5)
    with pytest.raises(InputError, match="at least 3"):
        fid_infinity(x[:4], y[:4], min_fraction=0.5)
