"""Composite Bradley-Terry: components weighted by design, equal to BT with the implied per-battle weights."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import scorebench
from scorebench.aggregate.composite_bt import bradley_terry_composite_sandwich
from scorebench.aggregate.pairwise import bradley_terry_sandwich
from scorebench.aggregate.input import as_battles
from scorebench.core.errors import InputError


def _table(seed=0):
    rng = np.random.default_rng(seed)
    s = np.array([0.0, 0.4, 0.8, 1.2])
    rows = []
    for comp, n, shift in (("human", 3000, 0.0), ("judge", 600, 0.5)):
        a = rng.integers(4, size=n)
        b = (a + rng.integers(1, 4, size=n)) % 4
        d = s[a] - s[b] + shift * (a == 0) - shift * (b == 0)  # the judge over-rates m0
        win = rng.random(n) < 1 / (1 + np.exp(-d))
        rows.append(pd.DataFrame({"a": [f"m{i}" for i in a], "b": [f"m{j}" for j in b],
                                  "winner": np.where(win, "a", "b"), "component": comp}))
    return pd.concat(rows, ignore_index=True)


def test_composite_equals_bt_with_implied_weights():
    t = _table()
    lam = {"human": 2.0, "judge": 1.0}
    sizes = t["component"].value_counts()
    explicit = t.assign(weight=t["component"].map(lambda k: lam[k] / sizes[k]))
    r, cov = bradley_terry_composite_sandwich(t, component_weights=lam)
    r2, cov2 = bradley_terry_sandwich(as_battles(explicit.drop(columns="component")))
    np.testing.assert_allclose(r, r2, atol=1e-9)
    np.testing.assert_allclose(cov, cov2, rtol=1e-9)


def test_component_weights_move_the_ratings_as_designed():
    t = _table()
    humans = scorebench.aggregate(t[t["component"] == "human"].drop(columns="component"), "bradley_terry", n_boot=0)
    only_h = scorebench.aggregate(t, "bradley_terry_composite", n_boot=0, component_weights={"human": 1, "judge": 0})
    np.testing.assert_allclose(only_h.scores, humans.scores, atol=1e-8)
    equal = scorebench.aggregate(t, "bradley_terry_composite", n_boot=100)
    assert equal.resample == "sandwich"
    # the judge component (over-rating m0) counts as much as the 5x larger human one: m0 rises
    assert equal.score_of("m0") > only_h.score_of("m0") + 20
    pooled = scorebench.aggregate(t.drop(columns="component"), "bradley_terry", n_boot=0)
    assert only_h.score_of("m0") < pooled.score_of("m0") < equal.score_of("m0")


def test_composite_errors():
    t = _table()
    with pytest.raises(InputError, match="labels without a weight"):
        scorebench.aggregate(t, "bradley_terry_composite", n_boot=0, component_weights={"human": 1})
    with pytest.raises(InputError, match=">= 0"):
        scorebench.aggregate(t, "bradley_terry_composite", n_boot=0, component_weights={"human": 1, "judge": -1})
    with pytest.raises(InputError, match="no 'source' column"):
        scorebench.aggregate(t, "bradley_terry_composite", n_boot=0, component="source")
