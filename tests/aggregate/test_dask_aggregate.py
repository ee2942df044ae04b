"""pandas = Dask contract of ``aggregate``: every method that claims Dask support (a counts record)
gives the same scores, ranks, score intervals and rank intervals from a Dask battles table as from
the same battles in pandas, for 1, 3 and 9 partitions and rows in any order."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

dd = pytest.importorskip("dask.dataframe")

from _same_ranking import assert_same_ranking  # noqa: E402

import scorebench  # noqa: E402
from scorebench.aggregate.dask_aggregate import battle_cells, dask_methods, partition_battle_cells  # noqa: E402
from scorebench.core.errors import InputError  # noqa: E402


def _battles(n=2500, seed=0, weights=False):
    rng = np.random.default_rng(seed)
    s = np.linspace(-1, 1, 7)
    a = rng.integers(7, size=n)
    b = (a + rng.integers(1, 7, size=n)) % 7
    u = rng.random(n)
    p = 1 / (1 + np.exp(-(s[a] - s[b])))
    winner = np.where(u < 0.15, "tie", np.where(u < 0.15 + 0.85 * p, "model_a", "model_b"))
    t = pd.DataFrame({"model_a": [f"m{i}" for i in a], "model_b": [f"m{j}" for j in b], "winner": winner})
    if weights:  # a few distinct weights, so that cells (pair, outcome, weight) repeat
        t["weight"] = rng.choice([0.5, 1.0, 2.0], size=n)
    return t


def test_the_claims():
    assert "bradley_terry" in dask_methods()
    assert "elo" not in dask_methods()  # order-dependent: no counts record


@pytest.mark.parametrize("method", dask_methods())
@pytest.mark.parametrize("weights", [False, True])
@pytest.mark.parametrize("intervals", [None, "bootstrap"])
@pytest.mark.parametrize("nparts", [1, 3, 9])
def test_dask_equals_pandas(method, weights, intervals, nparts):
    t = _battles(weights=weights, seed=nparts)
    want = scorebench.aggregate(t, method, n_boot=150, seed=3, intervals=intervals)
    shuffled = t.sample(frac=1.0, random_state=nparts).reset_index(drop=True)
    got = scorebench.aggregate(dd.from_pandas(shuffled, npartitions=nparts), method, n_boot=150, seed=3,
                               intervals=intervals)
    assert_same_ranking(got, want)
    assert got.rank_low is not None


@pytest.mark.parametrize("method", dask_methods())
def test_point_only_and_prior(method):
    t = _battles(seed=11)
    want = scorebench.aggregate(t, method, n_boot=0, prior=0.5)
    got = scorebench.aggregate(dd.from_pandas(t, npartitions=4), method, n_boot=0, prior=0.5)
    assert_same_ranking(got, want)
    assert got.rank_low is None


def test_cells_add_over_partitions():
    t = _battles(n=800, seed=5, weights=True)
    whole = battle_cells(partition_battle_cells(t))
    parts = battle_cells(pd.concat([partition_battle_cells(t.iloc[i::5]) for i in range(5)]))
    assert whole.systems == parts.systems
    for name in ("lo", "hi", "out", "weight", "count"):
        np.testing.assert_array_equal(getattr(whole, name), getattr(parts, name))
    assert whole.n_battles == 800


def test_refusals():
    ddf = dd.from_pandas(_battles(n=300), npartitions=2)
    with pytest.raises(InputError, match="method 'elo' does not run from battle counts"):
        scorebench.aggregate(ddf, "elo", n_boot=0)
    with pytest.raises(InputError, match="reweight=True"):
        scorebench.aggregate(ddf, "bradley_terry", n_boot=0, reweight=True)
    with pytest.raises(InputError, match="resample='tasks'"):
        scorebench.aggregate(ddf, "bradley_terry", n_boot=10, resample="tasks")
    with pytest.raises(InputError, match="intervals"):
        scorebench.aggregate(ddf, "bradley_terry", n_boot=10, intervals="wald")
    for option in ({"weights": {"m0": 2.0}}, {"exclude": ("m0",)}, {"higher_is_better": False}):
        # refused by name as in memory (battles declare no reading options), not dropped silently
        with pytest.raises(InputError, match="do not apply to kind 'battles'"):
            scorebench.aggregate(ddf, "bradley_terry", n_boot=0, **option)
    bad = dd.from_pandas(pd.DataFrame({"model_a": ["x"], "model_b": ["y"], "winner": ["nobody"]}), npartitions=1)
    with pytest.raises(InputError):
        scorebench.aggregate(bad, "bradley_terry", n_boot=0)


def test_cli_aggregate_engine_dask_equals_pandas(tmp_path):
    from click.testing import CliRunner

    from scorebench.cli import cli

    t = _battles(n=900, seed=8)
    folder = tmp_path / "parts"
    folder.mkdir()
    for i in range(3):
        t.iloc[i::3].to_parquet(folder / f"part{i}.parquet")
    t.to_parquet(tmp_path / "all.parquet")
    runner = CliRunner()
    outs = []
    for engine, src in (("dask", str(folder / "*.parquet")), ("pandas", str(tmp_path / "all.parquet"))):
        path = tmp_path / f"{engine}.csv"
        res = runner.invoke(cli, ["aggregate", src, "-m", "bradley_terry", "--engine", engine, "--bootstrap", "100",
                                  "--intervals", "bootstrap", "-o", str(path)])
        assert res.exit_code == 0, res.output
        outs.append(pd.read_csv(path))
    assert outs[0]["system"].tolist() == outs[1]["system"].tolist()
    assert outs[0]["rank_low"].tolist() == outs[1]["rank_low"].tolist()
    np.testing.assert_allclose(outs[0]["score"], outs[1]["score"], rtol=1e-9)
    np.testing.assert_allclose(outs[0]["ci_low"], outs[1]["ci_low"], rtol=1e-9)
    bad = runner.invoke(cli, ["aggregate", str(folder / "*.parquet"), "-m", "elo", "--engine", "dask"])
    assert bad.exit_code != 0 and "does not run from battle counts" in bad.output
    bad = runner.invoke(cli, ["aggregate", str(tmp_path / "all.parquet"), "--engine", "dask", "--predict"])
    assert bad.exit_code != 0 and "--predict: not with --engine dask" in bad.output
