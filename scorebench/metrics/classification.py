"""Accuracy and label-based classification metrics.

* The ``correct`` table kind: one row per (system, item) answer scored right (1) or wrong (0),
  what lm-eval's per-sample ``acc`` and ChemBench's result matrices hold. ``accuracy`` is its
  mean; :func:`scorebench.evaluate` gives it a Wilson interval (a proportion; see
  :mod:`scorebench.analysis.stats_tests`) and :func:`scorebench.compare` offers McNemar's test.
* On the ``multiclass`` kind (``y``, ``p_<class>``): the predicted label is the most probable
  class (the first one on a tie, as :func:`numpy.argmax` and scikit-learn's ``predict``), and
  ``argmax_accuracy``, ``top_k_accuracy@k``, ``balanced_accuracy``, ``f1_macro``,
  ``f1_micro``, ``f1_weighted`` and ``mcc`` follow scikit-learn's definitions. The
  set-level ones reduce through the confusion matrix (sufficient statistics), so their
  bootstrap and the Dask engine never recompute labels.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.core.registry import register
from scorebench.core.tables import Column, Inputs, declared_column, register_kind, start_table, unit_frame
from scorebench.core.validation import show_value

__all__ = ["extract_correct", "accuracy", "argmax_accuracy", "top_k_accuracy", "balanced_accuracy",
           "f1_macro", "f1_micro", "f1_weighted", "mcc", "confusion_matrix"]

_FAMILY = "classification"
_SKLEARN = "scikit-learn's sklearn.metrics definitions (Pedregosa et al. 2011, JMLR 12)"


@register_kind("correct", columns=(Column("correct", "binary", "1 = right, 0 = wrong"),
                                   Column("id", "label", "the item; pairs answers across systems", required=False)))
def extract_correct(df: pd.DataFrame, *, nan_policy: str = "raise") -> Inputs:
    """Answers scored right (1) or wrong (0), one row per system and item."""
    df, key = start_table(df, "correct", ["correct"], nan_policy)
    return Inputs(unit_frame(df, key), {"correct": declared_column(df, "correct", "correct", nan_policy)}, key=key)


@register("accuracy", family=_FAMILY, kind="correct", inputs=("correct",), higher_is_better=True,
          bounds=(0.0, 1.0), proportion=True, citation="the share of items answered right",
          tested_against=(('scikit-learn', 1e-12), ('statsmodels', 1e-12),))
def accuracy(correct: Any, /) -> np.ndarray:
    r"""Accuracy: per-item right (1) / wrong (0); the table value is their mean.

    .. math:: \mathrm{acc} = \frac{1}{n}\sum_{i=1}^{n} c_i, \quad c_i \in \{0, 1\}

    A proportion: :func:`scorebench.evaluate` gives it a Wilson score interval by default.

    Examples
    --------
    >>> accuracy([1, 0, 1, 1]).mean()
    np.float64(0.75)
    """
    c = np.asarray(correct, dtype=np.float64)
    bad = ~np.isnan(c) & (c != 0.0) & (c != 1.0)
    if bad.any():
        raise InputError(f"accuracy: expected 0/1 outcomes, got {show_value(c[bad][0])}")
    return c


def _labels(y: Any, P: Any) -> tuple[np.ndarray, np.ndarray]:
    P = np.asarray(P, dtype=np.float64)
    y = np.asarray(y)
    if P.ndim != 2 or y.shape != (P.shape[0],):
        raise InputError(f"expected labels (n,) and probabilities (n, K); got {y.shape} and {P.shape}")
    if y.size and (y.min() < 0 or y.max() >= P.shape[1] or not np.all(y == np.round(y))):
        raise InputError(f"labels must be class indices 0..{P.shape[1] - 1}")
    return y.astype(np.int64), P


@register("argmax_accuracy", family=_FAMILY, kind="multiclass", inputs=("y", "P"), higher_is_better=True,
          bounds=(0.0, 1.0), proportion=True, citation=_SKLEARN + ": accuracy_score(y, P.argmax(1))",
          tested_against=(('scikit-learn', 1e-12), ('statsmodels', 1e-12),))
def argmax_accuracy(y: Any, P: Any, /) -> np.ndarray:
    r"""Accuracy of the most probable class (first on a tie), per row: :math:`[\arg\max_k P_{ik} = y_i]`.

    Examples
    --------
    >>> argmax_accuracy([0, 1], [[0.6, 0.4], [0.7, 0.3]]).tolist()
    [1.0, 0.0]
    """
    y, P = _labels(y, P)
    return (P.argmax(axis=1) == y).astype(np.float64)


@register("top_k_accuracy@k", family=_FAMILY, kind="multiclass", inputs=("y", "P"), higher_is_better=True,
          bounds=(0.0, 1.0), proportion=True, params={"k": None},
          citation=_SKLEARN + ": top_k_accuracy_score",
          tested_against=(('scikit-learn', 1e-12), ('statsmodels', 1e-12),))
def top_k_accuracy(y: Any, P: Any, /, *, k: int | None = None) -> np.ndarray:
    r"""Whether the true class is among the ``k`` most probable, per row.

    .. math:: \Big[\,1 + \#\{j : P_{ij} > P_{i y_i}\} \le k\,\Big]

    Classes tied with the true class do not push it out (scikit-learn breaks such ties by
    a sort order instead; the two agree whenever probabilities are distinct).

    Examples
    --------
    >>> top_k_accuracy([2, 0], [[0.5, 0.3, 0.2], [0.1, 0.2, 0.7]], k=2).tolist()
    [0.0, 0.0]
    """
    y, P = _labels(y, P)
    if k is None or not isinstance(k, (int, np.integer)) or k < 1:
        raise InputError(f"top_k_accuracy needs an integer k >= 1 (e.g. top_k_accuracy@5), got {k!r}")
    truth = P[np.arange(y.size), y]
    return ((P > truth[:, None]).sum(axis=1) < k).astype(np.float64)


# --- confusion-matrix metrics ---------------------------------------------------------


def _confusion_partial(arrays: Any, weights: Any = None) -> np.ndarray:
    """Flattened K x K confusion counts [true, predicted], under row weights (R, n) when given."""
    y, P = _labels(arrays["y"], arrays["P"])
    k = P.shape[1]
    cell = y * k + P.argmax(axis=1)
    if weights is None:
        return np.bincount(cell, minlength=k * k).astype(np.float64)
    w = np.asarray(weights, dtype=np.float64)
    order = np.argsort(cell, kind="stable")
    cells, starts = np.unique(cell[order], return_index=True)
    out = np.zeros((w.shape[0], k * k))
    if cells.size:
        out[:, cells] = np.add.reduceat(w[:, order], starts, axis=1)
    return out


def _square(stats: Any) -> np.ndarray:
    stats = np.asarray(stats, dtype=np.float64)
    k = int(round(np.sqrt(stats.shape[-1])))
    return stats.reshape(*stats.shape[:-1], k, k)


def _per_class(stats: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """True positives, true counts, predicted counts and the mask of labels present in y or predictions."""
    c = _square(stats)
    tp = np.diagonal(c, axis1=-2, axis2=-1)
    true, pred = c.sum(axis=-1), c.sum(axis=-2)
    return tp, true, pred, (true + pred) > 0


def _balanced_finalize(stats: Any) -> np.ndarray:
    tp, true, _, _ = _per_class(stats)
    present = true > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        recall = np.where(present, tp / np.where(present, true, 1.0), 0.0)
        return recall.sum(axis=-1) / present.sum(axis=-1)


def _f1(stats: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    tp, true, pred, present = _per_class(stats)
    denom = true + pred
    f1 = np.where(present, 2 * tp / np.where(present, denom, 1.0), 0.0)
    return f1, true, present


def _f1_macro_finalize(stats: Any) -> np.ndarray:
    f1, _, present = _f1(stats)
    with np.errstate(invalid="ignore", divide="ignore"):
        return f1.sum(axis=-1) / present.sum(axis=-1)


def _f1_micro_finalize(stats: Any) -> np.ndarray:
    tp, true, _, _ = _per_class(stats)
    with np.errstate(invalid="ignore", divide="ignore"):
        return tp.sum(axis=-1) / true.sum(axis=-1)


def _f1_weighted_finalize(stats: Any) -> np.ndarray:
    f1, true, _ = _f1(stats)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (f1 * true).sum(axis=-1) / true.sum(axis=-1)


def _mcc_finalize(stats: Any) -> np.ndarray:
    tp, true, pred, _ = _per_class(stats)
    s = true.sum(axis=-1)
    cov_tp = tp.sum(axis=-1) * s - (true * pred).sum(axis=-1)
    cov_tt = s * s - (true * true).sum(axis=-1)
    cov_pp = s * s - (pred * pred).sum(axis=-1)
    denom = cov_tt * cov_pp
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denom > 0, cov_tp / np.sqrt(np.where(denom > 0, denom, 1.0)), 0.0)


def confusion_matrix(y: Any, P: Any, /) -> np.ndarray:
    """Confusion counts ``C[true, predicted]`` (K x K) with the argmax prediction.

    Examples
    --------
    >>> confusion_matrix([0, 1, 1], [[0.9, 0.1], [0.8, 0.2], [0.3, 0.7]]).tolist()
    [[1.0, 0.0], [1.0, 1.0]]
    """
    return _square(_confusion_partial({"y": y, "P": P}))


def _scalar(finalize: Any, y: Any, P: Any) -> float:
    return float(finalize(_confusion_partial({"y": y, "P": P})))


_SET = dict(family=_FAMILY, kind="multiclass", inputs=("y", "P"), higher_is_better=True, per_row=False,
            partial=_confusion_partial)


@register("balanced_accuracy", bounds=(0.0, 1.0), finalize=_balanced_finalize,
          citation="Brodersen et al. (2010), ICPR; " + _SKLEARN + ": balanced_accuracy_score", **_SET,
          tested_against=(('scikit-learn', 1e-12), ('statsmodels', 1e-12),))
def balanced_accuracy(y: Any, P: Any, /) -> float:
    r"""Mean recall over the classes present in ``y`` (argmax predictions).

    .. math:: \frac{1}{|K_y|}\sum_{k \in K_y} \frac{C_{kk}}{\sum_j C_{kj}}

    Examples
    --------
    >>> balanced_accuracy([0, 0, 0, 1], [[0.9, 0.1], [0.8, 0.2], [0.6, 0.4], [0.7, 0.3]])
    0.5
    """
    return _scalar(_balanced_finalize, y, P)


@register("f1_macro", bounds=(0.0, 1.0), finalize=_f1_macro_finalize,
          citation=_SKLEARN + ": f1_score(average='macro')", **_SET,
          tested_against=(('scikit-learn', 1e-12), ('statsmodels', 1e-12),))
def f1_macro(y: Any, P: Any, /) -> float:
    r"""Unweighted mean of per-class F1 over the labels present in ``y`` or the predictions.

    .. math:: F_1^{(k)} = \frac{2\,TP_k}{2\,TP_k + FP_k + FN_k}

    Examples
    --------
    >>> round(f1_macro([0, 0, 1, 1], [[0.9, 0.1], [0.4, 0.6], [0.3, 0.7], [0.2, 0.8]]), 4)
    0.7333
    """
    return _scalar(_f1_macro_finalize, y, P)


@register("f1_micro", bounds=(0.0, 1.0), finalize=_f1_micro_finalize,
          citation=_SKLEARN + ": f1_score(average='micro')", **_SET, tested_against=('scikit-learn', 1e-12))
def f1_micro(y: Any, P: Any, /) -> float:
    r"""F1 from the pooled counts; for single-label multiclass data it equals the accuracy.

    .. math:: \frac{2\sum_k TP_k}{2\sum_k TP_k + \sum_k FP_k + \sum_k FN_k} = \frac{\sum_k C_{kk}}{n}

    Examples
    --------
    On single-label data every wrong row is one false positive (its predicted class) and one
    false negative (its true class), so micro-F1 is the share of correct rows:

    >>> y = [0, 1, 2, 2]
    >>> P = [[0.6, 0.3, 0.1], [0.5, 0.4, 0.1], [0.1, 0.2, 0.7], [0.2, 0.5, 0.3]]
    >>> f1_micro(y, P), float(argmax_accuracy(y, P).mean())
    (0.5, 0.5)
    """
    return _scalar(_f1_micro_finalize, y, P)


@register("f1_weighted", bounds=(0.0, 1.0), finalize=_f1_weighted_finalize,
          citation=_SKLEARN + ": f1_score(average='weighted')", **_SET, tested_against=('scikit-learn', 1e-12))
def f1_weighted(y: Any, P: Any, /) -> float:
    r"""Per-class F1 averaged with weights equal to the true counts (support).

    .. math:: \sum_k \frac{n_k}{n} F_1^{(k)}

    Examples
    --------
    >>> round(f1_weighted([0, 0, 0, 1], [[0.9, 0.1], [0.4, 0.6], [0.3, 0.7], [0.2, 0.8]]), 4)
    0.5
    """
    return _scalar(_f1_weighted_finalize, y, P)


@register("mcc", bounds=(-1.0, 1.0), finalize=_mcc_finalize,
          citation="Matthews (1975); Gorodkin (2004), Comput. Biol. Chem. 28(5); " + _SKLEARN
                   + ": matthews_corrcoef", **_SET, tested_against=(('scikit-learn', 1e-12), ('statsmodels', 1e-12),))
def mcc(y: Any, P: Any, /) -> float:
    r"""Matthews correlation coefficient (Gorodkin's multiclass form); 0 when undefined.

    .. math:: \frac{c\,s - \sum_k p_k t_k}{\sqrt{(s^2 - \sum_k p_k^2)(s^2 - \sum_k t_k^2)}}

    with :math:`c` correct predictions, :math:`s` rows, :math:`t_k` true and :math:`p_k`
    predicted counts of class k.

    Examples
    --------
    >>> mcc([0, 0, 1, 1], [[0.9, 0.1], [0.8, 0.2], [0.3, 0.7], [0.2, 0.8]])
    1.0
    """
    return _scalar(_mcc_finalize, y, P)
