r"""CRPS of integer-valued forecasts with a finite support, vectorised over rows.

For a forecast on :math:`\{l, \dots, l + s\}` the CDF is constant on each unit cell
:math:`[l + j, l + j + 1)`, so the CRPS integral is a sum over cells,

.. math:: \mathrm{CRPS}(F, y) = \sum_{j<J} F_j^2 + \bigl[f F_J^2 + (1 - f) S_J^2\bigr]
          + \sum_{j>J} S_j^2 + (l - y)_+ + (y - l - s)_+,

with :math:`F_j = F(l + j)`, :math:`S_j = 1 - F_j` (both over :math:`j = 0, \dots, s - 1`),
:math:`J = \lfloor y\rfloor - l` and :math:`f = y - \lfloor y\rfloor` (the bracket only
when :math:`0 \le J < s`). Every term is non-negative and :math:`S_j` is summed from the
upper end, so nothing cancels.

The masses come from the log ratios :math:`t_i = \log f(l + i + 1)/f(l + i)` of successive
masses, summed outwards from the mode: the partial sums stay small near the mode (where
the mass is), so the relative masses keep their digits for supports of any width, and
no mass over- or underflows before it is negligible. Rows are sorted by support width
(a radix sort) and processed in chunks laid out as ``(width, rows)`` grids, so the work
is the sum of the widths, not the largest width times the rows, and every operation
(the cumulative sums included) runs along contiguous rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

#: Grid elements per chunk: a few ``(width, rows)`` float64 grids stay in the L2 cache.
_CHUNK_ELEMENTS = 1 << 16
#: Below this many rows a chunk's cumulative sums use ``np.cumsum`` (its strided loop
#: beats one Python-level vector addition per grid row only for narrow grids).
_LOOP_MIN_ROWS = 64
#: Log ratio standing for a zero mass beyond the support (finite, so 0 * it is 0).
_LOG_ZERO = -1e300

#: ``log_ratio(rows, i)``: the log ratios :math:`t_i` for the flat row indices ``rows`` on
#: the column grid ``i`` of shape ``(W, 1)``, as a new ``(W, len(rows))`` array; beyond a
#: row's support any of ``-inf``, ``NaN`` or a value from a non-positive ratio.
LogRatio = Callable[[np.ndarray, np.ndarray], np.ndarray]


def _accumulate(terms: np.ndarray, out: np.ndarray, reverse: bool = False) -> None:
    """Cumulative sum of ``terms`` along axis 0 into ``out`` (from the last row if ``reverse``).

    ``np.cumsum`` along axis 0 walks each column with a stride; adding whole rows is
    several times faster once the rows are long.
    """
    if terms.shape[1] < _LOOP_MIN_ROWS:
        src, dst = (terms[::-1], out[::-1]) if reverse else (terms, out)
        np.cumsum(src, axis=0, out=dst)
        return
    last = terms.shape[0] - 1
    first, order, step = (last, range(last - 1, -1, -1), 1) if reverse else (0, range(1, last + 1), -1)
    np.copyto(out[first], terms[first])
    for k in order:
        np.add(out[k + step], terms[k], out=out[k])


def relative_masses(t: np.ndarray, mode: np.ndarray) -> np.ndarray:
    """Masses :math:`f(l + k)/f(l + m)`, ``k = 0..W``, shape ``(W + 1, r)``, from the log
    ratios ``t`` (``(W, r)``, overwritten) and the mode offsets ``m`` (``(r,)``)."""
    width, rows = t.shape
    np.fmax(t, _LOG_ZERO, out=t)  # fmax also maps NaN to _LOG_ZERO
    up = t * (np.arange(width, dtype=float)[:, None] >= mode)
    t -= up  # only the steps below the mode are left in t
    logw = np.empty((width + 1, rows))
    logw[0] = 0.0
    if width:
        _accumulate(up, logw[1:])  # sum of t_i over m <= i < k
        _accumulate(t, t, reverse=True)  # sum of t_i over k <= i < m
        logw[:-1] -= t
    return np.exp(logw, out=logw)


def _gather(grid: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``grid[index[c], c]`` for every column ``c`` (``index`` integer-valued floats)."""
    flat = index.astype(np.intp) * grid.shape[1] + np.arange(grid.shape[1])
    return grid.ravel().take(flat)


def cell_sums(w: np.ndarray, y: np.ndarray, lo: np.ndarray, size: np.ndarray) -> np.ndarray:
    """The CRPS of the module docstring for unnormalised masses ``w`` (``(W + 1, r)``,
    zero beyond each support) at ``lo + j``, outcomes ``y`` and support widths ``size``."""
    width = w.shape[0] - 1
    fl = np.floor(y)
    frac, jc = y - fl, np.clip(fl - lo, -1.0, size)  # cells j < jc use F, j > jc use S
    cdf = np.empty_like(w)
    _accumulate(w, cdf)
    total = cdf[width].copy()
    sf = np.empty_like(w)  # S_j = sum of w_i over i > j
    sf[width] = 0.0
    if width:
        _accumulate(w[1:], sf[:-1], reverse=True)
    inside = (jc >= 0) & (jc < size)
    at = np.where(inside, jc, 0.0)
    mid = np.where(inside, frac * _gather(cdf, at) ** 2 + (1.0 - frac) * _gather(sf, at) ** 2, 0.0)
    below = np.empty((width + 2, w.shape[1]))  # below[q] = sum of F_j^2 over j < q
    below[0] = 0.0
    _accumulate(np.square(cdf, out=cdf), below[1:])
    above = np.empty((width + 2, w.shape[1]))  # above[q + 1] = sum of S_j^2 over j > q
    above[-1] = 0.0
    _accumulate(np.square(sf, out=sf), above[:-1], reverse=True)
    cells = _gather(below, np.maximum(jc, 0.0)) + mid + _gather(above, jc + 1.0)
    return cells / (total * total) + np.maximum(lo - y, 0.0) + np.maximum(y - lo - size, 0.0)


def _chunks(widths: np.ndarray) -> Iterator[slice]:
    """Slices of rows (sorted by width) holding about ``_CHUNK_ELEMENTS`` grid elements."""
    ends = np.cumsum(widths + 1.0)
    start = 0
    while start < ends.size:
        base = ends[start - 1] if start else 0.0
        stop = max(start + 1, int(np.searchsorted(ends, base + _CHUNK_ELEMENTS, side="right")))
        yield slice(start, stop)
        start = stop


def lattice_crps(obs: np.ndarray, lo: np.ndarray, size: np.ndarray, mode: np.ndarray,
                 log_ratio: LogRatio) -> np.ndarray:
    """CRPS per row of forecasts on ``{lo, ..., lo + size}`` with mode ``lo + mode``.

    All arrays share one shape; a row with any of them NaN scores NaN, a row with
    ``size == 0`` (a point mass) scores ``|y - lo|``.
    """
    y, lo_f, size_f, mode_f = (a.ravel() for a in (obs, lo, size, mode))
    out = np.abs(y - lo_f)
    out[np.isnan(size_f) | np.isnan(mode_f)] = np.nan
    rows = np.flatnonzero(~np.isnan(out) & (size_f > 0))
    # A stable radix sort (16-bit keys): wider rows beyond the key range share its last key.
    rows = rows[np.argsort(np.minimum(size_f[rows], 65535.0).astype(np.uint16), kind="stable")]
    for sl in _chunks(size_f[rows]):
        idx = rows[sl]
        width = int(size_f[idx].max())
        with np.errstate(divide="ignore", invalid="ignore"):  # log(0), log(< 0) beyond a support
            t = log_ratio(idx, np.arange(width, dtype=float)[:, None])
        out[idx] = cell_sums(relative_masses(t, mode_f[idx]), y[idx], lo_f[idx], size_f[idx])
    return out.reshape(obs.shape)
