"""Rank intervals that know the data: item-level resampling, few-task warnings, tie classes, scale warnings."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import scorebench
from scorebench.aggregate import MIN_TASKS, MixedScaleWarning, item_scores
from scorebench.aggregate.ties import pairwise_p_values, tie_classes
from scorebench.cli import cli
from scorebench.core.errors import InputError
from scorebench.core.stats import holm, paired_t


def _result_table(rng, n_tasks, n_items=60, shifts=(0.0, 0.0, 0.3)):
    rows = []
    for t in range(n_tasks):
        y = rng.integers(0, 2, n_items)
        base = rng.random(n_items)
        for s, shift in zip("abc", shifts):
            p = np.clip(np.where(y == 1, 0.7 + 0.2 * base, 0.3 - 0.2 * base) + rng.normal(0, 0.05, n_items) - shift *
                        (2 * y - 1), 0.01, 0.99)
            rows.append(pd.DataFrame({"system": s, "task": f"t{t}", "id": np.arange(n_items), "y": y, "p": p}))
    return pd.concat(rows, ignore_index=True)


def test_two_task_wide_table_gets_a_warning_and_no_intervals():
    wide = pd.DataFrame({"t1": [0.9, 0.8, 0.7], "t2": [0.95, 0.85, 0.6]}, index=["a", "b", "c"])
    r = scorebench.aggregate(wide, "borda", n_boot=500, seed=0)
    assert r.rank_low is None and r.ci_low is None  # no "1 (1–1)" from two columns
    assert r.warning and "only 2 task columns" in r.warning and str(MIN_TASKS) in r.warning
    assert r.to_frame().attrs["warning"] == r.warning and "warning:" in str(r)
    enough = pd.concat([wide] * 3, axis=1).set_axis([f"t{i}" for i in range(6)], axis=1)
    assert scorebench.aggregate(enough, "borda", n_boot=50, seed=0).warning is None


def test_item_scores_give_item_level_intervals(rng):
    table = _result_table(rng, n_tasks=2)
    units = scorebench.evaluate(table, "brier_score", n_boot=0, per_unit=True)
    data = item_scores(units)
    assert data.matrix.columns == ("t0", "t1") and data.n_items == (60, 60)
    means = scorebench.evaluate(table, "brier_score", n_boot=0)
    r = scorebench.aggregate(units, "mean", n_boot=300, seed=1)
    point = scorebench.aggregate(means, "mean", n_boot=0)
    np.testing.assert_allclose(r.scores, point.scores, rtol=1e-12)  # same point values as the aggregated table
    assert r.resample == "items" and r.warning is None  # 2 tasks: tasks held fixed, items resampled
    f = r.to_frame().set_index("system")
    assert f.loc["a", "rank_low"] == 1 and f.loc["b", "rank_low"] == 1  # a and b are close: not separable
    assert f.loc["c", "rank_low"] == 3  # c is far worse
    assert (f["ci_low"] < f["ci_high"]).all()


def test_two_level_resampling_with_enough_tasks(rng):
    table = _result_table(rng, n_tasks=MIN_TASKS, n_items=30)
    units = scorebench.evaluate(table, "brier_score", n_boot=0, per_unit=True)
    two = scorebench.aggregate(units, "borda", n_boot=200, seed=0)
    items_only = scorebench.aggregate(units, "borda", n_boot=200, seed=0, resample="items")
    assert two.resample == "tasks+items" and items_only.resample == "items"
    with pytest.raises(InputError, match="does not apply to per-item scores"):
        scorebench.aggregate(units, "borda", n_boot=10, resample="battles")


def test_item_scores_need_every_item_for_every_system(rng):
    units = scorebench.evaluate(_result_table(rng, 1), "brier_score", n_boot=0, per_unit=True)
    drop = units.index[(units["system"] == "a") & (units["id"] == "3")]
    with pytest.raises(InputError, match="not every system is scored on every item"):
        item_scores(units.drop(drop))


def test_pairwise_p_values_are_holm_over_all_pairs(rng):
    x = rng.normal(size=(80, 1)) + rng.normal(0, 0.3, (80, 4)) + np.array([0.0, 0.05, 0.2, 0.6])
    p = pairwise_p_values(x)
    i, j = np.triu_indices(4, 1)
    raw = np.array([paired_t(x[:, a] - x[:, b]).p_value for a, b in zip(i, j)])
    np.testing.assert_allclose(p[i, j], holm(raw), rtol=1e-12)
    np.testing.assert_allclose(p, p.T)


def test_tie_classes_rule():
    # 0 = top; 1 not different from 0; 2 differs from 0 -> opens band 2; 3 differs from 2 -> band 3,
    # even though 3 is not different from 0 (bands are contiguous and compare with the band's top).
    p = np.ones((4, 4))
    p[0, 2] = p[2, 0] = 0.001
    p[2, 3] = p[3, 2] = 0.01
    assert tie_classes(np.arange(4), p).tolist() == [1, 1, 2, 3]
    assert tie_classes(np.arange(4), p, alpha=0.005).tolist() == [1, 1, 2, 2]
    assert tie_classes(np.array([3, 1, 0, 2]), p).tolist() == [1, 1, 1, 2]


def test_tie_classes_use_mcnemar_for_binary(rng):
    x = (rng.random((300, 2)) < [0.8, 0.6]).astype(float)
    from scorebench.analysis.stats_tests import mcnemar

    np.testing.assert_allclose(pairwise_p_values(x)[0, 1], mcnemar(x[:, 0], x[:, 1]).p_value)


def test_mean_over_mixed_scales_warns():
    wide = pd.DataFrame({"accuracy": [0.6, 0.9, 0.7, 0.8, 0.75], "latency_ms": [100.0, 900.0, 400.0, 300.0, 500.0]},
                        index=list("abcde"))
    with pytest.warns(MixedScaleWarning, match="normalize="):
        r = scorebench.aggregate(wide, "mean", n_boot=0, higher_is_better={"latency_ms": False})
    assert "different scales" in r.warning
    with warnings.catch_warnings():
        warnings.simplefilter("error", MixedScaleWarning)
        r = scorebench.aggregate(wide, "mean", n_boot=0, higher_is_better={"latency_ms": False}, normalize="zscore")
        assert r.warning is None
        scorebench.aggregate(wide[["accuracy"]].assign(other=[0.5, 0.6, 0.55, 0.9, 0.7]), "mean", n_boot=0)


def test_cli_aggregate_item_table_and_warning(tmp_path, rng):
    units = scorebench.evaluate(_result_table(rng, 2), "brier_score", n_boot=0, per_unit=True)
    path = tmp_path / "units.csv"
    scorebench.write_table(units, path)
    out = tmp_path / "r.csv"
    res = CliRunner().invoke(cli, ["aggregate", str(path), "-m", "mean", "--bootstrap", "100", "-o", str(out)])
    assert res.exit_code == 0, res.output
    written = scorebench.read_table(out)
    assert {"rank_low", "rank_high"} <= set(written.columns)
    wide = pd.DataFrame({"system": list("abc"), "t1": [0.9, 0.8, 0.7], "t2": [0.95, 0.85, 0.6]})
    wpath = tmp_path / "wide.csv"
    wide.to_csv(wpath, index=False)
    res = CliRunner().invoke(cli, ["aggregate", str(wpath), "-m", "borda", "--bootstrap", "100"])
    assert res.exit_code == 0 and "rank_low" not in res.stdout
    assert "warning: borda: only 2 task columns" in res.stderr


def test_board_bands_follow_the_rank_intervals(tmp_path, rng):
    """Bands are read off the rank intervals shown beside them (issue 29: one story per section)."""
    from scorebench.leaderboard.build import build_board
    from scorebench.leaderboard.spec import load_spec

    table = _result_table(rng, 1, n_items=120, shifts=(0.0, 0.0, 0.25))
    table.drop(columns="task").to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / "b.toml").write_text(
        'name = "b"\ntitle = "b"\nseed = 0\nci = 0.95\nn_boot = 200\n\n[[sources]]\nname = "t"\npath = "t.csv"\n\n'
        '[[evaluate]]\nsource = "t"\nkind = "binary"\nmetrics = ["brier_score"]\n', encoding="utf-8")
    board = build_board(load_spec(tmp_path / "b.toml"))
    section = next(s for s in board.sections if s.key.startswith("eval"))
    bands = {row[2]: row[0] for row in section.rows}
    assert bands["a"] == bands["b"] == "1" and bands["c"] == "2"
    assert "reaches the rank of the band's top" in section.note
    from scorebench.aggregate.rank_bands import check_interval_bands

    d = section.data.dropna(subset=["band"])
    assert not check_interval_bands(d["rank"], d["rank_low"], d["rank_high"], d["band"])
