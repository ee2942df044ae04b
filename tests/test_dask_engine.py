"""The Dask engine gives the in-memory engine's numbers, however the table is split."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import scorebench

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, memory_limit="2GB")
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def _binary(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    return pd.concat([pd.DataFrame({"system": s, "id": np.arange(n), "y": y,
                                    "p": np.clip(np.where(y == 1, q, 1 - q) + rng.normal(0, 0.1, n), 0, 1)})
                      for s, q in (("good", 0.75), ("weak", 0.6), ("coin", 0.5))], ignore_index=True)


def _parametric(n=2000, seed=1):
    rng = np.random.default_rng(seed)
    y = rng.normal(size=n)
    return pd.concat([pd.DataFrame({"system": s, "task": t, "y": y, "mu": y * k, "sigma": 0.5 + k})
                      for s, k in (("a", 0.5), ("b", 0.9)) for t in ("t1", "t2")], ignore_index=True)


def _ensemble(n=500, m=10, seed=2):
    rng = np.random.default_rng(seed)
    y = rng.normal(size=n)
    ens = rng.normal(size=(n, m))
    return pd.DataFrame({"system": "ens", "id": np.arange(n), "y": y, **{f"m{j}": ens[:, j] for j in range(m)}})


CASES = [
    (_binary, ["brier_score", "log_score"], {}),
    (_parametric, ["crps_normal", "log_score_normal"], {}),
    (_ensemble, ["crps_ensemble"], {}),
]


@pytest.mark.parametrize("make, metrics, options", CASES)
@pytest.mark.parametrize("partitions", [1, 9])
def test_per_row_metrics_match_pandas_engine(client, make, metrics, options, partitions):
    table = make()
    expected = scorebench.evaluate(table, metrics, n_boot=100, seed=3, bootstrap="poisson", **options)
    got = scorebench.evaluate(dd.from_pandas(table, npartitions=partitions), metrics, n_boot=100, seed=3,
                              **options)
    assert list(got.columns) == list(expected.columns)
    np.testing.assert_allclose(got.value, expected.value, rtol=1e-12)
    np.testing.assert_allclose(got[["ci_low", "ci_high"]], expected[["ci_low", "ci_high"]], rtol=1e-12)
    assert (got.n == expected.n).all()
    assert got.attrs["engine"] == "dask"


def test_poisson_and_multinomial_intervals_agree_to_monte_carlo_error():
    table = _binary(n=20000)
    poisson = scorebench.evaluate(table, "brier_score", n_boot=1000, bootstrap="poisson")
    multinomial = scorebench.evaluate(table, "brier_score", n_boot=1000)
    width_p = poisson.ci_high - poisson.ci_low
    width_m = multinomial.ci_high - multinomial.ci_low
    np.testing.assert_allclose(width_p, width_m, rtol=0.15)


def test_mergeable_set_level_metric_reduces_on_workers(client):
    table = _binary(n=800)
    metrics = ["brier_score", "ece", "mce"]
    got = scorebench.evaluate(dd.from_pandas(table, npartitions=4), metrics, n_boot=20)
    expected = scorebench.evaluate(table, metrics, n_boot=20, bootstrap="poisson")
    np.testing.assert_allclose(got.value, expected.value, rtol=1e-12)
    np.testing.assert_allclose(got[["ci_low", "ci_high"]], expected[["ci_low", "ci_high"]], rtol=1e-12)
    assert "collected_rows" not in got.attrs


def test_other_set_level_metric_is_collected_and_reported(client):
    table = _binary(n=600)
    got = scorebench.evaluate(dd.from_pandas(table, npartitions=3), ["adaptive_ece"], n_boot=10)
    expected = scorebench.evaluate(table, ["adaptive_ece"], n_boot=10, bootstrap="poisson")
    np.testing.assert_allclose(got.value, expected.value, rtol=1e-12)
    assert got.attrs["collected_rows"] == len(table)


def test_errors_surface_from_workers(client):
    table = _binary(n=100)
    table.loc[5, "p"] = 1.5
    with pytest.raises(scorebench.InputError, match="outside"):
        scorebench.evaluate(dd.from_pandas(table, npartitions=3), "brier_score", n_boot=10)


def test_cli_dask_engine_on_parquet_glob(tmp_path):
    from click.testing import CliRunner

    from scorebench.cli import cli

    table = _binary(n=600)
    for i, start in enumerate(range(0, len(table), 700)):
        table.iloc[start:start + 700].to_parquet(tmp_path / f"part-{i}.parquet")
    res = CliRunner().invoke(cli, ["evaluate", str(tmp_path / "*.parquet"), "--engine", "dask", "-m",
                                   "brier_score", "--bootstrap", "50", "-o", str(tmp_path / "s.csv")])
    assert res.exit_code == 0, res.output
    got = pd.read_csv(tmp_path / "s.csv", comment="#")
    expected = scorebench.evaluate(table, "brier_score", n_boot=50, bootstrap="poisson")
    np.testing.assert_allclose(got.value, expected.value, rtol=1e-12)


def _ranking(queries=60, docs=20, seed=4):
    rng = np.random.default_rng(seed)
    qid = np.repeat(np.arange(queries), docs).astype(str)
    docid = np.tile(np.arange(docs), queries).astype(str)
    rel = rng.integers(0, 4, qid.size)
    run = pd.concat([pd.DataFrame({"system": s, "qid": qid, "docid": docid,
                                   "score": rel * k + rng.normal(size=qid.size)}) for s, k in (("bm25", 0.3), ("dense", 1.0))],
                    ignore_index=True)
    qrels = pd.DataFrame({"qid": qid, "docid": docid, "relevance": rel})
    extra = pd.DataFrame({"qid": ["999", "999"], "docid": ["1", "2"], "relevance": [1, 0]})  # judged, never run
    return run[run.qid != "5"], pd.concat([qrels, extra], ignore_index=True)


@pytest.mark.parametrize("complete", [False, True])
def test_ranking_metrics_shuffle_by_query(client, complete):
    run, qrels = _ranking()
    metrics = ["ndcg@10", "map", "mrr"]
    expected = scorebench.evaluate(run, metrics, qrels=qrels, complete=complete, n_boot=50, bootstrap="poisson")
    got = scorebench.evaluate(dd.from_pandas(run, npartitions=5), metrics, qrels=qrels, complete=complete,
                              n_boot=50)
    np.testing.assert_allclose(got.value, expected.value, rtol=1e-12)
    np.testing.assert_allclose(got[["ci_low", "ci_high"]], expected[["ci_low", "ci_high"]], rtol=1e-12)
    assert (got.n == expected.n).all()
