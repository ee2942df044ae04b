"""IRT fit statistics: S-X2, M2/RMSEA, EAP by sum score, marginal reliability, polytomous lz.

Reference values are R mirt's testthat suite (tests/testthat/test-01-mirtOne.R) on LSAT-7/6.
"""

from __future__ import annotations

from itertools import product
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.integrate import quad
from scipy.special import expit
from scipy.stats import norm

import scorebench.irt as irt
from scorebench.core.errors import InputError
from scorebench.irt.polymodels import simulate

REF = Path(__file__).resolve().parents[2].parent / "shared" / "reference" / "irt"

MIRT_LSAT7_SX2 = [4.749440, 14.451071, 1.270381, 5.237400, 0.941125]   # df 2 each (tolerance 1e-2 there)
MIRT_LSAT7_M2 = 11.93841                                                # df 5
MIRT_LSAT6_RASCH_M2 = 5.291576                                          # df 9
# fscores(mod, method='EAPsum', full.scores=FALSE): theta, SE, observed, expected, |std.res|; rxx
MIRT_EAPSUM = np.array([0, 1, 2, 3, 4, 5, -1.86979, -1.431861, -0.9488463, -0.4131963, 0.1517289, 0.7271877,
                        0.6927032, 0.6838697, 0.6942298, 0.7210951, 0.758772, 0.8009335, 12, 40, 114, 205, 321,
                        308, 10.08994, 44.65882, 109.773, 207.7391, 319.1854, 308.5536, 0.6013157, 0.6971433,
                        0.4034422, 0.1900446, 0.101567, 0.0315184]).reshape(6, 6, order="F")
MIRT_EAPSUM_RXX = 0.4319948


def _data(name: str) -> pd.DataFrame:
    path = REF / f"{name}_expanded_1000x5.csv"
    if not path.exists():
        pytest.skip("reference data ../shared/reference/irt is absent")
    return pd.read_csv(path)


@pytest.fixture(scope="module")
def lsat7():
    y = _data("lsat7")
    return y, irt.fit(y, "2pl", tol=1e-7), irt.fit(y, ["2pl"] * 5, tol=1e-7)


def test_lord_wingersky_matches_brute_force_enumeration():
    rng = np.random.default_rng(0)
    curves = [rng.dirichlet(np.ones(k + 1), size=3).T for k in (1, 2, 3)]      # (K+1, Q=3)
    want = np.zeros((7, 3))
    for combo in product(range(2), range(3), range(4)):
        want[sum(combo)] += np.prod([c[k] for c, k in zip(curves, combo)], axis=0)
    np.testing.assert_allclose(irt.lord_wingersky(curves), want, rtol=1e-12)


def test_s_x2_on_lsat7_matches_mirt(lsat7):
    y, dich, poly = lsat7
    for f, data in ((dich, y), (poly, None)):
        t = irt.s_x2(f, data)
        np.testing.assert_allclose(t["S_X2"], MIRT_LSAT7_SX2, atol=5e-3)
        assert t["df"].tolist() == [2] * 5
        np.testing.assert_allclose(t["RMSEA"], np.sqrt(np.maximum(t["S_X2"] / 2 - 1, 0) / 999), rtol=1e-12)


def test_m2_on_lsat7_and_lsat6_rasch_match_mirt(lsat7):
    y, dich, poly = lsat7
    for f, data in ((dich, y), (poly, None)):
        out = irt.m2(f, data)
        assert out["M2"] == pytest.approx(MIRT_LSAT7_M2, abs=1e-3)
        assert (out["df"], out["n_moments"], out["n_params"]) == (5, 15, 10)
        assert out["RMSEA"] == pytest.approx(np.sqrt((out["M2"] / 5 - 1) / 999), rel=1e-12)
    y6 = _data("lsat6")
    for f, data in ((irt.fit(y6, "rasch", tol=1e-7), y6), (irt.fit(y6, "pcm", tol=1e-7), None)):
        out = irt.m2(f, data)
        assert out["M2"] == pytest.approx(MIRT_LSAT6_RASCH_M2, abs=2e-3)
        assert out["df"] == 9


def test_eap_sum_table_on_lsat7_matches_mirt(lsat7):
    y, dich, poly = lsat7
    for f, data in ((dich, y), (poly, None)):
        t = irt.eap_sum_table(f, data)
        assert t.index.tolist() == [0, 1, 2, 3, 4, 5]
        np.testing.assert_allclose(t["theta"], MIRT_EAPSUM[:, 1], atol=2e-4)
        np.testing.assert_allclose(t["se"], MIRT_EAPSUM[:, 2], atol=2e-4)
        np.testing.assert_array_equal(t["observed"], MIRT_EAPSUM[:, 3])
        np.testing.assert_allclose(t["expected"], MIRT_EAPSUM[:, 4], atol=5e-3)
        np.testing.assert_allclose(t["std_res"].abs(), MIRT_EAPSUM[:, 5], atol=2e-4)
        assert t.attrs["rxx"] == pytest.approx(MIRT_EAPSUM_RXX, abs=1e-5)


def test_marginal_reliability_is_the_integral_it_claims(lsat7):
    _, dich, poly = lsat7
    a, d = dich.params[:, 0], dich.params[:, 1]

    def integrand(t):
        p = expit(a * t + d)
        info = float((a * a * p * (1 - p)).sum())
        return info / (info + 1) * norm.pdf(t)

    want = quad(integrand, -np.inf, np.inf, epsabs=1e-12)[0]
    assert irt.marginal_reliability(dich) == pytest.approx(want, abs=1e-8)
    assert irt.marginal_reliability(poly) == pytest.approx(want, abs=1e-4)


def test_polytomous_lz_reduces_to_the_dichotomous_lz(lsat7):
    y, _, poly = lsat7
    theta = poly.abilities["theta"].to_numpy()
    params = np.column_stack([poly.a, poly.d[:, 0], np.zeros(5), np.ones(5)])
    np.testing.assert_allclose(irt.lz_poly(poly), irt.lz(y.to_numpy(float), params, theta), rtol=1e-10)


def test_polytomous_m2_and_sx2_accept_a_correct_graded_model_and_reject_a_wrong_one():
    rng = np.random.default_rng(9)
    N, J = 1500, 8
    a = rng.uniform(1.0, 2.2, J)
    b = np.array([-1.0, 0.0, 1.0]) + rng.normal(0, 0.4, (J, 1))
    y = simulate("graded", a, -a[:, None] * b, rng.normal(size=N), rng)
    good = irt.fit(y, "grm")
    out = irt.m2(good)
    assert out["df"] == J * (J + 1) // 2 - 4 * J and out["p"] > 0.01
    assert (irt.s_x2(good)["p"] > 0.001).all()
    # A rating-scale model (one slope, shared steps) misfits data with unequal slopes and steps.
    assert irt.m2(irt.fit(y, "rsm"))["p"] < 5e-3


def test_s_x2_type_i_error_is_near_nominal():
    """S-X2 p-values of items simulated from the fitted model (graded, 8 items, 500 systems).

    20 replications x 8 items = 160 p-values. Under the null the rejection rate at 5% has
    binomial sd 1.7% for independent tests; items in one fit are weakly dependent, so the
    window [0.5%, 12%] is about four standard errors wide on each side. Orlando & Thissen
    (2000) report near-nominal rates for S-X2 at this size.
    """
    pvals = []
    for rep in range(20):
        rng = np.random.default_rng(1000 + rep)
        a = rng.uniform(0.9, 2.0, 8)
        b = np.array([-1.0, 0.0, 1.0]) + rng.normal(0, 0.5, (8, 1))
        y = simulate("graded", a, -a[:, None] * b, rng.normal(size=500), rng)
        pvals.extend(irt.s_x2(irt.fit(y, "grm")).dropna()["p"])
    pvals = np.array(pvals)
    assert len(pvals) >= 150
    rate = float((pvals < 0.05).mean())
    assert 0.005 <= rate <= 0.12, rate
    assert 0.4 <= float(pvals.mean()) <= 0.6


def test_fit_statistics_input_errors(lsat7):
    y, dich, poly = lsat7
    with pytest.raises(InputError, match="pass the responses"):
        irt.s_x2(dich)
    holes = y.to_numpy(float).copy()
    holes[0, 0] = np.nan
    with pytest.raises(InputError, match="complete data"):
        irt.m2(dich, holes)
    with pytest.raises(InputError, match="fitted items"):
        irt.eap_sum_table(dich, y.iloc[:, :3])
    with pytest.raises(InputError, match="cannot test"):
        irt.m2(irt.fit(y.iloc[:, :3], "2pl"), y.iloc[:, :3])
