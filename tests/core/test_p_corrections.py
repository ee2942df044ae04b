"""Multiple-comparison corrections (stats.holm, stats.benjamini_hochberg) and their registry
(stats.P_CORRECTIONS, stats.adjust_p_values): checked against statsmodels' ``multipletests``,
by simulation of the error rates they control, and through compare / the report's choices."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.multitest import multipletests

import scorebench
from scorebench.core.errors import InputError
from scorebench.core.stats import P_CORRECTIONS, adjust_p_values, benjamini_hochberg, holm
from scorebench.report import CORRECTIONS

STATSMODELS_METHOD = {"holm": "holm", "bh": "fdr_bh"}


def test_the_registry_names_both_corrections_in_compare_column_order():
    assert list(P_CORRECTIONS) == ["holm", "bh"]
    assert P_CORRECTIONS["holm"] is holm and P_CORRECTIONS["bh"] is benjamini_hochberg
    assert CORRECTIONS == {"holm": "p_holm", "bh": "p_bh"}


@pytest.mark.parametrize("name", ["holm", "bh"])
@pytest.mark.parametrize("m", [1, 2, 7, 40])
def test_adjusted_p_values_match_statsmodels(name, m):
    rng = np.random.default_rng(m)
    p = np.r_[rng.uniform(0, 0.05, m // 2), rng.uniform(0, 1, m - m // 2)]
    p[-1] = p[0]                                                      # a tie
    expected = multipletests(p, method=STATSMODELS_METHOD[name])[1]
    np.testing.assert_allclose(adjust_p_values(p, name), expected, rtol=1e-12, atol=0)
    np.testing.assert_array_equal(adjust_p_values(p, name), P_CORRECTIONS[name](p))


def test_bh_never_adjusts_more_than_holm_and_both_keep_the_order():
    p = np.random.default_rng(3).uniform(0, 0.2, 25)
    h, b = holm(p), benjamini_hochberg(p)
    assert np.all(b <= h) and np.all(h <= 1.0) and np.all(b >= p)
    order = np.argsort(p, kind="stable")
    assert np.all(np.diff(h[order]) >= 0) and np.all(np.diff(b[order]) >= 0)


def test_empty_input_gives_an_empty_array():
    for name in P_CORRECTIONS:
        assert adjust_p_values(np.array([]), name).shape == (0,)


def test_error_rates_by_simulation():
    """Holm keeps the family-wise error rate, BH the false discovery rate, at 5%: 10 tests,
    6 true nulls (uniform p) and 4 false ones (p of a z-test with effect 3)."""
    rng = np.random.default_rng(0)
    reps, alpha = 2000, 0.05
    null = rng.uniform(size=(reps, 6))
    z = rng.normal(3.0, 1.0, size=(reps, 4))
    false = np.exp(-0.5 * z ** 2) / np.maximum(z, 1e-9) / np.sqrt(2 * np.pi)  # Mills tail of z
    p = np.c_[null, np.where(z > 0, false, 1.0)]
    fwer = fdr = 0.0
    for row in p:
        h, b = holm(row) < alpha, benjamini_hochberg(row) < alpha
        fwer += h[:6].any()
        fdr += b[:6].sum() / max(b.sum(), 1)
    assert fwer / reps < alpha + 0.015          # MC s.e. ~0.005
    assert fdr / reps < alpha + 0.015
    assert fdr / reps > 0.005                   # BH does reject some true nulls: not vacuous


@pytest.mark.parametrize("method", ["hlom", "bonferroni", 3, None])
def test_an_unknown_method_is_refused_with_the_choices(method):
    with pytest.raises(InputError, match="method must be one of 'holm', 'bh'") as info:
        adjust_p_values(np.array([0.1, 0.2]), method)
    if method == "hlom":
        assert "did you mean 'holm'" in str(info.value)


def test_compare_adds_one_column_per_registered_correction():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 60)
    t = pd.DataFrame({"system": np.repeat(["a", "b", "c"], 60), "id": np.tile(np.arange(60), 3),
                      "y": np.tile(y, 3),
                      "p": np.r_[np.where(y, 0.8, 0.2), np.where(y, 0.6, 0.4), np.full(60, 0.5)]})
    out = scorebench.compare(t, "brier_score", tests=["t"], n_boot=50)
    for name in P_CORRECTIONS:
        np.testing.assert_array_equal(out[f"p_{name}"].to_numpy(), P_CORRECTIONS[name](out["p_value"].to_numpy()))
