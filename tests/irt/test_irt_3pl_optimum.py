"""3PL without a prior on guessing reaches the marginal-likelihood optimum; converged is honest.

Reference optimum: direct L-BFGS-B (SciPy) on the same marginal likelihood (a fixed fine
trapezoid grid, c bounded to [0, 0.95]); fixtures: LSAT-7 and girth's 3PL regression test.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize

import scorebench.irt as irt
import scorebench.irt.em as em
from scorebench.irt.quadrature import Grid, ResponseOps, estep

REF = Path(__file__).resolve().parents[2].parent / "shared" / "reference" / "irt"


def _direct_optimum(y: np.ndarray) -> tuple[float, np.ndarray]:
    """Maximum of the 3PL marginal log-likelihood by L-BFGS-B, from a neutral start."""
    j = y.shape[1]
    th = np.linspace(-7.0, 7.0, 281)
    grid, ops = Grid(th, th[1] - th[0]), ResponseOps(y)

    def nll(x):
        params = np.column_stack([x[:j], x[j:2 * j], x[2 * j:], np.ones(j)])
        return -estep(ops, params, grid, counts=False).loglik

    x0 = np.r_[np.ones(j), np.zeros(j), np.full(j, 0.1)]
    res = minimize(nll, x0, method="L-BFGS-B", bounds=[(None, None)] * 2 * j + [(0.0, 0.95)] * j,
                   options={"maxiter": 5000, "ftol": 1e-15, "gtol": 1e-9})
    return -res.fun, res.x.reshape(3, j).T


def _girth_fixture() -> np.ndarray:
    girth = pytest.importorskip("girth.synthetic")
    rng = np.random.default_rng(783162340587963094862)  # girth's test_threepl_regression_mml set-up
    difficulty = np.linspace(-1.5, 1.5, 5)
    discrimination = rng.uniform(0.5, 1.5, 5)
    thetas = rng.standard_normal(600)
    guessing = rng.uniform(0, 0.3, 5)
    data = girth.create_synthetic_irt_dichotomous(difficulty, discrimination, thetas, guessing=guessing, seed=rng)
    return data.T.astype(float)


def _lsat7() -> np.ndarray:
    path = REF / "lsat7_expanded_1000x5.csv"
    if not path.exists():
        pytest.skip("reference data ../shared/reference/irt is absent")
    return pd.read_csv(path).to_numpy(np.float64)


@pytest.mark.parametrize("data", [_lsat7, _girth_fixture], ids=["lsat7", "girth"])
def test_3pl_without_guessing_prior_reaches_the_optimum(data):
    y = data()
    best, params = _direct_optimum(y)
    fit = irt.fit(y, "3pl", priors={"c": None}, warn=False)
    assert fit.converged, fit.message
    assert fit.loglik == pytest.approx(best, abs=1e-3)  # was -2658.069 vs -2658.054 on LSAT-7
    np.testing.assert_allclose(fit.params[:, :3], params, atol=2e-3)  # flat likelihood: 2e-3 in a, d, c


def test_girth_published_3pl_estimates():
    fit = irt.fit(_girth_fixture(), "3pl", priors={"c": None}, warn=False)
    # girth's own regression values (tests/unidimensional/test_threepl.py), its tolerance 1e-2
    np.testing.assert_allclose(fit.items["a"], [0.500858, 0.896211, 0.673024, 0.474641, 1.148911], atol=1e-2)
    np.testing.assert_allclose(fit.items["b"], [-2.522691, -1.291617, -0.2958, -0.355891, 1.186779], atol=1e-2)
    np.testing.assert_allclose(fit.items["c"], [0, 0, 0, 0, 0.18262], atol=1e-2)


def test_converged_means_small_projected_gradient(monkeypatch):
    """Without the active set the M-step stalls; EM must then not claim convergence."""
    y = _lsat7()
    best, _ = _direct_optimum(y)
    monkeypatch.setattr(em, "_at_bound", lambda params, grad, idx: np.zeros(grad.shape, dtype=bool))
    fit = irt.fit(y, "3pl", priors={"c": None}, warn=False, max_iter=400)
    assert not fit.converged or fit.loglik == pytest.approx(best, abs=1e-3)
    if not fit.converged:
        assert "projected gradient" in fit.message
