"""RewardBench reader on outputs written from its published schema."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from scorebench.core.errors import InputError
from scorebench.io.tables import read_results

FOLDER = Path(__file__).parents[1] / "fixtures" / "rewardbench"


def test_samples_reproduce_summary_accuracies():
    table = read_results(FOLDER)
    summary = json.loads((FOLDER / "example-rm.json").read_text())
    assert table.attrs["source_format"] == "rewardbench" and set(table["system"]) == {"example/tiny-rm"}
    np.testing.assert_allclose(table["correct"].mean(), summary["accuracy"], atol=1e-12)
    assert set(table["task"]) == {"rewardbench"}
    per_subset = table.groupby("subset")["correct"].mean()
    for subset, value in summary["extra_results"].items():
        assert per_subset[subset] == value
    assert (table["margin"] > 0).eq(table["correct"] == 1).all()


def test_section_scores_weighted_by_prompt_counts():
    sections = read_results(FOLDER, level="sections").set_index("task")["value"]
    # hand-computed with RewardBench's counts: Chat misses mt-bench-easy (28 of 358 prompts)
    np.testing.assert_allclose(sections["Chat"], (100 + 95 + 95 + 40) / 358, atol=1e-15)
    np.testing.assert_allclose(sections["Chat Hard"], (37 + 50 + 134 + 92 + 47 + 46) / 456, atol=1e-15)
    np.testing.assert_allclose(sections["Safety"], (100 + 100 + 154 + 250 + 68) / 740, atol=1e-15)
    # math-prm (0.5, weighted 984) against the six code subsets (hep-go wrong: 4 x 164 right of 984)
    np.testing.assert_allclose(sections["Reasoning"], (492 + 820) / 1968, atol=1e-15)


def test_summary_disagreeing_with_outputs_refused(tmp_path):
    shutil.copytree(FOLDER, tmp_path / "rb")
    path = tmp_path / "rb" / "example-rm.json"
    summary = json.loads(path.read_text())
    summary["extra_results"]["hep-go"] = 1.0
    path.write_text(json.dumps(summary))
    with pytest.raises(InputError, match="field 'extra_results.hep-go'.*do not belong together"):
        read_results(tmp_path / "rb")


def test_bad_records(tmp_path):
    path = tmp_path / "out.jsonl"
    path.write_text(json.dumps({"id": 1, "results": 1, "scores_chosen": 1.0, "scores_rejected": 0.0,
                                "subset": "nope"}) + "\n")
    with pytest.raises(InputError, match=r"field '\[0\].subset': unknown subset 'nope'"):
        read_results(path, format="rewardbench")
    path.write_text('{"id": 1, "results": 1, "scores_chosen": 1.0, "scores_rejec')
    with pytest.raises(InputError, match="line 1: invalid JSON"):
        read_results(path, format="rewardbench")


# ---- files in the layouts reward-bench's own writers produce ---------------------------------------------
# scripts/run_rm.py: save_to_hub(out_dataset.to_dict(), ...) -> json.dumps(d, indent=4, sort_keys=True) into
# results/eval-set-scores/<org>/<model>.json; the summary (model, model_type, chat_template, one accuracy per
# subset) into results/eval-set/<org>/<model>.json. rewardbench.py (CLI): json.dump(final_results) with
# "extra_results": null when the dataset is a local copy.

def _scores(seed: int, subsets=("alpacaeval-easy", "mt-bench-hard", "donotanswer", "math-prm", "hep-go"), n=6):
    rng = np.random.default_rng(seed)
    rows = []
    for subset in subsets:
        for i in range(n):
            sc, sr = (float(v) for v in rng.normal(size=2).round(1))
            if i == 0:
                sr = sc  # a tie: RewardBench's strict > counts it as a loss
            rows.append({"prompt": f"{subset} prompt {i}", "chosen": "A long chosen answer. " * 300,
                         "rejected": "A rejected answer. " * 200, "id": 1000 * len(rows) + i, "results": int(sc > sr),
                         "subsets": subset, "scores_chosen": sc, "scores_rejected": sr})
    return rows


def _write_run_rm(root: Path, model: str, rows: list[dict]) -> dict:
    datasets = pytest.importorskip("datasets")
    columns = datasets.Dataset.from_list(rows).to_dict()  # the writer's own Dataset.to_dict()
    scores = root / "results" / "eval-set-scores" / f"{model}.json"
    scores.parent.mkdir(parents=True, exist_ok=True)
    scores.write_text(json.dumps(columns, indent=4, sort_keys=True))
    grouped = {"model": model, "model_type": "Seq. Classifier", "chat_template": "tulu"}
    for subset in sorted({r["subsets"] for r in rows}):
        got = [r["results"] for r in rows if r["subsets"] == subset]
        grouped[subset] = sum(got) / len(got)
    summary = root / "results" / "eval-set" / f"{model}.json"
    summary.parent.mkdir(parents=True, exist_ok=True)
    summary.write_text(json.dumps(grouped, indent=4, sort_keys=True))
    return grouped


def _official(grouped: dict) -> float:
    """calculate_scores_per_section, then the mean of the four sections (RewardBench's headline)."""
    from scorebench.io.readers.rewardbench import EXAMPLE_COUNTS, SECTIONS

    sections = []
    for tests in SECTIONS.values():
        total = sum(EXAMPLE_COUNTS[t] for t in tests if t in grouped)
        weighted = sum(grouped[t] * EXAMPLE_COUNTS[t] for t in tests if t in grouped)
        sections.append(weighted / total if total else 0)
    return float(np.mean(sections))


def test_run_rm_column_layout_two_models_detected_and_scored(tmp_path):
    import scorebench
    from scorebench.io.readers import detect_results_format

    a = _write_run_rm(tmp_path, "org/rm-a", _scores(1))
    b = _write_run_rm(tmp_path, "org/rm-b", _scores(2, subsets=("alpacaeval-easy", "hep-go")))
    scores_file = tmp_path / "results" / "eval-set-scores" / "org" / "rm-a.json"
    assert scores_file.read_bytes()[:4096].find(b'"scores_chosen"') < 0  # beyond the first 4 KB
    assert detect_results_format(scores_file) == "rewardbench"
    assert detect_results_format(tmp_path) == "rewardbench"
    table = read_results(tmp_path)
    assert sorted(table["system"].unique()) == ["org/rm-a", "org/rm-b"] and table.attrs["n_systems"] == 2
    out = scorebench.evaluate(table, "rewardbench_score", n_boot=0).set_index("system")["value"]
    assert len(out) == 2  # one row per reward model, not per subset
    assert out["org/rm-a"] == pytest.approx(_official(a), abs=2e-16)
    assert out["org/rm-b"] == pytest.approx(_official(b), abs=2e-16)  # missing sections count 0
    sections = read_results(tmp_path, level="sections")
    assert sections.groupby("system")["value"].mean().to_dict() == pytest.approx(
        {"org/rm-a": _official(a), "org/rm-b": _official(b)}, abs=2e-16)


def test_cli_nested_outputs_null_extra_results_and_gzip(tmp_path):
    import gzip

    from click.testing import CliRunner

    from scorebench.cli import cli as main

    rows = _scores(3)
    folder = tmp_path / "results" / "org"
    folder.mkdir(parents=True)
    with open(folder / "rm_outputs.jsonl", "w") as fh:
        for r in rows:
            fh.write(json.dumps({k: v for k, v in r.items() if k not in ("chosen", "rejected")}
                                | {"subset": r["subsets"]}) + "\n")
    acc = sum(r["results"] for r in rows) / len(rows)
    (folder / "rm.json").write_text(json.dumps({"accuracy": acc, "num_prompts": len(rows), "model": "org/rm",
                                                "ref_model": None, "tokenizer": "org/rm", "chat_template": None,
                                                "extra_results": None}))
    table = read_results(tmp_path)
    assert set(table["system"]) == {"org/rm"} and len(table) == len(rows)
    gz = tmp_path / "gz"
    gz.mkdir()
    (gz / "rm_outputs.jsonl.gz").write_bytes(gzip.compress((folder / "rm_outputs.jsonl").read_bytes()))
    zipped = read_results(gz)
    np.testing.assert_array_equal(zipped["margin"].to_numpy(), table["margin"].to_numpy())
    result = CliRunner().invoke(main, ["evaluate", str(tmp_path), "-m", "rewardbench_score", "--bootstrap", "0"])
    assert result.exit_code == 0, result.output
    grouped = {}
    for r in rows:
        grouped.setdefault(r["subsets"], []).append(r["results"])
    assert f"{_official({k: np.mean(v) for k, v in grouped.items()}):.4f}" in result.output
    result = CliRunner().invoke(main, ["import", str(tmp_path)])
    assert result.exit_code == 0 and "rewardbench" in result.output


def test_section_intervals_carry_the_math_prm_weight(tmp_path):
    import scorebench

    _write_run_rm(tmp_path, "org/rm", _scores(4, subsets=("math-prm", "hep-go", "hep-cpp"), n=8))
    table = read_results(tmp_path)
    sections = read_results(tmp_path, level="sections").set_index("task")["value"]
    out = scorebench.evaluate(table, "rewardbench_section", by="system,section", n_boot=100)
    row = out.set_index("section").loc["Reasoning"]
    assert row["value"] == pytest.approx(sections["Reasoning"], abs=2e-16)
    assert row["ci_low"] <= row["value"] <= row["ci_high"]
    part = table[table["section"] == "Reasoning"]
    assert np.average(part["correct"], weights=part["weight"]) == pytest.approx(sections["Reasoning"], abs=1e-15)


def test_eval_set_summaries_alone_give_the_section_scores(tmp_path):
    from click.testing import CliRunner

    from scorebench.cli import cli

    a = _write_run_rm(tmp_path, "org/rm-a", _scores(5))
    summaries = tmp_path / "results" / "eval-set"
    table = read_results(summaries)
    assert table.attrs["level"] == "sections" and set(table["system"]) == {"org/rm-a"}
    assert table["value"].mean() == pytest.approx(_official(a), abs=2e-16)
    with pytest.raises(InputError, match="only RewardBench summaries"):
        read_results(summaries, level="samples")
    result = CliRunner().invoke(cli, ["import", str(summaries)])
    assert result.exit_code == 0 and "Chat Hard" in result.output
