"""Options on existing scoring rules (issue 19): custom weights of the weighted interval score."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import scorebench
from scorebench.metrics import scoring_rules as S


def test_wis_custom_weights_match_the_definition():
    g = np.random.default_rng(0)
    y = g.normal(size=40)
    q = np.sort(g.normal(size=(40, 5)), axis=1)
    lv = [0.05, 0.25, 0.5, 0.75, 0.95]
    w, w0 = np.array([0.3, 1.7]), 0.8
    ref = (w0 * np.abs(y - q[:, 2]) + w[0] * S.interval_score(y, q[:, 0], q[:, 4], alpha=0.1)
           + w[1] * S.interval_score(y, q[:, 1], q[:, 3], alpha=0.5)) / 2.5
    np.testing.assert_allclose(S.weighted_interval_score(y, q, lv, weights=w, weight_median=w0), ref, rtol=1e-12)
    # The canonical weights alpha/2 and 1/2 give the default score.
    np.testing.assert_allclose(S.weighted_interval_score(y, q, lv, weights=[0.05, 0.25], weight_median=0.5),
                               S.weighted_interval_score(y, q, lv), rtol=1e-14)
    # Without a median: 1/K normaliser.
    ref2 = (w[0] * S.interval_score(y, q[:, 0], q[:, 4], alpha=0.1)
            + w[1] * S.interval_score(y, q[:, 1], q[:, 3], alpha=0.5)) / 2
    got = S.weighted_interval_score(y, q[:, [0, 1, 3, 4]], [0.05, 0.25, 0.75, 0.95], weights=w)
    np.testing.assert_allclose(got, ref2, rtol=1e-12)


def test_wis_weights_through_a_table_and_errors():
    table = pd.DataFrame({"system": "s", "y": [0.0, 1.0], "q0.25": [-1.0, 0.0], "q0.5": [0.0, 0.5],
                          "q0.75": [1.0, 2.0]})
    got = scorebench.evaluate(table, scorebench.metric("weighted_interval_score", weights=[1.0]), n_boot=0)
    expected = S.weighted_interval_score(table["y"], table[["q0.25", "q0.5", "q0.75"]].to_numpy(),
                                         [0.25, 0.5, 0.75], weights=[1.0]).mean()
    assert got["value"].iloc[0] == pytest.approx(expected)
    with pytest.raises(scorebench.InputError, match="weights"):
        S.weighted_interval_score([0.0], [[-1.0, 0.0, 1.0]], [0.25, 0.5, 0.75], weights=[1.0, 2.0])
    with pytest.raises(scorebench.InputError, match="weights"):
        S.weighted_interval_score([0.0], [[-1.0, 0.0, 1.0]], [0.25, 0.5, 0.75], weights=[-1.0])
    with pytest.raises(scorebench.InputError, match="weight_median"):
        S.weighted_interval_score([0.0], [[-1.0, 1.0]], [0.25, 0.75], weight_median=0.5)


def test_crps_ensemble_omits_nan_members_like_properscoring():
    import properscoring as ps

    g = np.random.default_rng(1)
    y = g.normal(size=300)
    ens = g.normal(size=(300, 12))
    ens[g.uniform(size=ens.shape) < 0.2] = np.nan
    ens[5] = np.nan  # no members left: NaN, as properscoring
    got = S.crps_ensemble(y, ens, nan_policy="omit")
    ref = ps.crps_ensemble(y, ens)
    assert np.isnan(got[5]) and np.isnan(ref[5])
    np.testing.assert_allclose(np.delete(got, 5), np.delete(ref, 5), rtol=1e-12)
    # Equal to scoring the compressed rows directly, with either estimator.
    row = ens[0][~np.isnan(ens[0])]
    for est in ("standard", "fair"):
        assert S.crps_ensemble(y[0], ens[0], estimator=est, nan_policy="omit") == pytest.approx(
            float(S.crps_ensemble(y[0], row, estimator=est)), rel=1e-14)
    # The default still propagates.
    assert np.isnan(S.crps_ensemble(y, ens)).sum() > 200
    with pytest.raises(scorebench.InputError, match="nan_policy"):
        S.crps_ensemble(y, ens, nan_policy="drop")


def test_crps_ensemble_nan_policy_through_a_table():
    table = pd.DataFrame({"system": "s", "y": [0.0, 1.0], "m0": [-1.0, 0.0], "m1": [np.nan, 2.0],
                          "m2": [1.0, np.nan]})
    m = scorebench.metric("crps_ensemble(nan_policy=omit)")
    got = scorebench.evaluate(table, m, n_boot=0, nan_policy="propagate")
    expected = np.mean([S.crps_ensemble(0.0, [-1.0, 1.0]), S.crps_ensemble(1.0, [0.0, 2.0])])
    assert got["value"].iloc[0] == pytest.approx(expected)
