r"""Classic learning-to-rank losses on padded batches: ListNet, ListMLE, RankNet, LambdaLoss, RCR.

All take ``scores`` and ``labels`` of shape ``[batch, list_len]``; labels equal to
``padding_value`` mark padded items, which may sit anywhere in a list. Per-list losses are
averaged over lists that have something to learn from (``reduction="mean"``), summed, or
returned per list (``"none"``).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from scorebench.core.errors import InputError
from scorebench.core.validation import check_choice
from scorebench.losses._batch import (Batch, check_batch, check_positive_float, discounts, gains, ideal_dcg,
                     masked_fill_min, reduce_per_list)

__all__ = ["listnet_loss", "listmle_loss", "ranknet_loss", "lambda_loss", "rcr_loss",
           "ListNet", "ListMLE", "RankNet", "LambdaLoss", "RCRLoss", "LAMBDA_WEIGHTS"]

LAMBDA_WEIGHTS = ("ndcg_loss2", "lambda_rank", "ndcg_loss2pp", "none")


def _pairs(batch: Batch) -> torch.Tensor:
    """``[b, i, j]`` True where both items are real and label i > label j."""
    y, valid = batch.labels, batch.valid
    return (y[:, :, None] > y[:, None, :]) & valid[:, :, None] & valid[:, None, :]


def listnet_loss(scores: torch.Tensor, labels: torch.Tensor, *, padding_value: float = -1,
                 reduction: str = "mean") -> torch.Tensor:
    r"""ListNet (top-one) loss: cross-entropy between label and score softmaxes.

    .. math::

        \mathcal L = -\sum_j \operatorname{softmax}(y)_j \log \operatorname{softmax}(s)_j

    per list, over its real items (Cao et al., 2007, ICML).

    Examples
    --------
    >>> import torch
    >>> round(listnet_loss(torch.zeros(1, 2), torch.tensor([[1.0, 1.0]])).item(), 4)  # log 2
    0.6931
    """
    batch = check_batch(scores, labels, padding_value=padding_value)
    valid = batch.valid
    target = torch.softmax(masked_fill_min(batch.labels, valid), -1) * valid
    log_p = torch.log_softmax(masked_fill_min(batch.scores, valid), -1)
    per_list = -(target * torch.where(valid, log_p, torch.zeros_like(log_p))).sum(-1)
    return reduce_per_list(per_list, valid.any(-1).to(per_list.dtype), reduction)


def _label_order(batch: Batch, generator: torch.Generator | None) -> torch.Tensor:
    """Indices sorting each list by label, descending; padding last; ties by position or at random."""
    keys = batch.labels.masked_fill(~batch.valid, -torch.inf)
    if generator is None:
        return keys.sort(dim=-1, descending=True, stable=True).indices
    shuffle = torch.rand(keys.shape, generator=generator, device=keys.device).argsort(-1)
    order = keys.gather(-1, shuffle).sort(dim=-1, descending=True, stable=True).indices
    return shuffle.gather(-1, order)


def listmle_loss(scores: torch.Tensor, labels: torch.Tensor, *, padding_value: float = -1,
                 generator: torch.Generator | None = None, reduction: str = "mean") -> torch.Tensor:
    r"""ListMLE loss: negative Plackett-Luce log-likelihood of the label ordering.

    .. math::

        \mathcal L = \sum_{i=1}^{m} \Big(\log \sum_{j \ge i} e^{s_{\pi(j)}} - s_{\pi(i)}\Big)

    where :math:`\pi` sorts the real items by label, decreasing (Xia et al., 2008, ICML).
    Tied labels keep their list order, or are shuffled with ``generator``.

    Examples
    --------
    >>> import torch
    >>> round(listmle_loss(torch.zeros(1, 3), torch.tensor([[2.0, 1.0, 0.0]])).item(), 4)  # log 3!
    1.7918
    """
    batch = check_batch(scores, labels, padding_value=padding_value)
    order = _label_order(batch, generator)
    s = batch.scores.gather(-1, order)
    valid = batch.valid.gather(-1, order)
    s_masked = masked_fill_min(s, valid) / 2  # halved so the log-sum-exp cannot overflow
    s_masked = torch.where(valid, s, s_masked)
    tail = torch.logcumsumexp(s_masked.flip(-1), -1).flip(-1)
    per_list = torch.where(valid, tail - s, torch.zeros_like(s)).sum(-1)
    return reduce_per_list(per_list, valid.any(-1).to(per_list.dtype), reduction)


def ranknet_loss(scores: torch.Tensor, labels: torch.Tensor, *, sigma: float = 1.0,
                 padding_value: float = -1, reduction: str = "mean") -> torch.Tensor:
    r"""RankNet loss: logistic loss on every pair with different labels.

    .. math::

        \mathcal L = \frac{1}{|\mathcal P|}\sum_{(i, j) \in \mathcal P} \log\big(1 + e^{-\sigma (s_i - s_j)}\big),
        \qquad \mathcal P = \{(i, j): y_i > y_j\}

    The mean runs over all pairs of the batch (``reduction="none"`` gives each list's mean;
    Burges et al., 2005, ICML).

    Examples
    --------
    >>> import torch
    >>> round(ranknet_loss(torch.zeros(1, 2), torch.tensor([[1.0, 0.0]])).item(), 4)
    0.6931
    """
    sigma = check_positive_float(sigma, "sigma")
    check_choice(reduction, "reduction", ("mean", "sum", "none"))
    batch = check_batch(scores, labels, padding_value=padding_value)
    pairs = _pairs(batch)
    s = batch.scores
    losses = F.softplus(-sigma * (s[:, :, None] - s[:, None, :])) * pairs
    if reduction == "none":
        return losses.sum((-1, -2)) / pairs.sum((-1, -2)).clamp_min(1)
    if reduction == "sum":
        return losses.sum()
    return losses.sum() / pairs.sum().clamp_min(1)


def lambda_loss(scores: torch.Tensor, labels: torch.Tensor, *, weighting: str = "ndcg_loss2",
                k: int | None = None, sigma: float = 1.0, mu: float = 10.0, gain: str = "exponential",
                padding_value: float = -1, reduction: str = "mean") -> torch.Tensor:
    r"""LambdaLoss (Wang et al., 2018): metric-weighted pairwise logistic loss.

    With items ranked by score (ranks :math:`r_i`), :math:`G_i = g_i / \mathrm{IDCG}` and
    :math:`D(r) = \log_2(1 + r)`,

    .. math::

        \mathcal L = -\sum_{y_i > y_j} w_{ij} \log_2 \sigma\big(\sigma_s (s_i - s_j)\big)

    with weights :math:`w_{ij} = |G_i - G_j|` times

    * ``"ndcg_loss2"``: :math:`\delta_{ij} = |1/D(|r_i - r_j|) - 1/D(|r_i - r_j| + 1)|` (NDCG-Loss2),
    * ``"lambda_rank"``: :math:`|1/D(r_i) - 1/D(r_j)|` (LambdaRank),
    * ``"ndcg_loss2pp"``: :math:`\mu \delta_{ij} + |1/D(r_i) - 1/D(r_j)|` (NDCG-Loss2++: ``mu``
      times the NDCG-Loss2 weight plus the LambdaRank weight, Wang et al. 2018, as
      allRank's ``ndcgLoss2PP_scheme``);

    ``"none"`` uses :math:`w_{ij} = 1`. With ``k``, only pairs with both items ranked in the
    top ``k`` count. Per-list sums are averaged over lists with at least one pair.

    References
    ----------
    Wang, Li, Golbandi, Bendersky & Najork (2018), "The LambdaLoss Framework for Ranking Metric
    Optimization", CIKM.

    Examples
    --------
    >>> import torch
    >>> loss = lambda_loss(torch.tensor([[0.0, 1.0]]), torch.tensor([[1.0, 0.0]]))
    >>> round(loss.item(), 4)  # one swapped pair: (1 - 1/log2 3) * log2(1 + e)
    0.6993
    """
    check_choice(weighting, "weighting", LAMBDA_WEIGHTS)
    sigma = check_positive_float(sigma, "sigma")
    batch = check_batch(scores, labels, padding_value=padding_value)
    n = scores.shape[-1]
    valid = batch.valid
    order = masked_fill_min(batch.scores.detach(), valid).sort(dim=-1, descending=True, stable=True).indices
    s = batch.scores.gather(-1, order)
    y = batch.labels.gather(-1, order)
    valid = valid.gather(-1, order)
    g = gains(y, gain) * valid
    idcg = ideal_dcg(g, discounts(n, k, dtype=s.dtype, device=s.device))
    G = g / torch.where(idcg > 0, idcg, torch.ones_like(idcg))[:, None]
    ranks = torch.arange(1, n + 1, dtype=s.dtype, device=s.device)
    pairs = (y[:, :, None] > y[:, None, :]) & valid[:, :, None] & valid[:, None, :]
    if k is not None:
        top = ranks <= k
        pairs = pairs & top[:, None] & top[None, :]
    gain_gap = (G[:, :, None] - G[:, None, :]).abs()
    inv_d = 1.0 / torch.log2(1.0 + ranks)
    rank_gap = (ranks[:, None] - ranks[None, :]).abs()
    delta = (1.0 / torch.log2(1.0 + rank_gap.clamp_min(1)) - 1.0 / torch.log2(2.0 + rank_gap)).abs()
    lambda_rank = (inv_d[:, None] - inv_d[None, :]).abs()
    weight = {"ndcg_loss2": delta, "lambda_rank": lambda_rank, "ndcg_loss2pp": mu * delta + lambda_rank,
              "none": torch.ones_like(delta)}[weighting]
    weight = weight * gain_gap if weighting != "none" else weight.expand_as(gain_gap)
    weight = weight.detach()
    logistic = -F.logsigmoid(sigma * (s[:, :, None] - s[:, None, :])) / math.log(2.0)
    per_list = (weight * logistic * pairs).sum((-1, -2))
    return reduce_per_list(per_list, pairs.any(-1).any(-1).to(per_list.dtype), reduction)


def rcr_loss(scores: torch.Tensor, labels: torch.Tensor, *, alpha: float = 0.5,
             padding_value: float = -1, reduction: str = "mean") -> torch.Tensor:
    r"""Regression-compatible ranking (RCR) loss for calibrated ranking scores (Bai et al., 2023).

    Scores are logits of :math:`P(\text{relevant})`; labels lie in :math:`[0, 1]`. The loss mixes
    the pointwise sigmoid cross-entropy with a listwise softmax cross-entropy *on the sigmoid
    outputs*, whose minimiser agrees with the pointwise one (so ranking does not break calibration):

    .. math::

        \mathcal L = (1 - \alpha)\,\frac{1}{m}\sum_j \mathrm{BCE}(y_j, \sigma(s_j))
            - \alpha \sum_j \frac{y_j}{\sum_k y_k} \log \frac{\sigma(s_j)}{\sum_k \sigma(s_k)}.

    The listwise term is 0 for lists without relevant items.

    References
    ----------
    Bai, Zhuang, Qin, Yan, Jagerman, Wang, Bendersky & Najork (2023), "Regression Compatible
    Listwise Objectives for Calibrated Ranking with Binary Relevance", CIKM.

    Examples
    --------
    >>> import torch
    >>> loss = rcr_loss(torch.zeros(1, 2), torch.tensor([[1.0, 0.0]]), alpha=0.0)
    >>> round(loss.item(), 4)  # BCE at p = 0.5
    0.6931
    """
    if not 0.0 <= float(alpha) <= 1.0:
        raise InputError(f"alpha: expected a weight in [0, 1], got {alpha!r}")
    batch = check_batch(scores, labels, padding_value=padding_value)
    y, valid, s = batch.labels, batch.valid, batch.scores
    if bool((y > 1).any()):
        raise InputError("labels: RCR expects relevance probabilities in [0, 1] (binary or soft labels)")
    m = valid.sum(-1).clamp_min(1)
    point = (F.binary_cross_entropy_with_logits(s, y, reduction="none") * valid).sum(-1) / m
    log_sig = masked_fill_min(F.logsigmoid(s), valid)
    log_share = log_sig - torch.logsumexp(log_sig, -1, keepdim=True)
    mass = y.sum(-1, keepdim=True)
    target = torch.where(mass > 0, y / torch.where(mass > 0, mass, torch.ones_like(mass)), torch.zeros_like(y))
    listwise = -(target * torch.where(valid, log_share, torch.zeros_like(log_share))).sum(-1)
    per_list = (1.0 - alpha) * point + alpha * listwise
    return reduce_per_list(per_list, valid.any(-1).to(per_list.dtype), reduction)


class _LossModule(nn.Module):
    _fn = staticmethod(lambda *a, **k: None)

    def __init__(self, **options) -> None:
        super().__init__()
        self.options = options

    def forward(self, scores: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        return type(self)._fn(scores, labels, **self.options)

    def extra_repr(self) -> str:
        return ", ".join(f"{k}={v!r}" for k, v in self.options.items())


class ListNet(_LossModule):
    """:func:`listnet_loss` as a module (keyword options as the function)."""

    _fn = staticmethod(listnet_loss)


class ListMLE(_LossModule):
    """:func:`listmle_loss` as a module (keyword options as the function)."""

    _fn = staticmethod(listmle_loss)


class RankNet(_LossModule):
    """:func:`ranknet_loss` as a module (keyword options as the function)."""

    _fn = staticmethod(ranknet_loss)


class LambdaLoss(_LossModule):
    """:func:`lambda_loss` as a module (keyword options as the function)."""

    _fn = staticmethod(lambda_loss)


class RCRLoss(_LossModule):
    """:func:`rcr_loss` as a module (keyword options as the function)."""

    _fn = staticmethod(rcr_loss)
