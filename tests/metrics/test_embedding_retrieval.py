"""Embedding retrieval metrics: Recall@k, R-precision, MAP@R vs pytorch-metric-learning, chunking, tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import scorebench
from scorebench.core.errors import InputError
from scorebench.metrics.embedding_retrieval import map_at_r, r_precision, recall_at_k, retrieval_per_query


def data(seed: int, n: int = 150, dim: int = 6, classes: int = 12, signal: float = 1.0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, classes, n)
    centres = rng.normal(size=(classes, dim))
    X = signal * centres[y] + rng.normal(size=(n, dim))
    y[0] = classes + 5  # a lone label: never a query, still a distractor
    return y, X


def brute_force(y, X, metric="cosine"):
    """Per-query hits by a full argsort of an n x n matrix (ties: lower index first)."""
    if metric == "cosine":
        Z = X / np.linalg.norm(X, axis=1, keepdims=True)
        sims = Z @ Z.T
    else:
        sims = -((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(sims, -np.inf)
    order = np.lexsort((np.broadcast_to(np.arange(len(y)), sims.shape), -sims), axis=1)[:, :-1]
    return y[order] == y[:, None]


@pytest.mark.parametrize("metric", ["cosine", "euclidean"])
def test_against_brute_force(metric):
    y, X = data(1, signal=0.8)
    hits = brute_force(y, X, metric)
    R = np.array([(y == label).sum() - 1 for label in y])
    q = R > 0
    for k in (1, 2, 4, 8):
        assert recall_at_k(y, X, k=k, metric=metric) == pytest.approx(hits[q, :k].any(1).mean())
    rp = np.mean([hits[i, :R[i]].mean() for i in np.flatnonzero(q)])
    ap = np.mean([(hits[i, :R[i]] * np.cumsum(hits[i, :R[i]]) / np.arange(1, R[i] + 1)).sum() / R[i]
                  for i in np.flatnonzero(q)])
    assert r_precision(y, X, metric=metric) == pytest.approx(rp)
    assert map_at_r(y, X, metric=metric) == pytest.approx(ap)


@pytest.mark.parametrize("seed", [0, 2])
@pytest.mark.parametrize("metric", ["cosine", "euclidean"])
def test_against_pytorch_metric_learning_accuracy_calculator(seed, metric):
    torch = pytest.importorskip("torch")
    accuracy = pytest.importorskip("pytorch_metric_learning.utils.accuracy_calculator")
    inference = pytest.importorskip("pytorch_metric_learning.utils.inference")
    distances = pytest.importorskip("pytorch_metric_learning.distances")
    y, X = data(seed, signal=0.7)
    distance = distances.CosineSimilarity() if metric == "cosine" else distances.LpDistance(normalize_embeddings=False)
    calc = accuracy.AccuracyCalculator(include=("precision_at_1", "r_precision", "mean_average_precision_at_r"),
                                       k="max_bin_count", knn_func=inference.CustomKNN(distance),
                                       device=torch.device("cpu"))
    theirs = calc.get_accuracy(torch.tensor(X), torch.tensor(y), ref_includes_query=True)
    assert recall_at_k(y, X, k=1, metric=metric) == pytest.approx(theirs["precision_at_1"], abs=1e-12)
    assert r_precision(y, X, metric=metric) == pytest.approx(theirs["r_precision"], abs=1e-12)
    assert map_at_r(y, X, metric=metric) == pytest.approx(theirs["mean_average_precision_at_r"], abs=1e-12)


def test_chunking_does_not_change_values():
    y, X = data(3)
    for measure in ("recall", "r_precision", "map_at_r"):
        whole, counted = retrieval_per_query(y, X, measure=measure, k=3)
        for chunk in (1, 7, 1000):
            part, _ = retrieval_per_query(y, X, measure=measure, k=3, chunk_size=chunk)
            np.testing.assert_array_equal(part, whole)
        assert not counted[0] and counted[1:].any()


def test_toy_values_and_invariances():
    X = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9], [0.6, 0.55]])
    y = ["a", "a", "b", "b", "b"]
    assert recall_at_k(y, X, k=1) == pytest.approx(0.8)
    assert recall_at_k(y, X, k=2) == pytest.approx(1.0)
    assert r_precision(y, X) == pytest.approx(0.9)
    assert map_at_r(y, X) == pytest.approx(0.85)
    # cosine ignores scale; a rotation changes nothing
    theta = 0.7
    rot = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])
    assert map_at_r(y, 3.0 * X @ rot) == pytest.approx(map_at_r(y, X))
    perfect = np.repeat(np.eye(3), 3, axis=0) + 0.01 * np.arange(9)[:, None]
    labels = np.repeat([0, 1, 2], 3)
    assert map_at_r(labels, perfect) == 1.0 and r_precision(labels, perfect) == 1.0


def test_bad_inputs_raise():
    y, X = data(0, n=20)
    with pytest.raises(InputError, match="one label"):
        recall_at_k(y[:5], X)
    with pytest.raises(InputError, match="k"):
        recall_at_k(y, X, k=0)
    with pytest.raises(InputError, match="occurs once"):
        map_at_r(np.arange(20), X)
    with pytest.raises(InputError, match="zero vectors"):
        recall_at_k(y, np.vstack([np.zeros(X.shape[1]), X[1:]]))
    with pytest.raises(InputError, match="finite|NaN"):
        recall_at_k(y, np.where(X > 1.5, np.nan, X))
    with pytest.raises(InputError, match="metric"):
        recall_at_k(y, X, metric="manhattan")


def test_evaluate_embeddings_table_per_system_gallery():
    y, X = data(4, n=80)
    frames = []
    for system, noise in (("good", 0.1), ("bad", 3.0)):
        rng = np.random.default_rng(5)
        Z = X + noise * rng.normal(size=X.shape)
        frame = pd.DataFrame(Z, columns=[f"f{j}" for j in range(X.shape[1])])
        frame["label"] = y
        frame["system"] = system
        frames.append(frame)
    table = pd.concat(frames, ignore_index=True)
    out = scorebench.evaluate(table, ["embedding_recall@4", "map_at_r", "r_precision"], n_boot=200, seed=1)
    got = out.set_index(["system", "metric"])
    for system, frame in zip(("good", "bad"), frames):
        Z = frame[[f"f{j}" for j in range(X.shape[1])]].to_numpy()
        assert got.loc[(system, "embedding_recall@4"), "value"] == pytest.approx(recall_at_k(y, Z, k=4))
        assert got.loc[(system, "map_at_r"), "value"] == pytest.approx(map_at_r(y, Z))
        row = got.loc[(system, "map_at_r")]
        assert row["ci_low"] <= row["value"] <= row["ci_high"]
        assert row["n"] == 79  # the lone-label item is a distractor, not a query
    assert got.loc[("good", "map_at_r"), "value"] > got.loc[("bad", "map_at_r"), "value"]


def test_embedding_column_form_equals_feature_columns():
    y, X = data(6, n=40)
    wide = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])]).assign(label=y)
    vectors = pd.DataFrame({"label": y, "embedding": list(X)})
    a = scorebench.evaluate(wide, ["map_at_r"], n_boot=20)["value"].item()
    b = scorebench.evaluate(vectors, ["map_at_r"], n_boot=20)["value"].item()
    assert a == b == pytest.approx(map_at_r(y, X))
    ragged = pd.DataFrame({"label": [0, 0, 1], "embedding": [[1.0, 0.0], [0.0, 1.0], [1.0]]})
    with pytest.raises(InputError, match="length"):
        scorebench.evaluate(ragged, ["map_at_r"], n_boot=20)
    with pytest.raises(InputError, match="f0, f1"):
        scorebench.evaluate(pd.DataFrame({"label": [0, 0]}), ["map_at_r"], kind="embeddings", n_boot=20)


def test_retrieval_scores_one_pass_equals_the_single_metrics():
    from scorebench.metrics.embedding_retrieval import retrieval_scores

    y, X = data(7)
    s = retrieval_scores(y, X, ks=(1, 3, 5), chunk_size=17)
    assert s.recall == {k: pytest.approx(recall_at_k(y, X, k=k)) for k in (1, 3, 5)}
    assert s.r_precision == pytest.approx(r_precision(y, X))
    assert s.map_at_r == pytest.approx(map_at_r(y, X))
    assert s.n_queries == len(y) - 1
    with pytest.raises(InputError, match="ks"):
        retrieval_scores(y, X, ks=(0,))


@pytest.mark.parametrize("metric", ["cosine", "euclidean"])
@pytest.mark.parametrize("layout", ["random", "sorted_by_label", "duplicates", "near_ties", "few_classes"])
def test_float32_screen_gives_the_exact_float64_ranking(metric, layout):
    # The neighbour search screens in float32 and re-ranks candidates in float64; the order
    # of the returned neighbours must be exactly the float64 order with ties by lower index.
    from scorebench.metrics.embedding_retrieval import _prepare, _top_hits

    rng = np.random.default_rng(11)
    n, dim = 400, 16
    y = rng.integers(0, 3 if layout == "few_classes" else 40, n)
    X = rng.normal(size=(40, dim))[y] + rng.normal(size=(n, dim))
    if layout == "sorted_by_label":
        order = np.argsort(y, kind="stable")
        y, X = y[order], X[order]
    elif layout == "duplicates":
        X[1::3] = X[0::3][: len(X[1::3])]  # exact copies: ties broken by index
    elif layout == "near_ties":
        # float32 cannot separate these neighbours (gaps ~1e-7), float64 can
        X[1::2] = X[0::2] + 1e-7 * rng.normal(size=X[0::2].shape)
    codes, Z = _prepare(y, X, metric)
    R = np.bincount(codes)[codes] - 1
    depth = int(R.max())
    if metric == "cosine":
        sims = Z @ Z.T
    else:
        sims = 2.0 * (Z @ Z.T) - np.einsum("ij,ij->i", Z, Z)[None, :]
    np.fill_diagonal(sims, -np.inf)
    expected = np.lexsort((np.broadcast_to(np.arange(n), sims.shape), -sims), axis=1)[:, :depth]
    got = np.concatenate([hits for _, hits in _top_hits(codes, Z, np.arange(n), depth, metric, 37)])
    np.testing.assert_array_equal(got, codes[expected] == codes[:, None])


def test_threaded_chunks_give_the_single_thread_result():
    # chunks run in parallel threads when BLAS has several; the result must not depend on it
    from threadpoolctl import threadpool_limits

    from scorebench.metrics.embedding_retrieval import retrieval_scores

    y, X = data(5, n=900, dim=8, classes=30)
    threaded = retrieval_scores(y, X, ks=(1, 4), chunk_size=50)
    with threadpool_limits(limits=1, user_api="blas"):
        single = retrieval_scores(y, X, ks=(1, 4), chunk_size=50)
    assert threaded == single


@pytest.mark.parametrize("k", [1, 5, 20])
def test_ndcg_matches_scikit_learn_per_query(k):
    from sklearn.metrics import ndcg_score

    from scorebench.metrics.embedding_retrieval import ndcg_at_k

    y, X = data(7, n=200, dim=6, classes=10)
    Z = X / np.linalg.norm(X, axis=1, keepdims=True)
    sims = Z @ Z.T
    expected = []
    for i in range(len(y)):
        others = np.arange(len(y)) != i
        relevant = (y[others] == y[i]).astype(float)
        if relevant.any():  # continuous similarities: no ties, so tie handling does not matter
            expected.append(ndcg_score([relevant], [sims[i, others]], k=k))
    assert ndcg_at_k(y, X, k=k) == pytest.approx(np.mean(expected), rel=1e-12)
    table = pd.DataFrame({"system": "s", "label": y, **{f"f{j}": X[:, j] for j in range(X.shape[1])}})
    scores = scorebench.evaluate(table, f"embedding_ndcg@{k}", n_boot=0)
    assert scores.value.item() == pytest.approx(np.mean(expected), rel=1e-12)
