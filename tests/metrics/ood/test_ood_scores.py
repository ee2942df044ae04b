"""Post-hoc OOD score functions: reference formulas, brute force, and detection quality."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import cdist
from scipy.special import logsumexp, softmax
from sklearn.metrics import roc_auc_score

from scorebench.core.errors import InputError
from scorebench.metrics import ood_scores as osc


def _logits(seed=0, n=50, k=6):
    return np.random.default_rng(seed).normal(scale=3.0, size=(n, k))


def _gaussian_classes(seed=0, n_per=100, d=8, k=3, spread=4.0):
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=spread, size=(k, d))
    mixing = rng.normal(size=(d, d)) / np.sqrt(d) + np.eye(d)
    x = np.concatenate([centres[c] + rng.normal(size=(n_per, d)) @ mixing for c in range(k)])
    return x, np.repeat(np.arange(k), n_per), centres, mixing


@pytest.mark.parametrize("t", [1.0, 0.5, 3.0])
def test_logit_scores_match_scipy(t):
    z = _logits()
    np.testing.assert_allclose(osc.msp_score(z, temperature=t), softmax(z / t, axis=1).max(axis=1), rtol=1e-12)
    np.testing.assert_allclose(osc.energy_score(z, temperature=t), t * logsumexp(z / t, axis=1), rtol=1e-12)
    np.testing.assert_array_equal(osc.max_logit_score(z), z.max(axis=1))


def test_logit_scores_stable_for_large_logits_and_errors():
    z = np.array([[1000.0, 0.0], [-1000.0, -1000.0]])
    assert osc.msp_score(z).tolist() == [1.0, 0.5]
    assert osc.energy_score(z)[0] == pytest.approx(1000.0)
    with pytest.raises(InputError, match="temperature"):
        osc.energy_score(z, temperature=0.0)
    with pytest.raises(InputError, match="NaN"):
        osc.msp_score([[np.nan, 1.0]])
    with pytest.raises(InputError, match="dimension"):
        osc.msp_score([1.0, 2.0])


def test_mahalanobis_matches_brute_force():
    x, y, _, _ = _gaussian_classes()
    test = np.random.default_rng(1).normal(scale=5.0, size=(20, x.shape[1]))
    means = np.stack([x[y == c].mean(axis=0) for c in range(3)])
    centred = x - means[y]
    precision = np.linalg.inv(centred.T @ centred / x.shape[0])
    brute = -np.min(cdist(test, means, metric="mahalanobis", VI=precision) ** 2, axis=1)
    np.testing.assert_allclose(osc.mahalanobis_score(test, x, y), brute, rtol=1e-9)


def test_mahalanobis_rank_deficient_covariance():
    rng = np.random.default_rng(2)
    x = np.c_[rng.normal(size=(30, 2)), np.zeros(30)]  # third dimension never varies
    s = osc.mahalanobis_score(np.array([[0.0, 0.0, 0.0], [4.0, 4.0, 0.0]]), x, np.zeros(30))
    assert s[0] > s[1]
    with pytest.raises(InputError, match="single point"):
        osc.mahalanobis_score(np.ones((1, 2)), np.array([[1.0, 2.0], [3.0, 4.0]]), [0, 1])


@pytest.mark.parametrize("k", [1, 5])
def test_knn_matches_brute_force_and_chunks(k, monkeypatch):
    rng = np.random.default_rng(3)
    train, test = rng.normal(size=(200, 5)), rng.normal(size=(37, 5))
    tn = train / np.linalg.norm(train, axis=1, keepdims=True)
    xn = test / np.linalg.norm(test, axis=1, keepdims=True)
    brute = -np.sort(cdist(xn, tn), axis=1)[:, k - 1]
    np.testing.assert_allclose(osc.knn_score(test, train, k=k), brute, atol=1e-9)
    monkeypatch.setattr(osc, "_CHUNK_ELEMENTS", 450)  # two test rows per chunk
    np.testing.assert_allclose(osc.knn_score(test, train, k=k), brute, atol=1e-9)
    raw = -np.sort(cdist(test, train), axis=1)[:, k - 1]
    np.testing.assert_allclose(osc.knn_score(test, train, k=k, normalize=False), raw, atol=1e-9)
    with pytest.raises(InputError, match="exceeds"):
        osc.knn_score(test, train[:3], k=4)


def _conjnorm_reference(test, train, labels, p, t):
    """Independent re-derivation: numeric gradient of phi = 0.5 ||mu||_q^2."""
    q = p / (p - 1)

    def normalise(v):
        return v / np.linalg.norm(v, ord=p, axis=-1, keepdims=True)

    def phi(v):
        return 0.5 * np.sum(np.abs(v) ** q) ** (2 / q)

    protos = normalise(np.stack([train[labels == c].mean(axis=0) for c in np.unique(labels)]))
    grads = []
    for mu in protos:
        eps = 1e-6
        grads.append([(phi(mu + eps * e) - phi(mu - eps * e)) / (2 * eps) for e in np.eye(mu.size)])
    grads = np.array(grads)

    def log_kernel(z):
        zn = normalise(z)
        return (zn @ grads.T - np.array([[phi(r)] for r in zn])) / t

    log_z = logsumexp(log_kernel(train), axis=0)
    return logsumexp(log_kernel(test) - log_z, axis=1)


@pytest.mark.parametrize("p", [2.0, 1.5, 3.0])
def test_conjnorm_matches_independent_derivation(p):
    x, y, _, _ = _gaussian_classes(seed=4, n_per=30, d=5)
    test = np.random.default_rng(5).normal(scale=4.0, size=(10, 5))
    got = osc.conjnorm_score(test, x, y, p=p, temperature=0.5)
    np.testing.assert_allclose(got, _conjnorm_reference(test, x, y, p, 0.5), rtol=1e-6, atol=1e-6)


def test_conjnorm_p2_is_cosine_prototype_density():
    x, y, _, _ = _gaussian_classes(seed=6, n_per=40, d=4)
    test = np.random.default_rng(7).normal(size=(8, 4))
    t = 0.1
    protos = np.stack([x[y == c].mean(axis=0) for c in range(3)])
    protos /= np.linalg.norm(protos, axis=1, keepdims=True)
    unit = lambda v: v / np.linalg.norm(v, axis=1, keepdims=True)  # noqa: E731
    log_z = logsumexp((unit(x) @ protos.T - 0.5) / t, axis=0)
    expected = logsumexp((unit(test) @ protos.T - 0.5) / t - log_z, axis=1)
    np.testing.assert_allclose(osc.conjnorm_score(test, x, y, p=2.0, temperature=t), expected, rtol=1e-10)
    with pytest.raises(InputError, match="p"):
        osc.conjnorm_score(test, x, y, p=1.0)


def test_feature_scores_detect_far_ood():
    x, y, centres, mixing = _gaussian_classes(seed=8, d=6)
    rng = np.random.default_rng(9)
    id_test = np.concatenate([centres[c] + rng.normal(size=(40, 6)) @ mixing for c in range(3)])
    ood_test = rng.normal(scale=4.0, size=(120, 6)) + 6.0 * rng.choice([-1, 1], size=(120, 6))
    is_ood = np.r_[np.zeros(len(id_test)), np.ones(len(ood_test))]
    both = np.r_[id_test, ood_test]
    for scores in (osc.mahalanobis_score(both, x, y), osc.knn_score(both, x, k=5, normalize=False),
                   osc.conjnorm_score(both, x, y, p=2.0, temperature=0.1)):
        # confidence scores: higher = in-distribution, so -score ranks OOD first
        assert roc_auc_score(is_ood, -scores) > 0.8


def test_feature_score_input_errors():
    x = np.ones((4, 3))
    with pytest.raises(InputError, match="dimensions"):
        osc.mahalanobis_score(np.ones((2, 2)), x, [0, 0, 1, 1])
    with pytest.raises(InputError, match="one label per training row"):
        osc.conjnorm_score(np.ones((2, 3)), x, [0, 1])
    with pytest.raises(InputError, match="all zero"):
        osc.conjnorm_score(np.zeros((1, 3)), x + np.arange(3), [0, 0, 1, 1])


def test_score_norms_and_msma_gmm():
    rng = np.random.default_rng(10)
    scores = rng.normal(size=(4, 30, 2, 3))  # L=4 scales, n=30 inputs of shape (2, 3)
    norms = osc.score_norms(scores)
    np.testing.assert_allclose(norms, np.linalg.norm(scores.reshape(4, 30, -1), axis=2).T)

    class Extractor:  # a stand-in score network: norms grow with the distance from the data
        def __call__(self, inputs):
            r = np.linalg.norm(inputs, axis=1, keepdims=True)
            return (1.0 + r) * np.array([[1.0, 2.0, 4.0]])

    assert isinstance(Extractor(), osc.ScoreNormExtractor)
    train = rng.normal(size=(300, 2))
    det = osc.MultiScaleScoreNormGMM(Extractor(), n_components=2, seed=0).fit(train)
    test = np.r_[rng.normal(size=(100, 2)), rng.normal(size=(100, 2)) + 6.0]
    s = det.score(test)
    assert roc_auc_score(np.r_[np.zeros(100), np.ones(100)], -s) > 0.95
    again = osc.MultiScaleScoreNormGMM(Extractor(), n_components=2, seed=0).fit(train).score(test)
    np.testing.assert_array_equal(s, again)
    with pytest.raises(InputError, match="fit"):
        osc.MultiScaleScoreNormGMM().score(np.ones((2, 3)))
    with pytest.raises(InputError, match="noise scales"):
        osc.MultiScaleScoreNormGMM(n_components=1).fit(np.abs(rng.normal(size=(20, 3))) + 0.1).score(np.ones((2, 4)))
    with pytest.raises(InputError, match="extractor"):
        osc.MultiScaleScoreNormGMM("not callable")
