"""Calibration straight from lm-eval runs: multiple-choice samples (per-choice log-likelihoods)
read as a multiclass table, on the files written by the real harness (tests/fixtures/lm_eval)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import scorebench
from scorebench.cli import cli
from scorebench.core.errors import InputError
from scorebench.io.tables import read_results

FIXTURES = Path(__file__).parents[1] / "fixtures" / "lm_eval"


def _samples(run: Path, task: str = "sb_mc") -> list[dict]:
    return [json.loads(line) for line in next(run.glob(f"samples_{task}_*.jsonl")).read_text().splitlines()]


def _reported(run: Path) -> dict:
    return json.loads(next(run.glob("results_*.json")).read_text())["results"]["sb_mc"]


@pytest.mark.parametrize("convention", ["acc", "acc_norm"])
@pytest.mark.parametrize("seed", [0, 1])
def test_argmax_reproduces_the_harness(seed, convention):
    run = FIXTURES / f"seed{seed}"
    table = read_results(run, format="lm_eval_mc", convention=convention)
    assert table.attrs["kind"] == "multiclass" and len(table) == 8
    scores = scorebench.evaluate(table, ["argmax_accuracy"], n_boot=0)
    assert scores["value"].item() == _reported(run)[f"{convention},none"]


@pytest.mark.parametrize("convention", ["acc", "acc_norm"])
def test_probabilities_are_the_softmax_of_the_file(convention):
    run = FIXTURES / "seed0"
    table = read_results(run, format="lm_eval_mc", convention=convention).set_index("id")
    for row in _samples(run):
        ll = np.array([float(r[0]) for r in row["filtered_resps"]])
        if convention == "acc_norm":  # the harness divides by the choice's length in characters
            ll = ll / np.array([len(c) for c in row["doc"]["choices"]])
        p = np.exp(ll) / np.exp(ll).sum()
        got = table.loc[row["doc_hash"], [f"p_{k}" for k in range(4)]].to_numpy(dtype=float)
        np.testing.assert_allclose(got, p, rtol=1e-13, atol=0)
        assert table.loc[row["doc_hash"], "y"] == str(row["doc"]["label"])


def test_scoring_rules_from_a_run():
    table = read_results(FIXTURES, format="lm_eval_mc", system="folder")
    scores = scorebench.evaluate(table, ["brier_score_multiclass", "log_score_multiclass", "ece_top_label"],
                                 n_boot=200, seed=0)
    for system, sub in table.groupby("system"):
        p = sub[[f"p_{k}" for k in range(4)]].to_numpy()
        y = sub["y"].astype(int).to_numpy()
        onehot = np.eye(4)[y]
        got = scores[scores.system == system].set_index("metric")
        np.testing.assert_allclose(got.loc["brier_score_multiclass", "value"], ((p - onehot) ** 2).sum(1).mean(),
                                   rtol=1e-12)
        np.testing.assert_allclose(got.loc["log_score_multiclass", "value"], -np.log(p[np.arange(len(y)), y]).mean(),
                                   rtol=1e-12)
        assert (got["ci_low"] <= got["value"]).all() and (got["value"] <= got["ci_high"]).all()


def _copy(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURES / "seed0", tmp_path / "seed0")
    return tmp_path / "seed0"


def _rewrite(run: Path, edit) -> None:
    path = next(run.glob("samples_sb_mc_*.jsonl"))
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    edit(rows)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_variable_choices_text_targets_and_minus_infinity(tmp_path):
    run = _copy(tmp_path)

    def edit(rows):
        rows[0]["filtered_resps"] = rows[0]["filtered_resps"][:3]  # three choices
        rows[0]["target"] = "2"
        rows[0].pop("acc"), rows[0].pop("acc_norm")
        rows[1]["target"] = rows[1]["doc"]["choices"][0]  # the gold answer's text
        rows[2]["filtered_resps"][3][0] = "-inf"
        rows[2]["acc"] = float(int(np.argmax([float(r[0]) for r in rows[2]["filtered_resps"]])) == 0)
    _rewrite(run, edit)
    table = read_results(run, format="lm_eval_mc").set_index("doc_id")
    assert table.loc["0", "n_choices"] == 3 and table.loc["0", "p_3"] == 0.0
    np.testing.assert_allclose(table.loc["0", ["p_0", "p_1", "p_2"]].sum(), 1.0, rtol=1e-15)
    assert table.loc["1", "y"] == "0" and table.loc["2", "p_3"] == 0.0
    scorebench.evaluate(table.reset_index(), ["log_score_multiclass"], n_boot=0)


@pytest.mark.parametrize("edit, match", [
    (lambda rows: rows[0].update(acc=1.0 - rows[0]["acc"]), "argmax of the log-likelihoods disagrees"),
    (lambda rows: rows[0]["arguments"].pop("gen_args_2"), r"gen_args_2\.arg_1.*missing"),
    (lambda rows: rows[0].update(target="forty-two"), "neither a choice index nor a choice"),
    (lambda rows: rows[0].update(target="12"), "outside the 4 choices"),
    (lambda rows: rows[0]["filtered_resps"][1].__setitem__(0, "abc"), r"filtered_resps\[1\]\[0\].*log-likelihood"),
    (lambda rows: rows.append(dict(rows[0])), "document repeated"),
    (lambda rows: rows[0].update(filtered_resps=[["-1.0", "False"]]), "two or more"),
])
def test_bad_samples_refused(tmp_path, edit, match):
    run = _copy(tmp_path)
    _rewrite(run, edit)
    with pytest.raises(InputError, match=match):
        read_results(run, format="lm_eval_mc")


def test_options_refused():
    with pytest.raises(InputError, match="convention"):
        read_results(FIXTURES, format="lm_eval_mc", convention="acc_mutual_info")
    with pytest.raises(InputError, match="no multiple_choice task"):
        read_results(FIXTURES / "seed0", format="lm_eval_mc", tasks="sb_gen")


def test_cli_evaluate_from_a_run():
    res = CliRunner().invoke(cli, ["evaluate", str(FIXTURES), "--from", "lm_eval_mc", "--from-option", "system=folder",
                                   "--from-option", "convention=acc_norm", "-m", "ece_top_label", "-m",
                                   "argmax_accuracy", "--bootstrap", "50"])
    assert res.exit_code == 0, res.output
    assert "ece_top_label" in res.output and "0.125" in res.output
    raw = read_results(FIXTURES / "seed1", format="lm_eval_mc", resps="raw")
    filtered = read_results(FIXTURES / "seed1", format="lm_eval_mc")
    pd.testing.assert_frame_equal(raw, filtered)
