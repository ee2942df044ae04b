"""pandas = Dask contract of ``aggregate`` on item-level tables (rank intervals resampling items).

The Dask path draws Poisson(1) item weights from (seed, hash of task and item, round); the same
estimator in memory is ``aggregate(pandas_table, ..., intervals="poisson")``. Both must give the
same scores (1e-9), ranks and rank intervals (exactly) for 1, 3 and 9 partitions and rows in any
order. The estimator itself is checked against a direct computation and by coverage.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

dd = pytest.importorskip("dask.dataframe")

from _same_ranking import assert_same_ranking  # noqa: E402

import scorebench  # noqa: E402
from scorebench.aggregate import aggregate  # noqa: E402
from scorebench.aggregate.items import item_scores  # noqa: E402
from scorebench.aggregate.poisson_items import copy_seed, item_hashes, poisson_bootstrap_items  # noqa: E402
from scorebench.aggregate.uncertainty import summarize_bootstrap  # noqa: E402
from scorebench.core.errors import InputError  # noqa: E402
from scorebench.core.stats import poisson_weights  # noqa: E402


def _items(systems=6, tasks=2, n=40, seed=0, metrics=("accuracy",), binary=False, all_rows=True):
    """One row per system x task x metric x item (+ the "all" rows of evaluate(per_unit=True))."""
    rng = np.random.default_rng(seed)
    skill = np.linspace(-0.6, 0.6, systems)
    frames = []
    for t in range(tasks):
        ease = rng.normal(0, 1, n)
        for metric in metrics:
            p = 1 / (1 + np.exp(-(ease[:, None] + skill[None, :])))
            v = (rng.random(p.shape) < p).astype(float) if binary else p + rng.normal(0, 0.2, p.shape)
            frames.append(pd.DataFrame({"system": np.tile([f"s{j}" for j in range(systems)], n), "task": f"t{t}",
                                        "metric": metric, "id": np.repeat([f"q{i}" for i in range(n)], systems),
                                        "value": v.ravel()}))
    rows = pd.concat(frames, ignore_index=True)
    if all_rows:
        means = rows.groupby(["system", "task", "metric"], as_index=False)["value"].mean().assign(id="all")
        rows = pd.concat([rows, means[rows.columns]], ignore_index=True)
    return rows


@pytest.mark.parametrize("method", ["mean", "borda", "win_rate", "copeland"])
@pytest.mark.parametrize("nparts", [1, 3, 9])
def test_dask_equals_in_memory_poisson(method, nparts):
    t = _items(seed=nparts)
    want = aggregate(t, method, n_boot=80, seed=4, intervals="poisson")
    shuffled = t.sample(frac=1.0, random_state=nparts).reset_index(drop=True)
    got = aggregate(dd.from_pandas(shuffled, npartitions=nparts), method, n_boot=80, seed=4)
    assert_same_ranking(got, want, sort=True)
    assert got.resample == "items" and got.rank_low is not None
    assert got.details["bootstrap"] == want.details["bootstrap"]
    assert got.details["n_boot_failed"] == want.details["n_boot_failed"]


@pytest.mark.parametrize("nparts", [1, 3, 9])
def test_tasks_and_items_two_metrics_binary(nparts):
    # 6 tasks: tasks are drawn too (tasks+items); two metrics per task: columns task/metric
    t = _items(systems=5, tasks=6, n=25, seed=7, metrics=("accuracy", "exact_match"), binary=True, all_rows=False)
    full = pd.concat([t, t.groupby(["system", "task", "metric"], as_index=False)["value"].mean().assign(id="all")
                      [t.columns]], ignore_index=True)
    want = aggregate(full, "borda", n_boot=60, seed=2, intervals="poisson")
    got = aggregate(dd.from_pandas(t.sample(frac=1.0, random_state=1), npartitions=nparts), "borda", n_boot=60,
                    seed=2)
    assert_same_ranking(got, want, sort=True)
    assert got.resample == "tasks+items"


def test_point_scores_equal_the_multinomial_path():
    t = _items(seed=3)
    got = aggregate(dd.from_pandas(t, npartitions=4), "mean", n_boot=0)
    want = aggregate(t, "mean", n_boot=0)
    assert_same_ranking(got, want, sort=True)
    assert got.rank_low is None


def test_replicates_are_the_poisson_ratio():
    t = _items(systems=3, tasks=1, n=30, seed=5)
    data = item_scores(t)
    pi = poisson_bootstrap_items(data, n_boot=10, seed=9, method="mean", resample="items")
    w = poisson_weights(item_hashes("t0", data.units[0]), 9, 10)  # (rounds, items)
    x = data.items[0][:, 0, :]  # items x systems
    np.testing.assert_allclose(pi.boot[0, :, 0, :] / pi.weight[0, :, 0][:, None], (w @ x) / w.sum(1)[:, None],
                               rtol=1e-12)
    reps, failed = pi.bootstrap(lambda m: m.values[:, 0])
    np.testing.assert_allclose(reps, (w @ x) / w.sum(1)[:, None], rtol=1e-12)
    assert failed == 0


def test_copies_of_a_task_get_their_own_weights():
    assert copy_seed(5, 0) == 5 and copy_seed(5, 1) != copy_seed(5, 2) != 5
    t = _items(systems=3, tasks=5, n=20, seed=1)
    pi = poisson_bootstrap_items(item_scores(t), n_boot=40, seed=0, method="mean", resample="tasks+items")
    assert pi.boot.shape[0] >= 2  # some task drawn twice in a round
    assert not np.allclose(pi.boot[0], pi.boot[1])


def test_interval_coverage_by_simulation():
    # one task, 3 systems: the percentile interval of each system's mean covers its true mean
    rng = np.random.default_rng(0)
    truth = np.array([0.3, 0.5, 0.7])
    hits, sims = 0, 120
    for s in range(sims):
        n = 60
        x = truth[None, :] + rng.normal(0, 1, (n, 3))
        t = pd.DataFrame({"system": np.tile(["a", "b", "c"], n), "task": "t", "id": np.repeat(np.arange(n), 3),
                          "value": x.ravel()})
        t = pd.concat([t, t.groupby(["system", "task"], as_index=False)["value"].mean().assign(id="all")])
        pi = poisson_bootstrap_items(item_scores(t), n_boot=200, seed=s, method="mean", resample="items")
        reps, _ = pi.bootstrap(lambda m: m.values[:, 0])
        out = summarize_bootstrap(reps, 0.9)
        hits += int(np.sum((out["ci_low"] <= truth) & (truth <= out["ci_high"])))
    assert 0.84 <= hits / (3 * sims) <= 0.96


def test_failed_rounds_are_counted_alike():
    t = _items(systems=4, tasks=2, n=2, seed=2)  # 2 items: P(both weights 0) = e^-2 per round
    want = aggregate(t, "mean", n_boot=60, seed=0, intervals="poisson")
    got = aggregate(dd.from_pandas(t, npartitions=2), "mean", n_boot=60, seed=0)
    assert got.details["n_boot_failed"] == want.details["n_boot_failed"] > 0
    assert_same_ranking(got, want, sort=True)


def test_refusals():
    t = _items(seed=1)
    ddf = dd.from_pandas(t, npartitions=3)
    with pytest.raises(InputError, match="reads the raw responses"):
        aggregate(ddf, "difficulty", n_boot=10)
    with pytest.raises(InputError, match="intervals='bootstrap' does not apply"):
        aggregate(ddf, "borda", n_boot=10, intervals="bootstrap")
    with pytest.raises(InputError, match="resample='tasks' does not apply"):
        aggregate(ddf, "borda", n_boot=10, resample="tasks")
    missing = t[~((t["system"] == "s1") & (t["id"] == "q3") & (t["task"] == "t0"))]
    with pytest.raises(InputError, match="item 'q3' has no row for system 's1'"):
        aggregate(dd.from_pandas(missing, npartitions=2), "borda", n_boot=10)
    dup = pd.concat([t, t.iloc[[0]]], ignore_index=True)
    with pytest.raises(InputError, match="has 2 rows for system"):
        aggregate(dd.from_pandas(dup, npartitions=2), "borda", n_boot=10)
    bad = t.assign(value=t["value"].astype(object))
    bad.loc[5, "value"] = "high"
    with pytest.raises(InputError, match="finite numbers"):
        aggregate(dd.from_pandas(bad, npartitions=2), "borda", n_boot=10)
    with pytest.raises(InputError, match="applies to per-item scores"):
        aggregate(pd.DataFrame({"t1": [1, 2], "t2": [2, 1]}, index=["a", "b"]), "borda", n_boot=10,
                  intervals="poisson")
    with pytest.raises(InputError, match="does not apply to per-item scores"):
        aggregate(t, "borda", n_boot=10, intervals="sandwich")


def test_cli_dask_items_equals_in_memory(tmp_path):
    from click.testing import CliRunner

    from scorebench.cli import cli

    t = _items(seed=8)
    for i in range(3):
        t.iloc[i::3].to_parquet(tmp_path / f"part{i}.parquet")
    out = tmp_path / "ranking.csv"
    res = CliRunner().invoke(cli, ["aggregate", str(tmp_path / "*.parquet"), "--engine", "dask", "--bootstrap",
                                   "50", "--seed", "1", "--output", str(out)])
    assert res.exit_code == 0, res.output
    got = pd.read_csv(out)
    want = aggregate(t, "borda", n_boot=50, seed=1, intervals="poisson").to_frame()
    assert got["method"].unique().tolist() == ["borda"]
    got = got.sort_values("system").reset_index(drop=True)
    want = want.sort_values("system").reset_index(drop=True)
    assert got["system"].tolist() == want["system"].tolist()
    for col in ("rank", "rank_low", "rank_high"):
        assert got[col].tolist() == want[col].tolist()
    np.testing.assert_allclose(got["score"], want["score"], rtol=1e-9)
    bad = CliRunner().invoke(cli, ["aggregate", str(tmp_path / "*.parquet"), "--engine", "dask", "-m", "irt"])
    assert bad.exit_code != 0 and "raw responses" in bad.output


def test_scorebench_namespace_dispatches():
    t = _items(seed=9)
    r = scorebench.aggregate(dd.from_pandas(t, npartitions=2), "mean", n_boot=20, seed=0)
    assert r.details["bootstrap"].startswith("Poisson bootstrap")


def test_replicate_sums_too_large_are_refused(monkeypatch):
    import scorebench.aggregate.poisson_items as pi

    monkeypatch.setattr(pi, "MAX_PARTIAL_BYTES", 1000)
    with pytest.raises(InputError, match="lower n_boot"):
        aggregate(dd.from_pandas(_items(seed=1), npartitions=2), "borda", n_boot=100)


def test_only_all_rows_or_no_task_column():
    t = _items(seed=2)
    with pytest.raises(InputError, match="no item rows"):
        aggregate(dd.from_pandas(t[t["id"] == "all"], npartitions=1), "borda", n_boot=10)
    no_task = t[t["task"] == "t0"].drop(columns="task")  # metric only: one implicit task
    want = aggregate(no_task, "mean", n_boot=30, seed=0, intervals="poisson")
    got = aggregate(dd.from_pandas(no_task, npartitions=3), "mean", n_boot=30, seed=0)
    assert_same_ranking(got, want, sort=True)


def test_cli_pandas_poisson_equals_cli_dask(tmp_path):
    from click.testing import CliRunner

    from scorebench.cli import cli

    t = _items(seed=12)
    t.to_csv(tmp_path / "items.csv", index=False)
    t.to_parquet(tmp_path / "items.parquet")
    outs = []
    for args in (["items.csv", "--intervals", "poisson"], ["items.parquet", "--engine", "dask"]):
        out = tmp_path / f"r{len(outs)}.csv"
        res = CliRunner().invoke(cli, ["aggregate", str(tmp_path / args[0]), *args[1:], "-m", "mean", "--bootstrap",
                                       "40", "--seed", "3", "--output", str(out)])
        assert res.exit_code == 0, res.output
        outs.append(pd.read_csv(out).sort_values("system").reset_index(drop=True))
    assert outs[0]["system"].tolist() == outs[1]["system"].tolist()
    for col in ("rank", "rank_low", "rank_high"):
        assert outs[0][col].tolist() == outs[1][col].tolist()
    for col in ("score", "ci_low", "ci_high"):
        np.testing.assert_allclose(outs[0][col], outs[1][col], rtol=1e-9)


def test_poisson_agrees_with_multinomial_to_monte_carlo_error():
    t = _items(systems=4, tasks=2, n=400, seed=21)
    mult = aggregate(t, "mean", n_boot=400, seed=0)
    pois = aggregate(dd.from_pandas(t, npartitions=3), "mean", n_boot=400, seed=0)
    width = mult.ci_high - mult.ci_low
    assert np.all(np.abs(pois.ci_low - mult.ci_low) < 0.2 * width)
    assert np.all(np.abs(pois.ci_high - mult.ci_high) < 0.2 * width)
    np.testing.assert_allclose(pois.scores, mult.scores, rtol=1e-9)


@pytest.mark.parametrize("option", [{"exclude": ("t0",)}, {"convention": "glue"}, {"system_column": "system"},
                                    {"duplicates": "first"}])
def test_dask_refuses_reading_options_the_items_kind_lacks(option):
    # in memory these options are refused by name; the Dask path used to drop them silently
    # (exclude=("t0",) still ranked on t0)
    t = _items(systems=3, n=10)
    with pytest.raises(InputError, match=r"do not apply to kind 'items'") as mem:
        aggregate(t, "mean", **option)
    with pytest.raises(InputError, match=r"do not apply to kind 'items'") as lazy:
        aggregate(dd.from_pandas(t, npartitions=2), "mean", **option)
    assert str(lazy.value) == str(mem.value)


def test_dask_reads_weights_as_in_memory():
    t = _items(systems=3, n=10)
    want = aggregate(t, "mean", weights={"t0": 3.0}, n_boot=20, intervals="poisson")
    got = aggregate(dd.from_pandas(t, npartitions=2), "mean", weights={"t0": 3.0}, n_boot=20)
    assert_same_ranking(got, want, sort=True)


def test_poisson_without_rounds_is_a_point_ranking():
    # intervals="poisson" with n_boot=0 used to be refused as "not per-item scores" on per-item scores
    t = _items(systems=3, n=10)
    want = aggregate(t, "mean")
    for table in (t, dd.from_pandas(t, npartitions=2)):
        got = aggregate(table, "mean", intervals="poisson")
        np.testing.assert_allclose(got.scores, want.scores, rtol=1e-12)
        assert got.ci_low is None and got.n_boot is None
    with pytest.raises(InputError, match="applies to per-item scores"):
        aggregate(t.groupby(["system", "task"], as_index=False)["value"].mean(), "mean", intervals="poisson")
