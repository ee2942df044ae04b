r"""Differentiable NDCG surrogates: NeuralNDCG (standard and transposed) and ApproxNDCG.

NDCG@k of a list with gains :math:`g_j` ranked by a permutation :math:`\pi` is

.. math::

    \mathrm{NDCG@}k = \frac{1}{\mathrm{IDCG@}k} \sum_{i=1}^{k} \frac{g_{\pi(i)}}{\log_2(i + 1)},

with :math:`g = 2^{\mathrm{rel}} - 1` (exponential) or :math:`g = \mathrm{rel}` (linear) and
IDCG@k the DCG@k of the ideal ordering *under the same gain*. NeuralNDCG replaces the
sorting permutation by its NeuralSort relaxation :math:`\hat P` (Sinkhorn-scaled):

* standard: :math:`\mathrm{DCG} = \sum_i d_i\, (\hat P g)_i` (relaxed sort of the gains),
* transposed: :math:`\mathrm{DCG} = \sum_j g_j\, (\hat P^\top d)_j` (expected discount of each item),

with :math:`d_i = 1/\log_2(i+1)` for :math:`i \le k` and 0 beyond. As :math:`\tau \to 0`
:math:`\hat P` tends to the sorting permutation, so both variants converge to exact
NDCG@k for lists without tied scores.

Differences from allRank (Pobrotyn & Białobrzeski's reference code): padded items may sit
anywhere in a list (allRank masks ranks by the padded items' *positions*); the transposed
variant with linear gains normalises by the linear-gain ideal DCG (allRank uses the
exponential-gain ideal, so a perfect ranking scores below 1); lists without relevant items
are left out of the mean as in allRank.
"""

from __future__ import annotations

import torch
from torch import nn

from scorebench.core.validation import check_choice
from scorebench.losses._batch import (check_batch, check_positive_float, discounts, gains, ideal_dcg, reduce_per_list)
from scorebench.losses.neuralsort import gumbel_perturb, relaxed_sort

__all__ = ["neural_ndcg", "NeuralNDCG", "approx_ndcg", "ApproxNDCG", "VARIANTS"]

VARIANTS = ("standard", "transposed")


def neural_ndcg(scores: torch.Tensor, labels: torch.Tensor, *, k: int | None = None,
                temperature: float = 1.0, variant: str = "standard", gain: str = "exponential",
                padding_value: float = -1, sinkhorn_iters: int = 50, sinkhorn_tol: float = 1e-6,
                stochastic: bool = False, n_samples: int = 32, beta: float = 0.1,
                log_scores: bool = False, generator: torch.Generator | None = None,
                reduction: str = "mean") -> torch.Tensor:
    r"""NeuralNDCG loss: minus the relaxed NDCG@k of each list (Pobrotyn & Białobrzeski, 2021).

    .. math::

        \mathcal L = -\frac{1}{|Q^+|}\sum_{q \in Q^+}
            \frac{\sum_{i \le k} d_i\,(\hat P_q g_q)_i}{\mathrm{IDCG@}k_q}
        \quad\text{(standard)},\qquad
        \frac{\sum_j g_{qj}\,(\hat P_q^\top d)_j}{\mathrm{IDCG@}k_q}\quad\text{(transposed)},

    where :math:`\hat P_q` is the Sinkhorn-scaled NeuralSort matrix of list :math:`q` at
    temperature :math:`\tau` and :math:`Q^+` the lists with a positive ideal DCG. As
    :math:`\tau \to 0` the value tends to :math:`-\mathrm{NDCG@}k` (distinct scores).

    Parameters
    ----------
    scores, labels : Tensor
        ``[batch, list_len]``; labels are relevance grades >= 0, ``padding_value`` marks padding
        (anywhere in a list). Runs on the tensors' device.
    k : int, optional
        Rank cut-off (None: the whole list).
    temperature : float
        NeuralSort temperature :math:`\tau`.
    variant : {"standard", "transposed"}
    gain : {"exponential", "linear"}
        :math:`2^{rel} - 1` or :math:`rel`; the ideal DCG uses the same gain.
    sinkhorn_iters, sinkhorn_tol : int, float
        Sinkhorn scaling budget (allRank: 50, 1e-6); 0 iterations skips the scaling.
    stochastic : bool
        Average over ``n_samples`` Gumbel-perturbed sorts (noise scale ``beta``; ``log_scores``
        sorts :math:`\log(s - \min s)`, allRank's default); ``generator`` seeds the noise.
    reduction : {"mean", "sum", "none"}
        Mean over lists with relevant items, sum, or the per-list values ``[batch]``
        (0 for lists without relevant items).

    Returns
    -------
    Tensor
        The loss (a scalar unless ``reduction="none"``).

    References
    ----------
    Pobrotyn & Białobrzeski (2021), "NeuralNDCG: Direct Optimisation of a Ranking Metric via
    Differentiable Relaxation of Sorting", arXiv:2102.07831.

    Examples
    --------
    >>> import torch
    >>> scores = torch.tensor([[3.0, 2.0, 1.0, 0.0]], dtype=torch.float64)
    >>> labels = torch.tensor([[2.0, 0.0, 1.0, -1.0]], dtype=torch.float64)  # last item is padding
    >>> round(-neural_ndcg(scores, labels, temperature=1e-3).item(), 4)  # exact NDCG = 0.9639
    0.9639
    >>> bool(neural_ndcg(scores, labels) > neural_ndcg(scores, labels, temperature=1e-3))
    True
    """
    check_choice(variant, "variant", VARIANTS)
    batch = check_batch(scores, labels, padding_value=padding_value)
    g = gains(batch.labels, gain) * batch.valid
    d = discounts(scores.shape[-1], k, dtype=scores.dtype, device=scores.device)
    s, valid = batch.scores, batch.valid
    if stochastic:
        s = gumbel_perturb(s, valid, n_samples=n_samples, beta=beta, log_scores=log_scores,
                           generator=generator)
        valid = valid.expand_as(s)
    relaxed = relaxed_sort(s, temperature=temperature, mask=valid, sinkhorn_iters=sinkhorn_iters,
                           sinkhorn_tol=sinkhorn_tol)
    if variant == "standard":
        dcg = (relaxed.apply(g.expand_as(s)) * d).sum(-1)
    else:
        dcg = (g * relaxed.apply_transposed(d.expand_as(s))).sum(-1)
    if stochastic:
        dcg = dcg.mean(0)
    idcg = ideal_dcg(g, d)
    relevant = idcg > 0
    ndcg = torch.where(relevant, dcg / torch.where(relevant, idcg, torch.ones_like(idcg)), torch.zeros_like(dcg))
    return reduce_per_list(-ndcg, relevant.to(ndcg.dtype), reduction)


class NeuralNDCG(nn.Module):
    """:func:`neural_ndcg` as a module; keyword options are fixed at construction.

    Examples
    --------
    >>> import torch
    >>> loss = NeuralNDCG(k=2, temperature=0.1, variant="transposed")
    >>> value = loss(torch.tensor([[0.2, 0.9, 0.4]]), torch.tensor([[0.0, 1.0, 2.0]]))
    >>> bool(-1 <= value.item() <= 0)
    True
    """

    def __init__(self, *, k: int | None = None, temperature: float = 1.0, variant: str = "standard",
                 gain: str = "exponential", padding_value: float = -1, sinkhorn_iters: int = 50,
                 sinkhorn_tol: float = 1e-6, stochastic: bool = False, n_samples: int = 32,
                 beta: float = 0.1, log_scores: bool = False, reduction: str = "mean") -> None:
        super().__init__()
        check_choice(variant, "variant", VARIANTS)
        self.options = dict(k=k, temperature=temperature, variant=variant, gain=gain,
                            padding_value=padding_value, sinkhorn_iters=sinkhorn_iters,
                            sinkhorn_tol=sinkhorn_tol, stochastic=stochastic, n_samples=n_samples,
                            beta=beta, log_scores=log_scores, reduction=reduction)

    def forward(self, scores: torch.Tensor, labels: torch.Tensor,
                generator: torch.Generator | None = None) -> torch.Tensor:
        return neural_ndcg(scores, labels, generator=generator, **self.options)

    def extra_repr(self) -> str:
        return ", ".join(f"{k}={v!r}" for k, v in self.options.items())


def approx_ndcg(scores: torch.Tensor, labels: torch.Tensor, *, alpha: float = 1.0,
                gain: str = "exponential", padding_value: float = -1,
                reduction: str = "mean") -> torch.Tensor:
    r"""ApproxNDCG loss (Qin, Liu & Li, 2010): NDCG with sigmoid-smoothed ranks.

    .. math::

        \hat\pi_j = 1 + \sum_{k \ne j} \sigma\big(\alpha (s_k - s_j)\big),\qquad
        \mathcal L = -\frac{1}{\mathrm{IDCG}} \sum_j \frac{g_j}{\log_2(1 + \hat\pi_j)}

    averaged over lists with relevant items (``reduction`` as in :func:`neural_ndcg`).

    References
    ----------
    Qin, Liu & Li (2010), "A general approximation framework for direct optimization of
    information retrieval measures", Information Retrieval 13(4).

    Examples
    --------
    >>> import torch
    >>> s = torch.tensor([[5.0, 0.0, -5.0]])
    >>> round(-approx_ndcg(s, torch.tensor([[1.0, 0.0, 0.0]]), alpha=10.0).item(), 4)
    1.0
    """
    alpha = check_positive_float(alpha, "alpha")
    batch = check_batch(scores, labels, padding_value=padding_value)
    valid = batch.valid
    g = gains(batch.labels, gain) * valid
    s = batch.scores
    pair = valid[:, :, None] & valid[:, None, :]
    pair = pair & ~torch.eye(s.shape[-1], dtype=torch.bool, device=s.device)
    above = torch.sigmoid(alpha * (s[:, None, :] - s[:, :, None])) * pair  # [b, j, k]: k above j
    rank = 1.0 + above.sum(-1)
    dcg = (g / torch.log2(1.0 + rank)).sum(-1)
    idcg = ideal_dcg(g, discounts(s.shape[-1], None, dtype=s.dtype, device=s.device))
    relevant = idcg > 0
    ndcg = torch.where(relevant, dcg / torch.where(relevant, idcg, torch.ones_like(idcg)), torch.zeros_like(dcg))
    return reduce_per_list(-ndcg, relevant.to(ndcg.dtype), reduction)


class ApproxNDCG(nn.Module):
    """:func:`approx_ndcg` as a module."""

    def __init__(self, *, alpha: float = 1.0, gain: str = "exponential", padding_value: float = -1,
                 reduction: str = "mean") -> None:
        super().__init__()
        self.options = dict(alpha=alpha, gain=gain, padding_value=padding_value, reduction=reduction)

    def forward(self, scores: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        return approx_ndcg(scores, labels, **self.options)
