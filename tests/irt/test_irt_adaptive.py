"""Adaptive testing (Fisher-information item selection, EAP, SE/budget stop) and its offline replay."""

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from scorebench.cli import cli
from scorebench.core.errors import InputError
from scorebench.irt import adaptive_replay, adaptive_test, item_information


def _bank(j=40, seed=0):
    rng = np.random.default_rng(seed)
    a, b = rng.uniform(0.8, 2.5, j), rng.normal(size=j)
    return np.column_stack([a, -a * b, np.zeros(j), np.ones(j)])


def _answers(bank, theta, seed=1):
    rng = np.random.default_rng(seed)
    p = 1 / (1 + np.exp(-(bank[:, 0][None, :] * theta[:, None] + bank[:, 1][None, :])))
    return (rng.random(p.shape) < p).astype(float)


def test_first_item_is_most_informative_at_the_prior_mean_and_no_item_repeats():
    bank = _bank()
    y = _answers(bank, np.array([-1.0, 0.0, 1.5]))
    run = adaptive_test(y, bank, budget=15)
    first = int(np.argmax(item_information(bank, np.array([0.0]))[:, 0]))
    assert (run.items[:, 0] == first).all()
    for row in run.items:
        assert len(set(row)) == len(row)
    # each next item maximises the information at the estimate before it
    for i in range(3):
        for t in range(1, 15):
            info = item_information(bank, np.array([run.theta[i, t]]))[:, 0]
            info[run.items[i, :t]] = -np.inf
            assert run.items[i, t] == int(np.argmax(info))
    assert (np.diff(run.se, axis=1) <= 1e-12).mean() > 0.8   # SE mostly shrinks


def test_stops_at_se_target_or_budget():
    bank = _bank(60)
    y = _answers(bank, np.random.default_rng(2).normal(size=50))
    run = adaptive_test(y, bank, budget=30, se_target=0.45)
    for i in range(50):
        k = run.n_items[i]
        assert 1 <= k <= 30
        if k < 30:
            assert run.se[i, k] <= 0.45 and (run.se[i, 1:k] > 0.45).all()
            assert (run.items[i, k:] == -1).all()


def test_estimates_track_true_ability():
    bank = _bank(80, seed=3)
    theta = np.linspace(-2, 2, 60)
    run = adaptive_test(_answers(bank, theta, seed=4), bank, budget=30)
    assert np.corrcoef(run.theta[:, -1], theta)[0, 1] > 0.9
    # posterior SD is a fair error scale: about 95% of |error| / SE within 2 (coverage by simulation)
    z = np.abs(run.theta[:, -1] - theta) / run.se[:, -1]
    assert 0.85 <= (z < 1.96).mean() <= 1.0


def test_unusable_items_are_never_given():
    bank = _bank(10)
    bank[3] = np.nan
    run = adaptive_test(_answers(np.nan_to_num(bank), np.zeros(4)), bank, budget=20)
    assert run.items.shape[1] == 9 and not (run.items == 3).any()


def test_replay_adaptive_beats_random_and_is_deterministic():
    rng = np.random.default_rng(5)
    theta = rng.normal(size=400)
    bank = _bank(100, seed=6)
    y = _answers(bank, theta, seed=7)
    out = adaptive_replay(y, [8, 30], n_random=10, n_boot=100, seed=3, label="sim")
    again = adaptive_replay(y, [8, 30], n_random=10, n_boot=100, seed=3, label="sim")
    pd.testing.assert_frame_equal(out, again)
    r = out.set_index(["budget", "method"])
    assert r.loc[(8, "adaptive"), "rmse"] < r.loc[(8, "random"), "rmse"]
    assert r.loc[(30, "adaptive"), "rmse"] < r.loc[(8, "adaptive"), "rmse"]
    assert (r["ci_low"] <= r["rmse"]).all() and (r["rmse"] <= r["ci_high"]).all()
    assert r.loc[(30, "adaptive"), "mean_se"] < r.loc[(8, "adaptive"), "mean_se"]
    assert set(out["method"]) == {"adaptive", "static_irt", "random"}


@pytest.mark.parametrize("kwargs, match", [
    ({"budget": 0}, "budget"),
    ({"budget": 3, "se_target": -1.0}, "se_target"),
])
def test_bad_adaptive_input(kwargs, match):
    bank = _bank(5)
    with pytest.raises(InputError, match=match):
        adaptive_test(np.ones((2, 5)), bank, **kwargs)
    with pytest.raises(InputError, match="0 or 1"):
        adaptive_test(np.full((2, 5), 0.5), bank, budget=2)
    with pytest.raises(InputError, match="shape"):
        adaptive_test(np.ones((2, 5)), bank[:, :3], budget=2)


def test_bad_replay_input():
    y = _answers(_bank(20), np.zeros(30))
    with pytest.raises(InputError, match="budgets"):
        adaptive_replay(y, [50])
    with pytest.raises(InputError, match="test_size"):
        adaptive_replay(y, [5], test_size=1.5)
    y[0, 0] = np.nan
    with pytest.raises(InputError, match="complete"):
        adaptive_replay(y, [5])


def test_cli_adapt(tmp_path):
    rng = np.random.default_rng(8)
    y = _answers(_bank(30, seed=9), rng.normal(size=120), seed=10)
    path = tmp_path / "r.csv"
    pd.DataFrame(y, index=[f"m{i}" for i in range(120)], columns=[f"q{j}" for j in range(30)]).to_csv(path)
    out = tmp_path / "o.csv"
    res = CliRunner().invoke(cli, ["irt", "adapt", str(path), "--budgets", "5,10", "--random", "3", "--n-boot",
                                   "20", "-o", str(out)])
    assert res.exit_code == 0, res.output
    table = pd.read_csv(out)
    assert len(table) == 6 and set(table["method"]) == {"adaptive", "static_irt", "random"}
    bad = CliRunner().invoke(cli, ["irt", "adapt", str(path), "--budgets", "x"])
    assert bad.exit_code == 2 and "--budgets" in bad.output
