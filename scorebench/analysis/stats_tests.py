"""Intervals and tests for proportions, paired right/wrong outcomes, clustered and repeated items.

Imports nothing of scorebench except its errors (the same floor as :mod:`scorebench.core.stats`).

* :func:`wilson_interval`, :func:`jeffreys_interval`: intervals for a proportion k / n.
  Accuracy is a proportion; a percentile bootstrap of it is too narrow for small n and
  degenerate at 0 and n (every resample of 20 right answers out of 20 is 20/20).
* :func:`mcnemar`: paired right/wrong outcomes of two systems on the same items. Only the
  discordant items (one right, the other wrong) carry information; an unpaired two-proportion
  test ignores the pairing and loses power (lm-eval #3831: p = 0.008 paired vs 0.080 unpaired).
* :func:`cluster_robust_se`, :func:`cluster_t`, :func:`cluster_bootstrap_means`,
  :func:`cluster_sign_flip`: items that come in groups (several questions about one passage)
  are not independent; the cluster, not the item, is the sampling unit.
* :func:`two_level_bootstrap`: several samples per item (repeated generations at
  temperature > 0): resample items, then samples within each item.
* :func:`minimum_detectable_effect`: the smallest true difference a test of level alpha
  detects with the given power.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from scorebench.core.errors import InputError
from scorebench.core.stats import check_sign_flips, cluster_counts

__all__ = ["PROPORTION_INTERVALS", "INTERVAL_NAMES", "MCNEMAR_EXACT_BELOW", "wilson_interval", "jeffreys_interval",
           "proportion_interval", "McNemar", "mcnemar", "cluster_robust_se", "cluster_t",
           "cluster_bootstrap_means", "cluster_sign_flip", "two_level_bootstrap", "minimum_detectable_effect"]

PROPORTION_INTERVALS = ("wilson", "jeffreys", "bootstrap")
INTERVAL_NAMES = {"wilson": "wilson score interval", "jeffreys": "jeffreys interval"}  # as outputs record them
MCNEMAR_EXACT_BELOW = 25  # discordant pairs; below this the exact binomial test is used


def _z(level: float) -> float:
    from scipy.special import ndtri

    if not 0.0 < level < 1.0:
        raise InputError(f"ci: expected a confidence level strictly between 0 and 1, got {level!r}")
    return float(ndtri(0.5 + level / 2.0))


def _counts(k: float, n: float) -> tuple[float, float]:
    k, n = float(k), float(n)
    if not (n >= 1 and 0 <= k <= n and k == round(k) and n == round(n)):
        raise InputError(f"a proportion needs integer counts 0 <= k <= n, n >= 1; got k={k}, n={n}")
    return k, n


def wilson_interval(k: float, n: float, ci: float = 0.95) -> tuple[float, float]:
    r"""Wilson score interval for a proportion ``k / n``.

    .. math:: \frac{\hat p + \frac{z^2}{2n} \pm z\sqrt{\frac{\hat p(1-\hat p)}{n} + \frac{z^2}{4n^2}}}
              {1 + z^2/n}, \qquad z = \Phi^{-1}\!\left(\tfrac{1 + \mathrm{ci}}{2}\right)

    The interval inverts the score test, stays inside [0, 1] and has near-nominal coverage
    down to small n (Brown, Cai & DasGupta 2001, Statistical Science 16(2)); it equals
    ``statsmodels.stats.proportion.proportion_confint(k, n, method="wilson")``.

    Examples
    --------
    >>> [round(x, 4) for x in wilson_interval(20, 20)]
    [0.8389, 1.0]
    """
    k, n = _counts(k, n)
    z = _z(ci)
    p = k / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z / denom * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return float(max(0.0, centre - half)), float(min(1.0, centre + half))


def jeffreys_interval(k: float, n: float, ci: float = 0.95) -> tuple[float, float]:
    r"""Jeffreys interval: equal-tailed quantiles of Beta(k + 1/2, n - k + 1/2).

    .. math:: [B^{-1}(\alpha/2;\, k + \tfrac12, n - k + \tfrac12),\;
               B^{-1}(1 - \alpha/2;\, k + \tfrac12, n - k + \tfrac12)], \quad \alpha = 1 - \mathrm{ci}

    with Brown, Cai & DasGupta's (2001) boundary modification: the lower end is 0 when
    ``k = 0`` and the upper end is 1 when ``k = n`` (so the point estimate is always inside).
    statsmodels' ``method="jeffreys"`` omits that modification; the two agree for 0 < k < n.

    Examples
    --------
    >>> [round(x, 4) for x in jeffreys_interval(7, 10)]
    [0.3942, 0.9073]
    >>> jeffreys_interval(0, 10)[0]
    0.0
    """
    from scipy.stats import beta

    k, n = _counts(k, n)
    alpha = 1.0 - ci
    _z(ci)
    low = 0.0 if k == 0 else float(beta.ppf(alpha / 2, k + 0.5, n - k + 0.5))
    high = 1.0 if k == n else float(beta.ppf(1 - alpha / 2, k + 0.5, n - k + 0.5))
    return low, high


def proportion_interval(k: float, n: float, ci: float = 0.95, method: str = "wilson") -> tuple[float, float]:
    """Interval for a proportion by ``method`` (``"wilson"`` or ``"jeffreys"``)."""
    if method == "wilson":
        return wilson_interval(k, n, ci)
    if method == "jeffreys":
        return jeffreys_interval(k, n, ci)
    raise InputError(f"proportion interval: expected 'wilson' or 'jeffreys', got {method!r}")


@dataclass(frozen=True)
class McNemar:
    """McNemar's test: discordant counts, statistic, p-value and which form was used."""

    b: int  # a right, b wrong
    c: int  # a wrong, b right
    statistic: float
    p_value: float
    method: str


def mcnemar(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, *, exact: bool | None = None,
            correction: bool = True) -> McNemar:
    r"""McNemar's test that two systems have the same accuracy on the same items.

    With ``b`` items that only system a gets right and ``c`` that only system b gets right,
    under the null each discordant item is equally likely to go either way:

    * exact (default when ``b + c <`` :data:`MCNEMAR_EXACT_BELOW`): two-sided binomial test,
      :math:`p = \min(1, 2\,P[\mathrm{Bin}(b + c, 1/2) \le \min(b, c)])`, statistic ``min(b, c)``;
    * otherwise the chi-square form :math:`(|b - c| - 1)^2 / (b + c)` with 1 degree of freedom
      (Edwards' continuity correction; ``correction=False`` gives :math:`(b - c)^2 / (b + c)`,
      which is closer to the exact p-value for large counts but anti-conservative for small).

    These are statsmodels' ``mcnemar(table, exact=..., correction=...)`` forms. No discordant
    item at all gives p = 1.

    Reference: McNemar (1947), Psychometrika 12(2); Edwards (1948), Psychometrika 13(3).

    Examples
    --------
    >>> r = mcnemar([1, 1, 1, 1, 1, 1, 0, 1], [0, 0, 0, 0, 0, 1, 0, 1])
    >>> r.b, r.c, round(r.p_value, 4), r.method
    (5, 0, 0.0625, 'exact binomial')
    """
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise InputError(f"mcnemar: expected two equal-length 1-d arrays, got shapes {x.shape} and {y.shape}")
    for name, v in (("a", x), ("b", y)):
        bad = ~np.isin(v, (0.0, 1.0))
        if bad.any():
            raise InputError(f"mcnemar: outcomes of {name} must be 0 or 1 (right/wrong), got {v[bad][0]!r}; "
                             "McNemar's test applies to accuracy-type metrics only")
    n1 = int(np.count_nonzero((x == 1) & (y == 0)))
    n2 = int(np.count_nonzero((x == 0) & (y == 1)))
    total = n1 + n2
    use_exact = total < MCNEMAR_EXACT_BELOW if exact is None else bool(exact)
    from scipy import stats

    if total == 0:
        return McNemar(n1, n2, 0.0, 1.0, "no discordant pairs")
    if use_exact:
        stat = min(n1, n2)
        return McNemar(n1, n2, float(stat), float(min(1.0, 2 * stats.binom.cdf(stat, total, 0.5))),
                       "exact binomial")
    corr = 1.0 if correction else 0.0
    stat = (abs(n1 - n2) - corr) ** 2 / total
    return McNemar(n1, n2, float(stat), float(stats.chi2.sf(stat, 1)),
                   "chi-square" + (" with continuity correction" if correction else ""))


# --- clustered items --------------------------------------------------------------------


def _cluster_codes(d: np.ndarray, clusters: np.typing.ArrayLike) -> tuple[np.ndarray, int]:
    import pandas as pd

    labels = pd.Series(np.asarray(clusters, dtype=object) if not isinstance(clusters, pd.Series) else clusters)
    if len(labels) != d.size:
        raise InputError(f"cluster: {len(labels)} labels for {d.size} values; expected one per value")
    if labels.isna().any():
        raise InputError("cluster: missing cluster labels; every item needs a cluster")
    codes, uniques = pd.factorize(labels, sort=True)
    return codes.astype(np.int64), len(uniques)


def cluster_robust_se(d: np.typing.ArrayLike, clusters: np.typing.ArrayLike) -> tuple[float, int]:
    r"""Cluster-robust (CR1) standard error of ``mean(d)`` and the number of clusters G.

    .. math:: \widehat{\mathrm{Var}}(\bar d) = \frac{G}{G-1}\,
              \frac{1}{n^2}\sum_{g=1}^{G}\Big(\sum_{i \in g} (d_i - \bar d)\Big)^2

    the Liang–Zeger sandwich for the intercept-only regression with the CR1 small-sample
    factor :math:`\frac{G}{G-1}\frac{n-1}{n-K}` (K = 1), as Stata's ``vce(cluster)`` and
    statsmodels' ``cov_type="cluster"``. With one item per cluster it is the usual
    ``sd(d) / sqrt(n)``. Reference: Cameron & Miller (2015), J. Human Resources 50(2).

    Examples
    --------
    >>> se, g = cluster_robust_se([1.0, 0.0, 1.0, 1.0, 0.0, 0.0], ["p1", "p1", "p2", "p2", "p3", "p3"])
    >>> round(se, 4), g
    (0.2887, 3)
    """
    d = np.asarray(d, dtype=np.float64)
    codes, g = _cluster_codes(d, clusters)
    if g < 2:
        raise InputError(f"cluster-robust standard errors need at least 2 clusters, got {g}")
    resid = d - d.mean()
    sums = np.bincount(codes, weights=resid, minlength=g)
    var = g / (g - 1) * float(sums @ sums) / d.size**2
    return float(np.sqrt(var)), g


def cluster_t(d: Sequence[float] | np.ndarray, clusters: Sequence | np.ndarray) -> tuple[float, float, float, int]:
    """Cluster-robust t-test of mean(d) = 0: ``(t, p, se, G)``, Student t with G - 1 df.

    The G - 1 degrees of freedom follow Cameron & Miller (2015, sec. VI): with few
    clusters the normal reference over-rejects.
    """
    from scipy import stats

    d = np.asarray(d, dtype=np.float64)
    se, g = cluster_robust_se(d, clusters)
    mean = float(d.mean())
    if se == 0:
        return (float("inf") if mean else 0.0), (0.0 if mean else 1.0), 0.0, g
    t = mean / se
    return float(t), float(2 * stats.t.sf(abs(t), g - 1)), se, g


def cluster_bootstrap_means(d: Sequence[float] | np.ndarray, clusters: Sequence | np.ndarray, n_boot: int,
                            rng: np.random.Generator) -> np.ndarray:
    r"""Bootstrap replicates of ``mean(d)`` resampling whole clusters with replacement.

    Round b draws G clusters (counts :math:`c_{bg}`) and gives
    :math:`\sum_g c_{bg} S_g / \sum_g c_{bg} n_g` with cluster sums :math:`S_g` and sizes
    :math:`n_g` (the mean over all items of the drawn clusters).

    Examples
    --------
    >>> reps = cluster_bootstrap_means(np.arange(6.0), [0, 0, 1, 1, 2, 2], 100, np.random.default_rng(0))
    >>> reps.shape, bool(reps.min() >= 0.5 and reps.max() <= 4.5)
    ((100,), True)
    """
    d = np.asarray(d, dtype=np.float64)
    codes, g = _cluster_codes(d, clusters)
    sums = np.bincount(codes, weights=d, minlength=g)
    sizes = np.bincount(codes, minlength=g).astype(np.float64)
    counts = cluster_counts(g, n_boot, rng)
    return (counts @ sums) / (counts @ sizes)


def cluster_sign_flip(d: Sequence[float] | np.ndarray, clusters: Sequence | np.ndarray, n_perm: int,
                      rng: np.random.Generator) -> tuple[float, str]:
    """Sign-flip randomisation test of mean(d) = 0 flipping whole clusters (exact for G <= 16).

    Under the null the two systems' labels are exchangeable within each cluster, so each
    cluster's sum of differences keeps or flips its sign with probability 1/2.
    """
    d = np.asarray(d, dtype=np.float64)
    codes, g = _cluster_codes(d, clusters)
    sums = np.bincount(codes, weights=d, minlength=g)
    observed = abs(sums.sum())
    tol = 1e-12 * max(1.0, np.abs(sums).sum())
    if g <= 16:
        signs = 1 - 2 * ((np.arange(2**g)[:, None] >> np.arange(g)) & 1)
        return float(np.mean(np.abs(signs @ sums) >= observed - tol)), f"exact, {2**g} cluster sign patterns"
    check_sign_flips(n_perm, g, "clusters")
    signs = rng.integers(0, 2, size=(n_perm, g), dtype=np.int8) * 2 - 1
    extreme = np.count_nonzero(np.abs(signs @ sums) >= observed - tol)
    return float((1 + extreme) / (n_perm + 1)), f"{n_perm} random cluster sign flips"


# --- several samples per item ---------------------------------------------------------


def two_level_bootstrap(arms: Sequence[tuple[np.ndarray, np.ndarray]], n_items: int, n_boot: int,
                        rng: np.random.Generator, signs: Sequence[float] | None = None) -> np.ndarray:
    r"""Two-level bootstrap of a mean of per-item means (several samples per item).

    ``arms`` holds ``(values, item)`` pairs (one per system; ``item`` in ``0..n_items-1``),
    every item having at least one sample in every arm. Round b draws items with
    replacement (counts :math:`c_{bi}`) and, independently per arm, the samples of each
    item with replacement (mean :math:`\bar x^*_{bai}`), and returns

    .. math:: \frac{1}{n}\sum_i c_{bi} \sum_a s_a\, \bar x^*_{bai}

    with ``signs`` :math:`s_a` (default all 1; ``(1, -1)`` for a paired difference). The
    within-item resampling adds the sampling noise of each item's mean; the scheme is
    slightly conservative (the within-item variance is counted about twice when items have
    few samples; Davison & Hinkley 1997, sec. 3.8).

    Examples
    --------
    >>> vals, item = np.array([1.0, 0.0, 1.0, 1.0]), np.array([0, 0, 1, 1])
    >>> reps = two_level_bootstrap([(vals, item)], 2, 200, np.random.default_rng(0))
    >>> bool(0.0 <= reps.min() and reps.max() <= 1.0), round(float(reps.mean()), 1)
    (True, 0.8)
    """
    signs = np.ones(len(arms)) if signs is None else np.asarray(signs, dtype=np.float64)
    prepared = []
    for values, item in arms:
        values, item = np.asarray(values, dtype=np.float64), np.asarray(item, dtype=np.int64)
        order = np.argsort(item, kind="stable")
        values, item = values[order], item[order]
        sizes = np.bincount(item, minlength=n_items)
        if (sizes == 0).any():
            raise InputError(f"repeats: item(s) {np.flatnonzero(sizes == 0)[:5].tolist()} have no sample in some "
                             "system; every item needs at least one sample per system")
        starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        prepared.append((values, item, sizes.astype(np.float64), starts[item], sizes[item]))
    out = np.empty(n_boot)
    for b in range(n_boot):
        counts = np.bincount(rng.integers(0, n_items, n_items), minlength=n_items)
        total = np.zeros(n_items)
        for s, (values, item, sizes, start, size) in zip(signs, prepared):
            pick = start + (rng.random(values.size) * size).astype(np.int64)
            total += s * np.bincount(item, weights=values[pick], minlength=n_items) / sizes
        out[b] = counts @ total / n_items
    return out


def minimum_detectable_effect(se: float, *, alpha: float = 0.05, power: float = 0.8,
                              df: float | None = None) -> float:
    r"""Smallest true difference a two-sided level-``alpha`` test detects with ``power``.

    .. math:: \mathrm{MDE} = (q_{1-\alpha/2} + q_{\mathrm{power}})\,\mathrm{SE}

    with normal quantiles (Student t quantiles with ``df`` degrees of freedom when given).
    For n paired items with differences of standard deviation :math:`\sigma_d`,
    :math:`\mathrm{SE} = \sigma_d/\sqrt n`; for paired right/wrong outcomes with discordant
    share :math:`p_d`, :math:`\sigma_d \approx \sqrt{p_d}` (Connor 1987, Biometrics 43(1)).
    Reference: Bloom (1995), Evaluation Review 19(5); Miller (2024), arXiv:2411.00640.

    Examples
    --------
    >>> round(minimum_detectable_effect(0.01), 4)  # e.g. sd 0.316 (10% discordant) over 1000 items
    0.028
    """
    from scipy import stats

    for name, v in (("alpha", alpha), ("power", power)):
        if not 0.0 < v < 1.0:
            raise InputError(f"{name}: expected a value strictly between 0 and 1, got {v!r}")
    if not np.isfinite(se) or se < 0:
        raise InputError(f"standard error: expected a finite non-negative number, got {se!r}")
    dist = stats.norm if df is None else stats.t(df)
    return float((dist.ppf(1 - alpha / 2) + dist.ppf(power)) * se)
