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
from scorebench.core.errors import InputError
from scorebench.io.tables import read_results

FIXTURES = Path(__file__).parents[1] / "fixtures" / "lm_eval"


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


# ---- 0.4.0-0.4.2 layout, naming, re-runs, one samples file, groups ------------------------------------------
# lm-eval 0.4.0-0.4.2's __main__.py wrote results.json (or the --output_path file itself when it ends in .json)
# and, per task, <model_args with "/" and "=" replaced by "__">_<task>.jsonl holding
# json.dumps(samples[task], indent=2, ensure_ascii=False): a pretty-printed array of {doc_id, doc, target,
# arguments, resps, filtered_resps, <metric>: value}, one record per (document, filter), filter by filter, with
# no doc_hash/filter/metrics keys. The files below are the 0.4.13 run of seed0 rewritten in that layout.

def _as_0_4_2(tmp_path: Path, results_name: str = "results.json", model_args: str = "pretrained=EleutherAI/pythia-14m"):
    src = FIXTURES / "seed0"
    run = tmp_path / "old"
    run.mkdir(parents=True)
    obj = _results(src)
    old = {"results": obj["results"], "configs": obj["configs"], "versions": obj["versions"], "n-shot": obj["n-shot"],
           "config": {**obj["config"], "model": "hf", "model_args": model_args}, "git_hash": "4600d6bf"}
    (run / results_name).write_text(json.dumps(old, indent=2))
    for samples in src.glob("samples_*.jsonl"):
        task = samples.name[len("samples_"):].rsplit("_", 1)[0]
        rows = [json.loads(line) for line in samples.read_text().splitlines()]
        filters = list(dict.fromkeys(r["filter"] for r in rows))
        legacy = [{k: v for k, v in r.items() if k not in ("doc_hash", "prompt_hash", "target_hash", "filter",
                                                          "metrics")}
                  for f in filters for r in rows if r["filter"] == f]  # written filter by filter
        name = f"{model_args.replace('/', '__').replace('=', '__')}_{task}.jsonl"
        (run / name).write_text(json.dumps(legacy, indent=2, ensure_ascii=False))
    return run


def test_0_4_2_layout_reads_and_reproduces_the_results(tmp_path):
    from scorebench.io.readers import detect_results_format

    run = _as_0_4_2(tmp_path)
    assert detect_results_format(run) == "lm_eval"
    table = read_results(run)
    assert set(table["system"]) == {"EleutherAI/pythia-14m"}  # from model_args, not the backend "hf"
    for task, values in _results(FIXTURES / "seed0")["results"].items():
        sub = table[table["task"] == task]
        for key, value in values.items():
            if "," in key and "_stderr" not in key:
                np.testing.assert_allclose(sub[key].mean(), value, rtol=0, atol=1e-15)
    new = read_results(FIXTURES / "seed0")
    assert len(table) == len(new) and sorted(table.columns) == sorted(new.columns)


def test_results_file_of_any_name_given_explicitly(tmp_path):
    run = _as_0_4_2(tmp_path, results_name="arc.json")
    scores = read_results(run / "arc.json", level="results")
    assert scores.set_index(["task", "metric"])["value"][("sb_mc", "acc,none")] == 0.25
    not_results = tmp_path / "other.json"
    not_results.write_text('{"a": 1}')
    with pytest.raises(InputError, match="not an lm-evaluation-harness results file"):
        read_results(not_results, format="lm_eval")


def test_one_samples_file_reads_that_task_only():
    path = next((FIXTURES / "seed0").glob("samples_sb_gen_*.jsonl"))
    table = read_results(path)
    assert set(table["task"]) == {"sb_gen"} and len(table) == 7


def test_reruns_latest_or_all(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(FIXTURES / "seed0", run)
    for file in (FIXTURES / "seed1").iterdir():  # the seed-1 run as a later re-run in the same folder
        obj_name = file.name.replace("2026-12-02T18-18", "2026-12-03T09-00") if "2026-12-02T18-18" in file.name \
            else file.name.replace(file.name.rsplit("_", 1)[-1], "2026-12-03T09-00-00.000000" +
                                   (".json" if file.suffix == ".json" else ".jsonl"))
        shutil.copy(file, run / obj_name)
    names = sorted(run.glob("results_*.json"))
    assert len(names) == 2
    later = json.loads(names[1].read_text())
    later["model_name"] = json.loads(names[0].read_text())["model_name"]  # the same model, run again
    names[1].write_text(json.dumps(later))
    with pytest.raises(InputError, match="runs='latest'"):
        read_results(run, system="folder")
    latest = read_results(run, runs="latest")
    np.testing.assert_allclose(latest[latest.task == "sb_mc"]["acc,none"].mean(),
                               _results(FIXTURES / "seed1")["results"]["sb_mc"]["acc,none"], atol=1e-15)
    both = read_results(run, runs="all")
    assert both["run"].nunique() == 2 and len(both) == 2 * len(latest)


def test_groups_kept_and_recomputed_from_samples(tmp_path):
    run = tmp_path / "grouped"
    shutil.copytree(FIXTURES / "seed0", run)
    path = next(run.glob("results_*.json"))
    obj = json.loads(path.read_text())
    mc, gen = obj["results"]["sb_mc"], obj["results"]["sb_gen"]
    # a group over both tasks, as the harness writes MMLU's (sample-size-weighted mean)
    n_mc, n_gen = 8, 7
    obj["results"]["sb_all"] = {"alias": "sb_all", "acc,none": mc["acc,none"]}
    obj["group_subtasks"] = {"sb_all": ["sb_mc", "sb_gen"]}
    path.write_text(json.dumps(obj))
    scores = read_results(run, level="results")
    group = scores[scores["task"] == "sb_all"]
    assert group["is_group"].all() and group.set_index("metric")["value"]["acc,none"] == mc["acc,none"]
    assert "sb_all" in scores.attrs["groups"]
    table = read_results(run)
    rows = table[table["task"] == "sb_all"]
    assert len(rows) == n_mc + n_gen and rows["is_group"].all() and rows["id"].is_unique
    weighted = (n_mc * mc["acc,none"]) / n_mc  # acc exists only for sb_mc: the group mean over its documents
    np.testing.assert_allclose(rows["acc,none"].mean(), weighted, atol=1e-15)
    np.testing.assert_allclose(rows["exact_match,flexible-extract"].mean(), gen["exact_match,flexible-extract"],
                               atol=1e-15)
    assert read_results(run, tasks="sb_all")["task"].unique().tolist() == ["sb_mc", "sb_gen", "sb_all"] or \
        set(read_results(run, tasks="sb_all")["task"]) == {"sb_mc", "sb_gen", "sb_all"}


# ---- files written by lm-eval 0.4.2 itself (tests/fixtures/lm_eval/make_fixtures_042.py) --------------------
V042 = Path(__file__).parents[1] / "fixtures" / "lm_eval_042"


def test_real_0_4_2_run_reproduces_its_results():
    from scorebench.io.readers import detect_results_format

    run = V042 / "single"
    assert detect_results_format(run) == "lm_eval"
    table = read_results(run)
    reported = json.loads((run / "results.json").read_text())["results"]["sb_mc"]
    assert set(table["system"]) == {"example/dummy-lm"} and len(table) == 8
    for key in ("acc,none", "acc_norm,none"):
        np.testing.assert_allclose(table[key].mean(), reported[key], rtol=0, atol=2e-16)
    scores = read_results(run / "results.json", level="results").set_index("metric")["value"]
    assert scores["acc,none"] == reported["acc,none"]


def test_real_0_4_2_group_kept_and_recomputed(tmp_path):
    run = V042 / "group"
    reported = json.loads((run / "results.json").read_text())["results"]
    scores = read_results(run, level="results")
    group = scores[scores["task"] == "sb_all"].set_index("metric")["value"]
    assert group["acc,none"] == reported["sb_all"]["acc,none"]
    assert scores.loc[scores["task"] == "sb_all", "is_group"].all()
    table = read_results(run)
    rows = table[table["task"] == "sb_all"]
    assert len(rows) == 13  # 8 + 5 documents: the harness weights the group by sample size
    for key in ("acc,none", "acc_norm,none"):
        np.testing.assert_allclose(rows[key].mean(), reported["sb_all"][key], rtol=0, atol=2e-16)
    out = scorebench.evaluate(table, "sample_mean@acc,none", n_boot=0).set_index("task")["value"]
    np.testing.assert_allclose(out["sb_all"], reported["sb_all"]["acc,none"], atol=2e-16)
    # the same results file under another name, passed explicitly
    shutil.copytree(run, tmp_path / "g")
    (tmp_path / "g" / "results.json").rename(tmp_path / "g" / "arc.json")
    again = read_results(tmp_path / "g" / "arc.json", level="results")
    assert again.set_index(["task", "metric"])["value"][("sb_all", "acc,none")] == reported["sb_all"]["acc,none"]


def test_gzipped_run_reads_like_the_plain_one(tmp_path):
    import gzip

    from scorebench.io.readers import detect_results_format

    run = tmp_path / "gz"
    run.mkdir()
    for file in (FIXTURES / "seed0").iterdir():
        (run / (file.name + ".gz")).write_bytes(gzip.compress(file.read_bytes()))
    assert detect_results_format(run) == "lm_eval"
    zipped, plain = read_results(run), read_results(FIXTURES / "seed0")
    pd_cols = sorted(plain.columns)
    assert sorted(zipped.columns) == pd_cols
    import pandas as pd

    pd.testing.assert_frame_equal(zipped[pd_cols], plain[pd_cols])
