"""ConjNorm ``variant="authors"`` and MaNo ``batch_size=`` against transcriptions of the authors' code
(issue 13, item 13): ConjNorm's ``run_cifar10_densenet.py`` (function ``dist`` and the score
lines; the random resampling of training rows left out) and MaNo's ``algs/mano.py``
(per-batch normalised norm, mean over batches), written here in NumPy.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from scorebench.core.errors import InputError
from scorebench.metrics.label_free import mano_score
from scorebench.metrics.ood_scores import conjnorm_score


def conjnorm_authors(test, train, labels, ord_def, t1):
    q = 1 / (1 - 1 / ord_def)
    normalizer = lambda x: x / (np.linalg.norm(x, ord=ord_def, axis=-1, keepdims=True) + 1e-10)  # noqa: E731

    def dist(a, b):
        return (-1 / 2 * (np.linalg.norm(a, ord=q, axis=-1, keepdims=True) + 1e-10) ** 2
                + np.dot(a, (b * np.abs(b) ** (q - 2) / (np.linalg.norm(b, ord=q, axis=-1, keepdims=True) + 1e-10)
                             ** (q - 2))))

    k_all = int(labels.max()) + 1
    protos = np.zeros((k_all, train.shape[1]))
    for k in range(k_all):
        mask_k = labels == k
        protos[k] = normalizer(np.mean(train * mask_k[:, None], axis=0))
    ftrain, ftest = normalizer(train), normalizer(test)
    score_log_exp = np.exp(dist(ftrain, protos.T) / t1)
    val = np.exp(dist(ftest, protos.T) / t1) / np.sum(score_log_exp, axis=0)
    return np.log(np.sum(val, axis=1) + 1e-15)


@pytest.mark.parametrize("p", [1.5, 2.0, 2.2, 3.0])
def test_conjnorm_authors_variant(p):
    rng = np.random.default_rng(int(p * 10))
    train = np.abs(rng.normal(size=(120, 6))) + rng.normal(size=(120, 6)) * 0.3
    labels = rng.integers(0, 4, size=120)
    test = rng.normal(size=(30, 6)) + 0.5
    got = conjnorm_score(test, train, labels, p=p, temperature=0.5, variant="authors")
    np.testing.assert_allclose(got, conjnorm_authors(test, train, labels, p, 0.5), rtol=1e-9, atol=1e-12)
    paper = conjnorm_score(test, train, labels, p=p, temperature=0.5)
    if p == 2.0:  # the q-norm placement does not matter for q = 2
        np.testing.assert_allclose(paper, got, rtol=1e-6)
    else:
        assert not np.allclose(paper, got, rtol=1e-6)


def test_conjnorm_variant_checked():
    with pytest.raises(InputError, match="variant"):
        conjnorm_score(np.ones((1, 2)), np.eye(2), [0, 1], variant="code")


def mano_authors(logits, p, batch, threshold=5.0):
    k = logits.shape[1]
    batches = [logits[i:i + batch] for i in range(0, len(logits), batch)]
    ce = [np.mean(math.log(1) + np.log(np.exp(b).sum(1)) - b.mean(1)) for b in batches]
    delta = float(np.mean(ce))
    scores = []
    for b in batches:
        if delta > threshold:
            out = np.exp(b) / np.exp(b).sum(1, keepdims=True)
        else:
            out = b + 1 + b**2 / 2
            out = out - out.min(1, keepdims=True)
            out = out / np.maximum(np.abs(out).sum(1, keepdims=True), 1e-12)
        scores.append(np.sum(np.abs(out) ** p) ** (1 / p) / (b.shape[0] * k) ** (1 / p))
    return float(np.mean(scores))


@pytest.mark.parametrize("scale", [0.5, 8.0])  # Taylor and softmax branches
@pytest.mark.parametrize("batch", [1, 7, 32, 1000])
def test_mano_batched_matches_authors(scale, batch):
    logits = np.random.default_rng(batch).normal(size=(101, 5)) * scale
    got = mano_score(logits, batch_size=batch)
    assert got == pytest.approx(mano_authors(logits, 4.0, batch), rel=1e-12)
    if batch >= 101:
        assert got == pytest.approx(mano_score(logits), rel=1e-12)


def test_mano_batch_size_checked():
    with pytest.raises(InputError, match="batch_size"):
        mano_score(np.ones((3, 2)), batch_size=0)
