"""lighteval reader on files written by lighteval 0.13.0's own EvaluationTracker.

Fixtures: tests/fixtures/lighteval (regenerate with tests/fixtures/lighteval/make_fixtures.py in
/work/venvs/lighteval): two dummy models (lighteval's DummyModel, seeds 1 and 2), two
multiple-choice tasks, metrics ``acc`` and its character-normalised variant; ``reported.json`` is
lighteval's ``MetricsLogger.metric_aggregated`` of each run.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import scorebench
from scorebench.cli import cli
from scorebench.core.errors import InputError
from scorebench.io.readers import detect_results_format

FIXTURES = Path(__file__).parents[1] / "fixtures" / "lighteval"
REPORTED = json.loads((FIXTURES / "reported.json").read_text())
NORM = REPORTED["acc_norm_metric"]


def test_detected():
    assert detect_results_format(FIXTURES) == "lighteval"
    assert detect_results_format(next(FIXTURES.rglob("results_*.json"))) == "lighteval"
    assert detect_results_format(Path(__file__).parents[1] / "fixtures" / "lm_eval") == "lm_eval"
    table = scorebench.read_results(FIXTURES)
    assert table.attrs["source_format"] == "lighteval" and table.attrs["files_read"] == 6


def test_results_level_is_what_lighteval_reported():
    table = scorebench.read_results(FIXTURES, level="results")
    assert set(table["task"]) == {"sbmc:easy|0", "sbmc:hard|0"}  # 'all' and '_average' left out
    assert len(table) == 8
    for row in table.itertuples():
        reported = REPORTED["metric_aggregated"][row.system][row.task]
        assert row.value == reported[row.metric]
        assert row.stderr == reported[f"{row.metric}_stderr"]


def test_per_example_means_and_stderr_reproduce_the_aggregates():
    table = scorebench.read_results(FIXTURES)
    assert table.groupby(["system", "task"]).size().tolist() == [12, 9, 12, 9]
    for (system, task), group in table.groupby(["system", "task"]):
        for metric in ("acc", NORM):
            x = group[metric].to_numpy()
            reported = REPORTED["metric_aggregated"][system][task]
            assert x.mean() == pytest.approx(reported[metric], abs=1e-15)
            assert x.std(ddof=1) / np.sqrt(len(x)) == pytest.approx(reported[f"{metric}_stderr"], rel=1e-12)
    scores = scorebench.evaluate(table, ["sample_mean@acc"], by=["system", "task"], n_boot=0)
    for row in scores.itertuples():
        assert row.value == pytest.approx(REPORTED["metric_aggregated"][row.system][row.task]["acc"], abs=1e-15)


def _parquet_rows():
    rows = []
    for path in sorted(FIXTURES.rglob("details_*.parquet")):
        system = "/".join(path.parts[-4:-2])
        for record in pq.read_table(path).to_pylist():
            rows.append((system, record))
    return rows


@pytest.mark.parametrize("convention, metric", [("acc", "acc"), ("acc_norm", NORM)])
def test_multiclass_calibration_table(convention, metric):
    table = scorebench.read_results(FIXTURES, level="multiclass", convention=convention)
    assert table.attrs["kind"] == "multiclass" and len(table) == 42
    scores = scorebench.evaluate(table, ["argmax_accuracy"], by=["system", "task"], n_boot=0)
    for row in scores.itertuples():
        assert row.value == pytest.approx(REPORTED["metric_aggregated"][row.system][row.task][metric], abs=1e-15)
    # probabilities: an independent softmax of the parquet's log-likelihoods
    for system, record in _parquet_rows():
        ll = np.array(record["model_response"]["logprobs"])
        if convention == "acc_norm":
            ll = ll / np.array([len(c) for c in record["doc"]["choices"]])
        expect = np.exp(ll - ll.max()) / np.exp(ll - ll.max()).sum()
        mine = table[(table["system"] == system) & (table["task"] == record["doc"]["task_name"])
                     & (table["id"] == record["doc"]["id"])]
        assert mine["y"].iloc[0] == str(record["doc"]["gold_index"])
        np.testing.assert_allclose(mine[[f"p_{k}" for k in range(len(ll))]].to_numpy()[0], expect, rtol=1e-13)
    scorebench.evaluate(table, ["brier_score_multiclass", "log_score_multiclass"], n_boot=0)


def test_cli_compare_pairs_examples():
    runner = CliRunner()
    res = runner.invoke(cli, ["compare", str(FIXTURES), "-m", "sample_mean@acc", "--bootstrap", "50",
                              "--permutations", "50"])
    assert res.exit_code == 0, res.output
    assert "dummy-a" in res.output and "dummy-b" in res.output
    res = runner.invoke(cli, ["import", str(FIXTURES), "--from-option", "level=results"])
    assert res.exit_code == 0, res.output
    assert "sbmc:easy|0" in res.output


def _copy(tmp_path: Path) -> Path:
    target = tmp_path / "run"
    shutil.copytree(FIXTURES, target, ignore=shutil.ignore_patterns("*.py"))
    return target


def test_different_examples_refused(tmp_path):
    root = _copy(tmp_path)
    path = next((root / "results" / "scorebench-tests" / "dummy-b").glob("results_*.json"))
    obj = json.loads(path.read_text())
    obj["summary_tasks"]["sbmc:easy|0"]["hashes"]["hash_examples"] = "0000000000000000"
    path.write_text(json.dumps(obj))
    with pytest.raises(InputError, match="evaluated different examples"):
        scorebench.read_results(root, level="results")


def test_missing_details_and_bad_files(tmp_path):
    root = _copy(tmp_path)
    details = sorted(root.rglob("details_sbmc:hard*.parquet"))
    details[0].unlink()
    with pytest.raises(InputError, match="--save-details"):
        scorebench.read_results(root)
    assert len(scorebench.read_results(root, level="results")) == 8  # the aggregates need no details
    details[1].write_bytes(b"PAR1 not really")
    with pytest.raises(InputError, match="not a readable parquet file"):
        scorebench.read_results(root / "results" / "scorebench-tests" / "dummy-b")
    with pytest.raises(InputError, match="level="):
        scorebench.read_results(FIXTURES, level="items")
    with pytest.raises(InputError, match="names one run"):
        scorebench.read_results(FIXTURES, system="x")


def test_inconsistent_accuracy_refused(tmp_path):
    root = _copy(tmp_path)
    path = sorted(root.rglob("details_sbmc:easy*.parquet"))[0]
    table = pq.read_table(path).to_pandas()
    table.at[0, "metric"] = {**table.at[0, "metric"], "acc": 1.0 - table.at[0, "metric"]["acc"]}
    table.to_parquet(path)
    with pytest.raises(InputError, match="argmax of the log-likelihoods disagrees"):
        scorebench.read_results(root, level="multiclass")
    bad = json.loads(next(root.rglob("results_*.json")).read_text())
    bad["results"]["sbmc:easy|0"]["acc"] = "high"
    target = tmp_path / "one" / "results_2025-01-01T00-00-00.000000.json"
    target.parent.mkdir()
    target.write_text(json.dumps(bad))
    with pytest.raises(InputError, match="expected a number"):
        scorebench.read_results(target, level="results")


def test_options_tasks_and_system():
    table = scorebench.read_results(FIXTURES, tasks="sbmc:easy|0")
    assert set(table["task"]) == {"sbmc:easy|0"} and len(table) == 24
    one = next((FIXTURES / "results" / "scorebench-tests" / "dummy-a").glob("results_*.json"))
    named = scorebench.read_results(one, level="results", system="mine")
    assert set(named["system"]) == {"mine"}
    with pytest.raises(InputError, match="no lighteval task results for tasks"):
        scorebench.read_results(FIXTURES, tasks="nope|0")
