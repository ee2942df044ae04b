"""Every reader's format is detected from its files, and the CLI examples of the README run."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import scorebench
from scorebench.cli import cli
from scorebench.io.readers import FORMATS, detect_results_format

FIXTURES = Path(__file__).parents[1] / "fixtures"


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
    assert set(FORMATS) == {"mteb", "lm_eval", "helm", "arena", "rewardbench", "openood", "eee", "hf", "lm_eval_mc", "inspect", "rewardbench2", "lighteval"}


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


def test_json_error_messages_say_where_once(tmp_path):
    from scorebench.core.errors import InputError
    from scorebench.io.readers._common import jsonl_records, load_json

    path = tmp_path / "x.json"
    data = b'{"a": "unterminated\n, "b": 1}'
    with pytest.raises(InputError) as info:
        load_json(path, data)
    assert "at at" not in str(info.value) and "truncated" not in str(info.value)
    assert "Invalid control character at line 1, column 20" in str(info.value)
    with pytest.raises(InputError, match="the file looks truncated"):
        load_json(path, b'{"a": [1, 2')
    with pytest.raises(InputError, match=r"Unterminated string starting at line 1, column 11 \(the file looks trunc"):
        load_json(path, b'{"a": [1, "abc')
    lines = b'{"a": 1}\n{"a": 2,,}\n{"a": 3}\n'
    with pytest.raises(InputError) as info:
        jsonl_records(path, lines)
    assert "line 2" in str(info.value) and "truncated" not in str(info.value)
    with pytest.raises(InputError, match="line 2: .*truncated file"):
        jsonl_records(path, b'{"a": 1}\n{"a": 2\n')


def test_gzip_inflate_is_bounded_and_checked(tmp_path, monkeypatch):
    import gzip

    from scorebench.core import resources
    from scorebench.core.errors import InputError
    from scorebench.io.readers._common import gunzip

    path = tmp_path / "x.json.gz"
    bomb = gzip.compress(b"0" * (1 << 22))  # 4 MiB of zeros in a few KB
    monkeypatch.setattr(resources, "available_memory", lambda: 1 << 21)  # 2 MiB free: half is 1 MiB
    with pytest.raises(InputError, match="decompresses to more than"):
        gunzip(path, bomb)
    monkeypatch.undo()
    assert gunzip(path, bomb) == b"0" * (1 << 22)
    with pytest.raises(InputError, match="ends early"):
        gunzip(path, bomb[: len(bomb) // 2])
    with pytest.raises(InputError, match="not a readable gzip"):
        gunzip(path, b"not gzip at all")
    assert gunzip(tmp_path / "x.json", b"[1]") == b"[1]"
