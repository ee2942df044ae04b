r"""Friedman test and Nemenyi critical difference for systems ranked on several tasks.

Each task ranks the systems (1 = best, ties get the mean rank); :math:`R_a` is system
:math:`a`'s average rank over :math:`N` tasks and :math:`k` systems. The Friedman statistic
is

.. math:: \chi^2_F = \frac{12N}{k(k+1)}\Big(\sum_a R_a^2 - \frac{k(k+1)^2}{4}\Big),

and two systems differ (Nemenyi post-hoc test at level :math:`\alpha`) when their average
ranks differ by more than

.. math:: CD = \frac{q_\alpha}{\sqrt 2}\sqrt{\frac{k(k+1)}{6N}},

with :math:`q_\alpha` the upper :math:`\alpha` quantile of the studentized range for
:math:`k` groups and infinite degrees of freedom.

Reference: Demšar, J. (2006). Statistical comparisons of classifiers over multiple data
sets. *JMLR* 7, 1-30.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from scorebench.core.errors import InputError

__all__ = ["FriedmanResult", "friedman_nemenyi"]


@dataclass(frozen=True)
class FriedmanResult:
    """Average ranks, the Friedman test and the Nemenyi critical difference."""

    systems: tuple[str, ...]
    average_ranks: np.ndarray
    statistic: float
    p_value: float
    critical_difference: float
    alpha: float
    n_tasks: int

    def cliques(self) -> tuple[tuple[int, int], ...]:
        """Maximal runs (in rank order) of systems not significantly different: (first, last) indices."""
        order = np.argsort(self.average_ranks, kind="stable")
        r = self.average_ranks[order]
        runs: list[tuple[int, int]] = []
        for i in range(len(r)):
            j = i
            while j + 1 < len(r) and r[j + 1] - r[i] <= self.critical_difference:
                j += 1
            if j > i and not any(a <= i and j <= b for a, b in runs):
                runs.append((i, j))
        return tuple(runs)


def friedman_nemenyi(oriented: np.ndarray, systems: tuple[str, ...], *, alpha: float = 0.05) -> FriedmanResult:
    """Friedman test and Nemenyi CD from a systems x tasks matrix (higher is better).

    Examples
    --------
    >>> import numpy as np
    >>> m = np.array([[3.0, 3, 3, 3], [2, 2, 2, 1], [1, 1, 1, 2]])
    >>> res = friedman_nemenyi(m, ("a", "b", "c"))
    >>> res.average_ranks.tolist(), round(res.critical_difference, 4)
    ([1.0, 2.25, 2.75], 1.6572)
    """
    values = np.asarray(oriented, dtype=np.float64)
    if values.ndim != 2 or values.shape[0] != len(systems):
        raise InputError(f"expected a ({len(systems)}, tasks) matrix, got shape {values.shape}")
    complete = ~np.isnan(values).any(axis=0)
    values = values[:, complete]
    k, n = values.shape
    if k < 2 or n < 2:
        raise InputError(f"the Friedman test needs at least 2 systems and 2 complete tasks, got {k} and {n}")
    ranks = np.apply_along_axis(lambda col: stats.rankdata(-col, method="average"), 0, values)
    avg = ranks.mean(axis=1)
    chi2 = 12.0 * n / (k * (k + 1)) * (np.sum(avg ** 2) - k * (k + 1) ** 2 / 4.0)
    p = float(stats.chi2.sf(chi2, k - 1))
    q = float(stats.studentized_range.ppf(1.0 - alpha, k, np.inf)) / np.sqrt(2.0)
    cd = q * np.sqrt(k * (k + 1) / (6.0 * n))
    return FriedmanResult(tuple(systems), avg, float(chi2), p, float(cd), alpha, n)
