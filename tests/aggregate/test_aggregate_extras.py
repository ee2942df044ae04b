"""Possible winners, multiwinner committees, agreement/stability, and the CLI."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from scorebench.aggregate import (aggregate, as_matrix, leave_one_task_out, method_agreement, possible_winners,
                                  register_method, select_committee)
from scorebench.aggregate.positional import borda_points
from scorebench.aggregate.possible_winners import condorcet_weights
from scorebench.aggregate.profile import column_ranks
from scorebench.aggregate.registry import MethodResult, get_method
from scorebench.cli import cli
from scorebench.core.errors import InputError


def random_table(seed, n=6, k=5):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(rng.integers(0, 10, size=(n, k)).astype(float), index=[f"s{i}" for i in range(n)],
                        columns=[f"t{j}" for j in range(k)])


@pytest.mark.parametrize("seed", range(5))
def test_possible_winner_weights_make_a_condorcet_winner(seed):
    t = random_table(seed)
    out = possible_winners(t)
    m = as_matrix(t)
    for _, row in out.iterrows():
        if not row["possible"]:
            continue
        w = np.array([row["weights"][c] for c in m.columns])
        r = aggregate(t, "copeland", n_boot=0, weights=list(w + 1e-12))
        assert r.details["condorcet_winner"] == row["system"]
    # Grid check of "impossible": no weighting on a coarse simplex grid makes them win.
    impossible = out.loc[~out["possible"], "system"].tolist()
    grid = np.array([g for g in itertools.product(range(4), repeat=m.n_columns) if sum(g) > 0], dtype=float)
    x = m.values
    margins = np.sign(x[:, None, :] - x[None, :, :]) @ grid.T  # (a, b, weighting)
    n = m.n_systems
    off = ~np.eye(n, dtype=bool)
    wins_all = ((margins > 0) | ~off[:, :, None]).all(axis=1)  # (a, weighting)
    for i, s in enumerate(m.systems):
        if s in impossible:
            assert not wins_all[i].any(), s


def test_possible_winners_min_weight():
    t = pd.DataFrame({"t1": [3, 2, 1], "t2": [1, 3, 2]}, index=["a", "b", "c"])
    margin, w = condorcet_weights(as_matrix(t), "a")
    assert margin == pytest.approx(1.0) and w[0] == pytest.approx(1.0)
    out = possible_winners(t, min_weight=0.5)  # equal weights only: a vs b is a tie
    assert not out["possible"].any()
    with pytest.raises(InputError, match="min_weight"):
        possible_winners(t, min_weight=0.9)


def brute_committee(t, k, rule, approval_top=None, groups=None, bounds=None):
    m = as_matrix(t)
    B = borda_points(m)
    best, best_set = -np.inf, None
    for S in itertools.combinations(range(m.n_systems), k):
        if groups is not None:
            ok = all(lo <= sum(groups[m.systems[i]] == g for i in S) <= hi for g, (lo, hi) in bounds.items())
            if not ok:
                continue
        if rule == "k_borda":
            v = B[list(S)].sum()
        elif rule == "chamberlin_courant":
            v = B[list(S)].max(axis=0).sum()
        else:
            approve = column_ranks(m, "min") <= (approval_top or k)
            c = approve[list(S)].sum(axis=0)
            v = sum(sum(1 / i for i in range(1, int(x) + 1)) for x in c)
        if v > best + 1e-9:
            best, best_set = v, S
    return best


@pytest.mark.parametrize("rule", ["k_borda", "chamberlin_courant", "pav"])
@pytest.mark.parametrize("seed", range(3))
def test_committees_are_optimal(rule, seed):
    t = random_table(10 + seed, n=7, k=6)
    for k in (1, 2, 3):
        c = select_committee(t, k, rule=rule)
        assert len(c.members) == k
        assert c.objective == pytest.approx(brute_committee(t, k, rule))


def test_committee_group_fairness():
    t = random_table(42, n=8, k=6)
    groups = {s: ("big" if i < 4 else "small") for i, s in enumerate(t.index)}
    bounds = {"small": (2, None)}
    c = select_committee(t, 3, rule="chamberlin_courant", groups=groups, group_bounds=bounds)
    assert c.groups["small"] >= 2
    ref = brute_committee(t, 3, "chamberlin_courant", groups=groups, bounds={"small": (2, 3), "big": (0, 3)})
    assert c.objective == pytest.approx(ref)
    with pytest.raises(InputError, match="no committee"):
        select_committee(t, 3, groups=groups, group_bounds={"small": (4, None)})
    with pytest.raises(InputError, match="both groups"):
        select_committee(t, 3, groups=groups)
    with pytest.raises(InputError, match="k must be"):
        select_committee(t, 0)


def test_method_agreement_and_leave_one_out():
    t = random_table(3, n=6, k=7)
    tau = method_agreement(t, ["mean", "borda", "copeland", "kemeny"])
    assert tau.shape == (4, 4) and np.allclose(np.diag(tau), 1.0) and np.allclose(tau, tau.T)
    everything = method_agreement(t)
    assert "borda" in everything.index and "bradley_terry" in everything.index
    out = leave_one_task_out(t, "borda")
    assert len(out) == 7 and set(out.columns) >= {"removed", "winners", "same_winner", "kendall_tau"}
    assert out["kendall_tau"].between(-1, 1).all()


def test_bootstrap_rank_intervals_for_every_matrix_method():
    t = random_table(7, n=5, k=6) + np.arange(5)[:, None] * 3
    for name in ["mean", "median", "win_rate", "borda", "copeland", "schulze", "kemeny", "bradley_terry",
                 "plackett_luce", "elo", "ranked_pairs", "baldwin", "nanson", "black", "minimax", "dowdall",
                 "threshold", "plurality", "geometric_mean"]:
        params = {"prior": 0.1} if name in ("bradley_terry", "plackett_luce") else {}
        r = aggregate(t + 1.0, name, n_boot=15, seed=0, **params)
        f = r.to_frame()
        assert (f["rank_low"] >= 1).all() and (f["rank_high"] <= 5).all(), name


def test_late_registration_hook():
    @register_method("test_reverse_alpha", family="test", missing="n/a", citation="test", replace=True)
    def _reverse(m, *, bonus: float = 0.0):
        """Toy method for the registry test."""
        return MethodResult(-np.arange(m.n_systems, dtype=float) + bonus)

    t = random_table(0, n=3, k=2)
    assert aggregate(t, "test_reverse_alpha", n_boot=0).winners == ("s0",)
    assert get_method("test_reverse_alpha").params == {"bonus": 0.0}
    with pytest.raises(ValueError, match="already registered"):
        register_method("borda", family="x", missing="x", citation="x")(_reverse)


def test_cli_aggregate(tmp_path):
    t = random_table(5)
    t.index.name = "system"
    path = tmp_path / "wide.csv"
    t.to_csv(path)
    runner = CliRunner()
    res = runner.invoke(cli, ["aggregate", str(path), "-m", "borda", "-m", "copeland", "--bootstrap", "50",
                              "--seed", "1", "-w", "t0=2,t1=0.5", "--lower-is-better", "t4"])
    assert res.exit_code == 0, res.output
    assert "borda" in res.output and "copeland" in res.output and "rank_ub" in res.output
    out = tmp_path / "ranking.csv"
    res = runner.invoke(cli, ["aggregate", str(path), "-m", "kemeny", "--output", str(out)])
    assert res.exit_code == 0, res.output
    from scorebench.io.tables import read_table

    written = read_table(out)
    assert written.columns.tolist()[:4] == ["method", "system", "score", "rank"] and len(written) == 6
    res = runner.invoke(cli, ["aggregate", str(path), "-m", "borda", "-p", "ties=min"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(cli, ["aggregate", str(path), "-m", "borda", "-p", "prior=1"])
    assert res.exit_code == 2 and "prior" in res.output
    res = runner.invoke(cli, ["aggregate", str(path), "-m", "nope"])
    assert res.exit_code == 2 and "unknown aggregation method" in res.output
    res = runner.invoke(cli, ["aggregate", "--list-methods"])
    assert res.exit_code == 0 and "kemeny" in res.output
    battles = tmp_path / "battles.csv"
    pd.DataFrame({"a": ["x", "y", "x"], "b": ["y", "x", "z"], "winner": ["a", "tie", "b"]}).to_csv(battles, index=False)
    res = runner.invoke(cli, ["aggregate", str(battles), "-m", "bradley_terry", "-p", "prior=0.5"])
    assert res.exit_code == 0, res.output


def test_item_level_methods_skip_the_bootstrap_explicitly():
    rng = np.random.default_rng(0)
    rows = [{"system": s, "item": i, "correct": int(rng.random() < p)}
            for s, p in zip("abc", [0.8, 0.5, 0.3]) for i in range(40)]
    r = aggregate(pd.DataFrame(rows), "difficulty", n_boot=1000)  # asked for, and refused by the method
    assert r.n_boot is None and "not available" in r.details["bootstrap"]
    assert r.to_frame().columns.tolist() == ["system", "score", "rank"]
    assert r.order == ("a", "b", "c")
