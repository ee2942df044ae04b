r"""Power and sample-size planning for paired comparisons, with clustered items.

For two systems scored on the same n items with per-item differences :math:`d_i`, a
two-sided level-:math:`\alpha` test of :math:`E d = 0` has, against a true difference
:math:`\Delta`, approximately

.. math::

    \text{power}(n) = \Phi\!\left(\frac{|\Delta|}{\sqrt{\sigma_d^2\,\mathrm{DE}/n}} - z_{1-\alpha/2}\right),
    \qquad
    n(\Delta) = \left\lceil \frac{(z_{1-\alpha/2} + z_{\text{power}})^2\,\sigma_d^2\,\mathrm{DE}}{\Delta^2}
    \right\rceil

(Miller 2024, "Adding error bars to evals", sec. 5), with

* :math:`\sigma_d^2` the variance of the paired differences. For right/wrong outcomes it
  follows from the **discordance** :math:`q = P(\text{the two systems disagree on an item})`:
  :math:`d \in \{-1, 0, 1\}`, so :math:`\sigma_d^2 = q - \Delta^2` (Connor 1987);
* :math:`\mathrm{DE} = 1 + (m - 1)\rho` the **design effect** of clusters of :math:`m`
  items whose differences have intra-cluster correlation :math:`\rho` (Kish 1965); the
  number of clusters needed is :math:`\lceil n / m \rceil`.

:func:`icc` estimates :math:`\rho` by the one-way ANOVA estimator (unequal cluster sizes:
:math:`m_0 = (N - \sum m_g^2/N)/(G-1)`), clipped at 0.

References
----------
Miller (2024), arXiv:2411.00640; Connor (1987), Biometrics 43(1); Kish (1965), Survey
Sampling; Donner & Klar (2000), Design and Analysis of Cluster Randomization Trials.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from scorebench.core.errors import InputError
from scorebench.core.validation import check_level

__all__ = ["icc", "design_effect", "items_needed", "paired_power", "difference_variance"]


def _z(p: float) -> float:
    from scipy.special import ndtri

    return float(ndtri(p))


def _finite_positive(value: Any, name: str, *, allow_zero: bool = False) -> float:
    ok = not isinstance(value, bool) and isinstance(value, (int, float, np.integer, np.floating)) \
        and math.isfinite(value) and (value >= 0 if allow_zero else value > 0)
    if not ok:
        raise InputError(f"{name}: expected a finite number {'>= 0' if allow_zero else '> 0'}, got {value!r}")
    return float(value)


def icc(values: Sequence[float], clusters: Sequence) -> float:
    r"""Intra-cluster correlation of ``values`` by the one-way ANOVA estimator, clipped at 0.

    .. math:: \hat\rho = \frac{MSB - MSW}{MSB + (m_0 - 1) MSW}

    Examples
    --------
    >>> round(icc([1, 1, 0, 0, 1, 1, 0, 0], [0, 0, 1, 1, 2, 2, 3, 3]), 3)
    1.0
    >>> icc([1, 0, 1, 0], [0, 0, 1, 1])
    0.0
    """
    import pandas as pd

    x = np.asarray(values, dtype=np.float64)
    codes, uniques = pd.factorize(pd.Series(np.asarray(clusters, dtype=object)), sort=True)
    if len(codes) != x.size:
        raise InputError(f"icc: {len(codes)} cluster labels for {x.size} values")
    g, n = len(uniques), x.size
    if g < 2 or n <= g:
        return 0.0
    sizes = np.bincount(codes, minlength=g).astype(np.float64)
    means = np.bincount(codes, weights=x, minlength=g) / sizes
    grand = x.mean()
    msb = float(sizes @ (means - grand) ** 2) / (g - 1)
    msw = float(((x - means[codes]) ** 2).sum()) / (n - g)
    m0 = (n - float(sizes @ sizes) / n) / (g - 1)
    denom = msb + (m0 - 1) * msw
    if denom <= 0:
        return 0.0
    return float(min(1.0, max(0.0, (msb - msw) / denom)))


def design_effect(rho: float, cluster_size: float) -> float:
    """Kish's design effect ``1 + (m - 1) rho``.

    Examples
    --------
    >>> design_effect(0.1, 11)
    2.0
    """
    rho = _finite_positive(rho, "icc", allow_zero=True)
    m = _finite_positive(cluster_size, "cluster_size")
    if m < 1:
        raise InputError(f"cluster_size: expected >= 1 item per cluster, got {cluster_size!r}")
    return 1.0 + (m - 1.0) * rho


def difference_variance(delta: float, *, sd_diff: float | None = None, discordance: float | None = None) -> float:
    r"""Variance of the paired differences under a true difference ``delta``.

    Either ``sd_diff`` (observed standard deviation of the differences) or, for right/wrong
    outcomes, ``discordance`` :math:`q`: :math:`\sigma_d^2 = q - \Delta^2`.
    """
    if (sd_diff is None) == (discordance is None):
        raise InputError("pass exactly one of sd_diff (any metric) or discordance (right/wrong outcomes)")
    if sd_diff is not None:
        return _finite_positive(sd_diff, "sd_diff") ** 2
    q = _finite_positive(discordance, "discordance")
    if q > 1:
        raise InputError(f"discordance: expected a share in (0, 1], got {discordance!r}")
    if abs(delta) >= q:
        raise InputError(f"delta {delta:g}: a difference in accuracy cannot exceed the discordance {q:g}")
    return q - delta * delta


def items_needed(delta: float, *, sd_diff: float | None = None, discordance: float | None = None,
                 alpha: float = 0.05, power: float = 0.8, icc: float = 0.0, cluster_size: float = 1.0) -> int:
    r"""Items needed to detect a true paired difference ``delta`` with a two-sided test.

    .. math:: n = \left\lceil (z_{1-\alpha/2} + z_{\text{power}})^2\, \sigma_d^2\, \mathrm{DE} / \Delta^2 \right\rceil

    Examples
    --------
    Two systems that disagree on 20% of the items; to detect a 3-point difference:

    >>> items_needed(0.03, discordance=0.2)
    1737
    >>> items_needed(0.03, discordance=0.2, icc=0.1, cluster_size=5)  # 5 questions per passage
    2431
    """
    delta = float(delta)
    if not math.isfinite(delta) or delta == 0:
        raise InputError(f"delta: expected a non-zero finite difference to detect, got {delta!r}")
    check_level(alpha, "alpha")
    check_level(power, "power")
    var = difference_variance(delta, sd_diff=sd_diff, discordance=discordance)
    k = _z(1 - alpha / 2) + _z(power)
    return int(math.ceil(k * k * var * design_effect(icc, cluster_size) / (delta * delta)))


def paired_power(delta: float, n: int, *, sd_diff: float | None = None, discordance: float | None = None,
                 alpha: float = 0.05, icc: float = 0.0, cluster_size: float = 1.0) -> float:
    r"""Approximate power of a two-sided level-``alpha`` paired test with ``n`` items against ``delta``.

    Examples
    --------
    >>> round(paired_power(0.03, 1737, discordance=0.2), 3)
    0.8
    """
    from scipy.special import ndtr

    check_level(alpha, "alpha")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
        raise InputError(f"n: expected an integer >= 2, got {n!r}")
    var = difference_variance(float(delta), sd_diff=sd_diff, discordance=discordance)
    se = math.sqrt(var * design_effect(icc, cluster_size) / n)
    return float(ndtr(abs(delta) / se - _z(1 - alpha / 2)))
