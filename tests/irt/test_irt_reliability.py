"""Empirical reliability: hand value, squared correlation with the truth for EAPs, errors."""

from __future__ import annotations

import numpy as np
import pytest

import scorebench.irt as irt
from scorebench.core.errors import InputError


def test_hand_value():
    # mirt's empirical_rxx: R's var (n - 1) = 1, mean se^2 = 1/4: 1 / (1 + 1/4)
    assert irt.empirical_reliability([-1.0, 0.0, 1.0], [0.5, 0.5, 0.5]) == pytest.approx(0.8, rel=1e-15)


def test_eap_reliability_estimates_squared_correlation_with_truth():
    rng = np.random.default_rng(3)
    n, j = 3000, 15
    a, b = rng.uniform(0.7, 2.0, j), rng.normal(size=j)
    theta = rng.normal(size=n)
    y = (rng.random((n, j)) < 1 / (1 + np.exp(-a * (theta[:, None] - b)))).astype(float)
    fit = irt.fit(y, "2pl", warn=False)
    rel = irt.empirical_reliability(fit.abilities["theta"], fit.abilities["se"])
    r2 = np.corrcoef(fit.abilities["theta"], theta)[0, 1] ** 2
    assert 0.5 < rel < 0.95
    assert rel == pytest.approx(r2, abs=0.03)  # sampling error of r^2 at N = 3,000 is about 0.01


def test_bad_input_is_refused():
    with pytest.raises(InputError, match="same length"):
        irt.empirical_reliability([0.0, 1.0], [0.1])
    with pytest.raises(InputError, match="se"):
        irt.empirical_reliability([0.0, 1.0], [0.1, np.nan])
    with pytest.raises(InputError, match=">= 0"):
        irt.empirical_reliability([0.0, 1.0], [0.1, -0.1])
