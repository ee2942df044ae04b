"""Threshold-weighted energy and variogram scores against scoringrules 0.10 (issue 19)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from scorebench.core.errors import InputError
from scorebench.metrics.scoring_rules.multivariate import energy_score
from scorebench.metrics.scoring_rules.weighted_mv import twenergy_score, twvariogram_score

sr = pytest.importorskip("scoringrules")

WINDOWS = [(-math.inf, math.inf), (0.0, math.inf), (-0.5, 0.8)]


@pytest.mark.parametrize("a,b", WINDOWS)
@pytest.mark.parametrize("m,d", [(1, 2), (6, 3), (25, 5)])
def test_twenergy_matches_scoringrules(a, b, m, d):
    rng = np.random.default_rng(m * d)
    obs, ens = rng.normal(size=(200, d)), rng.normal(size=(200, m, d)) * 1.2
    ref = sr.twenergy_score(obs, ens, lambda z: np.clip(z, a, b), backend="numpy")
    np.testing.assert_allclose(twenergy_score(obs, ens, a=a, b=b), ref, rtol=1e-10, atol=1e-12)
    if m > 1:
        ref = sr.twenergy_score(obs, ens, lambda z: np.clip(z, a, b), estimator="fair", backend="numpy")
        np.testing.assert_allclose(twenergy_score(obs, ens, a=a, b=b, estimator="fair"), ref, rtol=1e-10,
                                   atol=1e-12)


@pytest.mark.parametrize("a,b", WINDOWS)
@pytest.mark.parametrize("p", [0.5, 1.0])
def test_twvariogram_matches_scoringrules(a, b, p):
    rng = np.random.default_rng(int(p * 10))
    obs, ens = rng.normal(size=(150, 4)), rng.normal(size=(150, 8, 4))
    ref = sr.twvariogram_score(obs, ens, lambda z: np.clip(z, a, b), p=p, backend="numpy")
    np.testing.assert_allclose(twvariogram_score(obs, ens, a=a, b=b, p=p), ref, rtol=1e-10, atol=1e-12)


def test_unweighted_limit_and_refusal():
    rng = np.random.default_rng(1)
    obs, ens = rng.normal(size=(20, 3)), rng.normal(size=(20, 5, 3))
    np.testing.assert_allclose(twenergy_score(obs, ens), energy_score(obs, ens), rtol=1e-14)
    with pytest.raises(InputError, match="a < b"):
        twenergy_score(obs, ens, a=1.0, b=1.0)
