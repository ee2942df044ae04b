"""Held-out prediction of battles: Glicko-2 against Glickman's example, Elo / BT / tie models on a time split."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from scorebench.aggregate import aggregate
from scorebench.aggregate.input import as_battles
from scorebench.aggregate.prediction import glicko2_ratings, predict_battles
from scorebench.aggregate.tie_models import tie_model_probabilities
from scorebench.cli import cli
from scorebench.core.errors import InputError


def test_glicko2_matches_glickmans_worked_example():
    b = as_battles(pd.DataFrame({"a": ["p"] * 3, "b": ["o1", "o2", "o3"], "winner": ["a", "b", "b"]}))
    start = {"o1": (1400.0, 30.0), "o2": (1550.0, 100.0), "o3": (1700.0, 300.0), "p": (1500.0, 200.0)}
    g = glicko2_ratings(b, periods=1, rating=[start[s][0] for s in b.systems], rd=[start[s][1] for s in b.systems])
    i = b.systems.index("p")
    assert g.rating[i] == pytest.approx(1464.06, abs=0.02)
    assert g.rd[i] == pytest.approx(151.52, abs=0.01)
    assert g.sigma[i] == pytest.approx(0.05999, abs=1e-5)


def _davidson_battles(n_battles: int, nu: float, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    s = np.linspace(-1.0, 1.0, 6)
    a = rng.integers(6, size=n_battles)
    b = (a + rng.integers(1, 6, size=n_battles)) % 6
    p = tie_model_probabilities("davidson", s[a] - s[b], nu)
    u = rng.random(n_battles)
    winner = np.where(u < p[0], "a", np.where(u < p[0] + p[1], "b", "tie"))
    t = pd.DataFrame({"a": [f"m{i}" for i in a], "b": [f"m{j}" for j in b], "winner": winner,
                      "tstamp": rng.permutation(n_battles).astype(float)})
    return t


def test_tie_models_win_the_three_way_log_loss_when_ties_follow_davidson():
    t = _davidson_battles(5000, 1.0, 3)
    out = predict_battles(t, elo_k=(4, 32)).set_index("system")
    assert out.attrs["order"] == "tstamp"
    assert out.loc["bradley_terry_davidson", "log_loss_3way"] < out.loc["bradley_terry", "log_loss_3way"]
    assert out.loc["bradley_terry", "log_loss"] < out.loc["elo (K=32)", "log_loss"]
    assert bool(out.loc["bradley_terry_davidson", "models_ties"]) and not bool(out.loc["glicko2", "models_ties"])
    assert (out["n_test"] == 1000).all() and (out["brier"] < 0.25).all()
    # the split is by time: shuffling the rows leaves the result unchanged
    again = predict_battles(t.sample(frac=1.0, random_state=1), elo_k=(4, 32)).set_index("system")
    np.testing.assert_allclose(again.loc[out.index, "log_loss"], out["log_loss"], rtol=1e-9)


def test_bt_prediction_equals_closed_form_expected_score():
    t = _davidson_battles(2000, 0.5, 4)
    out = predict_battles(t, elo_k=(8,), train_fraction=0.5).set_index("system")
    train = t.sort_values("tstamp").iloc[:1000]
    test = t.sort_values("tstamp").iloc[1000:]
    r = aggregate(train, "bradley_terry", n_boot=0)
    theta = dict(zip(r.systems, r.details["theta"]))
    e = 1 / (1 + np.exp(-(test["a"].map(theta) - test["b"].map(theta)).to_numpy()))
    y = test["winner"].map({"a": 1.0, "b": 0.0, "tie": 0.5}).to_numpy()
    assert out.loc["bradley_terry", "brier"] == pytest.approx(np.mean((y - e) ** 2), rel=1e-9)


def test_predict_from_cli_and_errors(tmp_path):
    t = _davidson_battles(600, 1.0, 5)
    path = tmp_path / "b.csv"
    t.to_csv(path, index=False)
    out = tmp_path / "pred.csv"
    res = CliRunner().invoke(cli, ["aggregate", str(path), "--predict", "-p", "train_fraction=0.7", "-p", "elo_k=16",
                                   "--output", str(out)])
    assert res.exit_code == 0, res.output
    frame = pd.read_csv(out)
    assert set(frame["system"]) == {"elo (K=16)", "bradley_terry", "bradley_terry_davidson",
                                    "bradley_terry_rao_kupper", "glicko2"}
    assert (frame["n_test"] == 180).all()
    res = CliRunner().invoke(cli, ["aggregate", str(path), "--predict", "-p", "window=3"])
    assert res.exit_code != 0 and "unknown option" in res.output
    with pytest.raises(InputError, match="order="):
        predict_battles(t, order="when")
    with pytest.raises(InputError, match="train_fraction"):
        predict_battles(t, train_fraction=1.5)
