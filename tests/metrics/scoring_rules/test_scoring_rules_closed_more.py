"""Closed-form CRPS of truncated/censored, extreme-value, positive and count distributions:
agreement with scoringrules on random parameters, with high-precision quadrature of the
definition (tails, large scales, support boundaries), and the cases where scoringrules is
wrong (pinned)."""

from __future__ import annotations

import math
import sys
import warnings
import zlib
from pathlib import Path

import mpmath as mp
import numpy as np
import pandas as pd
import pytest
import scoringrules as sr
from scipy import stats

import scorebench
from scorebench.metrics import scoring_rules as S

sys.path.insert(0, str(Path(__file__).parents[2]))
from _crps_numeric import crps_numeric  # noqa: E402
from _gtc_reference import gtc_crps, logistic_cdf, normal_cdf, t_cdf  # noqa: E402

RTOL = 1e-10
N = 400


def _sr(fn, *args, **kw):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return np.asarray(fn(*args, backend="numpy", **kw), dtype=float)


def _params(seed):
    g = np.random.default_rng(seed)
    lo = g.uniform(-2.0, 0.5, N)
    return dict(y=g.normal(0.0, 2.0, N), mu=g.normal(size=N), sigma=g.uniform(0.3, 3.0, N), lo=lo,
                up=lo + g.uniform(0.5, 4.0, N), lmass=g.uniform(0, 0.4, N), umass=g.uniform(0, 0.4, N),
                df=g.uniform(1.5, 20.0, N), shape=g.uniform(-0.8, 0.8, N), mass=g.uniform(0, 1, N),
                pos=g.gamma(1.0, 2.0, N), a=g.uniform(0.2, 5.0, N), rate=g.uniform(0.2, 3.0, N),
                shift=g.uniform(0.0, 2.0, N), slog=g.uniform(0.05, 0.95, N), g=g)


# (name, scorebench call, scoringrules call) on the parameters of _params; ranges where
# scoringrules keeps its digits (its failures elsewhere are pinned below).
AGREE = [
    ("gtcnormal", lambda p: S.crps_gtcnormal(p["y"], p["mu"], p["sigma"], p["lo"], p["up"], p["lmass"], p["umass"]),
     lambda p: _sr(sr.crps_gtcnormal, p["y"], p["mu"], p["sigma"], p["lo"], p["up"], p["lmass"], p["umass"])),
    ("tnormal", lambda p: S.crps_tnormal(p["y"], p["mu"], p["sigma"], p["lo"], p["up"]),
     lambda p: _sr(sr.crps_tnormal, p["y"], p["mu"], p["sigma"], p["lo"], p["up"])),
    ("cnormal", lambda p: S.crps_cnormal(p["y"], p["mu"], p["sigma"], p["lo"], p["up"]),
     lambda p: _sr(sr.crps_cnormal, p["y"], p["mu"], p["sigma"], p["lo"], p["up"])),
    ("gtclogistic", lambda p: S.crps_gtclogistic(p["y"], p["mu"], p["sigma"], p["lo"], p["up"], p["lmass"], p["umass"]),
     lambda p: _sr(sr.crps_gtclogistic, p["y"], p["mu"], p["sigma"], p["lo"], p["up"], p["lmass"], p["umass"])),
    ("tlogistic", lambda p: S.crps_tlogistic(p["y"], p["mu"], p["sigma"], p["lo"], p["up"]),
     lambda p: _sr(sr.crps_tlogistic, p["y"], p["mu"], p["sigma"], p["lo"], p["up"])),
    ("clogistic", lambda p: S.crps_clogistic(p["y"], p["mu"], p["sigma"], p["lo"], p["up"]),
     lambda p: _sr(sr.crps_clogistic, p["y"], p["mu"], p["sigma"], p["lo"], p["up"])),
    ("gtct", lambda p: S.crps_gtct(p["y"], p["df"], p["mu"], p["sigma"], p["lo"], p["up"], p["lmass"], p["umass"]),
     lambda p: _sr(sr.crps_gtct, p["y"], p["df"], p["mu"], p["sigma"], p["lo"], p["up"], p["lmass"], p["umass"])),
    ("tt", lambda p: S.crps_tt(p["y"], p["df"], p["mu"], p["sigma"], p["lo"], p["up"]),
     lambda p: _sr(sr.crps_tt, p["y"], p["df"], p["mu"], p["sigma"], p["lo"], p["up"])),
    ("ct", lambda p: S.crps_ct(p["y"], p["df"], p["mu"], p["sigma"], p["lo"], p["up"]),
     lambda p: _sr(sr.crps_ct, p["y"], p["df"], p["mu"], p["sigma"], p["lo"], p["up"])),
    ("2pnormal", lambda p: S.crps_2pnormal(p["y"], p["sigma"], p["a"], p["mu"]),
     lambda p: _sr(sr.crps_2pnormal, p["y"], p["sigma"], p["a"], p["mu"])),
    ("2pexponential", lambda p: S.crps_2pexponential(p["y"], p["sigma"], p["a"], p["mu"]),
     lambda p: _sr(sr.crps_2pexponential, p["y"], p["sigma"], p["a"], p["mu"])),
    ("expm", lambda p: S.crps_expm(p["y"], p["mass"], p["mu"], p["sigma"]),
     lambda p: _sr(sr.crps_exponentialM, p["y"], p["mass"], p["mu"], p["sigma"])),
    ("gev", lambda p: S.crps_gev(p["y"], np.where(np.abs(p["shape"]) < 0.01, 0.3, p["shape"]), p["mu"], p["sigma"]),
     lambda p: _sr(sr.crps_gev, p["y"], np.where(np.abs(p["shape"]) < 0.01, 0.3, p["shape"]), p["mu"], p["sigma"])),
    ("gpd", lambda p: S.crps_gpd(p["y"], p["shape"], p["mu"], p["sigma"], p["mass"]),
     lambda p: _sr(sr.crps_gpd, p["y"], p["shape"], p["mu"], p["sigma"], p["mass"])),
    ("uniform_masses", lambda p: S.crps_uniform(p["y"], p["lo"], p["up"], p["lmass"], p["umass"]),
     lambda p: _sr(sr.crps_uniform, p["y"], p["lo"], p["up"], p["lmass"], p["umass"])),
    ("csg0", lambda p: S.crps_csg0(p["pos"], p["a"], p["rate"], p["shift"]),
     lambda p: _sr(sr.crps_csg0, p["pos"], p["a"], p["rate"], shift=p["shift"])),
    ("loglaplace", lambda p: S.crps_loglaplace(p["pos"], p["mu"], p["slog"]),
     lambda p: _sr(sr.crps_loglaplace, p["pos"], p["mu"], p["slog"])),
    ("loglogistic", lambda p: S.crps_loglogistic(p["pos"], p["mu"], p["slog"]),
     lambda p: _sr(sr.crps_loglogistic, p["pos"], p["mu"], p["slog"])),
    ("poisson", lambda p: S.crps_poisson(np.round(p["pos"] * 3), p["a"] * 4),
     lambda p: _sr(sr.crps_poisson, np.round(p["pos"] * 3), p["a"] * 4)),
    ("negbinom", lambda p: S.crps_negbinom(np.round(p["pos"] * 3), p["a"], p["mass"] * 0.9 + 0.1),
     lambda p: _sr(sr.crps_negbinom, np.round(p["pos"] * 3), p["a"], p["mass"] * 0.9 + 0.1)),
]


@pytest.mark.parametrize(("name", "ours", "theirs"), AGREE, ids=[a[0] for a in AGREE])
def test_agrees_with_scoringrules_on_random_parameters(name, ours, theirs):
    p = _params(zlib.crc32(name.encode()))
    mine, ref = ours(p), theirs(p)
    assert np.isfinite(mine).all()
    # scoringrules' gtc forms cancel (1e-7 and worse) when the truncation interval sits
    # 3+ scales into a tail; those rows are checked against quadrature instead
    # (test_gtc_matches_quadrature_in_tails and the pinned failures below).
    ok = np.isfinite(ref)
    if name in ("gtcnormal", "tnormal", "gtclogistic", "tlogistic", "gtct", "tt"):
        ok &= ((p["up"] - p["mu"]) / p["sigma"] > -3) & ((p["lo"] - p["mu"]) / p["sigma"] < 3)
    assert ok.mean() > 0.8
    np.testing.assert_allclose(mine[ok], ref[ok], rtol=RTOL, atol=1e-13)


def test_binomial_and_hypergeometric_agree_with_scoringrules_where_it_is_right():
    g = np.random.default_rng(3)
    for _ in range(60):
        n, p, y = int(g.integers(0, 40)), g.uniform(), g.uniform(-2, 42)
        assert S.crps_binomial(y, n, p) == pytest.approx(float(_sr(sr.crps_binomial, y, n, p)), rel=RTOL, abs=1e-14)
        m, nf = int(g.integers(0, 20)), int(g.integers(0, 20))
        k = int(g.integers(0, min(nf, m + nf) + 1))  # support within {0..nf}: scoringrules sums there
        assert S.crps_hypergeometric(y, m, nf, k) == pytest.approx(
            float(_sr(sr.crps_hypergeometric, y, m, nf, k)), rel=RTOL, abs=1e-14)


def _brute_lattice(y, pmf):
    """E|X - y| - E|X - X'| / 2 for a mass function on 0..K, in mpmath."""
    xs = range(len(pmf))
    a = mp.fsum(p * abs(x - mp.mpf(y)) for x, p in zip(xs, pmf))
    b = mp.fsum(p * q * abs(x - z) for x, p in zip(xs, pmf) for z, q in zip(xs, pmf))
    return float(a - b / 2)


def test_hypergeometric_is_right_where_scoringrules_is_not():
    # scoringrules sums over x in {0..n} (failures), so supports reaching past n are cut:
    # for m=17, n=8, k=17 (support {9..17}) it returns 0 at y = 8.
    m, n, k, y = 17, 8, 17, 8.0
    pmf = [mp.binomial(m, x) * mp.binomial(n, k - x) / mp.binomial(m + n, k) for x in range(k + 1)]
    exact = _brute_lattice(y, pmf)
    assert S.crps_hypergeometric(y, m, n, k) == pytest.approx(exact, rel=1e-12)
    assert float(_sr(sr.crps_hypergeometric, y, m, n, k)) == 0.0


@pytest.mark.parametrize(("y", "n", "p"), [(3.0, 10, 0.4), (-1.5, 7, 0.9), (12.5, 12, 0.01), (0.3, 30, 0.5)])
def test_binomial_matches_exact_sum(y, n, p):
    pmf = [mp.binomial(n, x) * mp.mpf(p) ** x * (1 - mp.mpf(p)) ** (n - x) for x in range(n + 1)]
    assert S.crps_binomial(y, n, p) == pytest.approx(_brute_lattice(y, pmf), rel=1e-12)


def _cell_sum_mp(y, lo, pmf):
    """The cell sum over the support {lo, ..., lo + len(pmf) - 1} in mpmath (linear in its width)."""
    y, cdf, total, top = mp.mpf(y), mp.mpf(0), mp.mpf(0), lo + len(pmf) - 1
    for j, p in enumerate(pmf[:-1]):
        cdf += p
        b = min(max(y - lo - j, 0), 1)
        total += cdf * cdf * b + (1 - cdf) ** 2 * (1 - b)
    return float(total + max(lo - y, 0) + max(y - top, 0))


@pytest.mark.parametrize(("y", "n", "p"), [(900.5, 3000, 0.3), (3990.2, 4000, 0.999), (0.5, 2000, 1e-4),
                                           (300.0, 300, 1 - 1e-7), (1.0, 400, 1e-300), (-7.0, 2000, 0.5)])
def test_binomial_keeps_its_digits_for_wide_supports_and_extreme_p(y, n, p):
    with mp.workdps(40):
        pp = mp.mpf(p)
        pmf = [mp.binomial(n, x) * pp ** x * (1 - pp) ** (n - x) for x in range(n + 1)]
        exact = _cell_sum_mp(y, 0, pmf)
    assert S.crps_binomial(y, n, p) == pytest.approx(exact, rel=1e-13)


@pytest.mark.parametrize(("y", "m", "n", "k"), [(1500.3, 2500, 2000, 2800), (247.52, 390, 365, 393),
                                                (-40.0, 300, 300, 300), (12.0, 30, 5, 20)])
def test_hypergeometric_keeps_its_digits_for_wide_supports(y, m, n, k):
    lo = max(0, k - n)
    with mp.workdps(40):
        pmf = [mp.binomial(m, x) * mp.binomial(n, k - x) / mp.binomial(m + n, k) for x in range(lo, min(k, m) + 1)]
        exact = _cell_sum_mp(y, lo, pmf)
    assert S.crps_hypergeometric(y, m, n, k) == pytest.approx(exact, rel=1e-13)


def test_count_lattices_score_point_masses_nan_and_mixed_widths_row_by_row():
    # Rows are sorted by support width and scored in chunks: a batch mixing widths (one
    # beyond the 16-bit sort key), point masses (p = 0, p = 1, n = 0) and NaN parameters
    # gives each row its own score.
    g = np.random.default_rng(8)
    n = np.concatenate([g.integers(0, 40, 300), [70000, 0, 5, 5, 6]]).astype(float)
    p = np.concatenate([g.uniform(size=300), [0.4, 0.5, 0.0, 1.0, np.nan]])
    y = np.concatenate([g.uniform(-3, 43, 300), [28000.5, 1.0, 2.0, 3.5, 1.0]])
    got = S.crps_binomial(y, n, p)
    assert got[-4:-1].tolist() == [1.0, 2.0, 1.5] and np.isnan(got[-1])
    each = [float(S.crps_binomial(a, b, c)) for a, b, c in zip(y[:-1], n[:-1], p[:-1])]
    np.testing.assert_allclose(got[:-1], each, rtol=1e-14, atol=0)
    m, nf = g.integers(0, 30, 200).astype(float), g.integers(0, 30, 200).astype(float)
    k = np.floor(g.uniform(size=200) * (m + nf + 1))
    got = S.crps_hypergeometric(y[:200], m, nf, k)
    each = [float(S.crps_hypergeometric(*row)) for row in zip(y[:200], m, nf, k)]
    np.testing.assert_allclose(got, each, rtol=1e-14, atol=0)


def _count_crps(y, cdf_at, kmax):
    """Cell sum of (F(k) - 1{k >= y})^2 over k = 0..kmax-1, plus the part beyond kmax."""
    y = mp.mpf(y)
    total = mp.mpf(0)
    for k in range(kmax):
        f = cdf_at(k)
        b = min(max(y - k, 0), 1)
        total += f * f * b + (1 - f) ** 2 * (1 - b)
    return float(total + max(-y, 0) + max(y - kmax, 0))


@pytest.mark.parametrize(("y", "lam"), [(3.0, 2.5), (0.0, 0.01), (40.0, 10.0), (100.0, 120.5), (-3.0, 4.0), (2.5, 3.0)])
def test_poisson_matches_exact_sum(y, lam):
    lam_ = mp.mpf(lam)
    kmax = int(lam + 40 * math.sqrt(lam) + max(y, 0) + 60)
    cdf = lambda k: mp.gammainc(k + 1, lam_, mp.inf, regularized=True)  # noqa: E731
    assert S.crps_poisson(y, lam) == pytest.approx(_count_crps(y, cdf, kmax), rel=1e-12)


@pytest.mark.parametrize(("y", "n", "p"), [(2.0, 5.0, 0.6), (0.0, 0.5, 0.9), (30.0, 2.5, 0.2), (7.5, 12.0, 0.5)])
def test_negbinom_matches_exact_sum(y, n, p):
    n_, p_ = mp.mpf(n), mp.mpf(p)
    kmax = int(n * (1 - p) / p + 60 * math.sqrt(n * (1 - p)) / p + max(y, 0) + 100)
    cdf = lambda k: mp.betainc(n_, k + 1, 0, p_, regularized=True)  # noqa: E731
    assert S.crps_negbinom(y, n, p) == pytest.approx(_count_crps(y, cdf, kmax), rel=1e-11)


# floor(y) <= 64 with p^n not tiny sums the masses, the others call betainc: both sides of
# each switch (y 64 / 65, n log p above / below -700), p near 1, a large size. (Where
# n log p < -700 scipy's hyp2f1 is NaN, so the CDF and partial mean are checked alone.)
@pytest.mark.parametrize(("y", "n", "p"), [(64.0, 3.0, 0.2), (65.0, 3.0, 0.2), (20.0, 190.0, 0.03),
                                           (20.0, 200.0, 0.03), (0.0, 5.27, 0.99994), (30.0, 1000.0, 0.97),
                                           (64.5, 1.0, 0.01), (3.0, 2.0, 1.0)])
def test_negbinom_summed_and_betainc_cdfs_match_exact(y, n, p):
    from scorebench.metrics.scoring_rules.crps_discrete import _negbinom_cdf_partial
    with mp.workdps(40):
        pp, f, cdf, partial = mp.mpf(p), mp.mpf(p) ** n, mp.mpf(0), mp.mpf(0)
        for j in range(int(y) + 1):  # the masses by their recurrence, exactly
            f = f * (n + j - 1) * (1 - pp) / j if j else f
            cdf, partial = cdf + f, partial + j * f
    arr = lambda v: np.array([float(v)])  # noqa: E731
    got_cdf, got_partial = _negbinom_cdf_partial(arr(np.floor(y)), arr(n), arr(p), arr(n * (1 - p) / p))
    assert got_cdf[0] == pytest.approx(float(cdf), rel=1e-13, abs=1e-300)
    assert got_partial[0] == pytest.approx(float(partial), rel=1e-13, abs=1e-300)


# --- generalised truncated-censored families against quadrature, tails included ---------

GTC_CASES = [
    (0.5, 0.0, 1.0, -1.0, 2.0, 0.1, 0.2), (3.0, 0.0, 1.0, 2.5, 6.0, 0.0, 0.0),
    (12.0, 0.0, 1.0, 10.0, math.inf, 0.0, 0.0), (40.0, 0.0, 1.0, 38.0, 45.0, 0.0, 0.0),
    (-40.0, 0.0, 1.0, -45.0, -38.0, 0.0, 0.0), (0.0, 0.0, 1.0, 30.0, math.inf, 0.0, 0.0),
    (0.5, 0.0, 1e6, -1e6, 2e6, 0.3, 0.1), (7.0, 0.0, 1.0, -math.inf, -5.0, 0.0, 0.3),
    (-3.0, 2.0, 0.5, -1.0, 4.0, 0.5, 0.5), (0.2, 0.0, 1.0, 0.0, math.inf, 0.0, 0.0),
]
FAMILIES = [
    ("normal", normal_cdf, S.crps_gtcnormal, S.crps_cnormal),
    ("logistic", logistic_cdf, S.crps_gtclogistic, S.crps_clogistic),
    ("t3", t_cdf(3.0), lambda y, *a: S.crps_gtct(y, 3.0, *a), lambda y, *a: S.crps_ct(y, 3.0, *a)),
]


@pytest.mark.parametrize(("family", "base", "gtc", "cens"), FAMILIES, ids=[f[0] for f in FAMILIES])
def test_gtc_matches_quadrature_in_tails(family, base, gtc, cens):
    for case in GTC_CASES:
        assert float(gtc(*case)) == pytest.approx(gtc_crps(base, *case), rel=1e-11), case
    for case in GTC_CASES[:5]:
        y, mu, s, lo, up = case[:5]
        assert float(cens(y, mu, s, lo, up)) == pytest.approx(
            gtc_crps(base, y, mu, s, lo, up, censored=True), rel=1e-11), case


def test_scoringrules_failures_pinned():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # Truncation far in a tail: scoringrules divides 0 by 0.
        assert np.isnan(_sr(sr.crps_tnormal, 40.0, 0.0, 1.0, 38.0, 45.0))
        assert S.crps_tnormal(40.0, 0.0, 1.0, 38.0, 45.0) == pytest.approx(
            gtc_crps(normal_cdf, 40.0, 0.0, 1.0, 38.0, 45.0), rel=1e-11)
        # A bound exactly at the location: sign(0) = 0/0 in scoringrules' logistic and t.
        assert np.isnan(_sr(sr.crps_tlogistic, 0.5, 0.0, 1.0, 0.0, np.inf))
        assert S.crps_tlogistic(0.5, 0.0, 1.0, 0.0, np.inf) == pytest.approx(
            gtc_crps(logistic_cdf, 0.5, 0.0, 1.0, 0.0, math.inf), rel=1e-12)
        # Lower-tail truncation of the logistic: scoringrules loses every digit.
        case = (-40.0, 0.0, 1.0, -45.0, -38.0)
        exact = gtc_crps(logistic_cdf, *case)
        assert S.crps_tlogistic(*case) == pytest.approx(exact, rel=1e-11)
        assert not float(_sr(sr.crps_tlogistic, *case)) == pytest.approx(exact, rel=1e-3)


# --- extreme-value and positive families against quadrature ------------------------------


def _gev_mp(y, xi, mu=0.0, s=1.0):
    """The GEV CRPS formula at 60 digits (no cancellation at that precision)."""
    with mp.workdps(60):
        xi, z = mp.mpf(xi), (mp.mpf(y) - mu) / s
        if xi == 0:
            return float(s * (-z - 2 * mp.ei(-mp.exp(-z)) + mp.euler - mp.log(2)))
        t = 1 + xi * z
        if t <= 0:
            f = mp.mpf(0) if xi > 0 else mp.mpf(1)
            g = mp.mpf(0) if xi > 0 else (mp.gamma(1 - xi) - 1) / xi
        else:
            x = t ** (-1 / xi)
            f = mp.exp(-x)
            g = (mp.gammainc(1 - xi, x) - f) / xi
        return float(s * (z * (2 * f - 1) - 2 * g - (1 - (2 - 2 ** xi) * mp.gamma(1 - xi)) / xi))


@pytest.mark.parametrize(("y", "xi"), [(0.3, 0.1), (0.3, 1e-9), (0.3, -1e-7), (0.3, 3e-5), (0.3, -9e-5),
                                       (0.3, 1.2e-4), (5.0, -0.5), (-30.0, 0.5), (50.0, 0.8), (-5.0, 0.0),
                                       (20.0, 0.0), (3.0, 0.95), (2.5, -0.5), (-3.0, 1e-5), (0.1, -0.99)])
def test_gev_matches_high_precision_formula(y, xi):
    assert S.crps_gev(y, xi) == pytest.approx(_gev_mp(y, xi), rel=1e-11)


def test_gev_small_shape_is_right_where_scoringrules_cancels():
    exact = _gev_mp(0.3, 1e-9)
    assert S.crps_gev(0.3, 1e-9) == pytest.approx(exact, rel=1e-13)
    assert abs(float(_sr(sr.crps_gev, 0.3, 1e-9)) - exact) > 1e-8 * exact


def _quad_crps(cdf, y, points, lo=-np.inf, hi=np.inf, sf=None):
    """CRPS by scipy quadrature in double precision (split at y, the support ends and the
    given points; ``sf`` exact in the upper tail): good to ~1e-11 relative here."""
    from scipy import integrate

    sf = sf or (lambda x: 1.0 - cdf(x))
    cuts = sorted({p for p in (*points, y) if lo < p < hi} | {lo, hi})
    total = max(lo - y, 0.0) + max(y - hi, 0.0)
    for a, b in zip(cuts[:-1], cuts[1:]):
        f = (lambda x: cdf(x) ** 2) if b <= y else (lambda x: sf(x) ** 2)
        total += integrate.quad(f, a, b, limit=500, epsabs=1e-15, epsrel=1e-13)[0]
    return total


# GEV: Q(1 - xi, x) as 1 - gammainc for x < 1 and |xi| >= 0.1 unless P > 0.9 (xi near 1),
# gammaincc otherwise; each path, left and right of the support too.
@pytest.mark.parametrize(("y", "xi"), [(0.1, 0.5), (0.1, 0.05), (3.0, 0.99), (0.3, -0.5), (-0.5, 0.3),
                                       (5.0, 0.2), (-2.0, 0.6), (2.5, -0.5), (0.2, -0.12)])
def test_gev_upper_gamma_paths_match_exact(y, xi):
    with mp.workdps(40):
        s, k = mp.mpf(y), mp.mpf(xi)
        gam, t = mp.gamma(1 - k), 1 + k * s
        if t <= 0:
            f, g = (0, 0) if k > 0 else (1, (gam - 1) / k)
        else:
            x = t ** (-1 / k)
            f = mp.exp(-x)
            g = (mp.gammainc(1 - k, x, mp.inf, regularized=True) * gam - f) / k
        exact = float(s * (2 * f - 1) - 2 * g - (1 - (2 - 2 ** k) * gam) / k)
    assert S.crps_gev(y, xi) == pytest.approx(exact, rel=1e-13)


def test_gev_and_gpd_match_quadrature():
    for y, xi, mu, s in [(0.3, 0.2, 0.0, 1.0), (2.0, -0.3, 0.5, 2.0), (-1.0, 0.0, 0.0, 1.0), (40.0, 0.5, 0.0, 1.0)]:
        dist = stats.genextreme(-xi, mu, s)  # scipy's shape is -xi
        lo, hi = dist.support()
        ref = _quad_crps(dist.cdf, y, [mu, mu + s, mu - s, mu + 5 * s, mu + 50 * s], lo, hi, sf=dist.sf)
        assert S.crps_gev(y, xi, mu, s) == pytest.approx(ref, rel=1e-10)
    for y, xi, mu, s, m in [(0.3, 0.5, 0.0, 1.0, 0.2), (1.5, -0.5, 0.0, 1.0, 0.1), (-2.0, 0.3, 0.0, 1.0, 0.3),
                            (3.0, 0.0, 1.0, 2.0, 0.0), (1e-8, 0.2, 0.0, 1.0, 0.0), (60.0, 0.6, 0.0, 1.0, 0.0)]:
        dist = stats.genpareto(xi, mu, s)
        lo, hi = dist.support()
        ref = _quad_crps(lambda x: m + (1 - m) * dist.cdf(x), y, [mu + s, mu + 5 * s, mu + 50 * s], lo, hi,
                         sf=lambda x: (1 - m) * dist.sf(x))
        assert S.crps_gpd(y, xi, mu, s, m) == pytest.approx(ref, rel=1e-10)


def test_positive_families_match_quadrature():
    cases = [
        (S.crps_csg0, (0.7, 0.5, 2.0, 0.3), stats.gamma(0.5, -0.3, 0.5), True),
        (S.crps_csg0, (0.0, 2.5, 1.0, 1.0), stats.gamma(2.5, -1.0, 1.0), True),
        (S.crps_csg0, (-1.0, 2.5, 1.0, 0.0), stats.gamma(2.5, 0.0, 1.0), True),
        (S.crps_loglaplace, (3.0, 0.1, 0.5), stats.loglaplace(1 / 0.5, 0, np.exp(0.1)), False),
        (S.crps_loglaplace, (1e-3, 0.0, 0.3), stats.loglaplace(1 / 0.3, 0, 1.0), False),
        (S.crps_loglogistic, (3.0, 0.1, 0.5), stats.fisk(1 / 0.5, 0, np.exp(0.1)), False),
        (S.crps_loglogistic, (-2.0, 0.0, 0.3), stats.fisk(1 / 0.3, 0, 1.0), False),
    ]
    for fn, args, dist, censored in cases:
        # csg0: the shifted gamma's mass below 0 sits at 0, so F = dist.cdf on [0, inf).
        ref = _quad_crps(dist.cdf, args[0], [0.5, 1, 2, 5, 10, 100, 1e4], 0.0, np.inf, sf=dist.sf)
        assert float(fn(*args)) == pytest.approx(ref, rel=1e-10), (fn.__name__, args)


def test_expm_and_two_piece_match_quadrature():
    # Parameters become mpf first: 1 - float(0.8) is not 0.2, and that constant would be
    # integrated over the whole half-line. Survival functions keep the upper tails exact.
    with mp.workdps(25):
        for y, m, mu, s in [(0.4, 0.2, 0.0, 1.0), (-1.0, 0.5, 0.0, 2.0), (30.0, 0.0, 1.0, 3.0)]:
            m_, mu_, s_ = map(mp.mpf, (m, mu, s))
            cdf = lambda x, m=m_, mu=mu_, s=s_: m + (1 - m) * -mp.expm1(-(x - mu) / s) if x >= mu else mp.mpf(0)  # noqa: E731
            sf = lambda x, m=m_, mu=mu_, s=s_: (1 - m) * mp.exp(-(x - mu) / s) if x >= mu else mp.mpf(1)  # noqa: E731
            ref = crps_numeric(cdf, y, [mu + s], mu, mp.inf, sf=sf)
            assert S.crps_expm(y, m, mu, s) == pytest.approx(ref, rel=1e-12)
        for y, s1, s2, mu in [(0.8, 3.0, 1.4, 0.0), (-5.0, 0.5, 2.0, 1.0), (1e-9, 1.0, 1.0, 0.0)]:
            s1_, s2_, mu_ = map(mp.mpf, (s1, s2, mu))
            cdf = lambda x, a=s1_, b=s2_, c=mu_: (a / (a + b) * mp.exp((x - c) / a) if x < c  # noqa: E731
                                                 else 1 - b / (a + b) * mp.exp(-(x - c) / b))
            sf = lambda x, a=s1_, b=s2_, c=mu_: (1 - a / (a + b) * mp.exp((x - c) / a) if x < c  # noqa: E731
                                                else b / (a + b) * mp.exp(-(x - c) / b))
            ref = crps_numeric(cdf, y, [mu, mu - s1, mu + s2], sf=sf)
            assert S.crps_2pexponential(y, s1, s2, mu) == pytest.approx(ref, rel=1e-12)
        for y, s1, s2, mu in [(0.0, 0.4, 2.0, 0.1), (-3.0, 1.0, 0.2, 0.0)]:
            s1_, s2_, mu_ = map(mp.mpf, (s1, s2, mu))
            cdf = lambda x, a=s1_, b=s2_, c=mu_: (2 * a / (a + b) * mp.ncdf((x - c) / a) if x < c  # noqa: E731
                                                 else (a - b) / (a + b) + 2 * b / (a + b) * mp.ncdf((x - c) / b))
            sf = lambda x, a=s1_, b=s2_, c=mu_: (1 - 2 * a / (a + b) * mp.ncdf((x - c) / a) if x < c  # noqa: E731
                                                else 2 * b / (a + b) * mp.ncdf(-(x - c) / b))
            ref = crps_numeric(cdf, y, [mu, mu - s1, mu + s2], sf=sf)
            assert S.crps_2pnormal(y, s1, s2, mu) == pytest.approx(ref, rel=1e-12)


def test_beta_tiny_shapes_full_precision():
    # Formerly 2.7e-7 off: mass piled on a bound, outcome on that bound.
    for y, a, b in [(1.0, 1.45, 2e-8), (1.0, 13.25, 2.1e-8), (0.0, 1e-8, 0.28), (0.5, 1e-4, 2e-4), (0.3, 1e-3, 5.0)]:
        with mp.workdps(50):
            a_, b_, y_ = mp.mpf(a), mp.mpf(b), mp.mpf(y)
            inc = lambda p, q: mp.betainc(p, q, 0, y_, regularized=True)  # noqa: E731
            exact = float(y_ * (2 * inc(a_, b_) - 1) + a_ / (a_ + b_) * (
                1 - 2 * inc(a_ + 1, b_) - 2 * mp.beta(2 * a_, 2 * b_) / (a_ * mp.beta(a_, b_) ** 2)))
        assert S.crps_beta(y, a, b) == pytest.approx(exact, rel=1e-11), (y, a, b)


# F_{a+1,b} comes from F_{a,b} by the recurrence, from the lower-tail series where that
# cancels (z (a + b)/(a + 1) < 1/8), and from betainc for a + b > 100 or where the series
# converges slowly: one row per path, both sides of the switches, a subnormal outcome.
@pytest.mark.parametrize(("y", "a", "b"), [(0.3, 2.0, 1.5), (0.01, 2.0, 1.5), (0.7, 1.5, 2.0), (0.2, 0.004, 0.002),
                                           (1e-300, 3e-6, 0.3), (0.006, 0.5, 30.0), (0.0065, 0.5, 30.0), (0.4, 0.004, 0.002),
                                           (0.3, 60.0, 45.0), (0.45, 50.0, 49.0), (0.01, 0.2, 0.1)])
def test_beta_cdf_paths_match_exact(y, a, b):
    with mp.workdps(50):
        a_, b_, y_ = mp.mpf(a), mp.mpf(b), mp.mpf(y)
        inc = lambda p, q: mp.betainc(p, q, 0, y_, regularized=True)  # noqa: E731
        exact = float(y_ * (2 * inc(a_, b_) - 1) + a_ / (a_ + b_) * (
            1 - 2 * inc(a_ + 1, b_) - 2 * mp.beta(2 * a_, 2 * b_) / (a_ * mp.beta(a_, b_) ** 2)))
    assert S.crps_beta(y, a, b) == pytest.approx(exact, rel=1e-13)


# csg0: P(a + 1, x) from P(a, x) by the recurrence, the series where x/(a + 1) < 1/8,
# gammainc (and betaln) for a > 10; each path at y and at the shift, shift 0 too.
@pytest.mark.parametrize(("y", "a", "rate", "shift"), [(0.7, 0.5, 2.0, 0.3), (0.05, 2.0, 1.0, 0.01),
                                                       (3.0, 2.0, 1.0, 0.37), (3.0, 2.0, 1.0, 0.38),
                                                       (30.0, 12.0, 0.5, 2.0), (0.0, 10.0, 1.0, 0.5),
                                                       (1.0, 0.05, 0.3, 0.0), (1e-200, 3.0, 2.0, 0.0)])
def test_csg0_gamma_cdf_paths_match_exact(y, a, rate, shift):
    with mp.workdps(40):
        y_, a_, r_, d_ = map(mp.mpf, (y, a, rate, shift))
        lower = lambda s, x: mp.gammainc(s, 0, x, regularized=True)  # noqa: E731
        yt, mean = max(y_, 0) + d_, a_ / r_
        fy, f1y, fd, f1d = lower(a_, r_ * yt), lower(a_ + 1, r_ * yt), lower(a_, r_ * d_), lower(a_ + 1, r_ * d_)
        exact = float(yt * (2 * fy - 1) - mean * mp.beta(0.5, a_ + 0.5) / mp.pi
                      * mp.gammainc(2 * a_, 2 * r_ * d_, mp.inf, regularized=True)
                      + mean * (1 + 2 * fd * f1d - fd * fd - 2 * f1y) - d_ * fd * fd + max(y_, 0) - y_)
    assert S.crps_csg0(y, a, rate, shift) == pytest.approx(exact, rel=1e-13)


def test_uniform_with_masses_matches_quadrature():
    for y, lo, hi, lm, um in [(0.5, 0.0, 1.0, 0.1, 0.2), (-1.0, 0.0, 2.0, 0.3, 0.0), (3.0, 0.0, 2.0, 0.0, 0.5)]:
        cdf = lambda x, lo=lo, hi=hi, lm=lm, um=um: (mp.mpf(0) if x < lo else mp.mpf(1) if x >= hi  # noqa: E731
                                                     else lm + (1 - lm - um) * (x - lo) / (hi - lo))
        assert S.crps_uniform(y, lo, hi, lm, um) == pytest.approx(crps_numeric(cdf, y, [], lo, hi), rel=1e-13)


# --- quantile, quadrature and threshold decomposition ------------------------------------


def test_crps_quantile_and_threshold_brier_match_references():
    import properscoring as ps

    g = np.random.default_rng(5)
    y = g.normal(size=60)
    levels = np.arange(1, 20) / 20
    q = np.sort(g.normal(size=(60, 19)), axis=1)
    np.testing.assert_allclose(S.crps_quantile(y, q, levels), _sr(sr.crps_quantile, y, q, levels), rtol=RTOL)
    ens = g.normal(size=(60, 15))
    ens[4, 2] = np.nan
    t = np.linspace(-2, 2, 9)
    np.testing.assert_allclose(S.threshold_brier_score(y, ens, t), ps.threshold_brier_score(y, ens, t), rtol=RTOL)
    np.testing.assert_allclose(S.crps_quadrature(y[:5], stats.norm(0.2, 1.3).cdf), S.crps_normal(y[:5], 0.2, 1.3),
                               rtol=1e-8)
    # Many evenly spaced levels of the true quantile function approach the closed form.
    lv = np.arange(1, 2000) / 2000
    approx = S.crps_quantile(0.3, stats.norm.ppf(lv), lv)
    assert approx == pytest.approx(float(S.crps_normal(0.3, 0.0, 1.0)), rel=5e-3)


def test_crps_quadrature_reports_bad_bounds():
    with pytest.raises(scorebench.InputError, match="xmin"):
        S.crps_quadrature(0.0, stats.norm.cdf, xmin=-1.0, xmax=10.0)
    with pytest.raises(scorebench.InputError, match="cdf"):
        S.crps_quadrature([0.0, 1.0], [stats.norm.cdf])


# --- registry, tables and validation ------------------------------------------------------

NEW_RULES = ["crps_gtcnormal", "crps_tnormal", "crps_cnormal", "crps_gtclogistic", "crps_tlogistic",
             "crps_clogistic", "crps_gtct", "crps_tt", "crps_ct", "crps_2pnormal", "crps_2pexponential",
             "crps_expm", "crps_gev", "crps_gpd", "crps_csg0", "crps_loglaplace", "crps_loglogistic",
             "crps_poisson", "crps_negbinom", "crps_binomial", "crps_hypergeometric", "crps_uniform", "crps_beta"]


@pytest.mark.parametrize("name", NEW_RULES)
def test_registry_records_carry_parameter_specs(name):
    m = scorebench.metric(name)
    assert m.family == "scoring_rules" and m.kind == "parametric" and m.higher_is_better is False
    spec = m.distribution["parameters"]
    assert m.distribution["support"]
    required = [p for p, (_, default) in spec.items() if default is None]
    assert list(m.inputs) == ["y", *required]
    assert name in set(scorebench.list_metrics(family="scoring_rules")["name"])


def test_parametric_table_selects_the_truncated_form_from_its_columns():
    g = np.random.default_rng(1)
    y = g.uniform(0, 3, 50)
    table = pd.DataFrame({"system": "s", "y": y, "mu": 1.0, "sigma": 2.0, "lower": 0.0, "upper": 3.0})
    got = scorebench.evaluate(table, ["crps_tnormal", "crps_normal"], n_boot=0)
    values = dict(zip(got["metric"], got["value"]))
    assert values["crps_tnormal"] == pytest.approx(S.crps_tnormal(y, 1.0, 2.0, 0.0, 3.0).mean(), rel=1e-12)
    assert values["crps_normal"] == pytest.approx(S.crps_normal(y, 1.0, 2.0).mean(), rel=1e-12)
    # Without bound columns the truncated normal is the normal.
    plain = table.drop(columns=["lower", "upper"])
    got = scorebench.evaluate(plain, "crps_tnormal", n_boot=0)
    assert got["value"].iloc[0] == pytest.approx(S.crps_normal(y, 1.0, 2.0).mean(), rel=1e-12)


def test_missing_parameter_column_is_one_line_error_naming_it():
    table = pd.DataFrame({"system": "s", "y": [0.1, 0.2], "mu": 0.0})
    with pytest.raises(scorebench.InputError, match=r"\['sigma'\]") as info:
        scorebench.evaluate(table, "crps_tnormal", n_boot=0)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(("call", "match"), [
    (lambda: S.crps_tnormal(0.0, 0.0, 1.0, 1.0, 1.0), "lower < upper"),
    (lambda: S.crps_gtcnormal(0.0, 0.0, 1.0, lmass=0.2), "finite bound"),
    (lambda: S.crps_gtcnormal(0.0, 0.0, 1.0, -1.0, 1.0, 0.7, 0.7), "total point mass"),
    (lambda: S.crps_gtct(0.0, 1.0), "df"),
    (lambda: S.crps_gev(0.0, 1.0), "shape"),
    (lambda: S.crps_gpd(0.0, 0.2, 0.0, 1.0, 1.5), "mass"),
    (lambda: S.crps_loglaplace(1.0, 0.0, 1.0), "sigmalog"),
    (lambda: S.crps_binomial(1.0, 2.5, 0.5), "n"),
    (lambda: S.crps_hypergeometric(1.0, 2, 3, 6), "k"),
    (lambda: S.crps_poisson(1.0, -1.0), "mean"),
    (lambda: S.crps_negbinom(1.0, 2.0), "prob"),
    (lambda: S.crps_tnormal(0.0, 0.0, np.inf), "sigma"),
])
def test_invalid_parameters_raise_input_errors(call, match):
    with pytest.raises(scorebench.InputError, match=match):
        call()


def test_nan_outcome_propagates_to_its_row():
    out = S.crps_gtcnormal([0.1, np.nan], 0.0, 1.0, -1.0, 2.0, 0.1, 0.1)
    assert np.isfinite(out[0]) and np.isnan(out[1])
    out = S.crps_binomial([1.0, np.nan], 4, 0.5)
    assert np.isfinite(out[0]) and np.isnan(out[1])
