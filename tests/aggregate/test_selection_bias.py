"""Selection-bias diagnostics (The Leaderboard Illusion): shares, best-of-N inflation, deprecation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scorebench.aggregate.pairwise import bt_fit
from scorebench.aggregate.pair_counts import pair_counts
from scorebench.aggregate.input import as_battles
from scorebench.aggregate.selection_bias import (best_of_n_inflation, deprecation_effect, expected_max_normal,
                                                 sampling_shares)
from scorebench.core.errors import InputError

ELO = 400 / np.log(10)


def test_expected_max_of_normals_closed_forms():
    assert expected_max_normal(1) == pytest.approx(0.0, abs=1e-9)
    assert expected_max_normal(2) == pytest.approx(1 / np.sqrt(np.pi), rel=1e-7)
    assert expected_max_normal(3) == pytest.approx(1.5 / np.sqrt(np.pi), rel=1e-7)


def test_sampling_shares_counts_appearances_per_provider():
    t = pd.DataFrame({"a": ["big/m1", "big/m2", "big/m1", "small/s"], "b": ["small/s", "big/m1", "big/m2", "big/m2"],
                      "winner": ["a", "b", "tie", "a"]})
    out = sampling_shares(t).set_index("system")
    assert out["share"].sum() == pytest.approx(1.0)
    assert out.loc["big/m1", "battles"] == 3 and out.loc["small/s", "battles"] == 2
    assert out.loc["big/m2", "provider_share"] == pytest.approx(6 / 8)
    assert out.loc["big/m1", "provider_battles_per_model"] == pytest.approx(3.0)
    with pytest.raises(InputError, match="no provider given"):
        sampling_shares(t, providers={"big/m1": "x"})


def _arena(rng, n_variants, per_variant, public):
    """The public models play each other; a provider's variants (true strength 0) each play per_variant battles."""
    strengths = np.linspace(-1.0, 1.0, public)
    rows_a, rows_b, y = [], [], []
    n_pub = 4000
    a = rng.integers(public, size=n_pub)
    b = (a + rng.integers(1, public, size=n_pub)) % public
    rows_a += a.tolist(); rows_b += b.tolist()
    y += (rng.random(n_pub) < 1 / (1 + np.exp(-(strengths[a] - strengths[b])))).tolist()
    for k in range(n_variants):
        opp = rng.integers(public, size=per_variant)
        rows_a += [public + k] * per_variant; rows_b += opp.tolist()
        y += (rng.random(per_variant) < 1 / (1 + np.exp(strengths[opp]))).tolist()
    names = [f"pub{i}" for i in range(public)] + [f"variant{k}" for k in range(n_variants)]
    return pd.DataFrame({"a": [names[i] for i in rows_a], "b": [names[j] for j in rows_b],
                         "winner": np.where(y, "a", "b")}), strengths


def test_best_of_n_inflation_recovers_the_inflation_of_a_simulated_arena():
    rng = np.random.default_rng(39)
    n_variants, per_variant, public = 6, 400, 5
    observed = []
    for _ in range(25):
        t, strengths = _arena(rng, n_variants, per_variant, public)
        b = as_battles(t)
        theta = bt_fit(pair_counts(b).wins())
        pub = [b.systems.index(f"pub{i}") for i in range(public)]
        var = [b.systems.index(f"variant{k}") for k in range(n_variants)]
        shift = np.mean(theta[pub] - strengths)  # put the fit on the truth's origin
        observed.append(ELO * (theta[var].max() - shift))  # the true strength of every variant is 0
    observed = np.array(observed)
    # the diagnostic, from ONE arena in which the provider published a single variant
    t, _ = _arena(rng, 1, per_variant, public)
    pred = best_of_n_inflation(t, n_variants=n_variants, battles_per_variant=per_variant, systems=["variant0"],
                               n_sim=400, seed=1).iloc[0]
    se = observed.std(ddof=1) / np.sqrt(len(observed))
    assert abs(observed.mean() - pred["inflation"]) < 3 * np.hypot(se, pred["inflation_se"]) + 3.0
    assert pred["inflation"] == pytest.approx(pred["normal_approximation"], rel=0.15)
    assert abs(pred["single_variant_bias"]) < 4 * pred["inflation_se"] + 2.0
    assert observed.mean() > 15  # ~ e_6 * ELO / sqrt(I) = 24 Elo: a real inflation, not noise


def test_deprecation_effect_refits_without_the_deprecated_models():
    rng = np.random.default_rng(2)
    t, _ = _arena(rng, 2, 300, 4)
    out = deprecation_effect(t, ["variant0", "variant1"])
    assert out.attrs["deprecated"] == ["variant0", "variant1"]
    assert set(out["system"]) == {f"pub{i}" for i in range(4)}
    keep = ~(t["a"].str.startswith("variant") | t["b"].str.startswith("variant"))
    b = as_battles(t[keep])
    theta = bt_fit(pair_counts(b).wins())
    expected = dict(zip(b.systems, 1000 + ELO * (theta - theta.mean())))
    np.testing.assert_allclose(out.set_index("system")["rating_without"].loc[list(expected)],
                               list(expected.values()), atol=1e-8)
    np.testing.assert_allclose(out["rating_without"].mean(), 1000.0)
    np.testing.assert_allclose(out["rating_all"].mean(), 1000.0)
    assert (out["change"] != 0).any()
    # default: models with no battle in the last quarter of the table are the deprecated ones
    # (the variants' battles come first once the table is reversed)
    inferred = deprecation_effect(t.iloc[::-1].reset_index(drop=True))
    assert inferred.attrs["deprecated"] == ["variant0", "variant1"]
    with pytest.raises(InputError, match="unknown system"):
        deprecation_effect(t, ["nope"])
