"""Error-spread score against scoringrules 0.10 (issue 19)."""

from __future__ import annotations

import numpy as np
import pytest

from scorebench.core.errors import InputError
from scorebench.metrics.scoring_rules.error_spread import error_spread_score

sr = pytest.importorskip("scoringrules")


@pytest.mark.parametrize("m", [3, 4, 11, 60])
def test_matches_scoringrules(m):
    rng = np.random.default_rng(m)
    obs = rng.normal(size=500) * 1.5
    ens = rng.gamma(2.0, size=(500, m)) - 1.0  # skewed members
    ref = sr.error_spread_score(obs, ens, backend="numpy")
    np.testing.assert_allclose(error_spread_score(obs, ens), ref, rtol=1e-10, atol=1e-13)


def test_refusals():
    with pytest.raises(InputError, match="at least 3"):
        error_spread_score(0.0, [0.0, 1.0])
    with pytest.raises(InputError, match="zero spread"):
        error_spread_score([0.0, 1.0], [[1.0, 2.0, 3.0], [2.0, 2.0, 2.0]])
