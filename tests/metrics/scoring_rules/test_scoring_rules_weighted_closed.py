"""Weighted CRPS of closed forms (tw/ow/vr for normal, logistic, t) against quadrature of the
definitions at 40 digits, the unweighted CRPS, the censored/truncated identities and the
ensemble estimators at large ensemble sizes."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import mpmath as mp
import numpy as np
import pandas as pd
import pytest

import scorebench as sb
from scorebench.core.errors import InputError
from scorebench.metrics.scoring_rules import (crps_logistic, crps_normal, crps_t, owcrps_ensemble,
                                              twcrps_ensemble, vrcrps_ensemble)
from scorebench.metrics.scoring_rules import weighted_closed as W

sys.path.insert(0, str(Path(__file__).parents[2]))
from _gtc_reference import logistic_cdf, normal_cdf, t_cdf  # noqa: E402

mp.mp.dps = 40
SCIPY_T = None


def _pdf(family, df):
    if family == "normal":
        return mp.npdf
    if family == "logistic":
        return lambda z: mp.exp(-z) / (1 + mp.exp(-z)) ** 2
    nu = mp.mpf(df)
    c = mp.gamma((nu + 1) / 2) / (mp.sqrt(nu * mp.pi) * mp.gamma(nu / 2))
    return lambda z: c * (1 + z * z / nu) ** (-(nu + 1) / 2)


def _cdf(family, df):
    return {"normal": normal_cdf, "logistic": logistic_cdf}.get(family) or t_cdf(df)


def reference(rule, family, y, loc, scale, a, b, df=None):
    """The three weighted CRPS by quadrature of their definitions (the module docstring)."""
    y, loc, scale = mp.mpf(y), mp.mpf(loc), mp.mpf(scale)
    cdf0, pdf0 = _cdf(family, df), _pdf(family, df)
    F = lambda x: cdf0((x - loc) / scale)  # noqa: E731
    f = lambda x: pdf0((x - loc) / scale) / scale  # noqa: E731
    A_, B_ = (mp.mpf(a) if math.isfinite(a) else -mp.inf), (mp.mpf(b) if math.isfinite(b) else mp.inf)
    Fa = F(A_) if A_ != -mp.inf else mp.mpf(0)
    Fb = F(B_) if B_ != mp.inf else mp.mpf(1)
    cuts = lambda *pts: sorted({A_, B_, *[p for p in pts if A_ < p < B_]})  # noqa: E731

    def integrate(g, *pts):
        knots = cuts(*pts, loc)
        return sum(mp.quad(g, [lo, hi]) for lo, hi in zip(knots[:-1], knots[1:]))

    wy = 1 if A_ <= y <= B_ else 0
    if rule == "tw":
        return float(integrate(lambda z: (F(z) - (1 if y <= z else 0)) ** 2, y))
    p = Fb - Fa
    near = integrate(lambda x: abs(x - y) * f(x), y)
    pair = 2 * integrate(lambda z: (F(z) - Fa) * (Fb - F(z)))
    if rule == "ow":
        return float(wy * (near / p - pair / (2 * p * p)))
    absx = integrate(lambda x: abs(x) * f(x), mp.mpf(0))
    return float(wy * near - pair / 2 + (absx - abs(y) * wy) * (p - wy))


CASES = [
    # (y, loc, scale, a, b)
    (0.3, 0.0, 1.0, -math.inf, math.inf),
    (0.3, 0.0, 1.0, 0.0, math.inf),
    (-1.2, 0.5, 2.0, -1.0, 1.5),
    (2.5, 0.5, 2.0, -1.0, 1.5),
    (-4.0, 1.0, 0.7, -math.inf, 0.0),
    (1.1, -0.4, 1.3, 0.8, 3.0),
    (6.5, 0.0, 1.0, 5.0, 8.0),  # window far in the upper tail
    (-6.5, 0.0, 1.0, -9.0, -5.0),  # and in the lower tail
    (40.0, 3.0, 0.5, -math.inf, math.inf),
]


@pytest.mark.parametrize("family", ["normal", "logistic", "t"])
@pytest.mark.parametrize("rule", ["tw", "ow", "vr"])
@pytest.mark.parametrize("case", CASES)
def test_weighted_closed_forms_match_quadrature(family, rule, case):
    y, loc, scale, a, b = case
    fn = getattr(W, f"{rule}crps_{family}")
    args = (4.5, loc, scale) if family == "t" else (loc, scale)
    got = float(fn(y, *args, a=a, b=b))
    want = reference(rule, family, y, loc, scale, a, b, df=4.5 if family == "t" else None)
    # Relative to the score, or to the scale where the score is ~0 (the outcome outside).
    assert got == pytest.approx(want, rel=1e-10, abs=1e-12 * scale), (got, want)


@pytest.mark.parametrize("family,crps,args", [("normal", crps_normal, (0.4, 1.7)),
                                              ("logistic", crps_logistic, (0.4, 1.7)),
                                              ("t", crps_t, (3.0, 0.4, 1.7))])
def test_unbounded_window_is_the_crps(family, crps, args):
    y = np.linspace(-8, 8, 41)
    for rule in ("tw", "ow", "vr"):
        np.testing.assert_allclose(getattr(W, f"{rule}crps_{family}")(y, *args), crps(y, *args), rtol=1e-12)


def test_tw_and_ow_identities():
    # tw = CRPS of the censored forecast at the clipped outcome; ow = 0 outside the window.
    from scorebench.metrics.scoring_rules import crps_cnormal, crps_tnormal
    y = np.array([-3.0, -0.5, 0.2, 0.9, 4.0])
    np.testing.assert_allclose(W.twcrps_normal(y, 0.1, 1.2, a=-0.5, b=1.0),
                               crps_cnormal(np.clip(y, -0.5, 1.0), 0.1, 1.2, -0.5, 1.0), rtol=1e-15)
    ow = W.owcrps_normal(y, 0.1, 1.2, a=-0.5, b=1.0)
    np.testing.assert_array_equal(ow[[0, 4]], 0.0)
    np.testing.assert_allclose(ow[1:4], crps_tnormal(y[1:4], 0.1, 1.2, -0.5, 1.0), rtol=1e-15)


@pytest.mark.parametrize("rule,ensemble", [("tw", twcrps_ensemble), ("ow", owcrps_ensemble),
                                           ("vr", vrcrps_ensemble)])
def test_closed_forms_agree_with_the_ensemble_estimators(rule, ensemble):
    rng = np.random.default_rng(5)
    members = rng.normal(0.3, 1.4, size=400_000)
    y = np.array([-1.0, 0.2, 0.8, 2.5])
    closed = getattr(W, f"{rule}crps_normal")(y, 0.3, 1.4, a=-0.5, b=1.5)
    sample = ensemble(y, np.broadcast_to(members, (4, members.size)), a=-0.5, b=1.5)
    np.testing.assert_allclose(sample, closed, atol=5e-3)


def test_expected_score_is_minimised_by_the_true_forecast():
    # Propriety on a grid: under y ~ N(0, 1), the true forecast has the lowest mean score
    # among shifted and scaled ones, for each weighted rule.
    y = np.random.default_rng(2).normal(size=200_000)
    for rule in ("tw", "ow", "vr"):
        fn = getattr(W, f"{rule}crps_normal")
        truth = fn(y, 0.0, 1.0, a=0.5, b=3.0).mean()
        for mu, sigma in [(0.3, 1.0), (-0.3, 1.0), (0.0, 1.3), (0.0, 0.7)]:
            assert fn(y, mu, sigma, a=0.5, b=3.0).mean() > truth - 2e-4, (rule, mu, sigma)


def test_bad_inputs_name_the_problem():
    with pytest.raises(InputError, match="a < b"):
        W.vrcrps_normal(0.0, 0.0, 1.0, a=1.0, b=0.0)
    with pytest.raises(InputError, match="sigma"):
        W.owcrps_normal(0.0, 0.0, -1.0)
    with pytest.raises(InputError, match="df"):
        W.twcrps_t(0.0, 0.5, 0.0, 1.0)


def test_from_a_parametric_table_and_the_registry():
    df = pd.DataFrame({"system": ["A"] * 3 + ["B"] * 3, "y": [0.1, 1.2, -0.4] * 2,
                       "mu": [0.0, 1.0, -0.5, 0.5, 0.5, 0.5], "sigma": [1.0] * 6})
    res = sb.evaluate(df, ["twcrps_normal(a=0)", "vrcrps_normal", "crps_normal"], n_boot=0)
    res = res.set_index(["system", "metric"])["value"]
    for system in ("A", "B"):
        assert res[(system, "vrcrps_normal")] == pytest.approx(res[(system, "crps_normal")], rel=1e-12)
    rows = df[df.system == "A"]
    assert res[("A", "twcrps_normal(a=0)")] == pytest.approx(
        W.twcrps_normal(rows.y, rows.mu, rows.sigma, a=0.0).mean(), rel=1e-12)
    with pytest.raises(InputError, match="sigma"):
        sb.evaluate(df.drop(columns="sigma"), ["owcrps_normal"], n_boot=0)
