"""Outcome-weighted / vertically re-scaled energy and variogram scores, the multivariate
Dawid-Sebastiani score and the censored-KDE log score (issue 19), against scoringrules 0.10
and mpmath."""

from __future__ import annotations

import math
import warnings

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorebench.core.errors import InputError
from scorebench.metrics.scoring_rules import (clogs_ensemble, dawid_sebastiani_mv, dssmv_ensemble, energy_score,
                                              log_score_ensemble, owenergy_score, owvariogram_score,
                                              variogram_score, vrenergy_score, vrvariogram_score)

sr = pytest.importorskip("scoringrules")
WINDOWS = [(-math.inf, math.inf), (-1.5, math.inf), (-math.inf, 0.7), (-1.8, 1.8)]


@pytest.fixture(autouse=True)
def _quiet_scoringrules_deprecations():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        yield


def _box(a, b):
    return lambda z: np.all((z >= a) & (z <= b), axis=-1).astype(float)


def _data(seed, n=250, m=9, d=3):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)), rng.normal(size=(n, m, d)) * 1.3, rng.random((n, m)) + 0.01


def _defined(a, b, obs, ens, *arrays):
    """Drop rows with the observation in the box and no member there (undefined; tested apart)."""
    box = _box(a, b)
    keep = ~((box(obs) > 0) & (box(ens).sum(axis=1) == 0))
    return [x[keep] for x in (obs, ens, *arrays)]


@pytest.mark.parametrize("a,b", WINDOWS)
@pytest.mark.parametrize("weighted", [False, True])
def test_ow_vr_energy_match_scoringrules(a, b, weighted):
    obs, ens, w = _defined(a, b, *_data(1))
    ens_w = w if weighted else None
    ref = sr.owenergy_score(obs, ens, _box(a, b), ens_w=ens_w, backend="numpy")
    ours = owenergy_score(obs, ens, a=a, b=b, ens_w=ens_w)
    ok = np.isfinite(ref)  # scoringrules: NaN when no member and the observation are in the box; we: 0
    np.testing.assert_allclose(ours[ok], ref[ok], rtol=1e-10, atol=1e-13)
    assert (ours[~ok] == 0).all()
    ref = sr.vrenergy_score(obs, ens, _box(a, b), ens_w=ens_w, backend="numpy")
    np.testing.assert_allclose(vrenergy_score(obs, ens, a=a, b=b, ens_w=ens_w), ref, rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("a,b", WINDOWS)
@pytest.mark.parametrize("p", [0.5, 1.0])
@pytest.mark.parametrize("weighted", [False, True])
def test_ow_vr_variogram_match_scoringrules(a, b, p, weighted):
    obs, ens, w = _defined(a, b, *_data(2, d=4))
    pw = np.random.default_rng(0).random((4, 4))
    ens_w = w if weighted else None
    ref = sr.owvariogram_score(obs, ens, _box(a, b), pw, p=p, ens_w=ens_w, backend="numpy")
    ours = owvariogram_score(obs, ens, a=a, b=b, p=p, weights=pw, ens_w=ens_w)
    ok = np.isfinite(ref)
    np.testing.assert_allclose(ours[ok], ref[ok], rtol=1e-10, atol=1e-13)
    assert (ours[~ok] == 0).all()
    ref = sr.vrvariogram_score(obs, ens, _box(a, b), pw, p=p, ens_w=ens_w, backend="numpy")
    np.testing.assert_allclose(vrvariogram_score(obs, ens, a=a, b=b, p=p, weights=pw, ens_w=ens_w), ref,
                               rtol=1e-10, atol=1e-12)


def test_whole_space_box_gives_the_unweighted_scores():
    obs, ens, _ = _data(3, n=40)
    for weighted, plain in [(owenergy_score, energy_score), (vrenergy_score, energy_score),
                            (owvariogram_score, variogram_score), (vrvariogram_score, variogram_score)]:
        np.testing.assert_allclose(weighted(obs, ens), plain(obs, ens), rtol=1e-12, atol=1e-14)


def test_outcome_weighted_rows_without_members_in_the_box():
    obs = np.array([[0.0, 0.0], [5.0, 5.0]])
    ens = np.full((2, 3, 2), 3.0)
    with pytest.raises(InputError, match=r"data row 1 .*no ensemble member there"):
        owenergy_score(obs, ens, a=-1.0, b=1.0)
    with pytest.raises(InputError, match="no ensemble member there"):
        owvariogram_score(obs, ens, a=-1.0, b=1.0)
    assert owenergy_score(obs[1:], ens[1:], a=-1.0, b=1.0).tolist() == [0.0]  # observation outside: 0
    with pytest.raises(InputError, match="a < b"):
        vrenergy_score(obs, ens, a=1.0, b=0.0)


def test_outcome_weighted_nan_handling():
    obs, ens, _ = _data(4, n=3, m=5, d=2)
    holed = ens.copy()
    holed[0, 1, 1] = np.nan
    assert np.isnan(owenergy_score(obs, holed, a=-5.0, b=5.0)[0])  # propagate: a NaN member is not "outside"
    got = vrvariogram_score(obs, holed, a=-1.0, b=2.0, nan_policy="omit")
    assert got[0] == pytest.approx(float(vrvariogram_score(obs[0], ens[0, [0, 2, 3, 4]], a=-1.0, b=2.0)), rel=1e-12)


def _expected(score, atoms, q, p, **kw):
    k = len(atoms)
    return float(q @ score(atoms, np.broadcast_to(atoms, (k, *atoms.shape)), ens_w=np.broadcast_to(p, (k, k)), **kw))


weights5 = st.lists(st.floats(0.05, 1.0), min_size=5, max_size=5).map(lambda v: np.array(v) / sum(v))


@pytest.mark.parametrize("score", [owenergy_score, vrenergy_score, owvariogram_score, vrvariogram_score],
                         ids=lambda f: f.__name__)
@settings(max_examples=40, deadline=None)
@given(q=weights5, p=weights5, seed=st.integers(0, 2**16), a=st.floats(-1.5, 0.5))
def test_outcome_and_vertically_weighted_scores_are_proper(score, q, p, seed, a):
    """E_Q S(P, Y) >= E_Q S(Q, Y) for Q, P weighted ensembles on the same atoms (Allen et al. 2023)."""
    atoms = np.random.default_rng(seed).normal(size=(5, 2))
    atoms[0] = [2.0, 2.0]  # one atom always inside the box
    assert _expected(score, atoms, q, p, a=a) >= _expected(score, atoms, q, q, a=a) - 1e-10


# --- multivariate Dawid-Sebastiani ---------------------------------------------------------


@pytest.mark.parametrize("ddof,bias", [(1, False), (0, True)])
def test_dssmv_matches_scoringrules(ddof, bias):
    obs, ens, _ = _data(5, n=120, m=12, d=4)
    ref = sr.dssmv_ensemble(obs, ens, bias=bias, backend="numpy")
    np.testing.assert_allclose(dssmv_ensemble(obs, ens, ddof=ddof), ref, rtol=1e-10, atol=1e-12)


def test_dss_mv_against_mpmath_and_the_univariate_score():
    rng = np.random.default_rng(6)
    A = rng.normal(size=(3, 3))
    cov, mean, y = A @ A.T + 0.1 * np.eye(3), rng.normal(size=3), rng.normal(size=3)
    mp.mp.dps = 40
    C = mp.matrix(cov.tolist())
    r = mp.matrix((y - mean).tolist())
    exact = mp.log(mp.det(C)) + (r.T * mp.inverse(C) * r)[0]
    assert float(dawid_sebastiani_mv(y, mean, cov)) == pytest.approx(float(exact), rel=1e-12)
    # d = 1: log s^2 + z^2, the univariate DSS
    assert float(dawid_sebastiani_mv([2.0], [0.5], [[4.0]])) == pytest.approx(math.log(4.0) + 1.5**2 / 4.0)
    # large d: the determinant underflows (1e-3 ** 200) but the log-determinant does not
    d = 200
    assert float(dawid_sebastiani_mv(np.zeros(d), np.zeros(d), 1e-3 * np.eye(d))) == pytest.approx(
        d * math.log(1e-3), rel=1e-12)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**16), shift=st.floats(-1.0, 1.0), scale=st.floats(0.5, 2.0))
def test_dss_mv_is_proper(seed, shift, scale):
    """E_Q DSS(P, Y) is smallest at P's moments = Q's moments (Q a weighted set of atoms)."""
    rng = np.random.default_rng(seed)
    atoms, q = rng.normal(size=(6, 2)), rng.random(6) + 0.1
    q /= q.sum()
    mu = q @ atoms
    cov = (atoms - mu).T @ ((atoms - mu) * q[:, None])
    at_truth = q @ dawid_sebastiani_mv(atoms, mu, cov)
    elsewhere = q @ dawid_sebastiani_mv(atoms, mu + shift * np.array([1.0, -0.5]), scale * cov)
    assert elsewhere >= at_truth - 1e-10


def test_dss_mv_refuses_singular_covariances_naming_rows():
    ens = np.random.default_rng(7).normal(size=(4, 5, 3))
    ens[2, :, 2] = ens[2, :, 0]  # two identical variables in row 2
    with pytest.raises(InputError, match=r"not positive definite in data row 3"):
        dssmv_ensemble(np.zeros((4, 3)), ens)
    with pytest.raises(InputError, match="not positive definite"):
        dssmv_ensemble(np.zeros((1, 3)), np.ones((1, 3, 3)) * [[1.0], [2.0], [3.0]])  # M <= d
    with pytest.raises(InputError, match="square"):
        dawid_sebastiani_mv([0.0, 0.0], [0.0, 0.0], [[1.0, 0.0]])
    with pytest.raises(InputError, match="ddof"):
        dssmv_ensemble(np.zeros((1, 2)), np.ones((1, 3, 2)), ddof=3)


# --- censored / conditional likelihood of the ensemble KDE -------------------------------


@pytest.mark.parametrize("a,b", WINDOWS)
@pytest.mark.parametrize("cens", [True, False])
@pytest.mark.parametrize("bandwidth", [None, 0.3])
def test_clogs_matches_scoringrules(a, b, cens, bandwidth):
    rng = np.random.default_rng(8)
    obs, ens = rng.normal(size=1000) * 1.5, rng.normal(size=(1000, 15))
    ref = sr.clogs_ensemble(obs, ens, a=a, b=b, bw=bandwidth, cens=cens, backend="numpy")
    # scoringrules forms F(b) - F(a) directly, which loses ~1e-12 when F(b) is close to F(a)
    np.testing.assert_allclose(clogs_ensemble(obs, ens, a=a, b=b, bandwidth=bandwidth, cens=cens), ref,
                               rtol=1e-10, atol=1e-10)


def _clogs_mp(y, xs, a, b, h, cens):
    """The definition at 50 digits; tail masses from erfc, which keeps values like 1e-350."""
    mp.mp.dps = 50
    y, a, b, h = map(mp.mpf, (y, a, b, h))
    xs = [mp.mpf(float(v)) for v in xs]
    cdf = lambda z, x: mp.erfc(-(z - x) / (h * mp.sqrt(2))) / 2  # noqa: E731
    sf = lambda z, x: mp.erfc((z - x) / (h * mp.sqrt(2))) / 2  # noqa: E731
    f = mp.fsum(mp.npdf(y, x, h) for x in xs) / len(xs)
    if a < y < b:
        if cens:
            return -mp.log(f)
        return -mp.log(f) + mp.log(mp.fsum(sf(a, x) - sf(b, x) if a > 0 else cdf(b, x) - cdf(a, x) for x in xs)
                                   / len(xs))
    return -mp.log(mp.fsum(cdf(a, x) + sf(b, x) for x in xs) / len(xs)) if cens else mp.mpf(0)


@pytest.mark.parametrize("y,a,b,cens", [
    (50.0, 40.0, math.inf, True),    # density ~ exp(-1200): scoringrules gives inf
    (-9.0, 8.0, math.inf, True),     # mass outside ~ 1: score ~ 0
    (45.0, 40.0, math.inf, False),   # F(inf) - F(40) underflows in the direct form: scoringrules NaN
    (0.3, -0.5, 0.5, False),
    (-30.0, -math.inf, -20.0, True),
])
def test_clogs_tails_against_mpmath(y, a, b, cens):
    xs = np.array([0.0, 1.0, -0.5, 2.0])
    got = float(clogs_ensemble(y, xs, a=a, b=b, bandwidth=1.0, cens=cens))
    assert got == pytest.approx(float(_clogs_mp(y, xs, a, b, 1.0, cens)), rel=1e-10, abs=1e-14)


def test_clogs_whole_line_is_the_kde_log_score_and_refusals():
    rng = np.random.default_rng(9)
    obs, ens = rng.normal(size=30), rng.normal(size=(30, 7))
    np.testing.assert_allclose(clogs_ensemble(obs, ens), log_score_ensemble(obs, ens), rtol=1e-13)
    np.testing.assert_allclose(clogs_ensemble(obs, ens, cens=False), log_score_ensemble(obs, ens), rtol=1e-13)
    with pytest.raises(InputError, match="a < b"):
        clogs_ensemble(obs, ens, a=1.0, b=0.0)
    with pytest.raises(InputError, match="cens"):
        clogs_ensemble(obs, ens, cens="yes")
    with pytest.raises(InputError, match="all equal"):
        clogs_ensemble([0.0], [[1.0, 1.0]])
    assert np.isnan(clogs_ensemble([np.nan], [[0.0, 1.0]], bandwidth=1.0)).all()
