r"""Banded E-step products: each system's posterior only on the nodes where it is not negligible.

For a long test every posterior is narrow (standard deviation about :math:`1/\sqrt{I(\theta)}`,
0.04 at 2,000 items) while the grid spans every system's ability, so almost all of the
systems x nodes cells of the two E-step products are posterior weights that underflow.
When every item has :math:`c_j = 0` and :math:`u_j = 1` (1PL, 2PL) the log-posterior of system
:math:`i`,

.. math::

    f_i(\theta) = \sum_j y_{ij}\log\sigma(a_j\theta + d_j)
                + m_{ij}(1 - y_{ij})\log(1 - \sigma(a_j\theta + d_j)) + \log g(\theta),

is concave in :math:`\theta` (each :math:`\log\sigma` and :math:`\log(1-\sigma)` of a linear
function is concave, and so is the normal log-density), so its superlevel set
:math:`\{\theta: f_i(\theta) \ge t\}` is an interval. :func:`find_bands` evaluates
:math:`f_i` on every ``stride``-th node (one product of 1/``stride`` of the full cost), takes
:math:`t` = the coarse maximum minus ``drop`` and bounds the interval by the first coarse nodes
below :math:`t` on either side: every node outside has posterior weight below
:math:`e^{-\text{drop}}` (2e-22 for drop = 50) times the largest one, far below the rounding of
the float64 sums. Systems are sorted by their window and cut into blocks; each block's
products run over the union of its members' windows (:func:`banded_estep`), and the cells
outside are exact zeros of the posterior. The log-likelihood, posteriors and expected counts
agree with the full products to float64 rounding (relative 1e-13 in the tests). The narrow
block products run on one BLAS thread (on a loaded 2-core machine two threads spent more CPU
time than one on them).

For 3PL/4PL parameters the log-posterior need not be concave and the full products are used.

Example
-------
>>> import numpy as np
>>> from scorebench.irt.quadrature import Grid, ResponseOps, estep
>>> from scorebench.irt.bands import banded_estep, find_bands
>>> rng = np.random.default_rng(0)
>>> params = np.column_stack([rng.uniform(0.5, 2, 400), rng.normal(0, 1, 400), np.zeros(400), np.ones(400)])
>>> theta = rng.normal(0, 1, 300)
>>> y = (rng.random((300, 400)) < 1 / (1 + np.exp(-(theta[:, None] * params[:, 0] + params[:, 1])))) * 1.0
>>> ops, grid = ResponseOps(y), Grid(np.linspace(-5, 5, 201), 0.05)
>>> bands = find_bands(ops, params, grid, block=32)
>>> post, loglik, r, n = banded_estep(ops, params, grid, bands)
>>> full = estep(ops, params, grid, banded=False)
>>> bool(np.allclose(r, full.r, rtol=1e-12, atol=1e-12 * full.r.max())), bands.fraction < 0.5
(True, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from scorebench.irt.blas import blas_limit
from scorebench.irt.models import log_prob

if TYPE_CHECKING:  # quadrature imports this module
    from scorebench.irt.quadrature import Grid, ResponseOps

__all__ = ["Bands", "BAND_MIN_CELLS", "banded_estep", "concave", "find_bands", "normalise"]

#: E-steps with more than this many cells (systems x items x nodes) use the banded products.
BAND_MIN_CELLS = 5e8
#: Banded products are used only when they cover at most this fraction of the systems x nodes cells.
MAX_FRACTION = 0.6


@dataclass(frozen=True)
class Bands:
    """Blocks of systems and the node window ``[lo, hi)`` each block is evaluated on."""

    blocks: tuple[tuple[np.ndarray, int, int], ...]
    fraction: float   # share of the systems x nodes cells the blocks cover


def concave(params: np.ndarray) -> bool:
    """Whether every item has ``c = 0`` and ``u = 1`` (log-posteriors concave in theta)."""
    return bool(np.all(params[:, 2] == 0.0) and np.all(params[:, 3] == 1.0))


def find_bands(ops: ResponseOps, params: np.ndarray, grid: Grid, *, stride: int = 8, drop: float = 50.0,
               block: int = 256) -> Bands:
    """Node windows outside which every posterior weight is below ``exp(-drop)`` of its maximum.

    Valid only for :func:`concave` parameters (the caller checks). ``ops`` is a
    :class:`~scorebench.irt.quadrature.ResponseOps`.
    """
    n_nodes = grid.theta.size
    coarse = np.unique(np.r_[np.arange(0, n_nodes, stride), n_nodes - 1])
    log_p, log_q = log_prob(params, grid.theta[coarse])
    ll = ops.loglik_nodes(log_p, log_q) + grid.log_weights[coarse][None, :]
    keep = ll >= ll.max(axis=1, keepdims=True) - drop
    first = keep.argmax(axis=1)
    last = keep.shape[1] - 1 - keep[:, ::-1].argmax(axis=1)
    lo = coarse[np.maximum(first - 1, 0)]
    hi = coarse[np.minimum(last + 1, coarse.size - 1)] + 1
    order = np.argsort(lo + hi, kind="stable")
    blocks = []
    covered = 0
    for s in range(0, order.size, block):
        rows = np.sort(order[s:s + block])
        b_lo, b_hi = int(lo[rows].min()), int(hi[rows].max())
        blocks.append((rows, b_lo, b_hi))
        covered += rows.size * (b_hi - b_lo)
    return Bands(tuple(blocks), covered / max(1, order.size * n_nodes))


def normalise(ll: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Posterior weights (rows sum to 1, computed in place of ``ll``) and the row log-sum-exp."""
    top = ll.max(axis=1, keepdims=True)
    post = np.exp(ll - top, out=ll)
    total = post.sum(axis=1, keepdims=True)
    post /= total
    return post, (top + np.log(total))[:, 0]


def banded_estep(ops: ResponseOps, params: np.ndarray, grid: Grid, bands: Bands, *,
                 counts: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The E-step with the products restricted to ``bands``: ``(post, loglik_person, r, n)``.

    ``r`` and ``n`` are empty without ``counts``; :func:`~scorebench.irt.quadrature.estep`
    wraps the result in a :class:`~scorebench.irt.quadrature.Posterior`.
    """
    log_p, log_q = log_prob(params, grid.theta)
    n_sys, n_nodes = ops.shape[0], grid.theta.size
    log_w = grid.log_weights
    post = np.zeros((n_sys, n_nodes))
    lse = np.empty(n_sys)
    r = np.zeros((ops.shape[1], n_nodes)) if counts else np.empty((0, 0))
    n = np.zeros_like(r) if counts and ops.m is not None else None
    with blas_limit(0.0):  # narrow products: BLAS threads cost more than they save (and spin under load)
        for rows, lo, hi in bands.blocks:
            # one gather of the block's responses serves both products (rows are normalised alone)
            y, m = ops.block(rows)
            ll = y @ (log_p[:, lo:hi] - log_q[:, lo:hi])
            ll += log_q[:, lo:hi].sum(axis=0)[None, :] if m is None else m @ log_q[:, lo:hi]
            ll += log_w[None, lo:hi]
            post[rows, lo:hi], lse[rows] = normalise(ll)
            if counts:
                r[:, lo:hi] += y.T @ post[rows, lo:hi]
                if n is not None and m is not None:
                    n[:, lo:hi] += m.T @ post[rows, lo:hi]
    if counts and n is None:
        n = np.broadcast_to(post.sum(axis=0)[None, :], r.shape)
    return post, lse, r, (n if n is not None else np.empty((0, 0)))
