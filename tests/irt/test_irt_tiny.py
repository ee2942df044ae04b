"""tinyBenchmarks' IRT, p-IRT and gp-IRT estimators (Maia Polo et al., 2024) against their definitions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scorebench import irt
from scorebench.core.errors import InputError
from scorebench.irt.models import prob
from scorebench.irt.tiny import ability_from_seen, gp_weight, gpirt_estimate, irt_estimate, pirt_estimate


@pytest.fixture(scope="module")
def world():
    rng = np.random.default_rng(0)
    n_train, n_test, J = 60, 25, 100
    theta = rng.normal(size=n_train + n_test)
    a, b = np.exp(rng.normal(0, 0.4, J)), rng.normal(0, 1.0, J)
    y = (rng.uniform(size=(theta.size, J)) < 1 / (1 + np.exp(-a * (theta[:, None] - b)))).astype(float)
    train = pd.DataFrame(y[:n_train], columns=[f"q{j}" for j in range(J)])
    fit = irt.fit(train, "2pl", warn=False)
    return fit.params, y[n_train:], rng


def test_estimators_follow_the_definitions(world):
    params, test, rng = world
    seen = np.sort(rng.choice(100, 30, replace=False))
    answers = test[:, seen]
    theta = ability_from_seen(params, answers, seen)
    P = prob(params, theta).T  # systems x items
    unseen = np.setdiff1d(np.arange(100), seen)
    np.testing.assert_allclose(irt_estimate(params, answers, seen), P.mean(axis=1), rtol=1e-12)
    expected = (answers.sum(axis=1) + P[:, unseen].sum(axis=1)) / 100  # lambda = |S|/|J|
    np.testing.assert_allclose(pirt_estimate(params, answers, seen), expected, rtol=1e-12)
    direct = answers.mean(axis=1)
    np.testing.assert_allclose(gpirt_estimate(params, answers, seen, direct=direct, lam=0.0), expected)
    np.testing.assert_allclose(gpirt_estimate(params, answers, seen, direct=direct, lam=1.0), direct)
    np.testing.assert_allclose(gpirt_estimate(params, answers, seen, direct=direct, lam=0.3),
                               0.3 * direct + 0.7 * expected)
    full = np.arange(100)
    np.testing.assert_allclose(pirt_estimate(params, test, full), test.mean(axis=1))  # every item seen
    mask = np.zeros(100, dtype=bool)
    mask[seen] = True
    np.testing.assert_allclose(pirt_estimate(params, answers, mask), expected)


def test_pirt_uses_the_observed_answers_and_beats_irt_at_half_the_items(world):
    params, test, rng = world
    truth = test.mean(axis=1)
    err = {"irt": [], "pirt": [], "random": []}
    for _ in range(20):
        seen = np.sort(rng.choice(100, 50, replace=False))
        answers = test[:, seen]
        err["irt"].append(np.abs(irt_estimate(params, answers, seen) - truth).mean())
        err["pirt"].append(np.abs(pirt_estimate(params, answers, seen) - truth).mean())
        err["random"].append(np.abs(answers.mean(axis=1) - truth).mean())
    mae = {k: float(np.mean(v)) for k, v in err.items()}
    assert mae["pirt"] < mae["irt"] and mae["pirt"] < mae["random"], mae


def test_gp_weight_and_errors(world):
    params, test, _ = world
    assert gp_weight(0.0, 1.0) == 0.0 and gp_weight(1.0, 0.0) == 1.0
    with pytest.raises(InputError, match="gp_weight"):
        gp_weight(-1.0, 1.0)
    with pytest.raises(InputError, match="lam"):
        gpirt_estimate(params, test[:, :2], [0, 1], direct=test[:, :2].mean(axis=1), lam=1.5)
    with pytest.raises(InputError, match="answers"):
        pirt_estimate(params, test[:, :3], [0, 1])
    with pytest.raises(InputError, match="repeated"):
        pirt_estimate(params, test[:, :2], [0, 0])
    with pytest.raises(InputError, match="0/1"):
        pirt_estimate(params, np.full((2, 2), 0.5), [0, 1])
    with pytest.raises(InputError, match=r"\(J, 4\)"):
        irt_estimate(np.ones((3, 2)), [[1]], [0])
