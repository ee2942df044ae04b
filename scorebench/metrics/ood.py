"""Out-of-distribution (OOD) detection metrics from detector scores.

Table kind ``ood``: one row per test example with ``score`` (the detector's output) and
``is_ood`` (1 for an out-of-distribution example, 0 for an in-distribution one).

Conventions
-----------
* **Positive class = OOD.** ``auroc``, ``aupr`` (= ``aupr_out``) treat ``is_ood = 1`` as
  the positive class, so they equal scikit-learn's ``roc_auc_score(is_ood, score)`` and
  ``average_precision_score(is_ood, score)``. ``aupr_in`` is the same area with the
  in-distribution class as positive (``average_precision_score(1 - is_ood, -score)``).
* **Higher score = more OOD** in the metric functions. Post-hoc detectors (maximum
  softmax probability, energy, ... in :mod:`scorebench.metrics.ood_scores`) return
  *confidence* scores, higher = more in-distribution, as published; pass such scores
  with ``score_direction="id"`` (a kind option: ``evaluate(table, ..., kind="ood",
  score_direction="id")``) or negate them.
* ``fpr_at_95_tpr`` follows the OOD literature (Hendrycks & Gimpel 2017; Liang et al.
  2018): the fraction of OOD examples accepted as in-distribution at the threshold that
  accepts 95% of in-distribution examples.

All metrics are set-level (``per_row=False``) and exact with ties: the ROC curve has one
point per distinct score (as scikit-learn's ``roc_curve(..., drop_intermediate=False)``)
and the AUROC is the trapezoid area, which equals the Mann-Whitney probability
:math:`P(s_{ood} > s_{id}) + \\tfrac12 P(s_{ood} = s_{id})`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.core.registry import register
from scorebench.core.tables import Column, Inputs, Option, declared_column, unit_frame, start_table, numeric_column, register_kind
from scorebench.core.validation import as_float_array, check_binary, check_choice, check_finite, check_same_length
from scorebench.core.docstrings import fill_doc

__all__ = ["RocCurve", "roc_curve", "auroc", "aupr", "aupr_in", "aupr_out", "fpr_at_95_tpr",
           "detection_error", "extract_ood"]

_FAMILY = "ood"
_KIND = "ood"
_DIRECTIONS = ("ood", "id")
_CITE_HG = "Hendrycks & Gimpel (2017), A Baseline for Detecting Misclassified and OOD Examples, ICLR"

#: Docstring text shared by the AUPR variants (see :func:`scorebench.core.docstrings.fill_doc`).
_DOC_SECTIONS = {"trapezoid": """
``method="trapezoid"`` gives instead the trapezoid area under the precision-recall
points (``sklearn.metrics.auc(recall, precision)`` on ``precision_recall_curve``), as
OpenOOD (Yang et al. 2022; Zhang et al. 2023) reports AUPR; it differs from average
precision (linear rather than step interpolation). Outlier Exposure (Hendrycks et al.
2019) and the papers built on its code use average precision (the default).
"""}


@register_kind(_KIND, columns=(Column("score", "number", "the detector's score (higher = more OOD unless "
                                     "score_direction='id')"),
                              Column("is_ood", "binary", "1 = out-of-distribution, 0 = in-distribution")),
               options=(Option("score_direction", str, "ood", "which way the score points", choices=_DIRECTIONS,
                               flag=True),))
def extract_ood(df: pd.DataFrame, *, nan_policy: str = "raise", score_direction: str = "ood") -> Inputs:
    """Detector scores with the OOD label of each example.

    ``score_direction="id"`` declares scores where higher means *more in-distribution*
    (maximum softmax probability, energy confidence); they are negated on extraction.
    """
    check_choice(score_direction, "score_direction", _DIRECTIONS)
    df, key = start_table(df, _KIND, ["score", "is_ood"], nan_policy)
    nan_ok = nan_policy == "propagate"
    score = numeric_column(df, "score", nan_ok=nan_ok)
    is_ood = declared_column(df, _KIND, "is_ood", nan_policy)
    if score_direction == "id":
        score = -score
    return Inputs(unit_frame(df, key), {"score": score, "is_ood": is_ood},
                  {"score_direction": score_direction}, key=key)


@dataclass(frozen=True)
class RocCurve:
    """ROC curve over the distinct thresholds, positive class = ``positive``.

    Attributes
    ----------
    fpr, tpr : ndarray
        False and true positive rates, starting at (0, 0) and ending at (1, 1).
    thresholds : ndarray
        Score threshold of each point (predict positive when ``score >= threshold``);
        the first is ``+inf``.
    tps, fps : ndarray
        True and false positive counts at each point.
    """

    fpr: np.ndarray
    tpr: np.ndarray
    thresholds: np.ndarray
    tps: np.ndarray
    fps: np.ndarray

    @property
    def n_pos(self) -> int:
        return int(self.tps[-1])

    @property
    def n_neg(self) -> int:
        return int(self.fps[-1])


def _validate(is_ood: Any, score: Any) -> tuple[np.ndarray, np.ndarray]:
    y = as_float_array(is_ood, "is_ood", ndim=1)
    s = as_float_array(score, "score", ndim=1)
    check_same_length(is_ood=y, score=s)
    check_finite(y, "is_ood")
    check_finite(s, "score")
    check_binary(y, "is_ood", what="0 (in-distribution) or 1 (out-of-distribution)")
    n_pos = int(y.sum())
    if n_pos == 0 or n_pos == y.size:
        which = "in-distribution" if n_pos == 0 else "out-of-distribution"
        raise InputError(f"every example is {which}: detection metrics are undefined with a single class; "
                         "expected both OOD (is_ood = 1) and in-distribution (is_ood = 0) examples (a "
                         "bootstrap resample of a group with very few of one class can lose it: add "
                         "examples or pass n_boot=0)")
    return y, s


def roc_curve(is_ood: Any, score: Any, /) -> RocCurve:
    """The exact ROC curve, one point per distinct score, positive class ``is_ood = 1``.

    Examples
    --------
    >>> curve = roc_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    >>> curve.fpr.tolist(), curve.tpr.tolist()
    ([0.0, 0.0, 0.5, 0.5, 1.0], [0.0, 0.5, 0.5, 1.0, 1.0])
    """
    y, s = _validate(is_ood, score)
    return _curve(y, s)


def _curve(y: np.ndarray, s: np.ndarray) -> RocCurve:
    order = np.argsort(-s)  # order inside a tie block is irrelevant: counts are taken at block ends
    s_sorted, y_sorted = s[order], y[order]
    last = np.r_[np.flatnonzero(np.diff(s_sorted)), s_sorted.size - 1]  # end of each tie block
    tps = np.r_[0.0, np.cumsum(y_sorted)[last]]
    fps = np.r_[0.0, (last + 1) - tps[1:]]
    return RocCurve(fpr=fps / fps[-1], tpr=tps / tps[-1], thresholds=np.r_[np.inf, s_sorted[last]],
                    tps=tps, fps=fps)


_PR_METHODS = ("average_precision", "trapezoid")


def _average_precision(curve: RocCurve, method: str = "average_precision") -> float:
    check_choice(method, "method", _PR_METHODS)
    tps, fps = curve.tps[1:], curve.fps[1:]
    precision = tps / (tps + fps)
    if method == "trapezoid":
        # OpenOOD: sklearn.metrics.auc(recall, precision) on precision_recall_curve, whose
        # points are the distinct thresholds plus (recall 0, precision 1).
        return float(np.trapezoid(np.r_[1.0, precision], np.r_[0.0, curve.tpr[1:]]))
    # Step-wise area as scikit-learn: sum over thresholds of (R_k - R_{k-1}) P_k.
    recall_steps = np.diff(curve.tpr)
    return float((recall_steps * precision).sum())


@register("auroc", family=_FAMILY, kind=_KIND, inputs=("is_ood", "score"), higher_is_better=True,
          bounds=(0.0, 1.0), per_row=False, interval="percentile", citation=_CITE_HG, tested_against=('scikit-learn', 1e-12))
def auroc(is_ood: Any, score: Any, /) -> float:
    r"""Area under the ROC curve for detecting OOD examples (positive class: OOD).

    .. math:: \mathrm{AUROC} = \sum_k \tfrac12 (\mathrm{FPR}_k - \mathrm{FPR}_{k-1})
              (\mathrm{TPR}_k + \mathrm{TPR}_{k-1})
              = P(s_{ood} > s_{id}) + \tfrac12 P(s_{ood} = s_{id})

    over the distinct score thresholds (exact with ties). Higher score = more OOD.

    Examples
    --------
    >>> auroc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.75
    """
    curve = roc_curve(is_ood, score)
    return float(np.trapezoid(curve.tpr, curve.fpr))


@register("aupr_out", family=_FAMILY, kind=_KIND, inputs=("is_ood", "score"), higher_is_better=True,
          bounds=(0.0, 1.0), per_row=False, params={"method": "average_precision"}, citation=_CITE_HG, tested_against=('scikit-learn', 1e-12))
def aupr_out(is_ood: Any, score: Any, /, *, method: str = "average_precision") -> float:
    r"""Area under the precision-recall curve with OOD as the positive class.

    Average precision, the step-wise area
    :math:`\sum_k (R_k - R_{k-1}) P_k` over the distinct thresholds, as scikit-learn's
    ``average_precision_score(is_ood, score)``.

    %(trapezoid)s

    Examples
    --------
    >>> round(aupr_out([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]), 6)
    0.833333
    >>> round(aupr_out([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8], method="trapezoid"), 6)
    0.791667
    """
    return _average_precision(roc_curve(is_ood, score), method)


@register("aupr", family=_FAMILY, kind=_KIND, inputs=("is_ood", "score"), higher_is_better=True,
          bounds=(0.0, 1.0), per_row=False, params={"method": "average_precision"}, citation=_CITE_HG, tested_against=('scikit-learn', 1e-12))
def aupr(is_ood: Any, score: Any, /, *, method: str = "average_precision") -> float:
    r"""Area under the precision-recall curve, positive class OOD (same as :func:`aupr_out`).

    .. math:: \mathrm{AP} = \sum_k (R_k - R_{k-1})\, P_k

    %(trapezoid)s

    Examples
    --------
    >>> round(aupr([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]), 6)
    0.833333
    """
    return aupr_out(is_ood, score, method=method)


@register("aupr_in", family=_FAMILY, kind=_KIND, inputs=("is_ood", "score"), higher_is_better=True,
          bounds=(0.0, 1.0), per_row=False, params={"method": "average_precision"}, citation=_CITE_HG, tested_against=('scikit-learn', 1e-12))
def aupr_in(is_ood: Any, score: Any, /, *, method: str = "average_precision") -> float:
    r"""Area under the precision-recall curve with in-distribution as the positive class.

    Average precision of the labels ``1 - is_ood`` ranked by ``-score``:
    ``average_precision_score(1 - is_ood, -score)``.

    .. math:: \mathrm{AP}_{in} = \sum_k (R^{in}_k - R^{in}_{k-1})\, P^{in}_k

    %(trapezoid)s

    Examples
    --------
    >>> round(aupr_in([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]), 6)
    0.833333
    """
    y, s = _validate(is_ood, score)
    return _average_precision(_curve(1.0 - y, -s), method)


_FPR_CONVENTIONS = ("first", "hendrycks", "openood")


@register("fpr_at_95_tpr", family=_FAMILY, kind=_KIND, inputs=("is_ood", "score"), higher_is_better=False,
          bounds=(0.0, 1.0), per_row=False, params={"tpr": 0.95, "convention": "first"},
          citation="Liang, Li & Srikant (2018), ODIN, ICLR; " + _CITE_HG, tested_against=('scikit-learn', 1e-12))
def fpr_at_95_tpr(is_ood: Any, score: Any, /, *, tpr: float = 0.95, convention: str = "first") -> float:
    r"""False positive rate at 95% true positive rate (FPR95).

    ``convention="first"`` (default): with in-distribution examples as positives (accepted
    when ``score`` is low), take the first threshold of the exact ROC curve whose true
    positive rate reaches ``tpr`` and report the fraction of OOD examples accepted there:

    .. math:: \mathrm{FPR}@\tau = \mathrm{FPR}_{in}\big(\min\{k : \mathrm{TPR}_{in,k} \ge \tau\}\big)

    equal to ``fpr[np.searchsorted(tpr_curve, tpr)]`` of scikit-learn's
    ``roc_curve(1 - is_ood, -score, drop_intermediate=False)``: the definition of Liang
    et al. (2018, ODIN) and Lee et al. (2018, Mahalanobis).

    ``convention="hendrycks"``: ``fpr_and_fdr_at_recall`` of the Outlier Exposure code
    (Hendrycks, Mazeika & Dietterich 2019), also used by energy-based OOD (Liu et al.
    2020), ReAct (Sun et al. 2021), KNN (Sun et al. 2022) and others built on it:
    in-distribution positive, the curve is cut at the first threshold of full recall and
    the threshold whose recall is *closest* to ``tpr`` (``argmin |recall - tpr|``, first
    of equals in decreasing recall) is used, so the recall there can fall below ``tpr``.

    ``convention="openood"``: OpenOOD v1.5 (Zhang et al. 2023; ``auc_and_fpr_recall``):
    OOD is the positive class, and the metric is the fraction of *in-distribution*
    examples flagged as OOD at the first point of scikit-learn's default
    ``roc_curve(is_ood, score)`` (``drop_intermediate=True``) whose OOD true positive rate
    reaches ``tpr`` — the mirror image of the other two, so numbers are not comparable.

    Examples
    --------
    >>> fpr_at_95_tpr([0, 0, 0, 1, 1], [0.1, 0.2, 0.9, 0.5, 0.95])
    0.5
    >>> fpr_at_95_tpr([0, 0, 0, 1, 1], [0.1, 0.2, 0.9, 0.5, 0.95], convention="openood")
    0.3333333333333333
    """
    if isinstance(tpr, bool) or not isinstance(tpr, (int, float)) or not 0.0 < float(tpr) <= 1.0:
        raise InputError(f"tpr: expected a rate in (0, 1], got {tpr!r}")
    check_choice(convention, "convention", _FPR_CONVENTIONS)
    y, s = _validate(is_ood, score)
    if convention == "openood":
        curve = _curve(y, s)
        tps, fps = curve.tps[1:], curve.fps[1:]
        if len(fps) > 2:  # scikit-learn's drop_intermediate: keep only the corners
            keep = np.flatnonzero(np.r_[True, np.logical_or(np.diff(fps, 2), np.diff(tps, 2)), True])
            tps, fps = tps[keep], fps[keep]
        tpr_curve, fpr_curve = np.r_[0.0, tps] / tps[-1], np.r_[0.0, fps] / fps[-1]
        return float(fpr_curve[int(np.argmax(tpr_curve >= float(tpr)))])
    curve = _curve(1.0 - y, -s)
    if convention == "hendrycks":
        tps, fps = curve.tps[1:], curve.fps[1:]
        recall = tps / tps[-1]
        last = int(np.searchsorted(tps, tps[-1]))
        recall, fps = np.r_[recall[last::-1], 1.0], np.r_[fps[last::-1], 0.0]
        return float(fps[int(np.argmin(np.abs(recall - float(tpr))))] / curve.n_neg)
    k = int(np.searchsorted(curve.tpr, float(tpr), side="left"))
    return float(curve.fpr[k])


@register("detection_error", family=_FAMILY, kind=_KIND, inputs=("is_ood", "score"), higher_is_better=False,
          bounds=(0.0, 0.5), per_row=False, citation="Liang, Li & Srikant (2018), ODIN, ICLR", tested_against=('scikit-learn', 1e-12))
def detection_error(is_ood: Any, score: Any, /) -> float:
    r"""Minimum misclassification probability over thresholds, with equal class priors.

    .. math:: P_e = \min_t \tfrac12 \big(1 - \mathrm{TPR}(t)\big) + \tfrac12 \mathrm{FPR}(t)

    over every threshold of the exact ROC curve (including accept-all and reject-all,
    so :math:`P_e \le 0.5`). Symmetric in which class is called positive.

    Examples
    --------
    >>> detection_error([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.25
    """
    curve = roc_curve(is_ood, score)
    return float(np.min(0.5 * (1.0 - curve.tpr) + 0.5 * curve.fpr))


fill_doc(aupr_out, aupr, aupr_in, **_DOC_SECTIONS)
