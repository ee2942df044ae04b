"""The Balance score: a binning-free signed calibration error (Choi, Kim & Lee 2023)."""

from __future__ import annotations

from typing import Any

import numpy as np

from scorebench.core.docstrings import fill_doc
from scorebench.core.registry import register
from scorebench.metrics.calibration._common import binary_inputs, multiclass_inputs, top_label
from scorebench.metrics.calibration.docs import SECTIONS

__all__ = ["balance_score", "balance_score_top_label"]

_CITATION = ("Choi, Kim & Lee (2023), Rethinking Evaluation Metric for Probability Estimation Models "
             "Using Esports Data, arXiv:2309.06248")


def _gain_loss(correct: np.ndarray, confidence: np.ndarray) -> np.ndarray:
    # gain 1 - c when the decision is right, loss -c when it is wrong
    return correct - confidence


@register("balance_score", family="calibration", kind="binary", inputs=("y", "p"), higher_is_better=None,
          bounds=(-1.0, 0.5), per_row=True, citation=_CITATION, tested_against=('scikit-learn', 1e-15))
def balance_score(y: Any, p: Any) -> np.ndarray:
    """Balance score contributions: gain when the decision is right, loss when it is wrong.

    The forecast decides :math:`\\hat y = 1\\{p \\ge 0.5\\}` with confidence
    :math:`c = \\max(p, 1 - p)`; each forecast scores

    .. math::

        g(p, y) = \\begin{cases} 1 - c & \\hat y = y \\text{ (gain)} \\\\ -c & \\hat y \\ne y \\text{ (loss)}
        \\end{cases} \\; = 1\\{\\hat y = y\\} - c,

    and the Balance score is their mean, i.e. accuracy minus mean confidence. For a
    forecast :math:`q` of an event with true probability :math:`\\pi`,
    :math:`E[g] = \\pm(\\pi - q)`, so :math:`|E g| = |q - \\pi|` and the expected score is 0
    exactly when :math:`q = \\pi`: the mean is a binning-free estimate of (signed)
    calibration error. Negative values mean over-confidence, positive under-confidence;
    0 is ideal, so the metric has no "higher is better" direction. Each contribution
    lies in [-1, 0.5].

    Parameters
    ----------
    %(binary)s

    Returns
    -------
    ndarray, shape (n,)
        Per-forecast gain/loss; the Balance score is their mean (``per_row`` metric).

    Notes
    -----
    Over- and under-confident forecasts cancel in the mean; report it with
    :func:`ece` or :func:`smooth_ece`. It is not a proper scoring rule.

    References
    ----------
    Choi, Kim & Lee (2023), Rethinking Evaluation Metric for Probability Estimation
    Models Using Esports Data, arXiv:2309.06248.

    Examples
    --------
    >>> balance_score([1, 0, 0, 1], [0.8, 0.3, 0.9, 0.4]).round(6).tolist()
    [0.2, 0.3, -0.9, -0.6]
    """
    y, p = binary_inputs(y, p)
    decision = (p >= 0.5).astype(np.float64)
    return _gain_loss((decision == y).astype(np.float64), np.maximum(p, 1.0 - p))


@register("balance_score_top_label", family="calibration", kind="multiclass", inputs=("y", "P"),
          higher_is_better=None, bounds=(-1.0, 1.0), per_row=True, citation=_CITATION,
          tested_against=('scikit-learn', 1e-15))
def balance_score_top_label(y: Any, P: Any) -> np.ndarray:
    """Top-label Balance score contributions: :math:`1\\{\\arg\\max_j P_{ij} = y_i\\} - \\max_j P_{ij}`.

    The multiclass extension of :func:`balance_score` (which it equals for two classes,
    up to the tie at 0.5): the mean is accuracy minus mean confidence. Each contribution
    lies in :math:`[-1, 1 - 1/K]`.

    Examples
    --------
    >>> balance_score_top_label([0, 2], [[0.5, 0.3, 0.2], [0.6, 0.3, 0.1]]).round(6).tolist()
    [0.5, -0.6]
    """
    y, P = multiclass_inputs(y, P)
    return _gain_loss(*top_label(y, P))


fill_doc(balance_score, **SECTIONS)
