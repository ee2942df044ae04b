"""IRT: conformance (LSAT-6), recovery without shrinkage, scoring, anchors, flags, selection."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import scorebench.irt as irt
from scorebench.core.errors import InputError
from scorebench.irt import IRTWarning

REF = Path(__file__).resolve().parents[2].parent / "shared" / "reference" / "irt"
needs_ref = pytest.mark.skipif(not (REF / "lsat6_expanded_1000x5.csv").exists(),
                               reason="reference data ../shared/reference/irt is absent")

# Published ltm(LSAT ~ z1) estimates (README of the reference folder).
LSAT6_B = [-3.3597, -1.3696, -0.2799, -1.8659, -3.1236]
LSAT6_A = [0.8254, 0.7229, 0.8905, 0.6886, 0.6575]
LSAT6_SE_A = [0.2581, 0.1867, 0.2326, 0.1852, 0.2100]
LSAT6_SE_B = [0.8669, 0.3073, 0.0997, 0.4341, 0.8700]


def simulate(n: int, j: int, seed: int, *, c: float = 0.0):
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.5, 2.0, j)
    b = rng.normal(0.0, 1.0, j)
    theta = rng.normal(0.0, 1.0, n)
    p = c + (1 - c) / (1.0 + np.exp(-a * (theta[:, None] - b)))
    return (rng.random((n, j)) < p).astype(float), a, b, theta


def oracle_rmse_a(y: np.ndarray, a: np.ndarray, theta: np.ndarray) -> float:
    """RMSE of the slopes of per-item logistic regressions on the *true* abilities: the floor."""
    from scorebench.irt.em import Priors, mstep
    from scorebench.irt.models import get_model

    j = y.shape[1]
    params = np.tile([1.0, 0.0, 0.0, 1.0], (j, 1))
    free = np.tile(get_model("2pl").free_mask, (j, 1))
    for _ in range(12):
        params = mstep(params, y.T, np.ones_like(y.T), theta, get_model("2pl"), free, Priors())
    return float(np.sqrt(np.mean((params[:, 0] - a) ** 2)))


@pytest.fixture(scope="module")
def lsat6():
    if not (REF / "lsat6_expanded_1000x5.csv").exists():
        pytest.skip("reference data ../shared/reference/irt is absent")
    return pd.read_csv(REF / "lsat6_expanded_1000x5.csv")


@pytest.fixture(scope="module")
def lsat6_fit(lsat6):
    return irt.fit(lsat6, "2pl", tol=1e-7)


# --- conformance -----------------------------------------------------------------------


@needs_ref
def test_lsat6_2pl_matches_published(lsat6_fit):
    items = lsat6_fit.items
    assert lsat6_fit.converged
    np.testing.assert_allclose(items["a"], LSAT6_A, atol=0.01)
    np.testing.assert_allclose(items["b"], LSAT6_B, atol=0.01)
    assert lsat6_fit.loglik == pytest.approx(-2466.653, abs=1e-3)
    assert lsat6_fit.aic == pytest.approx(4953.307, abs=2e-3)
    assert lsat6_fit.bic == pytest.approx(5002.384, abs=2e-3)
    # Observed-information standard errors (Louis, full matrix) against ltm's Hessian.
    np.testing.assert_allclose(items["se_a"], LSAT6_SE_A, atol=0.005)
    np.testing.assert_allclose(items["se_b"], LSAT6_SE_B, atol=0.01)


@needs_ref
def test_lsat6_rasch_matches_mirt(lsat6):
    fit = irt.fit(lsat6, "rasch", tol=1e-7)
    np.testing.assert_allclose(fit.items["d"], [2.730, 0.999, 0.240, 1.306, 2.099], atol=2e-3)
    assert fit.latent_sd**2 == pytest.approx(0.57, abs=0.005)
    assert (fit.items["a"] == 1.0).all()
    one = irt.fit(lsat6, "1pl", tol=1e-7)  # the same model with a common slope instead
    assert one.loglik == pytest.approx(fit.loglik, abs=1e-6)
    assert one.items["a"].iloc[0] == pytest.approx(fit.latent_sd, abs=1e-4)


@needs_ref
def test_lsat6_map_scores_match_ltm_empirical_bayes(lsat6_fit):
    patterns = pd.DataFrame([[0] * 5, [1] * 5], columns=lsat6_fit.items.index)
    scores = lsat6_fit.score(patterns, method="map")
    np.testing.assert_allclose(scores["theta"], [-1.895, 0.606], atol=5e-3)
    np.testing.assert_allclose(scores["se"], [0.795, 0.855], atol=5e-3)


@needs_ref
def test_lsat7_agrees_with_girth():
    girth = pytest.importorskip("girth")
    data = pd.read_csv(REF / "lsat7_expanded_1000x5.csv")
    ours = irt.fit(data, "2pl", tol=1e-7)
    ref = girth.twopl_mml(data.to_numpy().T)
    np.testing.assert_allclose(ours.items["a"], ref["Discrimination"], atol=0.01)
    np.testing.assert_allclose(ours.items["b"], ref["Difficulty"], atol=0.01)


def test_agrees_with_girth_on_simulated_problem():
    girth = pytest.importorskip("girth")
    y, _, _, _ = simulate(600, 15, seed=3)
    ours = irt.fit(y, "2pl", tol=1e-7)
    ref = girth.twopl_mml(y.T.astype(int))
    np.testing.assert_allclose(ours.items["a"], ref["Discrimination"], atol=0.02)
    np.testing.assert_allclose(ours.items["b"], ref["Difficulty"], atol=0.02)


# --- recovery: RMSE and scale, not correlations ------------------------------------------


def _scale_checks(fit, a, b):
    a_hat, b_hat = fit.items["a"].to_numpy(), fit.items["b"].to_numpy()
    linking = np.std(b) / np.std(b_hat)  # mean-sigma linking constant A
    return float(np.sqrt(np.mean((a_hat - a) ** 2))), float(linking), float(a_hat.mean() / a.mean())


def test_recovery_1000x500_no_slope_shrinkage():
    y, a, b, theta = simulate(1000, 500, seed=1)
    fit = irt.fit(y, "2pl")
    assert fit.converged
    rmse_a, linking, ratio = _scale_checks(fit, a, b)
    # At 1,000 systems even known abilities give RMSE(a) ~ 0.115 (sampling error), so the
    # bar is the oracle's floor; a fixed 21-point grid here shrinks slopes by about a third.
    assert rmse_a < 1.2 * oracle_rmse_a(y, a, theta)
    assert abs(linking - 1.0) < 0.03
    assert abs(ratio - 1.0) < 0.05
    assert np.sqrt(np.mean((fit.items["b"] - b) ** 2)) < 0.15


def test_recovery_5000x2000_rmse_and_scale():
    y, a, b, _ = simulate(5000, 2000, seed=1)
    fit = irt.fit(y, "2pl")
    assert fit.converged
    rmse_a, linking, ratio = _scale_checks(fit, a, b)
    assert rmse_a < 0.06
    assert abs(linking - 1.0) < 0.03
    assert abs(ratio - 1.0) < 0.03


def test_jml_recovers_long_tests():
    y, a, b, theta = simulate(500, 200, seed=4)
    fit = irt.fit(y, "2pl", method="jml")
    assert fit.method == "jml" and fit.converged
    rmse_a, linking, _ = _scale_checks(fit, a, b)
    assert rmse_a < 1.3 * oracle_rmse_a(y, a, theta)
    assert abs(linking - 1.0) < 0.05


def test_3pl_recovers_guessing():
    y, a, b, _ = simulate(3000, 30, seed=5, c=0.2)
    fit = irt.fit(y, "3pl")
    assert fit.converged
    assert abs(fit.items["c"].mean() - 0.2) < 0.05
    assert {"c", "se_c"} <= set(fit.items.columns)
    assert np.sqrt(np.mean((fit.items["b"] - b) ** 2)) < 0.3


# --- abilities and scoring new systems ---------------------------------------------------


def test_score_new_systems_against_fixed_items():
    y, _, _, theta = simulate(1200, 40, seed=6)
    frame = pd.DataFrame(y, columns=[f"q{j}" for j in range(40)])
    fit = irt.fit(frame.iloc[:1000], "2pl")
    again = fit.score(frame.iloc[:1000])
    np.testing.assert_allclose(again["theta"], fit.abilities["theta"], atol=1e-10)
    new = fit.score(frame.iloc[1000:])
    assert np.corrcoef(new["theta"], theta[1000:])[0, 1] > 0.9
    assert (new["se"] > 0).all() and (new["n"] == 40).all()
    # A subset of the items (anchor-style short form): larger SEs, same scale.
    short = fit.score(frame.iloc[1000:, :10])
    assert (short["se"] > new["se"]).all() and (short["n"] == 10).all()
    ml = fit.score(frame.iloc[1000:], method="ml")
    perfect = frame.iloc[1000:].sum(axis=1).to_numpy() == 40
    assert np.all(np.isinf(ml["theta"].to_numpy()[perfect]))
    with pytest.raises(InputError, match="not in the fitted model"):
        fit.score(frame.iloc[1000:].rename(columns={"q0": "unknown"}))


def test_anchors_link_a_new_group():
    y, a, b, _ = simulate(1500, 30, seed=7)
    items = [f"q{j}" for j in range(30)]
    base = irt.fit(pd.DataFrame(y, columns=items), "2pl")
    rng = np.random.default_rng(8)
    theta2 = rng.normal(0.5, 1.0, 1500)  # a stronger group
    y2 = (rng.random((1500, 30)) < 1 / (1 + np.exp(-a * (theta2[:, None] - b)))).astype(float)
    anchors = base.items.iloc[:15]
    linked = irt.fit(pd.DataFrame(y2, columns=items), "2pl", anchors=anchors)
    np.testing.assert_allclose(linked.items["a"].iloc[:15], anchors["a"], atol=1e-12)
    assert linked.latent_mean == pytest.approx(0.5, abs=0.12)
    assert (linked.items["se_a"].iloc[:15] == 0).all()
    assert linked.abilities["theta"].mean() == pytest.approx(0.5, abs=0.12)


# --- diagnostics -------------------------------------------------------------------------


def test_negative_slope_is_reported_not_clamped():
    y, a, b, theta = simulate(2000, 20, seed=9)
    rng = np.random.default_rng(10)
    y[:, 0] = rng.random(2000) < 1 / (1 + np.exp(1.5 * theta))  # better systems get it wrong
    with pytest.warns(IRTWarning, match="negative slope"):
        fit = irt.fit(y, "2pl")
    assert fit.items["a"].iloc[0] == pytest.approx(-1.5, abs=0.25)
    assert fit.items["flag"].iloc[0] == "negative_slope"
    assert list(fit.suspicious_items().index) == [0]


def test_non_convergence_is_flagged_and_warned():
    y, _, _, _ = simulate(300, 30, seed=11)
    with pytest.warns(IRTWarning, match="did not converge"):
        fit = irt.fit(y, "2pl", max_iter=2)
    assert not fit.converged
    assert "did not converge" in fit.message


def test_information_functions_and_item_fit():
    y, a, b, _ = simulate(3000, 10, seed=12)
    fit = irt.fit(y, "2pl")
    info = fit.information(fit.items["b"].to_numpy()[:1], items=[0])
    assert info.iloc[0, 0] == pytest.approx(fit.items["a"].iloc[0] ** 2 / 4, rel=1e-10)
    total = fit.test_information([-1.0, 0.0, 1.0])
    np.testing.assert_allclose(total.to_numpy(), fit.information([-1.0, 0.0, 1.0]).sum().to_numpy())
    # Infit/outfit from the EAP abilities, by hand.
    theta = fit.abilities["theta"].to_numpy()
    p = 1 / (1 + np.exp(-fit.items["a"].to_numpy() * (theta[:, None] - fit.items["b"].to_numpy())))
    np.testing.assert_allclose(fit.items["outfit"], (((y - p) ** 2) / (p * (1 - p))).mean(axis=0))
    np.testing.assert_allclose(fit.items["infit"], ((y - p) ** 2).sum(axis=0) / (p * (1 - p)).sum(axis=0))
    assert fit.expected_score([-8.0])[0] < 0.05 < 0.95 < fit.expected_score([8.0])[0]


def test_missing_answers_are_not_scored_as_wrong():
    y, _, _, _ = simulate(800, 20, seed=13)
    rng = np.random.default_rng(14)
    holed = y.copy()
    holed[rng.random(y.shape) < 0.2] = np.nan
    holed[0] = np.nan  # a system with no answers gets the prior
    fit = irt.fit(holed, "2pl")
    assert fit.converged
    assert fit.abilities["theta"].iloc[0] == pytest.approx(0.0, abs=1e-6)
    assert fit.abilities["se"].iloc[0] == pytest.approx(1.0, abs=1e-3)
    zeros = irt.fit(np.nan_to_num(holed), "2pl")
    assert not np.allclose(zeros.items["b"], fit.items["b"], atol=0.05)


def test_long_table_equals_wide_matrix():
    y, _, _, _ = simulate(200, 12, seed=15)
    wide = pd.DataFrame(y, index=[f"s{i}" for i in range(200)], columns=[f"q{j}" for j in range(12)])
    long = wide.stack().rename("correct").reset_index()
    long.columns = ["system", "item", "correct"]
    long = long.sample(frac=1.0, random_state=0)
    a = irt.fit(wide, "2pl")
    b = irt.fit(long, "2pl")
    pd.testing.assert_frame_equal(a.items.sort_index(), b.items.sort_index(), atol=1e-8)


def test_per_topic_models():
    y, _, _, _ = simulate(400, 24, seed=16)
    long = pd.DataFrame(y).stack().rename("correct").reset_index()
    long.columns = ["system", "item", "correct"]
    long["topic"] = np.where(long["item"] < 12, "anatomy", "pharmacology")
    topics = irt.fit_by_topic(long, "2pl")
    assert topics.converged and sorted(topics.fits) == ["anatomy", "pharmacology"]
    profile = topics.wide()
    assert profile.shape == (400, 2)
    assert np.corrcoef(profile["anatomy"], profile["pharmacology"])[0, 1] > 0.5


def test_torch_cpu_path_gives_the_same_estimates():
    pytest.importorskip("torch")
    y, _, _, _ = simulate(500, 30, seed=17)
    ref = irt.fit(y, "2pl")
    out = irt.fit(y, "2pl", device="cpu")
    np.testing.assert_allclose(out.items["a"], ref.items["a"], atol=1e-8)
    assert out.loglik == pytest.approx(ref.loglik, abs=1e-6)


def test_ranking_and_aggregate_method():
    y, _, _, theta = simulate(60, 50, seed=18)
    long = pd.DataFrame(y, index=[f"s{i}" for i in range(60)]).stack().rename("correct").reset_index()
    long.columns = ["system", "item", "correct"]
    fit = irt.fit(long, "2pl")
    board = fit.ranking()
    assert list(board.columns[-2:]) == ["rank", "accuracy_rank"]
    assert board["rank"].is_monotonic_increasing
    from scorebench.aggregate import aggregate

    ranking = aggregate(long, "irt", n_boot=0).to_frame()
    assert ranking.iloc[0]["system"] == board.index[0]


def test_invalid_input_is_refused():
    with pytest.raises(InputError, match="expected answers scored 0"):
        irt.fit(np.array([[0, 1, 2], [1, 0, 1.0]]))
    long = pd.DataFrame({"system": ["a", "a"], "item": ["q", "q"], "correct": [1, 0]})
    with pytest.raises(InputError, match="more than once"):
        irt.fit(long)
    with pytest.raises(InputError, match="model"):
        irt.fit(np.eye(3), "5pl")
    with pytest.raises(InputError, match="jml"):
        irt.fit(simulate(50, 5, 0)[0], "3pl", method="jml")


# --- benchmark compression -------------------------------------------------------------


def test_select_compresses_and_reconstructs_scores():
    y, _, _, _ = simulate(500, 80, seed=19)
    frame = pd.DataFrame(y, columns=[f"q{j}" for j in range(80)])
    sel = irt.select(frame, [8, 20], cv=2, seed=0)
    assert sel.size in (8, 20) and len(sel.items) == sel.size
    assert set(sel.cv["size"]) == {8, 20}
    held = sel.predictions
    # Better than the plain accuracy on a random subset of the same size.
    rng = np.random.default_rng(0)
    naive = [np.sqrt(np.mean((frame.loc[held.index].iloc[:, rng.choice(80, sel.size, replace=False)].mean(axis=1)
                              - held["accuracy"]) ** 2)) for _ in range(20)]
    assert sel.test_rmse < np.mean(naive)
    assert sel.test_rmse < 0.08
    np.testing.assert_allclose(held["accuracy"], frame.loc[held.index].mean(axis=1))
    new = sel.predict(frame.loc[held.index, list(sel.items)])
    np.testing.assert_allclose(new["predicted"], held["predicted"], atol=1e-10)


# --- real LLM response matrices ----------------------------------------------------------


@pytest.mark.skipif(not (REF / "llm").exists(), reason="reference LLM matrices are absent")
def test_real_llm_matrices_converge_or_say_so():
    tiny = pd.read_csv(REF / "llm/atlas_tinybench_calibration/response_matrix_tinywinogrande.csv",
                       index_col=0).iloc[:800]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = irt.fit(tiny, "2pl")
    said = [str(w.message) for w in caught if issubclass(w.category, IRTWarning)]
    assert fit.converged or any("did not converge" in s for s in said)
    mixtral = pd.read_csv(REF / "llm/atlas_openllm_arc_mixtral_family_models_x_items.csv",
                          index_col=0).iloc[:, :100]
    with pytest.warns(IRTWarning, match="did not converge"):
        bad = irt.fit(mixtral, "2pl")
    assert not bad.converged and "diverge" in bad.message
    good = irt.fit(mixtral, "2pl", priors={"a": (1.0, 1.5)}, warn=False)
    assert good.converged
    assert (good.items["a"] < 0).any()  # real data has negative slopes; they are kept


def test_multidimensional_2pl_recovers_two_factors():
    rng = np.random.default_rng(20)
    theta = rng.normal(size=(1500, 2))
    A = np.zeros((12, 2))
    A[:6, 0] = rng.uniform(1.0, 2.0, 6)
    A[6:, 1] = rng.uniform(1.0, 2.0, 6)
    d = rng.normal(size=12)
    y = (rng.random((1500, 12)) < 1 / (1 + np.exp(-(theta @ A.T + d)))).astype(float)
    two = irt.fit_mirt(y, 2, nodes=21, tol=1e-3)
    one = irt.fit_mirt(y, 1, tol=1e-3)
    assert two.converged and one.converged
    assert two.bic < one.bic  # two factors are needed
    loadings = two.items[["a1", "a2"]].to_numpy()
    # Each block loads mainly on its own factor (first item identifies factor 1).
    assert np.all(np.abs(loadings[:6, 0]) > 2 * np.abs(loadings[:6, 1]))
    assert np.all(np.abs(loadings[6:, 1]) > 2 * np.abs(loadings[6:, 0]))
    np.testing.assert_allclose(np.abs(loadings[:6, 0]), A[:6, 0], atol=0.35)
    uni = irt.fit(y, "2pl", warn=False)
    assert one.loglik == pytest.approx(uni.loglik, abs=0.5)


def test_4pl_recovers_both_asymptotes():
    rng = np.random.default_rng(3)
    a, b, theta = rng.uniform(0.8, 2, 30), rng.normal(size=30), rng.normal(size=3000)
    p = 0.15 + (0.9 - 0.15) / (1 + np.exp(-a * (theta[:, None] - b)))
    fit = irt.fit((rng.random(p.shape) < p).astype(float), "4pl")
    assert fit.converged
    assert fit.items["c"].mean() == pytest.approx(0.15, abs=0.05)
    assert fit.items["u"].mean() == pytest.approx(0.9, abs=0.05)
    assert fit.n_params == 4 * 30
