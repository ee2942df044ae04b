"""Ensemble member weights (ens_w), nan_policy="omit" for the multivariate scores and the fair
variogram estimator (issue 19): against scoringrules 0.10, explicit O(M^2) definitions and
simulation."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorebench.core.errors import InputError
from scorebench.metrics.scoring_rules import crps_ensemble, energy_score, variogram_score

sr = pytest.importorskip("scoringrules")
SR_EST = {"standard": "nrg", "fair": "fair"}


@pytest.fixture(autouse=True)
def _quiet_scoringrules_deprecations():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        yield


def _explicit_crps(y, x, w, fair):
    """sum_i w_i |x_i - y| - sum_ij w_i w_j |x_i - x_j| / (2c), with the O(M^2) double sum."""
    w = w / w.sum()
    c = 1.0 - (w * w).sum() if fair else 1.0
    return (w * np.abs(x - y)).sum() - 0.5 * (np.outer(w, w) * np.abs(x[:, None] - x[None, :])).sum() / c


@pytest.mark.parametrize("estimator", ["standard", "fair"])
@pytest.mark.parametrize("m", [2, 7, 40])
def test_weighted_crps_matches_scoringrules_and_the_double_sum(estimator, m):
    rng = np.random.default_rng(m)
    obs, ens, w = rng.normal(size=300) * 2, rng.normal(size=(300, m)), rng.random((300, m)) + 0.01
    ens[:, 0] = ens[:, 1]  # ties
    ours = crps_ensemble(obs, ens, ens_w=w, estimator=estimator)
    ref = sr.crps_ensemble(obs, ens, ens_w=w, estimator=SR_EST[estimator], backend="numpy")
    np.testing.assert_allclose(ours, ref, rtol=1e-10, atol=1e-13)
    explicit = [_explicit_crps(obs[i], ens[i], w[i], estimator == "fair") for i in range(20)]
    np.testing.assert_allclose(ours[:20], explicit, rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("estimator", ["standard", "fair"])
def test_equal_weights_reduce_to_the_unweighted_scores(estimator):
    rng = np.random.default_rng(3)
    obs, ens = rng.normal(size=(50, 3)), rng.normal(size=(50, 6, 3))
    kw = {"estimator": estimator}
    np.testing.assert_allclose(crps_ensemble(obs[:, 0], ens[..., 0], ens_w=np.full(6, 2.5), **kw),
                               crps_ensemble(obs[:, 0], ens[..., 0], **kw), rtol=1e-12)
    np.testing.assert_allclose(energy_score(obs, ens, ens_w=np.ones(6), **kw), energy_score(obs, ens, **kw),
                               rtol=1e-12)
    np.testing.assert_allclose(variogram_score(obs, ens, ens_w=np.ones(6), **kw), variogram_score(obs, ens, **kw),
                               rtol=1e-12, atol=1e-14)


def test_integer_weights_equal_repeated_members():
    """Weight k on a member is the same forecast as k copies of it."""
    rng = np.random.default_rng(4)
    obs, ens = rng.normal(size=(40, 2)), rng.normal(size=(40, 3, 2))
    counts = np.array([1, 3, 2])
    rep = np.repeat(ens, counts, axis=1)
    np.testing.assert_allclose(energy_score(obs, ens, ens_w=counts), energy_score(obs, rep), rtol=1e-12)
    np.testing.assert_allclose(variogram_score(obs, ens, ens_w=counts), variogram_score(obs, rep), rtol=1e-12)
    np.testing.assert_allclose(crps_ensemble(obs[:, 0], ens[..., 0], ens_w=counts),
                               crps_ensemble(obs[:, 0], rep[..., 0]), rtol=1e-12)


@pytest.mark.parametrize("estimator", ["standard", "fair"])
@pytest.mark.parametrize("m,d", [(2, 2), (9, 3), (30, 5)])
def test_weighted_energy_score_matches_scoringrules(estimator, m, d):
    rng = np.random.default_rng(m + d)
    obs, ens, w = rng.normal(size=(200, d)), rng.normal(size=(200, m, d)), rng.random((200, m)) + 0.01
    ref = sr.energy_score(obs, ens, ens_w=w, estimator=SR_EST[estimator], backend="numpy")
    np.testing.assert_allclose(energy_score(obs, ens, ens_w=w, estimator=estimator), ref, rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("estimator", ["standard", "fair"])
@pytest.mark.parametrize("p", [0.5, 1.0, 2.0])
def test_variogram_score_weights_and_fair_estimator_match_scoringrules(estimator, p):
    rng = np.random.default_rng(int(10 * p))
    obs, ens, w = rng.normal(size=(150, 4)), rng.normal(size=(150, 8, 4)), rng.random((150, 8)) + 0.01
    pw = rng.random((4, 4))
    for ens_w in (None, w):
        ours = variogram_score(obs, ens, p=p, weights=pw, estimator=estimator, ens_w=ens_w)
        ref = sr.variogram_score(obs, ens, pw, p=p, ens_w=ens_w, estimator=SR_EST[estimator], backend="numpy")
        np.testing.assert_allclose(ours, ref, rtol=1e-10, atol=1e-12)


def test_fair_variogram_is_unbiased_by_simulation():
    """For X ~ N(0, I_2) and p = 1, E|X_1 - X_2| = 2/sqrt(pi); the fair score of 3-member
    ensembles averages to 2 (E gamma - gamma_y)^2, the standard one exceeds it by 2 Var(gamma)/3."""
    rng = np.random.default_rng(2024)
    n, m = 40_000, 3
    ens = rng.normal(size=(n, m, 2))
    obs = np.array([0.0, 0.5])
    limit = 2.0 * (2.0 / math.sqrt(math.pi) - 0.5) ** 2
    fair = variogram_score(obs, ens, p=1.0, estimator="fair")
    standard = variogram_score(obs, ens, p=1.0)
    se = fair.std() / math.sqrt(n)
    assert abs(fair.mean() - limit) < 4 * se
    var_gamma = 2.0 - 4.0 / math.pi  # E|Z|^2 - (E|Z|)^2 for Z ~ N(0, 2)
    assert standard.mean() - limit == pytest.approx(2.0 * var_gamma / m, rel=0.05)


@pytest.mark.parametrize("score", [energy_score, variogram_score])
def test_nan_members_are_omitted_per_row(score):
    rng = np.random.default_rng(6)
    obs, ens = rng.normal(size=(5, 3)), rng.normal(size=(5, 6, 3))
    holed = ens.copy()
    holed[1, 2, 0] = np.nan       # one variable of member 2: the whole member goes
    holed[3, [0, 5], :] = np.nan  # two whole members
    got = score(obs, holed, nan_policy="omit")
    for row, keep in [(0, slice(None)), (1, [0, 1, 3, 4, 5]), (3, [1, 2, 3, 4])]:
        assert got[row] == pytest.approx(float(score(obs[row], ens[row, keep])), rel=1e-12)
    assert np.isnan(score(obs, holed)[[1, 3]]).all()  # propagate (the default)
    w = rng.random(6) + 0.1  # with weights: the kept members' weights, renormalised
    assert score(obs[1], holed[1], nan_policy="omit", ens_w=w) == pytest.approx(
        float(score(obs[1], ens[1, [0, 1, 3, 4, 5]], ens_w=w[[0, 1, 3, 4, 5]])), rel=1e-12)
    if score is energy_score:
        assert score(obs[3], holed[3], nan_policy="omit", estimator="fair") == pytest.approx(
            float(score(obs[3], ens[3, 1:5], estimator="fair")), rel=1e-12)


@pytest.mark.parametrize("score", [energy_score, variogram_score])
def test_all_nan_ensemble_is_a_clear_error(score):
    ens = np.ones((3, 4, 2))
    ens[2] = np.nan
    with pytest.raises(InputError, match=r"every ensemble member is NaN.*data row 3"):
        score(np.zeros((3, 2)), ens, nan_policy="omit")


def test_crps_weighted_omit_matches_dropping_members():
    x = np.array([[0.0, np.nan, 2.0, 5.0], [np.nan] * 4])
    w = np.array([1.0, 5.0, 2.0, 1.0])
    got = crps_ensemble([1.0, 1.0], x, ens_w=w, nan_policy="omit")
    assert got[0] == pytest.approx(_explicit_crps(1.0, x[0, [0, 2, 3]], w[[0, 2, 3]], False), rel=1e-12)
    assert np.isnan(got[1])  # a row without members scores NaN, as without weights


@pytest.mark.parametrize("bad,match", [
    ([1.0, -1.0, 1.0], "negative"), ([0.0, 0.0, 0.0], "zero"), ([1.0, np.nan, 1.0], "NaN"),
    ([1.0, 1.0], "one weight per ensemble member"), ([1.0, np.inf, 1.0], "infinite"),
])
def test_bad_member_weights_are_refused(bad, match):
    for call in (lambda: crps_ensemble([0.0], [[1.0, 2.0, 3.0]], ens_w=bad),
                 lambda: energy_score([[0.0, 0.0]], np.ones((1, 3, 2)), ens_w=bad),
                 lambda: variogram_score([[0.0, 0.0]], np.ones((1, 3, 2)), ens_w=bad)):
        with pytest.raises(InputError, match=match):
            call()


def test_fair_estimator_needs_two_weighted_members():
    with pytest.raises(InputError, match="at least 2 members with positive weight"):
        energy_score([[0.0, 0.0]], [[[1.0, 0.0], [0.0, 1.0]]], ens_w=[1.0, 0.0], estimator="fair")
    with pytest.raises(InputError, match="at least 2 members"):
        variogram_score([[0.0, 0.0]], [[[1.0, 0.0]]], estimator="fair")


def _expected(score, atoms, q, p_weights, **kw):
    """E_{Y ~ Q} S(P, Y) exactly: Q puts mass q on the atoms, P is the same atoms weighted p."""
    k = len(atoms)
    values = score(atoms, np.broadcast_to(atoms, (k, *atoms.shape)), ens_w=np.broadcast_to(p_weights, (k, k)), **kw)
    return float(q @ values)


weights4 = st.lists(st.floats(0.05, 1.0), min_size=4, max_size=4).map(lambda v: np.array(v) / sum(v))


@pytest.mark.parametrize("score,strict", [(energy_score, True), (variogram_score, False)])
@settings(max_examples=40, deadline=None)
@given(q=weights4, p=weights4, seed=st.integers(0, 2**16))
def test_weighted_scores_are_proper_on_weighted_ensembles(score, strict, q, p, seed):
    atoms = np.random.default_rng(seed).normal(size=(4, 2)) * 2
    at_truth = _expected(score, atoms, q, q)
    elsewhere = _expected(score, atoms, q, p)
    assert elsewhere >= at_truth - 1e-10
    if strict and np.abs(p - q).max() > 1e-2:
        assert elsewhere > at_truth


@settings(max_examples=40, deadline=None)
@given(q=weights4, p=weights4, seed=st.integers(0, 2**16))
def test_weighted_crps_is_strictly_proper_on_weighted_ensembles(q, p, seed):
    atoms = np.random.default_rng(seed).normal(size=4) * 2
    at_truth = float(q @ crps_ensemble(atoms, np.broadcast_to(atoms, (4, 4)), ens_w=np.broadcast_to(q, (4, 4))))
    elsewhere = float(q @ crps_ensemble(atoms, np.broadcast_to(atoms, (4, 4)), ens_w=np.broadcast_to(p, (4, 4))))
    assert elsewhere >= at_truth - 1e-12
    if np.abs(p - q).max() > 1e-2:
        assert elsewhere > at_truth


def test_empty_batches_give_empty_scores():
    from scorebench.metrics import scoring_rules as S
    for f in (S.energy_score, S.variogram_score, S.owenergy_score, S.vrvariogram_score, S.dssmv_ensemble):
        assert f(np.zeros((0, 2)), np.zeros((0, 3, 2))).shape == (0,)
    assert energy_score(np.zeros((0, 2)), np.zeros((0, 3, 2)), ens_w=np.ones(3)).shape == (0,)
    assert crps_ensemble(np.zeros(0), np.zeros((0, 3)), ens_w=np.ones(3)).shape == (0,)


def test_weighted_fair_crps_with_one_member_left_is_nan_as_unweighted():
    x = np.array([[0.0, np.nan, np.nan], [0.0, 1.0, np.nan]])
    got = crps_ensemble([0.5, 0.5], x, ens_w=[1.0, 2.0, 3.0], nan_policy="omit", estimator="fair")
    plain = crps_ensemble([0.5, 0.5], x, nan_policy="omit", estimator="fair")
    assert np.isnan(got[0]) and np.isnan(plain[0])
    assert got[1] == pytest.approx(_explicit_crps(0.5, x[1, :2], np.array([1.0, 2.0]), True), rel=1e-12)
    with pytest.raises(InputError, match="at least 2 members with positive weight"):
        crps_ensemble([0.5], [[0.0, 1.0]], ens_w=[1.0, 0.0], estimator="fair")
