"""mirt's ``M2(type = "M2")`` for polytomous items: category-margin moments, checked against an
enumeration of all answer patterns, equal to M2* on 0/1 items, and its behaviour under the model
and under a wrong one."""

from __future__ import annotations

from itertools import product

import numpy as np
import pandas as pd
import pytest

from scorebench.core.errors import InputError
from scorebench.irt import fit, m2
from scorebench.irt.limited import _category_parts
from scorebench.irt.polymodels import category_probs, simulate
from scorebench.irt.sumscore import model_curves


def _graded(n: int, seed: int, slopes=(0.5, 2.5)) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    a = rng.uniform(*slopes, 6)
    d = np.sort(rng.normal(size=(6, 3)), axis=1)[:, ::-1]
    return pd.DataFrame(simulate("graded", a, d, rng.normal(size=n), rng))


def test_moments_and_covariance_equal_an_enumeration_of_all_patterns():
    y = _graded(800, 0).iloc[:, :3].clip(upper=2)  # 3 items scored 0..2: 27 patterns
    result = fit(y, "grm", warn=False)
    _, nodes, w, values, _ = model_curves(result, None)
    e, Xi, _ = _category_parts(result, values.astype(float), nodes, w)
    P = [category_probs("graded", result.a[[j]], result.d[[j], :2], nodes)[0] for j in range(3)]
    cells = [((j, k),) for j in range(3) for k in (1, 2)]
    cells += [((j, k), (m, c)) for j, m in ((0, 1), (0, 2), (1, 2)) for k in (1, 2) for c in (1, 2)]
    pi = np.zeros(len(cells))
    second = np.zeros((len(cells), len(cells)))
    for pattern in product(range(3), repeat=3):
        prob = float((P[0][pattern[0]] * P[1][pattern[1]] * P[2][pattern[2]]) @ w)
        ind = np.array([all(pattern[j] == k for j, k in cell) for cell in cells], dtype=float)
        pi += prob * ind
        second += prob * np.outer(ind, ind)
    observed = np.array([np.mean(np.all([values[:, j] == k for j, k in cell], axis=0)) for cell in cells])
    np.testing.assert_allclose(e, observed - pi, rtol=0, atol=1e-12)
    np.testing.assert_allclose(Xi, second - np.outer(pi, pi), rtol=1e-10, atol=1e-14)


def test_equals_m2_star_on_dichotomous_items():
    rng = np.random.default_rng(1)
    th = rng.normal(size=(1000, 1))
    y = pd.DataFrame((rng.random((1000, 6)) < 1 / (1 + np.exp(-(th - np.linspace(-1, 1, 6))))).astype(float))
    result = fit(y, "grm", warn=False)
    full, star = m2(result, type="M2"), m2(result, type="M2*")
    assert full["M2"] == pytest.approx(star["M2"], rel=1e-10)
    assert full["df"] == star["df"] == 9


def test_counts_df_and_separates_right_from_wrong_models():
    y = _graded(1000, 0)
    right = m2(fit(y, "grm", warn=False), type="M2")
    assert right["n_moments"] == 6 * 3 + 15 * 9 and right["df"] == 153 - 24
    assert right["p"] > 0.05
    wrong = m2(fit(y, "pcm", warn=False), type="M2")  # one slope for slopes spread over 0.5..2.5
    assert wrong["p"] < 0.001 and wrong["M2"] > right["M2"]


def test_bad_type():
    y = _graded(300, 2)
    with pytest.raises(InputError, match="type"):
        m2(fit(y, "grm", warn=False), type="M3")
