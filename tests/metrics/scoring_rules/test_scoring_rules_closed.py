"""Closed-form CRPS against numerical integration and against large quantile ensembles."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats

from scorebench.metrics import scoring_rules as S

# (score function, positional parameters, frozen scipy distribution, keyword options)
CASES = [
    ("normal", S.crps_normal, (0.3, 1.7), stats.norm(0.3, 1.7), {}),
    ("logistic", S.crps_logistic, (-0.4, 0.8), stats.logistic(-0.4, 0.8), {}),
    ("laplace", S.crps_laplace, (0.2, 1.3), stats.laplace(0.2, 1.3), {}),
    ("exponential", S.crps_exponential, (1.7,), stats.expon(scale=1 / 1.7), {}),
    ("gamma", S.crps_gamma, (2.5, 1.7), stats.gamma(2.5, scale=1 / 1.7), {}),
    ("gamma_small_shape", S.crps_gamma, (0.4, 2.0), stats.gamma(0.4, scale=0.5), {}),
    ("lognormal", S.crps_lognormal, (0.1, 0.6), stats.lognorm(0.6, scale=np.exp(0.1)), {}),
    ("uniform", S.crps_uniform, (-0.2, 1.1), stats.uniform(-0.2, 1.3), {}),
    ("beta", S.crps_beta, (2.1, 0.7), stats.beta(2.1, 0.7, loc=-1, scale=3), {"lower": -1.0, "upper": 2.0}),
    ("beta_unit", S.crps_beta, (0.5, 3.0), stats.beta(0.5, 3.0), {}),
    ("t", S.crps_t, (3.5, 0.2, 1.3), stats.t(3.5, 0.2, 1.3), {}),
    ("t_heavy", S.crps_t, (1.5, 0.0, 1.0), stats.t(1.5), {}),
]
IDS = [c[0] for c in CASES]


def crps_by_quadrature(cdf, y, lo, hi):
    """int (F(x) - 1{x >= y})^2 dx, split at y and at the support ends."""
    def f(x):
        return (cdf(x) - (x >= y)) ** 2
    cuts = sorted({lo, hi, y} if lo < y < hi else {lo, hi})
    if y <= lo:
        cuts = [y, *cuts] if np.isfinite(lo) else cuts
    if y >= hi:
        cuts = [*cuts, y] if np.isfinite(hi) else cuts
    return sum(integrate.quad(f, a, b, limit=400, epsabs=1e-13, epsrel=1e-12)[0]
               for a, b in zip(cuts[:-1], cuts[1:]))


@pytest.mark.parametrize(("name", "fn", "params", "dist", "opts"), CASES, ids=IDS)
def test_closed_form_matches_numerical_integration(name, fn, params, dist, opts):
    lo, hi = dist.support()  # quad handles the infinite limits
    for y in (dist.ppf(0.001) - 0.5, dist.ppf(0.3), dist.median(), dist.ppf(0.95), dist.ppf(0.999) + 0.5):
        expected = crps_by_quadrature(dist.cdf, y, lo, hi)
        assert fn(y, *params, **opts) == pytest.approx(expected, rel=1e-7, abs=1e-10), (name, y)


def test_mixture_of_normals_matches_numerical_integration():
    m, s, w = np.array([0.0, 1.0, -2.0]), np.array([1.0, 0.5, 2.0]), np.array([0.2, 0.5, 0.3])
    def cdf(x):
        return float((w * stats.norm.cdf(x, m, s)).sum())
    for y in (-4.0, -0.5, 0.7, 3.0):
        expected = crps_by_quadrature(cdf, y, -np.inf, np.inf)
        assert S.crps_mixnorm(y, m, s, w) == pytest.approx(expected, rel=1e-8)


@pytest.mark.parametrize(("name", "fn", "params", "dist", "opts"), CASES, ids=IDS)
def test_closed_form_matches_large_quantile_ensemble(name, fn, params, dist, opts):
    members = 20_000
    ens = dist.ppf((np.arange(members) + 0.5) / members)
    ys = np.array([dist.ppf(0.1), dist.median(), dist.ppf(0.8)])
    approx = S.crps_ensemble(ys, np.broadcast_to(ens, (3, members)))
    exact = fn(ys, *params, **opts)
    tol = 5e-3 if name == "t_heavy" else 1e-3  # the t with 1.5 df has a slowly decaying tail
    np.testing.assert_allclose(approx, exact, rtol=tol)


def test_fair_estimator_is_unbiased_and_standard_is_biased_by_pair_term():
    gen = np.random.default_rng(7)
    rows, members = 40_000, 5
    y = gen.normal(size=rows)
    ens = gen.normal(size=(rows, members))
    truth = S.crps_normal(y, 0.0, 1.0)
    fair = S.crps_ensemble(y, ens, estimator="fair")
    standard = S.crps_ensemble(y, ens)
    diff = fair - truth
    assert abs(diff.mean()) < 4 * diff.std() / np.sqrt(rows)
    # E|X - X'| / (2M) = (2 / sqrt(pi)) / (2M) for the standard normal
    bias = standard - fair
    assert bias.mean() == pytest.approx(1 / (np.sqrt(np.pi) * members), rel=0.02)


def test_log_score_normal_and_dss_exact_values():
    assert S.log_score_normal(1.0, 0.0, 2.0) == pytest.approx(0.5 * np.log(2 * np.pi) + np.log(2) + 0.125)
    assert S.dawid_sebastiani_score(3.0, 1.0, 2.0) == pytest.approx(1.0 + 2 * np.log(2))
    np.testing.assert_allclose(S.log_score_normal([0.1, 2.0], 0.5, 1.5),
                               -stats.norm.logpdf([0.1, 2.0], 0.5, 1.5), rtol=1e-13)


def test_energy_score_in_one_dimension_is_the_crps():
    gen = np.random.default_rng(3)
    y, ens = gen.normal(size=200), gen.normal(size=(200, 17))
    for est in ("standard", "fair"):
        np.testing.assert_allclose(S.energy_score(y[:, None], ens[..., None], estimator=est),
                                   S.crps_ensemble(y, ens, estimator=est), rtol=1e-12)


def test_quantile_score_approximates_crps_with_many_levels():
    levels = (np.arange(999) + 0.5) / 999
    q = stats.norm.ppf(levels)
    for y in (-1.0, 0.3, 2.0):
        approx = 2 * S.quantile_score(y, q[None, :], levels)[0]
        assert approx == pytest.approx(float(S.crps_normal(y, 0.0, 1.0)), rel=1e-3)


def test_ipw_link_round_trip_and_reference_values():
    q = np.array([1e-9, 1e-4, 0.01, 0.2, 0.5, 0.7, 0.99, 1 - 1e-6])
    np.testing.assert_allclose(S.ipw_inverse_link(S.ipw_link(q)), q, rtol=1e-12)
    # values of the authors' closed-form inverse (tailored-psr, custom_mapping) at these theta
    theta = np.array([-30.0, -2.0, -0.3, 0.0, 0.7, 5.0, 100.0])
    expected = [0.20311908, 0.4588039, 0.49375163, 0.5, 0.51456272, 0.59761733, 0.89157054]
    np.testing.assert_allclose(S.ipw_inverse_link(theta), expected, atol=1e-8)
    # the link is the derivative of the generator: a finite difference check
    G = lambda p: 1 / p + 1 / (1 - p) - 2 * np.log(p) - 2 * np.log(1 - p)  # noqa: E731
    for p in (0.1, 0.35, 0.8):
        h = 1e-6
        assert S.ipw_link(p) == pytest.approx((G(p + h) - G(p - h)) / (2 * h), rel=1e-6)


def test_ipw_score_is_the_generator_form_with_matched_curvature():
    # S(q, y) = -G(q) - G'(q)(y - q) + 4 and its Schervish weight is G''(q)
    q = np.linspace(0.05, 0.95, 19)
    G = 1 / q + 1 / (1 - q) - 2 * np.log(q) - 2 * np.log(1 - q)
    for y in (0, 1):
        np.testing.assert_allclose(S.ipw_score(np.full(q.shape, y), q), -G - S.ipw_link(q) * (y - q) + 4,
                                   rtol=1e-12)
    h = 1e-5
    d1 = (S.ipw_score(np.ones(1), q + h) - S.ipw_score(np.ones(1), q - h)) / (2 * h)
    weight = 2 / q**2 + 2 / (1 - q) ** 2 + 2 / q**3 + 2 / (1 - q) ** 3
    np.testing.assert_allclose(d1, -(1 - q) * weight, rtol=1e-5)


# --- issue 13 item 5: large log-scale and large gamma shape keep every digit -----------------

def _lognormal_crps_mpmath(y, mulog, sigmalog):
    """int (F(x) - 1{x >= y})^2 dx at 40 digits, substituting x = exp(mu + s t) (dx = s x dt)."""
    mp = pytest.importorskip("mpmath")
    with mp.workdps(40):
        m, s, w = mp.mpf(mulog), mp.mpf(sigmalog), (mp.log(y) - mulog) / mp.mpf(sigmalog)
        jac = lambda t: s * mp.exp(m + s * t)  # noqa: E731
        below = mp.quad(lambda t: mp.ncdf(t) ** 2 * jac(t), [-mp.inf, min(w, 0), w])
        # (1 - Phi(t))^2 e^{s t} peaks near t = s/2: split there for the quadrature.
        cuts = [w, *sorted(c for c in {s / 2, s / 2 + 8} if c > w), mp.inf]
        above = mp.quad(lambda t: mp.ncdf(-t) ** 2 * jac(t), cuts)
        return float(below + above)


@pytest.mark.parametrize("sigmalog", [0.5, 2.0, 5.0, 8.0, 12.0, 16.0, 20.0])
@pytest.mark.parametrize("y", [1e-3, 1.0, 50.0])
def test_crps_lognormal_matches_high_precision_integration_for_large_sigmalog(y, sigmalog):
    expected = _lognormal_crps_mpmath(y, 0.3, sigmalog)
    # quadrature at 40 digits; the closed form loses only a few ulps to exp/log_ndtr
    np.testing.assert_allclose(S.crps_lognormal(y, 0.3, sigmalog), expected, rtol=1e-12)


def test_crps_lognormal_issue_value_and_huge_sigmalog_do_not_collapse():
    # The sum form Phi(w - s) + Phi(s/sqrt2) - 1 returned exactly 0.0 here.
    np.testing.assert_allclose(S.crps_lognormal(1.0, 0.0, 12.0), 3.99981265934753e14, rtol=1e-13)
    # exp(mu + s^2/2) alone overflows at s = 40; the score itself is finite.
    assert np.isfinite(S.crps_lognormal(1.0, 0.0, 40.0))
    assert float(S.crps_lognormal(1.0, 0.0, 40.0)) > float(S.crps_lognormal(1.0, 0.0, 20.0))
    # y <= 0 keeps the closed form: CRPS = E|X - y| - E|X - X'|/2 = mean - y - mean (2 Phi(s/sqrt2) - 1)
    mean = np.exp(0.5 * 0.7 ** 2)
    from scipy.special import ndtr
    np.testing.assert_allclose(S.crps_lognormal(-2.0, 0.0, 0.7),
                               mean + 2.0 - mean * (2 * ndtr(0.7 / np.sqrt(2)) - 1), rtol=1e-14)


@pytest.mark.parametrize("shape", [3.0, 250.0, 1e6])
def test_crps_gamma_large_shape_matches_high_precision(shape):
    # special.beta(0.5, 1e6) is 1e-9 off, which the score inherited (2.3e-9 relative error).
    mp = pytest.importorskip("mpmath")
    rate = shape  # mean 1, sd 1/sqrt(shape)
    y = 1.0 + 0.5 / np.sqrt(shape)
    with mp.workdps(40):
        a, b, yy = mp.mpf(shape), mp.mpf(rate), mp.mpf(y)
        F = lambda k: mp.gammainc(k, 0, b * yy, regularized=True)  # noqa: E731
        expected = float(yy * (2 * F(a) - 1) - a / b * (2 * F(a + 1) - 1)
                         - mp.gamma(a + mp.mpf(1) / 2) / (mp.sqrt(mp.pi) * mp.gamma(a)) / b)
    np.testing.assert_allclose(S.crps_gamma(y, shape, rate), expected, rtol=1e-11)
