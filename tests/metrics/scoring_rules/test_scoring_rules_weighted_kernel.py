"""Weighted Gaussian kernel scores (tw/ow/vr, univariate and multivariate) against scoringrules."""

from __future__ import annotations

import numpy as np
import pytest

from scorebench.core.errors import InputError
from scorebench.metrics.scoring_rules import gksmv_ensemble, gksuv_ensemble
from scorebench.metrics.scoring_rules import weighted_kernel as K

sr = pytest.importorskip("scoringrules")
A, B = -0.5, 1.0


def _box(z):
    return np.all((z >= A) & (z <= B), axis=-1)


@pytest.fixture
def uv():
    rng = np.random.default_rng(0)
    return rng.normal(size=300), rng.normal(size=(300, 20)), rng.uniform(0.1, 1.0, size=(300, 20))


@pytest.fixture
def mv():
    rng = np.random.default_rng(1)
    return rng.normal(size=(150, 3)), rng.normal(size=(150, 15, 3)), rng.uniform(0.1, 1.0, size=(150, 15))


def test_univariate_forms_match_scoringrules(uv):
    obs, ens, ens_w = uv
    for estimator, ref in (("standard", "nrg"), ("fair", "fair")):
        np.testing.assert_allclose(K.twgksuv_ensemble(obs, ens, a=A, b=B, estimator=estimator),
                                   sr.twgksuv_ensemble(obs, ens, A, B, estimator=ref), rtol=1e-10, atol=1e-14)
    ow_ref = sr.owgksuv_ensemble(obs, ens, A, B)
    assert np.isfinite(ow_ref).all()  # every row here has members in the window
    np.testing.assert_allclose(K.owgksuv_ensemble(obs, ens, a=A, b=B), ow_ref, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(K.vrgksuv_ensemble(obs, ens, a=A, b=B), sr.vrgksuv_ensemble(obs, ens, A, B),
                               rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(K.vrgksuv_ensemble(obs, ens, a=A, b=B, ens_w=ens_w),
                               sr.vrgksuv_ensemble(obs, ens, A, B, ens_w=ens_w), rtol=1e-10, atol=1e-14)


def test_multivariate_forms_match_scoringrules(mv):
    obs, ens, ens_w = mv
    np.testing.assert_allclose(K.twgksmv_ensemble(obs, ens, a=A, b=B),
                               sr.twgksmv_ensemble(obs, ens, lambda z: np.clip(z, A, B)), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(K.vrgksmv_ensemble(obs, ens, a=A, b=B, ens_w=ens_w),
                               sr.vrgksmv_ensemble(obs, ens, _box, ens_w=ens_w), rtol=1e-10, atol=1e-14)
    with np.errstate(invalid="ignore"):
        ow_ref = sr.owgksmv_ensemble(obs, ens, _box)
    defined = np.isfinite(ow_ref)
    inside = _box(obs)
    # scoringrules gives NaN where no member is in the box; with the observation outside, 0.
    keep = defined | ~inside
    ours = K.owgksmv_ensemble(obs[keep], ens[keep], a=A, b=B)
    np.testing.assert_allclose(ours[defined[keep]], ow_ref[keep & defined], rtol=1e-10, atol=1e-14)
    np.testing.assert_array_equal(ours[~defined[keep]], 0.0)
    bad = np.flatnonzero(~keep)
    if bad.size:
        with pytest.raises(InputError, match=f"row {bad[0]}|rows"):
            K.owgksmv_ensemble(obs, ens, a=A, b=B)


def test_member_weights_and_nan_members_in_the_kernel_scores(uv, mv):
    obs, ens, ens_w = uv
    np.testing.assert_allclose(gksuv_ensemble(obs, ens, ens_w=ens_w), sr.gksuv_ensemble(obs, ens, ens_w=ens_w),
                               rtol=1e-10)
    np.testing.assert_allclose(K.twgksuv_ensemble(obs, ens, a=A, b=B, ens_w=ens_w),
                               sr.twgksuv_ensemble(obs, ens, A, B, ens_w=ens_w), rtol=1e-10)
    # scoringrules' weighted fair kernel score keeps the diagonal k(x_i, x_i) = 1 in the pair
    # sum (harmless for the energy score, whose diagonal is 0), so with equal weights it is
    # not its own unweighted fair score; it is off by 0.5 sum(w^2) / (1 - sum(w^2)).
    # scorebench drops the diagonal: equal weights give the unweighted fair score.
    w = ens_w / ens_w.sum(axis=1, keepdims=True)
    s2 = (w * w).sum(axis=1)
    np.testing.assert_allclose(gksuv_ensemble(obs, ens, estimator="fair", ens_w=ens_w),
                               sr.gksuv_ensemble(obs, ens, estimator="fair", ens_w=ens_w) - 0.5 * s2 / (1 - s2),
                               rtol=1e-10, atol=1e-14)
    equal = np.ones_like(ens_w)
    np.testing.assert_allclose(gksuv_ensemble(obs, ens, estimator="fair", ens_w=equal),
                               sr.gksuv_ensemble(obs, ens, estimator="fair"), rtol=1e-10, atol=1e-14)
    assert not np.allclose(sr.gksuv_ensemble(obs, ens, estimator="fair", ens_w=equal / 20),
                           sr.gksuv_ensemble(obs, ens, estimator="fair"))
    # integer weights are repeated members (standard estimator)
    rep = np.repeat(ens[:5], [1, 2] * 10, axis=1)
    np.testing.assert_allclose(gksuv_ensemble(obs[:5], ens[:5], ens_w=np.tile([1.0, 2.0], (5, 10))),
                               gksuv_ensemble(obs[:5], rep), rtol=1e-12)
    obs, ens, ens_w = mv
    np.testing.assert_allclose(gksmv_ensemble(obs, ens, ens_w=ens_w), sr.gksmv_ensemble(obs, ens, ens_w=ens_w),
                               rtol=1e-10)
    with_nan = ens.copy()
    with_nan[:, 0, 1] = np.nan
    np.testing.assert_allclose(gksmv_ensemble(obs, with_nan, nan_policy="omit"), gksmv_ensemble(obs, ens[:, 1:]),
                               rtol=1e-12)


def test_no_window_is_the_kernel_score(uv, mv):
    obs, ens, _ = uv
    for fn in (K.twgksuv_ensemble, K.owgksuv_ensemble, K.vrgksuv_ensemble):
        np.testing.assert_allclose(fn(obs, ens), gksuv_ensemble(obs, ens), rtol=1e-12)
    obs, ens, _ = mv
    for fn in (K.twgksmv_ensemble, K.owgksmv_ensemble, K.vrgksmv_ensemble):
        np.testing.assert_allclose(fn(obs, ens), gksmv_ensemble(obs, ens), rtol=1e-12)


def test_bounds_and_zero_outside(uv):
    obs, ens, _ = uv
    for fn in (K.twgksuv_ensemble, K.owgksuv_ensemble, K.vrgksuv_ensemble):
        s = fn(obs, ens, a=A, b=B)
        assert ((s >= -1e-15) & (s <= 1 + 1e-15)).all()
    outside = (obs < A) | (obs > B)
    np.testing.assert_array_equal(K.owgksuv_ensemble(obs, ens, a=A, b=B)[outside], 0.0)


def test_nan_members_omitted_equal_dropping_them():
    rng = np.random.default_rng(3)
    obs, ens = rng.normal(size=4), rng.normal(size=(4, 6))
    with_nan = np.concatenate([ens, np.full((4, 1), np.nan)], axis=1)
    for fn in (K.twgksuv_ensemble, K.owgksuv_ensemble, K.vrgksuv_ensemble):
        np.testing.assert_allclose(fn(obs, with_nan, a=-2.0, b=2.0, nan_policy="omit"),
                                   fn(obs, ens, a=-2.0, b=2.0), rtol=1e-13)
        assert np.isnan(fn(obs, with_nan, a=-2.0, b=2.0)).all()


def test_bad_inputs():
    with pytest.raises(InputError, match="a < b"):
        K.vrgksuv_ensemble(0.0, [1.0, 2.0], a=1.0, b=0.0)
    with pytest.raises(InputError, match="no ensemble member"):
        K.owgksuv_ensemble(0.0, [5.0, 6.0], a=-1.0, b=1.0)
    with pytest.raises(InputError, match="estimator"):
        K.twgksmv_ensemble([0.0], [[1.0]], estimator="nrg")


def test_weighted_crps_ensembles_take_member_weights_and_omit_nan_members(uv):
    from scorebench.metrics.scoring_rules import owcrps_ensemble, twcrps_ensemble, vrcrps_ensemble
    obs, ens, ens_w = uv
    for estimator, ref in (("standard", "qd"), ("fair", "fair")):
        np.testing.assert_allclose(twcrps_ensemble(obs, ens, a=A, b=B, ens_w=ens_w, estimator=estimator),
                                   sr.twcrps_ensemble(obs, ens, A, B, ens_w=ens_w, estimator=ref),
                                   rtol=1e-10, atol=1e-14)
    with np.errstate(invalid="ignore", divide="ignore"):
        ow_ref = sr.owcrps_ensemble(obs, ens, A, B, ens_w=ens_w)
    assert np.isfinite(ow_ref).all()
    np.testing.assert_allclose(owcrps_ensemble(obs, ens, a=A, b=B, ens_w=ens_w), ow_ref, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(vrcrps_ensemble(obs, ens, a=A, b=B, ens_w=ens_w),
                               sr.vrcrps_ensemble(obs, ens, A, B, ens_w=ens_w), rtol=1e-10, atol=1e-14)
    rep = np.repeat(ens[:5], [1, 3] * 10, axis=1)
    w = np.tile([1.0, 3.0], (5, 10))
    for fn in (twcrps_ensemble, owcrps_ensemble, vrcrps_ensemble):
        np.testing.assert_allclose(fn(obs[:5], ens[:5], a=A, b=B, ens_w=w), fn(obs[:5], rep, a=A, b=B),
                                   rtol=1e-12, atol=1e-15)
        with_nan = np.concatenate([ens, np.full((300, 2), np.nan)], axis=1)
        np.testing.assert_allclose(fn(obs, with_nan, a=A, b=B, nan_policy="omit"), fn(obs, ens, a=A, b=B),
                                   rtol=1e-12, atol=1e-15)
