r"""The Vendi score: the effective number of distinct samples, from a similarity kernel.

With a positive semi-definite kernel :math:`K` (:math:`K_{ii} = 1`) on :math:`n` samples and
sample weights :math:`p` (uniform :math:`1/n` by default), let :math:`\lambda` be the
eigenvalues of :math:`\tilde K = \operatorname{diag}(\sqrt p)\,K\,\operatorname{diag}(\sqrt p)`
(:math:`K/n` when uniform); they are non-negative and sum to 1. The Vendi score of order
:math:`q` is the exponential of their Rényi entropy:

.. math::

    \mathrm{VS}_q = \exp\Bigl(\frac{1}{1-q}\log\sum_i \lambda_i^q\Bigr),\quad
    \mathrm{VS}_1 = \exp\Bigl(-\sum_i \lambda_i\log\lambda_i\Bigr),\quad
    \mathrm{VS}_\infty = \frac{1}{\max_i\lambda_i},\quad
    \mathrm{VS}_0 = \operatorname{rank}\tilde K .

For features with the cosine kernel :math:`K = XX^\top` (rows of :math:`X` unit-normalised)
the non-zero eigenvalues are those of the :math:`d\times d` matrix
:math:`X^\top\operatorname{diag}(p)X`, which is what is decomposed when :math:`d < n`
(10,000 x 512 costs a 512 x 512 eigenproblem). :math:`q = 2` needs no eigenvalues at all:
:math:`\sum\lambda^2 = \lVert\tilde K\rVert_F^2`.

Eigenvalues below a rank tolerance (``max(lambda) * max(n, d) * eps`` by default, as
``numpy.linalg.matrix_rank``) are treated as exactly 0: they are rounding noise, and for
:math:`q < 1` noise would otherwise count (the ``vendi-score`` package keeps every positive
eigenvalue of a float32 :math:`n\times n` matrix, so ``score_dual(X, q=0.5)`` on float32
features is inflated by thousands of noise eigenvalues; its ``score_X`` ignores ``q``).

Reference: Friedman & Dieng (2023), "The Vendi Score: A Diversity Evaluation Metric for
Machine Learning", TMLR; Pasarkar & Dieng (2024), "Cousins of the Vendi Score", AISTATS.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from scorebench.core.lazy import lazy_module
from scorebench.core.errors import InputError
from scorebench.core.registry import register
from scorebench.core.validation import as_float_array, check_finite
from scorebench.metrics.generative._common import as_features
from scorebench.metrics.generative.stats import gram

scipy_linalg = lazy_module("scipy.linalg")

__all__ = ["vendi_score", "vendi_from_eigenvalues"]

_KERNELS = (None, "cosine", "precomputed")


def _check_q(q: Any) -> float:
    try:
        qf = float(q)
    except (TypeError, ValueError):
        raise InputError(f"q: expected a number >= 0 or inf, got {q!r}") from None
    if math.isnan(qf) or qf < 0:
        raise InputError(f"q: expected a number >= 0 or inf, got {q!r}")
    return qf


def vendi_from_eigenvalues(eigenvalues: Any, *, q: float = 1.0, rank_tol: float | None = None,
                           size: int | None = None) -> float:
    r"""Vendi score of order ``q`` from the eigenvalues of a normalised kernel (summing to 1).

    Eigenvalues at or below ``rank_tol`` (default ``max(lambda) * size * eps``, ``size`` the
    matrix order, defaulting to the number of eigenvalues) count as 0.

    Examples
    --------
    >>> vendi_from_eigenvalues([0.5, 0.5, 0.0])
    2.0
    >>> vendi_from_eigenvalues([0.75, 0.25], q=float("inf"))
    1.3333333333333333
    """
    lam = np.asarray(eigenvalues, dtype=np.float64).ravel()
    q = _check_q(q)
    if lam.size == 0 or not np.all(np.isfinite(lam)):
        raise InputError("eigenvalues: expected a non-empty array of finite numbers")
    top = float(lam.max())
    if top <= 0:
        raise InputError("eigenvalues: the kernel has no positive eigenvalue")
    tol = top * (size or lam.size) * np.finfo(np.float64).eps if rank_tol is None else float(rank_tol)
    lam = lam[lam > tol]
    lam = lam / lam.sum()  # rounding (and dropped noise) aside, they already sum to 1
    if q == 0:
        return float(lam.size)
    if q == 1:
        return float(np.exp(-np.sum(lam * np.log(lam))))
    if math.isinf(q):
        return float(1.0 / lam.max())
    return float(np.exp(np.log(np.sum(lam ** q)) / (1.0 - q)))


def _weights(p: Any, n: int) -> np.ndarray | None:
    if p is None:
        return None
    w = as_float_array(p, "p", ndim=1)
    if w.size != n:
        raise InputError(f"p: expected one probability per sample ({n}), got {w.size}")
    check_finite(w, "p")
    if (w < 0).any() or abs(w.sum() - 1.0) > 1e-8:
        raise InputError(f"p: expected non-negative probabilities summing to 1, got sum {w.sum()!r}")
    return w


def _gram_from_similarity(samples: Any, similarity: Callable[[Any, Any], float]) -> np.ndarray:
    items = list(samples)
    n = len(items)
    k = np.empty((n, n))
    for i in range(n):
        for j in range(i, n):
            k[i, j] = k[j, i] = float(similarity(items[i], items[j]))
    return k


def _check_kernel_matrix(k: np.ndarray) -> np.ndarray:
    if k.ndim != 2 or k.shape[0] != k.shape[1]:
        raise InputError(f"kernel matrix: expected a square (n, n) array, got shape {k.shape}")
    check_finite(k, "kernel matrix")
    if not np.allclose(k, k.T, rtol=1e-8, atol=1e-10):
        raise InputError("kernel matrix: expected a symmetric matrix")
    diag = np.diagonal(k)
    if not np.allclose(diag, 1.0, rtol=0, atol=1e-6):
        bad = np.flatnonzero(~np.isclose(diag, 1.0, rtol=0, atol=1e-6))
        raise InputError(f"kernel matrix: diagonal entries must be 1 (a normalised similarity); "
                         f"K[{bad[0]}, {bad[0]}] = {diag[bad[0]]!r}")
    return k


@register("vendi_score", family="generative", kind="features", inputs=("fake_features",),
          higher_is_better=True, bounds=(1.0, math.inf), per_row=False, interval="half_sampling_normal",
          params={"q": 1.0, "kernel": None},
          citation="Friedman & Dieng (2023), The Vendi Score: A Diversity Evaluation Metric for "
                   "Machine Learning, TMLR", tested_against=('vendi-score', 1e-12))
def vendi_score(X: Any, *, q: float = 1.0, kernel: str | Callable | None = None, p: Any = None,
                rank_tol: float | None = None) -> float:
    r"""Vendi score (effective number of distinct samples) of order ``q``.

    .. math:: \mathrm{VS}_q(X) = \exp H_q\bigl(\operatorname{eig}(K/n)\bigr)

    Parameters
    ----------
    X : array_like
        Features ``(n, d)`` (``kernel=None`` or ``"cosine"``: rows are unit-normalised and
        :math:`K = XX^\top`); a kernel matrix ``(n, n)`` with unit diagonal
        (``kernel="precomputed"``); or a sequence of samples (``kernel`` a similarity
        function ``k(x, y)`` with ``k(x, x) = 1``, evaluated on every pair).
    q : float, default 1
        Order: 0 (rank), 1 (Shannon), 2 (Frobenius, no eigenproblem), ``inf``, or any
        other non-negative number.
    kernel : None, "cosine", "precomputed" or callable
    p : array_like of shape (n,), optional
        Sample probabilities (default uniform).
    rank_tol : float, optional
        Eigenvalues at or below this are treated as 0 (default ``max(lambda) * n * eps``).

    Returns
    -------
    float
        Between 1 (all samples identical) and ``n`` (all mutually dissimilar).

    References
    ----------
    Friedman & Dieng (2023), TMLR; Pasarkar & Dieng (2024), AISTATS (orders q).

    Examples
    --------
    >>> import numpy as np
    >>> round(vendi_score(np.eye(4)), 12)              # 4 orthogonal samples
    4.0
    >>> round(vendi_score(np.ones((5, 3))), 12)        # 5 identical samples
    1.0
    >>> round(vendi_score(np.eye(3), kernel="precomputed", q=2), 12)
    3.0
    """
    q = _check_q(q)
    if callable(kernel):
        k = _check_kernel_matrix(_gram_from_similarity(X, kernel))
        return _vendi_kernel(k, q, _weights(p, k.shape[0]), rank_tol)
    if kernel not in _KERNELS:
        raise InputError(f"kernel: expected None, 'cosine', 'precomputed' or a similarity function, "
                         f"got {kernel!r}")
    if kernel == "precomputed":
        k = _check_kernel_matrix(as_float_array(X, "X (kernel matrix)", ndim=2))
        return _vendi_kernel(k, q, _weights(p, k.shape[0]), rank_tol)
    x = as_features(X, "X")
    norms = np.sqrt(np.einsum("ij,ij->i", x, x))
    if (norms == 0).any():
        raise InputError(f"X: all-zero feature rows ({np.flatnonzero(norms == 0)[:5].tolist()}) have no "
                         "cosine similarity; drop them or use a precomputed kernel")
    x = x / norms[:, None]
    n, d = x.shape
    w = _weights(p, n)
    # Weighted rows: x_i * sqrt(p_i); the non-zero eigenvalues of diag(sqrt p) X X^T diag(sqrt p)
    # are those of X^T diag(p) X.
    xw = x * (np.sqrt(w)[:, None] if w is not None else 1.0 / math.sqrt(n))
    small = gram(xw) if d <= n else gram(xw.T)
    if q == 2:
        return float(1.0 / np.sum(small * small))
    eig = scipy_linalg.eigh(small, eigvals_only=True, check_finite=False)
    return vendi_from_eigenvalues(eig, q=q, rank_tol=rank_tol, size=max(n, d))


def _vendi_kernel(k: np.ndarray, q: float, w: np.ndarray | None, rank_tol: float | None) -> float:
    n = k.shape[0]
    kw = k * np.outer(np.sqrt(w), np.sqrt(w)) if w is not None else k / n
    if q == 2:
        return float(1.0 / np.sum(kw * kw))
    eig = scipy_linalg.eigh(kw, eigvals_only=True, check_finite=False)
    return vendi_from_eigenvalues(eig, q=q, rank_tol=rank_tol, size=n)
