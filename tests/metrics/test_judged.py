"""Judge-corrected estimates (judged kind): ppi-python agreement, coverage, Rogan-Gladen, CLI."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import scorebench
from scorebench.core.errors import InputError
from scorebench.metrics.judged import (ppi_difference_interval, ppi_mean, ppi_mean_interval, ppi_win_rate,
                                       rogan_gladen, rogan_gladen_interval, stratified_ppi_interval,
                                       stratified_ppi_mean)


def _judged(rng, n_lab, n_unl, *, accuracy=0.8, rate=0.6, bias=0.15):
    """Human 0/1 labels and a biased judge: it passes wrong answers more often than it fails right ones."""
    y = (rng.random(n_lab + n_unl) < rate).astype(float)
    flip = np.where(y == 1, rng.random(y.size) > accuracy + bias, rng.random(y.size) > accuracy - bias)
    f = np.where(flip, 1 - y, y)
    human = y.copy()
    human[n_lab:] = np.nan
    return f, human, y


@pytest.mark.parametrize("lam", [None, 1.0, 0.0, 0.4])
def test_ppi_mean_agrees_with_ppi_python_on_random_data(lam):
    ppi_py = pytest.importorskip("ppi_py")
    rng = np.random.default_rng(0)
    for n, N in [(30, 300), (200, 1000), (50, 5)]:
        f = rng.normal(size=n + N)
        y = f * 0.7 + rng.normal(scale=0.6, size=n + N) + 0.3
        human = np.r_[y[:n], np.full(N, np.nan)]
        est, low, high = ppi_mean_interval(f, human, ci=0.9, lam=lam)
        ref_est = float(np.squeeze(ppi_py.ppi_mean_pointestimate(y[:n], f[:n], f[n:], lam=lam)))
        ref_low, ref_high = (float(np.squeeze(v)) for v in ppi_py.ppi_mean_ci(y[:n], f[:n], f[n:], alpha=0.1, lam=lam))
        assert est == pytest.approx(ref_est, rel=1e-10, abs=1e-12)
        assert (low, high) == pytest.approx((ref_low, ref_high), rel=1e-9, abs=1e-12)
        assert ppi_mean(f, human, lam=lam) == pytest.approx(ref_est, rel=1e-10, abs=1e-12)


def test_ppi_on_binary_labels_agrees_with_ppi_python_and_lam_zero_is_the_human_mean():
    ppi_py = pytest.importorskip("ppi_py")
    f, human, _ = _judged(np.random.default_rng(1), 80, 800)
    n = 80
    y = human[:n]
    for lam in (None, 1.0):
        ref = ppi_py.ppi_mean_ci(y, f[:n], f[n:], alpha=0.05, lam=lam)
        assert ppi_mean_interval(f, human, lam=lam)[1:] == pytest.approx(tuple(float(np.squeeze(v)) for v in ref),
                                                                          rel=1e-9)
    assert ppi_mean(f, human, lam=0) == pytest.approx(y.mean())


def test_ppi_difference_and_stratified_closed_forms():
    rng = np.random.default_rng(2)
    fa, ha, _ = _judged(rng, 60, 400)
    fb, hb, _ = _judged(rng, 60, 400, rate=0.4)
    d = ppi_difference_interval(fa, ha, fb, hb, lam=1)
    assert d == pytest.approx(ppi_mean_interval(fa - fb, ha - hb, lam=1))
    assert d[0] == pytest.approx((fa - fb)[60:].mean() + ((ha - hb) - (fa - fb))[:60].mean())
    stratum = np.where(np.arange(460) % 3 == 0, 1, 0)
    est, low, high = stratified_ppi_interval(fa, ha, stratum, lam=1)
    parts = [(np.mean(stratum == k), ppi_mean_interval(fa[stratum == k], ha[stratum == k], lam=1)) for k in (0, 1)]
    assert est == pytest.approx(sum(w * p[0] for w, p in parts))
    half = np.sqrt(sum((w * (p[2] - p[0])) ** 2 for w, p in parts))
    assert high - est == pytest.approx(half)
    assert stratified_ppi_mean(fa, ha, stratum, lam=1) == pytest.approx(est)


def test_rogan_gladen_closed_form_and_refusals():
    judge = np.array([1, 1, 0, 0, 1, 1, 1, 0, 1, 1.0])
    human = np.array([1, 0, 0, 0, 1, 1, np.nan, np.nan, np.nan, np.nan])
    q, se, sp = 0.7, 1.0, 2 / 3
    assert rogan_gladen(judge, human) == pytest.approx((q + sp - 1) / (se + sp - 1))
    with pytest.raises(InputError, match="chance"):
        rogan_gladen(np.array([0, 1, 1, 0, 1.0]), np.array([1, 0, 1, 0, np.nan]))
    with pytest.raises(InputError, match="both"):
        rogan_gladen(judge, np.where(np.isnan(human), np.nan, 1.0))
    with pytest.raises(InputError, match="0 or 1"):
        rogan_gladen(judge * 0.5, human)
    with pytest.raises(InputError, match="preference"):
        ppi_win_rate(judge * 0.3, human)


def test_coverage_naive_judge_interval_misses_and_the_corrected_ones_cover():
    """300 simulated evaluations (100 human labels, 1,000 judge labels, a judge biased towards
    passing): the judge-only Wilson interval almost never covers the true pass rate; the PPI++
    and Rogan-Gladen intervals cover it at >= 0.94 (nominal 0.95)."""
    from scorebench.analysis.stats_tests import proportion_interval

    rng = np.random.default_rng(7)
    rate = 0.6
    hits = {"naive": 0, "ppi": 0, "rg": 0}
    reps = 300
    for _ in range(reps):
        f, human, _ = _judged(rng, 100, 1000, rate=rate)
        low, high = proportion_interval(float(f.sum()), f.size, 0.95, "wilson")
        hits["naive"] += low <= rate <= high
        hits["ppi"] += ppi_mean_interval(f, human)[1] <= rate <= ppi_mean_interval(f, human)[2]
        _, low, high = rogan_gladen_interval(f, human)
        hits["rg"] += low <= rate <= high
    cover = {k: v / reps for k, v in hits.items()}
    assert cover["naive"] < 0.5 and cover["ppi"] >= 0.94 and cover["rg"] >= 0.94, cover


def test_evaluate_bootstrap_of_ppi_covers_a_judge_corrected_win_rate():
    """The evaluate engine's interval (rows resampled, labelled and unlabelled together) for
    250 simulated systems, each a table of 150 human + 500 judge preferences, against the
    judge-only mean's. Measured at 400 systems: 0.9425 (bootstrap), 0.955 (normal interval)."""
    rng = np.random.default_rng(8)
    frames = []
    for s in range(250):
        f, human, _ = _judged(rng, 150, 500, rate=0.55)
        frames.append(pd.DataFrame({"system": f"s{s}", "judge": f, "human": human}))
    table = pd.concat(frames)
    scores = scorebench.evaluate(table, "ppi_win_rate", n_boot=200, seed=1)
    cover = float(((scores["ci_low"] <= 0.55) & (0.55 <= scores["ci_high"])).mean())
    assert cover >= 0.93, cover
    naive = scorebench.evaluate(table.assign(correct=table["judge"]), "accuracy", n_boot=20, kind="correct")
    assert float(((naive["ci_low"] <= 0.55) & (0.55 <= naive["ci_high"])).mean()) < 0.5


def test_evaluate_matches_the_array_functions_and_stratified_needs_labels_per_stratum():
    rng = np.random.default_rng(3)
    f, human, _ = _judged(rng, 40, 200)
    t = pd.DataFrame({"judge": f, "human": human, "stratum": np.where(np.arange(240) % 2, "a", "b")})
    s = scorebench.evaluate(t, ["ppi_mean", "stratified_ppi_mean", "rogan_gladen"], n_boot=0).set_index("metric")
    assert s.loc["ppi_mean", "value"] == pytest.approx(ppi_mean(f, human))
    assert s.loc["rogan_gladen", "value"] == pytest.approx(rogan_gladen(f, human))
    bad = t.assign(human=np.where(t["stratum"] == "a", np.nan, t["human"]))
    with pytest.raises(InputError, match="stratum"):
        scorebench.evaluate(bad, "stratified_ppi_mean", n_boot=0)
    with pytest.raises(InputError, match="labelled"):
        scorebench.evaluate(t.assign(human=np.nan), "ppi_mean", n_boot=0)


def test_cli_judge_corrected_win_rate(tmp_path):
    from scorebench.cli import cli

    rng = np.random.default_rng(4)
    f, human, _ = _judged(rng, 50, 300)
    path = tmp_path / "judged.csv"
    pd.DataFrame({"judge": f, "human": human}).to_csv(path, index=False)
    result = CliRunner().invoke(cli, ["evaluate", str(path), "-m", "ppi_win_rate", "-m", "rogan_gladen"])
    assert result.exit_code == 0, result.output
    assert "ppi_win_rate" in result.output
    pd.DataFrame({"judge": f, "human": human * 3}).to_csv(path, index=False)
    result = CliRunner().invoke(cli, ["evaluate", str(path), "-m", "ppi_win_rate"])
    assert result.exit_code != 0 and "preference" in result.output
