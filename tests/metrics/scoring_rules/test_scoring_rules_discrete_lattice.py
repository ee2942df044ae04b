"""The lattice form of the binomial and hypergeometric CRPS against 40-digit sums of the
definition, in the tails and at large supports (log-factorial tables lose about
eps * log(n!) in the mass: ~1e-12 relative at n = 2000)."""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest

from scorebench.metrics.scoring_rules import crps_binomial, crps_hypergeometric

mp.mp.dps = 40


def _lattice_reference(pmf: dict, y: float, top: int) -> float:
    y = mp.mpf(y)
    near = sum(p * abs(x - y) for x, p in pmf.items())
    cdf, spread = mp.mpf(0), mp.mpf(0)
    for k in range(top):
        cdf += pmf.get(k, 0)
        spread += cdf * (1 - cdf)
    return float(near - spread)


@pytest.mark.parametrize("y,n,p", [(300.0, 500, 1e-6), (3.0, 1000, 0.999), (2.5, 40, 0.3), (-5.0, 10, 0.5),
                                   (1e6, 30, 0.2), (7.3, 2000, 0.004), (2.0, 7, 0.0), (2.0, 7, 1.0)])
def test_binomial_matches_the_definition(y, n, p):
    pm = mp.mpf(p)
    pmf = {x: mp.binomial(n, x) * pm ** x * (1 - pm) ** (n - x) for x in range(n + 1)}
    assert float(crps_binomial(y, n, p)) == pytest.approx(_lattice_reference(pmf, y, n), rel=1e-11)


@pytest.mark.parametrize("y,m,n,k", [(5.0, 7, 13, 12), (0.0, 100, 3, 50), (40.0, 60, 1000, 200),
                                     (3.5, 5, 5, 10), (9.0, 4, 0, 4)])
def test_hypergeometric_matches_the_definition(y, m, n, k):
    xs = range(max(0, k - n), min(k, m) + 1)
    pmf = {x: mp.binomial(m, x) * mp.binomial(n, k - x) / mp.binomial(m + n, k) for x in xs}
    assert float(crps_hypergeometric(y, m, n, k)) == pytest.approx(_lattice_reference(pmf, y, k), rel=1e-11)


def test_rows_of_different_support_sizes_do_not_interfere():
    # the grid is as wide as the largest support; narrower rows see exact zeros beyond theirs
    y, n, p = np.array([1.0, 30.0, 0.5]), np.array([2, 60, 0]), np.array([0.3, 0.5, 0.9])
    together = crps_binomial(y, n, p)
    alone = [float(crps_binomial(a, b, c)) for a, b, c in zip(y, n, p)]
    np.testing.assert_allclose(together, alone, rtol=1e-14)
    assert together[2] == 0.5  # n = 0: all mass on 0
