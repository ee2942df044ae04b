"""Binned calibration errors (ECE, MCE, adaptive ECE) and reliability-diagram data.

All of them bin the forecasts (see :mod:`._common` for the bin rules) and compare, in
each bin :math:`k` with :math:`n_k` forecasts, the mean forecast :math:`\\bar p_k` with
the observed frequency :math:`\\bar y_k`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.lazy import lazy_attr
from scorebench.core.errors import InputError
from scorebench.core.registry import register
from scorebench.core.table_schema import Option
from scorebench.metrics.calibration._common import BINNINGS
from scorebench.core.validation import check_level, check_count, check_positive_int
from scorebench.metrics.calibration._common import (BinStats, bin_edges, bin_ids, bin_stats, binary_inputs, multiclass_inputs,
                      resolve_binning, top_label)
from scorebench.core.docstrings import fill_doc
from scorebench.metrics.calibration.docs import SECTIONS

ndtri = lazy_attr("scipy.special", "ndtri")

__all__ = ["ece", "mce", "l2_calibration_error", "adaptive_ece", "ece_top_label", "classwise_ece", "reliability_diagram",
           "ReliabilityDiagram"]

_GUO = "Guo, Pleiss, Sun & Weinberger (2017), On Calibration of Modern Neural Networks, ICML"

#: The ``binning`` parameter of the binned calibration metrics (equal width or equal mass bins).
BINNING_OPTION = Option("binning", str, "uniform", "bin edges: equal width (uniform) or equal mass (quantile)",
                        choices=tuple(BINNINGS))
_NAEINI = "Naeini, Cooper & Hauskrecht (2015), Obtaining Well Calibrated Probabilities Using Bayesian Binning, AAAI"


def _ece_from_stats(stats: BinStats) -> float:
    # sum_k (n_k / n) |ybar_k - pbar_k| = sum_k |sum_y_k - sum_p_k| / n (no division by n_k).
    return float(np.abs(stats.sum_y - stats.sum_p).sum() / stats.n)


# --- mergeable sufficient statistics (used by the Dask engine) ----------------------------
#
# With equal-width bins every binned statistic is a function of the per-bin (count, sum of
# p, sum of y), which add across partitions: ``partial`` returns them laid out as
# [count_1..B, sum_p_1..B, sum_y_1..B] (shape (3B,), or (R, 3B) for an (R, n) matrix of
# bootstrap weights) and ``finalize`` turns (batched) sums into values. Equal-mass bins
# depend on global quantiles and are not mergeable.


def _uniform_only(binning: str, name: str) -> None:
    if resolve_binning(binning) != "uniform":
        raise InputError(f"{name}: binning={binning!r} needs the quantiles of the whole table, so it cannot be "
                         "reduced from partitions; use binning='uniform' with a partitioned engine")


def binned_partial(y: np.ndarray, p: np.ndarray, weights: Any, n_bins: int, binning: str = "uniform",
                   name: str = "ece") -> np.ndarray:
    """Per-bin [count, sum p, sum y] of equal-width bins, optionally under row weights (R, n)."""
    _uniform_only(binning, name)
    n_bins = check_count(n_bins, "n_bins", itemsize=32)
    y = np.asarray(y, dtype=np.float64)
    p = np.asarray(p, dtype=np.float64)
    ids = bin_ids(p, bin_edges(p, n_bins, "uniform"))
    if weights is None:
        return np.concatenate([np.bincount(ids, minlength=n_bins), np.bincount(ids, weights=p, minlength=n_bins),
                               np.bincount(ids, weights=y, minlength=n_bins)]).astype(np.float64)
    # One bincount per round and statistic: linear in rounds x rows, no (R, n) gather and
    # never an (n, 3 * n_bins) design matrix (5x faster than sorting the columns by bin).
    weights = np.asarray(weights, dtype=np.float64)
    out = np.empty((weights.shape[0], 3 * n_bins))
    for r, w in enumerate(weights):
        out[r, :n_bins] = np.bincount(ids, weights=w, minlength=n_bins)
        out[r, n_bins:2 * n_bins] = np.bincount(ids, weights=w * p, minlength=n_bins)
        out[r, 2 * n_bins:] = np.bincount(ids, weights=w * y, minlength=n_bins)
    return out


def binned_bootstrap(y: np.ndarray, p: np.ndarray, n_boot: int, rng: np.random.Generator, n_bins: int,
                     binning: str = "uniform", name: str = "ece") -> np.ndarray:
    """Multinomial bootstrap of the per-bin [count, sum p, sum y], shape ``(n_boot, 3 * n_bins)``.

    Without a weight per row (for tables where ``n * n_boot`` is large): the rows fall into
    cells (bin, outcome); a resample's cell counts :math:`W_c` are drawn exactly from
    Multinomial(n, n_c / n), which fixes every bin's count and outcome sum; the sum of p
    over the :math:`W_c` draws inside a cell is replaced by its normal limit
    :math:`W_c \\bar p_c + \\sqrt{W_c s_c^2}\\,z` (the stratified bootstrap of
    :mod:`scorebench.core.stats`; within a bin of width 1/B, :math:`s_c^2 \\le 1/(4B^2)`).
    Cost O(n) once plus O(n_boot x cells).
    """
    _uniform_only(binning, name)
    n_bins = check_count(n_bins, "n_bins", itemsize=32)
    y = np.asarray(y, dtype=np.float64)
    p = np.asarray(p, dtype=np.float64)
    ids = bin_ids(p, bin_edges(p, n_bins, "uniform"))
    levels, y_code = np.unique(y, return_inverse=True)
    cell = ids * levels.size + y_code
    n_cells = n_bins * levels.size
    size = np.bincount(cell, minlength=n_cells).astype(np.float64)
    mean = np.bincount(cell, weights=p, minlength=n_cells) / np.maximum(size, 1.0)
    var = np.bincount(cell, weights=(p - mean[cell]) ** 2, minlength=n_cells) / np.maximum(size, 1.0)
    counts = rng.multinomial(p.size, size / p.size, size=n_boot).astype(np.float64)
    sum_p = counts * mean + np.sqrt(counts * var) * rng.standard_normal(counts.shape)
    shape = (n_boot, n_bins, levels.size)
    return np.concatenate([counts.reshape(shape).sum(axis=2), sum_p.reshape(shape).sum(axis=2),
                           (counts.reshape(shape) * levels).sum(axis=2)], axis=1)


def _binned_bootstrap_stats(name: str):
    """A registry ``bootstrap_stats`` hook for the binary binned metrics."""

    def hook(arrays: Any, n_boot: int, rng: np.random.Generator, n_bins: int, binning: str = "uniform",
             **_: Any) -> np.ndarray:
        if "P" in arrays:  # top-label: the correctness of the top class at its confidence
            correct, confidence = top_label(np.asarray(arrays["y"]), np.asarray(arrays["P"], dtype=np.float64))
            return binned_bootstrap(correct, confidence, n_boot, rng, n_bins, binning, name)
        return binned_bootstrap(arrays["y"], arrays["p"], n_boot, rng, n_bins, binning, name)

    return hook


def _split(stats: Any, n_bins: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    stats = np.asarray(stats, dtype=np.float64)
    return stats[..., :n_bins], stats[..., n_bins:2 * n_bins], stats[..., 2 * n_bins:3 * n_bins]


def _ece_finalize(stats: Any, n_bins: int, binning: str = "uniform") -> np.ndarray:
    count, sum_p, sum_y = _split(stats, n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.abs(sum_y - sum_p).sum(axis=-1) / count.sum(axis=-1)


def _mce_finalize(stats: Any, n_bins: int, binning: str = "uniform") -> np.ndarray:
    count, sum_p, sum_y = _split(stats, n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        gaps = np.where(count > 0, np.abs(sum_y - sum_p) / np.where(count > 0, count, 1.0), -np.inf)
    out = gaps.max(axis=-1)
    return np.where(np.isfinite(out), out, np.nan)


def _ece_partial(arrays: Any, weights: Any, n_bins: int, binning: str = "uniform") -> np.ndarray:
    return binned_partial(arrays["y"], arrays["p"], weights, n_bins, binning, "ece")


def _mce_partial(arrays: Any, weights: Any, n_bins: int, binning: str = "uniform") -> np.ndarray:
    return binned_partial(arrays["y"], arrays["p"], weights, n_bins, binning, "mce")


def _top_label_partial(arrays: Any, weights: Any, n_bins: int, binning: str = "uniform") -> np.ndarray:
    correct, confidence = top_label(np.asarray(arrays["y"]), np.asarray(arrays["P"], dtype=np.float64))
    return binned_partial(correct, confidence, weights, n_bins, binning, "ece_top_label")


def _classwise_partial(arrays: Any, weights: Any, n_bins: int, binning: str = "uniform") -> np.ndarray:
    y, P = np.asarray(arrays["y"]), np.asarray(arrays["P"], dtype=np.float64)
    return np.concatenate([binned_partial((y == j).astype(np.float64), P[:, j], weights, n_bins, binning,
                                          "classwise_ece") for j in range(P.shape[1])], axis=-1)


def _classwise_finalize(stats: Any, n_bins: int, binning: str = "uniform") -> np.ndarray:
    stats = np.asarray(stats, dtype=np.float64)
    per_class = stats.reshape(*stats.shape[:-1], -1, 3 * n_bins)
    return _ece_finalize(per_class, n_bins).mean(axis=-1)



@register("ece", family="calibration", kind="binary", inputs=("y", "p"), higher_is_better=False,
          bounds=(0.0, 1.0), per_row=False, params={"n_bins": 15, "binning": BINNING_OPTION},
          citation=f"{_NAEINI}; {_GUO}", partial=_ece_partial, finalize=_ece_finalize,
          bootstrap_stats=_binned_bootstrap_stats("ece"), tested_against=('scikit-learn', 1e-15))
def ece(y: Any, p: Any, *, n_bins: int = 15, binning: str = "uniform") -> float:
    """Expected calibration error of binary probability forecasts (binned estimator).

    .. math::

        \\mathrm{ECE} = \\sum_{k=1}^{B} \\frac{n_k}{n}\\,\\bigl|\\bar y_k - \\bar p_k\\bigr|

    where bin :math:`k` holds :math:`n_k` forecasts with mean :math:`\\bar p_k` and
    observed frequency :math:`\\bar y_k`; empty bins contribute nothing.

    A plug-in estimator biased upward at finite n (a calibrated forecaster scores above 0):
    its interval covers the estimator's mean at this n, not the population ECE (about half
    the nominal-95% intervals miss it at n = 300). For a calibration number whose interval
    covers the population value use :func:`l2_calibration_error` (debiased, Kumar et al.).

    Parameters
    ----------
    %(binary)s
    n_bins : int, default 15
        Number of bins :math:`B`.
    binning : {"uniform", "quantile"}, default "uniform"
        Equal-width bins on [0, 1] (alias ``"equal_width"``) or equal-mass bins at the
        forecasts' quantiles (alias ``"equal_mass"``).

    Returns
    -------
    float
        The ECE in [0, 1] (lower is better).

    Notes
    -----
    The binned estimator is biased upward for small :math:`n_k` and depends on
    :math:`B`; :func:`smooth_ece` avoids the choice of bins. The bias also reaches the
    bootstrap: resamples add it again, so for a well-calibrated system the percentile
    interval can lie above the estimate itself (e.g. 0.00011 with [0.00010, 0.00023] on
    100 million forecasts). :func:`l2_calibration_error` (debiased, Kumar et al., 2019)
    has no such floor.

    References
    ----------
    Naeini, Cooper & Hauskrecht (2015), AAAI; Guo et al. (2017), ICML.

    Examples
    --------
    >>> round(ece([0, 1, 1, 1], [0.2, 0.6, 0.7, 0.9], n_bins=2), 6)
    0.25
    """
    y, p = binary_inputs(y, p)
    return _ece_from_stats(bin_stats(y, p, n_bins=n_bins, binning=binning))


@register("mce", family="calibration", kind="binary", inputs=("y", "p"), higher_is_better=False,
          bounds=(0.0, 1.0), per_row=False, params={"n_bins": 15, "binning": BINNING_OPTION}, citation=_NAEINI,
          partial=_mce_partial, finalize=_mce_finalize, bootstrap_stats=_binned_bootstrap_stats("mce"), tested_against=('scikit-learn', 1e-15))
def mce(y: Any, p: Any, *, n_bins: int = 15, binning: str = "uniform") -> float:
    """Maximum calibration error: the largest gap between forecast and frequency over bins.

    .. math::

        \\mathrm{MCE} = \\max_{k:\\, n_k > 0} \\bigl|\\bar y_k - \\bar p_k\\bigr|

    Parameters and bins as in :func:`ece`.

    References
    ----------
    Naeini, Cooper & Hauskrecht (2015), AAAI.

    Examples
    --------
    >>> round(mce([0, 1, 1, 1], [0.2, 0.6, 0.7, 0.9], n_bins=2), 6)
    0.266667
    """
    y, p = binary_inputs(y, p)
    return float(bin_stats(y, p, n_bins=n_bins, binning=binning).gaps().max())


def _l2_ce_finalize(stats: Any, n_bins: int, binning: str = "uniform", debias: bool = True) -> np.ndarray:
    count, sum_p, sum_y = _split(stats, n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        gap2 = (sum_y - sum_p) ** 2 / count  # n_k (ybar_k - pbar_k)^2
        if debias:
            ybar = sum_y / count
            # minus the variance of the bin's mean outcome; bins of fewer than 2 forecasts add 0
            gap2 = np.where(count >= 2, gap2 - count * ybar * (1.0 - ybar) / (count - 1.0), 0.0)
        squared = np.where(count > 0, gap2, 0.0).sum(axis=-1) / count.sum(axis=-1)
    return np.sqrt(np.maximum(squared, 0.0))


def _l2_ce_partial(arrays: Any, weights: Any, n_bins: int, binning: str = "uniform",
                   debias: bool = True) -> np.ndarray:
    return binned_partial(arrays["y"], arrays["p"], weights, n_bins, binning, "l2_calibration_error")


@register("l2_calibration_error", family="calibration", kind="binary", inputs=("y", "p"),
          higher_is_better=False, bounds=(0.0, 1.0), per_row=False,
          params={"n_bins": 15, "binning": BINNING_OPTION, "debias": True},
          citation="Kumar, Liang & Ma (2019), Verified Uncertainty Calibration, NeurIPS", covers="population",
          partial=_l2_ce_partial, finalize=_l2_ce_finalize,
          bootstrap_stats=_binned_bootstrap_stats("l2_calibration_error"), tested_against=('scikit-learn', 1e-15))
def l2_calibration_error(y: Any, p: Any, *, n_bins: int = 15, binning: str = "uniform",
                         debias: bool = True) -> float:
    r"""Binned l2 calibration error, debiased by default (Kumar, Liang & Ma, 2019).

    .. math::

        \widehat{\mathrm{CE}}_2^2 = \sum_{k:\, n_k \ge 2} \frac{n_k}{n}
            \Bigl[(\bar y_k - \bar p_k)^2 - \frac{\bar y_k(1 - \bar y_k)}{n_k - 1}\Bigr],
        \qquad \widehat{\mathrm{CE}}_2 = \sqrt{\max(\widehat{\mathrm{CE}}_2^2, 0)}

    The plug-in :math:`(\bar y_k - \bar p_k)^2` overstates the squared gap by the variance
    of :math:`\bar y_k`; subtracting its unbiased estimate makes the squared error unbiased
    for the binned calibration error, so a well-calibrated system scores near 0 instead of
    at a floor set by the sample size (the plug-in ECE's bias, which also shifts its
    bootstrap interval upward). This is the recommended calibration number: its interval
    covers the population (binned) calibration error (``covers="population"``; 90% of
    nominal-95% intervals at n = 300 in ``tests/evaluation/test_interval_targets.py``, and the interval
    reaches 0 for a calibrated forecaster), while the plug-in ECE's covers its own mean at
    this n (49% coverage of the population ECE in the same simulation). ``debias=False`` gives the plug-in l2 error
    :math:`\sqrt{\sum_k (n_k/n)(\bar y_k - \bar p_k)^2}`. Bins as in :func:`ece`.

    Matches ``calibration.get_calibration_error(p, y, p=2, debias=...)`` of the authors'
    ``uncertainty-calibration`` package on equal-width bins (its default binning is
    different: one bin per distinct forecast).

    References
    ----------
    Kumar, Liang & Ma (2019), Verified Uncertainty Calibration, NeurIPS.

    Examples
    --------
    >>> y = [0, 1, 1, 1, 1, 0, 1, 1, 1, 1]
    >>> p = [0.1, 0.2, 0.3, 0.4, 0.2, 0.6, 0.7, 0.8, 0.9, 0.6]
    >>> round(l2_calibration_error(y, p, n_bins=2, debias=False), 6)
    0.4
    >>> round(l2_calibration_error(y, p, n_bins=2), 6)
    0.34641
    """
    y, p = binary_inputs(y, p)
    stats = bin_stats(y, p, n_bins=n_bins, binning=binning)
    packed = np.concatenate([stats.count, stats.sum_p, stats.sum_y])
    return float(_l2_ce_finalize(packed, len(stats.count), debias=debias))


@register("adaptive_ece", family="calibration", kind="binary", inputs=("y", "p"), higher_is_better=False,
          bounds=(0.0, 1.0), per_row=False, params={"n_bins": 15},
          citation="Nixon, Dusenberry, Zhang, Jerfel & Tran (2019), Measuring Calibration in Deep Learning, "
                   "CVPR Workshops", tested_against=('scikit-learn', 1e-15))
def adaptive_ece(y: Any, p: Any, *, n_bins: int = 15) -> float:
    """Adaptive ECE: ECE over bins that each hold the same number of forecasts.

    The forecasts are sorted (stably) and cut into ``n_bins`` consecutive groups whose
    sizes differ by at most one (group of rank :math:`r` is :math:`\\lfloor rB/n \\rfloor`);

    .. math::

        \\mathrm{ACE} = \\sum_{k=1}^{B} \\frac{n_k}{n}\\,\\bigl|\\bar y_k - \\bar p_k\\bigr|.

    Unlike ``ece(..., binning="quantile")``, whose edges are quantiles so that tied
    forecasts share a bin, a run of tied forecasts may be split between two groups here.
    For the binary case this equals Nixon et al.'s class-averaged ACE (the class-0 bins
    mirror the class-1 bins and have the same gaps), weighted by bin size when ``n`` is
    not a multiple of ``n_bins``.

    References
    ----------
    Nixon et al. (2019), Measuring Calibration in Deep Learning, CVPR Workshops.

    Examples
    --------
    >>> round(adaptive_ece([0, 0, 1, 1], [0.1, 0.3, 0.6, 0.8], n_bins=2), 6)
    0.25
    """
    y, p = binary_inputs(y, p)
    n_bins = check_count(n_bins, "n_bins", itemsize=32)
    order = np.argsort(p, kind="stable")
    ids = np.empty(len(p), dtype=np.intp)
    ids[order] = (np.arange(len(p)) * n_bins) // len(p)
    diff = np.bincount(ids, weights=y - p, minlength=n_bins)
    return float(np.abs(diff).sum() / len(p))


@register("ece_top_label", family="calibration", kind="multiclass", inputs=("y", "P"), higher_is_better=False,
          bounds=(0.0, 1.0), per_row=False, params={"n_bins": 15, "binning": BINNING_OPTION}, citation=_GUO,
          partial=_top_label_partial, finalize=_ece_finalize,
          bootstrap_stats=_binned_bootstrap_stats("ece_top_label"), tested_against=('scikit-learn', 1e-15))
def ece_top_label(y: Any, P: Any, *, n_bins: int = 15, binning: str = "uniform") -> float:
    """Top-label (confidence) ECE of multiclass forecasts.

    With confidence :math:`c_i = \\max_j P_{ij}` and correctness
    :math:`a_i = 1\\{\\arg\\max_j P_{ij} = y_i\\}` (ties go to the first class),

    .. math::

        \\mathrm{ECE}_{\\text{top}} = \\sum_k \\frac{n_k}{n}\\,\\bigl|\\bar a_k - \\bar c_k\\bigr|,

    i.e. :func:`ece` applied to ``(a, c)``.

    Parameters
    ----------
    y : array_like of int, shape (n,)
        Class indices in ``0 .. K-1``.
    P : array_like, shape (n, K)
        Class probabilities; rows sum to 1 (tolerance 1e-6).

    References
    ----------
    Guo et al. (2017), On Calibration of Modern Neural Networks, ICML.

    Examples
    --------
    >>> round(ece_top_label([0, 1], [[0.7, 0.3], [0.6, 0.4]], n_bins=1), 6)
    0.15
    """
    y, P = multiclass_inputs(y, P)
    correct, confidence = top_label(y, P)
    return _ece_from_stats(bin_stats(correct, confidence, n_bins=n_bins, binning=binning))


@register("classwise_ece", family="calibration", kind="multiclass", inputs=("y", "P"), higher_is_better=False,
          bounds=(0.0, 1.0), per_row=False, params={"n_bins": 15, "binning": BINNING_OPTION},
          citation="Kull, Perello-Nieto, Kängsepp, Silva Filho, Song & Flach (2019), Beyond temperature scaling, "
                   "NeurIPS", partial=_classwise_partial, finalize=_classwise_finalize, tested_against=('scikit-learn', 1e-15))
def classwise_ece(y: Any, P: Any, *, n_bins: int = 15, binning: str = "uniform") -> float:
    """Class-wise ECE: the mean over classes of the one-vs-rest binary ECE.

    .. math::

        \\mathrm{cwECE} = \\frac{1}{K} \\sum_{j=1}^{K} \\mathrm{ECE}\\bigl(1\\{y = j\\},\\, P_{\\cdot j}\\bigr)

    References
    ----------
    Kull et al. (2019), Beyond temperature scaling, NeurIPS.

    Examples
    --------
    >>> round(classwise_ece([0, 1], [[0.7, 0.3], [0.6, 0.4]], n_bins=1), 6)
    0.15
    """
    y, P = multiclass_inputs(y, P)
    onehot = (y[:, None] == np.arange(P.shape[1])).astype(np.float64)
    return float(np.mean([_ece_from_stats(bin_stats(onehot[:, j], P[:, j], n_bins=n_bins, binning=binning))
                          for j in range(P.shape[1])]))


@dataclass(frozen=True)
class ReliabilityDiagram:
    """Reliability-diagram data: one entry per bin, empty bins included.

    Attributes
    ----------
    lower, upper : ndarray
        Bin edges (bins are closed on the right; the first is also closed on the left).
    count : ndarray of int
        Forecasts in each bin (0 for an empty bin; the counts sum to ``n``).
    mean_predicted : ndarray
        Mean forecast per bin (NaN where ``count == 0``).
    observed_frequency : ndarray
        Fraction of ``y = 1`` per bin (NaN where ``count == 0``).
    ci_low, ci_high : ndarray
        Wilson score interval of the observed frequency at level ``ci`` (NaN when empty).
    binning : str
        ``"uniform"`` or ``"quantile"``.
    ci : float
        Level of the intervals.
    n : int
        Number of forecasts.
    """

    lower: np.ndarray
    upper: np.ndarray
    count: np.ndarray
    mean_predicted: np.ndarray
    observed_frequency: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    binning: str
    ci: float
    n: int

    @property
    def ece(self) -> float:
        """The ECE of these bins (same value as :func:`ece`)."""
        keep = self.count > 0
        w = self.count[keep] / self.n
        return float(np.sum(w * np.abs(self.observed_frequency[keep] - self.mean_predicted[keep])))

    def to_frame(self) -> pd.DataFrame:
        """One row per bin: bin, lower, upper, count, mean_predicted, observed_frequency, ci_low, ci_high."""
        return pd.DataFrame({
            "bin": np.arange(len(self.count)), "lower": self.lower, "upper": self.upper, "count": self.count,
            "mean_predicted": self.mean_predicted, "observed_frequency": self.observed_frequency,
            "ci_low": self.ci_low, "ci_high": self.ci_high,
        })


def reliability_diagram(y: Any, p: Any, *, n_bins: int = 10, binning: str = "uniform",
                        ci: float = 0.95) -> ReliabilityDiagram:
    """Per-bin data of a reliability diagram, keeping empty bins.

    For each bin :math:`k`: the count :math:`n_k`, the mean forecast :math:`\\bar p_k`,
    the observed frequency :math:`\\bar y_k` and its Wilson score interval

    .. math::

        \\frac{\\bar y_k + \\frac{z^2}{2 n_k} \\pm z \\sqrt{\\frac{\\bar y_k(1-\\bar y_k)}{n_k}
        + \\frac{z^2}{4 n_k^2}}}{1 + z^2 / n_k}, \\qquad z = \\Phi^{-1}\\bigl(\\tfrac{1 + \\mathrm{ci}}{2}\\bigr).

    Unlike :func:`sklearn.calibration.calibration_curve`, which silently drops empty bins
    (so its arrays cannot be matched to bin edges), every bin is returned; empty bins
    have ``count == 0`` and NaN means. The bins are assigned exactly as scikit-learn
    assigns them, so the non-empty rows agree with ``calibration_curve``.

    Parameters
    ----------
    y, p : array_like, shape (n,)
        Outcomes in {0, 1} and forecast probabilities.
    n_bins : int, default 10
    binning : {"uniform", "quantile"}, default "uniform"
    ci : float, default 0.95
        Level of the Wilson intervals, in (0, 1).

    Returns
    -------
    ReliabilityDiagram

    References
    ----------
    Murphy & Winkler (1977), Reliability of subjective probability forecasts, J. R. Stat. Soc. C 26(1);
    Wilson (1927), JASA 22(158).

    Examples
    --------
    >>> diagram = reliability_diagram([0, 1, 1], [0.05, 0.95, 0.85], n_bins=4)
    >>> diagram.count.tolist()
    [1, 0, 0, 2]
    >>> diagram.observed_frequency.tolist()
    [0.0, nan, nan, 1.0]
    """
    y, p = binary_inputs(y, p)
    check_level(ci, "ci")
    stats = bin_stats(y, p, n_bins=n_bins, binning=binning)
    mean_p, freq = stats.means()
    z = float(ndtri(0.5 + ci / 2.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        denom = 1.0 + z * z / stats.count
        centre = (freq + z * z / (2.0 * stats.count)) / denom
        half = z * np.sqrt(freq * (1.0 - freq) / stats.count + z * z / (4.0 * stats.count ** 2)) / denom
    return ReliabilityDiagram(
        lower=stats.edges[:-1].copy(), upper=stats.edges[1:].copy(), count=stats.count.astype(np.int64),
        mean_predicted=mean_p, observed_frequency=freq, ci_low=np.clip(centre - half, 0.0, 1.0),
        ci_high=np.clip(centre + half, 0.0, 1.0), binning=resolve_binning(binning), ci=float(ci), n=stats.n,
    )


fill_doc(ece, **SECTIONS)
