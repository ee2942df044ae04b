"""An allRank-style reference for NeuralNDCG, re-derived from allRank's published definitions.

Used by the tests (agreement where allRank is right, documented disagreement where it is not)
and by ``benchmarks/bench_losses.py`` (timing reference). Written for this project from the
semantics of allRank's ``neuralNDCG`` / ``neuralNDCG_transposed`` (allegro/allRank,
``allrank/models/losses``), not copied from it. Its defining traits, kept on purpose:

* the NeuralSort matrix is built per list with ``m`` real items, and its *rows at the
  positions of padded items* are masked (right only when padding sits at the end);
* Sinkhorn scaling works on the full ``[batch, n, n]`` matrix, alternating column and row
  normalisation (sums clamped at 1e-10), stopping when all row and column sums are within
  ``tol`` of 1, for at most ``max_iter`` rounds; the padded block is filled with ones first;
* NDCG divides by ``idcg + 1e-10``, lists with zero ideal DCG count 0 and are left out of
  the mean, and the loss is minus the mean;
* the transposed variant uses the exponential-gain ideal DCG whatever the gain.
"""

from __future__ import annotations

import torch

EPS = 1e-10


def _ideal_dcg(labels: torch.Tensor, mask: torch.Tensor, k: int, exponential: bool) -> torch.Tensor:
    rel = labels.masked_fill(mask, 0.0)
    g = torch.exp2(rel) - 1.0 if exponential else rel
    ordered = g.sort(-1, descending=True).values
    d = 1.0 / torch.log2(torch.arange(labels.shape[-1], dtype=labels.dtype) + 2.0)
    return (ordered * d)[:, :k].sum(-1)


def _neural_sort(scores: torch.Tensor, mask: torch.Tensor, tau: float) -> torch.Tensor:
    n = scores.shape[-1]
    pair_pad = mask[:, :, None] | mask[:, None, :]
    both_pad = mask[:, :, None] & mask[:, None, :]
    s = scores.masked_fill(mask, 0.0)
    A = (s[:, :, None] - s[:, None, :]).abs().masked_fill(pair_pad, 0.0)
    # allRank forms A_s (1 1^T): a full [b, n, n] matmul whose rows all hold sum_k |s_j - s_k|
    spread = (A @ torch.ones(n, n, dtype=scores.dtype)).transpose(1, 2)[:, 0, :]  # [b, item]
    m = (~mask).sum(-1)
    rows = []
    for count in m.tolist():  # per-list rank factors for the first `count` ranks, 0 after
        factor = torch.zeros(n, dtype=scores.dtype)
        factor[:count] = count + 1 - 2 * (torch.arange(count, dtype=scores.dtype) + 1)
        rows.append(factor)
    factor = torch.stack(rows)  # [b, rank]
    logits = factor[:, :, None] * s[:, None, :] - spread[:, None, :]
    logits = logits.masked_fill(pair_pad, -torch.inf).masked_fill(both_pad, 1.0)  # rows at padded *positions*
    return torch.softmax(logits / tau, -1)


def _sinkhorn(P: torch.Tensor, mask: torch.Tensor, tol: float, max_iter: int) -> torch.Tensor:
    pair_pad = mask[:, :, None] | mask[:, None, :]
    both_pad = mask[:, :, None] & mask[:, None, :]
    P = P.masked_fill(pair_pad, 0.0).masked_fill(both_pad, 1.0)
    for _ in range(max_iter):
        P = P / P.sum(1, keepdim=True).clamp(min=EPS)
        P = P / P.sum(2, keepdim=True).clamp(min=EPS)
        if (P.sum(2) - 1).abs().max() < tol and (P.sum(1) - 1).abs().max() < tol:
            break
    return P.masked_fill(pair_pad, 0.0)


def allrank_neural_ndcg(scores: torch.Tensor, labels: torch.Tensor, *, k: int | None = None,
                        temperature: float = 1.0, exponential: bool = True, transposed: bool = False,
                        pad: float = -1.0, tol: float = 1e-6, max_iter: int = 50) -> torch.Tensor:
    """Loss (minus mean relaxed NDCG@k) with allRank's semantics (deterministic variant)."""
    n = labels.shape[-1]
    k = n if k is None else k
    mask = labels == pad
    P = _sinkhorn(_neural_sort(scores, mask, temperature), mask, tol, max_iter)
    d = 1.0 / torch.log2(torch.arange(n, dtype=scores.dtype) + 2.0)
    if transposed:
        d = d.clone()
        d[k:] = 0.0
        expected = (P.transpose(1, 2) @ d[None, :, None]).squeeze(-1)
        g = torch.exp2(labels) - 1.0 if exponential else labels
        dcg = (g * expected).sum(-1)
        idcg = _ideal_dcg(labels, mask, k, exponential=True)
    else:
        rel = labels.masked_fill(mask, 0.0)
        g = torch.exp2(rel) - 1.0 if exponential else rel
        dcg = ((P @ g[:, :, None]).squeeze(-1) * d)[:, :k].sum(-1)
        idcg = _ideal_dcg(labels, mask, k, exponential)
    ndcg = (dcg / (idcg + EPS)).masked_fill(idcg == 0, 0.0)
    counted = (idcg != 0).sum()
    if counted == 0:
        return torch.zeros((), dtype=scores.dtype)
    return -ndcg.sum() / counted


# Expected values transcribed from allRank's own LambdaLoss tests (tests/losses/test_lambdaloss.py):
# y_pred = y_true = [[0.5, 0.3, 0.5]], allRank's defaults (mu=10, sigma=1, k=None, reduction="sum"),
# keyed by (allRank weighing scheme, logarithm base of the reduction).
LAMBDALOSS_TEST_SLATE = [[0.5, 0.3, 0.5]]
LAMBDALOSS_TEST_VALUES = {
    ("ndcgLoss2PP_scheme", "binary"): 1.1244146823,
    ("rankNet_scheme", "natural"): 1.1962778568,  # unweighted pairwise logistic loss
}
