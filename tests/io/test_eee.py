"""Every Eval Ever (EEE v0.3.0): scorebench's records validate against EEE's own schemas, read
back losslessly, and the shipped MTEB folder converted to EEE gives the same board numbers."""

from __future__ import annotations

import json
import tomllib
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _paths import REFERENCE
from click.testing import CliRunner

import scorebench
from scorebench.cli import cli
from scorebench.core.errors import InputError
from scorebench.io.eee import instance_records, to_eee, write_eee
from scorebench.io.readers import detect_results_format, read_results

jsonschema = pytest.importorskip("jsonschema")

FIXTURES = Path(__file__).parents[1] / "fixtures" / "eee"
ROOT = Path(__file__).resolve().parents[2]
MTEB_RESULTS = REFERENCE / "mteb" / "results"


@pytest.fixture(scope="module")
def validators():
    out = {}
    for name in ("eval", "instance_level_eval"):
        schema = json.loads((FIXTURES / f"{name}.schema.json").read_text())
        out[name] = jsonschema.Draft7Validator(schema)
    return out


def _valid(validator, doc) -> None:
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]


@pytest.fixture(scope="module")
def run():
    """A binary table of three systems on two tasks, its items and its evaluated scores."""
    rng = np.random.default_rng(3)
    frames = []
    for task, n in (("qa", 60), ("nli", 40)):
        y = rng.integers(0, 2, n)
        for system, skill in (("org/alpha", 2.0), ("org/beta", 1.0), ("gamma", 0.3)):
            p = 1 / (1 + np.exp(-skill * (2 * y - 1) + rng.normal(0, 1, n)))
            frames.append(pd.DataFrame({"system": system, "task": task, "id": [f"{task}-{i}" for i in range(n)],
                                        "y": y, "p": p}))
    items = pd.concat(frames, ignore_index=True)
    items["correct"] = ((items["p"] > 0.5) == (items["y"] == 1)).astype(float)
    scores = scorebench.evaluate(items, ["brier_score", "ece"], n_boot=200, seed=7)
    return items, scores


def test_records_validate_and_carry_intervals(run, validators):
    _, scores = run
    records = to_eee(scores, timestamp=1700000000)
    assert len(records) == 3
    for rec in records:
        _valid(validators["eval"], rec)
    rec = next(r for r in records if r["model_info"]["id"] == "org/beta")
    assert rec["model_info"]["developer"] == "org"
    assert rec["source_metadata"]["source_type"] == "evaluation_run"
    assert rec["source_metadata"]["additional_details"]["scorebench.seed"] == "7"
    by_id = {r["evaluation_result_id"]: r for r in rec["evaluation_results"]}
    brier = by_id["qa/brier_score"]
    row = scores[(scores.system == "org/beta") & (scores.task == "qa") & (scores.metric == "brier_score")].iloc[0]
    assert brier["score_details"]["score"] == row["value"]
    unc = brier["score_details"]["uncertainty"]
    assert unc["confidence_interval"] == {"lower": row["ci_low"], "upper": row["ci_high"], "confidence_level": 0.95,
                                          "method": "percentile bootstrap"}
    assert unc["num_samples"] == 60 and unc["num_bootstrap_samples"] == 200
    assert brier["metric_config"]["lower_is_better"] is True
    assert (brier["metric_config"]["min_score"], brier["metric_config"]["max_score"]) == (0.0, 1.0)
    ece = by_id["qa/ece"]["score_details"]["uncertainty"]["confidence_interval"]
    assert ece["method"] == "centered_percentile bootstrap"


def test_wilson_interval_has_no_bootstrap_count(validators):
    items = pd.DataFrame({"system": ["a"] * 30 + ["b"] * 30, "id": list(range(30)) * 2,
                          "correct": [1.0] * 20 + [0.0] * 10 + [1.0] * 12 + [0.0] * 18})
    scores = scorebench.evaluate(items, ["accuracy"], n_boot=100, seed=0)
    rec = to_eee(scores, timestamp=0)[0]
    _valid(validators["eval"], rec)
    unc = rec["evaluation_results"][0]["score_details"]["uncertainty"]
    assert unc["confidence_interval"]["method"] == "wilson score interval"
    assert "num_bootstrap_samples" not in unc
    assert rec["evaluation_results"][0]["metric_config"]["lower_is_better"] is False


def test_round_trip_is_lossless(run, tmp_path, validators):
    items, scores = run
    paths = write_eee(scores, tmp_path, items=items, timestamp=5)
    for path in paths:
        _valid(validators["eval"], json.loads(path.read_text()))
    sidecars = sorted(tmp_path.rglob("*_samples.jsonl"))
    assert len(sidecars) == 3
    for path in sidecars:
        for line in path.read_text().splitlines():
            _valid(validators["instance_level_eval"], json.loads(line))
    assert detect_results_format(tmp_path) == "eee"
    back = read_results(tmp_path)
    cols = ["system", "task", "metric", "value", "ci_low", "ci_high", "n"]
    want = scores[cols].sort_values(cols[:3]).reset_index(drop=True)
    got = back[cols].sort_values(cols[:3]).reset_index(drop=True)
    got["n"] = got["n"].astype(want["n"].dtype)
    pd.testing.assert_frame_equal(got, want)  # exact: floats survive JSON bit for bit
    assert back.attrs["higher_is_better"] == {"brier_score": False, "ece": False}
    assert back.attrs["ci"] == 0.95 and back.attrs["seed"] == 7 and back.attrs["n_boot"] == 200
    # the same table written again with the same timestamp gives the same files
    again = write_eee(scores, tmp_path / "again", timestamp=5)
    assert sorted(p.relative_to(tmp_path / "again") for p in again) == \
        sorted(p.relative_to(tmp_path) for p in paths)


def test_instance_sidecars_pair_items_across_systems(run, tmp_path):
    items, scores = run
    write_eee(scores, tmp_path, items=items, timestamp=5)
    samples = read_results(tmp_path, format="eee", level="samples")
    assert len(samples) == len(items)
    assert samples.groupby(["task", "id"])["system"].nunique().eq(3).all()
    got = samples.set_index(["system", "task", "sample_id"])["correct"].sort_index()
    want = items.set_index(["system", "task", "id"])["correct"].sort_index()
    np.testing.assert_array_equal(got.to_numpy(), want.to_numpy())
    # the paired comparison runs on the read items, paired by sample_hash
    qa = samples[samples.task == "qa"]
    direct = items[items.task == "qa"]
    ours = scorebench.compare(qa, "accuracy", baseline="org/alpha", tests=["mcnemar"], n_boot=100, seed=0)
    theirs = scorebench.compare(direct, "accuracy", baseline="org/alpha", tests=["mcnemar"], n_boot=100, seed=0)
    np.testing.assert_allclose(ours["p_value"].to_numpy(), theirs["p_value"].to_numpy())


def test_unknown_metric_needs_a_direction():
    t = pd.DataFrame({"system": ["m"], "task": ["t"], "metric": ["my_score"], "value": [1.0]})
    with pytest.raises(InputError, match="my_score.*direction"):
        to_eee(t, timestamp=0)
    rec = to_eee(t, timestamp=0, higher_is_better={"*": True})[0]
    assert rec["evaluation_results"][0]["metric_config"]["lower_is_better"] is False
    assert "score_type" not in rec["evaluation_results"][0]["metric_config"]


@pytest.mark.parametrize("bad, match", [
    (pd.DataFrame({"system": ["a"], "metric": ["brier_score"], "value": [np.nan]}), "finite"),
    (pd.DataFrame({"system": ["a"], "value": [0.1]}), "missing"),
    (pd.DataFrame({"system": ["a", "a"], "metric": ["brier_score"] * 2, "value": [0.1, 0.2]}), "several values"),
    (pd.DataFrame(columns=["system", "metric", "value"]), "no rows"),
])
def test_bad_scores_tables(bad, match):
    with pytest.raises(InputError, match=match):
        to_eee(bad, timestamp=0)


def test_reader_errors_name_file_and_field(tmp_path):
    bad = tmp_path / "r.json"
    rec = to_eee(pd.DataFrame({"system": ["a"], "metric": ["brier_score"], "value": [0.2]}), timestamp=0)[0]
    rec["evaluation_results"][0]["score_details"]["score"] = "high"
    bad.write_text(json.dumps(rec))
    with pytest.raises(InputError, match=r"r\.json.*score_details\.score"):
        read_results(bad, format="eee")
    rec["evaluation_results"][0]["score_details"]["score"] = 0.2
    rec["evaluation_results"][0]["score_details"]["uncertainty"] = {"confidence_interval": {"lower": 0.3, "upper": 0.1}}
    bad.write_text(json.dumps(rec))
    with pytest.raises(InputError, match="above upper"):
        read_results(bad, format="eee")
    rec["evaluation_results"][0]["score_details"]["uncertainty"] = {"confidence_interval": {"lower": 0.1, "upper": 0.3}}
    bad.write_text(json.dumps(rec).replace('"score": 0.2', '"score": NaN'))
    with pytest.raises(InputError, match="finite"):
        read_results(bad, format="eee")
    rec["evaluation_results"][0]["score_details"]["score"] = 0.2
    # two files with the same (system, task, metric)
    rec["evaluation_results"][0]["score_details"].pop("uncertainty")
    (tmp_path / "d").mkdir()
    for name in ("x.json", "y.json"):
        (tmp_path / "d" / name).write_text(json.dumps(rec))
    with pytest.raises(InputError, match="also in x.json"):
        read_results(tmp_path / "d", format="eee")
    (tmp_path / "e").mkdir()
    (tmp_path / "e" / "x.json").write_text('{"schema_version": "0.3.0", "evaluation_id": "a", "evaluation_results": [')
    with pytest.raises(InputError, match="invalid JSON"):
        read_results(tmp_path / "e", format="eee")


def test_foreign_records_read(validators, tmp_path):
    """A record as another converter writes it: stderr only, no interval, levels metric."""
    rec = {"schema_version": "0.3.0", "evaluation_id": "gsm8k/meta/1", "retrieved_timestamp": "1",
           "source_metadata": {"source_type": "documentation", "source_organization_name": "x",
                               "evaluator_relationship": "third_party"},
           "model_info": {"name": "Llama", "id": "meta/llama",
                          "additional_details": {"deployment_type": "unknown", "model_availability": "open_weights"}},
           "eval_library": {"name": "lm_eval", "version": "0.4.9"},
           "evaluation_results": [{"evaluation_name": "gsm8k", "source_data": {"dataset_name": "gsm8k",
                                                                               "source_type": "hf_dataset"},
                                   "metric_config": {"lower_is_better": False, "metric_name": "exact_match"},
                                   "score_details": {"score": 0.42, "uncertainty": {
                                       "standard_error": {"value": 0.013, "method": "analytic"},
                                       "num_samples": 1319}}}]}
    _valid(validators["eval"], rec)
    (tmp_path / "r.json").write_text(json.dumps(rec))
    t = read_results(tmp_path)
    row = t.iloc[0]
    assert (row.system, row.task, row.metric, row.value, row.stderr, row.n, row.source) == \
        ("meta/llama", "gsm8k", "exact_match", 0.42, 0.013, 1319, "lm_eval")
    assert np.isnan(row.ci_low) and np.isnan(row.ci_high)


def test_cli_export_and_import(run, tmp_path, validators):
    items, scores = run
    runner = CliRunner()
    table = tmp_path / "items.parquet"
    items.to_parquet(table)
    out = tmp_path / "scores.csv"
    res = runner.invoke(cli, ["evaluate", str(table), "-m", "brier_score", "--bootstrap", "100", "-o", str(out)])
    assert res.exit_code == 0, res.output
    res = runner.invoke(cli, ["export", str(out), "--format", "eee", "-o", str(tmp_path / "eee"), "--timestamp", "9",
                              "--items", str(table)])
    assert res.exit_code == 0, res.output
    files = sorted((tmp_path / "eee").rglob("*.json"))
    assert len(files) == 3
    doc = json.loads(files[0].read_text())
    _valid(validators["eval"], doc)
    ci = doc["evaluation_results"][0]["score_details"]["uncertainty"]["confidence_interval"]
    assert ci["method"] == "percentile bootstrap" and ci["confidence_level"] == 0.95
    res = runner.invoke(cli, ["import", str(tmp_path / "eee"), "-o", str(tmp_path / "back.csv")])
    assert res.exit_code == 0, res.output
    back = pd.read_csv(tmp_path / "back.csv")
    first = pd.read_csv(out)
    pd.testing.assert_frame_equal(back[first.columns].sort_values(["system", "task"]).reset_index(drop=True),
                                  first.sort_values(["system", "task"]).reset_index(drop=True))
    res = runner.invoke(cli, ["export", str(out), "--format", "eee", "-o", str(tmp_path / "x"),
                              "--timestamp", "yesterday"])
    assert res.exit_code == 2 and "timestamp" in res.output


def _board_numbers(spec_data: dict, spec_path: Path) -> dict[str, pd.DataFrame]:
    from scorebench.leaderboard.build import build_board
    from scorebench.leaderboard.spec import parse_spec

    spec_path.write_text("# spec given as a dict in the test\n")
    board = build_board(parse_spec(spec_data, spec_path, allow_outside=True))
    out = {}
    for section in board.sections:
        data = section.data.drop(columns=[c for c in ("n_parameters", "open_weights", "dominated")
                                          if c in section.data.columns])
        if len(data) and "pareto" not in section.key:
            out[section.key] = data.reset_index(drop=True)
    return out


@pytest.mark.skipif(not MTEB_RESULTS.is_dir(), reason=f"reference data not found at {MTEB_RESULTS}")
def test_mteb_folder_through_eee_gives_the_same_board(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        mteb = read_results(MTEB_RESULTS, format="mteb", benchmark="MTEB(eng, v2)")
    write_eee(mteb, tmp_path / "eee", higher_is_better=True, timestamp=0, organization="MTEB")
    back = read_results(tmp_path / "eee")
    cols = list(mteb.columns)
    pd.testing.assert_frame_equal(back[cols].sort_values(["system", "task"]).reset_index(drop=True),
                                  mteb.sort_values(["system", "task"]).reset_index(drop=True))
    assert back.attrs["aggregate_defaults"] == mteb.attrs["aggregate_defaults"]
    spec = tomllib.loads((ROOT / "leaderboards" / "mteb.toml").read_text())
    spec.update(n_boot=20)
    spec.pop("requires", None)
    original = {**spec, "sources": [{**spec["sources"][0], "path": str(MTEB_RESULTS)}]}
    converted = {**spec, "sources": [{"name": "mteb", "path": str(tmp_path / "eee"), "from": "eee"}]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        want = _board_numbers(original, tmp_path / "a.toml")
        got = _board_numbers(converted, tmp_path / "b.toml")
    assert list(got) == list(want) and len(want) >= 2
    for key in want:
        pd.testing.assert_frame_equal(got[key], want[key], check_dtype=False)


def test_harness_results_export_with_their_directions(tmp_path, validators):
    """lm-eval's results files carry higher_is_better per task: the export needs no direction flag."""
    runs = Path(__file__).parents[1] / "fixtures" / "lm_eval"
    scores = read_results(runs, format="lm_eval", level="results", system="folder")
    records = to_eee(scores, timestamp=0)
    for rec in records:
        _valid(validators["eval"], rec)
        assert rec["eval_library"] == {"name": "lm_eval", "version": "0.4.13",
                                       "additional_details": {"written_by": f"scorebench {scorebench.__version__}"}}
        assert rec["source_metadata"]["source_type"] == "documentation"
        assert {r["metric_config"]["lower_is_better"] for r in rec["evaluation_results"]} == {False}
    write_eee(scores, tmp_path, timestamp=0)
    back = read_results(tmp_path).sort_values(["system", "task", "metric"]).reset_index(drop=True)
    want = scores.sort_values(["system", "task", "metric"]).reset_index(drop=True)
    assert back["value"].tolist() == want["value"].tolist()


def test_writer_reproduces_the_folder_every_eval_ever_validated(tmp_path):
    """tests/fixtures/eee/scorebench_written was validated by every-eval-ever's own validator
    (make_reference.py, validation.json); the writer must still write exactly those files."""
    runner = CliRunner()
    res = runner.invoke(cli, ["export", str(FIXTURES / "scores.csv"), "--format", "eee", "-o", str(tmp_path),
                              "--timestamp", "1700000000", "--items", str(FIXTURES / "items.csv")])
    assert res.exit_code == 0, res.output
    committed = FIXTURES / "scorebench_written"
    want = sorted(p.relative_to(committed) for p in committed.rglob("*") if p.is_file())
    got = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert got == want and len(want) == 4
    for rel in want:
        assert (tmp_path / rel).read_bytes() == (committed / rel).read_bytes(), rel
    report = FIXTURES / "validation.json"
    doc = json.loads(report.read_text())
    assert doc["returncode"] == 0, doc["stdout"][-2000:]
    verdicts = {Path(v["file"]).as_posix(): v for v in json.loads(doc["stdout"])}
    assert sorted(verdicts) == sorted(p.as_posix() for p in want)
    assert all(v["valid"] and not v["errors"] and not v["warnings"] for v in verdicts.values())


def test_records_written_by_every_eval_evers_own_lm_eval_converter():
    """tests/fixtures/eee/from_lm_eval: every-eval-ever's lm-eval converter run on tests/fixtures/lm_eval
    (make_reference.py). The headline numbers read back equal the harness's results files."""
    folder = FIXTURES / "from_lm_eval"
    assert detect_results_format(folder) == "eee"
    scores = read_results(folder)
    harness = Path(__file__).parents[1] / "fixtures" / "lm_eval"
    for seed in ("seed0", "seed1"):
        reported = json.loads(next((harness / seed).glob("results_*.json")).read_text())["results"]
        mine = scores[scores["system"] == f"scorebench-tests/dummy-{seed}"].set_index(["task", "metric"])
        checks = {("sb_mc", "accuracy"): ("sb_mc", "acc,none"),
                  ("sb_mc", "lm-evaluation-harness.acc_norm"): ("sb_mc", "acc_norm,none"),
                  ("sb_gen/strict-match", "exact-match"): ("sb_gen", "exact_match,strict-match"),
                  ("sb_gen/flexible-extract", "exact-match"): ("sb_gen", "exact_match,flexible-extract")}
        for key, (task, metric) in checks.items():
            assert mine.loc[key, "value"] == reported[task][metric]
            stderr_key = metric.replace(",", "_stderr,")
            assert mine.loc[key, "stderr"] == reported[task][stderr_key]
            assert mine.loc[key, "lower_is_better"] is False or not mine.loc[key, "lower_is_better"]
    samples = read_results(folder, level="samples")
    means = samples.groupby(["system", "task"])["score"].mean()
    assert means[("scorebench-tests/dummy-seed0", "sb_mc/acc")] == 0.25
    assert means[("scorebench-tests/dummy-seed1", "sb_mc/acc_norm")] == 0.5
    # the same items pair across the two runs (sample_hash), as lm-eval's doc_hash pairs them
    mc = samples[samples["task"] == "sb_mc/acc"]
    ours = scorebench.compare(mc, "accuracy", tests=["permutation"], n_boot=50, n_perm=50, seed=0)
    table = read_results(harness, format="lm_eval", tasks="sb_mc", system="folder")
    theirs = scorebench.compare(table, "sample_mean@acc,none", tests=["permutation"], n_boot=50, n_perm=50, seed=0)
    assert abs(ours["mean_diff"].iloc[0]) == abs(theirs["mean_diff"].iloc[0])
