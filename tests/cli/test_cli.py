"""End-to-end CLI tests on real tables written by the tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import scorebench.io.tables
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
        back = pd.read_parquet(out) if suffix == "parquet" else pd.read_csv(out)  # default arguments
        assert len(back) == 4 and set(back.metric) == {"crps_normal", "log_score_normal"}
        meta = scorebench.io.tables.read_meta(out)
        assert meta["seed"] == 0 and "bootstrap" in meta


def test_evaluate_compare_aggregate_files_are_identical_across_thread_counts(forecasts, tmp_path):
    wide = tmp_path / "wide.csv"
    rng = np.random.default_rng(4)
    pd.DataFrame(rng.uniform(size=(6, 8)), columns=[f"t{i}" for i in range(8)]).assign(
        system=[f"s{i}" for i in range(6)]).to_csv(wide, index=False)
    commands = {"evaluate": (forecasts, ["-m", "crps_normal", "-m", "log_score_normal", "--bootstrap", "200"]),
                "compare": (forecasts, ["-m", "crps_normal", "--baseline", "climatology"]),
                "aggregate": (wide, ["-m", "borda", "-m", "bradley_terry", "--bootstrap", "100"])}
    for command, (table, args) in commands.items():
        outputs = []
        for threads in ("1", "2"):
            out = tmp_path / f"{command}-{threads}.csv"
            env = {**os.environ, "OPENBLAS_NUM_THREADS": threads, "OMP_NUM_THREADS": threads}
            res = subprocess.run([sys.executable, "-m", "scorebench.cli", command, str(table), *args,
                                  "-o", str(out)], capture_output=True, text=True, env=env)
            assert res.returncode == 0, res.stderr
            outputs.append(out.read_bytes())
        assert outputs[0] == outputs[1], command


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
