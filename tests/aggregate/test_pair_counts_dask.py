"""(pair, outcome) counts on the Dask engine equal the in-memory ones; the fit from counts equals the direct fit."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

dd = pytest.importorskip("dask.dataframe")

from scorebench.aggregate.input import as_battles  # noqa: E402
from scorebench.aggregate.pair_counts import pair_counts  # noqa: E402
from scorebench.aggregate.pair_counts_dask import bt_from_counts, pair_counts_dask  # noqa: E402
from scorebench.aggregate.pairwise import bradley_terry_sandwich  # noqa: E402
from scorebench.core.errors import InputError  # noqa: E402


def _table(n=3000, seed=0, weights=False):
    rng = np.random.default_rng(seed)
    s = np.linspace(-1, 1, 6)
    a = rng.integers(6, size=n)
    b = (a + rng.integers(1, 6, size=n)) % 6
    u = rng.random(n)
    p = 1 / (1 + np.exp(-(s[a] - s[b])))
    winner = np.where(u < 0.2, "tie", np.where(u < 0.2 + 0.8 * p, "model_a", "model_b"))
    t = pd.DataFrame({"model_a": [f"m{i}" for i in a], "model_b": [f"m{j}" for j in b], "winner": winner})
    if weights:
        t["weight"] = rng.uniform(0.5, 2.0, n)
    return t


@pytest.mark.parametrize("weights", [False, True])
def test_dask_counts_equal_in_memory(weights):
    t = _table(weights=weights)
    mem = pair_counts(as_battles(t))
    pc = pair_counts_dask(dd.from_pandas(t, npartitions=5))
    assert pc.systems == mem.systems and pc.n_battles == mem.n_battles and pc.unweighted == mem.unweighted
    for field in ("a", "b", "outcome", "count"):
        np.testing.assert_array_equal(getattr(pc, field), getattr(mem, field))
    np.testing.assert_allclose(pc.weight, mem.weight, rtol=1e-12)
    np.testing.assert_allclose(pc.weight_sq, mem.weight_sq, rtol=1e-12)
    r1, c1 = bt_from_counts(pc)
    r2, c2 = bradley_terry_sandwich(as_battles(t))
    np.testing.assert_allclose(r1, r2, atol=1e-9)
    np.testing.assert_allclose(c1, c2, rtol=1e-8, atol=1e-10)


def test_dask_counts_errors():
    bad = _table(50)
    bad.loc[3, "winner"] = "nobody"
    with pytest.raises(InputError, match="winner"):
        pair_counts_dask(dd.from_pandas(bad, npartitions=2))
    with pytest.raises(InputError, match="dask DataFrame"):
        pair_counts_dask(bad)


def test_dask_counts_partition_independent_with_empty_and_one_sided_partitions():
    """Contract: pandas = Dask whatever the partitioning (1 to many parts, an empty part, a part missing models)."""
    t = _table(900, seed=3, weights=True)
    t = t.sort_values("model_a", kind="stable").reset_index(drop=True)  # parts see only some models
    mem = pair_counts(as_battles(t))
    for nparts in (1, 2, 7):
        pc = pair_counts_dask(dd.from_pandas(t, npartitions=nparts))
        for field in ("a", "b", "outcome", "count"):
            np.testing.assert_array_equal(getattr(pc, field), getattr(mem, field))
        np.testing.assert_allclose(pc.weight, mem.weight, rtol=1e-12)
        np.testing.assert_allclose(pc.weight_sq, mem.weight_sq, rtol=1e-12)
    parts = dd.from_pandas(t, npartitions=3)
    with_empty = dd.concat([parts, dd.from_pandas(t.iloc[:0], npartitions=1)])
    pc = pair_counts_dask(with_empty)
    np.testing.assert_array_equal(pc.count, mem.count)
    assert pc.systems == mem.systems and pc.n_battles == mem.n_battles
