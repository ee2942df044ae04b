"""The comparison report: numbers against statsmodels, power by simulation, three input formats, three outputs."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from scorebench.cli import cli
from scorebench.core.errors import InputError
from scorebench.analysis.planner import icc, items_needed, paired_power
from scorebench.report import comparison_report, write_report

FIXTURES = Path(__file__).parents[1] / "fixtures"
EVIL = "</script><script>window.pwned=1</script>"


def _correct_table(n=300, seed=0, names=("a", "b", "c"), flip=(0.0, 0.1, 0.2), tasks=False, clusters=False):
    rng = np.random.default_rng(seed)
    base = (rng.random(n) < 0.7).astype(int)
    frames = []
    for name, p in zip(names, flip):
        y = np.where(rng.random(n) < p, 1 - base, base)
        frame = pd.DataFrame({"system": name, "id": np.arange(n), "correct": y})
        if tasks:
            frame["task"] = np.where(np.arange(n) % 2 == 0, "x", "y")
        if clusters:
            frame["passage"] = np.arange(n) // 5
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def test_mcnemar_and_corrections_match_statsmodels():
    from statsmodels.stats.contingency_tables import mcnemar
    from statsmodels.stats.multitest import multipletests

    t = _correct_table()
    for correction, method in (("holm", "holm"), ("bh", "fdr_bh")):
        rep = comparison_report(t, n_boot=100, correction=correction)
        assert rep.settings["test"] == "mcnemar" and rep.binary
        wide = t.pivot(index="id", columns="system", values="correct")
        expected = []
        for a, b in zip(rep.pairs["system_a"], rep.pairs["system_b"]):
            x, y = wide[a].to_numpy(), wide[b].to_numpy()
            table = [[np.sum((x == 1) & (y == 1)), np.sum((x == 1) & (y == 0))],
                     [np.sum((x == 0) & (y == 1)), np.sum((x == 0) & (y == 0))]]
            discordant = table[0][1] + table[1][0]
            expected.append(mcnemar(table, exact=discordant < 25, correction=True).pvalue)
        np.testing.assert_allclose(rep.pairs["p_value"], expected, rtol=1e-10)
        np.testing.assert_allclose(rep.pairs["p_adj"], multipletests(expected, method=method)[1], rtol=1e-10)


def test_cluster_robust_test_and_design_effect_match_statsmodels():
    import statsmodels.api as sm

    t = _correct_table(n=400, clusters=True, seed=2)
    rep = comparison_report(t, cluster="passage", baseline="a", n_boot=100)
    assert rep.settings["test"] == "t" and "design_effect" in rep.pairs.columns
    wide = t.pivot(index="id", columns="system", values="correct")
    groups = t.drop_duplicates("id").set_index("id")["passage"].reindex(wide.index).to_numpy()
    for _, row in rep.pairs.iterrows():
        d = (wide[row["system_a"]] - wide[row["system_b"]]).to_numpy(dtype=float)
        fit = sm.OLS(d, np.ones_like(d)).fit(cov_type="cluster", cov_kwds={"groups": groups})
        np.testing.assert_allclose(row["statistic"], fit.params[0] / fit.bse[0], rtol=1e-10)
        naive = d.std(ddof=1) / np.sqrt(d.size)
        np.testing.assert_allclose(row["design_effect"], (fit.bse[0] / naive) ** 2, rtol=1e-10)


def test_flips_list_regressions_and_fixes_with_ids():
    t = pd.DataFrame({"system": ["old"] * 4 + ["new"] * 4, "id": ["q1", "q2", "q3", "q4"] * 2,
                      "correct": [1, 1, 0, 0, 0, 1, 1, 0]})
    rep = comparison_report(t, baseline="old", n_boot=100)
    flips = rep.flips.sort_values("id")
    assert flips[["system", "reference", "id", "change"]].values.tolist() == [
        ["new", "old", "q1", "regression"], ["new", "old", "q3", "fix"]]


def test_tie_bands_follow_adjusted_tests():
    rep = comparison_report(_correct_table(n=600, flip=(0.0, 0.02, 0.45)), n_boot=100)
    bands = dict(zip(rep.scores["system"], rep.scores["band"]))
    assert bands["a"] == bands["b"] and bands["c"] == bands["a"] + 1


def test_icc_matches_statsmodels_free_anova_formula():
    rng = np.random.default_rng(0)
    g = np.repeat(np.arange(200), 4)
    x = rng.normal(0, 1, 200)[g] * np.sqrt(0.3) + rng.normal(0, 1, 800) * np.sqrt(0.7)
    assert abs(icc(x, g) - 0.3) < 0.08


def test_planned_items_reach_the_planned_power_in_simulation():
    """Items from the planner give ~80% power to a paired test on simulated right/wrong outcomes."""
    from scipy import stats

    q, delta, reps = 0.2, 0.05, 800
    n = items_needed(delta, discordance=q, power=0.8)
    rng = np.random.default_rng(5)
    p_up, p_down = (q + delta) / 2, (q - delta) / 2
    u = rng.random((reps, n))
    d = np.where(u < p_up, 1.0, np.where(u < p_up + p_down, -1.0, 0.0))
    t = d.mean(axis=1) / (d.std(axis=1, ddof=1) / np.sqrt(n))
    rate = np.mean(2 * stats.t.sf(np.abs(t), n - 1) < 0.05)
    assert abs(rate - 0.8) < 3 * np.sqrt(0.16 / reps) + 0.01, (n, rate)
    assert abs(paired_power(delta, n, discordance=q) - 0.8) < 0.01


def test_planned_items_with_clusters_reach_the_planned_power():
    """With an intra-cluster correlation the design effect keeps the planned power (cluster-robust test)."""
    from scipy import stats

    rho, m, sd, delta, reps = 0.2, 5, 1.0, 0.1, 600
    n = items_needed(delta, sd_diff=sd, icc=rho, cluster_size=m)
    g = int(np.ceil(n / m))
    naive = items_needed(delta, sd_diff=sd)
    assert n > naive
    rng = np.random.default_rng(9)
    shared = rng.normal(0, np.sqrt(rho) * sd, (reps, g, 1))
    d = delta + shared + rng.normal(0, np.sqrt(1 - rho) * sd, (reps, g, m))
    sums = (d - d.mean(axis=(1, 2), keepdims=True)).sum(axis=2)
    se = np.sqrt(g / (g - 1) * (sums ** 2).sum(axis=1)) / (g * m)
    rate = np.mean(2 * stats.t.sf(np.abs(d.mean(axis=(1, 2)) / se), g - 1) < 0.05)
    assert abs(rate - 0.8) < 3 * np.sqrt(0.16 / reps) + 0.02, (n, rate)


def test_report_from_lm_eval_helm_and_csv(tmp_path):
    lm = comparison_report(FIXTURES / "lm_eval", "sample_mean@acc,none", n_boot=100)
    assert set(lm.scores["system"]) == {"3ykv54sv", "i82qcls7"} and lm.pairs["n"].item() == 8
    helm = comparison_report(FIXTURES / "helm" / "runs", "sample_mean@exact_match", n_boot=100)
    assert helm.pairs["n"].item() == 6 and helm.settings["test"] == "mcnemar"
    csv = tmp_path / "runs.csv"
    _correct_table(tasks=True).to_csv(csv, index=False)
    rep = comparison_report(csv, n_boot=100, deltas=[0.02])
    assert rep.task_scores is not None and set(rep.task_pairs["task"]) == {"x", "y"}
    assert set(rep.flips["task"]) == {"x", "y"} and (rep.planner["delta"] == 0.02).all()
    for report in (lm, helm, rep):
        for suffix in (".html", ".md", ".tex"):
            path = write_report(report, tmp_path / f"r{suffix}")
            assert path.stat().st_size > 500


def test_two_separate_files_are_one_comparison(tmp_path):
    t = _correct_table(names=("old", "new"), flip=(0.0, 0.15))
    for name in ("old", "new"):
        t[t["system"] == name].to_csv(tmp_path / f"{name}.csv", index=False)
    result = CliRunner().invoke(cli, ["report", str(tmp_path / "old.csv"), str(tmp_path / "new.csv"), "-o",
                                      str(tmp_path / "report.html"), "--bootstrap", "100", "--baseline", "old"])
    assert result.exit_code == 0, result.output
    page = (tmp_path / "report.html").read_text()
    assert "Flipped items" in page and "Power and sample size" in page and "mcnemar" in page
    gated = CliRunner().invoke(cli, ["report", str(tmp_path / "old.csv"), str(tmp_path / "new.csv"), "-o",
                                     str(tmp_path / "report.md"), "--baseline", "old", "--gate", "non-inferiority",
                                     "--margin", "0.01", "--bootstrap", "100"])
    assert gated.exit_code in (0, 1) and gated.stderr.strip().splitlines()[-1].split()[0] in ("PASS", "FAIL")
    assert "Decision gate" in (tmp_path / "report.md").read_text()


def test_html_is_self_contained_and_escapes_names(tmp_path):
    t = _correct_table(names=("a", EVIL), flip=(0.0, 0.2))
    path = write_report(comparison_report(t, n_boot=100), tmp_path / "r.html")
    page = path.read_text()
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert EVIL not in page and "&lt;/script&gt;" in page
    assert not re.search(r"(src|href)=\"(https?:)?//", page)
    assert "<table" in page  # readable without JavaScript: plain tables


def test_latex_is_booktabs_and_escaped(tmp_path):
    t = _correct_table(names=("a_1", "b&c%"), flip=(0.0, 0.2))
    text = write_report(comparison_report(t, n_boot=100), tmp_path / "r.tex").read_text()
    assert r"\usepackage{booktabs}" in text and r"\toprule" in text and r"b\&c\%" in text and r"a\_1" in text


def test_latex_compiles(tmp_path):
    exe = shutil.which("pdflatex")
    if exe is None:
        pytest.skip("pdflatex is not installed (Debian: apt-get install texlive-latex-recommended); the LaTeX "
                    "report is not compiled here")
    t = _correct_table(names=("a_1", "b&c%", EVIL + "\\ ~^{}|$#é"), tasks=True, clusters=True)
    reports = {"csv": comparison_report(t, n_boot=100, cluster="passage", baseline="a_1", gate="equivalence",
                                        margin=0.1),
               "lm": comparison_report(FIXTURES / "lm_eval", "sample_mean@acc,none", n_boot=100)}
    for name, rep in reports.items():
        write_report(rep, tmp_path / f"{name}.tex")
        done = subprocess.run([exe, "-interaction=nonstopmode", "-halt-on-error", f"{name}.tex"], cwd=tmp_path,
                              capture_output=True, timeout=120)
        assert done.returncode == 0, done.stdout[-2000:]
        assert (tmp_path / f"{name}.pdf").stat().st_size > 1000


def test_bad_input(tmp_path):
    t = _correct_table()
    with pytest.raises(InputError, match="test"):
        comparison_report(t, test="ttest")
    with pytest.raises(InputError, match="name the metric"):
        comparison_report(t.rename(columns={"correct": "x"}).assign(y=1.0))
    with pytest.raises(InputError, match="same system and unit twice"):
        comparison_report([t, t])
    with pytest.raises(InputError, match="baseline"):
        comparison_report(t, gate="equivalence", margin=0.1)
    runner = CliRunner()
    csv = tmp_path / "t.csv"
    t.to_csv(csv, index=False)
    bad = runner.invoke(cli, ["report", str(csv), "-o", str(tmp_path / "r.pdf")])
    assert bad.exit_code == 2 and "report format" in bad.output
    missing = runner.invoke(cli, ["report", str(tmp_path / "nope.csv"), "-o", str(tmp_path / "r.html")])
    assert missing.exit_code == 2 and "nope.csv" in missing.output
