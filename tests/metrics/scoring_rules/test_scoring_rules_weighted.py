"""Outcome-weighted and vertically re-scaled CRPS of ensembles against scoringrules (issue 19)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from scorebench.core.errors import InputError
from scorebench.metrics.scoring_rules import crps_ensemble
from scorebench.metrics.scoring_rules.weighted import owcrps_ensemble, vrcrps_ensemble

sr = pytest.importorskip("scoringrules")

WINDOWS = [(-math.inf, math.inf), (0.0, math.inf), (-math.inf, 0.3), (-0.5, 1.0), (0.0, 0.0 + 1e-9 + 0.7)]


@pytest.mark.parametrize("a,b", WINDOWS)
@pytest.mark.parametrize("m", [1, 2, 7, 40])
def test_vrcrps_matches_scoringrules(a, b, m):
    rng = np.random.default_rng(m)
    obs = rng.normal(size=300)
    ens = rng.normal(size=(300, m)) * 1.3 + 0.2
    ens[:5, 0] = a if np.isfinite(a) else 0.0  # members on the window edge
    ref = sr.vrcrps_ensemble(obs, ens, a, b, backend="numpy")
    np.testing.assert_allclose(vrcrps_ensemble(obs, ens, a=a, b=b), ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("a,b", WINDOWS)
@pytest.mark.parametrize("m", [1, 2, 7, 40])
def test_owcrps_matches_scoringrules(a, b, m):
    rng = np.random.default_rng(10 + m)
    obs = rng.normal(size=300)
    ens = rng.normal(size=(300, m)) * 1.3 + 0.2
    w = ((ens >= a) & (ens <= b)).any(axis=1)
    obs, ens = obs[w], ens[w]  # scoringrules gives NaN where no member is inside
    ref = sr.owcrps_ensemble(obs, ens, a, b, backend="numpy")
    np.testing.assert_allclose(owcrps_ensemble(obs, ens, a=a, b=b), ref, rtol=1e-10, atol=1e-12)


def test_unweighted_limits_are_the_crps():
    rng = np.random.default_rng(0)
    obs, ens = rng.normal(size=50), rng.normal(size=(50, 9))
    np.testing.assert_allclose(owcrps_ensemble(obs, ens), crps_ensemble(obs, ens), rtol=1e-12)
    np.testing.assert_allclose(vrcrps_ensemble(obs, ens), crps_ensemble(obs, ens), rtol=1e-12, atol=1e-14)


def test_owcrps_empty_window():
    # Observation outside and no member inside: 0 (scoringrules: NaN); inside with none: error.
    assert float(owcrps_ensemble(5.0, [0.0, 1.0], a=2.0, b=3.0)) == 0.0
    with pytest.raises(InputError, match="no ensemble member"):
        owcrps_ensemble([2.5, 0.0], [[0.0, 1.0], [0.0, 1.0]], a=2.0, b=3.0)


def test_bad_thresholds():
    with pytest.raises(InputError, match="a < b"):
        vrcrps_ensemble(0.0, [0.0, 1.0], a=1.0, b=0.0)
