"""Label-free accuracy estimation under distribution shift, from logits.

Estimators of a classifier's accuracy on an unlabelled test set: :func:`mano_score`
(MaNo, the normalised entry-wise p-norm of the softmax (or Taylor-softmax) matrix),
:func:`average_confidence` (AC, the mean maximum softmax probability) and the
difference of confidences (:func:`doc_accuracy`, DoC: source accuracy shifted by the
drop in average confidence). :func:`evaluate_label_free` compares them the way the
literature does: across several shifted test sets with known labels, how well does each
estimate correlate with the true accuracy?
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.core.validation import as_class_index, as_float_matrix, check_choice, check_positive_int
from scorebench.metrics.agreement import kendall_tau, pearson, spearman

__all__ = ["accuracy", "average_confidence", "difference_of_confidences", "doc_accuracy", "mano_score",
           "LabelFreeEvaluation", "evaluate_label_free", "ESTIMATORS"]

_NORMALIZATIONS = ("auto", "softmax", "taylor")


def _logits(x: Any, name: str = "logits") -> np.ndarray:
    return as_float_matrix(x, name, min_cols=2, cols="K", unit="classes")


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def accuracy(logits: Any, labels: Any, /) -> float:
    """Top-1 accuracy of ``argmax(logits)`` against integer class labels ``0..K-1``.

    Examples
    --------
    >>> accuracy([[2.0, 1.0], [0.0, 3.0]], [0, 0])
    0.5
    """
    z = _logits(logits)
    if np.shape(labels) != (z.shape[0],):
        raise InputError(f"labels: expected one label per row of logits ({z.shape[0]}), got shape {np.shape(labels)}")
    y = as_class_index(labels, z.shape[1], "labels", of="logits")
    return float(np.mean(z.argmax(axis=1) == y))


def average_confidence(logits: Any, /) -> float:
    r"""Average confidence (AC): the mean maximum softmax probability, an accuracy estimate.

    .. math:: \mathrm{AC} = \frac1N \sum_i \max_k \operatorname{softmax}(f(x_i))_k

    References
    ----------
    Hendrycks, D. & Gimpel, K. (2017). A baseline for detecting misclassified and
    out-of-distribution examples in neural networks. ICLR.

    Examples
    --------
    >>> round(average_confidence([[2.0, 0.0], [0.0, 0.0]]), 4)
    0.6904
    """
    return float(_softmax(_logits(logits)).max(axis=1).mean())


def difference_of_confidences(source_logits: Any, target_logits: Any, /) -> float:
    r"""Difference of confidences, :math:`\mathrm{AC}_{source} - \mathrm{AC}_{target}`.

    Examples
    --------
    >>> difference_of_confidences([[4.0, 0.0]], [[0.0, 0.0]]) > 0
    True
    """
    return average_confidence(source_logits) - average_confidence(target_logits)


def doc_accuracy(source_logits: Any, source_labels: Any, target_logits: Any, /) -> float:
    r"""DoC accuracy estimate: source accuracy minus the drop in average confidence.

    .. math:: \widehat{\mathrm{acc}}_{target} = \mathrm{acc}_{source}
              - (\mathrm{AC}_{source} - \mathrm{AC}_{target})

    References
    ----------
    Guillory, D., Shankar, V., Ebrahimi, S., Darrell, T. & Schmidt, L. (2021). Predicting
    with confidence on unseen distributions. ICCV.

    Examples
    --------
    >>> round(doc_accuracy([[3.0, 0.0], [0.0, 3.0]], [0, 1], [[1.0, 0.0], [0.0, 1.0]]), 4)
    0.7785
    """
    return accuracy(source_logits, source_labels) - difference_of_confidences(source_logits, target_logits)


def mano_score(logits: Any, /, *, p: float = 4.0, normalization: str = "auto", threshold: float = 5.0,
               taylor_order: int = 2, batch_size: int | None = None) -> float:
    r"""MaNo: the normalised entry-wise :math:`L_p` norm of the normalised logit matrix.

    Each logit vector :math:`q_i` is mapped onto the simplex by :math:`\sigma`, the rows
    fill :math:`P \in \mathbb R^{N \times K}` and

    .. math:: S = \frac{\lVert P \rVert_p}{(NK)^{1/p}}
              = \Big(\frac{1}{NK}\sum_{i,k} |P_{ik}|^p\Big)^{1/p}.

    :math:`\sigma` is the softmax when the data set looks confident, otherwise a Taylor
    softmax that does not amplify overconfident logits ("softrun"): with the criterion

    .. math:: \Phi = \frac1N \sum_i \Big(\log\sum_k e^{q_{ik}} - \frac1K\sum_k q_{ik}\Big)

    (the cross-entropy between the uniform distribution and the softmax),
    :math:`\Phi > \eta` selects the softmax, else
    :math:`v(q) = \sum_{j=0}^{n} q^j / j!` (order ``taylor_order``), shifted by its row
    minimum and divided by its row sum, as in the authors' implementation (a row of
    equal logits then maps to zeros).

    Parameters
    ----------
    logits : (N, K) array
        Logits of the unlabelled test set.
    p : float
        Norm order (the paper uses 4).
    normalization : {"auto", "softmax", "taylor"}
        ``"auto"`` is the paper's softrun criterion with threshold ``threshold``.
    threshold : float
        :math:`\eta` (5 in the paper).
    taylor_order : int
        Order of the Taylor expansion of the exponential (2 in the paper).
    batch_size : int or None
        ``None`` (default): the formula above on the whole set. An integer reproduces the
        authors' batched evaluation (``algs/mano.py`` of Renchunzi-Xie/MaNo): the rows are
        cut into consecutive batches of ``batch_size`` (the last one smaller), each batch
        :math:`b` gets :math:`\lVert P_b \rVert_p / (|b| K)^{1/p}` and the score is the
        unweighted mean over batches; the softrun criterion is likewise the mean of the
        per-batch criteria. Batches follow row order (the authors' loaders may shuffle,
        which makes their number random); the packaged ``src/mano`` version divides every
        batch by :math:`(NK)^{1/p}` instead, a different (batch-count dependent) scale.

    References
    ----------
    Xie, R., Odonnat, A., Feofanov, V., Deng, W., Zhang, J. & An, B. (2024). MaNo:
    Exploiting matrix norm for unsupervised accuracy estimation under distribution
    shifts. NeurIPS.

    Examples
    --------
    >>> round(mano_score([[5.0, 0.0], [0.0, 5.0]], normalization="softmax"), 4)
    0.8353
    >>> round(mano_score([[5.0, 0.0], [0.0, 5.0], [1.0, 0.0]], normalization="softmax", batch_size=2), 4)
    0.7264
    """
    z = _logits(logits)
    check_choice(normalization, "normalization", _NORMALIZATIONS)
    if not isinstance(p, (int, float)) or isinstance(p, bool) or not p >= 1:
        raise InputError(f"p: expected a norm order >= 1, got {p!r}")
    taylor_order = check_positive_int(taylor_order, "taylor_order")
    if batch_size is None:
        bounds = [(0, z.shape[0])]
    else:
        batch_size = check_positive_int(batch_size, "batch_size")
        bounds = [(i, min(i + batch_size, z.shape[0])) for i in range(0, z.shape[0], batch_size)]
    if normalization == "auto":
        top = z.max(axis=1)
        ce = top + np.log(np.exp(z - top[:, None]).sum(axis=1)) - z.mean(axis=1)
        criterion = float(np.mean([ce[a:b].mean() for a, b in bounds]))
        normalization = "softmax" if criterion > threshold else "taylor"
    if normalization == "softmax":
        probs = _softmax(z)
    else:
        v = sum(z**j / math.factorial(j) for j in range(taylor_order + 1))
        v = v - v.min(axis=1, keepdims=True)
        sums = v.sum(axis=1, keepdims=True)
        probs = np.divide(v, sums, out=np.zeros_like(v), where=sums > 0)
    return float(np.mean([np.mean(np.abs(probs[a:b]) ** p) ** (1.0 / p) for a, b in bounds]))


# --- evaluation across shifted test sets ---------------------------------------------


Estimator = Callable[[np.ndarray, "tuple[np.ndarray, np.ndarray] | None"], float]


def _doc(logits: np.ndarray, source: tuple[np.ndarray, np.ndarray] | None) -> float:
    if source is None:
        raise InputError("method 'doc' needs a labelled source (validation) set: pass source=(logits, labels)")
    return doc_accuracy(source[0], source[1], logits)


ESTIMATORS: Mapping[str, Estimator] = {
    "mano": lambda logits, source: mano_score(logits),
    "average_confidence": lambda logits, source: average_confidence(logits),
    "doc": _doc,
}
"""Label-free estimators by name: ``fn(target_logits, source)`` -> float.

``source`` is the labelled ``(logits, labels)`` validation set or ``None``."""


@dataclass(frozen=True)
class LabelFreeEvaluation:
    """Label-free estimates on shifted test sets and their correlation with accuracy.

    Attributes
    ----------
    per_set : DataFrame
        One row per test set: ``set``, ``n``, ``accuracy`` and one column per method.
    correlation : DataFrame
        One row per method: ``pearson``, ``r2`` (of the linear fit, Pearson squared),
        ``spearman``, ``kendall_tau`` between the method and the true accuracy, and
        ``n_sets``.
    """

    per_set: pd.DataFrame
    correlation: pd.DataFrame


def evaluate_label_free(sets: Sequence[tuple[Any, Any]] | Mapping[str, tuple[Any, Any]], /, *,
                        source: tuple[Any, Any] | None = None,
                        methods: Sequence[str] | None = None) -> LabelFreeEvaluation:
    r"""Correlate label-free accuracy estimates with the true accuracy across test sets.

    For each shifted test set :math:`D_j` (logits and labels) the true accuracy
    :math:`a_j` and every estimate :math:`s_j` are computed; each method is then scored
    by Pearson's :math:`r`, :math:`R^2 = r^2` (of the linear fit :math:`a \sim s`),
    Spearman's :math:`\rho` and Kendall's :math:`\tau_b` between :math:`(s_j)` and
    :math:`(a_j)`, as in the MaNo and DoC papers.

    Parameters
    ----------
    sets : sequence of (logits, labels), or mapping name -> (logits, labels)
        At least three shifted test sets (labels are used only for the true accuracy).
    source : (logits, labels), optional
        Labelled in-distribution validation set, needed by ``"doc"``.
    methods : sequence of str, optional
        Names from :data:`ESTIMATORS`; default all that the inputs allow (``"doc"``
        only with a ``source``).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> sets = {}
    >>> for shift in (0.5, 1.0, 2.0, 3.0):
    ...     y = rng.integers(0, 3, 300)
    ...     logits = 3.0 * np.eye(3)[y] / shift + rng.normal(size=(300, 3))
    ...     sets[f"shift {shift}"] = (logits, y)
    >>> res = evaluate_label_free(sets)
    >>> float(res.correlation.set_index("method").loc["mano", "spearman"])
    1.0
    """
    if isinstance(sets, Mapping):
        names, pairs = [str(k) for k in sets], list(sets.values())
    else:
        pairs = list(sets)
        names = [str(i) for i in range(len(pairs))]
    if len(pairs) < 3:
        raise InputError(f"expected at least three test sets to correlate estimates with accuracy, got {len(pairs)}")
    if methods is None:
        methods = [m for m in ESTIMATORS if m != "doc" or source is not None]
    for m in methods:
        check_choice(m, "method", tuple(ESTIMATORS))
    src = None
    if source is not None:
        src = (_logits(source[0], "source logits"), np.asarray(source[1]))
        accuracy(*src)  # validates the source labels
    rows = []
    for name, pair in zip(names, pairs):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise InputError(f"test set {name!r}: expected a (logits, labels) pair")
        logits = _logits(pair[0], f"logits of test set {name!r}")
        row: dict[str, Any] = {"set": name, "n": logits.shape[0], "accuracy": accuracy(logits, pair[1])}
        row.update({m: float(ESTIMATORS[m](logits, src)) for m in methods})
        rows.append(row)
    per_set = pd.DataFrame(rows, columns=["set", "n", "accuracy", *methods])
    truth = per_set["accuracy"].to_numpy()
    corr = []
    for m in methods:
        est = per_set[m].to_numpy()
        try:
            r = pearson(est, truth)
            corr.append({"method": m, "pearson": r, "r2": r * r, "spearman": spearman(est, truth),
                         "kendall_tau": kendall_tau(est, truth), "n_sets": len(pairs)})
        except InputError as exc:
            raise InputError(f"method {m!r}: {exc}") from None
    return LabelFreeEvaluation(per_set, pd.DataFrame(corr, columns=["method", "pearson", "r2", "spearman",
                                                                   "kendall_tau", "n_sets"]))
