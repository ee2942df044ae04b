"""Rankings that mix coverage say so; counts print as counts (issue 35 item 8, issue 29 item 7)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import scorebench
from scorebench.aggregate import MixedCoverageWarning, summarize_bootstrap
from scorebench.cli import cli
from scorebench.io.tables import format_column, format_value
from scorebench.leaderboard.board import digits_for


def _wide(missing: bool) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    t = pd.DataFrame(rng.uniform(size=(5, 6)), index=list("abcde"), columns=[f"t{j}" for j in range(6)])
    if missing:
        t.loc["a", ["t0", "t1", "t2"]] = np.nan  # a ran 3 of 6 tasks
        t.loc["b", ["t5"]] = np.nan  # b ran 5 of 6
    return t


@pytest.mark.parametrize("method, params", [("mean", {"missing": "available"}), ("borda", {"missing": "zero"}),
                                            ("borda", {"missing": "complete"}), ("copeland", {}), ("win_rate", {})])
def test_every_method_warns_on_mixed_coverage(method, params):
    with pytest.warns(MixedCoverageWarning, match=r"2 of 5 systems lack scores \(they ran 3–5 of the 6 task "
                                                  r"columns; coverage 50%–83%\)"):
        r = scorebench.aggregate(_wide(True), method, n_boot=0, **params)
    assert "2 of 5 systems" in r.warning and "2 of 5 systems" in r.details["coverage_warning"]


def test_no_warning_when_all_systems_ran_the_same_tasks():
    with warnings.catch_warnings():
        warnings.simplefilter("error", MixedCoverageWarning)
        r = scorebench.aggregate(_wide(False), "borda", n_boot=0)
    assert r.warning is None


def test_cli_warns_once_and_prints_counts_as_integers(tmp_path):
    path = tmp_path / "wide.csv"
    _wide(True).rename_axis("system").reset_index().to_csv(path, index=False)
    res = CliRunner().invoke(cli, ["aggregate", str(path), "-m", "copeland", "-m", "mean",
                                   "-p", "missing=available"])
    assert res.exit_code == 0, res.output
    assert res.output.count("systems ranked on different tasks: 2 of 5") == 1
    body = [line.split() for line in res.output.splitlines() if line.split()[:1] in (["borda"], ["copeland"])]
    assert body and all("." not in row[2] or row[2].endswith(".5") for row in body), body  # score column
    means = [line.split() for line in res.output.splitlines() if line.split()[:1] == ["mean"]]
    assert all(len(row[2].split(".")[1]) == 4 for row in means)


def test_discrete_statistics_get_order_statistic_interval_ends():
    rng = np.random.default_rng(0)
    boot = np.column_stack([rng.integers(0, 40, 200) / 2.0, rng.normal(size=200)])
    out = summarize_bootstrap(boot, 0.95)
    lo, hi, med = out["ci_low"][0], out["ci_high"][0], out["score_median"][0]
    for v in (lo, hi, med):
        assert 2 * v == round(2 * v) and v in boot[:, 0]
    assert lo == np.quantile(boot[:, 0], 0.025, method="lower")
    assert out["ci_low"][1] == pytest.approx(np.quantile(boot[:, 1], 0.025))  # continuous: interpolated


def test_number_text():
    assert format_value(-0.00001) == "0.0000" and format_value(-0.5) == "-0.5000"
    assert format_value(-1e-9, 3) == "0.000" and format_value(-12.0, 0) == "-12"
    assert format_column([1381.0, 1203.0]) == ["1381", "1203"]
    assert format_column([28.5, 24.0, np.nan]) == ["28.5", "24.0", ""]
    assert digits_for([28.5, 24.0, 31.0], 4) == 1 and digits_for([0.81, 0.5], 4) == 4


def test_caption_p_value():
    from scorebench.leaderboard.build import _p_equals

    assert _p_equals(1e-6) == "p < 1e-4" and _p_equals(0.0123) == "p = 0.0123"


def test_statistics_with_few_values_are_discrete_too():
    rng = np.random.default_rng(4)
    boot = rng.choice([-1.25, -2.5, -10 / 3, -4.75, -5.2], size=(200, 1))  # a Kemeny score's few averages
    out = summarize_bootstrap(boot, 0.95)
    assert out["ci_low"][0] in boot and out["ci_high"][0] in boot and out["score_median"][0] in boot
