r"""NeuralSort: a continuous relaxation of the sorting permutation matrix.

For scores :math:`s \in \mathbb{R}^m` of the real (unpadded) items of a list, NeuralSort
(Grover et al., 2019) relaxes the permutation matrix that sorts :math:`s` in decreasing
order into a row-stochastic matrix whose row :math:`i` (rank :math:`i`) is

.. math::

    \hat P_{i,\cdot} = \operatorname{softmax}\Big(\big((m + 1 - 2i)\, s - A_s \mathbf 1\big) / \tau\Big),
    \qquad (A_s)_{jk} = |s_j - s_k|.

As :math:`\tau \to 0` the rows become one-hot and :math:`\hat P` converges to the true
sorting permutation (for distinct scores). Sinkhorn scaling (alternate column and row
normalisation) makes :math:`\hat P` doubly stochastic, as NeuralNDCG requires; the
*stochastic* variant perturbs the scores with Gumbel noise, which samples permutations
from the Plackett-Luce model, and returns one relaxed matrix per sample.

Padding: rows are ranks and columns are items. A list with :math:`m` real items uses
ranks ``0..m-1`` (rows ``m..n-1`` are zero) and the padded items' columns are zero, wherever
those items sit in the list. allRank instead masks the rows at the *positions* of padded
items, which is only right when padding is at the end of the list.

References
----------
Grover, Wang, Zweig & Ermon (2019), "Stochastic Optimization of Sorting Networks via
Continuous Relaxations", ICLR. Sinkhorn (1964), Ann. Math. Statist. 35(2).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from scorebench.core.errors import InputError
from scorebench.losses._batch import check_positive_float, masked_fill_min

__all__ = ["neural_sort", "stochastic_neural_sort", "sinkhorn_scaling", "RelaxedSort",
           "relaxed_sort", "gumbel_perturb"]


@dataclass(frozen=True)
class RelaxedSort:
    r"""A relaxed permutation matrix in factored Sinkhorn form :math:`P = \mathrm{diag}(u)\,K\,\mathrm{diag}(v)`.

    Keeping the scaling vectors apart lets losses apply :math:`P` or :math:`P^\top` to a
    vector with one batched mat-vec instead of materialising the scaled matrix.

    Attributes
    ----------
    kernel : Tensor
        NeuralSort matrix before scaling, ``[..., n, n]`` (rows: ranks, columns: items).
    row_scale, col_scale : Tensor
        Sinkhorn vectors ``u`` and ``v``, ``[..., n]``; zero on padded ranks / items.
    iterations : int
        Sinkhorn iterations run.
    """

    kernel: torch.Tensor
    row_scale: torch.Tensor
    col_scale: torch.Tensor
    iterations: int

    def matrix(self) -> torch.Tensor:
        """The relaxed permutation matrix :math:`P`."""
        return self.row_scale[..., :, None] * self.kernel * self.col_scale[..., None, :]

    def apply(self, x: torch.Tensor) -> torch.Tensor:
        r""":math:`P x` for item values ``x`` ``[..., n]``: values in (relaxed) rank order."""
        return self.row_scale * (self.kernel @ (self.col_scale * x).unsqueeze(-1)).squeeze(-1)

    def apply_transposed(self, x: torch.Tensor) -> torch.Tensor:
        r""":math:`P^\top x` for rank values ``x`` ``[..., n]``: each item's expected value."""
        return self.col_scale * (self.kernel.transpose(-1, -2) @ (self.row_scale * x).unsqueeze(-1)).squeeze(-1)


def _valid_mask(scores: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    if not isinstance(scores, torch.Tensor) or scores.ndim < 2 or not scores.is_floating_point():
        raise InputError("scores: expected a floating tensor of shape [..., list_len]")
    if mask is None:
        return torch.ones_like(scores, dtype=torch.bool)
    if mask.shape != scores.shape or mask.dtype != torch.bool:
        raise InputError(f"mask: expected a boolean tensor of shape {tuple(scores.shape)} (True = real item), "
                         f"got {mask.dtype} {tuple(mask.shape)}")
    return mask


def _kernel(scores: torch.Tensor, valid: torch.Tensor, temperature: float) -> torch.Tensor:
    n = scores.shape[-1]
    s = scores.masked_fill(~valid, 0.0)
    pair = valid[..., :, None] & valid[..., None, :]
    # (A_s 1)_j = sum over real items k of |s_j - s_k|
    spread = ((s[..., :, None] - s[..., None, :]).abs() * pair).sum(-1)
    m = valid.sum(-1, keepdim=True).to(scores.dtype)
    ranks = torch.arange(1, n + 1, dtype=scores.dtype, device=scores.device)
    scale = m + 1.0 - 2.0 * ranks  # [..., n], one factor per rank
    logits = (scale[..., :, None] * s[..., None, :] - spread[..., None, :]) / temperature
    # padded items' columns underflow to exactly 0; padded ranks (rows >= m) are zeroed by the
    # row scaling vector of RelaxedSort
    return torch.softmax(masked_fill_min(logits, valid[..., None, :].expand_as(logits)), dim=-1)


class _SinkhornVectors(torch.autograd.Function):
    """Sinkhorn scaling vectors ``u, v`` of ``kernel`` with a vector-only backward pass.

    Forward: ``v_t = cols / (K^T u_{t-1})``, ``u_t = rows / (K v_t)`` from ``u_0 = rows``, so
    that after ``t`` rounds ``diag(u_t) K diag(v_t)`` equals ``t`` rounds of alternating
    column and row normalisation of the full matrix. Backward runs the recursion in reverse
    with mat-vecs and collects the kernel's gradient, a sum of rank-one terms, in a single
    batched matrix product instead of one full-matrix update per round.
    """

    @staticmethod
    def forward(ctx, kernel, rows, cols, max_iter, tol, eps):
        # Row-vector-times-matrix products stream memory in order and run about twice as fast
        # as matrix-times-vector on CPU, so both K^T x and K x use that form (K x = x^T K^T).
        kernel_t = kernel.transpose(-1, -2).contiguous()
        u = rows
        col_sums = (u.unsqueeze(-2) @ kernel).squeeze(-2)
        us, vs, cs, rs = [u], [], [col_sums], []
        for _ in range(max_iter):
            v = cols / col_sums.clamp_min(eps)
            row_sums = (v.unsqueeze(-2) @ kernel_t).squeeze(-2)
            u = rows / row_sums.clamp_min(eps)
            col_sums = (u.unsqueeze(-2) @ kernel).squeeze(-2)
            vs.append(v)
            rs.append(row_sums)
            us.append(u)
            cs.append(col_sums)
            # rows sum to 1 exactly after the row step; only columns can be off
            if tol > 0 and bool((((v * col_sums) - 1.0) * cols).abs().max() < tol):
                break
        ctx.eps = eps
        ctx.save_for_backward(kernel, kernel_t, rows, cols, torch.stack(us), torch.stack(vs), torch.stack(cs),
                              torch.stack(rs))
        iterations = torch.tensor(len(vs))
        ctx.mark_non_differentiable(iterations)
        return u, v, iterations

    @staticmethod
    def backward(ctx, grad_u, grad_v, _):
        kernel, kernel_t, rows, cols, us, vs, cs, rs = ctx.saved_tensors
        eps = ctx.eps
        g_u = torch.zeros_like(us[0]) if grad_u is None else grad_u
        g_v = torch.zeros_like(vs[0]) if grad_v is None else grad_v
        left, right = [], []
        for t in range(vs.shape[0], 0, -1):
            r = rs[t - 1]
            g_r = -g_u * rows / r.clamp_min(eps) ** 2 * (r > eps)  # u_t = rows / r_t
            g_v = g_v + (g_r.unsqueeze(-2) @ kernel).squeeze(-2)  # r_t = K v_t
            left.append(g_r)
            right.append(vs[t - 1])
            c = cs[t - 1]
            g_c = -g_v * cols / c.clamp_min(eps) ** 2 * (c > eps)  # v_t = cols / c_{t-1}
            left.append(us[t - 1])  # c_{t-1} = K^T u_{t-1}
            right.append(g_c)
            g_u = (g_c.unsqueeze(-2) @ kernel_t).squeeze(-2)
            g_v = torch.zeros_like(g_v)
        grad_kernel = torch.stack(left, -1) @ torch.stack(right, -2)
        return grad_kernel, None, None, None, None, None


def _sinkhorn(kernel: torch.Tensor, row_valid: torch.Tensor, col_valid: torch.Tensor, *,
              max_iter: int, tol: float, eps: float = 1e-10) -> RelaxedSort:
    rows = row_valid.to(kernel.dtype)
    cols = col_valid.to(kernel.dtype)
    if max_iter == 0:
        return RelaxedSort(kernel, rows, cols, 0)
    u, v, iterations = _SinkhornVectors.apply(kernel, rows, cols, max_iter, tol, eps)
    return RelaxedSort(kernel, u, v, int(iterations))


def _check_iters(max_iter: int, tol: float) -> None:
    if not isinstance(max_iter, int) or isinstance(max_iter, bool) or max_iter < 0:
        raise InputError(f"sinkhorn_iters: expected an integer >= 0, got {max_iter!r}")
    if not float(tol) >= 0:
        raise InputError(f"sinkhorn_tol: expected a number >= 0, got {tol!r}")


def relaxed_sort(scores: torch.Tensor, *, temperature: float = 1.0, mask: torch.Tensor | None = None,
                 sinkhorn_iters: int = 0, sinkhorn_tol: float = 1e-6) -> RelaxedSort:
    """NeuralSort with optional Sinkhorn scaling, in factored form (see :class:`RelaxedSort`).

    ``scores`` is ``[..., list_len]``; ``mask`` (True = real item) marks padding anywhere.
    """
    temperature = check_positive_float(temperature, "temperature")
    _check_iters(sinkhorn_iters, sinkhorn_tol)
    valid = _valid_mask(scores, mask)
    kernel = _kernel(scores, valid, temperature)
    n = scores.shape[-1]
    ranks = torch.arange(n, device=scores.device)
    row_valid = ranks < valid.sum(-1, keepdim=True)
    return _sinkhorn(kernel, row_valid, valid, max_iter=sinkhorn_iters, tol=float(sinkhorn_tol))


def neural_sort(scores: torch.Tensor, *, temperature: float = 1.0, mask: torch.Tensor | None = None,
                sinkhorn_iters: int = 0, sinkhorn_tol: float = 1e-6) -> torch.Tensor:
    r"""Relaxed permutation matrix sorting ``scores`` in decreasing order.

    .. math::

        \hat P_{i,\cdot} = \operatorname{softmax}\big(((m + 1 - 2i)\, s - A_s \mathbf 1)/\tau\big)

    Parameters
    ----------
    scores : Tensor
        ``[..., list_len]`` floating scores.
    temperature : float
        :math:`\tau > 0`; smaller is closer to the hard permutation.
    mask : Tensor of bool, optional
        True for real items; padded items may sit anywhere.
    sinkhorn_iters : int
        Maximum Sinkhorn iterations (0: plain row-stochastic NeuralSort).
    sinkhorn_tol : float
        Stop when every column sum is within ``tol`` of 1.

    Returns
    -------
    Tensor
        ``[..., list_len, list_len]``; entry ``[i, j]`` is the weight of item ``j`` at rank ``i``.

    References
    ----------
    Grover et al. (2019), ICLR, "Stochastic Optimization of Sorting Networks via Continuous
    Relaxations".

    Examples
    --------
    >>> import torch
    >>> P = neural_sort(torch.tensor([[0.1, 3.0, 2.0]]), temperature=0.01)
    >>> P.argmax(-1).tolist()
    [[1, 2, 0]]
    """
    return relaxed_sort(scores, temperature=temperature, mask=mask, sinkhorn_iters=sinkhorn_iters,
                        sinkhorn_tol=sinkhorn_tol).matrix()


def gumbel_perturb(scores: torch.Tensor, valid: torch.Tensor, *, n_samples: int, beta: float,
                   log_scores: bool, generator: torch.Generator | None = None,
                   eps: float = 1e-10) -> torch.Tensor:
    r"""``n_samples`` Gumbel-perturbed copies of ``scores``, ``[n_samples, *scores.shape]``.

    Returns :math:`\tilde s = \phi(s) + \beta g` with :math:`g \sim \mathrm{Gumbel}(0, 1)`, where
    :math:`\phi(s) = s` or, with ``log_scores``, :math:`\log(s - \min_j s_j + \epsilon)` (the
    minimum over the list's real items), treating shifted scores as Plackett-Luce weights.
    """
    if not isinstance(n_samples, int) or isinstance(n_samples, bool) or n_samples < 1:
        raise InputError(f"n_samples: expected a positive integer, got {n_samples!r}")
    beta = check_positive_float(beta, "beta")
    base = scores
    if log_scores:
        low = scores.masked_fill(~valid, torch.inf).amin(-1, keepdim=True)
        low = torch.where(torch.isfinite(low), low, torch.zeros_like(low))
        base = torch.log((scores - low).clamp_min(0.0) + eps)
    uniform = torch.rand((n_samples, *scores.shape), generator=generator, dtype=scores.dtype,
                         device=scores.device)
    tiny = torch.finfo(scores.dtype).tiny
    gumbel = -torch.log(-torch.log(uniform.clamp(tiny, 1.0 - eps)))
    return base.unsqueeze(0) + beta * gumbel


def stochastic_neural_sort(scores: torch.Tensor, *, n_samples: int = 32, temperature: float = 1.0,
                           beta: float = 1.0, log_scores: bool = False, mask: torch.Tensor | None = None,
                           sinkhorn_iters: int = 0, sinkhorn_tol: float = 1e-6,
                           generator: torch.Generator | None = None) -> torch.Tensor:
    r"""Stochastic NeuralSort: relaxed permutation matrices of Gumbel-perturbed scores.

    Each sample relaxes the sort of :math:`\phi(s) + \beta g`, :math:`g \sim \mathrm{Gumbel}(0, 1)`
    (see :func:`gumbel_perturb`), so hard sorts of the samples are Plackett-Luce draws.

    Returns
    -------
    Tensor
        ``[n_samples, ..., list_len, list_len]``.

    Examples
    --------
    >>> import torch
    >>> g = torch.Generator().manual_seed(0)
    >>> P = stochastic_neural_sort(torch.tensor([[0.0, 5.0]]), n_samples=4, beta=0.1,
    ...                            temperature=0.01, generator=g)
    >>> P.shape, P[:, 0, 0].argmax(-1).tolist()
    (torch.Size([4, 1, 2, 2]), [1, 1, 1, 1])
    """
    valid = _valid_mask(scores, mask)
    perturbed = gumbel_perturb(scores, valid, n_samples=n_samples, beta=beta, log_scores=log_scores,
                               generator=generator)
    return neural_sort(perturbed, temperature=temperature, mask=valid.expand_as(perturbed),
                       sinkhorn_iters=sinkhorn_iters, sinkhorn_tol=sinkhorn_tol)


def sinkhorn_scaling(matrix: torch.Tensor, *, max_iter: int = 50, tol: float = 1e-6,
                     mask: torch.Tensor | None = None) -> torch.Tensor:
    r"""Scale non-negative square matrices towards doubly stochastic ones.

    Alternates :math:`P \leftarrow P / (\mathbf 1^\top P)` (columns) and
    :math:`P \leftarrow P / (P \mathbf 1)` (rows) until column sums are within ``tol`` of 1.

    ``mask`` (``[..., n]``, True = real item) restricts the scaling to the leading
    ``m`` ranks (rows) and the real items (columns), as produced by :func:`neural_sort`.

    Examples
    --------
    >>> import torch
    >>> P = sinkhorn_scaling(torch.tensor([[[2.0, 1.0], [1.0, 1.0]]]), max_iter=200, tol=1e-9)
    >>> [round(x, 6) for x in P.sum(-2).flatten().tolist()]
    [1.0, 1.0]
    """
    _check_iters(max_iter, tol)
    if not isinstance(matrix, torch.Tensor) or matrix.ndim < 2 or matrix.shape[-1] != matrix.shape[-2]:
        raise InputError("matrix: expected a tensor of square matrices [..., n, n]")
    n = matrix.shape[-1]
    valid = torch.ones(matrix.shape[:-1], dtype=torch.bool, device=matrix.device) if mask is None else mask
    row_valid = torch.arange(n, device=matrix.device) < valid.sum(-1, keepdim=True)
    return _sinkhorn(matrix, row_valid, valid, max_iter=max_iter, tol=float(tol)).matrix()
