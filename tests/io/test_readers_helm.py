"""HELM reader on run folders written from HELM's published schema."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import scorebench
from scorebench.core.errors import InputError
from scorebench.io.tables import read_results

RUNS = Path(__file__).parents[1] / "fixtures" / "helm" / "runs"
TASK = "mmlu:subject=anatomy,method=multiple_choice_joint"


def _stats_mean(run: Path, name: str, split: str = "test", perturbation: str | None = None) -> float:
    for stat in json.loads((run / "stats.json").read_text()):
        key = stat["name"]
        if key["name"] == name and key["split"] == split and (key.get("perturbation") or {}).get("name") == perturbation:
            return stat["mean"]
    raise KeyError(name)


def test_per_instance_mean_equals_stats_json():
    table = read_results(RUNS)
    assert table.attrs["source_format"] == "helm"
    assert set(table["system"]) == {"openai/gpt2", "meta/llama-7b"} and set(table["task"]) == {TASK}
    for run in RUNS.glob("*/*"):
        model = json.loads((run / "run_spec.json").read_text())["adapter_spec"]["model"]
        sub = table[table["system"] == model]
        assert len(sub) == 6  # the test split, unperturbed
        for stat in ("exact_match", "quasi_exact_match", "num_output_tokens"):
            np.testing.assert_allclose(sub[stat].mean(), _stats_mean(run, stat), rtol=0, atol=1e-12)
        scores = scorebench.evaluate(sub, ["sample_mean@exact_match"], n_boot=0)
        np.testing.assert_allclose(scores["value"].item(), _stats_mean(run, "exact_match"), atol=1e-12)


def test_split_perturbation_and_stats_level():
    valid = read_results(RUNS, split="valid")
    assert valid.groupby("system").size().tolist() == [2, 2]
    robust = read_results(RUNS, perturbation="robustness")
    run = next(RUNS.glob("*/*gpt2"))
    np.testing.assert_allclose(robust.loc[robust["system"] == "openai/gpt2", "exact_match"].mean(),
                               _stats_mean(run, "exact_match", perturbation="robustness"), atol=1e-12)
    stats = read_results(RUNS, level="stats")
    got = stats[(stats["system"] == "openai/gpt2") & (stats["metric"] == "exact_match")]["value"].item()
    assert got == _stats_mean(run, "exact_match")


def test_paired_compare_across_models():
    table = read_results(RUNS)
    result = scorebench.compare(table, "sample_mean@exact_match", n_boot=100, n_perm=100)
    assert (result["n"] == 6).all()


def test_malformed_instance(tmp_path):
    shutil.copytree(RUNS, tmp_path / "runs")
    path = next((tmp_path / "runs").glob("*/*gpt2")) / "per_instance_stats.json"
    rows = json.loads(path.read_text())
    del rows[3]["instance_id"]
    path.write_text(json.dumps(rows))
    with pytest.raises(InputError, match=r"per_instance_stats.json: field '\[3\].instance_id': missing"):
        read_results(tmp_path / "runs", format="helm")


def test_benchmark_output_root_and_stats_file(tmp_path):
    import shutil

    from scorebench.io.readers import detect_results_format

    runs = Path(__file__).parents[1] / "fixtures" / "helm" / "runs"
    root = tmp_path / "benchmark_output"
    shutil.copytree(runs, root / "runs")
    assert detect_results_format(root) == "helm"
    assert set(read_results(root)["system"]) == set(read_results(runs)["system"])
    run = next(p for p in (root / "runs" / "v1.0.0").iterdir())
    stats = read_results(run / "stats.json")
    assert stats.attrs["level"] == "stats" and stats.attrs["files"] == ["run_spec.json", "stats.json"]
    assert {"metric", "value"} <= set(stats.columns)


# helm-summarize writes runs/<suite>/schema.json (from schema_*.yaml): metrics with lower_is_better and
# run_groups whose environment names the main metric, which its leaderboard (mean win rate) ranks by.
SCHEMA = {"metrics": [{"name": "exact_match", "display_name": "Exact match", "lower_is_better": False},
                      {"name": "quasi_exact_match", "display_name": "Quasi-exact match"},
                      {"name": "num_output_tokens", "display_name": "# output tokens", "lower_is_better": True}],
          "metric_groups": [{"name": "accuracy", "metrics": [{"name": "${main_name}", "split": "${main_split}"}]}],
          "run_groups": [{"name": "mmlu", "display_name": "MMLU", "metric_groups": ["accuracy"],
                          "environment": {"main_name": "exact_match", "main_split": "test"}}]}


def test_schema_main_metric_selected_and_aggregate_refuses_mixed_stats(tmp_path):
    from click.testing import CliRunner

    from scorebench.cli import cli

    runs = tmp_path / "runs"
    shutil.copytree(RUNS, runs)
    mixed = read_results(runs, level="stats")
    assert mixed.attrs["mixed_metrics"] == ["exact_match", "num_output_tokens", "quasi_exact_match"]
    assert mixed.attrs["higher_is_better"]["num_output_tokens"] is False
    with pytest.raises(InputError, match="stats of different meaning"):
        scorebench.aggregate(mixed, "win_rate", n_boot=0)
    result = CliRunner().invoke(cli, ["aggregate", str(runs), "--from", "helm", "-m", "win_rate"])
    assert result.exit_code != 0 and "metric=NAME" in result.output
    (runs / "v1.0.0" / "schema.json").write_text(json.dumps(SCHEMA))
    main = read_results(runs, level="stats")
    assert set(main["metric"]) == {"exact_match"} and main.attrs["mixed_metrics"] == []
    assert main.attrs["higher_is_better"] == {"exact_match": True}
    ranking = scorebench.aggregate(main, "win_rate", n_boot=0).to_frame().set_index("system")["score"]
    assert ranking["meta/llama-7b"] == 1.0 and ranking["openai/gpt2"] == 0.0  # exact_match 0.5 vs 0.167
    samples = read_results(runs)
    assert set(samples.columns) == {"system", "task", "id", "exact_match"}
    picked = read_results(RUNS, metric="quasi_exact_match", level="stats")
    assert set(picked["metric"]) == {"quasi_exact_match"}
    with pytest.raises(InputError, match="not computed by this run"):
        read_results(RUNS, metric="f1_score")
    result = CliRunner().invoke(cli, ["aggregate", str(runs), "--from", "helm", "-m", "win_rate",
                                      "--from-option", "level=stats"])
    assert result.exit_code == 0, result.output


def test_a_lower_is_better_stat_is_ranked_that_way(tmp_path):
    from click.testing import CliRunner

    from scorebench.cli import cli

    tokens = read_results(RUNS, metric="num_output_tokens", level="stats")
    assert tokens.attrs["higher_is_better"] == {"num_output_tokens": False}
    values = tokens.set_index("system")["value"]
    assert values["meta/llama-7b"] < values["openai/gpt2"]
    ranking = scorebench.aggregate(tokens, "win_rate", n_boot=0).to_frame().set_index("system")["score"]
    assert ranking["meta/llama-7b"] == 1.0 and ranking["openai/gpt2"] == 0.0  # fewer tokens wins
    result = CliRunner().invoke(cli, ["aggregate", str(RUNS), "--from", "helm", "-m", "win_rate", "--from-option",
                                      "level=stats", "--from-option", "metric=num_output_tokens"])
    assert result.exit_code == 0, result.output
    first = [line for line in result.stdout.splitlines() if "llama" in line or "gpt2" in line][0]
    assert "llama" in first
