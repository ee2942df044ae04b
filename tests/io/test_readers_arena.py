"""Chatbot Arena reader on a clean_battle file written from FastChat's published schema."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import scorebench
from scorebench.core.errors import InputError
from scorebench.io.tables import read_results

FILE = Path(__file__).parents[1] / "fixtures" / "arena" / "clean_battle_20240101.json"
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


def test_battle_jsonl_and_gzip_read_and_detected(tmp_path):
    import gzip

    from scorebench.io.readers import detect_results_format

    path = tmp_path / "2024-01-01.battle.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in RAW))
    assert detect_results_format(path) == "arena" and detect_results_format(tmp_path) == "arena"
    lines = read_results(path)
    whole = read_results(FILE)
    assert lines[["a", "b", "winner"]].equals(whole[["a", "b", "winner"]])
    zipped = tmp_path / "z" / "clean_battle_20240101.json.gz"
    zipped.parent.mkdir()
    zipped.write_bytes(gzip.compress(FILE.read_bytes()))
    assert detect_results_format(zipped) == "arena"
    assert read_results(zipped)[["a", "b", "winner"]].equals(whole[["a", "b", "winner"]])


def test_self_play_rows_dropped_with_a_warning(tmp_path):
    from click.testing import CliRunner

    from scorebench.cli import cli

    path = tmp_path / "clean_battle_x.json"
    path.write_text(json.dumps(RAW + [dict(RAW[0], model_b=RAW[0]["model_a"])] * 2))
    with pytest.warns(UserWarning, match="dropped 2 battle"):
        table = read_results(path)
    assert len(table) == len(RAW) and table.attrs["n_self_play_dropped"] == 2
    ranking = scorebench.aggregate(table, "bradley_terry", n_boot=0)
    assert np.isfinite(ranking.scores).all()
    with pytest.raises(InputError, match="against itself"):
        read_results(path, self_play="raise")
    result = CliRunner().invoke(cli, ["aggregate", str(path), "-m", "bradley_terry"])
    assert result.exit_code == 0, result.output
    assert "2 battle(s) of a model against itself dropped" in result.output


def test_fastchat_sklearn_default_bt_equals_a_bradley_terry_prior():
    """FastChat's compute_mle_elo (copied by GenAI-Arena) with sklearn's default C=1 ridge instead of penalty=None:
    win counts doubled (a tie = one win each way) and every ordered pair visited, so the log-likelihood is 4x the
    per-battle one; LogisticRegression's 1/2 |w|^2 on w = theta / ln 10 is then scorebench's prior 1/(4 ln^2 10)."""
    import math

    import pandas as pd
    from sklearn.linear_model import LogisticRegression

    df = pd.DataFrame(RAW)
    models = sorted(set(df.model_a) | set(df.model_b))
    idx = {m: i for i, m in enumerate(models)}
    win = np.zeros((len(models), len(models)))  # ptbl_win = a_win * 2 + b_win.T * 2 + tie + tie.T
    for a, b, w in zip(df.model_a, df.model_b, df.winner):
        if w == "model_a":
            win[idx[a], idx[b]] += 2
        elif w == "model_b":
            win[idx[b], idx[a]] += 2
        else:
            win[idx[a], idx[b]] += 1
            win[idx[b], idx[a]] += 1
    X, y, sw = [], [], []
    for i in range(len(models)):  # for m_a in index: for m_b in columns: (both orders)
        for j in range(len(models)):
            if i == j:
                continue
            row = np.zeros(len(models))
            row[i], row[j] = math.log(10), -math.log(10)
            X += [row, row]
            y += [1, 0]
            sw += [win[i, j], win[j, i]]
    lr = LogisticRegression(fit_intercept=False, tol=1e-12, max_iter=100_000)  # sklearn default: C=1 ridge
    lr.fit(np.array(X), np.array(y), sample_weight=np.array(sw))
    fastchat = 400 * lr.coef_[0] + 1000
    ours = scorebench.aggregate(read_results(FILE), "bradley_terry", prior=1 / (4 * math.log(10) ** 2), n_boot=0)
    got = np.array([ours.scores[ours.systems.index(m)] for m in models])
    np.testing.assert_allclose(got - got.mean(), fastchat - fastchat.mean(), atol=1e-6)
