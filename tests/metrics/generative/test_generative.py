"""Generative metrics: Vendi, FID (+ streaming statistics), KID, IS, PRDC, GREAT, MiFID.

Reference libraries: ``vendi-score`` (score_K / score_dual), ``prdc``. ``pytorch-fid`` cannot
be imported without torchvision (its module imports torchvision at top level, and installing
torchvision would pull a different torch build), so its ``calculate_frechet_distance`` is
re-derived below from its source (scipy ``sqrtm`` of ``sigma1 @ sigma2``, real part).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings
from hypothesis import strategies as st

import scorebench
from scorebench.core.errors import InputError
from scorebench.metrics.generative import (
    FeatureStats, coverage, density, fid, fid_details, frechet_distance, great_score, inception_score,
    inception_score_details, kid, kid_details, knn_radii, manifold_metrics, memorization_distance, mifid,
    mmd2_unbiased, precision, recall, sfid, vendi_from_eigenvalues, vendi_score,
)


def _unit(x):
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _pytorch_fid_frechet(mu1, sigma1, mu2, sigma2):
    """pytorch-fid 0.3.0 ``calculate_frechet_distance`` (without its eps retry branch)."""
    diff = mu1 - mu2
    covmean = scipy.linalg.sqrtm(sigma1.dot(sigma2))  # pytorch-fid passes disp=False (deprecated)
    if np.iscomplexobj(covmean):
        covmean = covmean.real
    return diff.dot(diff) + np.trace(sigma1) + np.trace(sigma2) - 2 * np.trace(covmean)


# --- Vendi ---------------------------------------------------------------------------------

@pytest.mark.parametrize("q", [0, 0.5, 1, 2, math.inf])
def test_vendi_identical_and_orthogonal(q):
    assert vendi_score(np.tile([[1.0, 2.0, 3.0]], (7, 1)), q=q) == pytest.approx(1.0, abs=1e-12)
    assert vendi_score(np.eye(6) * 3.0, q=q) == pytest.approx(6.0, abs=1e-10)
    assert vendi_score(np.eye(6), q=q, kernel="precomputed") == pytest.approx(6.0, abs=1e-10)


@pytest.mark.parametrize("q", [0.5, 2.0, "inf"])
def test_vendi_matches_vendi_score_dual_for_q(q):
    vendi = pytest.importorskip("vendi_score.vendi")
    x = np.random.default_rng(1).normal(size=(300, 20))
    ours = vendi_score(x, q=math.inf if q == "inf" else q)
    assert ours == pytest.approx(vendi.score_dual(x, q=q), rel=1e-10)


def test_vendi_matches_vendi_score_kernel_with_weights():
    vendi = pytest.importorskip("vendi_score.vendi")
    rng = np.random.default_rng(2)
    x = _unit(rng.normal(size=(40, 60)))  # full-rank kernel: no rounding-noise eigenvalues
    k = x @ x.T
    p = rng.dirichlet(np.ones(40))
    for q in (1.0, 0.5, 2.0):
        assert vendi_score(k, kernel="precomputed", q=q, p=p) == pytest.approx(vendi.score_K(k, q=q, p=p), rel=1e-9)
        assert vendi_score(x, q=q, p=p) == pytest.approx(vendi.score_K(k, q=q, p=p), rel=1e-9)
    assert vendi_score(x) == pytest.approx(vendi.score_X(x), rel=1e-10)


def test_vendi_score_package_ignores_q_in_score_x():
    # Documented difference: vendi_score.score_X always computes q = 1.
    vendi = pytest.importorskip("vendi_score.vendi")
    x = np.random.default_rng(3).normal(size=(100, 8))
    assert vendi.score_X(x, q=2) == pytest.approx(vendi.score_X(x, q=1), rel=1e-12)
    assert vendi_score(x, q=2) < vendi_score(x, q=1) - 0.05


def test_vendi_float32_spectrum_noise_corrupts_q_below_one():
    # The package keeps every positive eigenvalue of a float32 n x n kernel: for q < 1 the
    # rounding-noise eigenvalues count. Ours decomposes the d x d matrix in float64 and drops
    # eigenvalues below a rank tolerance; the exact answer is that of the rank-5 spectrum.
    vendi = pytest.importorskip("vendi_score.vendi")
    rng = np.random.default_rng(0)
    x = _unit(rng.normal(size=(1000, 5)) @ rng.normal(size=(5, 64)))
    x32 = x.astype(np.float32)
    exact = vendi_from_eigenvalues(np.linalg.eigvalsh(x.T @ x / len(x)), q=0.5)
    assert vendi_score(x32, q=0.5) == pytest.approx(exact, rel=1e-6)
    assert vendi_score(x, q=0, ) == 5.0
    assert abs(vendi.score_K(x32 @ x32.T, q=0.5) / exact - 1) > 0.01


def test_vendi_dual_and_primal_agree_and_q2_frobenius():
    rng = np.random.default_rng(4)
    for n, d in ((50, 10), (10, 50)):
        x = rng.normal(size=(n, d))
        k = _unit(x) @ _unit(x).T
        for q in (0, 0.5, 1, 2, 3.5, math.inf):
            assert vendi_score(x, q=q) == pytest.approx(vendi_score(k, q=q, kernel="precomputed"), rel=1e-9)
        lam = np.linalg.eigvalsh(k / n)
        assert vendi_score(x, q=2) == pytest.approx(1 / np.sum(lam ** 2), rel=1e-10)


def test_vendi_similarity_function_equals_precomputed():
    rng = np.random.default_rng(5)
    pts = list(rng.normal(size=(12, 2)))

    def rbf(a, b):
        return float(np.exp(-np.sum((a - b) ** 2)))

    k = np.array([[rbf(a, b) for b in pts] for a in pts])
    assert vendi_score(pts, kernel=rbf) == pytest.approx(vendi_score(k, kernel="precomputed"), rel=1e-12)


def test_vendi_weights_and_validation():
    x = np.eye(4)
    assert vendi_score(x, p=[1, 0, 0, 0]) == pytest.approx(1.0)
    assert vendi_score(x, p=[0.25] * 4) == pytest.approx(vendi_score(x))
    with pytest.raises(InputError, match="p:"):
        vendi_score(x, p=[0.5, 0.5, 0.5, 0.5])
    with pytest.raises(InputError, match="diagonal"):
        vendi_score(2 * np.eye(3), kernel="precomputed")
    with pytest.raises(InputError, match="all-zero"):
        vendi_score(np.zeros((3, 2)))
    with pytest.raises(InputError, match="q:"):
        vendi_score(x, q=-1)
    with pytest.raises(InputError, match="kernel"):
        vendi_score(x, kernel="rbf")


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 15), st.integers(1, 6), st.integers(0, 10_000))
def test_vendi_properties(n, d, seed):
    x = np.random.default_rng(seed).normal(size=(n, d)) + 0.1
    values = [vendi_score(x, q=q) for q in (0, 0.5, 1, 2, math.inf)]
    assert all(1 - 1e-9 <= v <= min(n, d) + 1e-9 for v in values)
    assert all(a >= b - 1e-9 for a, b in zip(values, values[1:]))  # non-increasing in q
    perm = np.random.default_rng(seed + 1).permutation(n)
    assert vendi_score(x[perm]) == pytest.approx(values[2], rel=1e-9)


# --- FID -----------------------------------------------------------------------------------

def test_fid_closed_form_gaussians():
    rng = np.random.default_rng(6)
    d = 7
    a, b = rng.uniform(0.1, 3, d), rng.uniform(0.1, 3, d)
    mu1, mu2 = rng.normal(size=d), rng.normal(size=d)
    expected = np.sum((mu1 - mu2) ** 2) + np.sum((np.sqrt(a) - np.sqrt(b)) ** 2)
    assert frechet_distance(mu1, np.diag(a), mu2, np.diag(b)) == pytest.approx(expected, rel=1e-12)
    q, _ = np.linalg.qr(rng.normal(size=(d, d)))  # a common rotation leaves it unchanged
    assert frechet_distance(q @ mu1, q @ np.diag(a) @ q.T, q @ mu2, q @ np.diag(b) @ q.T) == \
        pytest.approx(expected, rel=1e-10)


def test_fid_matches_pytorch_fid_sqrtm_formula():
    rng = np.random.default_rng(7)
    for d in (16, 128):
        x = rng.normal(size=(4 * d, d)) @ rng.normal(size=(d, d)) * 0.3
        y = rng.normal(0.2, 1.0, size=(3 * d, d)) @ rng.normal(size=(d, d)) * 0.3
        mu1, s1 = x.mean(0), np.cov(x, rowvar=False)
        mu2, s2 = y.mean(0), np.cov(y, rowvar=False)
        ref = _pytorch_fid_frechet(mu1, s1, mu2, s2)
        assert frechet_distance(mu1, s1, mu2, s2) == pytest.approx(ref, rel=1e-9)
        assert fid(x, y) == pytest.approx(ref, rel=1e-9)
        stats = (FeatureStats.from_moments(mu1, s1, len(x)), FeatureStats.from_moments(mu2, s2, len(y)))
        assert fid(*stats) == pytest.approx(ref, rel=1e-9)


def test_fid_fewer_samples_than_dimensions_uses_nuclear_norm():
    rng = np.random.default_rng(8)
    x, y = rng.normal(size=(20, 60)), rng.normal(0.3, 1.2, size=(25, 60))
    via_features = fid_details(x, y)
    via_stats = fid_details(FeatureStats.from_features(x), FeatureStats.from_features(y))
    assert via_features.value == pytest.approx(via_stats.value, rel=1e-8)
    assert via_features.n_real == 20 and via_features.n_fake == 25


def test_fid_basic_properties_and_errors():
    rng = np.random.default_rng(9)
    x, y = rng.normal(size=(200, 5)), rng.normal(1, 2, size=(150, 5))
    assert fid(x, x) == 0.0
    assert fid(x, y) == pytest.approx(fid(y, x), rel=1e-9)
    with pytest.raises(InputError, match="feature dimension"):
        fid(x, y[:, :4])
    with pytest.raises(InputError, match="NaN"):
        fid(np.where(np.eye(200, 5) == 1, np.nan, x), y)
    a = FeatureStats.from_features(x, extractor="sha256:aaa")
    b = FeatureStats.from_features(y, extractor="sha256:bbb")
    with pytest.raises(InputError, match="different extractors"):
        fid(a, b)
    assert fid_details(a, y).extractor == "sha256:aaa"


def test_feature_stats_streaming_is_exact_where_naive_float32_fails():
    rng = np.random.default_rng(10)
    x = (rng.normal(size=(100_000, 8)) + 1000.0).astype(np.float32)
    truth = np.cov(x.astype(np.float64), rowvar=False)
    # Textbook accumulation in float32: sum of x x^T minus n mu mu^T.
    s, m = np.zeros((8, 8), np.float32), np.zeros(8, np.float32)
    stats = FeatureStats.empty(8)
    for start in range(0, len(x), 1000):
        batch = x[start:start + 1000]
        s += batch.T @ batch
        m += batch.sum(axis=0)
        stats = stats.update(batch)
    n = len(x)
    naive = (s - n * np.outer(m / n, m / n)) / (n - 1)
    assert np.max(np.abs(np.diag(naive) / np.diag(truth) - 1)) > 0.10
    np.testing.assert_allclose(stats.cov, truth, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(stats.mean, x.astype(np.float64).mean(axis=0), rtol=1e-14)


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 40), st.integers(1, 39), st.integers(0, 1000))
def test_feature_stats_merge_matches_whole(n, cut, seed):
    x = np.random.default_rng(seed).normal(3.0, 2.0, size=(n, 3))
    cut = min(cut, n - 1)
    merged = FeatureStats.from_features(x[:cut]) + FeatureStats.from_features(x[cut:])
    whole = FeatureStats.from_features(x, chunk_size=7)
    assert merged.n == n
    np.testing.assert_allclose(merged.mean, x.mean(axis=0), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(merged.m2, whole.m2, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(whole.cov, np.cov(x, rowvar=False), rtol=1e-9, atol=1e-12)


def test_sfid_and_mifid():
    rng = np.random.default_rng(11)
    r, g = rng.normal(size=(120, 6)), rng.normal(0.5, 1, size=(100, 6))
    assert sfid(r, g) == fid(r, g)
    ru, gu = _unit(r), _unit(g)
    d = np.mean(np.min(1 - np.abs(gu @ ru.T), axis=1))
    assert memorization_distance(r, g) == pytest.approx(d, rel=1e-12)
    expected = fid(r, g) / ((d if d < 0.1 else 1.0) + 1e-15)
    assert mifid(r, g) == pytest.approx(expected, rel=1e-12)
    assert mifid(r, g, eps=d / 2) == pytest.approx(fid(r, g), rel=1e-12)  # no memorisation penalty


# --- KID / IS ------------------------------------------------------------------------------

def test_mmd2_unbiased_matches_explicit_sums():
    rng = np.random.default_rng(12)
    x, y = rng.normal(size=(6, 3)), rng.normal(size=(6, 3))

    def k(a, b):
        return (a @ b / 3 + 1) ** 3

    m = 6
    xx = sum(k(x[i], x[j]) for i in range(m) for j in range(m) if i != j) / (m * (m - 1))
    yy = sum(k(y[i], y[j]) for i in range(m) for j in range(m) if i != j) / (m * (m - 1))
    xy = sum(k(x[i], y[j]) for i in range(m) for j in range(m)) / m ** 2
    assert mmd2_unbiased(x, y) == pytest.approx(xx + yy - 2 * xy, rel=1e-12)
    assert kid(x, y, n_subsets=3, subset_size=6) == pytest.approx(xx + yy - 2 * xy, rel=1e-12)


@pytest.mark.parametrize("m, n", [(100, 50), (7, 12), (2, 3)])
def test_mmd2_unbiased_unequal_sizes_is_the_u_statistic(m, n):
    # Gretton et al. (2012) eq. 3 by a direct double loop; 100 vs 50 rows gave 0.425
    # (both within sums divided by m(m-1)) where the U-statistic is about -0.09.
    rng = np.random.default_rng(21)
    x, y = rng.normal(size=(m, 3)), rng.normal(size=(n, 3))

    def k(a, b):
        return (a @ b / 3 + 1) ** 3

    xx = sum(k(x[i], x[j]) for i in range(m) for j in range(m) if i != j) / (m * (m - 1))
    yy = sum(k(y[i], y[j]) for i in range(n) for j in range(n) if i != j) / (n * (n - 1))
    xy = sum(k(x[i], y[j]) for i in range(m) for j in range(n)) / (m * n)
    assert mmd2_unbiased(x, y) == pytest.approx(xx + yy - 2 * xy, rel=1e-12, abs=1e-13)
    assert mmd2_unbiased(y, x) == pytest.approx(xx + yy - 2 * xy, rel=1e-12, abs=1e-13)
    with pytest.raises(InputError):
        mmd2_unbiased(x, y[:, :2])


def test_kid_same_distribution_near_zero_and_seeded():
    rng = np.random.default_rng(13)
    a, b = rng.normal(size=(300, 16)), rng.normal(size=(300, 16))
    same = kid_details(a, b, n_subsets=20, subset_size=150, seed=1)
    assert abs(same.mean) < 3 * same.std / math.sqrt(20) + 1e-3
    # Identical sets: independent subsets share ~m^2/n points, each pulling the unbiased
    # estimate down by about 2 k(x, x) / m^2 (a bias of about -2 E k(x, x) / n = -16 / 300
    # here), so "about 0" means small next to a real shift.
    identical = kid(a, a, n_subsets=20, subset_size=100)
    assert abs(identical) < 0.1
    assert kid(a, b + 1.0, n_subsets=20, subset_size=150) > 0.5
    assert kid_details(a, b, n_subsets=3, seed=4) == kid_details(a, b, n_subsets=3, seed=4)


def test_inception_score_values():
    p = np.eye(5)[np.arange(50) % 5]
    assert inception_score(p, n_splits=5, seed=None) == pytest.approx(5.0)
    assert inception_score(np.full((30, 3), 1 / 3), n_splits=3) == pytest.approx(1.0)
    rng = np.random.default_rng(14)
    probs = rng.dirichlet(np.ones(10) * 0.3, size=200)
    r = inception_score_details(probs, n_splits=4, seed=None)
    parts = np.split(probs, 4)
    expected = [math.exp(np.mean(np.sum(s * (np.log(s) - np.log(s.mean(0))), axis=1))) for s in parts]
    assert r.mean == pytest.approx(np.mean(expected), rel=1e-12)
    assert r.std == pytest.approx(np.std(expected), rel=1e-10)
    with pytest.raises(InputError, match="sum"):
        inception_score(probs * 0.5)


def _is_salimans(probs, splits):
    """Inception Score as Salimans et al.'s code: part = preds[i*N//splits:(i+1)*N//splits]."""
    n, scores = probs.shape[0], []
    for i in range(splits):
        part = probs[i * n // splits:(i + 1) * n // splits]
        py = part.mean(axis=0)
        scores.append(math.exp(np.mean([np.sum(pyx * (np.log(pyx) - np.log(py))) for pyx in part])))
    return np.mean(scores), np.std(scores)


@pytest.mark.parametrize("n, splits", [(1003, 10), (57, 10), (200, 4)])
def test_inception_score_unshuffled_uses_the_original_split_boundaries(n, splits):
    # np.array_split put the remainder into the first splits: N=1003 gave 5.5503 vs 5.5444.
    rng = np.random.default_rng(22)
    probs = rng.dirichlet(np.ones(10) * 0.3, size=n)
    mean, std = _is_salimans(probs, splits)
    r = inception_score_details(probs, n_splits=splits, seed=None)
    assert r.mean == pytest.approx(mean, rel=1e-12)
    assert r.std == pytest.approx(std, rel=1e-9)


# --- precision / recall / density / coverage ------------------------------------------------

@pytest.mark.parametrize("k", [3, 5])
def test_prdc_matches_prdc_package(k):
    prdc = pytest.importorskip("prdc")
    rng = np.random.default_rng(15)
    real, fake = rng.normal(size=(400, 16)), rng.normal(0.2, 1.1, size=(300, 16))
    ref = prdc.compute_prdc(real_features=real, fake_features=fake, nearest_k=k)
    ours = manifold_metrics(real, fake, k=k, chunk_size=64)
    for name in ("precision", "recall", "density", "coverage"):
        assert getattr(ours, name) == pytest.approx(ref[name], abs=1e-12), name
    assert precision(real, fake, k=k) == ours.precision
    assert recall(real, fake, k=k) == ours.recall
    assert density(real, fake, k=k) == ours.density
    assert coverage(real, fake, k=k) == ours.coverage


def test_prdc_chunking_and_defaults():
    rng = np.random.default_rng(16)
    real, fake = rng.normal(size=(150, 4)), rng.normal(size=(130, 4))
    whole = manifold_metrics(real, fake, k=4, chunk_size=10_000)
    assert manifold_metrics(real, fake, k=4, chunk_size=7) == whole
    assert scorebench.metric("precision").params["k"] == 3
    assert scorebench.metric("density").params["k"] == 5
    with pytest.raises(InputError, match="nearest"):
        precision(real[:3], fake, k=3)
    part = manifold_metrics(real, fake, which=("recall",))
    assert math.isnan(part.precision) and not math.isnan(part.recall)


@pytest.mark.parametrize("dim", [16, 256])
@pytest.mark.parametrize("offset", [0.0, 1e6])
def test_prdc_exact_duplicates_are_exact_and_chunk_independent(dim, offset):
    # 150 points, 6 exact copies each, k = 5: every real radius is 0, every generated
    # sample sits on 6 real points, so precision = recall = coverage = 1 and density = 6/5.
    # The GEMM distance gave ~1e-15 for duplicates: recall 0.9889 / density 1.19978 with
    # chunk_size=7, and different numbers for every chunk size.
    rng = np.random.default_rng(1)
    real = np.repeat(rng.normal(size=(150, dim)) * 3 + offset, 6, axis=0)
    fake = rng.permutation(real)
    for chunk in (1, 7, 64, 1024):
        r = manifold_metrics(real, fake, k=5, chunk_size=chunk)
        assert (r.precision, r.recall, r.density, r.coverage) == (1.0, 1.0, 1.2, 1.0), chunk
    np.testing.assert_array_equal(knn_radii(real, 5, chunk_size=7), 0.0)
    # prdc's balls are open (d < radius), so with radius 0 its precision and density are 0,
    # or near 0 where its floating-point distances of exact copies come out as tiny nonzero
    # values (that depends on the BLAS build: 1/60 was seen on one machine);
    # scorebench follows Kynkaanniemi et al.'s closed balls (the module docstring).
    prdc = pytest.importorskip("prdc")
    ref = prdc.compute_prdc(real_features=real[:120], fake_features=fake[:60], nearest_k=5)
    assert ref["precision"] < 0.1 and ref["density"] < 0.1


def test_prdc_results_do_not_move_with_a_common_offset_or_chunk_size():
    prdc = pytest.importorskip("prdc")
    rng = np.random.default_rng(17)
    real, fake = rng.normal(size=(300, 8)), rng.normal(0.3, 1.2, size=(250, 8))
    ref = prdc.compute_prdc(real_features=real, fake_features=fake, nearest_k=4)  # no ties: prdc is right
    for offset in (0.0, 1e6, -3e7):
        for chunk in (7, 1024):
            r = manifold_metrics(real + offset, fake + offset, k=4, chunk_size=chunk)
            for name in ("precision", "recall", "density", "coverage"):
                assert getattr(r, name) == pytest.approx(ref[name], abs=1e-12), (offset, chunk, name)
    np.testing.assert_allclose(knn_radii(real + 1e6, 4), knn_radii(real, 4), rtol=1e-7)


# --- GREAT ---------------------------------------------------------------------------------

def test_great_score_values():
    p = np.array([[0.7, 0.2, 0.1], [0.1, 0.5, 0.4], [0.6, 0.3, 0.1]])
    y = np.array([0, 1, 2])
    g = great_score(y, p)
    np.testing.assert_allclose(g, math.sqrt(math.pi / 2) * np.array([0.5, 0.1, 0.0]), atol=1e-15)
    with pytest.raises(InputError, match="class indices"):
        great_score([0, 1, 3], p)
    with pytest.raises(InputError, match="one label per row"):
        great_score([0, 1], p)


def test_sample_based_metrics_refuse_feature_stats():
    x = np.random.default_rng(17).normal(size=(40, 3))
    with pytest.raises(InputError, match="FeatureStats"):
        mifid(FeatureStats.from_features(x), x)
    with pytest.raises(InputError, match="FeatureStats"):
        kid(x, FeatureStats.from_features(x))
    with pytest.raises(InputError, match=r"\(>= 2\)"):
        FeatureStats.from_moments(np.zeros(2), np.eye(2), 1)
