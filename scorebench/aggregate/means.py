"""Baselines: arithmetic / geometric mean, normalised mean, median and HELM's mean win rate.

All four read the oriented score matrix (lower-is-better columns negated; the geometric
mean takes their reciprocal instead) and the column weights.
"""

from __future__ import annotations

import numpy as np

from scorebench.core.errors import InputError
from scorebench.core.validation import check_choice
from scorebench.aggregate.input import ScoreMatrix
from scorebench.aggregate.registry import MethodResult, register_column_parts, register_method

__all__ = ["normalize_columns", "weighted_median", "mean", "geometric_mean", "median", "win_rate",
           "SCALE_FACTOR", "MixedScaleWarning", "scale_warning"]

SCALE_FACTOR = 100.0  # column ranges differing by more than this make an unnormalised mean meaningless

NORMALIZATIONS = (None, "minmax", "zscore", "reference")
MISSING = ("refuse", "available", "blank")
_MISSING_DOC = ("missing='refuse' (default) raises on a missing score; missing='blank' leaves a system without "
                "every column unscored (blank, as leaderboards such as MTEB's Mean (Task) do) and ranks the "
                "complete ones; missing='available' averages each system over the columns it has (weights "
                "renormalised)")


def normalize_columns(m: ScoreMatrix, how: str | None, reference: str | None = None) -> np.ndarray:
    r"""Oriented scores, optionally normalised per column.

    * ``None``: the oriented values (lower-is-better columns negated);
    * ``"minmax"``: :math:`(x - \min_j) / (\max_j - \min_j)` (constant columns give 0);
    * ``"zscore"``: :math:`(x - \bar x_j) / s_j` with the population standard deviation;
    * ``"reference"``: the ratio to a reference system, :math:`x / x_{\mathrm{ref}}` for
      higher-is-better columns and :math:`x_{\mathrm{ref}} / x` otherwise (positive scores only).
    """
    check_choice(how, "normalize", NORMALIZATIONS)
    if how == "reference":
        if reference is None or reference not in m.systems:
            raise InputError(f"normalize='reference' needs reference=<one of the systems>, got {reference!r}")
        v = m.values
        ref = v[m.systems.index(reference)]
        if np.isnan(ref).any():
            raise InputError(f"reference system {reference!r} has missing scores; it must be scored on every column")
        if (v[~np.isnan(v)] <= 0).any():
            raise InputError("normalize='reference' needs positive scores (ratios of signed scores are meaningless)")
        return np.where(m.higher_is_better, v / ref, ref / v)
    if reference is not None:
        raise InputError("reference= is only used with normalize='reference'")
    x = m.oriented
    if how is None:
        return x
    with np.errstate(invalid="ignore", divide="ignore"):
        if how == "minmax":
            lo, hi = np.nanmin(x, axis=0), np.nanmax(x, axis=0)
            span = hi - lo
            return np.where(span > 0, (x - lo) / np.where(span > 0, span, 1.0), 0.0 * x)
        mu, sd = np.nanmean(x, axis=0), np.nanstd(x, axis=0)
        return np.where(sd > 0, (x - mu) / np.where(sd > 0, sd, 1.0), 0.0 * x)


class MixedScaleWarning(UserWarning):
    """Columns on very different scales are averaged without normalisation."""


def scale_warning(m: ScoreMatrix) -> str | None:
    """A warning when the columns' ranges (max - min over systems) differ by more than :data:`SCALE_FACTOR`.

    An unnormalised mean of accuracy (range ~0.1) and latency in ms (range ~100) is the
    latency ranking; ``normalize="minmax"`` or ``"zscore"`` puts columns on one scale.

    Examples
    --------
    >>> from scorebench.aggregate import as_matrix
    >>> m = as_matrix({"acc": [0.8, 0.7], "latency_ms": [300.0, 120.0]}, systems=["a", "b"],
    ...               higher_is_better={"latency_ms": False})
    >>> scale_warning(m)[:57]
    'columns on different scales: range of latency_ms is 180, '
    """
    used = m.weights > 0
    present = ~np.isnan(m.values) & used[None, :]
    spread = (np.where(present, m.values, -np.inf).max(axis=0, initial=-np.inf)
              - np.where(present, m.values, np.inf).min(axis=0, initial=np.inf))
    ok = np.isfinite(spread) & (spread > 0)
    if ok.sum() < 2:
        return None
    hi, lo = int(np.argmax(np.where(ok, spread, -np.inf))), int(np.argmin(np.where(ok, spread, np.inf)))
    if spread[hi] <= SCALE_FACTOR * spread[lo]:
        return None
    return (f"columns on different scales: range of {m.columns[hi]} is {spread[hi]:.3g}, of {m.columns[lo]} "
            f"{spread[lo]:.3g} (more than {SCALE_FACTOR:g}x); an unnormalised mean is dominated by the widest "
            "column — pass normalize='minmax' or 'zscore'")


def _weighted_mean(x: np.ndarray, m: ScoreMatrix, missing: str, method: str) -> np.ndarray:
    w, systems, columns = m.weights, m.systems, m.columns
    check_choice(missing, "missing", MISSING)
    present = ~np.isnan(x)
    if missing == "refuse" and not present.all():
        r, c = np.argwhere(~present)[0]
        raise InputError(f"method {method!r}: missing score for system {systems[r]!r} on column {columns[c]!r}; "
                         "pass missing='blank' to leave incomplete systems unscored or missing='available' to "
                         "average over the columns each system has")
    ww = np.where(present, w[None, :], 0.0)
    total = ww.sum(axis=1)
    if missing == "blank":  # NaN for a system lacking a positively weighted column
        complete = (present | (w[None, :] <= 0)).all(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            out = (np.where(present, x, 0.0) * ww).sum(axis=1) / total
        return np.where(complete & (total > 0), out, np.nan)
    if (total <= 0).any():
        raise InputError(f"method {method!r}: a system has no score on any positively weighted column")
    return (np.where(present, x, 0.0) * ww).sum(axis=1) / total


@register_method("mean", family="baseline", missing=_MISSING_DOC,
                 citation="weighted arithmetic mean of the task columns (a leaderboard's own average only when the "
                          "columns are its task units: see convention=); normalisations as in Colombo et al. "
                          "(2022), NeurIPS")
def mean(m: ScoreMatrix, *, normalize: str | None = None, reference: str | None = None,
         missing: str = "refuse") -> MethodResult:
    r"""Weighted arithmetic mean of the (optionally normalised) oriented scores.

    .. math:: s_a = \frac{\sum_j w_j\, \tilde x_{aj}}{\sum_j w_j}

    Examples
    --------
    >>> from scorebench.aggregate import as_matrix
    >>> m = as_matrix({"t1": [1.0, 3.0], "t2": [5.0, 1.0]}, systems=["a", "b"])
    >>> mean(m).scores.tolist()
    [3.0, 2.0]

    ``missing="blank"`` leaves a system without every column unscored (MTEB's Mean (Task));
    ``missing="available"`` averages the columns it has:

    >>> g = as_matrix({"t1": [1.0, 3.0], "t2": [5.0, None]}, systems=["a", "b"])
    >>> mean(g, missing="blank").scores.tolist(), mean(g, missing="available").scores.tolist()
    ([3.0, nan], [3.0, 3.0])
    """
    x = normalize_columns(m, normalize, reference)
    return MethodResult(_weighted_mean(x, m, missing, "mean"))


@register_method("geometric_mean", family="baseline", missing=_MISSING_DOC,
                 citation="Fleming & Wallace (1986), CACM 29(3) (how not to lie with statistics)")
def geometric_mean(m: ScoreMatrix, *, missing: str = "refuse") -> MethodResult:
    r"""Weighted geometric mean of non-negative scores (reciprocals for lower-is-better columns).

    .. math:: s_a = \exp\Big(\frac{\sum_j w_j \log x_{aj}^{\pm 1}}{\sum_j w_j}\Big)

    A zero score on a higher-is-better column (SuperGLUE's CBoW baseline has MultiRC = 0)
    makes the geometric mean 0, its limit. Negative scores are refused, and so is a zero on a
    lower-is-better column (its reciprocal is infinite); zero-weight columns are left out.

    Examples
    --------
    Scores 1 and 4 average to 2.5 but have the geometric mean 2; one zero makes it 0:

    >>> from scorebench.aggregate import as_matrix
    >>> geometric_mean(as_matrix({"t1": [1.0, 0.0], "t2": [4.0, 4.0]}, systems=["a", "b"])).scores.tolist()
    [2.0, 0.0]

    On a lower-is-better column the reciprocal counts, so a latency of 4 weighs as a score of 1/4:

    >>> slow = as_matrix({"acc": [1.0, 1.0], "latency": [4.0, 1.0]}, systems=["a", "b"],
    ...                  higher_is_better={"latency": False})
    >>> geometric_mean(slow).scores.tolist()
    [0.5, 1.0]
    """
    v = m.values
    used = ~np.isnan(v) & (m.weights > 0)[None, :]
    for bad, expected in ((used & (v < 0), "non-negative scores"),
                          (used & (v == 0) & ~m.higher_is_better[None, :],
                           "positive scores on lower-is-better columns (the reciprocal of 0 is infinite)")):
        if bad.any():
            r, c = np.argwhere(bad)[0]
            raise InputError(f"method 'geometric_mean' needs {expected}, got {v[r, c]!r} for system "
                             f"{m.systems[r]!r} on column {m.columns[c]!r}; use 'mean' with normalize='minmax' "
                             "or 'zscore' for signed scores")
    with np.errstate(invalid="ignore", divide="ignore"):
        # log 0 = -inf on a higher-is-better column: the weighted mean is -inf, its exp 0
        logs = np.where(used, np.where(m.higher_is_better, np.log(np.where(used, v, 1.0)),
                                       -np.log(np.where(used, v, 1.0))), np.where(np.isnan(v), np.nan, 0.0))
        return MethodResult(np.exp(_weighted_mean(logs, m, missing, "geometric_mean")))


def weighted_median(values: np.ndarray, weights: np.ndarray) -> float:
    """Weighted median: the value where the cumulative weight reaches half (midpoint on a tie).

    Examples
    --------
    >>> weighted_median(np.array([1.0, 2.0, 3.0, 4.0]), np.ones(4))
    2.5
    """
    keep = (~np.isnan(values)) & (weights > 0)
    v, w = values[keep], weights[keep]
    order = np.argsort(v, kind="stable")
    v, w = v[order], w[order]
    cum = np.cumsum(w)
    half = cum[-1] / 2.0
    i = int(np.searchsorted(cum, half - 1e-12 * cum[-1]))
    if abs(cum[i] - half) <= 1e-12 * cum[-1] and i + 1 < len(v):
        return float((v[i] + v[i + 1]) / 2.0)
    return float(v[i])


@register_method("median", family="baseline",
                 missing="the median of the columns each system has (missing scores are skipped)",
                 citation="robust baseline; see Colombo et al. (2022), NeurIPS")
def median(m: ScoreMatrix, *, normalize: str | None = None, reference: str | None = None) -> MethodResult:
    """Weighted median of the (optionally normalised) oriented scores of each system.

    Examples
    --------
    >>> from scorebench.aggregate import as_matrix
    >>> m = as_matrix({"t1": [1.0, 3.0], "t2": [5.0, 1.0], "t3": [2.0, 2.0]}, systems=["a", "b"])
    >>> median(m).scores.tolist()
    [2.0, 2.0]
    """
    x = normalize_columns(m, normalize, reference)
    return MethodResult(np.array([weighted_median(row, m.weights) for row in x]))


@register_method("win_rate", family="baseline",
                 missing="per column, only the systems scored there compete; a system's rate is averaged "
                         "over the columns where it is scored and meets at least one other system",
                 citation="Liang et al. (2022), Holistic Evaluation of Language Models (HELM), mean win rate")
def win_rate(m: ScoreMatrix) -> MethodResult:
    r"""HELM's mean win rate: the weighted mean over columns of the fraction of others beaten.

    .. math:: s_a = \frac{\sum_j w_j\, r_{aj}}{\sum_j w_j}, \quad
              r_{aj} = \frac{\#\{b: x_{aj} > x_{bj}\} + \tfrac12\#\{b \ne a: x_{aj} = x_{bj}\}}{\#\{b \ne a \text{ scored on } j\}}

    Examples
    --------
    >>> from scorebench.aggregate import as_matrix
    >>> m = as_matrix({"t1": [3.0, 2.0, 2.0]}, systems=["a", "b", "c"])
    >>> win_rate(m).scores.tolist()
    [1.0, 0.25, 0.25]
    """
    rate, usable = win_rate_parts(m)
    ww = np.where(usable, m.weights[None, :], 0.0)
    total = ww.sum(axis=1)
    if (total <= 0).any():
        bad = [m.systems[i] for i in np.flatnonzero(total <= 0)[:5]]
        raise InputError(f"method 'win_rate': system(s) {bad} never meet another system on a weighted column")
    return MethodResult((rate * ww).sum(axis=1) / total)


@register_column_parts("win_rate")
def win_rate_parts(m: ScoreMatrix) -> tuple[np.ndarray, np.ndarray]:
    """Per column, each system's share of the others it beats (0 where it cannot compete there), and
    whether it competes there (scored, with at least one other system scored): win rate's numerator
    and denominator parts (:attr:`scorebench.aggregate.registry.Method.column_parts`)."""
    from scorebench.aggregate.profile import column_ranks

    present = ~np.isnan(m.oriented)
    high, low = column_ranks(m, "max"), column_ranks(m, "min")
    below = m.n_systems - high - (m.n_systems - present.sum(axis=0))  # strictly beaten
    ties = high - low  # others tied with a
    others = present.sum(axis=0) - 1.0
    usable = present & (others[None, :] > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(usable, (below + 0.5 * ties) / others[None, :], 0.0)
    return rate, usable.astype(np.float64)
