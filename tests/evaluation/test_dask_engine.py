"""The Dask engine gives the in-memory engine's numbers, however the table is split."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import scorebench

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")


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
@pytest.mark.parametrize("partitions", [1, 9, 40])  # 40: a two-level merge tree
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
    got = scorebench.evaluate(dd.from_pandas(table, npartitions=3), ["adaptive_ece"], n_boot=20)
    expected = scorebench.evaluate(table, ["adaptive_ece"], n_boot=20, bootstrap="poisson")
    np.testing.assert_allclose(got.value, expected.value, rtol=1e-12)
    assert got.attrs["collected_rows"] == len(table)
    assert got.attrs["collected_metrics"] == "adaptive_ece" and got.attrs["collected_bytes"] > 0


def test_a_mix_of_reduced_and_collected_metrics(client):
    rng = np.random.default_rng(5)
    table = pd.DataFrame({"system": np.repeat(["judge1", "judge2"], 200), "y_true": rng.integers(1, 6, 400),
                          "y_pred": rng.integers(1, 6, 400)})
    metrics = ["mae", "rmse", "kendall_tau"]
    expected = scorebench.evaluate(table, metrics, n_boot=20, bootstrap="poisson")
    got = scorebench.evaluate(dd.from_pandas(table.sample(frac=1.0, random_state=0), npartitions=4), metrics,
                              n_boot=20)
    key = ["system", "metric"]
    expected, got = (f.sort_values(key).reset_index(drop=True) for f in (expected, got))
    np.testing.assert_allclose(got.value, expected.value, rtol=1e-12)
    np.testing.assert_allclose(got[["ci_low", "ci_high"]], expected[["ci_low", "ci_high"]], rtol=1e-12)
    assert got.attrs["collected_metrics"] == "kendall_tau"


def test_errors_surface_from_workers(client):
    table = _binary(n=100)
    table.loc[5, "p"] = 1.5
    with pytest.raises(scorebench.InputError, match=r"partition 0 \(rows numbered within it\): .*outside"):
        scorebench.evaluate(dd.from_pandas(table, npartitions=3), "brier_score", n_boot=20)


@pytest.mark.parametrize("suffix", ["parquet", "csv"])
def test_cli_dask_engine_on_a_glob(tmp_path, suffix):
    from click.testing import CliRunner

    from scorebench.cli import cli

    table = _binary(n=600)
    for i, start in enumerate(range(0, len(table), 700)):
        part = table.iloc[start:start + 700]
        if suffix == "parquet":
            part.to_parquet(tmp_path / f"part-{i}.parquet")
        else:
            part.to_csv(tmp_path / f"part-{i}.csv", index=False)
    res = CliRunner().invoke(cli, ["evaluate", str(tmp_path / f"part-*.{suffix}"), "--engine", "dask", "-m",
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
    metrics = _mergeable("ranking")  # every registered ranking metric
    assert len(metrics) >= 15
    expected = scorebench.evaluate(run, metrics, qrels=qrels, complete=complete, n_boot=50, bootstrap="poisson")
    got = scorebench.evaluate(dd.from_pandas(run, npartitions=5), metrics, qrels=qrels, complete=complete,
                              n_boot=50)
    np.testing.assert_allclose(got.value, expected.value, rtol=1e-12)
    np.testing.assert_allclose(got[["ci_low", "ci_high"]], expected[["ci_low", "ci_high"]], rtol=1e-12)
    assert (got.n == expected.n).all()


def _write_trec_qrels(qrels, path):
    with open(path, "w") as f:
        for row in qrels.itertuples(index=False):
            f.write(f"{row.qid} 0 {row.docid} {row.relevance}\n")
    return path


@pytest.mark.parametrize("form", ["dask", "trec_path", "int_qids"])
def test_qrels_are_co_partitioned_with_the_run(client, tmp_path, form):
    # qrels at scale are a table too: each partition must meet exactly its queries' judgements.
    run, qrels = _ranking(queries=90)
    expected = scorebench.evaluate(run, ["ndcg@10", "map"], qrels=qrels, complete=True, n_boot=30,
                                   bootstrap="poisson")
    if form == "dask":
        given = dd.from_pandas(qrels, npartitions=4)
    elif form == "trec_path":
        given = str(_write_trec_qrels(qrels, tmp_path / "qrels.txt"))
    else:
        given = qrels.assign(qid=qrels.qid.astype(int))
    got = scorebench.evaluate(dd.from_pandas(run, npartitions=7), ["ndcg@10", "map"], qrels=given, complete=True,
                              n_boot=30)
    np.testing.assert_allclose(got.value, expected.value, rtol=1e-12)
    np.testing.assert_allclose(got[["ci_low", "ci_high"]], expected[["ci_low", "ci_high"]], rtol=1e-12)
    assert (got.n == expected.n).all()


def test_unit_buckets_agree_across_label_dtypes():
    from scorebench.evaluation.dask_engine import _unit_bucket

    texts = pd.DataFrame({"qid": ["1", "22", "303"]})
    ints = pd.DataFrame({"qid": [1, 22, 303]})
    floats = pd.DataFrame({"qid": [1.0, 22.0, 303.0]})
    buckets = [_unit_bucket(f, ["qid"], 5).iloc[:, -1].tolist() for f in (texts, ints, floats)]
    assert buckets[0] == buckets[1] == buckets[2]


def test_per_unit_output_is_refused_with_a_clear_error():
    run, qrels = _ranking(queries=5)
    with pytest.raises(scorebench.InputError, match="per_unit"):
        scorebench.evaluate(dd.from_pandas(run, npartitions=2), "ndcg@10", qrels=qrels, per_unit=True)


# --- counter-based Poisson weights ------------------------------------------------------

def test_poisson_weights_are_pinned_for_a_seed():
    # A change of scheme would silently move every published Poisson interval.
    from scorebench.core.stats import poisson_weights

    w = poisson_weights(np.array([1, 2, 3], dtype=np.uint64), seed=42, n_boot=6)
    assert w.astype(int).tolist() == [[1, 0, 0], [0, 1, 2], [1, 0, 1], [1, 1, 0], [1, 0, 0], [1, 2, 2]]


def test_poisson_weights_do_not_depend_on_blocking_or_order():
    from scorebench.core import stats

    rng = np.random.default_rng(0)
    h = rng.integers(0, 2**63, 70_001, dtype=np.uint64)
    whole = stats.poisson_weights(h, seed=5, n_boot=7)
    buffer = np.full((7, 80_000), -9.0)
    into = stats.poisson_weights(h[:50_000], seed=5, n_boot=7, out=buffer[:, :50_000])
    np.testing.assert_array_equal(into, whole[:, :50_000])
    order = rng.permutation(h.size)
    np.testing.assert_array_equal(stats.poisson_weights(h[order], seed=5, n_boot=7), whole[:, order])
    assert not np.array_equal(stats.poisson_weights(h, seed=6, n_boot=7), whole)


def test_poisson_weights_follow_poisson_one():
    from scipy import stats as sps

    from scorebench.core.stats import poisson_weights

    w = poisson_weights(np.arange(200_000, dtype=np.uint64), seed=1, n_boot=10).ravel()
    counts = np.bincount(w.astype(int), minlength=8)
    expected = sps.poisson.pmf(np.arange(8), 1.0) * w.size
    expected[-1] += sps.poisson.sf(7, 1.0) * w.size
    counts[7] = counts[7:].sum()
    assert sps.chisquare(counts[:8], expected).pvalue > 1e-4
    # Neighbouring rounds (which share one 64-bit mix) are uncorrelated.
    pairs = poisson_weights(np.arange(200_000, dtype=np.uint64), seed=1, n_boot=2)
    assert abs(np.corrcoef(pairs)[0, 1]) < 0.01


def test_poisson_weights_reject_a_wrong_buffer():
    from scorebench.core.stats import poisson_weights

    with pytest.raises(ValueError, match="float64 of shape"):
        poisson_weights(np.arange(5, dtype=np.uint64), seed=0, n_boot=3, out=np.empty((3, 4)))


def test_cli_ranking_with_qrels_glob(client, tmp_path):
    from click.testing import CliRunner

    from scorebench.cli import cli

    run, qrels = _ranking(queries=40)
    for i, start in enumerate(range(0, len(run), 500)):
        run.iloc[start:start + 500].to_parquet(tmp_path / f"run-{i}.parquet")
    (tmp_path / "qrels").mkdir()
    for i, start in enumerate(range(0, len(qrels), 300)):
        qrels.iloc[start:start + 300].to_parquet(tmp_path / "qrels" / f"q-{i}.parquet")
    res = CliRunner().invoke(cli, ["evaluate", str(tmp_path / "run-*.parquet"), "--engine", "dask",
                                   "--qrels", str(tmp_path / "qrels" / "*.parquet"), "-m", "ndcg@10", "-m", "map",
                                   "--bootstrap", "40", "-o", str(tmp_path / "s.csv")])
    assert res.exit_code == 0, res.output
    got = pd.read_csv(tmp_path / "s.csv", comment="#")
    expected = scorebench.evaluate(run, ["ndcg@10", "map"], qrels=qrels, n_boot=40, bootstrap="poisson")
    np.testing.assert_allclose(got.value, expected.value, rtol=1e-12)
    np.testing.assert_allclose(got.ci_low, expected.ci_low, rtol=1e-12)


@pytest.mark.parametrize("args, message", [
    (["{tmp}/nothing-*.parquet", "-m", "brier_score"], "no file matches"),
    (["{tmp}/t.parquet", "-m", "ndcg@10", "--qrels", "{tmp}/missing.txt"], "--qrels: file not found"),
    (["{tmp}/t.jsonl", "-m", "brier_score"], "the Dask engine reads Parquet"),
])
def test_cli_dask_errors_are_one_line(tmp_path, args, message):
    import subprocess
    import sys

    _binary(n=10).to_parquet(tmp_path / "t.parquet")
    _binary(n=10).to_json(tmp_path / "t.jsonl", orient="records", lines=True)
    argv = [a.replace("{tmp}", str(tmp_path)) for a in args]
    proc = subprocess.run([sys.executable, "-m", "scorebench.cli", "evaluate", *argv, "--engine", "dask"],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and message in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


# --- every mergeable metric of every kind ------------------------------------------------

def _kind_tables():
    rng = np.random.default_rng(8)
    n = 240
    y01 = rng.uniform(0.05, 0.95, n)
    labels = rng.integers(0, 3, n)
    probs = rng.dirichlet(np.ones(3), n)
    ens = rng.normal(size=(n, 6))
    q = np.sort(rng.normal(size=(n, 3)), axis=1)
    two = lambda frame: pd.concat([frame.assign(system="a"), frame.assign(system="b", id=frame["id"])],
                                  ignore_index=True) if "id" in frame else pd.concat(
        [frame.assign(system="a"), frame.assign(system="b")], ignore_index=True)
    ids = np.arange(n)
    tables = {
        "binary": two(pd.DataFrame({"id": ids, "y": (rng.uniform(size=n) < y01).astype(int), "p": y01})),
        "multiclass": two(pd.DataFrame({"id": ids, "y": labels, **{f"p_{k}": probs[:, k] for k in range(3)}})),
        "ensemble": two(pd.DataFrame({"id": ids, "y": rng.normal(size=n), **{f"m{j}": ens[:, j] for j in range(6)}})),
        "ensemble_long": pd.DataFrame({"system": "a", "id": np.repeat(ids, 6), "member": np.tile(np.arange(6), n),
                                       "value": ens.ravel(), "y": np.repeat(rng.normal(size=n), 6)}),
        "parametric": two(pd.DataFrame({"id": ids, "y": y01, "mu": rng.normal(0.5, 0.2, n), "sigma": 0.3,
                                        "a": 2.0, "b": 3.0, "rate": 1.5, "shape": 0.5, "s": 0.4, "mulog": -0.5,
                                        "sigmalog": 0.6, "df": 5.0, "low": -0.2, "high": 1.3, "scale1": 0.2,
                                        "scale2": 0.4, "mass": 0.1, "shift": 0.2, "mean": 2.0, "n": 5,
                                        "prob": 0.4, "m": 6, "k": 4})),
        "quantile": two(pd.DataFrame({"id": ids, "y": rng.normal(size=n), "q0.1": q[:, 0], "q0.5": q[:, 1],
                                      "q0.9": q[:, 2]})),
        "interval": two(pd.DataFrame({"id": ids, "y": rng.normal(size=n), "lower": q[:, 0], "upper": q[:, 2],
                                      "alpha": 0.2})),
        "multivariate": two(pd.DataFrame({"id": ids, "y.0": rng.normal(size=n), "y.1": rng.normal(size=n),
                                          **{f"m{j}.{d}": rng.normal(size=n) for j in range(5) for d in range(2)}})),
        "rating": two(pd.DataFrame({"id": ids, "y_true": rng.integers(1, 6, n), "y_pred": rng.integers(1, 6, n)})),
        "embeddings": two(pd.DataFrame({"id": ids, "label": labels,
                                        **{f"f{j}": rng.normal(size=n) + labels * 0.5 for j in range(4)}})),
        "preferences": two(pd.DataFrame({"id": ids, "score_chosen": rng.integers(0, 4, n),
                                         "score_rejected": rng.integers(0, 4, n), "len_chosen": rng.integers(9, 99, n),
                                         "len_rejected": rng.integers(9, 99, n)})),
        "judgments": two(pd.DataFrame({"id": ids, "question_id": ids, "model_1": "x", "model_2": "y",
                                       "g1_winner": np.array(["model_1", "model_2", "tie"])[labels],
                                       "g2_winner": np.array(["model_1", "model_2", "tie"])[rng.integers(0, 3, n)]})),
    }
    return tables


def _mergeable(kind):
    listing = scorebench.list_metrics()
    names = []
    for name in listing.loc[listing.family != "test", "name"]:  # not metrics other tests registered
        record = scorebench.metric(name.replace("@k", "@10").replace("@r", "@0.5").replace("@m", "@0.5"))
        if record.kind == kind.split("_")[0] and record.mergeable and not record.needs_torch:
            names.append(record.name)
    return names


@pytest.mark.parametrize("kind", sorted(_kind_tables()))
def test_every_mergeable_metric_of_every_kind_matches_pandas(client, kind):
    table = _kind_tables()[kind]
    # Mixture columns are not in this table; the quadrature needs a callable, the threshold
    # Brier score its thresholds, the count, GPD and GEV log scores outcomes on their support.
    skip = {"crps_mixnorm", "log_score_mixnorm", "crps_quadrature", "threshold_brier_score", "log_score_poisson", "log_score_negbinom",
            "log_score_binomial", "log_score_hypergeometric", "log_score_gpd", "log_score_gev"}
    metrics = [m for m in _mergeable(kind) if m not in skip]
    assert metrics, kind
    shuffled = table.sample(frac=1.0, random_state=1).reset_index(drop=True)  # units spread over partitions
    expected = scorebench.evaluate(table, metrics, kind=kind.split("_")[0], n_boot=20, seed=4, bootstrap="poisson")
    got = scorebench.evaluate(dd.from_pandas(shuffled, npartitions=6), metrics, kind=kind.split("_")[0], n_boot=20,
                              seed=4)
    key = [c for c in ("system", "metric") if c in expected]
    expected, got = (f.sort_values(key).reset_index(drop=True) for f in (expected, got))
    assert got.metric.tolist() == expected.metric.tolist()
    np.testing.assert_allclose(got.value, expected.value, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(got[["ci_low", "ci_high"]], expected[["ci_low", "ci_high"]], rtol=1e-12, atol=1e-15)
    assert (got.n == expected.n).all()


def test_listwise_losses_partition_by_query(client):
    pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    qid = np.repeat(np.arange(30), 8).astype(str)
    table = pd.DataFrame({"system": "net", "qid": qid, "score": rng.normal(size=qid.size),
                          "label": rng.integers(0, 3, qid.size)})
    metrics = ["listnet_loss", "neural_ndcg@5", "ranknet_loss"]
    expected = scorebench.evaluate(table, metrics, n_boot=20, bootstrap="poisson")
    got = scorebench.evaluate(dd.from_pandas(table.sample(frac=1.0, random_state=2), npartitions=4), metrics,
                              n_boot=20)
    np.testing.assert_allclose(got.value, expected.value, rtol=1e-9)
    assert (got.n == expected.n).all()


@pytest.mark.parametrize("on_client", [True, False])
def test_progress_is_reported_per_partition(client, monkeypatch, on_client):
    import dask

    if not on_client:  # the local threaded scheduler's callback path
        def no_client():
            raise ValueError("no client")

        monkeypatch.setattr(distributed, "get_client", no_client)
    table = _binary(n=300)
    calls = []
    expected = scorebench.evaluate(table, "brier_score", n_boot=20, bootstrap="poisson")
    with dask.config.set(scheduler="distributed" if on_client else "threads"):
        got = scorebench.evaluate(dd.from_pandas(table, npartitions=5), "brier_score", n_boot=20,
                                  progress=lambda done, total: calls.append((done, total)))
    assert calls == [(d, 5) for d in range(1, 6)]
    np.testing.assert_allclose(got.value, expected.value, rtol=1e-12)


def test_hive_partitioned_parquet_gives_the_in_memory_intervals(tmp_path):
    # read back, the partition column is categorical and comes last: hashes must not care
    import subprocess
    import sys

    table = _binary(n=400)
    table.to_parquet(tmp_path / "hive", partition_cols=["system"])
    proc = subprocess.run([sys.executable, "-m", "scorebench.cli", "evaluate", str(tmp_path / "hive"), "--engine",
                           "dask", "-m", "brier_score", "-m", "ece", "--bootstrap", "40", "-o",
                           str(tmp_path / "s.csv")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    got = pd.read_csv(tmp_path / "s.csv", comment="#").sort_values(["system", "metric"]).reset_index(drop=True)
    expected = scorebench.evaluate(table, ["brier_score", "ece"], n_boot=40, bootstrap="poisson")
    expected = expected.sort_values(["system", "metric"]).reset_index(drop=True)
    np.testing.assert_allclose(got[["value", "ci_low", "ci_high"]], expected[["value", "ci_low", "ci_high"]],
                               rtol=1e-9)


def test_cli_connects_to_a_scheduler_address(client, tmp_path):
    from click.testing import CliRunner

    from scorebench.cli import cli

    table = _binary(n=200)
    table.to_parquet(tmp_path / "t.parquet")
    res = CliRunner().invoke(cli, ["evaluate", str(tmp_path / "t.parquet"), "--engine", "dask", "--scheduler",
                                   client.scheduler.address, "-m", "brier_score", "--bootstrap", "20",
                                   "-o", str(tmp_path / "s.csv")])
    opened = distributed.default_client()
    if opened is not client:  # the command's own connection: close it (the fixture's stays the default)
        opened.close()
    assert res.exit_code == 0, res.output
    got = pd.read_csv(tmp_path / "s.csv", comment="#")
    expected = scorebench.evaluate(table, "brier_score", n_boot=20, bootstrap="poisson")
    np.testing.assert_allclose(got.value, expected.value, rtol=1e-12)


def test_poisson_rounds_in_blocks_equal_the_whole_matrix():
    from scorebench.core.stats import PoissonRounds, poisson_weights

    h = np.random.default_rng(1).integers(0, 2**63, 1000, dtype=np.uint64)
    whole = poisson_weights(h, seed=3, n_boot=37)
    rounds = PoissonRounds(h, seed=3, n_boot=37, cells=5_000)  # blocks of 4 rounds
    got = np.vstack([w for _, w in rounds.blocks()])
    np.testing.assert_array_equal(got, whole)
    values = np.random.default_rng(2).normal(size=1000)
    sums, totals = rounds.weighted_sums(values)
    np.testing.assert_allclose(sums, whole @ values, rtol=1e-12)
    np.testing.assert_array_equal(totals, whole.sum(axis=1))
    with pytest.raises(ValueError, match="even"):
        poisson_weights(h, seed=3, n_boot=2, start_round=1)


def test_complete_with_system_and_task_groups(client):
    # every (system, task) group gets its own missing queries, scored by the metrics (num_rel > 0)
    run, qrels = _ranking(queries=40)
    run = pd.concat([run.assign(task="t1"), run[run.qid.astype(int) % 3 != 0].assign(task="t2")], ignore_index=True)
    metrics = ["ndcg@10", "num_rel", "num_ret", "map"]
    expected = scorebench.evaluate(run, metrics, qrels=qrels, complete=True, n_boot=25, bootstrap="poisson")
    got = scorebench.evaluate(dd.from_pandas(run.sample(frac=1.0, random_state=3), npartitions=6), metrics,
                              qrels=qrels, complete=True, n_boot=25)
    key = ["system", "task", "metric"]
    expected, got = (f.sort_values(key).reset_index(drop=True) for f in (expected, got))
    np.testing.assert_allclose(got.value, expected.value, rtol=1e-12)
    np.testing.assert_allclose(got[["ci_low", "ci_high"]], expected[["ci_low", "ci_high"]], rtol=1e-12)
    assert (got.n == expected.n).all()


@pytest.mark.parametrize("kind", sorted(_kind_tables()))
def test_system_and_task_groups_survive_every_kind(kind):
    # (in memory) two grouping columns must give one row per (system, task) and metric
    table = _kind_tables()[kind]
    if "system" not in table:
        table = table.assign(system="a")
    half = len(table) // 2
    table = table.assign(task=np.where(np.arange(len(table)) < half, "t1", "t2"))
    if kind == "ensemble_long":  # keep each id's members in one task
        table = table.assign(task=np.where(table["id"] < table["id"].median(), "t1", "t2"))
    metric = _mergeable(kind)[0]
    scores = scorebench.evaluate(table, metric, kind=kind.split("_")[0], n_boot=0)
    assert {"system", "task"} <= set(scores.columns)
    assert len(scores) == table.groupby(["system", "task"]).ngroups


@pytest.mark.parametrize("nan_policy", ["omit", "propagate"])
def test_nan_policies_match_pandas(client, nan_policy):
    table = _parametric(n=400)
    table.loc[::37, "mu"] = np.nan  # rows spread over every partition
    metrics = ["crps_normal", "log_score_normal"]
    expected = scorebench.evaluate(table, metrics, n_boot=30, bootstrap="poisson", nan_policy=nan_policy)
    got = scorebench.evaluate(dd.from_pandas(table, npartitions=7), metrics, n_boot=30, nan_policy=nan_policy)
    np.testing.assert_allclose(got.value, expected.value, rtol=1e-12)
    np.testing.assert_allclose(got[["ci_low", "ci_high"]], expected[["ci_low", "ci_high"]], rtol=1e-12)
    assert (got.n == expected.n).all()


def test_gzipped_csv_parts(client, tmp_path):
    table = _binary(n=300)
    for i, start in enumerate(range(0, len(table), 400)):
        table.iloc[start:start + 400].to_csv(tmp_path / f"p{i}.csv.gz", index=False)
    from scorebench.evaluation.dask_engine import read_dask

    got = scorebench.evaluate(read_dask(str(tmp_path / "p*.csv.gz")), "brier_score", n_boot=20)
    expected = scorebench.evaluate(table, "brier_score", n_boot=20, bootstrap="poisson")
    np.testing.assert_allclose(got.value, expected.value, rtol=1e-12)
    np.testing.assert_allclose(got.ci_low, expected.ci_low, rtol=1e-9)


def test_same_input_and_seed_give_byte_identical_output(client, tmp_path):
    from click.testing import CliRunner

    from scorebench.cli import cli

    table = _binary(n=500)
    for i, start in enumerate(range(0, len(table), 300)):
        table.iloc[start:start + 300].to_parquet(tmp_path / f"part-{i}.parquet")
    outputs = []
    for run in range(2):
        out = tmp_path / f"s{run}.csv"
        res = CliRunner().invoke(cli, ["evaluate", str(tmp_path / "part-*.parquet"), "--engine", "dask", "-m",
                                       "brier_score", "-m", "ece", "--bootstrap", "30", "--seed", "7", "-o", str(out)])
        assert res.exit_code == 0, res.output
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]


def _one_top_grade(queries=40):
    # only query 0 is judged up to grade 4; every other query's top grade is 1
    qid = np.repeat(np.arange(queries), 3).astype(str)
    docid = np.tile(["a", "b", "c"], queries)
    rel = np.tile([1, 0, 0], queries)
    rel[:3] = [4, 1, 0]
    run = pd.DataFrame({"system": "s", "qid": qid, "docid": docid, "score": np.tile([3.0, 2.0, 1.0], queries)})
    return run, pd.DataFrame({"qid": qid, "docid": docid, "relevance": rel})


@pytest.mark.parametrize("form", ["pandas", "dask", "trec_path"])
@pytest.mark.parametrize("complete", [False, True])
def test_err_default_top_grade_is_the_whole_qrels_on_both_engines(client, tmp_path, form, complete):
    # ERR's default g_max is the qrels' largest grade, a global property: taken per partition
    # it gave 0.2100 on Dask against 0.0500 on pandas
    run, qrels = _one_top_grade()
    pandas_run = run[run.qid != "7"] if complete else run
    expected = scorebench.evaluate(pandas_run, ["err@5", "ndcg@5"], qrels=qrels, complete=complete, n_boot=20,
                                   bootstrap="poisson")
    # g_max = 4: query 0 ranks grades 4, 1 (R = 15/16, 1/16); the others rank grade 1 first (R = 1/16)
    others = 39 - complete  # with complete=True, query 7 (not run) counts 0
    assert expected.value.iloc[0] == pytest.approx((15 / 16 + (1 / 16) ** 2 / 2 + others / 16) / 40, rel=1e-12)
    given = {"pandas": qrels, "dask": dd.from_pandas(qrels, npartitions=4),
             "trec_path": str(_write_trec_qrels(qrels, tmp_path / "qrels.txt"))}[form]
    got = scorebench.evaluate(dd.from_pandas(pandas_run, npartitions=4), ["err@5", "ndcg@5"], qrels=given,
                              complete=complete, n_boot=20)
    np.testing.assert_allclose(got.value, expected.value, rtol=1e-12)
    np.testing.assert_allclose(got[["ci_low", "ci_high"]], expected[["ci_low", "ci_high"]], rtol=1e-12)
