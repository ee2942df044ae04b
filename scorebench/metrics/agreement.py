"""Agreement between predicted and reference ratings.

Metrics for automated scoring, LLM-as-a-judge and MOS prediction: correlations (Pearson,
Spearman, Kendall tau-b), chance-corrected agreement (Cohen's kappa, quadratic weighted
kappa, Krippendorff's alpha), errors (RMSE, MAE) and the system-level Spearman
correlation of per-system means used in MOS prediction challenges.

Table kind ``rating``: one row per rated item with ``y_true`` (the reference rating, e.g.
a human score or MOS) and ``y_pred`` (the predicted rating); ``group`` optionally names
the rated *system* (e.g. the TTS system whose utterance was rated) for ``system_srcc``.
The usual ``system`` (and ``task``) columns name the *predictor* being evaluated.

Undefined values are never returned silently: a correlation of a constant input, or a
kappa / alpha with no expected disagreement, raises :class:`~scorebench.core.errors.InputError`
explaining why (scipy and scikit-learn return NaN with a warning instead).

All metrics except ``mae`` are set-level (``per_row=False``): :func:`scorebench.evaluate`
resamples rows for their bootstrap intervals. ``rmse`` is set-level too, because it is
the square root of a mean, not a mean of per-row contributions (bootstrapping the mean of
squared errors and taking roots would give the interval of RMSE only by monotonicity,
and the engine's contract is that the reported value *is* the mean of contributions).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.core.registry import register
from scorebench.core.tables import Column, Inputs, unit_frame, start_table, numeric_column, register_kind
from scorebench.core.validation import as_float_array, check_choice, check_finite, check_same_length, describe_rows

__all__ = [
    "pearson", "spearman", "kendall_tau", "cohen_kappa", "qwk", "krippendorff_alpha",
    "rmse", "mae", "system_srcc", "extract_rating",
]

_FAMILY = "agreement"
_KIND = "rating"
_LEVELS = ("nominal", "ordinal", "interval", "ratio")
_WEIGHTS = (None, "linear", "quadratic")


# --- table kind ----------------------------------------------------------------------


@register_kind(_KIND, columns=(Column("y_true", "number", "the reference rating"),
                              Column("y_pred", "number", "the predicted rating"),
                              Column("group", "label", "the rated system or item, for system-level metrics",
                                     required=False)))
def extract_rating(df: pd.DataFrame, *, nan_policy: str = "raise") -> Inputs:
    """Reference and predicted ratings per item (optional ``group`` for system level).

    With ``nan_policy="propagate"`` missing ratings are kept as NaN, which
    :func:`krippendorff_alpha` treats as missing; the other metrics then refuse them.
    """
    df, key = start_table(df, _KIND, ["y_true", "y_pred"], nan_policy)
    nan_ok = nan_policy == "propagate"
    arrays = {c: numeric_column(df, c, nan_ok=nan_ok) for c in ("y_true", "y_pred")}
    if "group" in df.columns:
        missing = df["group"].isna().to_numpy()
        if missing.any():
            raise InputError(f"column 'group': missing values in {describe_rows(missing, df.index)}; "
                             "expected the rated system of every row")
        codes, _ = pd.factorize(df["group"], sort=True)
        arrays["group"] = codes.astype(np.int64)
    return Inputs(unit_frame(df, key), arrays, key=key)


# --- validation and shared engines ---------------------------------------------------


def _pair(y_true: Any, y_pred: Any, *, minimum: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Validated 1-D float64 pair of equal length with at least ``minimum`` finite values."""
    a = as_float_array(y_true, "y_true", ndim=1)
    b = as_float_array(y_pred, "y_pred", ndim=1)
    n = check_same_length(y_true=a, y_pred=b)
    check_finite(a, "y_true")
    check_finite(b, "y_pred")
    if n < minimum:
        raise InputError(f"expected at least {minimum} ratings, got {n}")
    return a, b


def _constant_error(name: str, what: str) -> InputError:
    return InputError(f"{name}: {what} is constant, so the correlation is undefined "
                      "(its variance is zero); expected at least two distinct values (a bootstrap "
                      "resample of a small group can draw a single value: add rows or pass n_boot=0)")


def pearson_correlation(a: np.ndarray, b: np.ndarray, what: tuple[str, str] = ("y_true", "y_pred")) -> float:
    """Pearson correlation of validated arrays; raises on constant input."""
    da = a - a.mean()
    db = b - b.mean()
    saa = float(da @ da)
    sbb = float(db @ db)
    for s, name in ((saa, what[0]), (sbb, what[1])):
        if s == 0.0:
            raise _constant_error(name, "the input")
    return float(np.clip((da @ db) / np.sqrt(saa * sbb), -1.0, 1.0))


def average_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 1..n with ties given their average rank."""
    _, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    end = np.cumsum(counts)
    return ((end - counts + 1 + end) / 2.0)[inverse]


def _tie_pairs(*sorted_columns: np.ndarray) -> float:
    """Pairs tied in every column, sum over runs of t(t-1)/2, for lexicographically sorted rows."""
    n = sorted_columns[0].size
    change = np.zeros(max(n - 1, 0), dtype=bool)
    for col in sorted_columns:
        change |= col[1:] != col[:-1]
    runs = np.diff(np.r_[0, np.flatnonzero(change) + 1, n]).astype(np.float64)
    return float((runs * (runs - 1) / 2).sum())


def _count_inversions(a: np.ndarray) -> int:
    r"""Pairs i < j with a[i] > a[j], for non-negative integers ``a`` (bottom-up merge sort).

    Each level merges neighbouring sorted blocks of width ``w`` with one stable argsort of
    the composite keys ``pair * M + value`` (timsort merges the two runs of each pair in
    linear time). In a stable merge an element of the right block moves left past
    exactly the left-block elements greater than it, so the level's inversions are the
    total leftward displacement, :math:`\sum_i \max(0, i - \mathrm{pos}_i)`.
    """
    n = a.size
    if n < 2:
        return 0
    span = int(a.max()) + 1
    cur = a.astype(np.int64)
    index = np.arange(n)
    position = np.empty(n, dtype=np.int64)
    total = 0
    width = 1
    while width < n:
        offset = (index // (2 * width)) * span
        keys = cur + offset
        perm = np.argsort(keys, kind="stable")
        position[perm] = index
        total += int(np.maximum(index - position, 0).sum())
        cur = keys[perm] - offset
        width *= 2
    return total


_TABLE_CELLS = 1 << 20  # contingency tables up to this many cells count pairs directly


def _few_values(x: np.ndarray) -> bool:
    """Whether ``x`` plausibly takes at most ~1,000 distinct values (a rating scale), judged
    from a fixed sample of 4,096 entries; a wrong guess only changes the route, not the value."""
    sample = x if x.size <= 4096 else x[np.linspace(0, x.size - 1, 4096).astype(np.int64)]
    return np.unique(sample).size <= 1024


def _pairs_within(counts: np.ndarray) -> float:
    """Sum of t(t-1)/2 over the counts t of tie groups (or table cells)."""
    t = np.asarray(counts, dtype=np.float64)
    return float((t * (t - 1) / 2).sum())


def _discordant_from_table(table: np.ndarray) -> int:
    r"""Discordant pairs from the contingency table ``C`` of two rankings.

    :math:`\sum_{ij} C_{ij} \sum_{i' > i, j' < j} C_{i'j'}`, O(V_a V_b), used when the
    inputs take few distinct values (ratings on a scale).
    """
    later_rows = np.cumsum(table[::-1], axis=0)[::-1]  # rows >= i
    later_rows = np.vstack([later_rows[1:], np.zeros((1, table.shape[1]), dtype=later_rows.dtype)])
    smaller_cols = np.cumsum(later_rows, axis=1)
    smaller_cols = np.hstack([np.zeros((table.shape[0], 1), dtype=smaller_cols.dtype), smaller_cols[:, :-1]])
    return int((table * smaller_cols).sum())


# --- correlations --------------------------------------------------------------------


@register("pearson", family=_FAMILY, kind=_KIND, inputs=("y_true", "y_pred"), higher_is_better=True,
          bounds=(-1.0, 1.0), per_row=False,
          citation="Pearson (1896), Phil. Trans. R. Soc. A 187",
          tested_against=(('scipy (distributions / numerical integration)', 1e-12), ('scikit-learn', 1e-12),))
def pearson(y_true: Any, y_pred: Any, /) -> float:
    r"""Pearson's linear correlation coefficient (LCC / PLCC).

    .. math:: r = \frac{\sum_i (x_i - \bar x)(y_i - \bar y)}
                       {\sqrt{\sum_i (x_i - \bar x)^2 \sum_i (y_i - \bar y)^2}}

    Raises :class:`~scorebench.core.errors.InputError` when either input is constant.

    References
    ----------
    Pearson, K. (1896). Mathematical contributions to the theory of evolution III.
    Phil. Trans. R. Soc. A 187, 253-318.

    Examples
    --------
    >>> round(pearson([1, 2, 3, 4], [2, 4, 6, 9]), 6)
    0.994377
    """
    a, b = _pair(y_true, y_pred)
    return pearson_correlation(a, b)


@register("spearman", family=_FAMILY, kind=_KIND, inputs=("y_true", "y_pred"), higher_is_better=True,
          bounds=(-1.0, 1.0), per_row=False, interval="half_sampling",
          citation="Spearman (1904), Am. J. Psychol. 15(1)",
          tested_against=(('scipy (distributions / numerical integration)', 1e-12), ('scikit-learn', 1e-12),))
def spearman(y_true: Any, y_pred: Any, /) -> float:
    r"""Spearman's rank correlation (SRCC): Pearson's r of average ranks.

    .. math:: \rho = r\big(\operatorname{rank}(x), \operatorname{rank}(y)\big)

    Ties receive their average rank (as ``scipy.stats.spearmanr``).

    Examples
    --------
    >>> spearman([1, 2, 3, 4], [1, 3, 2, 4])
    0.8
    """
    a, b = _pair(y_true, y_pred)
    return pearson_correlation(average_ranks(a), average_ranks(b))


@register("kendall_tau", family=_FAMILY, kind=_KIND, inputs=("y_true", "y_pred"), higher_is_better=True,
          bounds=(-1.0, 1.0), per_row=False, interval="half_sampling",
          citation="Kendall (1945), Biometrika 33(3) (tau-b)",
          tested_against=(('scipy (distributions / numerical integration)', 1e-12), ('scikit-learn', 1e-12),))
def kendall_tau(y_true: Any, y_pred: Any, /) -> float:
    r"""Kendall's tau-b rank correlation, corrected for ties.

    .. math:: \tau_b = \frac{n_c - n_d}{\sqrt{(n_0 - n_1)(n_0 - n_2)}}

    with :math:`n_0 = n(n-1)/2`, :math:`n_c, n_d` the concordant and discordant pairs and
    :math:`n_1, n_2` the pairs tied in ``y_true`` and in ``y_pred``. Ratings on a scale
    (few distinct values) are counted from their contingency table in
    :math:`O(n + V_1 V_2)`; continuous values by SciPy's compiled merge-sort count
    (``scipy.stats.kendalltau``, the same tau-b), or a NumPy merge-sort count in
    :math:`O(n \log^2 n)` for many values on both sides that a sample took for a scale.

    References
    ----------
    Kendall, M. G. (1945). The treatment of ties in ranking problems. Biometrika 33(3).

    Examples
    --------
    >>> round(kendall_tau([1, 2, 3, 4], [1, 3, 2, 4]), 6)
    0.666667
    """
    a, b = _pair(y_true, y_pred)
    n = a.size
    for values, name in ((a, "y_true"), (b, "y_pred")):
        if np.ptp(values) == 0:
            raise _constant_error(name, "the input")
    if not _few_values(a) or not _few_values(b):
        # Continuous values: SciPy's compiled merge-sort count is the fastest exact route
        # (same tau-b; a NumPy merge sort costs 2.8x its time, see benchmarks/README.md).
        from scipy.stats import kendalltau

        return float(np.clip(kendalltau(a, b).statistic, -1.0, 1.0))
    ua, ia = np.unique(a, return_inverse=True)
    ub, ib = np.unique(b, return_inverse=True)
    if ua.size * ub.size <= _TABLE_CELLS:
        table = np.bincount(ia * ub.size + ib, minlength=ua.size * ub.size).reshape(ua.size, ub.size)
        discordant = _discordant_from_table(table)
        ties_a, ties_b, ties_ab = (_pairs_within(table.sum(axis=1)), _pairs_within(table.sum(axis=0)),
                                   _pairs_within(table))
    else:
        order = np.lexsort((ib, ia))  # by a, then b: pairs tied in a are never counted discordant
        a_sorted, b_sorted = ia[order], ib[order]
        discordant = _count_inversions(b_sorted)
        ties_a, ties_b = _tie_pairs(a_sorted), _pairs_within(np.bincount(ib))
        ties_ab = _tie_pairs(a_sorted, b_sorted)
    total = n * (n - 1) / 2.0
    for ties, name in ((ties_a, "y_true"), (ties_b, "y_pred")):
        if total - ties == 0:
            raise _constant_error(name, "the input")
    numerator = total - ties_a - ties_b + ties_ab - 2.0 * discordant
    return float(np.clip(numerator / np.sqrt((total - ties_a) * (total - ties_b)), -1.0, 1.0))


# --- chance-corrected agreement ------------------------------------------------------


def _label_indices(values: np.ndarray, labels: np.ndarray, name: str) -> np.ndarray:
    """Position of each value in ``labels`` (raises for values outside the label set)."""
    order = np.argsort(labels, kind="stable")
    pos = np.searchsorted(labels[order], values)
    pos = np.minimum(pos, labels.size - 1)
    found = labels[order][pos] == values
    if not found.all():
        raise InputError(f"{name}: value {values[~found][0]!r} in {describe_rows(~found)} is not in "
                         f"the label set {labels.tolist()}; expected one of the given labels")
    return order[pos]


def _resolve_labels(a: np.ndarray, b: np.ndarray, labels: Sequence[float] | None) -> np.ndarray:
    if labels is None:
        return np.union1d(a, b)
    lab = as_float_array(labels, "labels", ndim=1)
    check_finite(lab, "labels")
    if np.unique(lab).size != lab.size:
        raise InputError(f"labels: duplicate values in {lab.tolist()}; expected each label once")
    if lab.size < 1:
        raise InputError("labels: expected at least one label")
    return lab


@register("cohen_kappa", family=_FAMILY, kind=_KIND, inputs=("y_true", "y_pred"), higher_is_better=True,
          bounds=(-1.0, 1.0), per_row=False, params={"weights": None, "labels": None},
          citation="Cohen (1960), Educ. Psychol. Meas. 20(1); Cohen (1968), Psychol. Bull. 70(4)",
          tested_against=(('scipy (distributions / numerical integration)', 1e-12), ('scikit-learn', 1e-12),))
def cohen_kappa(y_true: Any, y_pred: Any, /, *, weights: str | None = None,
                labels: Sequence[float] | None = None) -> float:
    r"""Cohen's kappa between two raters, optionally weighted.

    .. math:: \kappa = 1 - \frac{\sum_{ij} w_{ij} O_{ij}}{\sum_{ij} w_{ij} E_{ij}},
              \qquad E_{ij} = \frac{O_{i\cdot} O_{\cdot j}}{n}

    with :math:`O` the confusion matrix over the label set and weights
    :math:`w_{ij} = [i \ne j]` (unweighted), :math:`|i - j|` (``"linear"``) or
    :math:`(i - j)^2` (``"quadratic"``), where :math:`i, j` are *positions* in the label
    set (as scikit-learn's ``cohen_kappa_score``).

    Parameters
    ----------
    y_true, y_pred : array_like
        Ratings (numbers) of the two raters.
    weights : {None, "linear", "quadratic"}
        Disagreement weights.
    labels : sequence of numbers, optional
        The ordered label set (the rating scale). Default: the sorted union of the
        observed values, which depends on the sample; pass the scale explicitly when
        some grades may be unused (e.g. in bootstrap resamples). Values outside an
        explicit label set raise.

    Raises
    ------
    InputError
        When the expected disagreement is zero (both raters always give the same single
        label), where kappa is undefined.

    Examples
    --------
    >>> round(cohen_kappa([1, 2, 3, 3], [1, 2, 3, 2]), 6)
    0.636364
    """
    check_choice(weights, "weights", _WEIGHTS)
    a, b = _pair(y_true, y_pred, minimum=1)
    lab = _resolve_labels(a, b, labels)
    k = lab.size
    i = _label_indices(a, lab, "y_true")
    j = _label_indices(b, lab, "y_pred")
    observed = np.bincount(i * k + j, minlength=k * k).reshape(k, k).astype(np.float64)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / a.size
    grid = np.arange(k, dtype=np.float64)
    diff = grid[:, None] - grid[None, :]
    w = {None: (diff != 0).astype(np.float64), "linear": np.abs(diff), "quadratic": diff**2}[weights]
    denominator = float((w * expected).sum())
    if denominator == 0.0:
        raise InputError("cohen_kappa: the expected disagreement is zero (both raters used one and the "
                         "same label), so kappa is undefined; expected variation in the ratings")
    return float(1.0 - (w * observed).sum() / denominator)


@register("qwk", family=_FAMILY, kind=_KIND, inputs=("y_true", "y_pred"), higher_is_better=True,
          bounds=(-1.0, 1.0), per_row=False, params={"labels": None},
          citation="Cohen (1968), Psychol. Bull. 70(4); quadratic weights as in the ASAP AES task",
          tested_against=(('scipy (distributions / numerical integration)', 1e-12), ('scikit-learn', 1e-12),))
def qwk(y_true: Any, y_pred: Any, /, *, labels: Sequence[float] | None = None) -> float:
    r"""Quadratic weighted kappa (QWK), the standard automated-essay-scoring agreement.

    :func:`cohen_kappa` with quadratic weights :math:`w_{ij} = (i - j)^2`:

    .. math:: \kappa_w = 1 - \frac{\sum_{ij} (i-j)^2 O_{ij}}{\sum_{ij} (i-j)^2 E_{ij}}

    Pass the rating scale as ``labels`` (e.g. ``[0, 1, 2, 3]``) so that unused grades
    keep their place; otherwise the sorted union of observed values is used.

    Examples
    --------
    >>> qwk([0, 1, 2, 3], [0, 1, 2, 2], labels=[0, 1, 2, 3])
    0.875
    """
    return cohen_kappa(y_true, y_pred, weights="quadratic", labels=labels)


def _delta2(level: str, values: np.ndarray, counts: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Squared difference function of Krippendorff's alpha on value indices ``i``, ``j``."""
    if level == "nominal":
        return (i != j).astype(np.float64)
    if level == "interval":
        return (values[i] - values[j]) ** 2
    if level == "ratio":
        s = values[i] + values[j]
        d = values[i] - values[j]
        return np.divide(d, s, out=np.zeros_like(d), where=s != 0) ** 2
    cum = np.cumsum(counts)  # ordinal: ranks the n_g of the values between c and k
    lo, hi = np.minimum(i, j), np.maximum(i, j)
    return (cum[hi] - cum[lo] + (counts[lo] - counts[hi]) / 2.0) ** 2


@register("krippendorff_alpha", family=_FAMILY, kind=_KIND, inputs=("y_true", "y_pred"),
          higher_is_better=True, bounds=(-np.inf, 1.0), per_row=False, params={"level": "interval"},
          citation="Krippendorff (2011), Computing Krippendorff's Alpha-Reliability; "
                   "Hayes & Krippendorff (2007), Commun. Methods Meas. 1(1)", tested_against=('scikit-learn', 1e-12))
def krippendorff_alpha(*ratings: Any, level: str = "interval") -> float:
    r"""Krippendorff's alpha reliability for any number of raters, with missing ratings.

    .. math:: \alpha = 1 - (n - 1)\,
              \frac{\sum_{c,k} o_{ck}\, \delta^2_{ck}}{\sum_{c,k} n_c n_k\, \delta^2_{ck}}

    where :math:`o_{ck} = \sum_u \#\{(c, k)\text{ pairs in unit } u\} / (m_u - 1)` is the
    coincidence matrix over the units rated at least twice (:math:`m_u` ratings),
    :math:`n_c = \sum_k o_{ck}` and :math:`n = \sum_c n_c`. The difference function
    :math:`\delta^2` is :math:`[c \ne k]` (``nominal``), :math:`(c - k)^2`
    (``interval``), :math:`((c-k)/(c+k))^2` (``ratio``) or
    :math:`(\sum_{g=c}^{k} n_g - (n_c + n_k)/2)^2` (``ordinal``). The interval expected
    disagreement uses the identity :math:`\sum_{ck} n_c n_k (c-k)^2 = 2n\sum_c n_c
    (c-\bar v)^2`, so continuous ratings cost O(n); the other levels build a V x V table
    of the V distinct values.

    Parameters
    ----------
    *ratings : array_like
        Either one 2-D array (raters x units) or one 1-D array per rater (e.g.
        ``y_true, y_pred``), all over the same units. NaN marks a missing rating; units
        with fewer than two ratings are not pairable and are ignored.
    level : {"interval", "ordinal", "nominal", "ratio"}
        Level of measurement.

    Raises
    ------
    InputError
        When no unit has two ratings, or every pairable value is the same (no expected
        disagreement: alpha is undefined).

    References
    ----------
    Krippendorff, K. (2011). Computing Krippendorff's Alpha-Reliability. Annenberg School
    for Communication, University of Pennsylvania.

    Examples
    --------
    >>> nan = float("nan")
    >>> data = [[1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    ...         [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
    ...         [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
    ...         [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan]]
    >>> round(krippendorff_alpha(data, level="nominal"), 3)
    0.743
    >>> round(krippendorff_alpha(data, level="interval"), 3)
    0.849
    """
    check_choice(level, "level", _LEVELS)
    if len(ratings) == 0:
        raise InputError("krippendorff_alpha: expected ratings (a raters x units array, or one array per rater)")
    if len(ratings) == 1:
        data = as_float_array(ratings[0], "ratings", ndim=2)
    else:
        rows = [as_float_array(r, f"ratings[{k}]", ndim=1) for k, r in enumerate(ratings)]
        check_same_length(**{f"ratings[{k}]": r for k, r in enumerate(rows)})
        data = np.vstack(rows)
    check_finite(data.T, "ratings (units)", allow_nan=True)
    if level == "ratio" and (data < 0).any():
        raise InputError("krippendorff_alpha: the ratio level needs non-negative values")
    present = ~np.isnan(data)
    per_unit = present.sum(axis=0)
    pairable = per_unit >= 2
    if not pairable.any():
        raise InputError("krippendorff_alpha: no unit has two or more ratings, so agreement is undefined")
    data, present, m_u = data[:, pairable], present[:, pairable], per_unit[pairable].astype(np.float64)
    values, counts = np.unique(data[present], return_counts=True)
    counts = counts.astype(np.float64)
    n = counts.sum()
    index = np.zeros(data.shape, dtype=np.int64)
    index[present] = np.searchsorted(values, data[present])

    observed = 0.0  # sum over units of sum over ordered rater pairs delta^2 / (m_u - 1)
    raters = data.shape[0]
    for a in range(raters):
        for b in range(a + 1, raters):
            both = present[a] & present[b]
            d2 = _delta2(level, values, counts, index[a, both], index[b, both])
            observed += 2.0 * float((d2 / (m_u[both] - 1.0)).sum())

    if level == "interval":
        mean = (values * counts).sum() / n
        expected = 2.0 * n * float((counts * (values - mean) ** 2).sum())
    else:
        expected = 0.0
        grid = np.arange(values.size)
        for start in range(0, values.size, 1024):
            rows = grid[start:start + 1024]
            d2 = _delta2(level, values, counts, rows[:, None], grid[None, :])
            expected += float((counts[rows, None] * counts[None, :] * d2).sum())
    if expected == 0.0:
        raise InputError("krippendorff_alpha: all pairable ratings are identical, so the expected "
                         "disagreement is zero and alpha is undefined")
    return float(1.0 - (n - 1.0) * observed / expected)


# --- errors --------------------------------------------------------------------------


def _rmse_partial(arrays: Any, weights: Any = None) -> np.ndarray:
    """[sum of squared errors, count], optionally under row weights (R, n): mergeable."""
    sq = (np.asarray(arrays["y_pred"], dtype=np.float64) - np.asarray(arrays["y_true"], dtype=np.float64)) ** 2
    if weights is None:
        return np.array([sq.sum(), sq.size], dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    return np.stack([w @ sq, w.sum(axis=-1)], axis=-1)


def _rmse_finalize(stats: Any) -> Any:
    stats = np.asarray(stats, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.sqrt(stats[..., 0] / stats[..., 1])


@register("rmse", family=_FAMILY, kind=_KIND, inputs=("y_true", "y_pred"), higher_is_better=False,
          bounds=(0.0, np.inf), per_row=False, citation="root mean squared error",
          partial=_rmse_partial, finalize=_rmse_finalize,
          tested_against=(('scipy (distributions / numerical integration)', 1e-12), ('scikit-learn', 1e-12),))
def rmse(y_true: Any, y_pred: Any, /) -> float:
    r"""Root mean squared error (set-level: the root of a mean is not a mean).

    .. math:: \mathrm{RMSE} = \sqrt{\tfrac{1}{n} \sum_i (\hat y_i - y_i)^2}

    Examples
    --------
    >>> rmse([1, 2, 3], [1, 2, 6])
    1.7320508075688772
    """
    a, b = _pair(y_true, y_pred, minimum=1)
    return float(np.sqrt(np.mean((b - a) ** 2)))


@register("mae", family=_FAMILY, kind=_KIND, inputs=("y_true", "y_pred"), higher_is_better=False,
          bounds=(0.0, np.inf), per_row=True, citation="mean absolute error",
          tested_against=(('scipy (distributions / numerical integration)', 1e-12), ('scikit-learn', 1e-12),))
def mae(y_true: Any, y_pred: Any, /) -> np.ndarray:
    r"""Absolute errors per row; their mean is the mean absolute error.

    .. math:: \mathrm{MAE} = \tfrac{1}{n} \sum_i |\hat y_i - y_i|

    Examples
    --------
    >>> mae([1, 2, 3], [1, 2, 6]).tolist()
    [0.0, 0.0, 3.0]
    """
    a, b = _pair(y_true, y_pred, minimum=1)
    return np.abs(b - a)


# --- system level --------------------------------------------------------------------


@register("system_srcc", family=_FAMILY, kind=_KIND, inputs=("y_true", "y_pred", "group"),
          higher_is_better=True, bounds=(-1.0, 1.0), per_row=False,
          citation="Huang et al. (2022), The VoiceMOS Challenge 2022, Interspeech (system-level SRCC)",
          tested_against=(('scipy (distributions / numerical integration)', 1e-12), ('scikit-learn', 1e-12),))
def system_srcc(y_true: Any, y_pred: Any, group: Any, /) -> float:
    r"""System-level Spearman correlation: SRCC between per-group means.

    .. math:: \rho_{\mathrm{sys}} = \rho\big(\{\bar y_g\}_g, \{\bar{\hat y}_g\}_g\big),
              \qquad \bar y_g = \frac{1}{|g|}\sum_{i \in g} y_i

    ``group`` names the rated system of each row (any hashable labels). At least two
    groups with distinct means are needed.

    Examples
    --------
    >>> system_srcc([1, 2, 3, 4, 5, 6], [1.5, 1.0, 3.2, 3.0, 6.0, 5.0], ["a", "a", "b", "b", "c", "c"])
    1.0
    """
    a, b = _pair(y_true, y_pred, minimum=1)
    g = np.asarray(group)
    if g.ndim != 1 or g.shape[0] != a.size:
        raise InputError(f"group: expected one label per rating ({a.size}), got shape {g.shape}")
    _, codes = np.unique(g, return_inverse=True)
    sizes = np.bincount(codes).astype(np.float64)
    if sizes.size < 2:
        raise InputError("system_srcc: expected at least two groups (rated systems), got 1")
    mean_true = np.bincount(codes, weights=a) / sizes
    mean_pred = np.bincount(codes, weights=b) / sizes
    try:
        return pearson_correlation(average_ranks(mean_true), average_ranks(mean_pred),
                            ("per-group mean of y_true", "per-group mean of y_pred"))
    except InputError as exc:
        raise InputError(f"system_srcc: {exc}") from None
