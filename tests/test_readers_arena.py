"""Chatbot Arena reader on a clean_battle file written from FastChat's published schema."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import scorebench
from scorebench.errors import InputError
from scorebench.io import read_results

FILE = Path(__file__).parent / "fixtures" / "arena" / "clean_battle_20240101.json"
RAW = json.loads(FILE.read_text())


def _pairs(battles):
    return Counter(tuple(sorted((x["model_a"], x["model_b"]))) for x in battles)


def test_battle_counts_per_pair_and_outcomes():
    table = read_results(FILE)
    assert table.attrs["source_format"] == "arena" and len(table) == len(RAW) == 40
    assert Counter(tuple(sorted(p)) for p in zip(table["a"], table["b"])) == _pairs(RAW)
    expected = Counter({"model_a": "a", "model_b": "b"}.get(x["winner"], "tie") for x in RAW)
    assert Counter(table["winner"]) == expected
    assert table["both_bad"].sum() == sum(x["winner"] == "tie (bothbad)" for x in RAW)


def test_filters_match_the_raw_selection():
    picked = [x for x in RAW if x["anony"] and x["language"] == "English"]
    table = read_results(FILE, anony=True, language="English")
    assert Counter(tuple(sorted(p)) for p in zip(table["a"], table["b"])) == _pairs(picked)
    math = [x for x in RAW if x["category_tag"]["math_v0.1"]["math"]]
    assert len(read_results(FILE, category="math_v0.1.math")) == len(math)
    assert len(read_results(FILE, dedup=True)) == sum(x["dedup_tag"]["sampled"] for x in RAW)


def test_style_covariates_kept():
    table = read_results(FILE)
    first = RAW[0]["conv_metadata"]
    assert table["style_sum_assistant_a_tokens"].iloc[0] == first["sum_assistant_a_tokens"]
    assert table["style_bold_count_b"].iloc[0] == sum(first["bold_count_b"].values())


def test_bradley_terry_on_the_battles():
    table = read_results(FILE)
    ranking = scorebench.aggregate(table, "bradley_terry", n_boot=0)
    assert set(ranking.systems) == {x["model_a"] for x in RAW} | {x["model_b"] for x in RAW}
    assert np.isfinite(ranking.scores).all()


def test_bad_winner_and_truncation(tmp_path):
    bad = [dict(RAW[0], winner="model_c")]
    path = tmp_path / "clean_battle_x.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(InputError, match=r"field '\[0\].winner': 'model_c'"):
        read_results(path)
    path.write_text(FILE.read_text()[:500])
    with pytest.raises(InputError, match="invalid JSON.*truncated"):
        read_results(path, format="arena")
