"""Hugging Face Hub evaluation results: .eval_results/*.yaml written from any scores table (the
interval in notes) and read back; the legacy model-index block of model cards read."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

import scorebench
from scorebench.cli import cli
from scorebench.core.errors import InputError
from scorebench.io.hf import to_hf_eval_results, write_hf_eval_results
from scorebench.io.readers import detect_results_format, read_results

CARD = """---
language: en
license: apache-2.0
model-index:
- name: org/tiny-bert
  results:
  - task:
      type: text-classification
      name: Text Classification
    dataset:
      name: GLUE SST2
      type: glue
      config: sst2
      split: validation
    metrics:
    - type: accuracy
      value: 0.9105504587155964
      name: Accuracy
      verified: true
    - type: f1
      value: "0.912"
    - type: huge
      value: 10000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000
  - task:
      type: text-classification
    dataset:
      type: imdb
      split: test
    metrics:
    - type: accuracy
      value: "-"
---

# tiny-bert

Text after the front matter: model-index: is not read here.
"""


@pytest.fixture(scope="module")
def scores():
    rng = np.random.default_rng(5)
    items = pd.DataFrame({"system": np.repeat(["org/a", "org/b"], 80), "task": np.tile(np.repeat(["gpqa", "hle"], 40), 2),
                          "id": np.tile(np.arange(80), 2), "correct": rng.integers(0, 2, 160).astype(float)})
    return scorebench.evaluate(items, ["accuracy"], n_boot=100, seed=3)


def test_entries_follow_the_hub_fields(scores):
    entries = to_hf_eval_results(scores, dataset={"gpqa": "Idavidrein/gpqa", "hle": "cais/hle"}, scale=100,
                                 date="2026-01-15", source_url="https://example.org/logs", source_name="logs")
    assert sorted(entries) == [("org/a", "Idavidrein/gpqa"), ("org/a", "cais/hle"), ("org/b", "Idavidrein/gpqa"),
                               ("org/b", "cais/hle")]
    entry = entries[("org/a", "cais/hle")][0]
    assert set(entry) == {"dataset", "value", "date", "source", "notes"}
    assert entry["dataset"] == {"id": "cais/hle", "task_id": "hle"}
    row = scores[(scores.system == "org/a") & (scores.task == "hle")].iloc[0]
    assert entry["value"] == row["value"] * 100
    assert entry["notes"] == (f"accuracy; 95% CI [{float(row['ci_low']) * 100!r}, {float(row['ci_high']) * 100!r}] "
                              f"(wilson score interval); n = 40; scorebench {scorebench.__version__}, seed 3")
    assert entry["source"] == {"url": "https://example.org/logs", "name": "logs"}


def test_write_and_read_back(scores, tmp_path):
    paths = write_hf_eval_results(scores, tmp_path, dataset="org/suite")
    assert sorted(p.relative_to(tmp_path).as_posix() for p in paths) == [
        "org/a/.eval_results/org__suite.yaml", "org/b/.eval_results/org__suite.yaml"]
    doc = yaml.safe_load(paths[0].read_text())
    assert isinstance(doc, list) and {e["dataset"]["task_id"] for e in doc} == {"gpqa", "hle"}
    assert detect_results_format(tmp_path) == "hf"
    back = read_results(tmp_path)
    assert set(back["system"]) == {"org/a", "org/b"}
    back = back.assign(task=back["task"].str.replace("org/suite:", "", regex=False))
    cols = ["system", "task", "metric", "value", "ci_low", "ci_high", "n"]
    got = back[cols].sort_values(["system", "task"]).reset_index(drop=True)
    want = scores[cols].sort_values(["system", "task"]).reset_index(drop=True)
    got["n"] = got["n"].astype(want["n"].dtype)
    pd.testing.assert_frame_equal(got, want)  # repr of floats in notes: exact
    assert set(back["interval_method"]) == {"wilson score interval"} and set(back["ci_level"]) == {0.95}


def test_model_card_model_index(tmp_path):
    card = tmp_path / "tiny-bert" / "README.md"
    card.parent.mkdir()
    card.write_text(CARD)
    assert detect_results_format(card) == "hf"
    with pytest.warns(UserWarning, match="2 result"):
        t = read_results(tmp_path)
    assert t[["system", "task", "metric", "value", "verified"]].values.tolist() == [
        ["org/tiny-bert", "glue:sst2@validation", "accuracy", 0.9105504587155964, True],
        ["org/tiny-bert", "glue:sst2@validation", "f1", 0.912, False]]
    assert t.attrs["n_skipped"] == 2 and "imdb" not in set(t["dataset"])  # "-" and an integer beyond float
    assert t["task_type"].tolist() == ["text-classification"] * 2


@pytest.mark.parametrize("text, match", [
    ("---\nmodel-index: [1, 2\n---\n", "invalid YAML at line"),
    ("---\nmodel-index: {name: x}\n---\n", "expected a list"),
    ("---\nmodel-index:\n- name: m\n  results:\n  - dataset: {type: d}\n    metrics:\n    - {value: 1}\n---\n",
     r"metrics\[0\]\.type"),
    ("---\nmodel-index:\n- name: m\n  results:\n  - dataset: {type: d}\n    metrics:\n    - {type: a, value: 1}\n"
     "    - {type: a, value: 2}\n---\n", "more than once"),
    ("---\nmodel-index:\n- name: m\n  results:\n  - dataset: {type: d}\n    metrics:\n    - {type: a, value: !!python/object/apply:os.system [echo]}\n---\n",
     "invalid YAML"),
])
def test_bad_cards(tmp_path, text, match):
    (tmp_path / "README.md").write_text(text)
    with pytest.raises(InputError, match=match):
        read_results(tmp_path / "README.md", format="hf")


def test_writer_refusals(scores):
    two = pd.concat([scores, scores.assign(metric="other")], ignore_index=True)
    with pytest.raises(InputError, match="several metrics"):
        to_hf_eval_results(two, dataset="org/x")
    with pytest.raises(InputError, match="not a Hub dataset id"):
        to_hf_eval_results(scores.assign(task="a b"))
    with pytest.raises(InputError, match="no Hub dataset id"):
        to_hf_eval_results(scores, dataset={"gpqa": "o/g"})
    with pytest.raises(InputError, match="finite"):
        to_hf_eval_results(scores.assign(value=np.nan), dataset="o/x")


def test_cli(scores, tmp_path):
    table = tmp_path / "scores.parquet"
    scores.to_parquet(table)
    out = tmp_path / "hub"
    res = CliRunner().invoke(cli, ["export", str(table), "--format", "hf", "-o", str(out), "--dataset", "gpqa=Idavidrein/gpqa",
                                   "--dataset", "hle=cais/hle", "--scale", "100"])
    assert res.exit_code == 0, res.output
    assert len(list(out.rglob("*.yaml"))) == 4
    res = CliRunner().invoke(cli, ["import", str(out)])
    assert res.exit_code == 0 and "cais/hle:hle" in res.output
    res = CliRunner().invoke(cli, ["export", str(table), "--format", "hf", "-o", str(out), "--dataset", "gpqa="])
    assert res.exit_code == 2 and "TASK=ID" in res.output


def test_yaml_aliases_refused(tmp_path):
    laughs = "---\nmodel-index:\n- name: m\n  results:\n  - &r\n    dataset: {type: d}\n    metrics: [{type: a, value: 1}]\n  - *r\n---\n"
    (tmp_path / "README.md").write_text(laughs)
    with pytest.raises(InputError, match="alias"):
        read_results(tmp_path / "README.md", format="hf")
