"""Banded E-step products (scorebench.irt.bands) give the full E-step's numbers."""

import numpy as np
import pytest

from scorebench import irt
from scorebench.irt import quadrature
from scorebench.irt.bands import banded_estep, concave, find_bands
from scorebench.irt.quadrature import Grid, ResponseOps, estep


def _data(n=600, j=500, seed=0, missing=0.0):
    rng = np.random.default_rng(seed)
    params = np.column_stack([rng.uniform(0.4, 2.0, j), rng.normal(0, 1, j), np.zeros(j), np.ones(j)])
    theta = rng.normal(0, 1.2, n)
    y = (rng.random((n, j)) < 1 / (1 + np.exp(-(theta[:, None] * params[:, 0] + params[:, 1])))).astype(float)
    y[0], y[1] = 1.0, 0.0           # perfect and zero scores: windows at the ends of the grid
    if missing:
        y[rng.random(y.shape) < missing] = np.nan
        y[2] = np.nan               # a system with no answers: its posterior is the prior
    return params, y


def _close(full, banded):
    np.testing.assert_allclose(banded.loglik_person, full.loglik_person, rtol=1e-12)
    np.testing.assert_allclose(banded.post, full.post, rtol=1e-9, atol=1e-15)
    for a, b in ((full.r, banded.r), (full.n, banded.n)):
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-13 * a.max())


GRID = Grid(np.linspace(-6.0, 6.0, 241), 0.05)


@pytest.mark.parametrize("missing", [0.0, 0.4])
def test_banded_estep_matches_full(missing):
    params, y = _data(missing=missing)
    ops = ResponseOps(y)
    bands = find_bands(ops, params, GRID, block=64)
    assert bands.fraction < 0.6  # the test exercises the banded path, not the fallback
    _close(estep(ops, params, GRID, banded=False), estep(ops, params, GRID, banded=True))


def test_banded_estep_int8_chunked_storage(monkeypatch):
    params, y = _data(missing=0.2)
    monkeypatch.setattr(quadrature, "_DENSE_LIMIT", 1000)
    monkeypatch.setattr(quadrature, "_CHUNK", 20_000)
    ops = ResponseOps(y)
    assert ops.y.dtype == np.int8
    full = estep(ops, params, GRID, banded=False)
    _close(full, estep(ops, params, GRID, banded=True))
    dense = estep(ResponseOps(y[:, :]), params, GRID, banded=False)
    np.testing.assert_allclose(full.r, dense.r, rtol=1e-12)


def test_excluded_cells_are_negligible():
    params, y = _data(seed=3)
    ops = ResponseOps(y)
    full = estep(ops, params, GRID, banded=False)
    drop = 30.0
    bands = find_bands(ops, params, GRID, drop=drop, block=1)
    inside = np.zeros(full.post.shape, dtype=bool)
    for rows, lo, hi in bands.blocks:
        inside[rows, lo:hi] = True
    assert (~inside).mean() > 0.5
    worst = np.where(inside, 0.0, full.post).max(axis=1) / full.post.max(axis=1)
    assert worst.max() < np.exp(-drop)
    # and the windows are tight: the most probable excluded node is not far below the threshold
    assert worst.max() > np.exp(-drop - 200)


def test_asymptotes_use_the_full_products():
    params, y = _data()
    params[:, 2] = 0.2  # 3PL: the log-posterior need not be concave
    assert not concave(params)
    ops = ResponseOps(y)
    full, banded = estep(ops, params, GRID, banded=False), estep(ops, params, GRID, banded=True)
    np.testing.assert_array_equal(banded.post, full.post)
    np.testing.assert_array_equal(banded.r, full.r)


def test_scoring_without_counts():
    params, y = _data(missing=0.3)
    ops = ResponseOps(y)
    full = estep(ops, params, GRID, counts=False, banded=False)
    banded = estep(ops, params, GRID, counts=False, banded=True)
    np.testing.assert_allclose(banded.post @ GRID.theta, full.post @ GRID.theta, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("model,missing", [("2pl", 0.0), ("2pl", 0.3), ("1pl", 0.0)])
def test_fit_agrees_with_full_products(monkeypatch, model, missing):
    _, y = _data(n=500, j=300, seed=5, missing=missing)
    monkeypatch.setattr(quadrature, "BAND_MIN_CELLS", float("inf"))
    full = irt.fit(y, model, warn=False)
    monkeypatch.setattr(quadrature, "BAND_MIN_CELLS", 0.0)
    monkeypatch.setattr(quadrature, "MAX_FRACTION", 1.0)
    used = []
    monkeypatch.setattr(quadrature, "banded_estep", lambda *a, **k: used.append(1) or banded_estep(*a, **k))
    banded = irt.fit(y, model, warn=False)
    assert len(used) >= banded.n_iter
    assert banded.n_iter == full.n_iter and banded.converged
    assert banded.loglik == pytest.approx(full.loglik, rel=1e-10)
    for col in ("a", "b", "se_a", "se_b"):
        np.testing.assert_allclose(banded.items[col].to_numpy(float), full.items[col].to_numpy(float),
                                   rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(banded.abilities["theta"].to_numpy(float), full.abilities["theta"].to_numpy(float),
                               rtol=1e-7, atol=1e-9)
