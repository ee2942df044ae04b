"""Scoring-rule power analysis: analytic power, determinism, adapters, real rules, errors, CLI."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy.stats import norm

import scorebench
from scorebench.core.errors import InputError, UnknownMetricError
from scorebench.analysis.power import MISSPECIFICATIONS, MultivariateNormal, PowerResult, misspecify, power
from scorebench.core.registry import Metric


def _sq_error_normal(obs, mu, sigma):
    return (np.asarray(obs) - mu) ** 2


def _sq_error_ensemble_mean(obs, ens):
    return (np.asarray(obs) - np.asarray(ens).mean(axis=-1)) ** 2


def _sq_error_mv_ensemble_mean(obs, ens):
    return ((np.asarray(obs) - np.asarray(ens).mean(axis=-2)) ** 2).sum(axis=-1)


SQ_NORMAL = Metric(name="toy_sq_normal", family="test", kind="parametric", fn=_sq_error_normal,
                   inputs=("y", "mu", "sigma"), higher_is_better=False)
SQ_ENSEMBLE = Metric(name="toy_sq_ensemble", family="test", kind="ensemble", fn=_sq_error_ensemble_mean,
                     inputs=("y", "ens"), higher_is_better=False)
SQ_MV = Metric(name="toy_sq_mv", family="test", kind="multivariate", fn=_sq_error_mv_ensemble_mean,
               inputs=("y", "ens"), higher_is_better=False)


def _registered(*names):
    try:
        for name in names:
            scorebench.metric(name)
    except UnknownMetricError:
        pytest.skip(f"scoring rules {names} are not registered yet")


# --- distributions and misspecifications -------------------------------------------------


def test_multivariate_normal_and_misspecify():
    truth = MultivariateNormal.equicorrelated(3, rho=0.6, sigma=2.0, mean=1.0)
    np.testing.assert_allclose(truth.cov, 4 * np.array([[1, .6, .6], [.6, 1, .6], [.6, .6, 1]]))
    shifted = misspecify(truth, "mean", 0.5)
    np.testing.assert_allclose(shifted.mean, [2.0, 2.0, 2.0])           # 0.5 standard deviations
    np.testing.assert_allclose(shifted.cov, truth.cov)
    np.testing.assert_allclose(misspecify(truth, "scale", 0.5).std, [3.0, 3.0, 3.0])
    np.testing.assert_allclose(misspecify(truth, "scale", 0.5).corr, truth.corr)
    ind = misspecify(truth, "correlation", 1.0)
    np.testing.assert_allclose(ind.cov, 4 * np.eye(3))
    np.testing.assert_allclose(misspecify(truth, "correlation", 0.5).corr[0, 1], 0.3)
    for kind in MISSPECIFICATIONS:
        same = misspecify(truth, kind, 0.0)
        np.testing.assert_allclose(same.mean, truth.mean)
        np.testing.assert_allclose(same.cov, truth.cov)


def test_sampling_moments():
    truth = MultivariateNormal(np.array([1.0, -2.0]), np.array([[2.0, 0.9], [0.9, 1.0]]))
    x = truth.sample(np.random.default_rng(0), (200_000,))
    np.testing.assert_allclose(x.mean(0), truth.mean, atol=0.02)
    np.testing.assert_allclose(np.cov(x.T), truth.cov, atol=0.03)
    singular = MultivariateNormal.equicorrelated(2, rho=1.0)           # PSD, not PD: still samples
    y = singular.sample(np.random.default_rng(1), (5,))
    np.testing.assert_allclose(y[:, 0], y[:, 1], atol=1e-12)


# --- the analysis ----------------------------------------------------------------------------


@pytest.mark.parametrize("d, rho, delta", [(1, 0.0, 0.3), (3, 0.5, 0.2)])
def test_power_matches_analytic_value(d, rho, delta):
    # squared error to the mean: S(Q) - S(P) = sum_j (delta^2 - 2 delta y_j), so the true forecast wins
    # when sum_j ybar_j < d delta / 2, with sum_j y_j ~ N(0, d (1 + (d - 1) rho)).
    truth = MultivariateNormal.equicorrelated(d, rho=rho)
    wrong = MultivariateNormal(truth.mean + delta, truth.cov)
    sizes = [2, 10, 50]
    result = power(SQ_NORMAL, truth, wrong, n=sizes, replications=4000, seed=3)
    assert isinstance(result, PowerResult)
    v = d * (1 + (d - 1) * rho)
    for row in result.table.itertuples():
        expected = norm.cdf(d * delta / 2 / math.sqrt(v / row.n))
        assert abs(row.power - expected) < 4 * math.sqrt(expected * (1 - expected) / 4000)
        assert math.isclose(row.mc_se, math.sqrt(row.power * (1 - row.power) / 4000))
        assert abs(row.mean_difference - d * delta ** 2) < 4 * 2 * delta * math.sqrt(v / row.n / 4000)


def test_identical_forecasts_tie_exactly_for_parametric_rules():
    truth = MultivariateNormal.equicorrelated(2, rho=0.3)
    table = power(SQ_NORMAL, truth, truth, n=[5, 20], replications=50).table
    assert (table["power"] == 0.5).all() and (table["test_power"] == 0.0).all()
    assert (table["mean_difference"] == 0.0).all()


def test_deterministic_and_independent_of_memory_and_rule_set():
    truth = MultivariateNormal.equicorrelated(3, rho=0.5)
    wrong = misspecify(truth, "scale", 0.3)
    kwargs = dict(n=[4, 16], ensemble_size=8, replications=30, seed=11)
    big = power([SQ_MV, SQ_NORMAL], truth, wrong, **kwargs).table
    small = power([SQ_MV, SQ_NORMAL], truth, wrong, max_memory=1, **kwargs).table
    pd.testing.assert_frame_equal(big, small)
    alone = power(SQ_MV, truth, wrong, **kwargs).table
    pd.testing.assert_frame_equal(alone, big[big.rule == "toy_sq_mv"].reset_index(drop=True))
    other = power(SQ_MV, truth, wrong, **{**kwargs, "seed": 12}).table
    assert not other.equals(alone)
    gen = power(SQ_MV, truth, wrong, **{**kwargs, "seed": np.random.default_rng(5)}).table
    assert gen.attrs["seed"] == "generator" and len(gen) == 2
    assert big.attrs["seed"] == 11 and big.attrs["replications"] == 30 and big.attrs["ensemble_size"] == 8


def test_marginal_adapter_sums_over_dimensions():
    # the sum over dimensions of the univariate squared error equals the multivariate one on the same draws
    truth = MultivariateNormal.equicorrelated(4, rho=0.2)
    wrong = misspecify(truth, "mean", 0.2)
    kwargs = dict(n=[3, 9], ensemble_size=5, replications=40, seed=2)
    mv = power(SQ_MV, truth, wrong, **kwargs).table.drop(columns="rule")
    marginal = power(SQ_ENSEMBLE, truth, wrong, **kwargs).table.drop(columns="rule")
    pd.testing.assert_frame_equal(mv, marginal, rtol=1e-12)


def test_orientation_of_positively_oriented_rules():
    negated = Metric(name="toy_neg", family="test", kind="parametric", inputs=("y", "mu", "sigma"),
                     fn=lambda y, mu, sigma: -_sq_error_normal(y, mu, sigma), higher_is_better=True)
    truth = MultivariateNormal.equicorrelated(2)
    wrong = misspecify(truth, "mean", 0.4)
    a = power(SQ_NORMAL, truth, wrong, n=[5], replications=200).table
    b = power(negated, truth, wrong, n=[5], replications=200).table
    pd.testing.assert_frame_equal(a.drop(columns="rule"), b.drop(columns="rule"))
    assert a["power"].iloc[0] > 0.6


# --- registered scoring rules (once the scoring_rules family is registered) -------------------


def test_marginal_rules_cannot_see_correlation_errors():
    _registered("crps_normal", "log_score_normal", "crps_ensemble")
    truth = MultivariateNormal.equicorrelated(3, rho=0.7)
    wrong = misspecify(truth, "correlation", 1.0)
    table = power(["crps_normal", "log_score_normal", "crps_ensemble"], truth, wrong, n=[50],
                  ensemble_size=20, replications=100, seed=0).table.set_index("rule")
    assert table.loc["crps_normal", "power"] == 0.5 and table.loc["log_score_normal", "power"] == 0.5
    # identical marginals: the sampled ensembles win or lose by chance alone
    assert abs(table.loc["crps_ensemble", "power"] - 0.5) < 4 * 0.05


def test_energy_and_variogram_detect_a_correlation_error_with_more_data():
    _registered("energy_score", "variogram_score")
    truth = MultivariateNormal.equicorrelated(3, rho=0.8)
    wrong = misspecify(truth, "correlation", 1.0)
    table = power(["energy_score", "variogram_score"], truth, wrong, n=[4, 100], ensemble_size=20,
                  replications=40, seed=0).table.set_index(["rule", "n"])
    for rule in ("energy_score", "variogram_score"):
        assert table.loc[(rule, 100), "power"] >= table.loc[(rule, 4), "power"]
        assert table.loc[(rule, 100), "power"] > 0.8
    # records with bound parameters work as rules (their name is the row label)
    order1 = scorebench.metric("variogram_score", p=1.0)
    table = power(order1, truth, wrong, n=[50], ensemble_size=10, replications=20, seed=0).table
    assert table["rule"].tolist() == ["variogram_score(p=1)"] and table["power"].iloc[0] > 0.8


def test_mean_shift_log_score_matches_kl_divergence():
    _registered("log_score_normal")
    truth = MultivariateNormal.equicorrelated(2, rho=0.0)
    wrong = misspecify(truth, "mean", 1.0)
    table = power("log_score_normal", truth, wrong, n=[400], replications=100, seed=4).table
    # E[log q - log p] under p = KL = delta^2 / 2 per dimension
    assert abs(table["mean_difference"].iloc[0] - 1.0) < 0.03
    assert table["power"].iloc[0] == 1.0 and table["test_power"].iloc[0] == 1.0


# --- errors --------------------------------------------------------------------------------


def _truth():
    return MultivariateNormal.equicorrelated(2)


@pytest.mark.parametrize("kwargs, match", [
    ({"n": [1, 5]}, "n"), ({"n": []}, "n"), ({"n": [2.5]}, "n"),
    ({"ensemble_size": 0}, "ensemble_size"), ({"replications": 0}, "replications"),
    ({"alpha": 1.0}, "alpha"), ({"seed": -1}, "seed"), ({"seed": "x"}, "seed"), ({"max_memory": 0}, "max_memory"),
])
def test_option_errors(kwargs, match):
    with pytest.raises(InputError, match=match):
        power(SQ_NORMAL, _truth(), _truth(), **kwargs)


def test_rule_and_distribution_errors():
    with pytest.raises(UnknownMetricError, match="did you mean"):
        power("ecee", _truth(), _truth())
    with pytest.raises(InputError, match="binary"):
        power("ece", _truth(), _truth())
    with pytest.raises(InputError, match="set-level"):
        power(Metric(name="s", family="t", kind="multivariate", fn=len, inputs=("y", "ens"),
                     higher_is_better=False, per_row=False), _truth(), _truth())
    with pytest.raises(InputError, match="direction"):
        power(Metric(name="s", family="t", kind="multivariate", fn=len, inputs=("y", "ens"),
                     higher_is_better=None), _truth(), _truth())
    with pytest.raises(InputError, match="normal forecast"):
        power(Metric(name="s", family="t", kind="parametric", fn=len, inputs=("y", "mu", "s"),
                     higher_is_better=False), _truth(), _truth())
    with pytest.raises(InputError, match="duplicate"):
        power([SQ_NORMAL, SQ_NORMAL], _truth(), _truth())
    with pytest.raises(InputError, match="dimensions"):
        power(SQ_NORMAL, _truth(), MultivariateNormal.equicorrelated(3))
    with pytest.raises(InputError, match="MultivariateNormal"):
        power(SQ_NORMAL, _truth(), "normal")
    nan_rule = Metric(name="nan", family="t", kind="parametric", inputs=("y", "mu", "sigma"),
                      fn=lambda y, mu, sigma: np.full(np.shape(y), np.nan), higher_is_better=False)
    with pytest.raises(InputError, match="non-finite"):
        power(nan_rule, _truth(), _truth())


@pytest.mark.parametrize("make, match", [
    (lambda: MultivariateNormal([0, 0], [[1, 2], [2, 1]]), "semi-definite"),
    (lambda: MultivariateNormal([0, 0], [[1, 0.5], [0.2, 1]]), "symmetric"),
    (lambda: MultivariateNormal([0, 0], np.eye(3)), "shape"),
    (lambda: MultivariateNormal([0, np.nan], np.eye(2)), "NaN"),
    (lambda: MultivariateNormal([], np.eye(0)), "dimension"),
    (lambda: MultivariateNormal.equicorrelated(3, rho=-0.6), "rho"),
    (lambda: MultivariateNormal.equicorrelated(0), "dim"),
    (lambda: MultivariateNormal.equicorrelated(2, sigma=0.0), "sigma"),
    (lambda: misspecify(_truth(), "tails", 0.1), "misspecification"),
    (lambda: misspecify(_truth(), "scale", -1.0), "size"),
    (lambda: misspecify(_truth(), "correlation", 1.5), "size"),
    (lambda: misspecify(_truth(), "mean", float("nan")), "size"),
])
def test_distribution_errors(make, match):
    with pytest.raises(InputError, match=match):
        make()


# --- CLI -------------------------------------------------------------------------------------


def test_cli_power_errors_are_one_line():
    from scorebench.cli import cli

    runner = CliRunner()
    result = runner.invoke(cli, ["power", "-r", "no_such_rule"])
    assert result.exit_code == 2 and "unknown metric" in result.output and "Traceback" not in result.output
    result = runner.invoke(cli, ["power", "-r", "ece"])
    assert result.exit_code == 2 and "binary" in result.output
    result = runner.invoke(cli, ["power", "-r", "ece", "--n", "10,x"])
    assert result.exit_code == 2 and "--n" in result.output
    result = runner.invoke(cli, ["power", "-r", "ece", "--misspecification", "tails"])
    assert result.exit_code != 0 and "tails" in result.output


def test_cli_power_table_and_file(tmp_path):
    _registered("crps_normal", "log_score_normal")
    from scorebench.cli import cli

    runner = CliRunner()
    args = ["power", "-r", "crps_normal", "-r", "log_score_normal", "--misspecification", "scale", "--size", "0.5",
            "--dims", "2", "--rho", "0.3", "--n", "5,50", "-R", "50", "--seed", "3"]
    shown = runner.invoke(cli, args)
    assert shown.exit_code == 0, shown.output
    assert "crps_normal" in shown.output and "log_score_normal" in shown.output and "power" in shown.output
    out = tmp_path / "power.csv"
    written = runner.invoke(cli, [*args, "--output", str(out)])
    assert written.exit_code == 0, written.output
    table = pd.read_csv(out, comment="#")
    truth = MultivariateNormal.equicorrelated(2, rho=0.3)
    expected = power(["crps_normal", "log_score_normal"], truth, misspecify(truth, "scale", 0.5), n=[5, 50],
                     replications=50, seed=3).table
    np.testing.assert_allclose(table["power"], expected["power"])
    assert table["n"].tolist() == [5, 50, 5, 50]
