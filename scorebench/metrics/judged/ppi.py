r"""Prediction-powered inference for a mean score, a win rate and a difference (PPI, PPI++, stratified).

A judge scores all :math:`n + N` rows (:math:`f_i`), a person the :math:`n` labelled ones
(:math:`y_i`). The PPI++ estimate of the mean human score (Angelopoulos et al. 2023a, b) is

.. math:: \hat\theta_\lambda = \lambda\,\bar f_{U} + \bigl(\bar y_{L} - \lambda\,\bar f_{L}\bigr),

unbiased for any fixed :math:`\lambda` (the rectifier :math:`\bar y - \lambda\bar f` removes
the judge's bias), with :math:`\lambda = 1` classical PPI, :math:`\lambda = 0` the human-only
mean, and the power-tuned

.. math:: \hat\lambda = \operatorname{clip}_{[0, 1]}
          \frac{\widehat{\operatorname{Cov}}_L(y, f)}{(1 + n/N)\,\widehat{\operatorname{Var}}_{L \cup U}(f)}

minimising the variance :math:`\lambda^2 s^2_{f,U}/N + s^2_{y - \lambda f, L}/n`. Everything
is a function of nine sums per group (the labelled and unlabelled moments), so the metrics
merge across partitions and bootstrap through weighted sums. The normal interval is
:func:`ppi_mean_interval` (the ``ppi-python`` package's, to rounding); :func:`scorebench.evaluate`
gives the percentile bootstrap of rows. A win rate is the mean of a {0, 0.5, 1} preference,
a difference of two systems on the same items the mean of per-item differences.

Stratified PPI (Fisch et al. 2024) estimates each stratum with its own :math:`\hat\lambda_k`
and weights the strata by their share of rows:
:math:`\hat\theta = \sum_k w_k \hat\theta_k`, :math:`\widehat{\operatorname{Var}} = \sum_k w_k^2 \widehat{\operatorname{Var}}_k`.

References
----------
Angelopoulos, Bates, Fannjiang, Jordan, Zrnic (2023), Prediction-powered inference, Science
382(6671). Angelopoulos, Duchi, Zrnic (2023), PPI++: Efficient Prediction-Powered Inference,
arXiv:2311.01453. Fisch et al. (2024), Stratified Prediction-Powered Inference for Hybrid
Language Model Evaluation, NeurIPS 2024, arXiv:2406.04291.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from scorebench.core.docstrings import fill_doc
from scorebench.core.errors import InputError

__all__ = ["ppi_mean", "ppi_win_rate", "ppi_mean_interval", "ppi_difference_interval", "stratified_ppi_mean",
           "stratified_ppi_interval", "ppi_stats", "ppi_finalize", "N_STATS"]

#: The sums per group: labelled n, sum y, sum f, sum y^2, sum f^2, sum y f; unlabelled N, sum f, sum f^2.
N_STATS = 9


def _check(judge: Any, human: Any, name: str) -> tuple[np.ndarray, np.ndarray]:
    judge = np.asarray(judge, dtype=np.float64).ravel()
    human = np.asarray(human, dtype=np.float64).ravel()
    if judge.shape != human.shape:
        raise InputError(f"{name}: judge and human have different lengths ({judge.size} and {human.size})")
    if not np.isfinite(judge).all():
        raise InputError(f"{name}: the judge's scores must be finite numbers on every row")
    return judge, human


def ppi_stats(judge: Any, human: Any, weights: Any = None) -> np.ndarray:
    """The nine sums of :data:`N_STATS`, shape ``(9,)``, or ``(B, 9)`` under row weights ``(B, n)``."""
    f, y = _check(judge, human, "ppi")
    lab = ~np.isnan(y)
    yl = np.where(lab, y, 0.0)
    cols = np.column_stack([lab, yl, f * lab, yl * yl, f * f * lab, yl * f, ~lab, f * ~lab, f * f * ~lab]).astype(np.float64)
    return cols.sum(axis=0) if weights is None else np.asarray(weights, dtype=np.float64) @ cols


def _moments(stats: np.ndarray) -> dict[str, np.ndarray]:
    s = np.asarray(stats, dtype=np.float64)
    n, sy, sf, syy, sff, syf, N, su, suu = (s[..., j] for j in range(N_STATS))
    with np.errstate(invalid="ignore", divide="ignore"):
        my, mf, mu = sy / n, sf / n, su / N
        vy = syy / n - my ** 2
        vf = sff / n - mf ** 2
        cyf = syf / n - my * mf
        vu = suu / N - mu ** 2
        total = n + N
        mall = (sf + su) / total
        vall = (sff + suu - total * mall ** 2) / (total - 1)  # ddof=1 over all rows, as ppi-python
    return dict(n=n, N=N, my=my, mf=mf, mu=mu, vy=vy, vf=vf, cyf=cyf, vu=vu, vall=vall)


def _tuned_lam(m: dict[str, np.ndarray]) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        lam = m["cyf"] / ((1.0 + m["n"] / m["N"]) * m["vall"])
    return np.clip(np.where(np.isfinite(lam), lam, 0.0), 0.0, 1.0)


def ppi_finalize(stats: Any, lam: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(estimate, variance)`` of PPI++ from the sums (batched over leading axes); NaN where
    a group has fewer than two labelled rows. Without unlabelled rows it is the human mean."""
    m = _moments(stats)
    lam_ = _tuned_lam(m) if lam is None else np.full(np.shape(m["n"]), float(lam))
    no_u = m["N"] == 0
    lam_ = np.where(no_u, 0.0, lam_)
    mu = np.where(no_u, 0.0, m["mu"])
    vu = np.where(no_u, 0.0, m["vu"])
    with np.errstate(invalid="ignore", divide="ignore"):
        est = lam_ * mu + m["my"] - lam_ * m["mf"]
        rect = m["vy"] - 2 * lam_ * m["cyf"] + lam_ ** 2 * m["vf"]
        var = np.where(no_u, 0.0, lam_ ** 2 * vu / np.where(no_u, 1.0, m["N"])) + np.maximum(rect, 0.0) / m["n"]
    few = m["n"] < 2
    return np.where(few, np.nan, est), np.where(few, np.nan, var)


def _check_lam(lam: Any, name: str) -> float | None:
    if lam is None or (isinstance(lam, str) and lam.lower() in ("auto", "none")):
        return None
    if isinstance(lam, bool) or not isinstance(lam, (int, float)) or not np.isfinite(lam):
        raise InputError(f"{name}: lam must be a number (1 = PPI, 0 = human labels only) or None (power-tuned PPI++), "
                         f"got {lam!r}")
    return float(lam)


def _labelled_enough(human: np.ndarray, name: str) -> None:
    n = int((~np.isnan(human)).sum())
    if n < 2:
        raise InputError(f"{name}: {n} human-labelled row(s) in the group; PPI needs at least 2 (column 'human')")


def _estimate(f: np.ndarray, y: np.ndarray, lam: Any, name: str) -> tuple[np.ndarray, np.ndarray]:
    """``(estimate, variance)`` of one checked group, after refusing fewer than 2 labelled rows and a bad ``lam``."""
    _labelled_enough(y, name)
    return ppi_finalize(ppi_stats(f, y), _check_lam(lam, name))


def _point_estimate(judge: Any, human: Any, lam: Any, name: str,
                    check: Callable[[np.ndarray, np.ndarray], None] | None = None) -> float:
    """The PPI++ point estimate of one group for the public ``name``, after ``check(f, y)`` if given."""
    f, y = _check(judge, human, name)
    if check is not None:
        check(f, y)
    return float(_estimate(f, y, lam, name)[0])


#: The parameters that ppi_mean and ppi_win_rate share (filled in with fill_doc).
_SECTIONS = {
    "judge_human_lam": """
judge : (n,) array
    The judge's score of every row.
human : (n,) array
    The human score; NaN where the row is unlabelled.
lam : float, optional
    Power-tuning weight; None tunes it (PPI++), 1 is classical PPI, 0 the human mean.
""",
}


def ppi_mean(judge: Any, human: Any, *, lam: float | None = None) -> float:
    r"""PPI++ estimate of the mean human score from judge scores on every row and human scores on some.

    Parameters
    ----------
    %(judge_human_lam)s

    Examples
    --------
    >>> import numpy as np
    >>> judge = np.array([1, 1, 0, 1, 1, 0, 1, 1.0])
    >>> human = np.array([1, 0, 0, 1, np.nan, np.nan, np.nan, np.nan])
    >>> round(ppi_mean(judge, human, lam=1), 4)
    0.5
    """
    return _point_estimate(judge, human, lam, "ppi_mean")


def _check_preferences(judge: np.ndarray, human: np.ndarray) -> None:
    for name, values in (("judge", judge), ("human", human)):
        v = values[~np.isnan(values)]
        bad = (v != 0) & (v != 0.5) & (v != 1)
        if bad.any():
            raise InputError(f"ppi_win_rate: column {name!r} has {v[bad][0]!r}; expected a preference 1 (win), "
                             "0.5 (tie) or 0 (loss)")


def ppi_win_rate(judge: Any, human: Any, *, lam: float | None = None) -> float:
    r"""PPI++ estimate of a win rate: the mean human preference (1 win, 0.5 tie, 0 loss).

    Parameters
    ----------
    %(judge_human_lam)s

    Examples
    --------
    A judge that favours the system: on the four rows people labelled it counts 3.5 wins
    where they count 2.5, so its own win rate over all eight rows is too high.

    >>> import numpy as np
    >>> judge = np.array([1, 1, 0.5, 1, 1, 0, 1, 1])
    >>> human = np.array([1, 0, 0.5, 1, np.nan, np.nan, np.nan, np.nan])

    Classical PPI (``lam=1``) subtracts that bias, measured on the labelled rows, from the
    judge's mean over the unlabelled ones:

    >>> float(judge.mean()), round(ppi_win_rate(judge, human, lam=1), 4)
    (0.8125, 0.5)
    """
    return _point_estimate(judge, human, lam, "ppi_win_rate", check=_check_preferences)


fill_doc(ppi_mean, ppi_win_rate, **_SECTIONS)


def ppi_mean_interval(judge: Any, human: Any, *, ci: float = 0.95, lam: float | None = None) -> tuple[float, float, float]:
    r"""PPI++ estimate and its normal (CLT) interval, :math:`\hat\theta \pm z\,\hat\sigma`.

    The variance is :math:`\hat\lambda^2 s^2_{f,U}/N + s^2_{y - \hat\lambda f, L}/n` (variances
    with divisor :math:`N` and :math:`n`, as ``ppi_py.ppi_mean_ci``).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 400).astype(float); f = np.where(rng.random(400) < 0.8, y, 1 - y)
    >>> y[100:] = np.nan
    >>> est, low, high = ppi_mean_interval(f, y)
    >>> bool(low < est < high)
    True
    """
    from scipy.stats import norm

    f, y = _check(judge, human, "ppi_mean_interval")
    est, var = _estimate(f, y, lam, "ppi_mean_interval")
    half = norm.ppf(0.5 + ci / 2.0) * np.sqrt(var)
    return float(est), float(est - half), float(est + half)


def ppi_difference_interval(judge_a: Any, human_a: Any, judge_b: Any, human_b: Any, *, ci: float = 0.95,
                            lam: float | None = None) -> tuple[float, float, float]:
    r"""PPI++ estimate and interval of the difference of two systems' mean human scores on the same items.

    The items are paired: row :math:`i` of ``a`` and ``b`` is the same item, labelled by a
    person for both systems or for neither. The estimand is the mean of the per-item
    differences, so PPI runs on :math:`f_a - f_b` and :math:`y_a - y_b`.

    Examples
    --------
    >>> import numpy as np
    >>> fa, fb = np.array([1, 1, 0, 1, 1, 0.]), np.array([0, 1, 0, 0, 1, 0.])
    >>> ya, yb = np.array([1, 0, 0, 1, np.nan, np.nan]), np.array([0, 1, 0, 0, np.nan, np.nan])
    >>> [round(v, 3) for v in ppi_difference_interval(fa, ya, fb, yb, lam=1)][:1]
    [-0.25]
    """
    fa, ya = _check(judge_a, human_a, "ppi_difference")
    fb, yb = _check(judge_b, human_b, "ppi_difference")
    if fa.shape != fb.shape:
        raise InputError(f"ppi_difference: systems a and b have {fa.size} and {fb.size} items; expected the same items")
    if (np.isnan(ya) != np.isnan(yb)).any():
        raise InputError("ppi_difference: an item is human-labelled for one system and not the other; "
                         "expected both or neither")
    return ppi_mean_interval(fa - fb, ya - yb, ci=ci, lam=lam)


def _strata(stratum: Any, size: int) -> np.ndarray:
    s = np.asarray(stratum, dtype=np.float64).ravel()
    if s.shape != (size,):
        raise InputError(f"stratified_ppi_mean: {s.size} strata for {size} rows")
    return s


def _stratified(judge: Any, human: Any, stratum: Any, lam: float | None, name: str) -> tuple[float, float]:
    f, y = _check(judge, human, name)
    s = _strata(stratum, f.size)
    est, var = 0.0, 0.0
    for k in np.unique(s):
        rows = s == k
        labelled = int((~np.isnan(y[rows])).sum())
        if labelled < 2:
            raise InputError(f"{name}: stratum {int(k)} has {labelled} human-labelled row(s); each stratum needs "
                             "at least 2")
        e, v = ppi_finalize(ppi_stats(f[rows], y[rows]), lam)
        w = rows.sum() / f.size
        est, var = est + w * float(e), var + w * w * float(v)
    return float(est), float(var)


def stratified_ppi_mean(judge: Any, human: Any, stratum: Any, *, lam: float | None = None) -> float:
    r"""Stratified PPI++ estimate of the mean human score: strata weighted by their share of rows.

    Examples
    --------
    >>> import numpy as np
    >>> judge = np.array([1, 1, 0, 1, 0, 0, 1, 0.])
    >>> human = np.array([1, 1, np.nan, np.nan, 0, 1, np.nan, np.nan])
    >>> round(stratified_ppi_mean(judge, human, [0, 0, 0, 0, 1, 1, 1, 1], lam=1), 4)
    0.75
    """
    return float(_stratified(judge, human, stratum, _check_lam(lam, "stratified_ppi_mean"), "stratified_ppi_mean")[0])


def stratified_ppi_interval(judge: Any, human: Any, stratum: Any, *, ci: float = 0.95,
                            lam: float | None = None) -> tuple[float, float, float]:
    """Stratified PPI++ estimate and its normal interval (variance the weighted sum of the strata's)."""
    from scipy.stats import norm

    est, var = _stratified(judge, human, stratum, _check_lam(lam, "stratified_ppi_interval"), "stratified_ppi_interval")
    half = norm.ppf(0.5 + ci / 2.0) * np.sqrt(var)
    return est, est - half, est + half
