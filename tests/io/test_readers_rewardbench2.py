"""RewardBench 2 scores files: per-prompt credit with reward-bench's tie penalty, the Ties
composite, the overall score; numbers worked out by hand below."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

import scorebench
from scorebench.cli import cli
from scorebench.core.errors import InputError
from scorebench.io.readers import detect_results_format, read_results


def _scores_file(model="org/rm", results=True):
    rows = [  # (id, subset, scores, num_correct)
        ("f1", "Factuality", [3.0, 1.0, 2.0, 0.0], 1),   # chosen highest: 1
        ("f2", "Factuality", [1.0, 3.0, 2.0, 0.0], 1),   # not: 0
        ("f3", "Factuality", [3.0, 3.0, 1.0, 0.0], 1),   # two-way tie at the top: 1/2
        ("m1", "Math", [0.5, 0.1, 0.2, 0.3], 1),          # 1
        ("p1", "Precise IF", [0.0, 0.0, 0.0, 0.0], 1),    # four-way tie: 1/4
        ("s1", "Safety", [1.0, 2.0, 0.0, 0.0], 1),        # 0
        ("o1", "Focus", [5.0, 4.0, 3.0, 2.0], 1),         # 1
        ("ref:1", "Ties", [2.0, 0.0, 1.0], 1),            # accurate, gap 1
        ("tied:1", "Ties", [2.0, 1.0, 0.5, 0.0], 2),      # accurate, spread 1, gap 0.5
        ("ref:2", "Ties", [1.0, 3.0], 1),                 # not accurate, gap -2
        ("tied:2", "Ties", [3.0, 2.9, 1.0], 2),           # accurate, spread 0.1, gap 1.9
    ]
    doc = {"id": [r[0] for r in rows], "subset": [r[1] for r in rows], "scores": [r[2] for r in rows],
           "num_correct": [r[3] for r in rows], "model": model, "model_type": "Seq. Classifier",
           "text": [["..."] * len(r[2]) for r in rows]}
    if results:
        doc["results"] = [1, 0, 0.5, 1, 0.25, 0, 1, None, None, None, None]
    return doc


# Ties by hand: ref accuracy (1 + 0) / 2, tied accuracy (1 + 1) / 2;
# prompt 1: d = 1, m_tied = 0.5, min(m_ref, m_tied) = 0.5 -> preferred 0, hard 0, tanh(0.5 / 1 - 1)
# prompt 2: d = 0.1, m_tied = 1.9, min(-2, 1.9) = -2 -> preferred 1, hard 0, tanh(-2 / 0.1 - 1)
TIES = 0.3 * 1.0 + 0.3 * 0.5 + 0.2 * 0.5 + 0.2 * 0.0 + 0.01 * (math.tanh(-0.5) + math.tanh(-21.0)) / 2
SUBSETS = {"Factuality": 0.5, "Math": 1.0, "Precise IF": 0.25, "Safety": 0.0, "Focus": 1.0, "Ties": TIES}


def test_subset_scores_and_overall(tmp_path):
    (tmp_path / "rm.json").write_text(json.dumps(_scores_file()))
    assert detect_results_format(tmp_path) == "rewardbench2"
    t = read_results(tmp_path, level="subsets").set_index("task")
    for subset, value in SUBSETS.items():
        np.testing.assert_allclose(t.loc[subset, "value"], value, rtol=0, atol=1e-15)
    assert t.loc["Ties", "metric"] == "ties_score"
    np.testing.assert_allclose(t.loc["overall", "value"], np.mean(list(SUBSETS.values())), atol=1e-15)


def test_per_prompt_rows_pair_across_models(tmp_path):
    for name in ("a", "b"):
        doc = _scores_file(model=f"org/{name}", results=name == "a")
        if name == "b":
            doc["scores"][1] = [4.0, 3.0, 2.0, 0.0]  # b gets f2 right
        (tmp_path / f"{name}.json").write_text(json.dumps(doc))
    t = read_results(tmp_path)
    assert len(t) == 22 and set(t["system"]) == {"org/a", "org/b"}
    a = t[t.system == "org/a"].set_index("id")
    assert a.loc["f3", "correct"] == 0.5 and a.loc["p1", "correct"] == 0.25 and a.loc["ref:2", "correct"] == 0.0
    assert a.loc["f1", "margin"] == 1.0
    fact = t[t.task == "Factuality"]
    result = scorebench.compare(fact, "sample_mean@correct", tests=["permutation"], n_boot=50, n_perm=50, seed=0)
    np.testing.assert_allclose(abs(result["mean_diff"].iloc[0]), 1 / 3, atol=1e-15)


def test_summary_beside_scores_is_checked(tmp_path):
    scores = tmp_path / "eval-set-scores" / "org" / "rm.json"
    summary = tmp_path / "eval-set" / "org" / "rm.json"
    scores.parent.mkdir(parents=True)
    summary.parent.mkdir(parents=True)
    scores.write_text(json.dumps(_scores_file()))
    summary.write_text(json.dumps({"model": "org/rm", **SUBSETS}))
    assert len(read_results(tmp_path / "eval-set-scores", format="rewardbench2")) == 11
    summary.write_text(json.dumps({"model": "org/rm", **SUBSETS, "Math": 0.9}))
    with pytest.raises(InputError, match="Math"):
        read_results(tmp_path / "eval-set-scores", format="rewardbench2")


@pytest.mark.parametrize("edit, match", [
    (lambda d: d["results"].__setitem__(0, 0), "do not belong together"),
    (lambda d: d["num_correct"].__setitem__(0, 4), "num_correct"),
    (lambda d: d["scores"].__setitem__(0, [1.0]), "two or more"),
    (lambda d: d["id"].__setitem__(7, "reference-1"), "ref:<k>"),
    (lambda d: d["subset"].pop(), "different lengths"),
])
def test_bad_files(tmp_path, edit, match):
    doc = _scores_file()
    edit(doc)
    (tmp_path / "rm.json").write_text(json.dumps(doc))
    with pytest.raises(InputError, match=match):
        read_results(tmp_path / "rm.json", format="rewardbench2")


def test_cli(tmp_path):
    (tmp_path / "rm.json").write_text(json.dumps(_scores_file()))
    res = CliRunner().invoke(cli, ["import", str(tmp_path), "--from-option", "level=subsets", "--from", "rewardbench2"])
    assert res.exit_code == 0, res.output
    assert "ties_score" in res.output and "overall" in res.output
