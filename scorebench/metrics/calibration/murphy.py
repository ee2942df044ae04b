"""Murphy's decomposition of the Brier score into reliability, resolution and uncertainty."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from scorebench.core.docstrings import fill_doc
from scorebench.core.errors import InputError
from scorebench.core.registry import register
from scorebench.core.validation import check_count, check_positive_int
from scorebench.metrics.calibration._common import bin_edges, bin_ids, binary_inputs, resolve_binning
from scorebench.metrics.calibration.binned import BINNING_OPTION, binned_partial
from scorebench.metrics.calibration.docs import SECTIONS

__all__ = ["BrierDecomposition", "brier_decomposition", "brier_reliability", "brier_resolution"]

_MURPHY = "Murphy (1973), A New Vector Partition of the Probability Score, J. Appl. Meteor. 12(4)"
_STEPHENSON = ("Stephenson, Coelho & Jolliffe (2008), Two Extra Components in the Brier Score Decomposition, "
               "Weather and Forecasting 23(4)")
#: The binning parameters of the decomposition and of its two registered terms.
_BINS = """
n_bins : int or None, default 10
    Number of bins, or ``None`` for one bin per distinct forecast value.
binning : {"uniform", "quantile"}, default "uniform"
    Bin rule when ``n_bins`` is an integer (see :func:`ece`).
"""


@dataclass(frozen=True)
class BrierDecomposition:
    """Components of the Brier score; ``brier == reliability - resolution + uncertainty +
    within_bin_variance - within_bin_covariance`` up to rounding.

    Attributes
    ----------
    brier : float
        Mean squared error :math:`\\frac1n\\sum_i (p_i - y_i)^2`.
    reliability : float
        :math:`\\frac1n \\sum_k n_k (\\bar p_k - \\bar y_k)^2` (lower is better).
    resolution : float
        :math:`\\frac1n \\sum_k n_k (\\bar y_k - \\bar y)^2` (higher is better).
    uncertainty : float
        :math:`\\bar y (1 - \\bar y)`, the Brier score of the climatological forecast :math:`\\bar y`.
    within_bin_variance : float
        :math:`\\frac1n \\sum_k \\sum_{i \\in k} (p_i - \\bar p_k)^2`.
    within_bin_covariance : float
        :math:`\\frac2n \\sum_k \\sum_{i \\in k} (p_i - \\bar p_k)(y_i - \\bar y_k)`.
    n_bins : int
        Number of non-empty bins.
    binning : str
        ``"distinct"`` (one bin per distinct forecast value), ``"uniform"`` or ``"quantile"``.
    n : int
        Number of forecasts.
    """

    brier: float
    reliability: float
    resolution: float
    uncertainty: float
    within_bin_variance: float
    within_bin_covariance: float
    n_bins: int
    binning: str
    n: int

    @property
    def residual(self) -> float:
        """``brier - (reliability - resolution + uncertainty)`` = the two within-bin terms."""
        return self.within_bin_variance - self.within_bin_covariance

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def brier_decomposition(y: Any, p: Any, *, n_bins: int | None = 10, binning: str = "uniform") -> BrierDecomposition:
    """Murphy decomposition of the binary Brier score, with the two within-bin terms.

    Grouping the forecasts into bins :math:`k` (with :math:`n_k` forecasts, mean forecast
    :math:`\\bar p_k`, observed frequency :math:`\\bar y_k`, overall frequency :math:`\\bar y`),

    .. math::

        \\mathrm{BS} = \\underbrace{\\tfrac1n \\textstyle\\sum_k n_k(\\bar p_k - \\bar y_k)^2}_{\\mathrm{REL}}
        - \\underbrace{\\tfrac1n \\textstyle\\sum_k n_k(\\bar y_k - \\bar y)^2}_{\\mathrm{RES}}
        + \\underbrace{\\bar y(1 - \\bar y)}_{\\mathrm{UNC}}
        + \\underbrace{\\tfrac1n \\textstyle\\sum_k\\sum_{i\\in k}(p_i - \\bar p_k)^2}_{\\mathrm{WBV}}
        - \\underbrace{\\tfrac2n \\textstyle\\sum_k\\sum_{i\\in k}(p_i - \\bar p_k)(y_i - \\bar y_k)}_{\\mathrm{WBC}}

    holds exactly. When every bin holds a single forecast value -- ``n_bins=None``
    bins by the distinct values of ``p``, which is Murphy's (1973) original partition
    for forecasts issued on a few levels (e.g. tenths) -- the within-bin variance and
    covariance are both 0 and :math:`\\mathrm{REL} - \\mathrm{RES} + \\mathrm{UNC}` reproduces
    the Brier score exactly. With coarser bins the within-bin terms (Stephenson et al.
    2008) carry the difference; they are reported rather than dropped.

    Parameters
    ----------
    %(binary, murphy_bins)s

    Returns
    -------
    BrierDecomposition

    References
    ----------
    Murphy (1973), A New Vector Partition of the Probability Score, J. Appl. Meteor.
    12(4); Stephenson, Coelho & Jolliffe (2008), Two Extra Components in the Brier Score
    Decomposition, Weather and Forecasting 23(4).

    Examples
    --------
    >>> d = brier_decomposition([0, 1, 1, 0], [0.2, 0.8, 0.8, 0.2], n_bins=None)
    >>> round(d.reliability, 6), round(d.resolution, 6), round(d.uncertainty, 6), round(d.brier, 6)
    (0.04, 0.25, 0.25, 0.04)
    """
    y, p = binary_inputs(y, p)
    n = len(p)
    if n_bins is None:
        levels, ids = np.unique(p, return_inverse=True)
        kind = "distinct"
    else:
        ids = bin_ids(p, bin_edges(p, check_count(n_bins, "n_bins", itemsize=32), binning))
        kind = resolve_binning(binning)
        levels = None
    size = int(ids.max()) + 1
    count = np.bincount(ids, minlength=size).astype(np.float64)
    nonempty = count > 0
    safe = np.where(nonempty, count, 1.0)
    # with one bin per distinct value the bin mean is that value exactly (no rounding)
    p_bar = levels if levels is not None else np.bincount(ids, weights=p, minlength=size) / safe
    y_bar = np.bincount(ids, weights=y, minlength=size) / safe
    climatology = y.mean()
    dp = p - p_bar[ids]
    dy = y - y_bar[ids]
    return BrierDecomposition(
        brier=float(np.mean((p - y) ** 2)),
        reliability=float(np.sum(count * (p_bar - y_bar) ** 2) / n),
        resolution=float(np.sum(count * (y_bar - climatology) ** 2) / n),
        uncertainty=float(climatology * (1.0 - climatology)),
        within_bin_variance=float(np.mean(dp * dp)),
        within_bin_covariance=float(2.0 * np.mean(dp * dy)),
        n_bins=int(nonempty.sum()),
        binning=kind,
        n=n,
    )


# --- mergeable sufficient statistics (equal-width bins; see binned.binned_partial) ---------


def _murphy_partial(arrays: Any, weights: Any, n_bins: int | None = 10, binning: str = "uniform") -> np.ndarray:
    if n_bins is None:
        raise InputError("brier decomposition: n_bins=None (one bin per distinct forecast) cannot be reduced "
                         "from partitions; give an integer n_bins with a partitioned engine")
    return binned_partial(arrays["y"], arrays["p"], weights, n_bins, binning, "brier decomposition")


def _bin_means(stats: Any, n_bins: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    stats = np.asarray(stats, dtype=np.float64)
    count, sum_p, sum_y = stats[..., :n_bins], stats[..., n_bins:2 * n_bins], stats[..., 2 * n_bins:]
    safe = np.where(count > 0, count, 1.0)
    return count, sum_p / safe, sum_y / safe, count.sum(axis=-1)


def _reliability_finalize(stats: Any, n_bins: int = 10, binning: str = "uniform") -> np.ndarray:
    count, p_bar, y_bar, n = _bin_means(stats, n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (count * (p_bar - y_bar) ** 2).sum(axis=-1) / n


def _resolution_finalize(stats: Any, n_bins: int = 10, binning: str = "uniform") -> np.ndarray:
    count, _, y_bar, n = _bin_means(stats, n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        climatology = (count * y_bar).sum(axis=-1) / n
        return (count * (y_bar - climatology[..., None]) ** 2).sum(axis=-1) / n



#: Registry keywords of the two registered terms: one partial (the binned sums), two finalizers.
_TERM = dict(family="calibration", kind="binary", inputs=("y", "p"), per_row=False,
             params={"n_bins": 10, "binning": BINNING_OPTION}, citation=f"{_MURPHY}; {_STEPHENSON}",
             partial=_murphy_partial, tested_against=('scikit-learn', 1e-15))


@register("brier_reliability", higher_is_better=False, bounds=(0.0, 1.0), finalize=_reliability_finalize, **_TERM)
def brier_reliability(y: Any, p: Any, *, n_bins: int | None = 10, binning: str = "uniform") -> float:
    """Reliability (calibration) term of the Murphy decomposition of the Brier score.

    .. math::

        \\mathrm{REL} = \\frac1n \\sum_k n_k (\\bar p_k - \\bar y_k)^2

    the squared gap between each bin's mean forecast and its observed frequency, weighted
    by the bin's size: 0 for a calibrated forecast, lower is better. See
    :func:`brier_decomposition`.

    Parameters
    ----------
    %(binary, murphy_bins)s

    Examples
    --------
    Forecasts of 0.2 and 0.8 for events that never and always happen are under-confident;
    the climatological forecast 0.5 is calibrated (it says nothing about single cases, but
    what it says is right on average):

    >>> y = [0, 1, 1, 0]
    >>> round(brier_reliability(y, [0.2, 0.8, 0.8, 0.2], n_bins=None), 6)
    0.04
    >>> brier_reliability(y, [0.5, 0.5, 0.5, 0.5], n_bins=None)
    0.0
    """
    return brier_decomposition(y, p, n_bins=n_bins, binning=binning).reliability


@register("brier_resolution", higher_is_better=True, bounds=(0.0, 0.25), finalize=_resolution_finalize, **_TERM)
def brier_resolution(y: Any, p: Any, *, n_bins: int | None = 10, binning: str = "uniform") -> float:
    """Resolution term of the Murphy decomposition of the Brier score.

    .. math::

        \\mathrm{RES} = \\frac1n \\sum_k n_k (\\bar y_k - \\bar y)^2

    how far each bin's observed frequency lies from the overall frequency :math:`\\bar y`;
    at most the uncertainty :math:`\\bar y (1 - \\bar y)` (hence the bound 0.25), higher is
    better. Calibration does not buy resolution. See :func:`brier_decomposition`.

    Parameters
    ----------
    %(binary, murphy_bins)s

    Examples
    --------
    The same events: forecasts that separate them from the non-events resolve all of the
    uncertainty (0.25), the calibrated climatological forecast none of it:

    >>> y = [0, 1, 1, 0]
    >>> brier_resolution(y, [0.2, 0.8, 0.8, 0.2], n_bins=None), brier_resolution(y, [0.5] * 4, n_bins=None)
    (0.25, 0.0)
    """
    return brier_decomposition(y, p, n_bins=n_bins, binning=binning).resolution


fill_doc(brier_decomposition, brier_reliability, brier_resolution, murphy_bins=_BINS, **SECTIONS)
