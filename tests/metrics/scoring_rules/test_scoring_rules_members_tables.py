"""Weighted ensembles from tables (weighted_ensemble / weighted_multivariate kinds) and the new
multivariate rules through scorebench.evaluate and the CLI (issue 19)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import scorebench
from scorebench.cli import cli
from scorebench.core.errors import InputError
from scorebench.metrics import scoring_rules as S

N, M = 60, 5


@pytest.fixture
def wide():
    rng = np.random.default_rng(11)
    frames = []
    for system, spread in {"good": 1.0, "wide": 3.0}.items():
        y = rng.normal(size=N)
        frames.append(pd.DataFrame({"system": system, "id": np.arange(N), "y": y,
                                    **{f"m{j}": spread * rng.normal(size=N) for j in range(M)},
                                    **{f"w{j}": rng.random(N) + 0.1 for j in range(M)}}))
    return pd.concat(frames, ignore_index=True)


def _per_system(table, fn, cols_m, cols_w, **kw):
    return {s: fn(g["y"].to_numpy(), g[cols_m].to_numpy(), ens_w=g[cols_w].to_numpy(), **kw).mean()
            for s, g in table.groupby("system")}


def test_weighted_ensemble_wide_and_long_tables_agree_with_the_function(wide):
    members, weights = [f"m{j}" for j in range(M)], [f"w{j}" for j in range(M)]
    expected = _per_system(wide, S.crps_ensemble, members, weights, estimator="fair")
    long = wide.melt(id_vars=["system", "id", "y"], value_vars=members, var_name="member", value_name="value")
    long["weight"] = wide.melt(id_vars=["system", "id"], value_vars=weights)["value"].to_numpy()
    for table in (wide, long.sample(frac=1.0, random_state=0)):
        got = scorebench.evaluate(table, scorebench.metric("crps_ensemble_w", estimator="fair"), n_boot=0)
        for _, row in got.iterrows():
            assert row["value"] == pytest.approx(expected[row["system"]], rel=1e-12)


def test_weighted_multivariate_table_and_cli(tmp_path):
    rng = np.random.default_rng(12)
    y = rng.normal(size=(N, 2))
    ens = rng.normal(size=(N, M, 2))
    w = rng.random((N, M)) + 0.1
    table = pd.DataFrame({"system": "s", "id": np.arange(N), "y.0": y[:, 0], "y.1": y[:, 1],
                          **{f"m{j}.{d}": ens[:, j, d] for j in range(M) for d in range(2)},
                          **{f"w{j}": w[:, j] for j in range(M)}})
    got = scorebench.evaluate(table, [scorebench.metric("energy_score_w"),
                                      scorebench.metric("variogram_score_w", estimator="fair")], n_boot=0)
    values = dict(zip(got["metric"], got["value"]))
    assert values["energy_score_w"] == pytest.approx(S.energy_score(y, ens, ens_w=w).mean(), rel=1e-12)
    assert values["variogram_score_w(estimator=fair)"] == pytest.approx(
        S.variogram_score(y, ens, ens_w=w, estimator="fair").mean(), rel=1e-12)
    path = tmp_path / "wmv.csv"
    table.to_csv(path, index=False)
    res = CliRunner().invoke(cli, ["evaluate", str(path), "-m", "energy_score_w", "-m", "vrenergy_score(a=-1)",
                                   "--kind", "weighted_multivariate", "--bootstrap", "0"])
    assert res.exit_code != 0 and "read kind(s) ['multivariate']" in res.output  # vrenergy reads the plain kind
    res = CliRunner().invoke(cli, ["evaluate", str(path), "-m", "energy_score_w", "--bootstrap", "20"])
    assert res.exit_code == 0, res.output
    assert "energy_score_w" in res.output
    # the unweighted kind reads the same file (weight columns ignored) for the new multivariate rules
    res = CliRunner().invoke(cli, ["evaluate", str(path), "-m", "vrenergy_score(a=-1)", "-m", "dssmv_ensemble",
                                   "-m", "owvariogram_score(a=-5)", "--bootstrap", "0"])
    assert res.exit_code == 0, res.output
    assert "dssmv_ensemble" in res.output


def test_clogs_through_evaluate(wide):
    members = [f"m{j}" for j in range(M)]
    got = scorebench.evaluate(wide[["system", "id", "y", *members]], scorebench.metric("clogs_ensemble", a=0.5),
                              n_boot=0)
    for system, group in wide.groupby("system"):
        expected = S.clogs_ensemble(group["y"].to_numpy(), group[members].to_numpy(), a=0.5).mean()
        assert got.set_index("system").loc[system, "value"] == pytest.approx(expected, rel=1e-12)


def test_weight_column_errors_are_one_line_and_name_the_column(wide, tmp_path):
    with pytest.raises(InputError, match=r"missing column\(s\) \['w4'\]"):
        scorebench.evaluate(wide.drop(columns="w4"), scorebench.metric("crps_ensemble_w"), n_boot=0)
    bad = wide.copy()
    bad.loc[3, "w1"] = -1.0
    with pytest.raises(InputError, match="negative weights or a zero total weight in data row 4"):
        scorebench.evaluate(bad, scorebench.metric("crps_ensemble_w"), n_boot=0)
    zero = wide.copy()
    zero.loc[7, [f"w{j}" for j in range(M)]] = 0.0
    path = tmp_path / "zero.csv"
    zero.to_csv(path, index=False)
    res = CliRunner().invoke(cli, ["evaluate", str(path), "-m", "crps_ensemble_w", "--bootstrap", "0"])
    assert res.exit_code != 0
    assert "zero total weight in data row 8" in res.output and "Traceback" not in res.output


def test_listed_in_the_registry():
    from scorebench.core.registry import list_metrics
    names = set(list_metrics("scoring_rules")["name"])
    assert {"crps_ensemble_w", "energy_score_w", "variogram_score_w", "owenergy_score", "vrenergy_score",
            "owvariogram_score", "vrvariogram_score", "dssmv_ensemble", "clogs_ensemble"} <= names


def test_long_weighted_table_through_the_dask_engine_matches_pandas():
    dd = pytest.importorskip("dask.dataframe")
    rng = np.random.default_rng(13)
    rows = [dict(system=s, id=i, member=j, value=rng.normal(), weight=rng.random() + 0.1, y=y)
            for s in ("a", "b") for i in range(30) for y in [rng.normal()] for j in range(4)]
    table = pd.DataFrame(rows)
    expected = scorebench.evaluate(table, ["crps_ensemble_w"], n_boot=20, seed=4, bootstrap="poisson")
    shuffled = table.sample(frac=1.0, random_state=1).reset_index(drop=True)  # members spread over partitions
    got = scorebench.evaluate(dd.from_pandas(shuffled, npartitions=5), ["crps_ensemble_w"], n_boot=20, seed=4)
    np.testing.assert_allclose(got.sort_values("system")["value"], expected.sort_values("system")["value"],
                               rtol=1e-12)
    np.testing.assert_allclose(got.sort_values("system")["ci_low"], expected.sort_values("system")["ci_low"],
                               rtol=1e-12)
