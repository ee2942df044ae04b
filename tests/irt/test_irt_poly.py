"""Polytomous IRT (GRM, GPCM, PCM, RSM, mixed): model algebra, conformance with R mirt on
LSAT-6/7, an independent marginal-likelihood maximiser, parameter recovery, input errors, CLI."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy.optimize import minimize
from scipy.special import expit

import scorebench.irt as irt
from scorebench.core.errors import InputError
from scorebench.irt.polymodels import (category_jacobian, category_probs, item_information_poly,
                                       simulate, thresholds)

REF = Path(__file__).resolve().parents[2].parent / "shared" / "reference" / "irt"

# mirt testthat (tests/testthat/test-01-mirtOne.R): coef(mirt(expand.table(LSAT7), 1)), tolerance 1e-2 there.
MIRT_LSAT7_A = [0.988, 1.081, 1.706, 0.7651, 0.7358]
MIRT_LSAT7_D = [1.8561, 0.808, 1.8043, 0.486, 1.8545]
# mirt testthat: LSAT6 itemtype='Rasch' (d and latent variance 0.57); also in the reference README.
MIRT_LSAT6_RASCH_D = [2.730, 0.999, 0.240, 1.306, 2.099]


def _data(name: str) -> pd.DataFrame:
    path = REF / f"{name}_expanded_1000x5.csv"
    if not path.exists():
        pytest.skip("reference data ../shared/reference/irt is absent")
    return pd.read_csv(path)


# --- model algebra --------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["graded", "gpcm"])
def test_probabilities_sum_to_one_and_jacobian_matches_finite_differences(kind):
    rng = np.random.default_rng(0)
    a = rng.uniform(0.5, 2.0, 3)
    d = -np.sort(rng.normal(size=(3, 3)), axis=1) * 1.5 if kind == "graded" else rng.normal(size=(3, 3))
    th = np.linspace(-3, 3, 7)
    P, D = category_jacobian(kind, a, d, th)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(P, category_probs(kind, a, d, th), rtol=1e-12)
    h = 1e-6
    for p in range(4):
        da, dd = np.zeros(3), np.zeros((3, 3))
        if p == 0:
            da[:] = h
        else:
            dd[:, p - 1] = h
        num = (category_probs(kind, a + da, d + dd, th) - category_probs(kind, a - da, d - dd, th)) / (2 * h)
        np.testing.assert_allclose(D[:, p], num, atol=1e-8)


def test_information_matches_numerical_fisher_information():
    a, d, th = np.array([1.3]), np.array([[0.8, -0.2, -1.5]]), np.linspace(-2, 2, 5)
    for kind in ("graded", "gpcm"):
        h = 1e-5
        dP = (category_probs(kind, a, d, th + h) - category_probs(kind, a, d, th - h)) / (2 * h)
        want = (dP**2 / category_probs(kind, a, d, th)).sum(axis=1)
        np.testing.assert_allclose(item_information_poly(kind, a, d, th), want, rtol=1e-7)


def test_one_step_items_are_the_2pl_and_thresholds_mean_what_the_docs_say():
    a, d, th = np.array([1.7]), np.array([[0.4]]), np.linspace(-3, 3, 9)
    two_pl = expit(1.7 * th + 0.4)
    for kind in ("graded", "gpcm", "2pl"):
        np.testing.assert_allclose(category_probs(kind, a, d, th)[0, 1], two_pl, rtol=1e-12)
    # GRM: P(X >= k) = 1/2 at b_k; GPCM: adjacent categories equally likely at b_k.
    a, d = np.array([1.2]), np.array([[1.0, -0.5, -2.0]])
    for k, b in enumerate(thresholds("graded", a, d)[0], start=1):
        assert category_probs("graded", a, d, np.array([b]))[0, k:, 0].sum() == pytest.approx(0.5, abs=1e-12)
    for k, b in enumerate(thresholds("gpcm", a, d)[0], start=1):
        P = category_probs("gpcm", a, d, np.array([b]))[0, :, 0]
        assert P[k] == pytest.approx(P[k - 1], rel=1e-12)


# --- conformance with mirt ---------------------------------------------------------------

def test_lsat7_2pl_items_through_the_polytomous_driver_match_mirt_and_the_dichotomous_fit():
    y = _data("lsat7")
    poly = irt.fit(y, ["2pl"] * 5)
    dich = irt.fit(y, "2pl")
    np.testing.assert_allclose(poly.items["a"], MIRT_LSAT7_A, atol=2e-3)
    np.testing.assert_allclose(poly.items["d1"], MIRT_LSAT7_D, atol=2e-3)
    np.testing.assert_allclose(poly.items["a"], dich.items["a"], atol=5e-5)
    np.testing.assert_allclose(poly.items["b1"], dich.items["b"], atol=1e-4)
    assert poly.loglik == pytest.approx(dich.loglik, abs=1e-3)
    # 0/1 items under graded and gpcm are the same model
    for model in ("grm", "gpcm"):
        other = irt.fit(y, model)
        np.testing.assert_allclose(other.items["a"], poly.items["a"], atol=1e-4)


def test_lsat6_partial_credit_is_mirts_rasch():
    y = _data("lsat6")
    f = irt.fit(y, "pcm")
    np.testing.assert_allclose(f.items["d1"], MIRT_LSAT6_RASCH_D, atol=2e-3)
    assert f.latent_sd**2 == pytest.approx(0.57, abs=5e-3)
    assert (f.items["a"] == 1.0).all()
    assert f.n_params == 6


def _marginal_nll(params, y, kinds_K, nodes, logw):
    """Independent marginal log-likelihood (loops over items; no code shared with the package)."""
    N, J = y.shape
    ll = np.tile(logw, (N, 1))
    pos = 0
    for j, (kind, K) in enumerate(kinds_K):
        a, d = params[pos], params[pos + 1:pos + 1 + K]
        pos += K + 1
        if kind == "graded":
            star = np.vstack([np.ones_like(nodes)] + [expit(a * nodes + dk) for dk in d] + [np.zeros_like(nodes)])
            P = star[:-1] - star[1:]
        else:
            z = np.vstack([np.zeros_like(nodes)] + [a * (k + 1) * nodes + d[k] for k in range(K)])
            P = np.exp(z - np.logaddexp.reduce(z, axis=0))
        ll += np.log(np.clip(P[y[:, j].astype(int)], 1e-300, None))
    top = ll.max(axis=1, keepdims=True)
    return -float((top[:, 0] + np.log(np.exp(ll - top).sum(axis=1))).sum())


@pytest.mark.parametrize("kind", ["graded", "gpcm"])
def test_em_reaches_the_maximum_found_by_a_direct_optimiser(kind):
    rng = np.random.default_rng(11)
    J, N = 4, 600
    a = np.array([0.8, 1.2, 1.6, 2.0])
    d = np.array([[1.5, 0.0, -1.2]] * J) if kind == "graded" else np.array([[0.8, 0.6, -0.4]] * J)
    y = simulate(kind, a, d, rng.normal(size=N), rng)
    f = irt.fit(y, "grm" if kind == "graded" else kind, tol=1e-8, quadpts=61)
    nodes = np.linspace(-6, 6, 61)
    logw = -0.5 * nodes**2 - np.log(np.exp(-0.5 * nodes**2).sum())
    x0 = np.concatenate([[1.0, 1.0, 0.0, -1.0] if kind == "graded" else [1.0, 0.5, 0.5, 0.0] for _ in range(J)])
    opt = minimize(_marginal_nll, x0, args=(y, [(kind, 3)] * J, nodes, logw), method="BFGS",
                   options={"gtol": 1e-7, "maxiter": 5000})
    ours = np.column_stack([f.items["a"], f.items[["d1", "d2", "d3"]]]).ravel()
    assert -opt.fun <= f.loglik + 1e-6
    assert f.loglik == pytest.approx(-opt.fun, abs=1e-5)
    np.testing.assert_allclose(ours, opt.x, atol=2e-3)


def test_mixed_item_types_in_one_fit():
    rng = np.random.default_rng(3)
    N = 1500
    th = rng.normal(size=N)
    y = np.column_stack([simulate("2pl", np.array([1.4, 0.9]), np.array([[0.3], [-0.5]]), th, rng),
                         simulate("graded", np.array([1.5]), np.array([[1.0, -0.8]]), th, rng),
                         simulate("gpcm", np.array([1.1, 1.3]), np.array([[0.5, 0.2, -0.6]] * 2), th, rng)])
    models = ["2pl", "2pl", "graded", "gpcm", "gpcm"]
    f = irt.fit(pd.DataFrame(y, columns=list("vwxyz")), dict(zip("vwxyz", models)))
    assert f.converged and f.model == "mixed"
    assert f.items["model"].tolist() == models
    assert f.items["n_cat"].tolist() == [2, 2, 3, 4, 4]
    assert f.n_params == 2 * 2 + 3 + 4 * 2
    np.testing.assert_allclose(f.items["a"], [1.4, 0.9, 1.5, 1.1, 1.3], atol=0.3)
    assert np.isnan(f.items.loc["v", "d2"])


def test_rating_scale_items_share_their_category_steps():
    rng = np.random.default_rng(4)
    th = rng.normal(size=1500)
    steps = np.array([-0.8, 0.1, 0.7])
    loc = np.array([-0.5, 0.0, 0.4, 1.0])
    d = -np.cumsum(loc[:, None] + steps[None, :], axis=1)       # d_k = -sum_m (b + tau_m)
    y = simulate("gpcm", np.ones(4), d, th, rng)
    f = irt.fit(y, "rsm")
    step_d = np.diff(np.column_stack([np.zeros(4), f.items[["d1", "d2", "d3"]]]), axis=1)
    centred = step_d - step_d.mean(axis=1, keepdims=True)
    np.testing.assert_allclose(centred, np.tile(centred[0], (4, 1)), atol=1e-8)   # shared steps
    np.testing.assert_allclose(-centred[0] / 1.0, steps - steps.mean(), atol=0.2)
    assert f.n_params == 4 + 2 + 1


def _recovery(kind: str, N: int, seed: int) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    J = 12
    a = rng.uniform(0.8, 2.2, J)
    b = rng.normal(0.0, 0.6, (J, 1)) + np.array([-1.5, -0.5, 0.5, 1.5]) * rng.uniform(0.6, 1.1, (J, 1))
    if kind == "graded":
        d = -a[:, None] * b
    else:
        d = -np.cumsum(a[:, None] * b, axis=1)
    y = simulate(kind, a, d, rng.normal(size=N), rng)
    f = irt.fit(y, "grm" if kind == "graded" else kind)
    est_b = f.items[[f"b{k}" for k in range(1, 5)]].to_numpy()
    return float(np.sqrt(np.mean((f.items["a"] - a) ** 2))), float(np.sqrt(np.mean((est_b - b) ** 2)))


@pytest.mark.parametrize("kind", ["graded", "gpcm"])
def test_parameter_recovery_at_1000_systems(kind):
    # Sampling error of a slope with 1,000 systems and 5 categories is about 0.07-0.1; the
    # bounds are about twice that (a systematic bias would exceed them).
    rmse_a, rmse_b = _recovery(kind, 1000, 20)
    assert rmse_a < 0.2
    assert rmse_b < 0.25


# --- input errors and CLI ----------------------------------------------------------------

@pytest.mark.parametrize("bad", [-1.0, 1.5])
def test_non_integer_or_negative_scores_raise(bad):
    y = np.array([[0, 1, 2], [1, 2, 0], [2, 0, 1], [1, 1, 1]], dtype=float)
    y[0, 1] = bad
    with pytest.raises(InputError, match="integer scores 0, 1, ..., K"):
        irt.fit(y, "grm")


def test_missing_middle_category_and_bad_models_raise():
    y = np.array([[0, 2], [2, 0], [0, 1], [2, 1]], dtype=float)
    with pytest.raises(InputError, match=r"score\(s\) \[1\] never occur"):
        irt.fit(y, "gpcm")
    y = np.array([[0, 2], [1, 0], [0, 1], [1, 2]], dtype=float)
    with pytest.raises(InputError, match="expected answers scored 0"):
        irt.fit(y, "2pl")
    with pytest.raises(InputError, match="use 'graded' or 'gpcm'"):
        irt.fit(y, ["2pl", "2pl"])
    with pytest.raises(InputError, match="one entry per item"):
        irt.fit(y, ["grm"])
    with pytest.raises(InputError, match="expected one of"):
        irt.fit(y, ["grm", "nominal"])
    with pytest.raises(InputError, match="'eap' scoring only"):
        irt.fit(y, "grm", scoring="map")


def test_long_table_with_scores_and_missing_answers():
    rng = np.random.default_rng(8)
    y = simulate("graded", np.full(5, 1.5), np.tile([1.0, -1.0], (5, 1)), rng.normal(size=300), rng)
    long = pd.DataFrame([(f"s{i}", f"q{j}", y[i, j]) for i in range(300) for j in range(5) if (i + j) % 7],
                        columns=["system", "item", "correct"])
    f = irt.fit(long, "grm")
    assert f.converged and f.abilities["n"].min() >= 3
    assert sorted(f.items.index) == [f"q{j}" for j in range(5)]


def test_cli_fits_grm_and_rejects_scores_for_the_2pl(tmp_path):
    from scorebench.cli import cli

    rng = np.random.default_rng(2)
    y = simulate("graded", np.full(4, 1.2), np.tile([0.8, -0.8], (4, 1)), rng.normal(size=200), rng)
    path = tmp_path / "scores.csv"
    pd.DataFrame(y.astype(int), columns=list("abcd")).to_csv(path, index=False)
    out = CliRunner().invoke(cli, ["irt", "fit", str(path), "--model", "grm"])
    assert out.exit_code == 0, out.output
    assert "graded" in out.output and "b2" in out.output
    bad = CliRunner().invoke(cli, ["irt", "fit", str(path), "--model", "2pl"])
    assert bad.exit_code != 0
    assert "expected answers scored 0 (wrong) or 1 (right)" in bad.output


def test_crossprod_standard_errors_match_mirt_on_lsat7_with_equal_slopes():
    # mirt testthat: mirt(LSAT7, 'F = 1-5; CONSTRAIN = (1-5, a1)', SE.type = 'crossprod'): 95% CIs
    # of d printed to 3 decimals, so SE = (upper - lower) / 3.92 is known to about 3e-4.
    lower = np.array([1.67, 0.631, 1.277, 0.367, 1.793])
    upper = np.array([2.067, 0.951, 1.644, 0.676, 2.193])
    f = irt.fit(_data("lsat7"), "pcm")
    np.testing.assert_allclose(f.items["d1"], [1.868, 0.791, 1.461, 0.521, 1.993], atol=1e-3)
    np.testing.assert_allclose(f.items["se_d1"], (upper - lower) / (2 * 1.959964), atol=6e-4)
    assert f.items["se_a"].isna().all()   # slopes are fixed at 1 in the Rasch scaling


def test_score_new_systems_reproduces_the_fitted_eaps():
    rng = np.random.default_rng(12)
    y = simulate("gpcm", np.full(6, 1.3), np.tile([0.6, 0.2, -0.5], (6, 1)), rng.normal(size=400), rng)
    f = irt.fit(pd.DataFrame(y, columns=list("abcdef")), "gpcm")
    again = f.score(pd.DataFrame(y[:10], columns=list("abcdef")))
    np.testing.assert_allclose(again["theta"], f.abilities["theta"].iloc[:10], rtol=1e-10)
    part = f.score(pd.DataFrame(y[:10, :3], columns=list("abc")))
    assert (part["n"] == 3).all() and (part["se"] > again["se"]).all()
    with pytest.raises(InputError, match="fitted with scores 0..3"):
        f.score(pd.DataFrame({"a": [4.0]}))


def test_cli_fit_stats_prints_m2_and_adds_s_x2_columns():
    from scorebench.cli import cli

    path = REF / "lsat7_expanded_1000x5.csv"
    if not path.exists():
        pytest.skip("reference data ../shared/reference/irt is absent")
    out = CliRunner().invoke(cli, ["irt", "fit", str(path), "--fit-stats"])
    assert out.exit_code == 0, out.output
    assert "# M2: 11.938" in out.output and "df: 5" in out.output
    assert "S_X2_p" in out.output and "14.45" in out.output


def test_slope_prior_reaches_the_posterior_mode_and_separation_is_reported():
    from scorebench.irt.polyem import normal_log_weights, onehot, poly_estep

    rng = np.random.default_rng(1)
    y = simulate("graded", np.full(6, 1.5), np.tile([1.0, -1.0], (6, 1)), rng.normal(size=500), rng)
    f = irt.fit(y, "grm", priors={"a": (1.0, 0.3)}, warn=False)
    assert f.converged
    Y, w = onehot(y, f.layout), normal_log_weights(f.nodes)

    def log_post(a):
        return poly_estep(Y, f.layout, a, f.d, f.nodes, w).loglik - 0.5 * (((a - 1.0) / 0.3) ** 2).sum()

    h = 1e-5
    grad = [(log_post(f.a + h * e) - log_post(f.a - h * e)) / (2 * h) for e in np.eye(6)]
    np.testing.assert_allclose(grad, 0.0, atol=5e-3)
    # an item whose scores are perfectly ordered by the latent trait: no finite slope
    th = np.sort(rng.normal(size=200))
    z = np.column_stack([(th > 0) + (th > 1.0), rng.integers(0, 3, 200), (th > -0.5) + (th > 0.5)]).astype(float)
    with pytest.warns(irt.IRTWarning, match="diverge"):
        bad = irt.fit(z, "grm")
    assert not bad.converged


def test_responses_kind_accepts_integer_scores_and_rejects_fractions():
    from scorebench.metrics.irt_kind import extract_responses

    table = pd.DataFrame({"system": ["s1", "s1", "s2"], "item": ["q1", "q2", "q1"], "correct": [0, 3, 2]})
    inputs = extract_responses(table)
    np.testing.assert_array_equal(inputs.arrays["correct"], [0, 3, 2])
    for bad in (-1, 0.5):
        broken = table.assign(correct=[0, bad, 2])
        with pytest.raises(InputError, match="integer scores 0, 1, ..., K"):
            extract_responses(broken)


def test_information_of_a_rasch_scaled_fit_is_on_the_reported_scale():
    y = _data("lsat6")
    pcm, two = irt.fit(y, "pcm"), irt.fit(y, "1pl")
    th = np.array([-1.0, 0.0, 1.0])
    # the 1PL reports theta ~ N(0, 1) with a common slope; pcm reports a = 1 and sd = slope
    want = two.information(th * two.latent_sd / pcm.latent_sd).to_numpy() * (two.latent_sd / pcm.latent_sd) ** 2
    np.testing.assert_allclose(pcm.information(th).to_numpy(), want, rtol=1e-3)
    p = 1 / (1 + np.exp(-(th[None, :] - pcm.items["b1"].to_numpy()[:, None])))
    np.testing.assert_allclose(pcm.information(th).to_numpy(), p * (1 - p), rtol=1e-10)
