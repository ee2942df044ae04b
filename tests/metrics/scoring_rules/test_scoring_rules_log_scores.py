"""log_score_<dist>: agreement with scipy.stats log densities and with scoringrules' logs_*,
+inf off the support, propriety on a grid, and scoringrules' overflows pinned."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import scoringrules as sr
from scipy import stats

import scorebench
from scorebench.core.errors import InputError
from scorebench.metrics import scoring_rules as S

N = 300


def _trunc_logpdf(dist, y, lo, up):
    return dist.logpdf(y) - np.log(dist.cdf(up) - dist.cdf(lo))


g = np.random.default_rng(11)
Y, MU, SIG = g.normal(0, 2, N), g.normal(size=N), g.uniform(0.3, 3, N)
LO = g.uniform(-2, 0.5, N)
UP = LO + g.uniform(0.5, 4, N)
INSIDE = np.clip(Y, LO, UP)
DF, XI, POS = g.uniform(1.5, 20, N), g.uniform(-0.8, 0.8, N), g.gamma(1, 2, N)
A, SL, P = g.uniform(0.2, 5, N), g.uniform(0.05, 0.95, N), g.uniform(0.05, 1, N)
CNT, NN = np.round(POS * 3), g.integers(0, 30, N)
U01 = g.uniform(size=N)

# (name, ours, scipy's log density)
CASES = [
    ("tnormal", lambda: S.log_score_tnormal(INSIDE, MU, SIG, LO, UP),
     lambda: _trunc_logpdf(stats.norm(MU, SIG), INSIDE, LO, UP)),
    ("tlogistic", lambda: S.log_score_tlogistic(INSIDE, MU, SIG, LO, UP),
     lambda: _trunc_logpdf(stats.logistic(MU, SIG), INSIDE, LO, UP)),
    ("tt", lambda: S.log_score_tt(INSIDE, DF, MU, SIG, LO, UP), lambda: _trunc_logpdf(stats.t(DF, MU, SIG), INSIDE, LO, UP)),
    ("t", lambda: S.log_score_t(Y, DF, MU, SIG), lambda: stats.t(DF, MU, SIG).logpdf(Y)),
    ("logistic", lambda: S.log_score_logistic(Y, MU, SIG), lambda: stats.logistic(MU, SIG).logpdf(Y)),
    ("laplace", lambda: S.log_score_laplace(Y, MU, SIG), lambda: stats.laplace(MU, SIG).logpdf(Y)),
    ("exponential", lambda: S.log_score_exponential(POS, SIG), lambda: stats.expon(scale=1 / SIG).logpdf(POS)),
    ("gamma", lambda: S.log_score_gamma(POS, A, SIG), lambda: stats.gamma(A, scale=1 / SIG).logpdf(POS)),
    ("lognormal", lambda: S.log_score_lognormal(POS, MU, SIG), lambda: stats.lognorm(SIG, scale=np.exp(MU)).logpdf(POS)),
    ("uniform", lambda: S.log_score_uniform(INSIDE, LO, UP), lambda: stats.uniform(LO, UP - LO).logpdf(INSIDE)),
    ("beta", lambda: S.log_score_beta(U01, A, SIG), lambda: stats.beta(A, SIG).logpdf(U01)),
    ("2pnormal", lambda: S.log_score_2pnormal(Y, SIG, A, MU),
     lambda: np.log(2 / (SIG + A)) + stats.norm.logpdf((Y - MU) / np.where(Y < MU, SIG, A))),
    ("2pexponential", lambda: S.log_score_2pexponential(Y, SIG, A, MU),
     lambda: -np.abs(Y - MU) / np.where(Y < MU, SIG, A) - np.log(SIG + A)),
    ("gev", lambda: S.log_score_gev(Y, XI, MU, SIG), lambda: stats.genextreme(-XI, MU, SIG).logpdf(Y)),
    ("gpd", lambda: S.log_score_gpd(Y, XI, MU, SIG), lambda: stats.genpareto(XI, MU, SIG).logpdf(Y)),
    ("loglaplace", lambda: S.log_score_loglaplace(POS, MU, SL), lambda: stats.loglaplace(1 / SL, scale=np.exp(MU)).logpdf(POS)),
    ("loglogistic", lambda: S.log_score_loglogistic(POS, MU, SL), lambda: stats.fisk(1 / SL, scale=np.exp(MU)).logpdf(POS)),
    ("poisson", lambda: S.log_score_poisson(CNT, A), lambda: stats.poisson(A).logpmf(CNT)),
    ("negbinom", lambda: S.log_score_negbinom(CNT, A, P), lambda: stats.nbinom(A, P).logpmf(CNT)),
    ("binomial", lambda: S.log_score_binomial(CNT, NN, P), lambda: stats.binom(NN, P).logpmf(CNT)),
    ("hypergeometric", lambda: S.log_score_hypergeometric(CNT, NN, 12, np.minimum(NN, 9)),
     lambda: stats.hypergeom(NN + 12, NN, np.minimum(NN, 9)).logpmf(CNT)),
]


@pytest.mark.parametrize(("name", "ours", "ref"), CASES, ids=[c[0] for c in CASES])
def test_log_scores_match_scipy_log_densities(name, ours, ref):
    with np.errstate(all="ignore"):
        expected = -np.asarray(ref(), dtype=float)
    got = ours()
    assert (np.isinf(got) == np.isinf(expected)).all()
    fin = np.isfinite(expected)
    assert fin.mean() > 0.3
    np.testing.assert_allclose(got[fin], expected[fin], rtol=1e-10, atol=1e-12)


def test_log_scores_agree_with_scoringrules():
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        pairs = [
            (S.log_score_tt(INSIDE, DF, MU, SIG, LO, UP), sr.logs_tt(INSIDE, DF, MU, SIG, LO, UP)),
            (S.log_score_gpd(Y, XI, MU, SIG), sr.logs_gpd(Y, XI, MU, SIG)),
            (S.log_score_loglogistic(POS, MU, SL), sr.logs_loglogistic(POS, MU, SL)),
            (S.log_score_2pnormal(Y, SIG, A, MU), sr.logs_2pnormal(Y, SIG, A, MU)),
            (S.log_score_binomial(CNT, NN, P), sr.logs_binomial(CNT, NN, P)),
        ]
    for ours, theirs in pairs:
        theirs = np.asarray(theirs, dtype=float)
        fin = np.isfinite(theirs)
        np.testing.assert_allclose(ours[fin], theirs[fin], rtol=1e-10)


def test_scoringrules_overflows_pinned():
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        # A plausible negative-binomial count: scoringrules overflows to inf.
        assert np.isinf(float(sr.logs_negbinom(8.0, 0.3002324, 0.64298553)))
        assert S.log_score_negbinom(8.0, 0.3002324, 0.64298553) == pytest.approx(
            -stats.nbinom(0.3002324, 0.64298553).logpmf(8), rel=1e-12)
        # A GEV outcome inside the support, far in the lower tail.
        assert np.isinf(float(sr.logs_gev(-1.0600168, 0.02615975, 2.39168454, 0.30517687)))
        assert S.log_score_gev(-1.0600168, 0.02615975, 2.39168454, 0.30517687) == pytest.approx(
            -stats.genextreme(-0.02615975, 2.39168454, 0.30517687).logpdf(-1.0600168), rel=1e-10)


def test_outside_the_support_is_infinite_and_nan_propagates():
    assert S.log_score_tnormal(-0.1, 0.0, 1.0, 0.0, np.inf) == np.inf
    assert S.log_score_poisson(2.5, 3.0) == np.inf
    assert S.log_score_gpd(-1.0, 0.2) == np.inf
    assert np.isnan(S.log_score_binomial(np.nan, 3, 0.5))


@pytest.mark.parametrize(("score", "dist", "theta", "shifted"), [
    (lambda y, xi, s: S.log_score_gev(y, xi, 0.0, s), lambda xi, s: stats.genextreme(-xi, 0, s), (0.1, 1.0),
     [(0.2, 1.0), (0.1, 1.2), (0.0, 0.9)]),
    (S.log_score_tnormal, lambda mu, s: stats.truncnorm(-mu / s, np.inf, mu, s), (0.5, 1.0), [(0.7, 1.0), (0.5, 0.8)]),
    (S.log_score_negbinom, lambda n, p: stats.nbinom(n, p), (4.0, 0.4), [(4.5, 0.4), (4.0, 0.35)]),
])
def test_log_scores_are_proper_on_a_grid(score, dist, theta, shifted):
    u = (np.arange(4000) + 0.5) / 4000
    y = dist(*theta).ppf(u)
    extra = (0.0, np.inf) if score is S.log_score_tnormal else ()
    truth = np.mean(score(y, *theta, *extra))
    for wrong in shifted:
        assert truth < np.mean(score(y, *wrong, *extra))


def test_log_scores_are_registered_with_specs():
    names = set(scorebench.list_metrics(family="scoring_rules")["name"])
    for name in S.log_scores.__all__:
        assert name in names
        m = scorebench.metric(name)
        assert m.kind == "parametric" and m.bounds == (-np.inf, np.inf) and m.distribution is not None


def test_ranked_log_score_matches_scoringrules_and_definition():
    g = np.random.default_rng(2)
    P = g.dirichlet(np.ones(5), 200)
    y = g.integers(0, 5, 200)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = np.asarray(sr.rls_score(y + 1, P), dtype=float)  # scoringrules counts classes from 1
    np.testing.assert_allclose(S.ranked_log_score(y, P), ref, rtol=1e-12)
    # By hand: thresholds k = 0, 1 below/at the outcome 2 of 3 classes.
    assert S.ranked_log_score([2], [[0.25, 0.25, 0.5]])[0] == pytest.approx(-np.log(0.75) - np.log(0.5))
    # A forecast ruling the outcome out stays finite (clipped like log_score).
    assert np.isfinite(S.ranked_log_score([0], [[0.0, 1.0]])[0])
    assert "ranked_log_score" in set(scorebench.list_metrics(family="scoring_rules")["name"])


def test_log_score_mixnorm_matches_scoringrules_scipy_and_tables():
    sr = pytest.importorskip("scoringrules")
    rng = np.random.default_rng(4)
    y, mu = rng.normal(size=60) * 3, rng.normal(size=(60, 3))
    sigma, w = rng.uniform(0.5, 2.0, size=(60, 3)), rng.uniform(size=(60, 3))
    ours = S.log_score_mixnorm(y, mu, sigma, w)
    # scoringrules takes the weights as given; scorebench normalises them (as crps_mixnorm).
    np.testing.assert_allclose(ours, sr.logs_mixnorm(y, mu, sigma, w / w.sum(1, keepdims=True)), rtol=1e-12)
    dens = (w / w.sum(1, keepdims=True) * stats.norm.pdf(y[:, None], mu, sigma)).sum(1)
    np.testing.assert_allclose(ours, -np.log(dens), rtol=1e-12)
    # Far from every component the density underflows; the log score stays finite.
    assert S.log_score_mixnorm(60.0, [0.0, 1.0], [1.0, 1.0]) == pytest.approx(1742.1120857137646, rel=1e-12)
    table = pd.DataFrame({"system": "A", "y": y[:5], "mu0": mu[:5, 0], "sigma0": sigma[:5, 0], "w0": 1.0,
                          "mu1": mu[:5, 1], "sigma1": sigma[:5, 1], "w1": 3.0})
    got = scorebench.evaluate(table, ["log_score_mixnorm"], n_boot=0)["value"].iloc[0]
    assert got == pytest.approx(S.log_score_mixnorm(y[:5], mu[:5, :2], sigma[:5, :2], [1.0, 3.0]).mean(), rel=1e-12)
    with pytest.raises(InputError, match="w1"):
        scorebench.evaluate(table.drop(columns="w1"), ["log_score_mixnorm"], n_boot=0)
