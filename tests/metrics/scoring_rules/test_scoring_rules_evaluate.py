"""End to end: scoring rules through scorebench.evaluate on tables of each kind."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import scorebench
from scorebench.metrics import scoring_rules as S


@pytest.fixture
def ensemble_table():
    gen = np.random.default_rng(5)
    n, members = 300, 8
    frames = []
    for system, (shift, spread) in {"good": (0.0, 1.0), "biased": (1.0, 1.0), "tiny": (0.0, 0.2)}.items():
        y = gen.normal(size=n)
        ens = shift + spread * gen.normal(size=(n, members))
        frames.append(pd.DataFrame({"system": system, "id": np.arange(n), "y": y,
                                    **{f"m{j}": ens[:, j] for j in range(members)}}))
    return pd.concat(frames, ignore_index=True)


def test_evaluate_crps_ensemble_both_estimators(ensemble_table):
    members = [f"m{j}" for j in range(8)]
    for estimator in ("standard", "fair"):
        scores = scorebench.evaluate(ensemble_table, scorebench.metric("crps_ensemble", estimator=estimator),
                                     n_boot=200, seed=1)
        assert set(scores["system"]) == {"good", "biased", "tiny"}
        for system, group in ensemble_table.groupby("system"):
            row = scores[scores["system"] == system].iloc[0]
            expected = S.crps_ensemble(group["y"].to_numpy(), group[members].to_numpy(),
                                       estimator=estimator).mean()
            assert row["value"] == pytest.approx(expected, rel=1e-12)
            assert row["ci_low"] <= row["value"] <= row["ci_high"]
        assert scores.sort_values("value")["system"].iloc[0] == "good"


def test_evaluate_parametric_and_quantile_tables():
    gen = np.random.default_rng(9)
    y = gen.normal(size=200)
    par = pd.DataFrame({"system": "normal", "y": y, "mu": 0.0, "sigma": 1.0})
    scores = scorebench.evaluate(par, ["crps_normal", "log_score_normal", "dawid_sebastiani_score"], n_boot=0)
    got = dict(zip(scores["metric"], scores["value"]))
    assert got["crps_normal"] == pytest.approx(S.crps_normal(y, 0.0, 1.0).mean())
    assert got["log_score_normal"] == pytest.approx(S.log_score_normal(y, 0.0, 1.0).mean())

    levels = [0.1, 0.5, 0.9]
    q = np.quantile(gen.normal(size=(200, 50)), levels, axis=1).T
    qt = pd.DataFrame({"system": "s", "y": y, "q0.1": q[:, 0], "q0.5": q[:, 1], "q0.9": q[:, 2]})
    scores = scorebench.evaluate(qt, ["quantile_score", "weighted_interval_score"], n_boot=0)
    got = dict(zip(scores["metric"], scores["value"]))
    assert got["weighted_interval_score"] == pytest.approx(2 * got["quantile_score"])


def test_evaluate_reports_bad_parameters_as_input_errors():
    bad = pd.DataFrame({"system": "s", "y": [0.0, 1.0], "mu": 0.0, "sigma": [1.0, -1.0]})
    with pytest.raises(scorebench.InputError, match="sigma"):
        scorebench.evaluate(bad, "crps_normal", n_boot=0)
