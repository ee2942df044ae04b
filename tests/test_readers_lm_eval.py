"""lm-evaluation-harness reader on files written by the real harness (tests/fixtures/lm_eval)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import scorebench
from scorebench.cli import cli
from scorebench.errors import InputError
from scorebench.io import read_results

FIXTURES = Path(__file__).parent / "fixtures" / "lm_eval"


def _results(run: Path) -> dict:
    return json.loads(next(run.glob("results_*.json")).read_text())


@pytest.mark.parametrize("seed", [0, 1])
def test_per_sample_mean_reproduces_results_file(seed):
    run = FIXTURES / f"seed{seed}"
    table = read_results(run)
    assert table.attrs["source_format"] == "lm_eval" and table.attrs["tool_version"] == "0.4.13"
    reported = _results(run)["results"]
    checked = 0
    for task, values in reported.items():
        sub = table[table["task"] == task]
        for key, value in values.items():
            if "," in key and "_stderr" not in key:
                np.testing.assert_allclose(sub[key].mean(), value, rtol=0, atol=1e-12)
                scores = scorebench.evaluate(sub, [f"sample_mean@{key}"], n_boot=0)
                np.testing.assert_allclose(scores["value"].iloc[0], value, rtol=0, atol=1e-12)
                checked += 1
    assert checked == 4  # acc, acc_norm; exact_match under two filters


def test_filters_repeat_documents_and_become_columns():
    run = FIXTURES / "seed0"
    lines = next(run.glob("samples_sb_gen_*.jsonl")).read_text().splitlines()
    assert len(lines) == 14  # 7 documents x 2 filters, as gsm8k's files
    gen = read_results(run, tasks="sb_gen")
    assert len(gen) == 7 and gen["id"].is_unique
    assert gen["exact_match,strict-match"].sum() == 0 and gen["exact_match,flexible-extract"].sum() == 5


def test_runs_pair_by_doc_hash_whatever_the_row_order():
    table = read_results(FIXTURES, tasks="sb_mc")
    assert table["system"].nunique() == 2
    shuffled = table.sample(frac=1.0, random_state=3)
    a = scorebench.compare(table, "sample_mean@acc,none", n_boot=200, n_perm=200, seed=1)
    b = scorebench.compare(shuffled, "sample_mean@acc,none", n_boot=200, n_perm=200, seed=1)
    assert a["mean_diff"].tolist() == b["mean_diff"].tolist()
    assert a.loc[a["test"] == "permutation", "p_value"].item() == b.loc[b["test"] == "permutation", "p_value"].item()
    one = table[table["system"] == table["system"].iloc[0]].set_index("id")["acc,none"]
    two = table[table["system"] != table["system"].iloc[0]].set_index("id")["acc,none"]
    np.testing.assert_allclose(abs(a["mean_diff"].iloc[0]), abs((one - two.loc[one.index]).mean()), atol=1e-15)


def test_results_level():
    scores = read_results(FIXTURES / "seed1", level="results")
    reported = _results(FIXTURES / "seed1")["results"]
    got = scores.set_index(["task", "metric"])["value"]
    assert got[("sb_mc", "acc,none")] == reported["sb_mc"]["acc,none"]
    assert not scores["metric"].str.contains("stderr").any()


def _copy(tmp_path: Path, seeds=(0, 1)) -> Path:
    for seed in seeds:
        shutil.copytree(FIXTURES / f"seed{seed}", tmp_path / f"seed{seed}")
    return tmp_path


def test_task_hash_mismatch_refused(tmp_path):
    root = _copy(tmp_path)
    path = next((root / "seed1").glob("results_*.json"))
    obj = json.loads(path.read_text())
    obj["task_hashes"]["sb_mc"] = "0" * 64
    path.write_text(json.dumps(obj))
    with pytest.raises(InputError, match=r"field 'task_hashes.sb_mc'.*not comparable"):
        read_results(root)


def test_truncated_samples_and_duplicate_runs(tmp_path):
    root = _copy(tmp_path, seeds=(0,))
    samples = next((root / "seed0").glob("samples_sb_mc_*.jsonl"))
    samples.write_text(samples.read_text()[:-40])
    with pytest.raises(InputError, match=r"samples_sb_mc_.*line 8: invalid JSON"):
        read_results(root)
    with pytest.raises(InputError, match="no per-sample file"):
        read_results(_missing_samples(tmp_path), format="lm_eval")
    with pytest.raises(InputError, match="duplicate .model, task."):
        read_results(_two_of_seed0(tmp_path))
    assert read_results(_two_of_seed0(tmp_path / "x"), system="folder")["system"].unique().tolist() == ["a", "b"]


def _missing_samples(tmp_path: Path) -> Path:
    run = tmp_path / "nosamples"
    run.mkdir()
    shutil.copy(next((FIXTURES / "seed0").glob("results_*.json")), run)
    return run


def _two_of_seed0(tmp_path: Path) -> Path:
    root = tmp_path / "twice"
    shutil.copytree(FIXTURES / "seed0", root / "a")
    shutil.copytree(FIXTURES / "seed0", root / "b")
    return root


def test_unknown_version_refused(tmp_path):
    root = _copy(tmp_path, seeds=(0,))
    path = next((root / "seed0").glob("results_*.json"))
    obj = json.loads(path.read_text())
    obj["lm_eval_version"] = "0.9.0"
    path.write_text(json.dumps(obj))
    with pytest.raises(InputError, match="field 'lm_eval_version': unknown version"):
        read_results(root)


def test_cli_compare_from_lm_eval():
    result = CliRunner().invoke(cli, ["compare", str(FIXTURES), "--from", "lm_eval", "--from-option", "tasks=sb_mc",
                                      "-m", "sample_mean@acc,none", "--bootstrap", "100", "--permutations", "100"])
    assert result.exit_code == 0, result.output
    assert "permutation" in result.stdout
