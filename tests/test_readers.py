"""Every reader's format is detected from its files, and the CLI examples of the README run."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import scorebench
from scorebench.cli import cli
from scorebench.readers import FORMATS, detect_results_format

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.mark.parametrize("path, fmt", [
    ("lm_eval", "lm_eval"), ("lm_eval/seed0", "lm_eval"), ("arena/clean_battle_20240101.json", "arena"),
    ("rewardbench", "rewardbench"), ("helm/runs", "helm"), ("openood", "openood"), ("openood/scores/msp.pkl", "openood"),
])
def test_detected(path, fmt):
    assert detect_results_format(FIXTURES / path) == fmt
    assert scorebench.read_results(FIXTURES / path).attrs["source_format"] == fmt


def test_plain_tables_are_not_results(tmp_path):
    (tmp_path / "t.csv").write_text("system,y,p\na,1,0.5\n")
    assert detect_results_format(tmp_path / "t.csv") is None
    assert set(FORMATS) == {"mteb", "lm_eval", "helm", "arena", "rewardbench", "openood", "eee", "hf", "lm_eval_mc", "inspect", "rewardbench2"}


@pytest.mark.parametrize("args, expect", [
    (["compare", "lm_eval", "--from", "lm_eval", "--from-option", "tasks=sb_mc", "-m", "sample_mean@acc,none",
      "--bootstrap", "50", "--permutations", "50"], "permutation"),
    (["evaluate", "helm/runs", "--from", "helm", "-m", "sample_mean@exact_match", "--bootstrap", "0"], "openai/gpt2"),
    (["aggregate", "arena/clean_battle_20240101.json", "--from", "arena", "--from-option", "anony=true",
      "-m", "bradley_terry"], "gpt-4-0613"),
    (["import", "rewardbench", "--from-option", "level=sections"], "Chat Hard"),
    (["evaluate", "openood", "-m", "auroc", "--bootstrap", "0"], "near/cifar100"),
])
def test_cli_examples(args, expect, monkeypatch):
    monkeypatch.chdir(FIXTURES)
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert expect in result.stdout


def test_from_option_needs_from(tmp_path):
    (tmp_path / "t.csv").write_text("system,task,value\na,t,1\nb,t,2\n")
    result = CliRunner().invoke(cli, ["aggregate", str(tmp_path / "t.csv"), "--from-option", "x=1"])
    assert result.exit_code == 2 and "--from-option needs --from" in result.output
