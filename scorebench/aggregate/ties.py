"""Tie classes: bands of systems that are not significantly different, by Holm-corrected paired tests.

The rule (stated on every board that shows bands):

1. Every pair of systems is compared by a paired test on the per-unit contributions —
   McNemar's test when the contributions are right/wrong (0/1), otherwise the paired t-test
   on the per-unit differences — and the p-values of all ``k (k - 1) / 2`` pairs are
   Holm-adjusted together (family-wise error rate ``alpha``).
2. Walking down the ranking, the best system opens band 1 and is its *top*. Each next system
   joins the current band when it is not significantly different from the band's top
   (adjusted p >= ``alpha``); otherwise it opens the next band and becomes its top.

So a band never contains a system significantly worse than the band's top, bands are
contiguous in the ranking order, and a new band starts exactly where the evidence says the
top of the previous band is better. Being in one band is *not* transitive equality: two
members of a band may differ significantly from each other (each is compared with the top).
"""

from __future__ import annotations

import numpy as np

from scorebench.core.errors import InputError
from scorebench.core.stats import holm, paired_t
from scorebench.analysis.stats_tests import mcnemar

__all__ = ["pairwise_p_values", "tie_classes", "TIE_RULE"]

TIE_RULE = ("band: walking down the ranking, a system joins the current band unless it is significantly "
            "different from the band's top (paired t-test per unit, McNemar for right/wrong outcomes; "
            "Holm-adjusted over all pairs at alpha {alpha:g}); otherwise it opens the next band")


def pairwise_p_values(units: np.ndarray) -> np.ndarray:
    """Holm-adjusted p-values of paired tests between all columns (systems) of ``units``.

    ``units`` has one row per unit and one column per system (complete, finite).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(200, 1)) + rng.normal(0, 0.1, (200, 3)) + [0.0, 0.0, 0.5]
    >>> (pairwise_p_values(x) < 0.05).astype(int).tolist()
    [[0, 0, 1], [0, 0, 1], [1, 1, 0]]
    """
    units = np.asarray(units, dtype=np.float64)
    if units.ndim != 2 or units.shape[0] < 2 or not np.isfinite(units).all():
        raise InputError(f"tie classes need a complete, finite units x systems matrix with at least 2 units; "
                         f"got shape {units.shape}")
    k = units.shape[1]
    binary = bool(np.isin(units, (0.0, 1.0)).all())
    i, j = np.triu_indices(k, 1)
    raw = np.array([mcnemar(units[:, a], units[:, b]).p_value if binary else paired_t(units[:, a] - units[:, b]).p_value
                    for a, b in zip(i, j)])
    out = np.zeros((k, k))
    adjusted = holm(raw)
    out[i, j] = adjusted
    out[j, i] = adjusted
    np.fill_diagonal(out, 1.0)
    return out


def tie_classes(order: np.ndarray, p_adjusted: np.ndarray, alpha: float = 0.05) -> np.ndarray:
    """Band (1 = best) of each system in ranking ``order`` (positions into ``p_adjusted``).

    Returns the bands in the order given (see the module docstring for the rule).

    Examples
    --------
    >>> p = np.array([[1.0, 0.3, 0.01, 0.2], [0.3, 1.0, 0.04, 0.5], [0.01, 0.04, 1.0, 0.6],
    ...               [0.2, 0.5, 0.6, 1.0]])
    >>> tie_classes(np.arange(4), p).tolist()  # 2 differs from the top (0); 3 does not differ from 2
    [1, 1, 2, 2]
    """
    order = np.asarray(order, dtype=np.int64)
    bands = np.empty(order.size, dtype=np.int64)
    band, top = 0, None
    for pos, s in enumerate(order):
        if top is None or p_adjusted[top, s] < alpha:
            band, top = band + 1, s
        bands[pos] = band
    return bands
