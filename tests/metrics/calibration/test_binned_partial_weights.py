"""Weighted per-bin sums of the binned calibration metrics (the bootstrap path) against
the unweighted sums of the rows repeated by their weights."""

import numpy as np

from scorebench.metrics.calibration.binned import binned_partial


def test_weighted_partial_equals_repeated_rows() -> None:
    rng = np.random.default_rng(3)
    n, rounds, bins = 2_000, 7, 15
    p = rng.uniform(size=n)
    p[:10] = [0.0, 1.0, 1 / 15, 2 / 15, 0.5, 0.5, 14 / 15, 1e-12, 1 - 1e-12, 0.2]  # bin edges and ends
    y = (rng.uniform(size=n) < p).astype(np.float64)
    weights = np.stack([np.bincount(rng.integers(0, n, n), minlength=n) for _ in range(rounds)]).astype(np.float64)
    got = binned_partial(y, p, weights, bins)
    assert got.shape == (rounds, 3 * bins)
    for r in range(rounds):
        rows = np.repeat(np.arange(n), weights[r].astype(np.int64))
        np.testing.assert_allclose(got[r], binned_partial(y[rows], p[rows], None, bins), rtol=1e-12, atol=1e-9)


def test_weighted_partial_empty_bins_and_zero_weights() -> None:
    p = np.array([0.05, 0.06, 0.95])
    y = np.array([0.0, 1.0, 1.0])
    weights = np.array([[0.0, 0.0, 0.0], [2.0, 0.0, 1.0]])
    got = binned_partial(y, p, weights, 10)
    np.testing.assert_array_equal(got[0], np.zeros(30))
    expected = np.zeros(30)
    expected[[0, 9]] = [2.0, 1.0]           # counts
    expected[[10, 19]] = [0.1, 0.95]        # sums of p
    expected[[20, 29]] = [0.0, 1.0]         # sums of y
    np.testing.assert_allclose(got[1], expected, rtol=1e-15)
