"""The shifted-shape incomplete gamma/beta helpers equal SciPy's direct evaluation to 1e-13
relative (the module docstring says why not ~1e-15) on a grid that covers the cancelling region (small x), where they fall back to it."""

from __future__ import annotations

import numpy as np
from scipy import special

from scorebench.metrics.scoring_rules._incomplete import betainc_next, gammainc_next


def test_gammainc_next_matches_scipy_everywhere():
    a = np.geomspace(1e-3, 50, 40)[:, None]
    x = np.concatenate([[0.0], np.geomspace(1e-8, 200, 60)])[None, :]
    a, x = np.broadcast_arrays(a, x)
    want = special.gammainc(a + 1, x)
    got = gammainc_next(a, x, special.gammainc(a, x))
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-300)


def test_betainc_next_matches_scipy_everywhere():
    g = np.random.default_rng(0)
    a, b = np.exp(g.uniform(-7, 4, 3000)), np.exp(g.uniform(-7, 4, 3000))
    x = np.concatenate([[0.0, 1.0], np.exp(g.uniform(-20, 0, 2998))])
    want = special.betainc(a + 1, b, x)
    got = betainc_next(a, b, x, special.betainc(a, b, x))
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-300)
    assert np.asarray(betainc_next(1.0, 2.0, 0.5, special.betainc(1.0, 2.0, 0.5))).shape == ()



def test_beta_and_csg0_keep_the_batch_shape():
    # a 2-d batch goes through the shifted-shape helpers and the beta Gini ratio unflattened
    from scorebench.metrics.scoring_rules import crps_beta, crps_csg0
    y = np.random.default_rng(2).uniform(size=(3, 4))
    flat = crps_beta(y.ravel(), 2.0, 3.0)
    np.testing.assert_allclose(crps_beta(y, np.full((3, 4), 2.0), 3.0), flat.reshape(3, 4), rtol=1e-14)
    np.testing.assert_allclose(crps_csg0(y, np.full((3, 4), 0.7), 2.0, 0.1),
                               crps_csg0(y.ravel(), 0.7, 2.0, 0.1).reshape(3, 4), rtol=1e-14)
