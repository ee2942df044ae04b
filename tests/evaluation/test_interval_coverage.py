"""Interval validity by simulation: coverage of known population values, and every
registered metric's estimate inside its own interval.

Coverage: R independent data sets are drawn from a known truth and evaluated in *one*
``scorebench.evaluate`` call (each data set is one ``system``), so the tests exercise the
engine and the metric's declared interval rule exactly as users get them. With R draws the
Monte Carlo standard error of an empirical coverage near 0.95 is sqrt(0.95 * 0.05 / R):
0.0109 for R = 400 and 0.0154 for R = 200, so the band [0.92, 0.98] is about +-2.8 and
+-1.9 standard errors wide. Seeds are fixed, so the outcome is deterministic.

For set-level estimators biased at finite n (plug-in FID, k-NN precision/recall/coverage,
Vendi), the centred rules target the estimator's expectation at the sample size used; the
FID test uses a regime where that O(1/n) bias is small next to the spread, and the
k-NN/Vendi tests take as "population value" the mean of the estimator over 500 further
independent draws (its Monte Carlo error is stated beside each).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import scorebench
from scorebench.core.errors import InputError
from scorebench.core.stats import MIN_BOOT

LOW, HIGH = 0.92, 0.98
CI = 0.95


def _coverage(scores: pd.DataFrame, truth: float) -> float:
    return float(((scores.ci_low <= truth) & (truth <= scores.ci_high)).mean())


def _check(scores: pd.DataFrame, truth: float, draws: int) -> None:
    cover = _coverage(scores, truth)
    mc_se = math.sqrt(CI * (1 - CI) / draws)
    assert len(scores) == draws
    assert LOW <= cover <= HIGH, f"coverage {cover:.3f} of {truth:.4f} (Monte Carlo s.e. {mc_se:.4f}, R={draws})"


def _systems(draws: int, n: int) -> np.ndarray:
    return np.repeat([f"d{r:04d}" for r in range(draws)], n)


# --- per-row scoring rules: percentile bootstrap of the mean ----------------------------------


def _binary(draws: int, n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    p = rng.uniform(size=draws * n)
    return pd.DataFrame({"system": _systems(draws, n), "y": (rng.uniform(size=p.size) < p).astype(int), "p": p})


@pytest.mark.parametrize("name, truth", [
    ("brier_score", 1.0 / 6.0),  # E[p(1-p)] for calibrated p ~ U(0, 1)
    ("log_score", 0.5),          # E[-p log p - (1-p) log(1-p)] = 2 * 1/4
])
def test_binary_scoring_rule_coverage(name, truth):
    draws = 400
    scores = scorebench.evaluate(_binary(draws, 200, seed=1), name, n_boot=400, seed=0)
    _check(scores, truth, draws)


def test_crps_normal_coverage():
    draws, n = 400, 100
    rng = np.random.default_rng(2)
    table = pd.DataFrame({"system": _systems(draws, n), "y": rng.normal(size=draws * n), "mu": 0.0, "sigma": 1.0})
    scores = scorebench.evaluate(table, "crps_normal", n_boot=400, seed=0)
    _check(scores, 1.0 / math.sqrt(math.pi), draws)  # E CRPS(N(0,1), Y ~ N(0,1)) = 1/sqrt(pi)


# --- binned calibration: centred bootstrap ------------------------------------------------------


def _miscalibrated(draws: int, n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    p = rng.uniform(size=draws * n)
    return pd.DataFrame({"system": _systems(draws, n), "y": (rng.uniform(size=p.size) < p**2).astype(int), "p": p})


def _bin_gaps(n_bins: int = 15) -> np.ndarray:
    # p ~ U(0,1), P(y=1 | p) = p^2: in bin k (midpoint m, width w) E[y] - E[p] = m^2 + w^2/12 - m
    w = 1.0 / n_bins
    m = (np.arange(n_bins) + 0.5) * w
    return m**2 + w**2 / 12 - m


def test_l2_calibration_error_coverage():
    draws = 400
    scores = scorebench.evaluate(_miscalibrated(draws, 500, seed=3), "l2_calibration_error", n_boot=400, seed=0)
    truth = math.sqrt(np.mean(_bin_gaps() ** 2))  # equal-mass bins of uniform p: weight 1/15 each
    _check(scores, truth, draws)


def test_ece_coverage_where_the_bins_are_miscalibrated():
    draws = 400
    scores = scorebench.evaluate(_miscalibrated(draws, 500, seed=4), "ece", n_boot=400, seed=0)
    _check(scores, float(np.mean(np.abs(_bin_gaps()))), draws)


# --- OOD, ranking, agreement ------------------------------------------------------------------


def test_auroc_coverage():
    draws, n = 300, 100
    rng = np.random.default_rng(5)
    is_ood = np.tile(np.r_[np.ones(n // 2), np.zeros(n // 2)], draws).astype(int)
    table = pd.DataFrame({"system": _systems(draws, n), "is_ood": is_ood, "score": rng.normal(size=draws * n) + is_ood})
    scores = scorebench.evaluate(table, "auroc", n_boot=200, seed=0)
    _check(scores, float(stats.norm.cdf(1 / math.sqrt(2))), draws)  # P(X_ood > X_id), unit shift


def _ranking(draws: int, queries: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    docs = 20
    qid = np.repeat([f"q{q}" for q in range(draws * queries)], docs)
    docid = np.tile([f"x{d}" for d in range(docs)], draws * queries)
    rel = rng.integers(0, 3, qid.size) * (rng.uniform(size=qid.size) < 0.4)
    run = pd.DataFrame({"system": np.repeat([f"d{r:04d}" for r in range(draws)], queries * docs), "qid": qid,
                        "docid": docid, "score": rel + rng.normal(scale=1.5, size=qid.size)})
    return run, pd.DataFrame({"qid": qid, "docid": docid, "relevance": rel})


def _diversity(draws: int, queries: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Runs of ``draws`` systems over the same queries, and qrels with 3 subtopics a query."""
    rng = np.random.default_rng(seed)
    qid = np.repeat([f"q{q}" for q in range(queries)], 3 * 20)
    qrels = pd.DataFrame({"qid": qid, "subtopic": np.tile(np.repeat(["1", "2", "3"], 20), queries),
                          "docid": np.tile([f"x{d}" for d in range(20)], 3 * queries),
                          "relevance": (rng.uniform(size=qid.size) < 0.2).astype(int)})
    n = draws * queries * 20
    run = pd.DataFrame({"system": np.repeat([f"d{r:04d}" for r in range(draws)], queries * 20),
                        "qid": np.tile(np.repeat([f"q{q}" for q in range(queries)], 20), draws),
                        "docid": np.tile([f"x{d}" for d in range(20)], draws * queries), "score": rng.normal(size=n)})
    return run, qrels


def test_ndcg_at_10_coverage():
    draws = 300
    run, qrels = _ranking(draws, 30, seed=6)
    scores = scorebench.evaluate(run, "ndcg@10", qrels=qrels, n_boot=400, seed=0)
    big_run, big_qrels = _ranking(1, 20_000, seed=7)  # population mean: s.e. ~ 0.001
    truth = float(scorebench.evaluate(big_run, "ndcg@10", qrels=big_qrels, n_boot=0)["value"].item())
    _check(scores, truth, draws)


def test_kendall_tau_coverage():
    draws, n = 200, 100
    rng = np.random.default_rng(8)
    z = rng.normal(size=(2, draws * n))
    table = pd.DataFrame({"system": _systems(draws, n), "y_true": z[0], "y_pred": 0.5 * z[0] + math.sqrt(0.75) * z[1]})
    scores = scorebench.evaluate(table, "kendall_tau", n_boot=100, seed=0)
    _check(scores, 2 / math.pi * math.asin(0.5), draws)  # Greiner's relation, rho = 0.5


# --- generative: half-sampling of both samples --------------------------------------------------


def _features(draws: int, n: int, shift: float, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    real = rng.normal(size=(draws, n, 2))
    fake = rng.normal(size=(draws, n, 2)) + np.array([shift, 0.0])
    task = np.repeat([f"t{r:04d}" for r in range(draws)], n)
    frames = [pd.DataFrame({"system": name, "task": task, "f0": x[..., 0].ravel(), "f1": x[..., 1].ravel()})
              for name, x in (("real", real), ("gen", fake))]
    return pd.concat(frames, ignore_index=True)


@pytest.mark.slow
def test_fid_coverage():
    draws = 200
    scores = scorebench.evaluate(_features(draws, 400, 0.5, seed=9), "fid", n_boot=40, seed=0)
    _check(scores, 0.25, draws)  # |mu_1 - mu_2|^2 with equal covariances; O(1/n) bias ~ 0.01


@pytest.mark.slow
@pytest.mark.parametrize("name", ["precision", "recall", "coverage", "vendi_score"])
def test_knn_and_vendi_coverage_of_the_expectation_at_n(name):
    """k-NN metrics: symmetric half-sampling rule; Vendi: normal half-sampling rule.

    The second feature is scaled by 0.5 so that the Vendi score of these 2-D features is not
    at its maximum (2, isotropic directions), where its first derivative vanishes, its
    variance is O(1/n^2) and every half-sampling rule over-covers (0.99).
    """
    draws, n = 400, 100
    scores = scorebench.evaluate(_scaled(_features(draws, n, 0.3, seed=10)), name, n_boot=40, seed=0)
    truth_draws = scorebench.evaluate(_scaled(_features(1000, n, 0.3, seed=11)), name, n_boot=0)["value"]
    # the expectation at this n, with Monte Carlo error sd / sqrt(1000) (about 1/16 of an interval)
    _check(scores, float(truth_draws.mean()), draws)


def _scaled(features: pd.DataFrame) -> pd.DataFrame:
    return features.assign(f1=features["f1"] * 0.5)


def test_half_sampling_rules_are_symmetric_or_centred_and_clipped_to_bounds():
    reps = np.array([0.70, 0.90, 0.95, 0.97, 0.98, 0.99, 1.0, 1.0])
    low, high = scorebench.core.stats.interval_bounds(0.97, reps, 0.9, "half_sampling_symmetric", (0.0, 1.0))
    c_low, c_high = scorebench.core.stats.interval_bounds(0.97, reps, 0.9, "half_sampling")
    assert high == 1.0 and low == pytest.approx(0.97 - (c_high - c_low) / 2)
    low, high = scorebench.core.stats.interval_bounds(1.5, reps, 0.95, "half_sampling_normal")
    half = stats.t.ppf(0.975, reps.size - 1) * reps.std(ddof=1)
    assert (low, high) == pytest.approx((1.5 - half, 1.5 + half))
    assert scorebench.core.stats.interval_bounds(0.5, reps, 0.95, "percentile", (0.0, 0.8))[1] == 0.8


# --- every registered metric: the estimate lies in its own interval ------------------------------


def _tables(draws: int, n: int, seed: int) -> dict[str, tuple[pd.DataFrame, dict]]:
    rng = np.random.default_rng(seed)
    sys = _systems(draws, n)
    N = draws * n
    p = rng.uniform(0.02, 0.98, N)
    P = rng.dirichlet(np.ones(3), N)
    y = rng.normal(size=N)
    run, qrels = _ranking(draws, 8, seed)
    ens = {f"m{j}": y + rng.normal(size=N) for j in range(5)}
    tables = {
        "binary": (pd.DataFrame({"system": sys, "y": (rng.uniform(size=N) < p).astype(int), "p": p}), {}),
        "multiclass": (pd.DataFrame({"system": sys, "y": rng.integers(0, 3, N),
                                     **{f"p_{k}": P[:, k] for k in range(3)}}), {}),
        "ensemble": (pd.DataFrame({"system": sys, "y": y, **ens}), {}),
        "weighted_ensemble": (pd.DataFrame({"system": sys, "y": y, **ens,
                                            **{f"w{j}": rng.uniform(0.5, 2.0, N) for j in range(5)}}), {}),
        "quantile": (pd.DataFrame({"system": sys, "y": y, "q0.1": -1.3 + y * 0.3, "q0.5": y * 0.3,
                                   "q0.9": 1.3 + y * 0.3}), {}),
        "interval": (pd.DataFrame({"system": sys, "y": y, "lower": -1.5 + 0.2 * y, "upper": 1.5 + 0.2 * y}), {}),
        "multivariate": (pd.DataFrame({"system": sys, "y.0": y, "y.1": -y + rng.normal(size=N),
                                       **{f"m{j}.{d}": rng.normal(size=N) for j in range(4) for d in range(2)}}), {}),
        "weighted_multivariate": (pd.DataFrame({"system": sys, "y.0": y, "y.1": -y + rng.normal(size=N),
                                                **{f"m{j}.{d}": rng.normal(size=N) for j in range(4) for d in range(2)},
                                                **{f"w{j}": rng.uniform(0.5, 2.0, N) for j in range(4)}}), {}),
        "parametric": (pd.DataFrame({"system": sys, "y": p, "mu": 0.5, "sigma": 0.3, "a": 2.0, "b": 2.0,
                                     "rate": 1.5, "shape": 0.5, "s": 0.2, "mulog": -0.7, "sigmalog": 0.5,
                                     "df": 5.0, "low": 0.0, "high": 1.0, "mu0": 0.3, "sigma0": 0.2, "w0": 0.5,
                                     "mu1": 0.7, "sigma1": 0.2, "w1": 0.5, "scale1": 0.2, "scale2": 0.4,
                                     "mass": 0.1, "shift": 0.2, "mean": 2.0, "n": 5, "prob": 0.4, "m": 6,
                                     "k": 4}), {}),
        "rating": (pd.DataFrame({"system": sys, "y_true": rng.integers(1, 6, N), "y_pred": rng.integers(1, 6, N),
                                 "group": np.tile(np.arange(n) % 10, draws)}), {}),
        "ood": (pd.DataFrame({"system": sys, "is_ood": rng.integers(0, 2, N), "score": rng.normal(size=N)}), {}),
        "listwise": (pd.DataFrame({"system": sys, "qid": np.tile(np.arange(n) // 5, draws), "score": y,
                                   "label": rng.integers(0, 3, N)}), {}),
        "embeddings": (pd.DataFrame({"system": sys, "label": np.tile(np.arange(n) % 5, draws),
                                     "f0": y, "f1": rng.normal(size=N)}), {}),
        "ranking": (run, {"qrels": qrels}),
        "diversity": (lambda r, q: (r, {"qrels": q}))(*_diversity(draws, 8, seed)),
        "prefs": (lambda r, q: (r, {"qrels": q.drop(columns="subtopic").drop_duplicates(["qid", "docid"])}))(
            *_diversity(draws, 8, seed)),
        "correct": (pd.DataFrame({"system": sys, "id": np.tile(np.arange(n), draws),
                                  "correct": (rng.uniform(size=N) < p).astype(int)}), {}),
        "samples": (pd.DataFrame({"system": sys, "id": np.tile(np.arange(n), draws), "acc": y}), {}),
    }
    subsets = np.array(["alpacaeval-easy", "mt-bench-hard", "donotanswer", "hep-go", "math-prm"])
    tables["preferences"] = (pd.DataFrame({"system": sys, "subset": subsets[np.tile(np.arange(n) % 5, draws)],
                                           "score_chosen": y + 0.5, "score_rejected": rng.normal(size=N),
                                           "len_chosen": rng.integers(50, 500, N),
                                           "len_rejected": rng.integers(50, 500, N)}), {})
    verdicts = np.array(["model_1", "model_2", "tie"])
    tables["judgments"] = (pd.DataFrame({"system": sys, "question_id": np.tile(np.arange(n), draws),
                                         "model_1": "a", "model_2": "b", "g1_winner": verdicts[rng.integers(0, 3, N)],
                                         "g2_winner": verdicts[rng.integers(0, 3, N)],
                                         "len_1": rng.integers(50, 500, N), "len_2": rng.integers(50, 500, N)}), {})
    items = np.tile(np.arange(n) // 5, draws)  # attempts: n // 5 items of 5 attempts per system
    answer = rng.choice(3, N, p=[0.5, 0.3, 0.2])
    tables["attempts"] = (pd.DataFrame({"system": sys, "item": items, "attempt": np.tile(np.arange(n) % 5, draws),
                                        "answer": answer, "correct": (answer == 0).astype(int)}), {})
    truth = (rng.uniform(size=N) < p).astype(float)
    judge = np.where(rng.uniform(size=N) < 0.95, truth, 1 - truth)
    tables["judged"] = (pd.DataFrame({"system": sys, "judge": judge,
                                      "human": np.where(np.tile(np.arange(n) % 5 != 0, draws), truth, np.nan),
                                      "stratum": np.tile(np.arange(n) % 2, draws)}), {})
    feats = _features(draws, 40, 0.3, seed)
    feats["s0"], feats["s1"] = feats["f0"] * 0.5, feats["f1"] - feats["f0"]
    feats["p_a"] = rng.uniform(0.1, 0.9, len(feats))
    feats["p_b"] = 1.0 - feats["p_a"]
    tables["features"] = (feats, {})
    return tables


# Parametric rules that need a callable (quadrature) or an outcome on their support (count
# and GPD/GEV log scores are +inf for y off their support here): covered by their own tests.
# alpaca_lc_winrate refits alpaca-eval's GLM in every bootstrap round (about a minute per 1,000 rounds):
# its interval is checked in tests/metrics/reward/test_alpaca_lc.py and its coverage in benchmarks/.
_NEEDS_OWN_TABLE = {"crps_quadrature", "log_score_poisson", "log_score_negbinom", "log_score_binomial",
                    "log_score_hypergeometric", "log_score_gpd", "log_score_gev", "alpaca_lc_winrate"}


def test_every_registered_metric_lies_inside_its_own_interval():
    """At least 99% of draws: percentile-rule metrics over 100 draws (at most 1 miss); the
    centred rules (``centered_percentile``, ``half_sampling``) contain the estimate by
    construction, checked over 10 draws each with the fewest rounds accepted."""
    many, few = _tables(100, 40, seed=12), _tables(10, 40, seed=13)
    checked = []
    for record in scorebench.core.registry.all_metrics():
        if record.needs_torch or record.name in _NEEDS_OWN_TABLE:
            continue  # the torch-backed losses are covered by their own tests
        if record.interval_method == "none":
            continue  # no interval by declaration (the mdp distances: tests/metrics/reward/test_reward_mdp_kind.py)
        percentile = record.interval_method == "percentile"
        table, options = (many if percentile else few)[record.kind]
        # metrics with a required parameter (rewardbench_section's default None = the group's one section)
        name = {"threshold_brier_score": "threshold_brier_score(threshold=0.5)",
                "rewardbench_section": "rewardbench_section(section=chat)"}.get(record.name, record.name)
        name = name.replace("@k", "@5").replace("@r", "@0.5").replace("@m", "@1.5").replace("@column", "@acc")
        scores = scorebench.evaluate(table, name, n_boot=MIN_BOOT * (5 if percentile else 1), seed=0,
                                     nan_policy="omit", **options)
        scores = scores[np.isfinite(scores.value)]
        inside = (scores.ci_low <= scores.value + 1e-12) & (scores.value - 1e-12 <= scores.ci_high)
        assert len(scores) >= 0.9 * table["system"].nunique(), name
        assert inside.mean() >= 0.99, f"{name}: estimate inside its interval in {inside.mean():.3f} of draws"
        checked.append(name)
    assert len(checked) >= 60


def test_too_few_bootstrap_rounds_are_refused_and_zero_means_no_interval():
    table = _binary(1, 50, seed=14)
    with pytest.raises(InputError, match=f"at least {MIN_BOOT}"):
        scorebench.evaluate(table, "brier_score", n_boot=1)
    none = scorebench.evaluate(table, "brier_score", n_boot=0)
    assert none.ci_low.isna().all() and none.attrs["interval"] == "none"


def test_interval_rule_is_recorded_per_metric():
    table = _binary(1, 200, seed=15)
    scores = scorebench.evaluate(table, ["brier_score", "ece"], n_boot=50)
    assert scores.attrs["interval_methods"] == {"brier_score": "percentile", "ece": "centered_percentile"}
    assert scorebench.metric("fid").interval_method == "half_sampling"
