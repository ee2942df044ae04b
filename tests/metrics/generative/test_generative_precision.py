"""FID ``precision=``: the mixed (float32 blocks, float64 combination) route agrees with
float64 to 1e-6 relative; float64 stays available and exact; bad names are refused."""

from __future__ import annotations

import numpy as np
import pytest

from scorebench.core.errors import InputError
from scorebench.metrics.generative import FeatureStats, fid, fid_details, sfid
from scorebench.metrics.generative.stats import resolve_precision


def _random(n=6000, d=128, seed=0):
    rng = np.random.default_rng(seed)
    mix = rng.normal(size=(d, d)) / np.sqrt(d)
    a = (rng.normal(size=(n, d)) @ mix + 0.5).astype(np.float32)
    b = (rng.normal(size=(n, d)) @ (mix * 1.1) + 0.45).astype(np.float32)
    return a, b


def _ill_conditioned(n=6000, d=128, seed=1):
    # large common offset, column scales over 4 decades, covariance spectrum over 6 decades
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    spec, scales = np.logspace(0, -3, d), np.logspace(-2, 2, d)
    a = ((rng.normal(size=(n, d)) * spec) @ q * scales + 1000.0).astype(np.float32)
    b = ((rng.normal(size=(n, d)) * spec * 1.05) @ q * scales + 1000.01).astype(np.float32)
    return a, b


@pytest.mark.parametrize("make", [_random, _ill_conditioned])
def test_mixed_agrees_with_float64(make):
    a, b = make()
    exact = fid(a, b, precision="float64")
    mixed = fid(a, b, precision="mixed")
    assert exact > 0
    assert mixed == pytest.approx(exact, rel=1e-6)
    assert sfid(a, b, precision="mixed") == pytest.approx(exact, rel=1e-6)


@pytest.mark.parametrize("make", [_random, _ill_conditioned])
def test_mixed_statistics_close_to_float64(make):
    a, _ = make()
    s64 = FeatureStats.from_features(a, precision="float64")
    s32 = FeatureStats.from_features(a, precision="mixed", chunk_size=1000)  # uneven last block
    assert s32.n == s64.n == a.shape[0]
    np.testing.assert_allclose(s32.mean, s64.mean, rtol=1e-12, atol=0)
    np.testing.assert_allclose(s32.cov, s64.cov, rtol=0, atol=1e-6 * np.abs(s64.cov).max())
    assert np.array_equal(s32.m2, s32.m2.T)


def test_float64_route_matches_numpy_cov_on_float32_input():
    a, b = _random(3000, 64)
    s = FeatureStats.from_features(a, precision="float64")
    np.testing.assert_allclose(s.cov, np.cov(a.astype(np.float64), rowvar=False), rtol=1e-10, atol=1e-13)
    # float64 input never goes through float32, whatever precision asks for "auto"
    assert fid(a.astype(np.float64), b.astype(np.float64)) == pytest.approx(
        fid(a, b, precision="float64"), rel=1e-12)


def test_mixed_merges_like_float64():
    a, _ = _random(4000, 32)
    whole = FeatureStats.from_features(a, precision="mixed")
    parts = FeatureStats.from_features(a[:1500], precision="mixed") + FeatureStats.from_features(a[1500:],
                                                                                                 precision="mixed")
    np.testing.assert_allclose(parts.cov, whole.cov, rtol=0, atol=1e-6 * np.abs(whole.cov).max())


def test_auto_choice():
    assert resolve_precision("auto", np.zeros((10, 4), np.float32)) == "float64"
    assert resolve_precision("auto", np.zeros((1 << 14, 1 << 10), np.float32)) == "mixed"
    assert resolve_precision("auto", np.zeros((1 << 14, 1 << 10), np.float64)) == "float64"
    assert resolve_precision("mixed", np.zeros((3, 3))) == "mixed"


def test_bad_precision_and_non_finite_rows():
    a, b = _random(300, 8)
    with pytest.raises(InputError, match="precision"):
        fid(a, b, precision="half")
    with pytest.raises(InputError, match="precision"):
        FeatureStats.from_features(a, precision="float16")
    a[123, 4] = np.nan
    with pytest.raises(InputError, match="data row 124"):
        fid_details(a, b, precision="mixed")
    with pytest.raises(InputError, match="data row 124"):
        fid_details(a, b, precision="float64")


def test_fid_ignores_rounding_noise_of_zero_variance_directions():
    # Dead (constant) features add exact zero directions to both covariances. Their computed
    # eigenvalues are rounding noise whose square roots used to move FID by ~1e-6 relative
    # between BLAS builds; counted as 0, FID equals the FID without those features.
    from scorebench.metrics.generative.frechet import fid
    rng = np.random.default_rng(3)
    real, fake = rng.normal(size=(600, 40)), rng.normal(0.05, 1.02, size=(600, 40))
    dead = np.full((600, 24), 0.7)  # constant features: singular covariances (old code: 9e-8 off)
    with_dead = fid(np.hstack([real, dead]), np.hstack([fake, dead]))
    assert with_dead == pytest.approx(fid(real, fake), rel=1e-12)
