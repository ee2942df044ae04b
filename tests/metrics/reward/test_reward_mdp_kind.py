"""Table kind ``mdp``: STARC / EPIC / DARD distances to a reference reward through evaluate, the registry and the CLI."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import scorebench
from scorebench.core.errors import InputError
from scorebench.metrics.reward.starc import dard_distance, epic_distance, starc_distance

S, A, GAMMA = 4, 3, 0.9
METRICS = ["reward_starc", "reward_starc_epic", "reward_epic", "reward_dard"]


def _mdp(seed: int = 0):
    rng = np.random.default_rng(seed)
    tau = rng.dirichlet(np.ones(S), size=(S, A))
    R = rng.normal(size=(S, A, S))
    return rng, tau, R


def _rows(name: str, reward: np.ndarray, reference: np.ndarray, tau: np.ndarray, policy=None) -> pd.DataFrame:
    s, a, s2 = (g.ravel() for g in np.meshgrid(range(S), range(A), range(S), indexing="ij"))
    frame = pd.DataFrame({"system": name, "s": [f"s{i}" for i in s], "a": [f"act{i}" for i in a],
                          "s_next": [f"s{i}" for i in s2], "reward": reward.ravel(), "reference": reference.ravel(),
                          "transition": tau.ravel()})
    if policy is not None:
        frame["policy"] = np.repeat(policy.ravel(), S)
    return frame


def _table(seed: int = 0, policy=None):
    rng, tau, R = _mdp(seed)
    phi = rng.normal(size=S)
    systems = {"shaped": 2.5 * R + GAMMA * phi[None, None, :] - phi[:, None, None], "noisy": R + rng.normal(size=R.shape),
               "other": rng.normal(size=R.shape), "negated": -R}
    table = pd.concat([_rows(k, v, R, tau, policy) for k, v in systems.items()], ignore_index=True)
    return table, systems, R, tau


def test_values_equal_the_array_functions_and_invariances_hold():
    table, systems, R, tau = _table()
    out = scorebench.evaluate(table, METRICS, kind="mdp", gamma=GAMMA, n_boot=0).set_index(["system", "metric"])
    for name, reward in systems.items():
        expected = {"reward_starc": starc_distance(reward, R, GAMMA, transition=tau),
                    "reward_starc_epic": starc_distance(reward, R, GAMMA, canonical="epic"),
                    "reward_epic": epic_distance(reward, R, GAMMA),
                    "reward_dard": dard_distance(reward, R, GAMMA, transition=tau)}
        for metric, value in expected.items():
            assert out.loc[(name, metric), "value"] == pytest.approx(value, rel=1e-12, abs=1e-12)
    shaped = out.xs("shaped", level="system")["value"]
    assert np.allclose(shaped, 0.0, atol=1e-9)  # potential shaping and positive scaling
    negated = out.xs("negated", level="system")["value"]
    assert np.allclose(negated, 1.0, atol=1e-9)
    noisy = out.xs("noisy", level="system")["value"]
    assert ((noisy > 0) & (noisy < 1)).all()
    assert (out["n"] == S * A * S).all()


def test_no_interval_whatever_n_boot_and_the_rule_is_recorded():
    table, *_ = _table()
    out = scorebench.evaluate(table, METRICS, kind="mdp", gamma=GAMMA, n_boot=200, seed=3)
    assert out["ci_low"].isna().all() and out["ci_high"].isna().all()
    assert set(out.attrs["interval_methods"].values()) == {"none"}
    assert out.attrs["interval"] == "none"
    for name in METRICS:
        record = scorebench.metric(name)
        assert record.interval_method == "none" and record.higher_is_better is False and record.bounds == (0.0, 1.0)


def test_policy_column_is_used_by_the_value_canonicalisation():
    rng, tau, R = _mdp(1)
    policy = rng.dirichlet(np.ones(A), size=S)
    reward = R + rng.normal(size=R.shape)
    table = _rows("x", reward, R, tau, policy)
    out = scorebench.evaluate(table, "reward_starc", kind="mdp", gamma=GAMMA, n_boot=0)
    expected = starc_distance(reward, R, GAMMA, transition=tau, policy=policy)
    assert out["value"].iloc[0] == pytest.approx(expected, rel=1e-12)
    assert expected != pytest.approx(starc_distance(reward, R, GAMMA, transition=tau), rel=1e-6)


def test_gamma_from_a_column_and_row_order_does_not_matter():
    table, *_ = _table(2)
    by_option = scorebench.evaluate(table, METRICS, kind="mdp", gamma=GAMMA, n_boot=0)
    shuffled = table.assign(gamma=GAMMA).sample(frac=1.0, random_state=0)
    by_column = scorebench.evaluate(shuffled, METRICS, kind="mdp", n_boot=0)
    assert np.allclose(by_option["value"], by_column["value"], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("change, message", [
    (lambda t: t.iloc[1:], "is missing for a system"),
    (lambda t: pd.concat([t, t.iloc[:1]]), "appears more than once"),
    (lambda t: t.assign(transition=t["transition"] * 1.5), "transition"),
    (lambda t: t.assign(transition=-t["transition"]), "must lie in \\[0, 1\\]"),
    (lambda t: t.drop(columns="reference"), "reference"),
    (lambda t: t.assign(gamma=np.where(np.arange(len(t)) % 2, 0.9, 0.5)), "one discount"),
    (lambda t: t.assign(policy=0.5), "policy"),
])
def test_bad_tables_are_refused_with_a_clear_message(change, message):
    table, *_ = _table()
    table = table[table["system"] == "noisy"].reset_index(drop=True)
    with pytest.raises(InputError, match=message):
        scorebench.evaluate(change(table), "reward_starc", kind="mdp", gamma=GAMMA, n_boot=0)


def test_missing_discount_is_refused():
    table, *_ = _table()
    with pytest.raises(InputError, match="discount is missing"):
        scorebench.evaluate(table, "reward_epic", kind="mdp", n_boot=0)
    with pytest.raises(InputError, match="gamma"):
        scorebench.evaluate(table, "reward_epic", kind="mdp", gamma=1.5, n_boot=0)
    with pytest.raises(InputError, match="gamma"):  # the value canonicalisation needs gamma < 1
        scorebench.evaluate(table, "reward_starc", kind="mdp", gamma=1.0, n_boot=0)


def test_cli_evaluate_runs_the_mdp_kind(tmp_path):
    from click.testing import CliRunner

    from scorebench.cli import cli

    table, *_ = _table()
    path = tmp_path / "mdp.csv"
    table.to_csv(path, index=False)
    result = CliRunner().invoke(cli, ["evaluate", str(path), "--kind", "mdp", "-m", "reward_epic", "-m",
                                       "reward_starc", "-O", "gamma=0.9", "--bootstrap", "100", "--output",
                                       str(tmp_path / "out.csv")])
    assert result.exit_code == 0, result.output
    out = pd.read_csv(tmp_path / "out.csv")
    assert out["ci_low"].isna().all()
    assert out.loc[out.system == "shaped", "value"].abs().max() < 1e-9
    bad = CliRunner().invoke(cli, ["evaluate", str(path), "--kind", "mdp", "-m", "reward_epic"])
    assert bad.exit_code != 0 and "discount is missing" in bad.output


def test_dask_engine_gives_the_same_values_and_no_interval():
    dd = pytest.importorskip("dask.dataframe")
    table, *_ = _table(3)
    expected = scorebench.evaluate(table, METRICS, kind="mdp", gamma=GAMMA, n_boot=20).sort_values(["system", "metric"])
    shuffled = dd.from_pandas(table.sample(frac=1.0, random_state=0), npartitions=4)
    got = scorebench.evaluate(shuffled, METRICS, kind="mdp", gamma=GAMMA, n_boot=20).sort_values(["system", "metric"])
    assert np.allclose(expected["value"], got["value"], rtol=1e-10, atol=1e-12)
    assert got["ci_low"].isna().all() and set(got.attrs["interval_methods"].values()) == {"none"}
