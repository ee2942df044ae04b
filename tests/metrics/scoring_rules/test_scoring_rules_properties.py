"""Property tests: strict propriety, non-negativity, zero for perfect deterministic forecasts."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from scorebench.metrics import scoring_rules as S

SETTINGS = settings(max_examples=60, deadline=None)

prob = st.floats(0.01, 0.99)
finite = st.floats(-1e3, 1e3, allow_nan=False)
scale = st.floats(0.05, 20.0)


def simplex(k):
    return arrays(np.float64, k, elements=st.floats(0.02, 1.0)).map(lambda v: v / v.sum())


def expected_multiclass(score, Q, P, **kw):
    """E_{Y ~ Q} S(P, Y), exactly, by summing over the classes."""
    k = len(Q)
    values = score(np.arange(k), np.broadcast_to(P, (k, k)), **kw)
    return float(Q @ values)


def _capm_kwargs():
    return st.fixed_dictionaries({
        "weights": arrays(np.float64, 4, elements=st.floats(0.1, 5.0)),
        "similarity": arrays(np.float64, (4, 4), elements=st.floats(0.0, 3.0)).map(lambda W: (W + W.T) / 2),
        "strength": st.floats(0.0, 3.0),
    })


MULTICLASS = [
    (S.brier_score_multiclass, st.just({})),
    (S.log_score_multiclass, st.just({})),
    (S.spherical_score, st.just({})),
    (S.rps, st.just({})),
    (S.bregman_score, st.sampled_from([{"generator": g} for g in S.GENERATORS])),
    (S.capm_score, _capm_kwargs()),
]


@pytest.mark.parametrize(("score", "kwargs"), MULTICLASS, ids=lambda v: getattr(v, "__name__", ""))
@SETTINGS
@given(data=st.data())
def test_multiclass_rules_are_strictly_proper(score, kwargs, data):
    Q = data.draw(simplex(4), label="truth")
    P = data.draw(simplex(4), label="forecast")
    kw = data.draw(kwargs, label="kwargs")
    at_truth = expected_multiclass(score, Q, Q, **kw)
    elsewhere = expected_multiclass(score, Q, P, **kw)
    assert elsewhere >= at_truth - 1e-12
    if np.abs(P - Q).max() > 1e-3:
        assert elsewhere > at_truth


@pytest.mark.parametrize("score", [S.brier_score, S.log_score, S.ipw_score])
@SETTINGS
@given(p=prob, q=prob)
def test_binary_rules_are_strictly_proper(score, p, q):
    def expected(f):
        return p * float(score(1, f)) + (1 - p) * float(score(0, f))
    assert expected(q) >= expected(p) - 1e-9 * max(1.0, abs(expected(p)))
    if abs(p - q) > 1e-3:
        assert expected(q) > expected(p)


# Gauss-Hermite nodes: E_{Y ~ N(m, s^2)} g(Y) to ~1e-12 for the smooth scores below
_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(120)
_WEIGHTS = _WEIGHTS / _WEIGHTS.sum()


@pytest.mark.parametrize("score", [S.crps_normal, S.log_score_normal, S.dawid_sebastiani_score])
@SETTINGS
@given(m0=st.floats(-5, 5), s0=st.floats(0.2, 5), m=st.floats(-5, 5), s=st.floats(0.2, 5))
def test_normal_forecasts_expected_score_is_minimised_at_the_truth(score, m0, s0, m, s):
    y = m0 + s0 * _NODES
    at_truth = float(_WEIGHTS @ score(y, m0, s0))
    elsewhere = float(_WEIGHTS @ score(y, m, s))
    assert elsewhere >= at_truth - 1e-9
    if abs(m - m0) > 1e-2 or abs(s - s0) > 1e-2:
        assert elsewhere > at_truth


@SETTINGS
@given(shift=st.floats(-2, 2), spread=st.floats(0.3, 3))
def test_ensemble_crps_and_energy_prefer_the_true_sample_on_average(shift, spread):
    """With many rows, the fair CRPS / energy score of a sample from the truth beats a wrong one."""
    if abs(shift) < 0.3 and abs(spread - 1) < 0.3:
        return  # too close to tell apart with this sample size
    gen = np.random.default_rng(11)
    rows = 4000
    y = gen.normal(size=(rows, 2))
    true = gen.normal(size=(rows, 8, 2))
    wrong = shift + spread * gen.normal(size=(rows, 8, 2))
    assert S.crps_ensemble(y[:, 0], true[..., 0], estimator="fair").mean() < \
        S.crps_ensemble(y[:, 0], wrong[..., 0], estimator="fair").mean()
    assert S.energy_score(y, true, estimator="fair").mean() < S.energy_score(y, wrong, estimator="fair").mean()


@SETTINGS
@given(y=finite, mu=finite, s=scale, df=st.floats(1.1, 50), a=st.floats(0.1, 10), b=st.floats(0.1, 10))
def test_closed_form_crps_is_non_negative(y, mu, s, df, a, b):
    values = [S.crps_normal(y, mu, s), S.crps_logistic(y, mu, s), S.crps_laplace(y, mu, s),
              S.crps_exponential(y, 1 / s), S.crps_gamma(y, a, 1 / s), S.crps_lognormal(y, mu / 100, s / 5),
              S.crps_uniform(y, mu, mu + s), S.crps_beta(y / 1000, a, b), S.crps_t(y, df, mu, s),
              S.crps_mixnorm(y, [mu, -mu], [s, 1.0])]
    for v in values:
        assert float(v) >= -1e-9 * max(1.0, abs(y), abs(mu))


@SETTINGS
@given(data=arrays(np.float64, (5, 7), elements=finite), y=arrays(np.float64, 5, elements=finite))
def test_ensemble_scores_are_non_negative(data, y):
    assert (S.crps_ensemble(y, data) >= -1e-9).all()
    assert (S.twcrps_ensemble(y, data, a=0.0) >= -1e-9).all()
    assert (S.energy_score(np.stack([y, -y], 1), np.stack([data, data[:, ::-1]], -1)) >= -1e-9).all()
    assert (S.variogram_score(np.stack([y, -y], 1), np.stack([data, data[:, ::-1]], -1)) >= 0).all()


@SETTINGS
@given(y=finite, members=st.integers(1, 9))
def test_perfect_deterministic_forecasts_score_zero(y, members):
    ens = np.full((1, members), y)
    assert S.crps_ensemble([y], ens)[0] == 0.0
    assert S.twcrps_ensemble([y], ens, a=-1.0, b=1.0)[0] == 0.0
    assert S.energy_score([[y, 2 * y]], np.full((1, members, 2), [y, 2 * y]))[0] == 0.0
    # the member mean of identical variogram terms may round in the last bit
    assert S.variogram_score([[y, 2 * y]], np.full((1, members, 2), [y, 2 * y]))[0] <= 1e-28 * (1 + y * y)
    assert S.quantile_score([y], [[y, y]], [0.2, 0.7])[0] == 0.0
    assert S.weighted_interval_score([y], [[y, y, y]], [0.1, 0.5, 0.9])[0] == 0.0
    assert S.interval_score([y], [y], [y], alpha=0.2)[0] == 0.0


@pytest.mark.parametrize("score", [S.brier_score_multiclass, S.spherical_score, S.rps, S.capm_score,
                                   S.bregman_score])
def test_perfect_categorical_forecast_scores_zero(score):
    y = np.array([0, 1, 2])
    assert np.allclose(score(y, np.eye(3)[y]), 0.0, atol=1e-12)


def test_log_scores_of_perfect_forecasts_are_the_clip_floor():
    assert S.log_score([1, 0], [1.0, 0.0]).max() < 2e-15
    assert S.log_score_multiclass([2], [[0.0, 0.0, 1.0]])[0] < 2e-15
    # the worst case is capped by the documented clip at 1e-15, independent of dtype
    worst = S.log_score([1], np.array([0.0], dtype=np.float32))[0]
    assert worst == pytest.approx(-np.log(1e-15))
