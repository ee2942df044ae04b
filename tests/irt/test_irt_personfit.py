"""Person fit lz: hand-computed values, missing answers, N(0, 1) under the model, errors."""

from __future__ import annotations

import numpy as np
import pytest

import scorebench.irt as irt
from scorebench.core.errors import InputError

ITEMS = np.array([[1.0, 2.0, 0.0, 1.0], [1.0, 0.0, 0.0, 1.0], [1.0, -2.0, 0.0, 1.0]])


def _by_hand(y, p):
    l0 = np.sum(y * np.log(p) + (1 - y) * np.log(1 - p))
    e = np.sum(p * np.log(p) + (1 - p) * np.log(1 - p))
    v = np.sum(p * (1 - p) * np.log(p / (1 - p)) ** 2)
    return (l0 - e) / np.sqrt(v)


def test_hand_computed_and_missing_answers():
    p = 1 / (1 + np.exp(-np.array([2.0, 0.0, -2.0])))
    y = np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0], [1.0, np.nan, 0.0]])
    expected = [_by_hand(y[0], p), _by_hand(y[1], p), _by_hand(y[2, [0, 2]], p[[0, 2]])]
    np.testing.assert_allclose(irt.lz(y, ITEMS, np.zeros(3)), expected, rtol=1e-12)
    assert expected[1] < -3  # right on the hard item, wrong on the easy one: aberrant


def test_standard_normal_under_the_model_at_true_ability():
    rng = np.random.default_rng(7)
    j, n = 200, 3000
    params = np.column_stack([rng.uniform(0.8, 2.0, j), rng.normal(size=j), np.zeros(j), np.ones(j)])
    theta = rng.normal(size=n)
    y = (rng.random((n, j)) < irt.prob(params, theta).T).astype(float)
    z = irt.lz(y, params, theta)
    # mean and sd of 3,000 draws: standard errors about 0.02 and 0.013; lz is only asymptotically N(0,1)
    assert abs(z.mean()) < 0.1 and abs(z.std() - 1) < 0.1


def test_bad_input_is_refused():
    with pytest.raises(InputError, match="shape"):
        irt.lz(np.zeros((2, 3)), ITEMS[:2], np.zeros(2))
    with pytest.raises(InputError, match="0/1"):
        irt.lz(np.full((1, 3), 2.0), ITEMS, np.zeros(1))
    with pytest.raises(InputError, match="theta"):
        irt.lz(np.zeros((1, 3)), ITEMS, np.array([np.nan]))
