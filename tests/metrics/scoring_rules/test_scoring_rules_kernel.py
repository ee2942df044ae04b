"""Gaussian kernel scores of ensembles against scoringrules 0.10 (issue 19)."""

from __future__ import annotations

import numpy as np
import pytest

from scorebench.core.errors import InputError
from scorebench.metrics.scoring_rules.kernel import gksmv_ensemble, gksuv_ensemble

sr = pytest.importorskip("scoringrules")


@pytest.mark.parametrize("m", [1, 2, 9, 50])
@pytest.mark.parametrize("estimator,ref_name", [("standard", "nrg"), ("fair", "fair")])
def test_gksuv_matches_scoringrules(m, estimator, ref_name):
    if m == 1 and estimator == "fair":
        return
    rng = np.random.default_rng(m)
    obs = rng.normal(size=400) * 2
    ens = rng.normal(size=(400, m)) + 0.3
    ref = sr.gksuv_ensemble(obs, ens, estimator=ref_name, backend="numpy")
    np.testing.assert_allclose(gksuv_ensemble(obs, ens, estimator=estimator), ref, rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("m,d", [(1, 3), (5, 2), (20, 4)])
@pytest.mark.parametrize("estimator,ref_name", [("standard", "nrg"), ("fair", "fair")])
def test_gksmv_matches_scoringrules(m, d, estimator, ref_name):
    if m == 1 and estimator == "fair":
        return
    rng = np.random.default_rng(10 * m + d)
    obs = rng.normal(size=(300, d))
    ens = rng.normal(size=(300, m, d)) * 0.8
    ref = sr.gksmv_ensemble(obs, ens, estimator=ref_name, backend="numpy")
    np.testing.assert_allclose(gksmv_ensemble(obs, ens, estimator=estimator), ref, rtol=1e-10, atol=1e-13)


def test_univariate_is_multivariate_with_one_variable_and_bounded():
    rng = np.random.default_rng(0)
    obs, ens = rng.normal(size=30), rng.normal(size=(30, 6))
    uv = gksuv_ensemble(obs, ens)
    np.testing.assert_allclose(uv, gksmv_ensemble(obs[:, None], ens[:, :, None]), rtol=1e-12)
    assert (uv >= 0).all() and (uv <= 1).all()


def test_refusals():
    with pytest.raises(InputError):
        gksuv_ensemble(0.0, [np.inf, 1.0])
    with pytest.raises(InputError, match="at least 2"):
        gksuv_ensemble(0.0, [1.0], estimator="fair")
