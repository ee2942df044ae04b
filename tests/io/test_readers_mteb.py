"""MTEB reader: the shipped real results against the ``mteb`` package's own numbers."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from _mteb_package import load_mteb_results, mteb_quietly
from _paths import REFERENCE
from click.testing import CliRunner

import scorebench
from scorebench.cli import cli
from scorebench.core.errors import InputError
from scorebench.io.tables import read_results

MTEB_RESULTS = REFERENCE / "mteb" / "results"
needs_data = pytest.mark.skipif(not MTEB_RESULTS.is_dir(), reason=f"reference data not found at {MTEB_RESULTS}")


def _read(path, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return read_results(path, **options)


@pytest.fixture(scope="module")
def ours() -> pd.DataFrame:
    return _read(MTEB_RESULTS, format="mteb")


@pytest.fixture(scope="module")
def theirs():
    """Per-task scores and the leaderboard summary as the mteb package computes them, offline."""
    results = load_mteb_results(MTEB_RESULTS)
    with mteb_quietly():
        per_task = results.to_dataframe(aggregation_level="task", format="long")
        board = results.get_benchmark_result()
    return per_task, board


@needs_data
def test_per_task_scores_equal_mteb_package(ours, theirs):
    per_task, _ = theirs
    scored = per_task.dropna(subset=["score"])
    merged = ours.merge(scored, left_on=["system", "task"], right_on=["model_name", "task_name"],
                        how="outer", indicator=True)
    # the same 8588 cells are scored, and the same 54 are missing (absent subset / main score)
    assert (merged["_merge"] == "both").all(), merged.loc[merged["_merge"] != "both", ["system", "task"]].head()
    assert len(ours) == len(scored) == 8588
    np.testing.assert_allclose(merged["value"], merged["score"], rtol=0, atol=1e-12)
    assert ours["system"].nunique() == 270 and ours.attrs["n_skipped"] == per_task["score"].isna().sum() == 54
    assert set(ours["task_type"]) == {"Classification", "Clustering", "PairClassification", "Reranking",
                                      "Retrieval", "STS", "Summarization"}


@needs_data
def test_borda_zero_and_mean_task_reproduce_leaderboard(ours, theirs):
    _, board = theirs
    board = board.set_index("Model")
    borda = scorebench.aggregate(ours, "borda", missing="zero", n_boot=0)
    ranks = pd.Series(borda.ranks, index=list(borda.systems))
    # the board lists 258 of the 270 models (mteb drops 12 without registry metadata after ranking all 270)
    assert len(board) == 258
    assert (ranks[board.index] == board["Rank (Borda)"]).all()
    mean = scorebench.aggregate(ours, "mean", missing="available", n_boot=0).to_frame().set_index("system")
    complete = ours.groupby("system")["task"].nunique() == 41
    expected = board["Mean (Task)"].dropna()
    assert set(expected.index) == set(complete[complete].index) & set(board.index)
    np.testing.assert_allclose(mean.loc[expected.index, "score"], expected, rtol=0, atol=1e-12)


@needs_data
def test_provenance(ours):
    attrs = ours.attrs
    assert attrs["source_format"] == "mteb" and attrs["benchmark"] == "MTEB(eng, v2)"
    assert attrs["files_read"] == 8900 and len(attrs["files"]) == 8900 and len(attrs["sha256"]) == 64
    assert "1.18.0" in attrs["tool_version"]
    assert attrs["aggregate_defaults"]["borda"] == {"missing": "zero"}


@needs_data
def test_cli_aggregate_prints_ranking_with_coverage(tmp_path):
    out = tmp_path / "ranking.csv"
    result = CliRunner().invoke(cli, ["aggregate", str(MTEB_RESULTS), "--from", "mteb", "-m", "mean", "-m", "borda",
                                      "-o", str(out)])
    assert result.exit_code == 0, result.output
    table = scorebench.read_table(out)
    assert table.groupby("method").size().to_dict() == {"borda": 270, "mean": 270}
    assert {"coverage", "params", "rank"} <= set(table.columns)
    # every model has >= 20 task files; a few of those lack the counted subset (left missing)
    assert table["coverage"].between(18 / 41, 1).all() and table["coverage"].max() == 1
    assert set(table.loc[table["method"] == "borda", "params"]) == {"missing=zero"}


@needs_data
def test_cli_mean_is_mteb_mean_task_blank_when_incomplete(tmp_path, theirs):
    """Issue 29 item 4: under the format's conventions ``-m mean`` is MTEB's Mean (Task): blank for a
    model without every task (the mteb package's own board leaves it NaN), the mean over the
    available tasks only with ``--param missing=available``."""
    _, board = theirs
    board = board.set_index("Model")
    out = tmp_path / "mean.csv"
    result = CliRunner().invoke(cli, ["aggregate", str(MTEB_RESULTS), "--from", "mteb", "-m", "mean", "-o", str(out)])
    assert result.exit_code == 0, result.output
    table = scorebench.read_table(out).set_index("system")
    assert len(table) == 270 and set(table["params"]) == {"missing=blank"}
    blank = table["score"].isna()
    # blank exactly where MTEB leaves Mean (Task) blank, and marked so
    shared = board.index.intersection(table.index)
    assert (blank[shared] == board.loc[shared, "Mean (Task)"].isna()).all()
    assert (table.loc[blank, "coverage"] < 1).all() and (table.loc[~blank, "coverage"] == 1).all()
    assert table.loc[blank, "note"].str.startswith("blank").all() and table.loc[blank, "rank"].isna().all()
    expected = board["Mean (Task)"].dropna()
    np.testing.assert_allclose(table.loc[expected.index, "score"], expected, rtol=0, atol=1e-9)
    # the top rows are complete models (the issue: incomplete models topped the table at 66% coverage)
    assert (table["coverage"].iloc[:5] == 1).all()
    ranked = table.loc[~blank, "rank"].astype(int)
    assert ranked.min() == 1 and ranked.max() <= (~blank).sum()
    # one explicit option away: the mean over the tasks each model has
    out2 = tmp_path / "available.csv"
    result = CliRunner().invoke(cli, ["aggregate", str(MTEB_RESULTS), "--from", "mteb", "-m", "mean",
                                      "--param", "missing=available", "-o", str(out2)])
    assert result.exit_code == 0, result.output
    avail = scorebench.read_table(out2).set_index("system")
    assert avail["score"].notna().all() and set(avail["params"]) == {"missing=available"}
    np.testing.assert_allclose(avail.loc[expected.index, "score"], expected, rtol=0, atol=1e-9)


def test_mean_blank_policy_api():
    t = pd.DataFrame({"t1": [1.0, 3.0, 2.0], "t2": [5.0, np.nan, 1.0], "t3": [2.0, 2.0, 2.0]}, index=list("abc"))
    r = scorebench.aggregate(t, "mean", n_boot=0, missing="blank")
    assert r.systems == ("a", "c") and r.unscored == ("b",)
    frame = r.to_frame()
    assert frame["system"].tolist() == ["a", "c", "b"] and pd.isna(frame["score"].iloc[-1])
    assert pd.isna(frame["rank"].iloc[-1]) and frame["note"].iloc[-1].startswith("blank")
    with pytest.raises(InputError, match="missing='blank'"):
        scorebench.aggregate(t, "mean", n_boot=0)
    one = pd.DataFrame({"t1": [1.0, 3.0, 2.0], "t2": [5.0, np.nan, np.nan]}, index=list("abc"))
    with pytest.raises(InputError, match="only 1 system"):
        scorebench.aggregate(one, "mean", n_boot=0, missing="blank")


# --- small files: both layouts, the subset rule and the errors ------------------------------------------------


def _write(root, model, task, obj, revision="r1"):
    folder = root / model / revision
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{task}.json"
    path.write_text(obj if isinstance(obj, str) else json.dumps(obj))
    return path


def _entry(subset, score, **metrics):
    return {"hf_subset": subset, "languages": ["eng-Latn"], "main_score": score, **metrics}


def test_new_layout_subset_rule(tmp_path):
    _write(tmp_path, "org__a", "STS17", {"task_name": "STS17", "mteb_version": "1.18.0", "scores": {
        "test": [_entry("en-en", 0.8), _entry("ko-ko", 0.1)], "validation": [_entry("en-en", 0.0)]}})
    _write(tmp_path, "org__a", "AmazonCounterfactualClassification", {
        "task_name": "AmazonCounterfactualClassification", "mteb_version": "2.3.0",
        "scores": {"test": [_entry("en", 0.7), _entry("en-ext", 0.2), _entry("de", 0.1)]}})
    table = _read(tmp_path)
    assert table.set_index("task")["value"].to_dict() == {"AmazonCounterfactualClassification": 0.7, "STS17": 0.8}
    assert set(table["system"]) == {"org/a"}


def test_legacy_layouts_as_mteb_converts_them(tmp_path):
    # split -> metrics, STS metrics nested under cos_sim (-> cosine_spearman, the main metric)
    _write(tmp_path, "m__x", "BIOSSES", {"mteb_dataset_name": "BIOSSES", "mteb_version": "1.0.1",
                                         "test": {"cos_sim": {"spearman": 0.81, "pearson": 0.8},
                                                  "evaluation_time": 1.0}})
    # split -> subset -> metrics, main_score present
    _write(tmp_path, "m__x", "MassiveIntentClassification", {
        "mteb_dataset_name": "MassiveIntentClassification", "mteb_version": "0.0.2",
        "test": {"en": {"accuracy": 0.67, "main_score": 0.67}, "evaluation_time": 3.0}})
    # pair classification: max: {ap} -> max_ap
    _write(tmp_path, "m__x", "TwitterURLCorpus", {"mteb_dataset_name": "TwitterURLCorpus",
                                                  "test": {"max": {"ap": 0.85}, "cos_sim": {"ap": 0.84}}})
    # reranking without map_at_1000: no main score -> the cell is missing, as in mteb
    _write(tmp_path, "m__x", "AskUbuntuDupQuestions", {"mteb_dataset_name": "AskUbuntuDupQuestions",
                                                       "test": {"map": 0.6, "mrr": 0.7}})
    with pytest.warns(UserWarning, match="1 .model, task. cell"):
        table = read_results(tmp_path, metrics="all")
    main = table[table["metric"] == "main_score"].set_index("task")["value"].to_dict()
    assert main == {"BIOSSES": 0.81, "MassiveIntentClassification": 0.67, "TwitterURLCorpus": 0.85}
    assert table.attrs["skipped"] == ["m__x/r1/AskUbuntuDupQuestions.json: no main score (map_at_1000) in the "
                                      "selected subsets"]
    biosses = table[table["task"] == "BIOSSES"].set_index("metric")["value"]
    assert biosses["cosine_pearson"] == 0.8


def test_model_meta_names_the_system(tmp_path):
    path = _write(tmp_path, "folder__name", "BIOSSES", {"task_name": "BIOSSES", "mteb_version": "1.18.0",
                                                        "scores": {"test": [_entry("default", 0.5)]}})
    (path.parent / "model_meta.json").write_text(json.dumps({"name": "real/name", "revision": "r1"}))
    assert _read(tmp_path)["system"].tolist() == ["real/name"]


@pytest.mark.parametrize("content, field", [
    ('{"task_name": "BIOSSES", "mteb_version": "1.18.0", "scores": {"test": [', "invalid JSON"),
    ({"task_name": "BIOSSES", "mteb_version": "7.0.0", "scores": {"test": []}}, "field 'mteb_version'"),
    ({"task_name": "BIOSSES", "mteb_version": "1.18.0", "scores": {"test": [{"hf_subset": "default"}]}},
     r"field 'scores.test\[0\].main_score': missing"),
    ({"mteb_version": "1.18.0", "scores": {}}, "field 'task_name'"),
    ([1, 2], "expected a JSON object"),
])
def test_malformed_files_name_file_and_field(tmp_path, content, field):
    path = _write(tmp_path, "o__m", "BIOSSES", content)
    with pytest.raises(InputError, match=field) as info:
        read_results(tmp_path, format="mteb")
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_duplicate_model_task_revision_refused(tmp_path):
    obj = {"task_name": "BIOSSES", "mteb_version": "1.18.0", "scores": {"test": [_entry("default", 0.5)]}}
    for folder in ("r1", "r2"):  # two folders whose model_meta.json name the same revision
        path = _write(tmp_path, "o__m", "BIOSSES", obj, revision=folder)
        (path.parent / "model_meta.json").write_text(json.dumps({"name": "o/m", "revision": "r1"}))
    with pytest.raises(InputError, match="duplicate result of model 'o/m' on task 'BIOSSES' in revision 'r1'"):
        read_results(tmp_path)


def test_unknown_benchmark_and_format(tmp_path):
    _write(tmp_path, "o__m", "BIOSSES", {"task_name": "BIOSSES", "mteb_version": "1.18.0",
                                         "scores": {"test": [_entry("default", 0.5)]}})
    with pytest.raises(InputError, match="unknown MTEB benchmark"):
        read_results(tmp_path, benchmark="MTEB(fra)")
    with pytest.raises(InputError, match="unknown result format"):
        read_results(tmp_path, format="nope")
    (tmp_path / "plain.csv").write_text("system,value\na,1\n")
    with pytest.raises(InputError, match="not a result file"):
        read_results(tmp_path / "plain.csv")


def test_cli_import_and_auto_detect(tmp_path):
    _write(tmp_path, "o__a", "BIOSSES", {"task_name": "BIOSSES", "mteb_version": "1.18.0",
                                         "scores": {"test": [_entry("default", 0.5)]}})
    _write(tmp_path, "o__b", "BIOSSES", {"task_name": "BIOSSES", "mteb_version": "1.18.0",
                                         "scores": {"test": [_entry("default", 0.7)]}})
    runner = CliRunner()
    out = tmp_path / "t.parquet"
    result = runner.invoke(cli, ["import", str(tmp_path), "--from", "mteb", "-o", str(out)])
    assert result.exit_code == 0, result.output
    back = scorebench.read_table(out)
    assert sorted(back["value"]) == [0.5, 0.7]
    result = runner.invoke(cli, ["aggregate", str(tmp_path), "-m", "borda"])  # folder: detected as MTEB
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1].split()[:2] == ["borda", "missing=zero"]
    result = runner.invoke(cli, ["import", str(tmp_path), "--from", "mteb", "--from-option", "benchmark=nope"])
    assert result.exit_code == 2 and "unknown MTEB benchmark 'nope'" in result.output


def test_board_spec_source_from_mteb(tmp_path):
    from scorebench.leaderboard import build_board, load_spec

    for model, scores in (("o__a", (0.5, 0.9)), ("o__b", (0.7, 0.8)), ("o__c", (0.6, 0.1))):
        for task, score in zip(("BIOSSES", "STS12"), scores):
            _write(tmp_path / "results", model, task, {"task_name": task, "mteb_version": "1.18.0",
                                                       "scores": {"test": [_entry("default", score)]}})
    spec_path = tmp_path / "board.toml"
    spec_path.write_text('name = "mteb"\ntitle = "MTEB"\nn_boot = 0\n'
                         '[[sources]]\nname = "mteb"\npath = "results"\nfrom = "mteb"\nbenchmark = "MTEB(eng, v2)"\n'
                         'complete_only = true\n[aggregate]\nsource = "mteb"\nmethods = ["borda"]\n')
    spec = load_spec(spec_path)
    assert spec.sources[0].source_format == "mteb"
    assert spec.sources[0].read_options == (("benchmark", "MTEB(eng, v2)"),)
    board = build_board(spec)
    data = next(section.data for section in board.sections if "system" in section.data.columns)
    ranked = data.sort_values("rank")["system"].tolist()
    assert ranked == ["o/b", "o/a", "o/c"]  # Borda points 3, 2, 1
    assert any(key == "source mteb" and "sha256" in value for key, value in board.provenance)


def test_legacy_flat_layout_names_each_model(tmp_path):
    """mteb < 1.11 wrote results/<model>/<Task>.json (no revision folder)."""
    for model, value in (("all-MiniLM-L6-v2", 0.81), ("gtr-t5-base", 0.79)):
        folder = tmp_path / "results" / model
        folder.mkdir(parents=True)
        (folder / "BIOSSES.json").write_text(json.dumps({
            "mteb_dataset_name": "BIOSSES", "mteb_version": "1.0.1", "dataset_revision": "d3fb88f8",
            "test": {"cos_sim": {"spearman": value, "pearson": 0.8}, "evaluation_time": 1.0}}))
    from scorebench.io.readers import detect_results_format

    assert detect_results_format(tmp_path) == "mteb"
    table = _read(tmp_path)
    assert table.set_index("system")["value"].to_dict() == {"all-MiniLM-L6-v2": 0.81, "gtr-t5-base": 0.79}
    assert set(table["revision"]) == {""}
    one = _read(tmp_path / "results" / "gtr-t5-base")  # the model's folder itself
    assert one["system"].tolist() == ["gtr-t5-base"]
    # the revision layout keeps naming by the model folder, also when one model folder is given
    _write(tmp_path / "new", "org__m", "BIOSSES", {"task_name": "BIOSSES", "mteb_version": "1.18.0",
                                                  "scores": {"test": [_entry("default", 0.5)]}},
           revision="no_revision_available")
    assert _read(tmp_path / "new" / "org__m")["system"].tolist() == ["org/m"]


def test_corrupt_file_of_a_task_outside_the_benchmark_is_skipped(tmp_path):
    _write(tmp_path, "o__m", "BIOSSES", {"task_name": "BIOSSES", "mteb_version": "1.18.0",
                                         "scores": {"test": [_entry("default", 0.5)]}})
    bad = _write(tmp_path, "o__m", "SomeOtherTask", '{"task_name": "SomeOtherTask", "scores": {"test": [')
    table = _read(tmp_path)
    assert table["task"].tolist() == ["BIOSSES"] and table.attrs["ignored_files"] == 1
    bad.write_text('{"task_name": "BIOSSES", "scores": {"test": [')  # inside the benchmark: refused
    bad.rename(bad.parent / "BIOSSES2.json")
    with pytest.raises(InputError, match="invalid JSON"):
        read_results(tmp_path)


def test_gzipped_result_files(tmp_path):
    import gzip

    path = _write(tmp_path, "o__m", "BIOSSES", {"task_name": "BIOSSES", "mteb_version": "1.18.0",
                                                "scores": {"test": [_entry("default", 0.5)]}})
    (path.parent / "BIOSSES.json.gz").write_bytes(gzip.compress(path.read_bytes()))
    path.unlink()
    assert _read(tmp_path, format="mteb")["value"].tolist() == [0.5]
