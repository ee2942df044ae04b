"""RewardBench reader on outputs written from its published schema."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from scorebench.errors import InputError
from scorebench.io import read_results

FOLDER = Path(__file__).parent / "fixtures" / "rewardbench"


def test_samples_reproduce_summary_accuracies():
    table = read_results(FOLDER)
    summary = json.loads((FOLDER / "example-rm.json").read_text())
    assert table.attrs["source_format"] == "rewardbench" and set(table["system"]) == {"example/tiny-rm"}
    np.testing.assert_allclose(table["correct"].mean(), summary["accuracy"], atol=1e-12)
    per_subset = table.groupby("task")["correct"].mean()
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
