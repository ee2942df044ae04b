"""End-to-end CLI tests on real tables written by the tests."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from scorebench.cli import cli


@pytest.fixture
def forecasts(tmp_path, rng):
    n = 120
    y = rng.normal(size=n)
    t = pd.concat([
        pd.DataFrame({"system": "sharp", "id": np.arange(n), "y": y, "mu": y + rng.normal(0, 0.5, n),
                      "sigma": 0.5}),
        pd.DataFrame({"system": "climatology", "id": np.arange(n), "y": y, "mu": 0.0, "sigma": 1.0}),
    ])
    path = tmp_path / "forecasts.csv"
    t.to_csv(path, index=False)
    return path


def _run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_evaluate_prints_table(forecasts):
    res = _run("evaluate", forecasts, "--metric", "crps_normal", "--bootstrap", "200", "--seed", "1")
    assert res.exit_code == 0, res.output
    assert "crps_normal" in res.output and "sharp" in res.output and "ci_low" in res.output


@pytest.mark.parametrize("suffix", ["csv", "parquet", "json", "md"])
def test_evaluate_writes_each_format(forecasts, tmp_path, suffix):
    out = tmp_path / f"scores.{suffix}"
    res = _run("evaluate", forecasts, "-m", "crps_normal", "-m", "log_score_normal", "--bootstrap", "50",
               "--output", out)
    assert res.exit_code == 0, res.output
    if suffix == "json":
        doc = json.loads(out.read_text())
        assert doc["meta"]["seed"] == 0 and len(doc["scores"]) == 4
    elif suffix == "md":
        assert out.read_text().startswith("| system | metric |")
    else:
        back = pd.read_parquet(out) if suffix == "parquet" else pd.read_csv(out, comment="#")
        assert len(back) == 4 and set(back.metric) == {"crps_normal", "log_score_normal"}


def test_same_seed_gives_byte_identical_files(forecasts, tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    for out in (a, b):
        assert _run("evaluate", forecasts, "-m", "crps_normal", "--seed", "5", "-o", out).exit_code == 0
    assert a.read_bytes() == b.read_bytes()


def test_bad_input_is_one_line_and_nonzero(tmp_path):
    bad = tmp_path / "bad.csv"
    pd.DataFrame({"y": [1.0, 2.0], "mu": [0.0, 0.0], "sigma": [1.0, -1.0]}).to_csv(bad, index=False)
    out = tmp_path / "never.csv"
    res = subprocess.run([sys.executable, "-m", "scorebench.cli", "evaluate", str(bad), "-m", "crps_normal",
                          "-o", str(out)], capture_output=True, text=True)
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "sigma" in lines[0]
    assert "Traceback" not in res.stderr and not out.exists()


@pytest.mark.parametrize("args, needle", [
    (["evaluate", "missing.csv", "-m", "crps_normal"], "no such file"),
    (["evaluate", "{table}", "-m", "crps_nrmal"], "did you mean"),
    (["evaluate", "{table}", "-m", "brier_score"], "missing column"),
])
def test_cli_errors(forecasts, args, needle):
    args = [a.replace("{table}", str(forecasts)) for a in args]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 2
    assert needle in res.output.lower()


def test_compare_and_metrics_commands(forecasts):
    res = _run("compare", forecasts, "--metric", "crps_normal", "--baseline", "climatology",
               "--bootstrap", "100", "--permutations", "200")
    assert res.exit_code == 0, res.output
    assert "diebold_mariano" in res.output and "p_holm" in res.output
    listed = _run("metrics", "--family", "scoring_rules")
    assert listed.exit_code == 0 and "crps_normal" in listed.output and "lower" in listed.output
    as_json = _run("metrics", "--format", "json")
    assert {r["name"] for r in json.loads(as_json.output)} >= {"brier_score", "crps_ensemble"}
