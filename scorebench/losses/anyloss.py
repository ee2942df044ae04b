r"""AnyLoss: confusion-matrix metrics as differentiable losses (Han, Dong & Kwon, 2024).

Predicted probabilities :math:`p_i` are pushed towards 0 or 1 by the approximation function

.. math::

    A(p) = \frac{1}{1 + e^{-L (p - 1/2)}}

(amplifier :math:`L`, 73 in the paper), and the confusion matrix is built from these soft
predictions :math:`\hat y_i = A(p_i)`:

.. math::

    TP = \sum_i y_i \hat y_i,\quad FN = \sum_i y_i (1 - \hat y_i),\quad
    FP = \sum_i (1 - y_i) \hat y_i,\quad TN = \sum_i (1 - y_i)(1 - \hat y_i).

Any metric of the four counts then has a gradient; the loss is ``1 - metric``.

Reference
---------
Han, Dong & Kwon (2024), "AnyLoss: Transforming Classification Metrics into Loss Functions",
KDD.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from scorebench.core.errors import InputError
from scorebench.core.validation import check_choice
from scorebench.losses._batch import check_positive_float

__all__ = ["SoftConfusion", "soft_confusion", "anyloss", "AnyLoss", "ANYLOSS_METRICS"]


@dataclass(frozen=True)
class SoftConfusion:
    """Differentiable confusion-matrix counts (tensors, summed over the batch)."""

    tp: torch.Tensor
    fn: torch.Tensor
    fp: torch.Tensor
    tn: torch.Tensor


def _ratio(a: torch.Tensor, b: torch.Tensor, eps: float = 1e-12) -> torch.Tensor:
    return a / (b + eps)


def _f1(c: SoftConfusion, beta: float = 1.0) -> torch.Tensor:
    return _f_beta(c, 1.0)


def _f_beta(c: SoftConfusion, beta: float = 1.0) -> torch.Tensor:
    b2 = beta * beta
    return _ratio((1 + b2) * c.tp, (1 + b2) * c.tp + b2 * c.fn + c.fp)


def _balanced_accuracy(c: SoftConfusion, beta: float = 1.0) -> torch.Tensor:
    return 0.5 * (_ratio(c.tp, c.tp + c.fn) + _ratio(c.tn, c.tn + c.fp))


def _mcc(c: SoftConfusion, beta: float = 1.0) -> torch.Tensor:
    denominator = torch.sqrt((c.tp + c.fp) * (c.tp + c.fn) * (c.tn + c.fp) * (c.tn + c.fn) + 1e-24)
    return (c.tp * c.tn - c.fp * c.fn) / denominator


def _g_mean(c: SoftConfusion, beta: float = 1.0) -> torch.Tensor:
    return torch.sqrt(_ratio(c.tp, c.tp + c.fn) * _ratio(c.tn, c.tn + c.fp) + 1e-24)


def _accuracy(c: SoftConfusion, beta: float = 1.0) -> torch.Tensor:
    return (c.tp + c.tn) / (c.tp + c.tn + c.fp + c.fn)


ANYLOSS_METRICS: dict[str, Callable[..., torch.Tensor]] = {
    "f1": _f1,
    "f_beta": _f_beta,
    "balanced_accuracy": _balanced_accuracy,
    "mcc": _mcc,
    "g_mean": _g_mean,
    "accuracy": _accuracy,
}


def soft_confusion(y_true: torch.Tensor, y_prob: torch.Tensor, *, amplifier: float = 73.0,
                   from_logits: bool = False) -> SoftConfusion:
    r"""Soft confusion counts from probabilities (or logits) via :math:`A(p)`.

    Examples
    --------
    >>> import torch
    >>> c = soft_confusion(torch.tensor([1.0, 0.0, 1.0]), torch.tensor([0.9, 0.2, 0.1]))
    >>> [round(float(v), 3) for v in (c.tp, c.fn, c.fp, c.tn)]
    [1.0, 1.0, 0.0, 1.0]
    """
    amplifier = check_positive_float(amplifier, "amplifier")
    if not isinstance(y_prob, torch.Tensor) or not y_prob.is_floating_point():
        raise InputError("y_prob: expected a floating tensor of predicted probabilities (or logits)")
    y = torch.as_tensor(y_true, dtype=y_prob.dtype, device=y_prob.device)
    if y.shape != y_prob.shape:
        raise InputError(f"y_true has shape {tuple(y.shape)} but y_prob has {tuple(y_prob.shape)}")
    if not bool(((y == 0) | (y == 1)).all()):
        raise InputError("y_true: expected binary labels 0 or 1")
    p = torch.sigmoid(y_prob) if from_logits else y_prob
    if not from_logits and bool(((p.detach() < 0) | (p.detach() > 1) | p.detach().isnan()).any()):
        raise InputError("y_prob: expected probabilities in [0, 1] (pass from_logits=True for logits)")
    soft = torch.sigmoid(amplifier * (p - 0.5))
    return SoftConfusion(tp=(y * soft).sum(), fn=(y * (1 - soft)).sum(),
                         fp=((1 - y) * soft).sum(), tn=((1 - y) * (1 - soft)).sum())


def anyloss(y_true: torch.Tensor, y_prob: torch.Tensor, *, metric: str = "f1", beta: float = 1.0,
            amplifier: float = 73.0, from_logits: bool = False) -> torch.Tensor:
    r"""AnyLoss: ``1 - metric`` of the soft confusion matrix (see the module docstring).

    Parameters
    ----------
    y_true : Tensor
        Binary labels ``[n]``.
    y_prob : Tensor
        Predicted probabilities of class 1 (or logits with ``from_logits=True``), ``[n]``.
    metric : {"f1", "f_beta", "balanced_accuracy", "mcc", "g_mean", "accuracy"}
        :math:`F_\beta = (1+\beta^2) TP / ((1+\beta^2) TP + \beta^2 FN + FP)`, balanced accuracy
        :math:`(TPR + TNR)/2`, MCC, G-mean :math:`\sqrt{TPR \cdot TNR}`, accuracy.
    beta : float
        :math:`\beta` of ``"f_beta"``.
    amplifier : float
        :math:`L` of the approximation function.

    Examples
    --------
    >>> import torch
    >>> y = torch.tensor([1.0, 0.0, 1.0, 0.0])
    >>> round(anyloss(y, torch.tensor([0.99, 0.01, 0.98, 0.02])).item(), 4)
    0.0
    >>> round(anyloss(y, torch.tensor([0.99, 0.99, 0.01, 0.01]), metric="mcc").item(), 4)
    1.0
    """
    check_choice(metric, "metric", tuple(ANYLOSS_METRICS))
    beta = check_positive_float(beta, "beta")
    confusion = soft_confusion(y_true, y_prob, amplifier=amplifier, from_logits=from_logits)
    return 1.0 - ANYLOSS_METRICS[metric](confusion, beta)


class AnyLoss(nn.Module):
    """:func:`anyloss` as a module, called as ``loss(y_prob, y_true)`` (torch's argument order)."""

    def __init__(self, metric: str = "f1", *, beta: float = 1.0, amplifier: float = 73.0,
                 from_logits: bool = False) -> None:
        super().__init__()
        check_choice(metric, "metric", tuple(ANYLOSS_METRICS))
        self.metric, self.beta, self.amplifier, self.from_logits = metric, beta, amplifier, from_logits

    def forward(self, y_prob: torch.Tensor, y_true: torch.Tensor) -> torch.Tensor:
        return anyloss(y_true, y_prob, metric=self.metric, beta=self.beta, amplifier=self.amplifier,
                       from_logits=self.from_logits)
