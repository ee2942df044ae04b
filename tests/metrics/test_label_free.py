"""Label-free accuracy estimation: MaNo, average confidence, DoC, and their evaluation."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from scipy.special import softmax

from scorebench.core.errors import InputError
from scorebench.metrics import label_free as lf


def _shifted_sets(seed=0, shifts=(0.3, 0.6, 1.0, 1.5, 2.5, 4.0), n=400, k=5):
    """Logits whose class signal weakens with the shift, so accuracy falls."""
    rng = np.random.default_rng(seed)
    sets = {}
    for shift in shifts:
        y = rng.integers(0, k, n)
        logits = 4.0 * np.eye(k)[y] / shift + rng.normal(size=(n, k))
        sets[f"shift={shift}"] = (logits, y)
    return sets


def _mano_reference(z, p, kind, order=2):
    if kind == "softmax":
        probs = softmax(z, axis=1)
    else:
        v = sum(z**j / np.prod(np.arange(1, j + 1)) for j in range(order + 1))
        v = v - v.min(axis=1, keepdims=True)
        probs = v / v.sum(axis=1, keepdims=True)
    return np.linalg.norm(probs.ravel(), ord=p) / (z.size ** (1 / p))


@pytest.mark.parametrize("p", [1.0, 2.0, 4.0, 6.5])
@pytest.mark.parametrize("kind", ["softmax", "taylor"])
def test_mano_matches_matrix_norm_definition(p, kind):
    z = np.random.default_rng(1).normal(scale=2.0, size=(60, 7))
    assert lf.mano_score(z, p=p, normalization=kind) == pytest.approx(_mano_reference(z, p, kind), rel=1e-12)


def test_mano_taylor_order_and_softrun_criterion():
    z = np.random.default_rng(2).normal(size=(30, 4))
    assert lf.mano_score(z, normalization="taylor", taylor_order=3) == pytest.approx(
        _mano_reference(z, 4, "taylor", order=3), rel=1e-12)
    # criterion = mean cross-entropy between the uniform distribution and the softmax
    for scale, expected in ((0.5, "taylor"), (40.0, "softmax")):
        logits = scale * z
        criterion = np.mean(-np.log(softmax(logits, axis=1)).mean(axis=1))
        assert (criterion > 5.0) == (expected == "softmax")
        assert lf.mano_score(logits) == pytest.approx(lf.mano_score(logits, normalization=expected))
    # a row of equal logits maps to zeros under the shifted Taylor normalisation
    assert lf.mano_score([[1.0, 1.0], [2.0, 2.0]], normalization="taylor") == 0.0


def test_mano_bounds_and_errors():
    one_hot = np.array([[50.0, 0.0, 0.0], [0.0, 50.0, 0.0]])
    # a confident matrix has one entry 1 per row: (N / (N K))^(1/p)
    assert lf.mano_score(one_hot, p=4) == pytest.approx((1 / 3) ** 0.25)
    with pytest.raises(InputError, match="normalization"):
        lf.mano_score(one_hot, normalization="sparsemax")
    with pytest.raises(InputError, match="K >= 2"):
        lf.mano_score([[1.0], [2.0]])
    with pytest.raises(InputError, match="p"):
        lf.mano_score(one_hot, p=0.5)


def test_accuracy_confidence_and_doc_toy_values():
    z = np.array([[2.0, 0.0], [0.0, 0.0], [0.0, 3.0]])
    assert lf.accuracy(z, [0, 1, 1]) == pytest.approx(2 / 3)  # argmax of a tie is class 0
    assert lf.average_confidence(z) == pytest.approx(softmax(z, axis=1).max(axis=1).mean())
    src, src_y = np.array([[3.0, 0.0], [0.0, 3.0], [3.0, 0.0]]), np.array([0, 1, 1])
    target = np.array([[1.0, 0.0], [0.0, 0.5]])
    drop = lf.average_confidence(src) - lf.average_confidence(target)
    assert lf.difference_of_confidences(src, target) == pytest.approx(drop)
    assert lf.doc_accuracy(src, src_y, target) == pytest.approx(2 / 3 - drop)
    with pytest.raises(InputError, match="class range"):
        lf.accuracy(z, [0, 1, 2])
    with pytest.raises(InputError, match="one label per row"):
        lf.accuracy(z, [0, 1])


def test_evaluate_label_free_correlates_with_accuracy():
    sets = _shifted_sets()
    source = _shifted_sets(seed=9, shifts=(0.3,))["shift=0.3"]
    res = lf.evaluate_label_free(sets, source=source)
    table = res.per_set
    assert list(table.columns) == ["set", "n", "accuracy", "mano", "average_confidence", "doc"]
    assert table["accuracy"].is_monotonic_decreasing
    for _, row in table.iterrows():
        logits, y = sets[row["set"]]
        assert row["accuracy"] == pytest.approx(np.mean(logits.argmax(1) == y))
        assert row["mano"] == pytest.approx(lf.mano_score(logits))
        assert row["doc"] == pytest.approx(lf.doc_accuracy(*source, logits))
    corr = res.correlation.set_index("method")
    for method in ("mano", "average_confidence", "doc"):
        est = table[method].to_numpy()
        truth = table["accuracy"].to_numpy()
        assert corr.loc[method, "pearson"] == pytest.approx(stats.pearsonr(est, truth)[0], abs=1e-12)
        assert corr.loc[method, "spearman"] == pytest.approx(stats.spearmanr(est, truth)[0], abs=1e-12)
        assert corr.loc[method, "kendall_tau"] == pytest.approx(stats.kendalltau(est, truth)[0], abs=1e-12)
        assert corr.loc[method, "r2"] == pytest.approx(corr.loc[method, "pearson"] ** 2)
        assert corr.loc[method, "spearman"] > 0.9
        assert corr.loc[method, "n_sets"] == 6


def test_evaluate_label_free_inputs():
    sets = list(_shifted_sets(shifts=(0.5, 1.0, 2.0)).values())
    res = lf.evaluate_label_free(sets, methods=["mano"])
    assert list(res.per_set["set"]) == ["0", "1", "2"]
    assert list(res.correlation["method"]) == ["mano"]
    assert "doc" not in lf.evaluate_label_free(sets).correlation["method"].tolist()
    with pytest.raises(InputError, match="source"):
        lf.evaluate_label_free(sets, methods=["doc"])
    with pytest.raises(InputError, match="three"):
        lf.evaluate_label_free(sets[:2])
    with pytest.raises(InputError, match="method"):
        lf.evaluate_label_free(sets, methods=["atc"])
    with pytest.raises(InputError, match="pair"):
        lf.evaluate_label_free([sets[0][0]] * 3)
    same = [sets[0]] * 3  # identical sets: accuracy is constant, correlation undefined
    with pytest.raises(InputError, match="constant"):
        lf.evaluate_label_free(same)
