"""Shared engine of the calibration family: input checks and per-bin sums.

Every binned calibration statistic (ECE, MCE, reliability diagrams, the Murphy
decomposition) is a function of three per-bin sums -- the count :math:`n_k`, the sum of
forecasts :math:`\\sum_{i \\in k} p_i` and the sum of outcomes :math:`\\sum_{i \\in k} y_i`
-- which :func:`bin_stats` computes in one pass with :func:`numpy.bincount`. Those sums
are mergeable, so the statistics can be computed from partitions of a table.

Bins
----
``binning="uniform"`` (alias ``"equal_width"``) uses the edges
:math:`e_k = k / B`; ``binning="quantile"`` (alias ``"equal_mass"``) uses the empirical
quantiles of the forecasts at levels :math:`k / B` (linear interpolation, the default of
``numpy.percentile``): with the sorted forecasts :math:`p_{(0)} \\le \\dots \\le p_{(n-1)}`
and :math:`h_k = k(n-1)/B`,

.. math:: e_k = p_{(\\lfloor h_k \\rfloor)} + (h_k - \\lfloor h_k \\rfloor)
          \\bigl(p_{(\\lfloor h_k \\rfloor + 1)} - p_{(\\lfloor h_k \\rfloor)}\\bigr).

A forecast on an interior edge belongs to the bin *below* it (bins are
:math:`[e_0, e_1], (e_1, e_2], \\dots`, as :func:`sklearn.calibration.calibration_curve`
assigns them), so with distinct forecasts bin :math:`k` holds the ranks in
:math:`(h_{k-1}, h_k]` (the first also rank 0): every bin holds
:math:`\\lfloor h_k \\rfloor - \\lfloor h_{k-1} \\rfloor` forecasts, i.e. :math:`(n-1)/B`
rounded down or up, plus the minimum in the first bin (16 distinct forecasts in 15 bins:
2, 1, 1, ..., 1); tied forecasts always share a bin. The position :math:`h_k` is computed
in integers, so an edge whose :math:`h_k` is whole *is* the forecast :math:`p_{(h_k)}`.
``numpy.percentile(p, np.linspace(0, 1, B + 1) * 100)`` -- and scikit-learn's
``calibration_curve(strategy="quantile")``, which uses it -- rounds those levels just below
:math:`k/B`, so the edge lands an ulp below the forecast, the forecast moves to the bin
above and "equal-mass" bins come out empty (``[2, 1, 1, 1, 0, 2, 0, 2, ...]`` in the example
above); scorebench deliberately differs from scikit-learn there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from scorebench.core.errors import InputError
from scorebench.core.validation import (as_class_index, as_float_array, check_binary, check_finite, check_count, check_positive_int,
                           check_probability, check_same_length, check_simplex)

__all__ = ["BINNINGS", "BinStats", "binary_inputs", "multiclass_inputs", "resolve_binning",
           "bin_edges", "equal_mass_edges", "bin_ids", "bin_stats", "top_label"]

# Accepted spellings of the two binning schemes, mapped to their canonical name.
BINNINGS = {"uniform": "uniform", "equal_width": "uniform", "quantile": "quantile", "equal_mass": "quantile"}


@dataclass(frozen=True)
class BinStats:
    """Per-bin sums of one binning of ``(y, p)``.

    Attributes
    ----------
    edges : ndarray, shape (B + 1,)
        Bin edges (for ``quantile`` binning, data quantiles; duplicated edges give empty bins).
    count, sum_p, sum_y : ndarray, shape (B,)
        Number of forecasts, sum of forecasts and sum of outcomes in each bin.
    n : int
        Total number of forecasts.
    """

    edges: np.ndarray
    count: np.ndarray
    sum_p: np.ndarray
    sum_y: np.ndarray
    n: int

    @property
    def nonempty(self) -> np.ndarray:
        return self.count > 0

    def means(self) -> tuple[np.ndarray, np.ndarray]:
        """Mean forecast and observed frequency per bin (NaN in empty bins)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.sum_p / self.count, self.sum_y / self.count

    def gaps(self) -> np.ndarray:
        """:math:`|\\bar y_k - \\bar p_k|` of the non-empty bins."""
        keep = self.nonempty
        return np.abs(self.sum_y[keep] - self.sum_p[keep]) / self.count[keep]


def _forecast_rows(y: Any, forecast: Any, name: str, ndim: int) -> tuple[np.ndarray, np.ndarray]:
    """Outcomes ``y`` (n,) and forecasts (n, ...) as finite float64 arrays with n >= 1 rows."""
    y = as_float_array(y, "y", ndim=1)
    f = as_float_array(forecast, name, ndim=ndim)
    check_same_length(**{"y": y, name: f})
    if y.size == 0:
        raise InputError(f"y, {name}: no forecasts given; expected at least one (outcome, forecast) row")
    return y, f


def binary_inputs(y: Any, p: Any) -> tuple[np.ndarray, np.ndarray]:
    """Validate binary outcomes and forecast probabilities; return them as float64.

    Raises :class:`~scorebench.core.errors.InputError` for outcomes other than 0/1,
    probabilities outside [0, 1], NaN or infinity, mismatched lengths and empty input.
    """
    y, p = _forecast_rows(y, p, "p", 1)
    check_finite(y, "y")
    check_finite(p, "p")
    check_binary(y, "y")
    check_probability(p, "p")
    return y, p


def multiclass_inputs(y: Any, P: Any, *, atol: float = 1e-6) -> tuple[np.ndarray, np.ndarray]:
    """Validate class indices ``y`` in ``{0, ..., K-1}`` and probabilities ``P`` of shape (n, K)."""
    y, P = _forecast_rows(y, P, "P", 2)
    if P.shape[1] < 2:
        raise InputError(f"P: expected at least two class columns, got shape {P.shape}")
    check_finite(P, "P")
    return as_class_index(y, P.shape[1], "y", of="P"), check_simplex(P, "P", atol=atol)


def top_label(y: np.ndarray, P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Top-label reduction: (was the arg-max class right, its probability).

    Ties in the arg-max go to the first class (``numpy.argmax``).
    """
    pred = np.argmax(P, axis=1)
    return (pred == y).astype(np.float64), P[np.arange(len(y)), pred]


def resolve_binning(binning: Any) -> str:
    """Canonical binning name (``"uniform"`` or ``"quantile"``); raises on anything else."""
    if not isinstance(binning, str) or binning not in BINNINGS:
        raise InputError(f"binning: expected one of {', '.join(map(repr, BINNINGS))}, got {binning!r}")
    return BINNINGS[binning]


def bin_edges(p: np.ndarray, n_bins: int, binning: str) -> np.ndarray:
    """Bin edges, shape ``(n_bins + 1,)``, for equal-width or equal-mass binning."""
    if resolve_binning(binning) == "uniform":
        return np.linspace(0.0, 1.0, n_bins + 1)
    return equal_mass_edges(p, n_bins)


def equal_mass_edges(p: np.ndarray, n_bins: int) -> np.ndarray:
    """Quantiles of ``p`` at levels ``k / n_bins`` (linear interpolation) with exact positions.

    The same numbers as ``numpy.percentile(p, 100 * k / n_bins)`` except that the position
    ``k (n - 1) / n_bins`` is split into whole and fractional parts in integer arithmetic,
    so an edge at a whole position is exactly that forecast (see the module docstring).
    """
    s = np.sort(p)
    num = np.arange(n_bins + 1) * (len(s) - 1)
    lo, rem = num // n_bins, num % n_bins
    hi = np.minimum(lo + 1, len(s) - 1)
    frac = rem / n_bins
    # min(): the interpolated edge may not round past the next forecast.
    return np.where(rem == 0, s[lo], np.minimum(s[lo] + frac * (s[hi] - s[lo]), s[hi]))


def bin_ids(p: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Bin index of each forecast: bins are closed on the right, the first also on the left."""
    return np.searchsorted(edges[1:-1], p, side="left")


def bin_stats(y: np.ndarray, p: np.ndarray, *, n_bins: int, binning: str = "uniform") -> BinStats:
    """Per-bin count, forecast sum and outcome sum (validated inputs expected)."""
    n_bins = check_count(n_bins, "n_bins", itemsize=32)
    edges = bin_edges(p, n_bins, binning)
    ids = bin_ids(p, edges)
    return BinStats(
        edges=edges,
        count=np.bincount(ids, minlength=n_bins).astype(np.float64),
        sum_p=np.bincount(ids, weights=p, minlength=n_bins),
        sum_y=np.bincount(ids, weights=y, minlength=n_bins),
        n=len(p),
    )
