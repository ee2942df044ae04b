"""Reading scores, wide and battles tables into the aggregation containers; Ranking output."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scorebench.aggregate import Ranking, aggregate, as_battles, as_matrix, read_input
from scorebench.aggregate.input import Battles, ScoreMatrix
from scorebench.aggregate.ranking import competition_ranks
from scorebench.core.errors import InputError


def test_wide_table_pairs_missing_and_weights():
    wide = pd.DataFrame({"Model": ["x", "y", "z"], "CoLA": [60.0, 55.0, 50.0],
                         "MRPC": ["90.0/88.0", "-", "85.1/80.0"], "RTE": ["70", "", "65"]})
    m = as_matrix(wide, weights={"MRPC": 3.0})
    assert m.systems == ("x", "y", "z")
    assert m.columns == ("CoLA", "MRPC-a", "MRPC-b", "RTE")
    assert m.weights.tolist() == [1.0, 1.5, 1.5, 1.0]
    assert np.isnan(m.values[1, 1:]).all()
    assert m.values[2].tolist() == [50.0, 85.1, 80.0, 65.0]
    assert as_matrix(wide, weights={"MRPC-a": 2.0}).weights.tolist() == [1.0, 2.0, 0.5, 1.0]
    assert as_matrix(wide, weights=[1, 2, 3, 4]).weights.tolist() == [1.0, 2.0, 3.0, 4.0]


def test_wide_table_errors():
    with pytest.raises(InputError, match="expected numbers"):
        as_matrix(pd.DataFrame({"t": [1.0, "abc"]}, index=["a", "b"]))
    with pytest.raises(InputError, match="mixes 'x/y'"):
        as_matrix(pd.DataFrame({"t": ["1/2", "3"]}, index=["a", "b"]))
    with pytest.raises(InputError, match="no scores at all"):
        as_matrix(pd.DataFrame({"t": [1.0, np.nan], "u": [2.0, np.nan]}, index=["a", "b"]))
    with pytest.raises(InputError, match="at least 2 systems"):
        as_matrix(pd.DataFrame({"t": [1.0]}, index=["a"]))
    with pytest.raises(InputError, match="weights: unknown"):
        as_matrix(pd.DataFrame({"t": [1.0, 2.0]}, index=["a", "b"]), weights={"u": 1})
    with pytest.raises(InputError, match=">= 0"):
        as_matrix(pd.DataFrame({"t": [1.0, 2.0]}, index=["a", "b"]), weights={"t": -1})
    with pytest.raises(InputError, match="all column weights are zero"):
        as_matrix(pd.DataFrame({"t": [1.0, 2.0]}, index=["a", "b"]), weights={"t": 0})
    with pytest.raises(InputError, match="infinite"):
        as_matrix(pd.DataFrame({"t": [1.0, np.inf]}, index=["a", "b"]))
    with pytest.raises(InputError, match="exclude"):
        as_matrix(pd.DataFrame({"t": [1.0, 2.0]}, index=["a", "b"]), exclude=["nope"])
    with pytest.raises(InputError, match="duplicate system names"):
        as_matrix(pd.DataFrame({"t": [1.0, 2.0]}, index=["a", "a"]))
    with pytest.raises(InputError, match="DataFrame"):
        read_input([[1, 2]])
    dup = as_matrix(pd.DataFrame({"t": [1.0, 2.0, 3.0]}, index=["a", "a", "b"]), duplicates="suffix")
    assert dup.systems == ("a_1", "a_2", "b")


def test_long_scores_table_uses_registry_direction():
    import scorebench

    lower = [m.name for m in scorebench.core.registry.all_metrics() if m.higher_is_better is False]
    higher = [m.name for m in scorebench.core.registry.all_metrics() if m.higher_is_better is True]
    if not lower or not higher:
        pytest.skip("needs registered metrics of both directions")
    lo, hi = lower[0], higher[0]
    long = pd.DataFrame({"system": ["a", "b", "a", "b"], "task": ["t1", "t1", "t1", "t1"],
                         "metric": [lo, lo, hi, hi], "value": [0.1, 0.2, 0.9, 0.8],
                         "ci_low": np.nan, "ci_high": np.nan, "n": 10})
    m = as_matrix(long)
    assert m.columns == (f"t1/{lo}", f"t1/{hi}")
    assert m.higher_is_better.tolist() == [False, True]
    assert m.weights.tolist() == [0.5, 0.5]  # the task's weight is shared by its metrics
    assert aggregate(long, "borda", n_boot=0).winners == ("a",)
    flipped = as_matrix(long, higher_is_better={lo: True})
    assert flipped.higher_is_better.tolist() == [True, True]
    with pytest.raises(InputError, match="duplicate"):
        as_matrix(pd.concat([long, long.head(1)]))


def test_long_table_without_metric_and_unknown_metric_defaults_higher():
    long = pd.DataFrame({"system": ["a", "b", "a", "b"], "task": ["t1", "t1", "t2", "t2"], "value": [1, 2, 3, 1]})
    m = as_matrix(long)
    assert m.columns == ("t1", "t2") and m.weights.tolist() == [1.0, 1.0]
    long2 = pd.DataFrame({"system": ["a", "b"], "metric": ["my_custom_score", "my_custom_score"], "value": [1, 2]})
    assert as_matrix(long2).higher_is_better.tolist() == [True]
    assert as_matrix(long2, higher_is_better={"my_custom_score": False}).higher_is_better.tolist() == [False]


def test_battles_detection_and_matrix_passthrough():
    battles = pd.DataFrame({"a": ["x", "y"], "b": ["y", "z"], "winner": ["a", "tie"], "weight": [2, 1]})
    b = read_input(battles)
    assert isinstance(b, Battles) and b.weight.tolist() == [2.0, 1.0]
    W = b.wins()
    assert W[0, 1] == 2.0 and W[1, 2] == 0.5 and W[2, 1] == 0.5
    m = as_matrix(pd.DataFrame({"t": [1.0, 2.0]}, index=["a", "b"]))
    assert read_input(m) is m
    with pytest.raises(InputError, match="already-built"):
        read_input(m, weights=[1])
    with pytest.raises(InputError, match="do not apply"):
        read_input(battles, weights={"t": 1})


def test_competition_ranks_and_ranking_frame():
    assert competition_ranks(np.array([1.0, 1.0 + 1e-13, 0.5, 2.0])).tolist() == [2, 2, 4, 1]
    r = Ranking(("a", "b", "c"), np.array([1.0, 3.0, 1.0]), "demo", params={"k": 1})
    assert r.ranks.tolist() == [2, 1, 2]
    assert r.tie_groups == (("b",), ("a", "c"))
    assert r.winners == ("b",) and r.order == ("b", "a", "c")
    f = r.to_frame()
    assert f.columns.tolist() == ["system", "score", "rank"]
    assert f["system"].tolist() == ["b", "a", "c"] and f.attrs["method"] == "demo"
    with pytest.raises(ValueError):
        Ranking(("a",), np.array([np.nan]), "demo")
    assert "demo" in str(r)


def test_aggregate_bootstrap_columns_and_determinism():
    rng = np.random.default_rng(0)
    t = pd.DataFrame(rng.normal(size=(5, 8)) + np.arange(5)[:, None], index=list("abcde"))
    t.columns = [f"t{i}" for i in range(8)]
    r1 = aggregate(t, "borda", n_boot=200, seed=3)
    r2 = aggregate(t, "borda", n_boot=200, seed=3)
    f = r1.to_frame()
    assert f.columns.tolist() == ["system", "score", "rank", "ci_low", "ci_high", "score_median", "rank_low",
                                  "rank_high", "rank_ub"]
    pd.testing.assert_frame_equal(f, r2.to_frame())
    assert not r1.to_frame().equals(aggregate(t, "borda", n_boot=200, seed=4).to_frame())
    assert (f["ci_low"] <= f["ci_high"]).all() and (f["rank_low"] <= f["rank_high"]).all()
    assert f.attrs["n_boot"] == 200 and f.attrs["seed"] == 3 and f.attrs["resample"] == "tasks"
    with pytest.raises(InputError, match="n_boot"):
        aggregate(t, "borda", n_boot=-1)
    with pytest.raises(InputError, match="at least 2 columns"):
        aggregate(t[["t0"]], "borda", n_boot=10)
    assert isinstance(read_input(t), ScoreMatrix)


def test_wide_table_finds_the_system_column():
    frame = pd.DataFrame({"acc": [0.5, 0.7], "system": ["a", "b"]})
    m = as_matrix(frame)
    assert m.systems == ("a", "b") and m.columns == ("acc",)
    headers = pd.DataFrame({"Model": ["a", "b"], "\tScore": [1.0, 2.0], " CoLA": [3.0, 1.0]})
    m = as_matrix(headers, exclude=["Score"])  # header whitespace is stripped before matching
    assert m.columns == ("CoLA",)


def test_mapping_of_columns_with_systems_reads_as_the_wide_frame():
    columns = {"CoLA": [60.0, 55.0, 50.0], "MRPC": ["90.0/88.0", "-", "85.1/80.0"], "RTE": (70, None, 65)}
    m = as_matrix(columns, systems=["x", "y", "z"], weights={"MRPC": 3.0}, higher_is_better={"RTE": False})
    frame = as_matrix(pd.DataFrame(columns, index=["x", "y", "z"]), weights={"MRPC": 3.0},
                      higher_is_better={"RTE": False})
    assert m.systems == frame.systems == ("x", "y", "z")
    assert m.columns == frame.columns == ("CoLA", "MRPC-a", "MRPC-b", "RTE")
    np.testing.assert_array_equal(m.values, frame.values)
    assert m.weights.tolist() == frame.weights.tolist() == [1.0, 1.5, 1.5, 1.0]
    assert m.higher_is_better.tolist() == [True, True, True, False]
    # cells are taken by position: a Series' own index does not reorder them
    by_position = as_matrix({"t": pd.Series([1.0, 2.0], index=["q", "r"])}, systems=np.array(["a", "b"]))
    assert by_position.systems == ("a", "b") and by_position.values[:, 0].tolist() == [1.0, 2.0]
    # a duplicate system name follows the duplicates= policy, as in a frame
    assert as_matrix({"t": [1, 2, 3]}, systems=["a", "a", "b"], duplicates="first").systems == ("a", "b")


def test_mapping_of_columns_without_systems_names_them_itself():
    wide = as_matrix({"system": ["a", "b"], "t1": [3, 2], "t2": [1, 3]})
    assert wide.systems == ("a", "b") and wide.columns == ("t1", "t2")
    long = as_matrix({"system": ["a", "b", "a", "b"], "task": ["x", "x", "y", "y"], "value": [1, 2, 4, 3]})
    assert long.columns == ("x", "y") and long.values.tolist() == [[1.0, 4.0], [2.0, 3.0]]


@pytest.mark.parametrize("table, options, message", [
    ({"t1": [1, 2], "t2": [1]}, {"systems": ["a", "b"]}, r"different lengths: \{'systems=': 2, 't1': 2, 't2': 1\}"),
    ({"t1": [1, 2]}, {"systems": ["a"]}, r"different lengths: \{'systems=': 1, 't1': 2\}"),
    ({"t1": 3}, {"systems": ["a"]}, r"column 't1': expected a 1-D sequence \(one cell per row\), got 3"),
    ({"t1": "ab"}, {}, "column 't1': expected a 1-D sequence"),
    ({"t1": [[1], [1, 2]]}, {"systems": ["a", "b"]}, "column 't1': expected a 1-D sequence"),
    ({"t1": [1, 2]}, {"systems": "ab"}, "systems: expected a sequence of system names"),
    ({"t1": [1, 2]}, {"systems": ["a", "b"], "system_column": "t1"}, "either as systems= or as system_column="),
    ({"system": ["a", "b"], "task": ["x", "x"], "value": [1, 2]}, {"systems": ["a", "b"]},
     "long scores table.*leave systems= out"),
    (pd.DataFrame({"t1": [1, 2]}), {"systems": ["a", "b"]}, "systems= names the rows of a mapping"),
    ([1, 2], {}, "expected a pandas DataFrame or a mapping of columns, got list"),
    ({"t1": [1, "x"]}, {"systems": ["a", "b"]}, "column 't1': expected numbers"),
])
def test_mapping_of_columns_errors(table, options, message):
    with pytest.raises(InputError, match=message):
        as_matrix(table, **options)


def test_battles_from_a_mapping_of_columns_match_the_frame():
    columns = {"model_a": ["x", "y", "x"], "model_b": ["y", "z", "z"], "winner": ["model_a", "tie", "z"],
               "weight": [1.0, 2.0, 0.5]}
    b, frame = as_battles(columns), as_battles(pd.DataFrame(columns))
    assert b.systems == frame.systems == ("x", "y", "z")
    for field in ("a", "b", "outcome", "weight"):
        np.testing.assert_array_equal(getattr(b, field), getattr(frame, field))
    with pytest.raises(InputError, match=r"different lengths: \{'a': 2, 'b': 1, 'winner': 2\}"):
        as_battles({"a": ["x", "y"], "b": ["y"], "winner": ["a", "b"]})
    with pytest.raises(InputError, match="expected a DataFrame or a mapping of columns, got list"):
        as_battles([("x", "y", "a")])
