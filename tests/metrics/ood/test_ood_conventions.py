"""FPR95 and AUPR conventions of the OOD literature (issue 13, item 12).

The reference functions below are transcriptions of the published code: Outlier Exposure's
``fpr_and_fdr_at_recall`` (Hendrycks et al. 2019, utils/display_results.py) and OpenOOD
v1.5's ``auc_and_fpr_recall`` (openood/evaluators/metrics.py), both on scikit-learn curves.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn import metrics

from scorebench.core.errors import InputError
from scorebench.metrics.ood import aupr, aupr_in, aupr_out, fpr_at_95_tpr


def hendrycks_fpr_at_recall(y_true, y_score, recall_level=0.95):
    y_true = y_true == 1
    desc = np.argsort(y_score, kind="mergesort")[::-1]
    y_score, y_true = y_score[desc], y_true[desc]
    distinct = np.where(np.diff(y_score))[0]
    idx = np.r_[distinct, y_true.size - 1]
    tps = np.cumsum(y_true, dtype=np.float64)[idx]
    fps = 1 + idx - tps
    recall = tps / tps[-1]
    last_ind = tps.searchsorted(tps[-1])
    sl = slice(last_ind, None, -1)
    recall, fps = np.r_[recall[sl], 1], np.r_[fps[sl], 0]
    cutoff = np.argmin(np.abs(recall - recall_level))
    return fps[cutoff] / np.sum(np.logical_not(y_true))


def openood(conf, is_ood, tpr_th=0.95):
    fpr_list, tpr_list, _ = metrics.roc_curve(is_ood, -conf)
    fpr = fpr_list[np.argmax(tpr_list >= tpr_th)]
    precision_in, recall_in, _ = metrics.precision_recall_curve(1 - is_ood, conf)
    precision_out, recall_out, _ = metrics.precision_recall_curve(is_ood, -conf)
    return fpr, metrics.auc(recall_in, precision_in), metrics.auc(recall_out, precision_out)


def fixtures():
    rng = np.random.default_rng(0)
    for k in range(60):
        n_id, n_ood = int(rng.integers(3, 60)), int(rng.integers(3, 60))
        y = np.r_[np.zeros(n_id), np.ones(n_ood)]
        s = rng.normal(size=y.size) + 0.8 * y
        if k % 3 == 1:
            s = np.round(s, 1)  # ties
        if k % 3 == 2:
            s = rng.integers(0, 4, size=y.size).astype(float)  # heavy ties
        yield y, s


@pytest.mark.parametrize("level", [0.95, 0.9, 0.5])
def test_hendrycks_convention(level):
    for y, s in fixtures():
        # OE feeds in-distribution as positives with confidence scores: -score here.
        ref = hendrycks_fpr_at_recall(1 - y, -s, level)
        assert fpr_at_95_tpr(y, s, tpr=level, convention="hendrycks") == pytest.approx(ref, abs=1e-15)


@pytest.mark.parametrize("level", [0.95, 0.8])
def test_openood_convention_and_trapezoid_aupr(level):
    for y, s in fixtures():
        conf = -s  # OpenOOD postprocessors return confidences (higher = ID)
        f, a_in, a_out = openood(conf, y.astype(int), level)
        assert fpr_at_95_tpr(y, s, tpr=level, convention="openood") == pytest.approx(f, abs=1e-15)
        assert aupr_in(y, s, method="trapezoid") == pytest.approx(a_in, rel=1e-12)
        assert aupr_out(y, s, method="trapezoid") == pytest.approx(a_out, rel=1e-12)
        assert aupr(y, s, method="trapezoid") == pytest.approx(a_out, rel=1e-12)


def test_first_threshold_default_unchanged():
    for y, s in fixtures():
        fpr, tpr, _ = metrics.roc_curve(1 - y, -s, drop_intermediate=False)
        assert fpr_at_95_tpr(y, s) == pytest.approx(fpr[np.searchsorted(tpr, 0.95)], abs=1e-15)
        assert aupr(y, s) == pytest.approx(metrics.average_precision_score(y, s), rel=1e-12)


def test_conventions_differ_on_a_fixture():
    # 10 ID examples: recall 0.9 or 1.0. Hendrycks picks the closest, 0.9 (|0.9 - 0.95| is
    # 0.04999... in floating point), where no OOD example is accepted; the first-threshold
    # rule needs recall 1.0, which accepts the OOD example tied with the last ID one at 0.9;
    # OpenOOD flags all five OOD examples at threshold 0.9, which flags one ID example of ten.
    y = np.r_[np.zeros(10), np.ones(5)]
    s = np.r_[np.arange(10) / 10, 0.9, 2, 2, 2, 2]
    assert fpr_at_95_tpr(y, s) == 0.2
    assert fpr_at_95_tpr(y, s, convention="hendrycks") == 0.0 == hendrycks_fpr_at_recall(1 - y, -s)
    assert fpr_at_95_tpr(y, s, convention="openood") == 0.1 == openood(-s, y.astype(int))[0]


def test_bad_options():
    with pytest.raises(InputError, match="convention"):
        fpr_at_95_tpr([0, 1], [0.1, 0.2], convention="sklearn")
    with pytest.raises(InputError, match="method"):
        aupr([0, 1], [0.1, 0.2], method="interp")
