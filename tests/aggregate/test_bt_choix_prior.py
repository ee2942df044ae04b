"""Bradley-Terry ``prior=λ`` equals choix's ``alpha=λ/2`` (issue 13, item 14)."""

from __future__ import annotations

import numpy as np
import pytest

from scorebench.aggregate.pairwise import bt_fit

choix = pytest.importorskip("choix")


@pytest.mark.parametrize("lam", [0.05, 0.5, 3.0])
def test_prior_is_choix_alpha_half(lam):
    rng = np.random.default_rng(int(lam * 100))
    n = 6
    W = rng.integers(0, 7, size=(n, n)).astype(float)
    np.fill_diagonal(W, 0.0)
    W[0, :] = 0.0  # system 0 never wins: the ML estimate does not exist, the MAP one does
    data = [(i, j) for i in range(n) for j in range(n) for _ in range(int(W[i, j]))]
    ours = bt_fit(W, prior=lam, tol=1e-12)
    ref = choix.opt_pairwise(n, data, alpha=lam / 2, tol=1e-12)
    np.testing.assert_allclose(ours, ref, atol=1e-6)
    wrong = choix.opt_pairwise(n, data, alpha=lam, tol=1e-12)
    assert np.abs(ours - wrong).max() > 1e-3
