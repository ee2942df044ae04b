r"""General Pair Weighting (GPW) losses for deep metric learning.

Wang et al. (2019) show that a pair-based loss :math:`\mathcal L(S)` on the similarity
matrix :math:`S_{ij} = \langle f_i, f_j \rangle` trains the embedding as if each pair were
weighted by :math:`w_{ij} = |\partial \mathcal L / \partial S_{ij}|`:

.. math::

    \frac{\partial \mathcal L}{\partial \theta}
      = \sum_{i,j} \frac{\partial \mathcal L}{\partial S_{ij}} \frac{\partial S_{ij}}{\partial \theta}.

The Multi-Similarity (MS) loss, contrastive and triplet losses are written here as functions
of :math:`S` and the label masks, and :func:`gpw_pair_weights` returns the weights
:math:`w_{ij}` by differentiating any of them with respect to :math:`S`.

Reference
---------
Wang, Han, Huang, Dong & Scott (2019), "Multi-Similarity Loss with General Pair Weighting
for Deep Metric Learning", CVPR.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import nn

from scorebench.core.errors import InputError
from scorebench.core.validation import check_choice
from scorebench.losses._batch import check_positive_float

__all__ = ["similarity_matrix", "multi_similarity_loss", "contrastive_loss", "triplet_loss",
           "gpw_pair_weights", "MinedPairs", "MultiSimilarityLoss", "MultiSimilarityMiner",
           "ContrastiveLoss", "TripletLoss", "SIMILARITIES"]

SIMILARITIES = ("cosine", "dot")


class MinedPairs(NamedTuple):
    """Pairs selected by a miner: positives ``(a1[t], p[t])`` and negatives ``(a2[t], n[t])``.

    Field order matches pytorch-metric-learning's ``indices_tuple``.
    """

    a1: torch.Tensor
    p: torch.Tensor
    a2: torch.Tensor
    n: torch.Tensor


def _check(embeddings: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    if not isinstance(embeddings, torch.Tensor) or embeddings.ndim != 2 or not embeddings.is_floating_point():
        raise InputError("embeddings: expected a floating tensor of shape [n, dim]")
    if not isinstance(labels, torch.Tensor) or labels.ndim != 1 or labels.shape[0] != embeddings.shape[0]:
        raise InputError(f"labels: expected a 1-d tensor with one label per embedding ({embeddings.shape[0]}), "
                         f"got {getattr(labels, 'shape', type(labels).__name__)}")
    if not torch.isfinite(embeddings.detach()).all():
        raise InputError("embeddings hold NaN or infinite values; expected finite numbers")
    return labels.to(embeddings.device)


def similarity_matrix(embeddings: torch.Tensor, *, similarity: str = "cosine") -> torch.Tensor:
    r"""Pairwise similarities :math:`S = \hat F \hat F^\top` (rows L2-normalised for ``"cosine"``).

    Examples
    --------
    >>> import torch
    >>> similarity_matrix(torch.tensor([[1.0, 0.0], [3.0, 0.0], [0.0, 2.0]])).tolist()
    [[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    """
    check_choice(similarity, "similarity", SIMILARITIES)
    x = torch.nn.functional.normalize(embeddings, dim=-1) if similarity == "cosine" else embeddings
    return x @ x.T


def _masks(labels: torch.Tensor, pairs: MinedPairs | None, n: int) -> tuple[torch.Tensor, torch.Tensor]:
    same = labels[:, None] == labels[None, :]
    eye = torch.eye(n, dtype=torch.bool, device=labels.device)
    pos, neg = same & ~eye, ~same
    if pairs is not None:
        keep_pos = torch.zeros_like(pos)
        keep_neg = torch.zeros_like(neg)
        keep_pos[pairs.a1, pairs.p] = True
        keep_neg[pairs.a2, pairs.n] = True
        pos, neg = pos & keep_pos, neg & keep_neg
    return pos, neg


def _log1p_sum_exp(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Row-wise :math:`\\log(1 + \\sum_{j: mask} e^{x_j})`, stably; 0 for empty rows."""
    zero = torch.zeros_like(x[..., :1])
    x = torch.where(mask, x, torch.full_like(x, -torch.inf))
    return torch.logsumexp(torch.cat([zero, x], -1), -1)


def multi_similarity_loss(embeddings: torch.Tensor, labels: torch.Tensor, *, alpha: float = 2.0,
                          beta: float = 50.0, base: float = 0.5, pairs: MinedPairs | None = None,
                          similarity: str = "cosine", reduction: str = "mean") -> torch.Tensor:
    r"""Multi-Similarity loss (Wang et al., 2019).

    For anchor :math:`i` with positives :math:`\mathcal P_i` and negatives :math:`\mathcal N_i`
    (restricted to ``pairs`` when a miner's output is given),

    .. math::

        \mathcal L_i = \frac{1}{\alpha}\log\Big(1 + \sum_{k \in \mathcal P_i} e^{-\alpha (S_{ik} - \lambda)}\Big)
                     + \frac{1}{\beta}\log\Big(1 + \sum_{k \in \mathcal N_i} e^{\beta (S_{ik} - \lambda)}\Big),

    :math:`\lambda` = ``base``; the loss is the mean of :math:`\mathcal L_i` over all anchors
    (empty sets contribute 0), or their sum (``reduction="sum"``), or ``[n]`` (``"none"``).

    Examples
    --------
    >>> import torch
    >>> x = torch.tensor([[1.0, 0.0], [1.0, 0.1], [0.0, 1.0]])
    >>> y = torch.tensor([0, 0, 1])
    >>> round(multi_similarity_loss(x, y).item(), 4)
    0.1053
    """
    alpha = check_positive_float(alpha, "alpha")
    beta = check_positive_float(beta, "beta")
    check_choice(reduction, "reduction", ("mean", "sum", "none"))
    labels = _check(embeddings, labels)
    S = similarity_matrix(embeddings, similarity=similarity)
    pos, neg = _masks(labels, pairs, S.shape[0])
    return _ms_from_similarity(S, pos, neg, alpha=alpha, beta=beta, base=float(base), reduction=reduction)


def _ms_from_similarity(S, pos, neg, *, alpha, beta, base, reduction):
    per_anchor = (_log1p_sum_exp(-alpha * (S - base), pos) / alpha
                  + _log1p_sum_exp(beta * (S - base), neg) / beta)
    return _reduce(per_anchor, reduction)


def _reduce(values: torch.Tensor, reduction: str, count: torch.Tensor | None = None) -> torch.Tensor:
    if reduction == "none":
        return values
    if reduction == "sum":
        return values.sum()
    denominator = values.numel() if count is None else count.clamp_min(1)
    return values.sum() / denominator


def contrastive_loss(embeddings: torch.Tensor, labels: torch.Tensor, *, pos_margin: float = 1.0,
                     neg_margin: float = 0.5, pairs: MinedPairs | None = None, similarity: str = "cosine",
                     reduction: str = "mean") -> torch.Tensor:
    r"""Contrastive loss in similarity form (Hadsell et al., 2006; GPW form of Wang et al., 2019).

    .. math::

        \mathcal L = \frac{1}{|\mathcal P| + |\mathcal N|}\Big(\sum_{(i,j) \in \mathcal P} [m_+ - S_{ij}]_+
                   + \sum_{(i,j) \in \mathcal N} [S_{ij} - m_-]_+\Big)

    so every positive pair below :math:`m_+` and every negative above :math:`m_-` gets weight 1.

    Examples
    --------
    >>> import torch
    >>> x = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> round(contrastive_loss(x, torch.tensor([0, 0, 1])).item(), 4)  # (2 * 1 + 4 * 0.2071) / 6
    0.4714
    """
    check_choice(reduction, "reduction", ("mean", "sum"))
    labels = _check(embeddings, labels)
    S = similarity_matrix(embeddings, similarity=similarity)
    pos, neg = _masks(labels, pairs, S.shape[0])
    return _contrastive_from_similarity(S, pos, neg, pos_margin=float(pos_margin),
                                        neg_margin=float(neg_margin), reduction=reduction)


def _contrastive_from_similarity(S, pos, neg, *, pos_margin, neg_margin, reduction):
    losses = torch.relu(pos_margin - S) * pos + torch.relu(S - neg_margin) * neg
    return _reduce(losses, reduction, count=(pos | neg).sum())


def triplet_loss(embeddings: torch.Tensor, labels: torch.Tensor, *, margin: float = 0.1,
                 similarity: str = "cosine", reduction: str = "mean") -> torch.Tensor:
    r"""Triplet loss on similarities over all valid triplets (Schroff et al., 2015).

    .. math::

        \mathcal L = \frac{1}{|\mathcal T|}\sum_{(a,p,n) \in \mathcal T} [S_{an} - S_{ap} + m]_+

    where :math:`\mathcal T` holds every anchor, positive (same label, not the anchor) and
    negative. Its GPW weights: :math:`w_{ap}` counts the active triplets of the pair.

    Examples
    --------
    >>> import torch
    >>> x = torch.tensor([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    >>> round(triplet_loss(x, torch.tensor([0, 0, 1])).item(), 4)
    0.0
    """
    check_choice(reduction, "reduction", ("mean", "sum"))
    labels = _check(embeddings, labels)
    S = similarity_matrix(embeddings, similarity=similarity)
    pos, neg = _masks(labels, None, S.shape[0])
    return _triplet_from_similarity(S, pos, neg, margin=float(margin), reduction=reduction)


def _triplet_from_similarity(S, pos, neg, *, margin, reduction):
    # [a, p, n]; n scales as n^3 memory, fine for metric-learning batch sizes
    valid = pos[:, :, None] & neg[:, None, :]
    losses = torch.relu(S[:, None, :] - S[:, :, None] + margin) * valid
    return _reduce(losses, reduction, count=valid.sum())


_FROM_SIMILARITY = {
    "multi_similarity": lambda S, pos, neg, reduction, alpha=2.0, beta=50.0, base=0.5:
        _ms_from_similarity(S, pos, neg, alpha=alpha, beta=beta, base=base, reduction=reduction),
    "contrastive": lambda S, pos, neg, reduction, pos_margin=1.0, neg_margin=0.5:
        _contrastive_from_similarity(S, pos, neg, pos_margin=pos_margin, neg_margin=neg_margin,
                                     reduction=reduction),
    "triplet": lambda S, pos, neg, reduction, margin=0.1:
        _triplet_from_similarity(S, pos, neg, margin=margin, reduction=reduction),
}


def gpw_pair_weights(embeddings: torch.Tensor, labels: torch.Tensor, *, loss: str = "multi_similarity",
                     pairs: MinedPairs | None = None, similarity: str = "cosine",
                     **options: float) -> torch.Tensor:
    r"""GPW pair weights :math:`w_{ij} = |\partial \mathcal L / \partial S_{ij}|` of a pair loss.

    :math:`\mathcal L` is the *summed* (not averaged) loss, so for the MS loss the weights are
    the per-anchor closed forms of Wang et al. (2019), eqs. (9)-(10):

    .. math::

        w^+_{ij} = \frac{e^{-\alpha (S_{ij} - \lambda)}}{1 + \sum_{k \in \mathcal P_i} e^{-\alpha (S_{ik} - \lambda)}},
        \qquad
        w^-_{ij} = \frac{e^{\beta (S_{ij} - \lambda)}}{1 + \sum_{k \in \mathcal N_i} e^{\beta (S_{ik} - \lambda)}}.

    Parameters
    ----------
    embeddings, labels : Tensor
        ``[n, dim]`` and ``[n]``.
    loss : {"multi_similarity", "contrastive", "triplet"}
    pairs : MinedPairs, optional
        Restrict to mined pairs (not used by ``"triplet"``).
    **options
        The loss's own parameters (``alpha``, ``beta``, ``base``; ``pos_margin``, ``neg_margin``;
        ``margin``).

    Returns
    -------
    Tensor
        ``[n, n]`` non-negative weights (detached); row ``i`` is anchor ``i``.

    Examples
    --------
    >>> import torch
    >>> x = torch.tensor([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]], dtype=torch.float64)
    >>> w = gpw_pair_weights(x, torch.tensor([0, 0, 1]))
    >>> round(w[0, 1].item(), 4), w[0, 0].item()
    (0.4502, 0.0)
    """
    check_choice(loss, "loss", tuple(_FROM_SIMILARITY))
    labels = _check(embeddings, labels)
    S = similarity_matrix(embeddings.detach(), similarity=similarity).requires_grad_(True)
    pos, neg = _masks(labels, None if loss == "triplet" else pairs, S.shape[0])
    with torch.enable_grad():
        value = _FROM_SIMILARITY[loss](S, pos, neg, "sum", **options)
        (grad,) = torch.autograd.grad(value, S, allow_unused=True)
    return torch.zeros_like(S).detach() if grad is None else grad.abs().detach()


class MultiSimilarityLoss(nn.Module):
    r"""Multi-Similarity loss module, called as ``loss(embeddings, labels, pairs=None)``.

    See :func:`multi_similarity_loss`; defaults :math:`\alpha = 2, \beta = 50, \lambda = 0.5`.

    Examples
    --------
    >>> import torch
    >>> loss = MultiSimilarityLoss()
    >>> x = torch.randn(8, 4, generator=torch.Generator().manual_seed(0), requires_grad=True)
    >>> value = loss(x, torch.tensor([0, 0, 1, 1, 2, 2, 3, 3]))
    >>> value.backward(); x.grad.shape
    torch.Size([8, 4])
    """

    def __init__(self, alpha: float = 2.0, beta: float = 50.0, base: float = 0.5, *,
                 similarity: str = "cosine", reduction: str = "mean") -> None:
        super().__init__()
        self.alpha, self.beta, self.base = alpha, beta, base
        self.similarity, self.reduction = similarity, reduction

    def forward(self, embeddings: torch.Tensor, labels: torch.Tensor,
                pairs: MinedPairs | None = None) -> torch.Tensor:
        return multi_similarity_loss(embeddings, labels, alpha=self.alpha, beta=self.beta, base=self.base,
                                     pairs=pairs, similarity=self.similarity, reduction=self.reduction)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}, beta={self.beta}, base={self.base}, similarity={self.similarity!r}"


class MultiSimilarityMiner(nn.Module):
    r"""Multi-Similarity pair miner (Wang et al., 2019, eqs. (12)-(13)).

    For anchor :math:`i`, keeps the negatives and positives that are hard relative to the other set:

    .. math::

        S_{ij} + \epsilon > \min_{k \in \mathcal P_i} S_{ik}\ \ (j \in \mathcal N_i),\qquad
        S_{ij} - \epsilon < \max_{k \in \mathcal N_i} S_{ik}\ \ (j \in \mathcal P_i).

    Called as ``miner(embeddings, labels)``; returns :class:`MinedPairs` (no gradient).

    Examples
    --------
    >>> import torch
    >>> x = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 0.05]])
    >>> mined = MultiSimilarityMiner(epsilon=0.1)(x, torch.tensor([0, 0, 1]))
    >>> sorted(zip(mined.a2.tolist(), mined.n.tolist()))
    [(0, 2), (1, 2)]
    """

    def __init__(self, epsilon: float = 0.1, *, similarity: str = "cosine") -> None:
        super().__init__()
        if not float(epsilon) >= 0:
            raise InputError(f"epsilon: expected a number >= 0, got {epsilon!r}")
        self.epsilon = float(epsilon)
        self.similarity = similarity

    @torch.no_grad()
    def forward(self, embeddings: torch.Tensor, labels: torch.Tensor) -> MinedPairs:
        labels = _check(embeddings, labels)
        S = similarity_matrix(embeddings.detach(), similarity=self.similarity)
        pos, neg = _masks(labels, None, S.shape[0])
        hardest_pos = torch.where(pos, S, torch.full_like(S, torch.inf)).amin(-1, keepdim=True)
        hardest_neg = torch.where(neg, S, torch.full_like(S, -torch.inf)).amax(-1, keepdim=True)
        a1, p = torch.nonzero(pos & (S - self.epsilon < hardest_neg), as_tuple=True)
        a2, n = torch.nonzero(neg & (S + self.epsilon > hardest_pos), as_tuple=True)
        return MinedPairs(a1, p, a2, n)

    def extra_repr(self) -> str:
        return f"epsilon={self.epsilon}"


class ContrastiveLoss(nn.Module):
    """:func:`contrastive_loss` as a module, called as ``loss(embeddings, labels, pairs=None)``."""

    def __init__(self, pos_margin: float = 1.0, neg_margin: float = 0.5, *, similarity: str = "cosine") -> None:
        super().__init__()
        self.pos_margin, self.neg_margin, self.similarity = pos_margin, neg_margin, similarity

    def forward(self, embeddings: torch.Tensor, labels: torch.Tensor,
                pairs: MinedPairs | None = None) -> torch.Tensor:
        return contrastive_loss(embeddings, labels, pos_margin=self.pos_margin, neg_margin=self.neg_margin,
                                pairs=pairs, similarity=self.similarity)


class TripletLoss(nn.Module):
    """:func:`triplet_loss` as a module, called as ``loss(embeddings, labels)``."""

    def __init__(self, margin: float = 0.1, *, similarity: str = "cosine") -> None:
        super().__init__()
        self.margin, self.similarity = margin, similarity

    def forward(self, embeddings: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        return triplet_loss(embeddings, labels, margin=self.margin, similarity=self.similarity)
