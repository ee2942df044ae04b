"""Bad input to the scoring rules raises InputError with a clear message; NaN propagates."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import scorebench
from scorebench.core.errors import InputError
from scorebench.metrics import scoring_rules as S
from scorebench.core.tables import get_kind


@pytest.mark.parametrize(("call", "match"), [
    (lambda: S.crps_normal([0.0, 1.0], 0.0, [1.0, 0.0]), r"sigma: expected values > 0, got 0.0 in data row 2"),
    (lambda: S.crps_normal(0.0, 0.0, -1.0), "sigma"),
    (lambda: S.crps_logistic(0.0, 0.0, 0.0), "s: expected values > 0"),
    (lambda: S.crps_laplace(0.0, 0.0, -2.0), "b: expected"),
    (lambda: S.crps_exponential(1.0, 0.0), "rate"),
    (lambda: S.crps_gamma(1.0, -1.0, 1.0), "shape"),
    (lambda: S.crps_lognormal(1.0, 0.0, 0.0), "sigmalog"),
    (lambda: S.crps_uniform(0.5, 1.0, 1.0), "high - low"),
    (lambda: S.crps_beta(0.5, 0.0, 1.0), "a: expected"),
    (lambda: S.crps_t(0.0, 1.0, 0.0, 1.0), "degrees of freedom > 1"),
    (lambda: S.crps_mixnorm(0.0, [0.0, 1.0], [1.0, -1.0]), "sigma"),
    (lambda: S.crps_mixnorm(0.0, [0.0, 1.0], [1.0, 1.0], [-1.0, 2.0]), "non-negative"),
    (lambda: S.log_score_normal(0.0, 0.0, 0.0), "sigma"),
    (lambda: S.dawid_sebastiani_score(0.0, 0.0, 0.0), "sigma"),
])
def test_invalid_distribution_parameters(call, match):
    with pytest.raises(InputError, match=match):
        call()


@pytest.mark.parametrize(("call", "match"), [
    (lambda: S.brier_score([1, 0], [1.2, 0.5]), r"p: value 1.2 outside \[0, 1\] in data row 1"),
    (lambda: S.log_score([1, 0], [0.5, -0.1]), "p: value -0.1"),
    (lambda: S.ipw_score([1], [2.0]), "p: value 2.0"),
    (lambda: S.brier_score([2, 0], [0.2, 0.5]), "expected binary outcomes 0 or 1"),
    (lambda: S.brier_score_multiclass([0], [[0.5, 0.6]]), "sum to 1.1"),
    (lambda: S.log_score_multiclass([0], [[1.5, -0.5]]), "outside"),
    (lambda: S.spherical_score([3], [[0.5, 0.5]]), "class index 3 .* not among the 2 classes"),
    (lambda: S.rps([0.5], [[0.5, 0.5]]), "not a whole number"),
    (lambda: S.capm_score([0], [[0.5, 0.5]], weights=[1.0, 0.0]), "positive class weights"),
    (lambda: S.capm_score([0], [[0.5, 0.5]], similarity=[[0, 1], [0, 0]]), "symmetric"),
    (lambda: S.bregman_score([0], [[0.5, 0.5]], generator="cubic"), "generator: expected one of"),
])
def test_invalid_probabilities_and_labels(call, match):
    with pytest.raises(InputError, match=match):
        call()


@pytest.mark.parametrize(("call", "match"), [
    (lambda: S.quantile_score([0.0], [[0.0, 1.0]], [0.9, 0.1]), "strictly increasing"),
    (lambda: S.quantile_score([0.0], [[0.0, 1.0]], [0.1, 1.0]), "strictly between 0 and 1"),
    (lambda: S.quantile_score([0.0], [[0.0, 1.0, 2.0]], [0.1, 0.9]), "one per level"),
    (lambda: S.weighted_interval_score([0.0], [[0.0, 1.0]], [0.1, 0.8]), "symmetric levels"),
    (lambda: S.interval_score([0.0], [1.0], [0.0]), "lower > upper"),
    (lambda: S.interval_score([0.0], [0.0], [1.0], alpha=1.5), "alpha"),
])
def test_invalid_quantiles_and_intervals(call, match):
    with pytest.raises(InputError, match=match):
        call()


@pytest.mark.parametrize(("call", "match"), [
    (lambda: S.brier_score([1, 0, 1], [0.2, 0.5]), "mismatched lengths: y has shape"),
    (lambda: S.crps_normal([1.0, 2.0, 3.0], [0.0, 0.0], 1.0), "mismatched lengths"),
    (lambda: S.crps_ensemble([1.0, 2.0, 3.0], np.zeros((4, 5))), r"obs has shape \(3,\) but ens has shape \(4, 5\)"),
    (lambda: S.energy_score(np.zeros((3, 2)), np.zeros((3, 5, 4))), "same variables"),
    (lambda: S.energy_score(np.zeros((3, 2)), np.zeros((4, 5, 2))), "mismatched lengths"),
    (lambda: S.quantile_score([0.0, 1.0, 2.0], np.zeros((2, 2)), [0.1, 0.9]), "mismatched lengths"),
    (lambda: S.brier_score_multiclass([0, 1, 1], np.full((2, 2), 0.5)), "mismatched lengths"),
])
def test_mismatched_lengths(call, match):
    with pytest.raises(InputError, match=match):
        call()


@pytest.mark.parametrize(("call", "match"), [
    (lambda: S.crps_ensemble(0.0, [1.0, np.inf]), "ens: infinite values"),
    (lambda: S.crps_ensemble(np.inf, [1.0, 2.0]), "obs: infinite values"),
    (lambda: S.crps_normal(np.inf, 0.0, 1.0), "obs: infinite"),
    (lambda: S.energy_score([0.0, np.inf], [[1.0, 1.0]]), "obs: infinite"),
    (lambda: S.crps_ensemble(0.0, ["a", "b"]), "expected numbers"),
    (lambda: S.crps_ensemble(0.0, [1 + 1j, 2.0]), "complex"),
    (lambda: S.crps_normal(np.array([2**60]), 0.0, 1.0), "2\\*\\*53"),
    (lambda: S.crps_ensemble(0.0, [1.0], estimator="fair"), "at least 2 members"),
    (lambda: S.crps_ensemble(0.0, [1.0, 2.0], estimator="pwm"), "estimator: expected one of"),
    (lambda: S.twcrps_ensemble(0.0, [1.0, 2.0], a=1.0, b=0.0), "a < b"),
    (lambda: S.log_score_ensemble(0.0, [1.0, 1.0, 1.0]), "all equal"),
    (lambda: S.dawid_sebastiani_ensemble(0.0, [1.0, 1.0]), "positive spread"),
    (lambda: S.variogram_score([[0.0, 1.0]], [[[0.0, 1.0]]], p=0), "p: expected a number > 0"),
])
def test_invalid_ensembles_and_options(call, match):
    with pytest.raises(InputError, match=match):
        call()


def test_integer_inputs_are_converted_exactly_not_truncated():
    assert S.crps_normal(np.array([1, 2]), np.array([0, 0]), np.array([3, 3])).tolist() == \
        S.crps_normal([1.0, 2.0], [0.0, 0.0], [3.0, 3.0]).tolist()
    ints = np.array([[1, 4, 2]])
    assert S.crps_ensemble([2], ints)[0] == pytest.approx(S.crps_ensemble([2.0], ints.astype(float))[0])
    assert S.crps_ensemble([3], [[1, 2]])[0] == pytest.approx(1.5 - 0.25)  # not an integer result
    assert S.brier_score(np.array([1]), np.array([0.75], dtype=np.float32))[0] == 0.0625
    assert S.quantile_score(np.array([1]), np.array([[0]]), [0.25])[0] == 0.25


def test_nan_propagates_to_its_row_only():
    ens = np.array([[0.0, 1.0], [np.nan, 1.0], [0.0, 2.0]])
    out = S.crps_ensemble([0.5, 0.5, np.nan], ens)
    assert np.isfinite(out[0]) and np.isnan(out[1]) and np.isnan(out[2])
    assert np.isnan(S.crps_normal([np.nan, 0.0], 0.0, 1.0)[0])
    assert np.isnan(S.brier_score([np.nan, 1.0], [0.5, 0.5])[0])


def test_registered_records_and_names():
    for name, kind, inputs in [("crps_ensemble", "ensemble", ("y", "ens")),
                               ("crps_normal", "parametric", ("y", "mu", "sigma")),
                               ("crps_logistic", "parametric", ("y", "mu", "s")),
                               ("energy_score", "multivariate", ("y", "ens")),
                               ("variogram_score", "multivariate", ("y", "ens")),
                               ("brier_score", "binary", ("y", "p")), ("log_score", "binary", ("y", "p")),
                               ("interval_score", "interval", ("y", "lower", "upper")),
                               ("quantile_score", "quantile", ("y", "q", "levels")),
                               ("weighted_interval_score", "quantile", ("y", "q", "levels")),
                               ("brier_score_multiclass", "multiclass", ("y", "P")),
                               ("rps", "multiclass", ("y", "P"))]:
        m = scorebench.metric(name)
        assert (m.family, m.kind, m.inputs, m.higher_is_better, m.per_row) == \
            ("scoring_rules", kind, inputs, False, True), name
    assert scorebench.metric("crps_ensemble").params["estimator"] == "standard"
    assert scorebench.metric("crps_ensemble", estimator="fair")(0.0, [-1.0, 1.0]) == 0.0


def _compute(name, kind, df, **params):
    inputs = get_kind(kind).extract(df)
    return scorebench.metric(name, **params).compute(inputs.merged())


def test_metrics_apply_to_tables_of_each_kind():
    gen = np.random.default_rng(0)
    n = 40
    y = gen.normal(size=n)
    ens = gen.normal(size=(n, 6))
    df = pd.DataFrame({"system": "a", "y": y, **{f"m{j}": ens[:, j] for j in range(6)}})
    np.testing.assert_allclose(_compute("crps_ensemble", "ensemble", df), S.crps_ensemble(y, ens))
    np.testing.assert_allclose(_compute("crps_ensemble", "ensemble", df, estimator="fair"),
                               S.crps_ensemble(y, ens, estimator="fair"))

    par = pd.DataFrame({"y": y, "mu": 0.1, "sigma": 2.0, "s": 1.5})
    np.testing.assert_allclose(_compute("crps_normal", "parametric", par), S.crps_normal(y, 0.1, 2.0))
    np.testing.assert_allclose(_compute("crps_logistic", "parametric", par), S.crps_logistic(y, 0.1, 1.5))

    mix = pd.DataFrame({"y": y, "mu0": -1.0, "sigma0": 1.0, "w0": 0.3, "mu1": 1.0, "sigma1": 0.5, "w1": 0.7})
    np.testing.assert_allclose(_compute("crps_mixnorm", "parametric", mix),
                               S.crps_mixnorm(y, [-1.0, 1.0], [1.0, 0.5], [0.3, 0.7]))

    q = np.sort(gen.normal(size=(n, 3)), axis=1)
    qdf = pd.DataFrame({"y": y, "q0.9": q[:, 2], "q0.1": q[:, 0], "q0.5": q[:, 1]})
    np.testing.assert_allclose(_compute("weighted_interval_score", "quantile", qdf),
                               S.weighted_interval_score(y, q, [0.1, 0.5, 0.9]))
    idf = pd.DataFrame({"y": y, "lower": q[:, 0], "upper": q[:, 2]})
    np.testing.assert_allclose(_compute("interval_score", "interval", idf, alpha=0.2),
                               S.interval_score(y, q[:, 0], q[:, 2], alpha=0.2))
    per_row = idf.assign(alpha=np.where(np.arange(n) % 2, 0.1, 0.5))
    np.testing.assert_allclose(_compute("interval_score", "interval", per_row),
                               S.interval_score(y, q[:, 0], q[:, 2], alpha=per_row["alpha"].to_numpy()))
    bdf2 = pd.DataFrame({"y": [0.2, 0.9], "a": [2.0, 0.5], "b": [1.0, 1.5]})
    np.testing.assert_allclose(_compute("crps_beta", "parametric", bdf2, lower=-1.0, upper=2.0),
                               S.crps_beta([0.2, 0.9], [2.0, 0.5], [1.0, 1.5], lower=-1.0, upper=2.0))

    P = gen.dirichlet(np.ones(3), n)
    labels = gen.integers(0, 3, n)
    mdf = pd.DataFrame({"y": np.array(["cat", "dog", "emu"])[labels],
                        "p_cat": P[:, 0], "p_dog": P[:, 1], "p_emu": P[:, 2]})
    np.testing.assert_allclose(_compute("capm_score", "multiclass", mdf), S.capm_score(labels, P))

    yv, ev = gen.normal(size=(n, 2)), gen.normal(size=(n, 4, 2))
    vdf = pd.DataFrame({"y.0": yv[:, 0], "y.1": yv[:, 1],
                        **{f"m{j}.{d}": ev[:, j, d] for j in range(4) for d in range(2)}})
    np.testing.assert_allclose(_compute("energy_score", "multivariate", vdf), S.energy_score(yv, ev))

    bdf = pd.DataFrame({"y": [1, 0, 1], "p": [0.9, 0.2, 0.4]})
    np.testing.assert_allclose(_compute("ipw_score", "binary", bdf), S.ipw_score([1, 0, 1], [0.9, 0.2, 0.4]))
