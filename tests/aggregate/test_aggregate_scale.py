"""Task-resampling in one matrix product (Borda, win rate) and O(n log n) competition ranks: same numbers."""

import warnings
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

import scorebench
from scorebench.aggregate import get_method
from scorebench.aggregate.input import as_matrix
from scorebench.aggregate.ranking import competition_ranks
from scorebench.aggregate.uncertainty import bootstrap_scores


def _sparse(rng, n=60, m=25, density=0.4):
    values = np.round(rng.normal(size=(n, m)) * 4) / 4  # ties within columns
    values[rng.random((n, m)) > density] = np.nan
    values[:, 0] = rng.normal(size=n)  # every system scored somewhere
    return as_matrix(pd.DataFrame(values, index=[f"s{i}" for i in range(n)],
                                  columns=[f"t{j}" for j in range(m)]))


@pytest.mark.parametrize("name, params", [("borda", {"missing": "complete"}), ("borda", {"missing": "zero"}),
                                          ("win_rate", {})])
def test_matrix_product_bootstrap_equals_the_replicate_loop(name, params):
    m = _sparse(np.random.default_rng(0))
    method = get_method(name)
    assert method.column_parts is not None
    fast, failed = bootstrap_scores(m, method, params, 40, np.random.default_rng(5))
    slow, failed_slow = bootstrap_scores(m, replace(method, column_parts=None), params, 40, np.random.default_rng(5))
    assert failed == failed_slow
    np.testing.assert_allclose(fast, slow, rtol=1e-12, atol=1e-12)


def test_win_rate_replicates_fail_like_the_method():
    # system c is scored on one column only: replicates that miss it fail
    m = as_matrix(pd.DataFrame({"t1": [1.0, 2.0, 3.0], "t2": [2.0, 1.0, np.nan], "t3": [3.0, 1.0, np.nan]},
                               index=["a", "b", "c"]))
    method = get_method("win_rate")
    fast, failed = bootstrap_scores(m, method, {}, 60, np.random.default_rng(1))
    slow, failed_slow = bootstrap_scores(m, replace(method, column_parts=None), {}, 60, np.random.default_rng(1))
    assert failed == failed_slow > 0
    np.testing.assert_allclose(fast, slow, rtol=1e-12)


def test_aggregate_rank_intervals_unchanged_by_the_fast_path():
    rng = np.random.default_rng(2)
    m = _sparse(rng, n=120, m=30)
    wide = pd.DataFrame(m.values, index=list(m.systems), columns=list(m.columns))
    with warnings.catch_warnings():  # sparse on purpose: a coverage warning, where emitted, is expected
        warnings.simplefilter("ignore")
        out = scorebench.aggregate(wide, "borda", missing="complete", n_boot=60, seed=3).to_frame()
    reps, _ = bootstrap_scores(m, replace(get_method("borda"), column_parts=None), {"missing": "complete"}, 60,
                               scorebench.core.stats.rng_for(3, "aggregate", "borda"))
    ranks = competition_ranks(reps)
    by_system = out.set_index("system")
    np.testing.assert_array_equal(by_system.loc[list(m.systems), "rank_low"],
                                  np.quantile(ranks, 0.025, axis=0, method="lower").astype(int))
    np.testing.assert_array_equal(by_system.loc[list(m.systems), "rank_high"],
                                  np.quantile(ranks, 0.975, axis=0, method="higher").astype(int))


@pytest.mark.parametrize("scale", [1.0, 1e6])
def test_sorted_competition_ranks_equal_the_all_pairs_form(scale):
    rng = np.random.default_rng(4)
    x = np.round(rng.normal(size=(20, 300)) * 3) / 3 * scale
    x *= 1 + rng.choice([0.0, 1e-12, 5e-10, 1e-9, -1e-9, 1e-8], size=x.shape)  # ties at the tolerance edge
    a, b = x[..., None, :], x[..., :, None]
    quadratic = 1 + ((a - b) > 1e-9 * np.maximum(1.0, np.maximum(np.abs(a), np.abs(b)))).sum(axis=-1)
    np.testing.assert_array_equal(competition_ranks(x), quadratic)
    np.testing.assert_array_equal(competition_ranks(x[0]), quadratic[0])
    with_nan = x[0].copy()
    with_nan[3] = np.nan  # non-finite input keeps the all-pairs form
    assert competition_ranks(with_nan)[3] == 1  # NaN beats nothing and is beaten by nothing there


@pytest.mark.parametrize("ties", ["min", "max", "average"])
def test_column_ranks_equal_pandas_rank(ties):
    from scorebench.aggregate.profile import column_ranks

    rng = np.random.default_rng(8)
    v = np.round(rng.normal(size=(200, 12)) * 2) / 2
    v[rng.random(v.shape) < 0.5] = np.nan
    v[:, 3] = np.nan
    v[0, 3] = 1.0  # a column with one score
    m = as_matrix(pd.DataFrame(v, index=[f"s{i}" for i in range(200)]), higher_is_better=[True] * 6 + [False] * 6)
    ref = pd.DataFrame(m.oriented).rank(axis=0, method=ties, ascending=False).to_numpy(dtype=np.float64)
    np.testing.assert_array_equal(column_ranks(m, ties), ref)
