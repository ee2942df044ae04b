"""Property tests of the closed-form CRPS of issue 19: propriety (the expected score under
the true distribution is smallest for the true parameters, on a small grid of wrong ones)
and agreement with the ensemble CRPS of a large quantile ensemble."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from scorebench.metrics import scoring_rules as S

SETTINGS = settings(max_examples=8, deadline=None)
K = 4000
U = (np.arange(K) + 0.5) / K  # stratified levels: the sample below is G's quantiles


def _masked(u, lmass, umass, lo, up, inner):
    m = 1.0 - lmass - umass
    mid = inner(np.clip((u - lmass) / m, 1e-12, 1 - 1e-12))
    return np.where(u < lmass, lo, np.where(u > 1.0 - umass, up, mid))


def _trunc(dist, lo, up):
    fl, fu = dist.cdf(lo), dist.cdf(up)
    return lambda v: dist.ppf(fl + (fu - fl) * v)


def _two_piece(u, s1, s2, mu, base):
    w = s1 / (s1 + s2)
    return np.where(u < w, mu + s1 * base.ppf(u / w / 2), mu + s2 * base.ppf(0.5 + (u - w) / (1 - w) / 2))


def _two_piece_exp(u, s1, s2, mu):
    w = s1 / (s1 + s2)
    return np.where(u < w, mu + s1 * np.log(u / w), mu - s2 * np.log((1 - u) / (1 - w)))


# name -> (score(y, *theta), quantile function(u, *theta), true theta, index of the
# parameter to perturb, relative perturbations)
FAMILIES = {
    "gtcnormal": (lambda y, mu, s: S.crps_gtcnormal(y, mu, s, -1.0, 2.0, 0.1, 0.2),
                  lambda u, mu, s: _masked(u, 0.1, 0.2, -1.0, 2.0, _trunc(stats.norm(mu, s), -1.0, 2.0)), (0.3, 1.2)),
    "tnormal": (lambda y, mu, s: S.crps_tnormal(y, mu, s, 0.0, np.inf),
                lambda u, mu, s: _trunc(stats.norm(mu, s), 0.0, np.inf)(u), (0.5, 1.0)),
    "cnormal": (lambda y, mu, s: S.crps_cnormal(y, mu, s, 0.0, np.inf),
                lambda u, mu, s: np.maximum(stats.norm(mu, s).ppf(u), 0.0), (0.5, 1.0)),
    "tlogistic": (lambda y, mu, s: S.crps_tlogistic(y, mu, s, -1.0, 3.0),
                  lambda u, mu, s: _trunc(stats.logistic(mu, s), -1.0, 3.0)(u), (0.2, 0.8)),
    "gtclogistic": (lambda y, mu, s: S.crps_gtclogistic(y, mu, s, -1.0, 3.0, 0.2, 0.1),
                    lambda u, mu, s: _masked(u, 0.2, 0.1, -1.0, 3.0, _trunc(stats.logistic(mu, s), -1.0, 3.0)),
                    (0.2, 0.8)),
    "clogistic": (lambda y, mu, s: S.crps_clogistic(y, mu, s, -1.0, 3.0),
                  lambda u, mu, s: np.clip(stats.logistic(mu, s).ppf(u), -1.0, 3.0), (0.2, 0.8)),
    "tt": (lambda y, mu, s: S.crps_tt(y, 4.0, mu, s, -2.0, 5.0),
           lambda u, mu, s: _trunc(stats.t(4.0, mu, s), -2.0, 5.0)(u), (0.4, 1.1)),
    "ct": (lambda y, mu, s: S.crps_ct(y, 4.0, mu, s, -2.0, 5.0),
           lambda u, mu, s: np.clip(stats.t(4.0, mu, s).ppf(u), -2.0, 5.0), (0.4, 1.1)),
    "gtct": (lambda y, mu, s: S.crps_gtct(y, 4.0, mu, s, -2.0, 5.0, 0.1, 0.05),
             lambda u, mu, s: _masked(u, 0.1, 0.05, -2.0, 5.0, _trunc(stats.t(4.0, mu, s), -2.0, 5.0)), (0.4, 1.1)),
    "2pnormal": (lambda y, s1, s2: S.crps_2pnormal(y, s1, s2, 0.3),
                 lambda u, s1, s2: _two_piece(u, s1, s2, 0.3, stats.norm), (0.7, 1.6)),
    "2pexponential": (lambda y, s1, s2: S.crps_2pexponential(y, s1, s2, 0.3),
                      lambda u, s1, s2: _two_piece_exp(u, s1, s2, 0.3), (0.7, 1.6)),
    "expm": (lambda y, m, s: S.crps_expm(y, m, 0.0, s),
             lambda u, m, s: np.where(u < m, 0.0, stats.expon(0, s).ppf(np.clip((u - m) / (1 - m), 0, 1))), (0.3, 1.5)),
    "gev": (lambda y, xi, s: S.crps_gev(y, xi, 0.0, s), lambda u, xi, s: stats.genextreme(-xi, 0, s).ppf(u), (0.2, 1.3)),
    "gpd": (lambda y, xi, s: S.crps_gpd(y, xi, 0.0, s), lambda u, xi, s: stats.genpareto(xi, 0, s).ppf(u), (0.2, 1.3)),
    "csg0": (lambda y, a, r: S.crps_csg0(y, a, r, 0.5),
             lambda u, a, r: np.maximum(stats.gamma(a, scale=1 / r).ppf(u) - 0.5, 0.0), (2.0, 1.5)),
    "loglaplace": (lambda y, m, s: S.crps_loglaplace(y, m, s),
                   lambda u, m, s: stats.loglaplace(1 / s, scale=np.exp(m)).ppf(u), (0.2, 0.4)),
    "loglogistic": (lambda y, m, s: S.crps_loglogistic(y, m, s),
                    lambda u, m, s: stats.fisk(1 / s, scale=np.exp(m)).ppf(u), (0.2, 0.4)),
    "uniform_masses": (lambda y, lo, hi: S.crps_uniform(y, lo, hi, 0.1, 0.2),
                       lambda u, lo, hi: _masked(u, 0.1, 0.2, lo, hi, lambda v: lo + (hi - lo) * v), (-0.5, 1.5)),
    "poisson": (lambda y, lam, _: S.crps_poisson(y, lam), lambda u, lam, _: stats.poisson(lam).ppf(u), (3.5, 1.0)),
    "negbinom": (lambda y, n, p: S.crps_negbinom(y, n, p), lambda u, n, p: stats.nbinom(n, p).ppf(u), (4.0, 0.4)),
    "binomial": (lambda y, n, p: S.crps_binomial(y, n, p), lambda u, n, p: stats.binom(n, p).ppf(u), (12, 0.3)),
    "hypergeometric": (lambda y, m, k: S.crps_hypergeometric(y, m, 9, k),
                       lambda u, m, k: stats.hypergeom(m + 9, m, k).ppf(u), (7, 6)),
}
# Which parameters may be perturbed, and how (integers step, the rest scale).
INTEGER = {"binomial": (True, False), "hypergeometric": (True, True), "poisson": (False, True)}


def _perturbed(name, theta, which, factor):
    t = list(theta)
    if INTEGER.get(name, (False, False))[which]:
        t[which] = t[which] + (1 if factor > 1 else -1)
    elif name in ("gtcnormal", "tnormal", "cnormal", "tlogistic", "gtclogistic", "clogistic", "tt", "ct",
                  "gtct", "loglaplace", "loglogistic", "uniform_masses", "gev", "gpd") and which == 0:
        t[which] = t[which] + (factor - 1.0)  # a location or shape: shift it
    else:
        t[which] = t[which] * factor
    return tuple(t)


@pytest.mark.parametrize("name", sorted(FAMILIES))
@SETTINGS
@given(which=st.integers(0, 1), factor=st.sampled_from([0.8, 0.9, 1.1, 1.25]))
def test_expected_score_is_smallest_at_the_true_distribution(name, which, factor):
    score, ppf, theta = FAMILIES[name]
    if name == "poisson" and which == 1:
        which = 0
    y = ppf(U, *theta)
    wrong = _perturbed(name, theta, which, factor)
    if name in ("loglaplace", "loglogistic") and which == 1 and not 0 < wrong[1] < 1:
        return
    truth = float(np.mean(score(y, *theta)))
    assert truth <= float(np.mean(score(y, *wrong))) + 1e-12


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_closed_form_agrees_with_large_quantile_ensemble(name):
    score, ppf, theta = FAMILIES[name]
    ens = ppf(U, *theta)
    for y in (np.quantile(ens, 0.1), np.quantile(ens, 0.5) + 0.05, np.quantile(ens, 0.97) + 0.3):
        closed = float(score(np.array(y), *theta))
        assert closed == pytest.approx(float(S.crps_ensemble(y, ens)), rel=2e-2, abs=2e-3), (name, y)
