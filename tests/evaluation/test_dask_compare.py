"""pandas = Dask contract for compare: the same pairs, tests and numbers however the table is split."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import scorebench
from scorebench.core.errors import InputError

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

NUMBERS = ["n", "mean_diff", "ci_low", "ci_high", "mde", "statistic", "p_value", "p_holm", "p_bh"]


def _correct(n=400, k=5, seed=0, tasks=("t1", "t2")):
    rng = np.random.default_rng(seed)
    frames = []
    for task in tasks:
        ease = rng.normal(0, 1, n)
        for j in range(k):
            p = 1 / (1 + np.exp(-(ease + 0.3 * j)))
            frames.append(pd.DataFrame({"system": f"s{j}", "task": task, "id": [f"{task}-{i}" for i in range(n)],
                                        "correct": (rng.random(n) < p).astype(int)}))
    return pd.concat(frames, ignore_index=True).sample(frac=1.0, random_state=seed)  # rows in no order


def _brier(n=300, seed=1):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    return pd.concat([pd.DataFrame({"system": s, "id": np.arange(n), "y": y,
                                    "p": np.clip(np.where(y == 1, q, 1 - q) + rng.normal(0, 0.1, n), 0, 1)})
                      for s, q in (("good", 0.75), ("weak", 0.6), ("coin", 0.5))], ignore_index=True)


def _same(got: pd.DataFrame, expected: pd.DataFrame) -> None:
    assert list(got.columns) == list(expected.columns)
    assert len(got) == len(expected)
    for col in ("system_a", "system_b", "test", "detail", "better"):
        assert got[col].tolist() == expected[col].tolist(), col
    if "task" in expected:
        assert got["task"].tolist() == expected["task"].tolist()
    np.testing.assert_allclose(got[NUMBERS].to_numpy(float), expected[NUMBERS].to_numpy(float), rtol=1e-9,
                               atol=1e-12)
    assert got.attrs["engine"] == "dask"


@pytest.mark.parametrize("partitions", [1, 40])  # 40: a two-level merge tree
def test_compare_matches_pandas_on_binary_tasks(client, partitions):
    table = _correct()
    expected = scorebench.compare(table, "accuracy", n_boot=200, n_perm=300, seed=5)
    got = scorebench.compare(dd.from_pandas(table, npartitions=partitions), "accuracy", n_boot=200, n_perm=300,
                             seed=5)
    assert set(got["test"]) == {"bootstrap", "permutation", "t", "mcnemar"}
    _same(got, expected)


@pytest.mark.parametrize("partitions", [9])
def test_compare_matches_pandas_on_scores_with_a_baseline(client, partitions):
    table = _brier()
    kw = dict(baseline="coin", tests=["bootstrap", "permutation", "t"], n_boot=150, n_perm=200, seed=2)
    _same(scorebench.compare(dd.from_pandas(table, npartitions=partitions), "brier_score", **kw),
          scorebench.compare(table, "brier_score", **kw))


def test_compare_small_task_uses_exact_sign_flips(client):
    table = _correct(n=12, k=3, tasks=("t",))
    expected = scorebench.compare(table, "accuracy", tests=["permutation", "mcnemar"], n_boot=0)
    got = scorebench.compare(dd.from_pandas(table, npartitions=4), "accuracy", tests=["permutation", "mcnemar"],
                             n_boot=0)
    assert got["detail"].str.startswith("exact, 4096").sum() == 3
    _same(got, expected)


def test_compare_dask_errors_are_one_clear_line(client):
    table = _correct(n=50, k=3, tasks=("t",))
    with pytest.raises(InputError, match="not scored on the same units"):
        scorebench.compare(dd.from_pandas(table.iloc[1:], npartitions=3), "accuracy")
    with pytest.raises(InputError, match="needs an 'id' column"):
        scorebench.compare(dd.from_pandas(table.drop(columns="id"), npartitions=2), "accuracy")
    with pytest.raises(InputError, match="cluster= and repeats="):
        scorebench.compare(dd.from_pandas(table, npartitions=2), "accuracy", cluster="task")
    with pytest.raises(InputError, match="time order"):
        scorebench.compare(dd.from_pandas(_brier(), npartitions=2), "brier_score", tests=["diebold_mariano"])


def test_cli_compare_engine_dask_equals_pandas(tmp_path):
    from click.testing import CliRunner

    from scorebench.cli import cli

    table = _correct(n=80, k=3, tasks=("t",))
    folder = tmp_path / "parts"
    folder.mkdir()
    for i in range(3):
        table.iloc[i::3].to_parquet(folder / f"part{i}.parquet")
    runner = CliRunner()
    outs = []
    for engine in ("dask", "pandas"):
        path = tmp_path / f"{engine}.csv"
        src = str(folder / "*.parquet") if engine == "dask" else str(tmp_path / "all.parquet")
        table.to_parquet(tmp_path / "all.parquet")
        res = runner.invoke(cli, ["compare", src, "-m", "accuracy", "--engine", engine, "--test", "mcnemar",
                                  "--test", "t", "-o", str(path)])
        assert res.exit_code == 0, res.output
        outs.append(pd.read_csv(path))
    np.testing.assert_allclose(outs[0]["p_value"], outs[1]["p_value"], rtol=1e-9)
    assert outs[0]["detail"].tolist() == outs[1]["detail"].tolist()
    bad = runner.invoke(cli, ["compare", str(tmp_path / "all.parquet"), "-m", "accuracy", "--scheduler", "x:1"])
    assert bad.exit_code != 0 and "--scheduler applies to --engine dask" in bad.output
