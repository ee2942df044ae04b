"""Scoring rules agree with scoringrules (numpy backend) and properscoring to 1e-10 relative."""

from __future__ import annotations

import numpy as np
import pytest

from scorebench.metrics import scoring_rules as S

sr = pytest.importorskip("scoringrules")
ps = pytest.importorskip("properscoring")

RTOL = 1e-10
N = 300


def close(actual, expected, atol=1e-13):
    np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=atol)


@pytest.fixture
def gen():
    return np.random.default_rng(20260601)


# --- categorical ------------------------------------------------------------------------


def test_brier_and_log_score_binary(gen):
    y = gen.integers(0, 2, N)
    p = gen.uniform(0.001, 0.999, N)
    close(S.brier_score(y, p), sr.brier_score(y, p, backend="numpy"))
    close(S.brier_score(y, p), ps.brier_score(y, p))
    close(S.log_score(y, p), sr.log_score(y, p, backend="numpy"))


def test_multiclass_brier_log_and_rps(gen):
    K = 5
    P = gen.dirichlet(np.ones(K), N)
    y = gen.integers(0, K, N)
    onehot = np.eye(K)[y]
    close(S.brier_score_multiclass(y, P), ps.brier_score(onehot, P).sum(axis=1))
    close(S.log_score_multiclass(y, P), -np.log(P[np.arange(N), y]))
    # scoringrules numbers categories from 1
    close(S.rps(y, P), sr.rps_score(y + 1, P, backend="numpy"))
    close(S.rps(y, P), sr.rps_score(onehot, P, onehot=True, backend="numpy"))
    close(S.rps(y, P, normalize=True), sr.rps_score(y + 1, P, backend="numpy") / (K - 1))


# --- closed forms -----------------------------------------------------------------------


def test_crps_normal_logistic_laplace(gen):
    y, mu = gen.normal(0, 3, N), gen.normal(0, 3, N)
    scale = gen.uniform(0.1, 4, N)
    close(S.crps_normal(y, mu, scale), sr.crps_normal(y, mu, scale, backend="numpy"))
    close(S.crps_normal(y, mu, scale), ps.crps_gaussian(y, mu, scale))
    close(S.crps_logistic(y, mu, scale), sr.crps_logistic(y, mu, scale, backend="numpy"))
    close(S.crps_laplace(y, mu, scale), sr.crps_laplace(y, mu, scale, backend="numpy"))
    ours = S.log_score_normal(y, mu, scale)
    with np.errstate(divide="ignore"):
        theirs = sr.logs_normal(y, mu, scale, backend="numpy")
    # scoringrules takes -log(pdf), which overflows to inf in the far tails; ours stays finite
    assert np.isfinite(ours).all()
    finite = np.isfinite(theirs)
    assert finite.mean() > 0.9
    close(ours[finite], theirs[finite])


def test_crps_positive_support_distributions(gen):
    y = np.concatenate([gen.exponential(2.0, N), -gen.exponential(1.0, 20)])
    rate, shape = gen.uniform(0.2, 3, y.size), gen.uniform(0.3, 6, y.size)
    close(S.crps_exponential(y, rate), sr.crps_exponential(y, rate, backend="numpy"))
    close(S.crps_gamma(y, shape, rate), sr.crps_gamma(y, shape, rate, backend="numpy"))
    pos = y > 0  # scoringrules returns NaN for y <= 0 (log of a non-positive number)
    mulog, sigmalog = gen.normal(0, 1, y.size), gen.uniform(0.1, 2, y.size)
    close(S.crps_lognormal(y, mulog, sigmalog)[pos],
          sr.crps_lognormal(y, mulog, sigmalog, backend="numpy")[pos])


def test_crps_lognormal_below_support_is_finite_where_scoringrules_gives_nan():
    y, mulog, sigmalog = -0.5, 0.1, 0.6
    with np.errstate(invalid="ignore"):
        assert np.isnan(sr.crps_lognormal(y, mulog, sigmalog, backend="numpy"))
    # for y <= 0: E|X - y| - E|X - X'|/2 = E X - y - E X (2 Phi(s/sqrt 2) - 1)
    from scipy.stats import norm
    mean = np.exp(mulog + sigmalog ** 2 / 2)
    expected = mean - y - mean * (2 * norm.cdf(sigmalog / np.sqrt(2)) - 1)
    close(S.crps_lognormal(y, mulog, sigmalog), expected)


def test_crps_uniform_beta_t(gen):
    low = gen.normal(0, 1, N)
    high = low + gen.uniform(0.1, 3, N)
    y = gen.uniform(low - 1, high + 1)
    close(S.crps_uniform(y, low, high), sr.crps_uniform(y, low, high, backend="numpy"))
    a, b = gen.uniform(0.2, 5, N), gen.uniform(0.2, 5, N)
    inside = (y > -1.0) & (y < 2.0)  # scoringrules gives NaN outside the support
    close(S.crps_beta(y, a, b, lower=-1.0, upper=2.0)[inside],
          sr.crps_beta(y, a, b, -1.0, 2.0, backend="numpy")[inside])
    df = gen.uniform(1.2, 30, N)
    mu, sigma = gen.normal(0, 1, N), gen.uniform(0.2, 3, N)
    close(S.crps_t(y, df, mu, sigma), sr.crps_t(y, df, mu, sigma, backend="numpy"))


def test_crps_mixnorm(gen):
    K = 4
    y = gen.normal(0, 2, N)
    m, s = gen.normal(0, 2, (N, K)), gen.uniform(0.2, 2, (N, K))
    w = gen.dirichlet(np.ones(K), N)
    close(S.crps_mixnorm(y, m, s, w), sr.crps_mixnorm(y, m, s, w, backend="numpy"))
    close(S.crps_mixnorm(y, m, s), sr.crps_mixnorm(y, m, s, backend="numpy"))


# --- ensembles --------------------------------------------------------------------------


@pytest.mark.parametrize("members", [1, 2, 7, 50])
def test_crps_ensemble_standard_matches_nrg_qd_and_properscoring(gen, members):
    y = gen.normal(0, 1, N)
    ens = gen.normal(0.3, 1.5, (N, members)) + 1e3  # offset: no loss of digits
    y = y + 1e3
    ours = S.crps_ensemble(y, ens)
    close(ours, sr.crps_ensemble(y, ens, estimator="nrg", backend="numpy"), atol=1e-10)
    close(ours, sr.crps_ensemble(y, ens, estimator="qd", backend="numpy"), atol=1e-10)
    close(ours, ps.crps_ensemble(y, ens), atol=1e-10)


@pytest.mark.parametrize("members", [2, 9, 50])
def test_crps_ensemble_fair_matches_fair_and_pwm(gen, members):
    y = gen.normal(0, 1, N)
    ens = gen.normal(0, 2, (N, members))
    ours = S.crps_ensemble(y, ens, estimator="fair")
    close(ours, sr.crps_ensemble(y, ens, estimator="fair", backend="numpy"))
    # scoringrules' "pwm" estimator (probability weighted moments) is the fair CRPS too
    close(ours, sr.crps_ensemble(y, ens, estimator="pwm", backend="numpy"), atol=1e-12)


def test_crps_ensemble_members_axis_and_batch_shape(gen):
    y = gen.normal(size=(4, 6))
    ens = gen.normal(size=(4, 6, 11))
    close(S.crps_ensemble(y, ens), sr.crps_ensemble(y, ens, estimator="nrg", backend="numpy"))
    assert S.crps_ensemble(y, ens).shape == (4, 6)


@pytest.mark.parametrize(("a", "b"), [(0.5, np.inf), (-np.inf, -0.2), (-1.0, 1.0)])
def test_twcrps_ensemble(gen, a, b):
    y, ens = gen.normal(size=N), gen.normal(size=(N, 13))
    close(S.twcrps_ensemble(y, ens, a=a, b=b),
          sr.twcrps_ensemble(y, ens, a, b, estimator="nrg", backend="numpy"))
    close(S.twcrps_ensemble(y, ens, a=a, b=b, estimator="fair"),
          sr.twcrps_ensemble(y, ens, a, b, estimator="fair", backend="numpy"))


def test_log_score_ensemble_and_dss(gen):
    y, ens = gen.normal(size=N), gen.normal(size=(N, 15)) * 2
    close(S.log_score_ensemble(y, ens), sr.logs_ensemble(y, ens, backend="numpy"))
    close(S.log_score_ensemble(y, ens, bandwidth=0.7), sr.logs_ensemble(y, ens, bw=0.7, backend="numpy"))
    close(S.dawid_sebastiani_ensemble(y, ens), sr.dssuv_ensemble(y, ens, backend="numpy"))
    close(S.dawid_sebastiani_ensemble(y, ens, ddof=0), sr.dssuv_ensemble(y, ens, bias=True, backend="numpy"))


# --- quantile and interval --------------------------------------------------------------


def test_quantile_and_interval_scores(gen):
    levels = np.array([0.05, 0.25, 0.5, 0.75, 0.95])
    y = gen.normal(size=N)
    q = np.sort(gen.normal(size=(N, levels.size)), axis=1)
    close(S.quantile_score(y, q, levels),
          sr.quantile_score(y[:, None], q, levels, backend="numpy").mean(axis=1))
    for alpha in (0.02, 0.1, 0.5, 0.9):
        close(S.interval_score(y, q[:, 0], q[:, 4], alpha=alpha),
              sr.interval_score(y, q[:, 0], q[:, 4], alpha, backend="numpy"))


def test_weighted_interval_score_follows_bracher_not_scoringrules_numpy(gen):
    levels = np.array([0.05, 0.25, 0.5, 0.75, 0.95])
    alpha = np.array([0.1, 0.5])
    y = gen.normal(size=N)
    q = np.sort(gen.normal(size=(N, levels.size)), axis=1)
    lower, upper, median = q[:, [0, 1]], q[:, [4, 3]], q[:, 2]
    IS = sr.interval_score(y, lower, upper, alpha, backend="numpy")
    assert IS.shape == (N, 2)
    bracher = (0.5 * np.abs(y - median) + (alpha / 2 * IS).sum(axis=1)) / (2 + 0.5)
    ours = S.weighted_interval_score(y, q, levels)
    close(ours, bracher)
    # scoringrules 0.10's numpy backend adds w0 * median instead of w0 * |y - median|
    theirs = sr.weighted_interval_score(y, median, lower, upper, alpha, backend="numpy")
    close(theirs, ours + 0.5 * (median - np.abs(y - median)) / 2.5)
    # with the canonical weights the WIS is twice the mean pinball loss over the levels
    close(ours, 2 * S.quantile_score(y, q, levels))


# --- multivariate -----------------------------------------------------------------------


@pytest.mark.parametrize(("members", "dims"), [(2, 1), (9, 3), (30, 10)])
def test_energy_score(gen, members, dims):
    y = gen.normal(size=(120, dims)) + 50.0
    ens = gen.normal(size=(120, members, dims)) + 50.0
    close(S.energy_score(y, ens), sr.energy_score(y, ens, backend="numpy"), atol=1e-10)
    close(S.energy_score(y, ens, estimator="fair"),
          sr.energy_score(y, ens, estimator="fair", backend="numpy"), atol=1e-10)


def test_energy_score_near_duplicate_members_keep_full_accuracy(gen):
    # members that nearly coincide are where the Gram identity loses digits
    base = gen.normal(size=(50, 1, 4)) * 100
    ens = base + gen.normal(size=(50, 20, 4)) * 1e-4
    y = base[:, 0] + 1e-4
    close(S.energy_score(y, ens), sr.energy_score(y, ens, backend="numpy"))


def test_energy_score_across_chunks_with_some_rows_needing_refinement(gen):
    rows, members, dims = 400, 30, 3  # several chunks; every other row has near-duplicate members
    ens = gen.normal(size=(rows, members, dims)) * 10
    ens[::2] = ens[::2, :1] + gen.normal(size=(rows // 2, members, dims)) * 1e-5
    y = gen.normal(size=(rows, dims)) * 10
    close(S.energy_score(y, ens), sr.energy_score(y, ens, backend="numpy"))
    close(S.energy_score(y, ens, estimator="fair"), sr.energy_score(y, ens, estimator="fair", backend="numpy"))


@pytest.mark.parametrize("p", [0.5, 1.0, 2.0])
def test_variogram_score(gen, p):
    y, ens = gen.normal(size=(100, 4)), gen.normal(size=(100, 12, 4))
    w = gen.uniform(size=(4, 4))
    close(S.variogram_score(y, ens, p=p), sr.variogram_score(y, ens, p=p, backend="numpy"))
    close(S.variogram_score(y, ens, p=p, weights=w), sr.variogram_score(y, ens, w, p=p, backend="numpy"))
