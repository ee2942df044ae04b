"""Davidson and Rao-Kupper tie models: scores, closed forms, recovery of a known tie parameter."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import scorebench
from scorebench.aggregate.input import Battles, as_battles
from scorebench.aggregate.tie_models import TIE_MODELS, fit_tie_model, tie_model_probabilities
from scorebench.core.errors import InputError


@pytest.mark.parametrize("name", sorted(TIE_MODELS))
def test_scores_are_the_derivatives_of_the_log_probabilities(name):
    tm = TIE_MODELS[name]
    d = np.linspace(-3, 3, 13)
    for tau in (-1.0, 0.3):
        probs = np.exp(tm.logp(d, tau))
        np.testing.assert_allclose(probs.sum(axis=0), 1.0, rtol=1e-12)
        sc = tm.scores(d, tau)
        h = 1e-6
        num_d = (tm.logp(d + h, tau) - tm.logp(d - h, tau)) / (2 * h)
        num_t = (tm.logp(d, tau + h) - tm.logp(d, tau - h)) / (2 * h)
        np.testing.assert_allclose(sc[:, 0], num_d, atol=1e-7)
        np.testing.assert_allclose(sc[:, 1], num_t, atol=1e-7)


def test_rao_kupper_probabilities_closed_form():
    th = 1.7
    pa, pb, pt = tie_model_probabilities("rao_kupper", np.array([np.log(2.0)]), th)[:, 0]
    # pi_a = 2, pi_b = 1
    assert pa == pytest.approx(2 / (2 + th))
    assert pb == pytest.approx(1 / (1 + 2 * th))
    assert pt == pytest.approx((th ** 2 - 1) * 2 / ((2 + th) * (1 + 2 * th)))


def _simulate(model: str, tie_parameter: float, n_battles: int, rng: np.random.Generator):
    strengths = np.array([-0.8, -0.2, 0.1, 0.5, 0.9])
    n = len(strengths)
    a = rng.integers(n, size=n_battles)
    b = (a + rng.integers(1, n, size=n_battles)) % n
    probs = tie_model_probabilities(model, strengths[a] - strengths[b], tie_parameter)
    u = rng.random(n_battles)
    y = np.where(u < probs[0], 1.0, np.where(u < probs[0] + probs[1], 0.0, 0.5))
    return Battles(tuple(f"m{i}" for i in range(n)), a, b, y, np.ones(n_battles)), strengths


@pytest.mark.parametrize("model,truth", [("davidson", 0.8), ("rao_kupper", 1.6)])
def test_known_tie_parameter_is_recovered_with_calibrated_intervals(model, truth):
    rng = np.random.default_rng(39)
    reps, hits, estimates = 40, 0, []
    for _ in range(reps):
        battles, strengths = _simulate(model, truth, 1500, rng)
        fit = fit_tie_model(battles, model)
        estimates.append(fit.tie_parameter)
        hits += fit.tie_low <= truth <= fit.tie_high
        np.testing.assert_allclose(fit.theta, strengths - strengths.mean(), atol=0.3)
    assert abs(np.mean(estimates) - truth) < 0.03 * truth
    assert hits >= 33  # 95% intervals: P(<= 32 of 40 hits) < 0.01


def test_davidson_method_through_aggregate_and_cli(tmp_path):
    rng = np.random.default_rng(1)
    battles, _ = _simulate("davidson", 1.0, 3000, rng)
    df = pd.DataFrame({"a": np.array(battles.systems)[battles.a], "b": np.array(battles.systems)[battles.b],
                       "winner": np.where(battles.outcome == 1, "a", np.where(battles.outcome == 0, "b", "tie"))})
    r = scorebench.aggregate(df, "bradley_terry_davidson", n_boot=100)
    assert r.resample == "sandwich" and r.details["tie_model"] == "davidson"
    lo, hi = r.details["tie_parameter_ci"]
    assert lo < r.details["nu"] < hi
    assert list(r.order) == ["m4", "m3", "m2", "m1", "m0"]
    # ties modelled vs halved: same order, different spread
    half = scorebench.aggregate(df, "bradley_terry", n_boot=0)
    assert np.corrcoef(half.scores, r.scores)[0, 1] > 0.99
    from click.testing import CliRunner
    from scorebench.cli import cli

    path = tmp_path / "b.csv"
    df.to_csv(path, index=False)
    out = tmp_path / "out.csv"
    res = CliRunner().invoke(cli, ["aggregate", str(path), "-m", "bradley_terry_rao_kupper", "--bootstrap", "50",
                                   "--intervals", "sandwich", "--output", str(out)])
    assert res.exit_code == 0, res.output
    frame = pd.read_csv(out)
    assert frame["system"].iloc[0] == "m4" and (frame["ci_low"] < frame["score"]).all()
    res = CliRunner().invoke(cli, ["aggregate", str(path), "-m", "elo", "--bootstrap", "5", "--intervals", "sandwich"])
    assert res.exit_code != 0 and "no covariance" in res.output


def test_tie_models_refuse_tables_without_ties():
    b = as_battles(pd.DataFrame({"a": ["x", "y", "x"], "b": ["y", "x", "y"], "winner": ["a", "a", "a"]}))
    with pytest.raises(InputError, match="needs both ties and decisive"):
        fit_tie_model(b, "davidson")
    with pytest.raises(InputError, match="tie model"):
        fit_tie_model(b, "glenn_david")


def test_diverging_estimates_raise_one_clear_error():
    from scorebench.core.errors import ConvergenceError

    t = pd.DataFrame({"a": ["x", "x", "y", "z", "x"], "b": ["y", "z", "z", "y", "y"],
                      "winner": ["a", "a", "tie", "b", "tie"]})
    for method in ("bradley_terry_davidson", "bradley_terry_rao_kupper"):
        with pytest.raises(ConvergenceError, match="does not exist"):
            scorebench.aggregate(t, method, n_boot=0)
