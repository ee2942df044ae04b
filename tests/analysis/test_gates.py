"""Decision gates: superiority, non-inferiority, equivalence (TOST) against statsmodels and by simulation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from scorebench.cli import cli
from scorebench.core.errors import InputError
from scorebench.analysis.gates import gate, paired_gate


def _pairs(n=300, p_fix=0.10, p_reg=0.12, seed=0, base_acc=0.7):
    """Two systems' 0/1 outcomes: the candidate fixes p_fix and breaks p_reg of the items."""
    rng = np.random.default_rng(seed)
    base = (rng.random(n) < base_acc).astype(int)
    u = rng.random(n)
    cand = base.copy()
    cand[(base == 0) & (u < p_fix / (1 - base_acc))] = 1
    cand[(base == 1) & (u < p_reg / base_acc)] = 0
    return base, cand


def _table(base, cand, names=("base", "cand")):
    n = len(base)
    return pd.DataFrame({"system": [names[0]] * n + [names[1]] * n, "id": list(range(n)) * 2,
                         "correct": np.r_[base, cand]})


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_tost_matches_statsmodels_ttost_paired(seed):
    from statsmodels.stats.weightstats import ttost_paired

    rng = np.random.default_rng(seed)
    x1 = rng.normal(0.5, 1.0, 60)
    x2 = x1 + rng.normal(0.05, 0.3, 60)
    for margin in (0.05, 0.1, 0.3):
        ours = paired_gate(x2 - x1, "equivalence", margin)
        p, low, high = ttost_paired(x2, x1, -margin, margin)
        np.testing.assert_allclose(ours.p_value, p, rtol=1e-10)
        assert ours.holds == (p < 0.05)


@pytest.mark.parametrize("gate_name,shift", [("non-inferiority", -0.1), ("superiority", 0.1)])
def test_one_sided_gates_match_statsmodels(gate_name, shift):
    from statsmodels.stats.weightstats import DescrStatsW

    rng = np.random.default_rng(7)
    d = rng.normal(0.02, 0.2, 80)
    ours = paired_gate(d, gate_name, 0.1)
    stat, p, df = DescrStatsW(d).ttest_mean(shift, alternative="larger")
    np.testing.assert_allclose([ours.statistic, ours.p_value, ours.df], [stat, p, df], rtol=1e-10)
    low, _ = DescrStatsW(d).tconfint_mean(alpha=0.1)  # the one-sided 95% bound is the two-sided 90% end
    np.testing.assert_allclose(ours.ci_low, low, rtol=1e-10)


def test_cluster_robust_gate_matches_statsmodels_ols():
    import statsmodels.api as sm
    from scipy import stats

    rng = np.random.default_rng(3)
    clusters = np.repeat(np.arange(25), 4)
    d = rng.normal(0, 0.3, 25)[clusters] + rng.normal(0.05, 0.3, 100)
    ours = paired_gate(d, "non-inferiority", 0.05, clusters=clusters)
    fit = sm.OLS(d, np.ones_like(d)).fit(cov_type="cluster", cov_kwds={"groups": clusters})
    se = float(fit.bse[0])
    np.testing.assert_allclose(ours.se, se, rtol=1e-10)
    np.testing.assert_allclose(ours.p_value, stats.t.sf((d.mean() + 0.05) / se, 24), rtol=1e-10)
    assert ours.df == 24


@pytest.mark.parametrize("gate_name,truth", [("non-inferiority", -0.05), ("equivalence", 0.05),
                                             ("equivalence", -0.05), ("superiority", 0.05)])
def test_type_one_error_at_the_boundary(gate_name, truth):
    """At the edge of the null the gate holds in at most ~alpha of simulated runs."""
    reps, n, margin = 1500, 300, 0.05
    rng = np.random.default_rng(11)
    p_fix = 0.12
    p_reg = p_fix - truth
    holds = 0
    for _ in range(reps):
        u = rng.random(n)
        d = np.where(u < p_fix, 1.0, np.where(u < p_fix + p_reg, -1.0, 0.0))
        holds += paired_gate(d, gate_name, margin).holds
    rate = holds / reps
    mc = np.sqrt(0.05 * 0.95 / reps)
    assert rate <= 0.05 + 3 * mc, rate
    if gate_name != "equivalence":  # TOST is conservative at a margin; the one-sided tests are exact-ish
        assert rate >= 0.05 - 3 * mc, rate


def test_power_when_the_decision_should_hold():
    base, cand = _pairs(n=2000, p_fix=0.10, p_reg=0.10, seed=4)
    out = gate(_table(base, cand), "accuracy", baseline="base", gate="non-inferiority", margin=0.03)
    assert out.attrs["holds"] and out["holds"].item()
    assert out.attrs["verdict"].startswith("PASS non-inferiority")


def test_lower_is_better_metric_is_oriented():
    n = 200
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, n)
    good = np.where(y == 1, 0.8, 0.2)
    worse = np.clip(good + rng.normal(0.1, 0.05, n) * np.where(y == 1, -1, 1), 0.01, 0.99)
    t = pd.DataFrame({"system": ["base"] * n + ["cand"] * n, "id": list(range(n)) * 2, "y": np.r_[y, y],
                      "p": np.r_[good, worse]})
    out = gate(t, "brier_score", baseline="base", gate="non-inferiority", margin=0.001)
    assert out["mean_diff"].item() < 0  # the candidate's Brier score is higher: negative = worse
    assert not out.attrs["holds"]


def test_per_task_rows_and_intersection_union():
    base, cand = _pairs(n=400, p_fix=0.1, p_reg=0.1, seed=1)
    t = _table(base, cand)
    t2 = t.copy()
    t2.loc[t2["system"] == "cand", "correct"] = 0  # the candidate fails everything on task 2
    both = pd.concat([t.assign(task="one"), t2.assign(task="two")], ignore_index=True)
    out = gate(both, "accuracy", baseline="base", gate="non-inferiority", margin=0.05)
    assert out["task"].tolist() == ["one", "two"]
    assert not out.attrs["holds"] and "[two]" in out.attrs["verdict"]


def test_bad_input():
    base, cand = _pairs()
    t = _table(base, cand)
    with pytest.raises(InputError, match="baseline 'nope'"):
        gate(t, "accuracy", baseline="nope")
    with pytest.raises(InputError, match="margin"):
        gate(t, "accuracy", baseline="base", gate="equivalence", margin=0)
    with pytest.raises(InputError, match="margin"):
        paired_gate([0.1, 0.2], "non-inferiority", -1)
    with pytest.raises(InputError, match="gate"):
        paired_gate([0.1, 0.2], "better")
    with pytest.raises(InputError, match="not scored on the same units"):
        gate(t.iloc[:-1], "accuracy", baseline="base")


def test_cli_exit_status_and_verdict(tmp_path):
    base, cand = _pairs(n=2000, p_fix=0.10, p_reg=0.10, seed=4)
    path = tmp_path / "runs.csv"
    _table(base, cand).to_csv(path, index=False)
    runner = CliRunner()
    ok = runner.invoke(cli, ["compare", str(path), "-m", "accuracy", "--baseline", "base", "--gate",
                             "non-inferiority", "--margin", "0.03", "-o", str(tmp_path / "gate.csv")])
    assert ok.exit_code == 0, ok.output
    assert ok.stderr.strip().splitlines()[-1].startswith("PASS non-inferiority")  # the verdict is the last line
    assert pd.read_csv(tmp_path / "gate.csv")["holds"].tolist() == [True]
    bad = runner.invoke(cli, ["compare", str(path), "-m", "accuracy", "--baseline", "base", "--gate",
                              "superiority", "--margin", "0.01"])
    assert bad.exit_code == 1 and bad.stderr.strip().startswith("FAIL") and len(bad.stderr.strip().splitlines()) == 1
    err = runner.invoke(cli, ["compare", str(path), "-m", "accuracy", "--gate", "superiority"])
    assert err.exit_code == 2 and "--baseline" in err.output
