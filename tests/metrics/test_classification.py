"""The ``correct`` kind, accuracy with proportion intervals, and label metrics on the multiclass kind."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn import metrics as skm
from statsmodels.stats.proportion import proportion_confint

import scorebench
from scorebench.core.errors import InputError
from scorebench.metrics import classification as C

LABEL_METRICS = {
    "balanced_accuracy": lambda y, pred: skm.balanced_accuracy_score(y, pred),
    "f1_macro": lambda y, pred: skm.f1_score(y, pred, average="macro"),
    "f1_micro": lambda y, pred: skm.f1_score(y, pred, average="micro"),
    "f1_weighted": lambda y, pred: skm.f1_score(y, pred, average="weighted"),
    "mcc": lambda y, pred: skm.matthews_corrcoef(y, pred),
}


def _multiclass(rng, n, k, labels=None):
    P = rng.dirichlet(np.full(k, 0.7), size=n)
    y = rng.integers(0, k, n) if labels is None else rng.choice(labels, n)
    return y, P


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("k,n,labels", [(2, 7, None), (3, 200, None), (6, 80, [0, 2, 3]), (10, 500, None)])
def test_label_metrics_match_sklearn(rng, k, n, labels):
    # labels=[0, 2, 3]: classes that never occur as labels (but may be predicted) must be
    # handled exactly as scikit-learn does (present in predictions only).
    y, P = _multiclass(rng, n, k, labels)
    pred = P.argmax(axis=1)
    for name, ref in LABEL_METRICS.items():
        np.testing.assert_allclose(scorebench.metric(name).fn(y, P), ref(y, pred), rtol=0, atol=1e-12, err_msg=name)
    np.testing.assert_allclose(C.argmax_accuracy(y, P).mean(), skm.accuracy_score(y, pred), atol=1e-12)
    if k > 2:
        for top in (1, 2, 3):
            np.testing.assert_allclose(C.top_k_accuracy(y, P, k=top).mean(),
                                       skm.top_k_accuracy_score(y, P, k=top, labels=list(range(k))), atol=1e-12)


def test_mcc_degenerate_is_zero_like_sklearn():
    y = np.array([0, 1, 1])
    P = np.array([[0.9, 0.1]] * 3)  # always predicts class 0
    assert C.mcc(y, P) == skm.matthews_corrcoef(y, P.argmax(1)) == 0.0


def test_argmax_ties_take_first_class_and_top_k_ties_favour_truth():
    P = np.array([[0.4, 0.4, 0.2]])
    assert C.argmax_accuracy([0], P).tolist() == [1.0] and C.argmax_accuracy([1], P).tolist() == [0.0]
    assert C.top_k_accuracy([1], P, k=1).tolist() == [1.0]  # tied with the top: not pushed out
    with pytest.raises(InputError, match="top_k_accuracy needs"):
        C.top_k_accuracy([0], P)


def test_confusion_sufficient_statistics_match_resampling(rng):
    # The bootstrap goes through weighted confusion counts; a weight vector of counts must
    # give exactly the metric of the resample it stands for.
    y, P = _multiclass(rng, 60, 4)
    idx = rng.integers(0, 60, 60)
    w = np.bincount(idx, minlength=60)[None, :].astype(float)
    for name in LABEL_METRICS:
        record = scorebench.metric(name)
        batched = record.finalize_stats(record.partial_stats({"y": y, "P": P}, w))
        np.testing.assert_allclose(batched[0], record.fn(y[idx], P[idx]), atol=1e-12, err_msg=name)


def test_label_metrics_through_evaluate(rng):
    y, P = _multiclass(rng, 90, 3)
    t = pd.DataFrame({"system": "s", "id": np.arange(90), "y": y, **{f"p_{c}": P[:, c] for c in range(3)}})
    scores = scorebench.evaluate(t, ["argmax_accuracy", "f1_macro", "mcc", "top_k_accuracy@2"], n_boot=200, seed=1)
    got = scores.set_index("metric")
    np.testing.assert_allclose(got.loc["f1_macro", "value"], skm.f1_score(y, P.argmax(1), average="macro"), atol=1e-12)
    assert (got["ci_low"] <= got["value"]).all() and (got["value"] <= got["ci_high"]).all()


def _correct_table(rng, n=40, p=(0.8, 0.6)):
    return pd.concat([pd.DataFrame({"system": s, "id": np.arange(n), "correct": (rng.random(n) < q).astype(int)})
                      for s, q in zip("ab", p)], ignore_index=True)


@pytest.mark.parametrize("how", ["wilson", "jeffreys"])
def test_accuracy_interval_matches_statsmodels(rng, how):
    t = _correct_table(rng)
    scores = scorebench.evaluate(t, "accuracy", proportion_interval=how)
    for row in scores.itertuples():
        k = int(t.loc[t.system == row.system, "correct"].sum())
        low, high = proportion_confint(k, 40, alpha=0.05, method=how)
        np.testing.assert_allclose([row.ci_low, row.ci_high], [low, high], rtol=1e-12)
        assert row.value == k / 40
    assert "accuracy:" in scores.attrs["interval"] and how in scores.attrs["interval"]


def test_all_right_gets_an_interval_not_a_point(rng):
    t = pd.DataFrame({"system": "a", "id": range(20), "correct": 1})
    wilson = scorebench.evaluate(t, "accuracy").iloc[0]
    boot = scorebench.evaluate(t, "accuracy", proportion_interval="bootstrap").iloc[0]
    assert boot.ci_low == boot.ci_high == 1.0  # the percentile bootstrap degenerates
    np.testing.assert_allclose(wilson.ci_low, proportion_confint(20, 20, method="wilson")[0], rtol=1e-12)
    assert wilson.ci_low < 0.85 and wilson.ci_high == 1.0
    jeff = scorebench.evaluate(t, "accuracy", proportion_interval="jeffreys").iloc[0]
    assert jeff.ci_high == 1.0  # boundary modification (statsmodels leaves 0.99995)


def test_correct_kind_validation():
    bad = pd.DataFrame({"system": "a", "id": [1, 2], "correct": [1, 2]})
    with pytest.raises(InputError, match="column 'correct': value 2"):
        scorebench.evaluate(bad, "accuracy")
    dup = pd.DataFrame({"system": "a", "id": [1, 1], "correct": [1, 0]})
    with pytest.raises(InputError, match="duplicate ids"):
        scorebench.evaluate(dup, "accuracy")


def test_wilson_coverage_beats_bootstrap_at_small_n():
    # Coverage of the 95% interval for p = 0.9, n = 20 over 2000 draws (Monte Carlo sd ~0.5%).
    rng = np.random.default_rng(3)
    k = rng.binomial(20, 0.9, 2000)
    from scorebench.analysis.stats_tests import wilson_interval

    cover = np.mean([lo <= 0.9 <= hi for lo, hi in (wilson_interval(x, 20) for x in k)])
    assert 0.92 <= cover <= 0.99


def test_cluster_bootstrap_interval_in_evaluate(rng):
    t = _correct_table(rng, n=60)
    t["passage"] = t["id"] // 4
    plain = scorebench.evaluate(t, "accuracy")
    clustered = scorebench.evaluate(t, "accuracy", cluster="passage", seed=2)
    assert "cluster bootstrap" in clustered.attrs["interval"]
    np.testing.assert_allclose(clustered["value"], plain["value"])
    with pytest.raises(InputError, match="cluster: column 'nope'"):
        scorebench.evaluate(t, "accuracy", cluster="nope")


def test_dask_engine_gives_the_same_wilson_interval(rng):
    dd = pytest.importorskip("dask.dataframe")
    t = _correct_table(rng, n=50)
    local = scorebench.evaluate(t, "accuracy")
    spread = scorebench.evaluate(dd.from_pandas(t, npartitions=3), "accuracy")
    np.testing.assert_allclose(spread[["value", "ci_low", "ci_high"]], local[["value", "ci_low", "ci_high"]],
                               rtol=1e-12)
    assert spread.attrs["interval"] == local.attrs["interval"] == "accuracy: wilson score interval"
