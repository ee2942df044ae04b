r"""Battles with style features deduplicated to (pair, outcome, style row) cells; bootstrap by reweighting.

A contextual (style) Bradley–Terry loss is a weighted sum over battles of a term that depends on
the battle only through its row :math:`(a, b, y, x)`:

.. math::
    \sum_k w_k\,\ell(a_k, b_k, y_k, x_k) = \sum_{u} \Big(\sum_{k \in u} w_k\Big)\,\ell(a_u, b_u, y_u, x_u),

so battles with identical rows (the same ordered pair, outcome and — after standardisation —
style vector) can be fitted as one cell carrying :math:`\sum w` (and :math:`\sum w^2` for the
sandwich's meat :math:`G`). With discrete or binned style features (counts of headers, a length
bin, ...) millions of battles shrink to a few thousand cells. With continuous features most rows
are distinct and the cells are the battles themselves; the fit is then unchanged.

A bootstrap round draws :math:`N` battles with replacement, exactly as the per-battle bootstrap
does (same random stream, so the same resamples for the same seed), and aggregates the drawn
battles' weights onto their cells: the round is a *reweighting* of the cells (multinomial counts
over the original battles, summed per cell), fitted warm-started from the full-data estimate.
Its result is the per-battle resample's fit, up to the optimiser's tolerance.

References: Efron & Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 6 (the bootstrap
as multinomial reweighting); lmarena/arena-rank 0.1.1 (``PairDataset``: (pair, outcome) counts).

Examples
--------
>>> import numpy as np
>>> a, b, y = np.array([0, 0, 0, 1]), np.array([1, 1, 1, 0]), np.array([1.0, 1.0, 0.0, 1.0])
>>> X = np.array([[0.5], [0.5], [0.5], [-0.5]])
>>> cells = style_cells(a, b, y, X, np.ones(4))
>>> cells.n_cells, cells.weight.tolist(), cells.n_battles
(3, [2.0, 1.0, 1.0], 4)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError

__all__ = ["StyleCells", "style_cells", "resample_cell_weights"]


@dataclass(frozen=True)
class StyleCells:
    """Distinct battle rows (ordered by pair ``a * n + b``, then first appearance) with their weight sums.

    The pair order lets a fit sum over each pair's contiguous block of cells in one pass.

    Attributes
    ----------
    a, b : ndarray of int
        Players of each cell.
    y : ndarray of float
        Outcome for ``a`` (1, 0 or 0.5).
    X : ndarray of float, shape (n_cells, k)
        Style row of each cell.
    weight, weight_sq : ndarray of float
        :math:`\\sum w` and :math:`\\sum w^2` over the cell's battles.
    inverse : ndarray of int
        Cell of every battle (length ``n_battles``).
    battle_weight : ndarray of float
        The battles' own weights (what a bootstrap round resamples).
    n_battles : int
    """

    a: np.ndarray
    b: np.ndarray
    y: np.ndarray
    X: np.ndarray
    weight: np.ndarray
    weight_sq: np.ndarray
    inverse: np.ndarray
    battle_weight: np.ndarray
    n_battles: int

    @property
    def n_cells(self) -> int:
        return len(self.a)


def _combine(code: np.ndarray, column: np.ndarray) -> np.ndarray:
    """Codes of the distinct (code, column) pairs, in order of first appearance (hash based, O(N))."""
    values, uniques = pd.factorize(column, use_na_sentinel=False)
    return pd.factorize(code * np.int64(len(uniques)) + values.astype(np.int64))[0].astype(np.int64)


def style_cells(a: np.ndarray, b: np.ndarray, y: np.ndarray, X: np.ndarray, w: np.ndarray) -> StyleCells:
    """Deduplicate battles to (a, b, outcome, style row) cells with :math:`\\sum w` and :math:`\\sum w^2`.

    Rows are equal when every value is bit-for-bit equal (standardisation maps equal raw
    features to equal values). ``X`` has shape (N, k), k >= 0.
    """
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    y = np.asarray(y, dtype=np.float64)
    X = np.asarray(X, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    N = len(a)
    if not (len(b) == len(y) == len(w) == N and X.ndim == 2 and X.shape[0] == N):
        raise InputError(f"style_cells: a, b, y, w and the rows of X must have one length, got {len(a)}, {len(b)}, "
                         f"{len(y)}, {len(w)} and X of shape {X.shape}")
    if N == 0:
        raise InputError("style_cells: no battles")
    n = int(max(a.max(), b.max())) + 1
    ycode = np.rint(2.0 * y).astype(np.int64)  # 0, 1, 2 for outcome 0, 0.5, 1
    if np.any(np.abs(ycode / 2.0 - y) > 0) or ycode.min() < 0 or ycode.max() > 2:
        raise InputError("style_cells: outcomes must be 0, 0.5 or 1")
    code = pd.factorize((a * n + b) * 3 + ycode)[0].astype(np.int64)
    for j in range(X.shape[1]):
        code = _combine(code, X[:, j] + 0.0)  # + 0.0: -0.0 and 0.0 are one value
    first = np.flatnonzero(~pd.Index(code).duplicated())  # codes number rows by first appearance
    U = len(first)
    order = np.argsort(a[first] * n + b[first], kind="stable")  # cells of one pair contiguous
    rank = np.empty(U, dtype=np.int64)
    rank[order] = np.arange(U)
    code, first = rank[code], first[order]
    return StyleCells(a[first], b[first], y[first], X[first], np.bincount(code, w, U), np.bincount(code, w * w, U),
                      code, w, N)


def resample_cell_weights(cells: StyleCells, rng: np.random.Generator) -> np.ndarray:
    """Weights of the cells in one bootstrap round: :math:`N` battles drawn with replacement, summed per cell.

    Draws ``rng.integers(N, size=N)`` (the per-battle bootstrap's draw), so the same generator
    state gives the same resample as refitting the battles with multiplicities.

    Examples
    --------
    >>> a, b, y = np.array([0, 0, 1]), np.array([1, 1, 0]), np.array([1.0, 1.0, 0.0])
    >>> cells = style_cells(a, b, y, np.zeros((3, 0)), np.ones(3))
    >>> float(resample_cell_weights(cells, np.random.default_rng(0)).sum())
    3.0
    """
    drawn = rng.integers(cells.n_battles, size=cells.n_battles)
    return np.bincount(cells.inverse[drawn], cells.battle_weight[drawn], cells.n_cells)
