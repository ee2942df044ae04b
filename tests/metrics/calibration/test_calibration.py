"""Calibration family: reference values (scikit-learn), exact toy values, properties, errors."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.calibration import calibration_curve
from sklearn.metrics import brier_score_loss

import scorebench
from scorebench.core.errors import InputError
from scorebench.metrics.calibration import (
    adaptive_ece, balance_score, balance_score_top_label, brier_decomposition, brier_reliability,
    brier_resolution, classwise_ece, ece, ece_top_label, mce, reliability_diagram, skill_score, smooth_ece,
    smooth_ece_at,
)


def _calibrated(n, seed, power=1.0):
    rng = np.random.default_rng(seed)
    p = rng.uniform(size=n)
    y = (rng.uniform(size=n) < p ** power).astype(np.float64)
    return y, p


def _ece_loop(y, p, edges):
    """Reference ECE by an explicit loop over bins (right-closed, first bin closed)."""
    total = 0.0
    for k in range(len(edges) - 1):
        lo, hi = edges[k], edges[k + 1]
        inside = (p <= hi) & ((p > lo) if k > 0 else (p >= lo)) if k < len(edges) - 2 else (p > lo) if k > 0 \
            else np.ones_like(p, bool)
        if inside.any():
            total += inside.sum() * abs(y[inside].mean() - p[inside].mean())
    return total / len(p)


# --- scikit-learn reference values ----------------------------------------------------


@pytest.mark.parametrize("binning", ["uniform", "quantile"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_reliability_diagram_matches_sklearn_on_nonempty_bins(binning, seed):
    y, p = _calibrated(500, seed, power=1.3)
    d = reliability_diagram(y, p, n_bins=12, binning=binning)
    prob_true, prob_pred = calibration_curve(y, p, n_bins=12, strategy=binning)
    keep = d.count > 0
    np.testing.assert_allclose(d.observed_frequency[keep], prob_true, rtol=1e-12, atol=0)
    np.testing.assert_allclose(d.mean_predicted[keep], prob_pred, rtol=1e-12, atol=0)
    assert d.count.sum() == len(y)


def test_reliability_diagram_keeps_empty_bins_that_sklearn_drops():
    rng = np.random.default_rng(3)
    p = np.concatenate([rng.uniform(0.0, 0.2, 100), rng.uniform(0.8, 1.0, 100)])
    y = (rng.uniform(size=200) < p).astype(float)
    prob_true, _ = calibration_curve(y, p, n_bins=10)
    d = reliability_diagram(y, p, n_bins=10)
    assert len(prob_true) == 4                      # sklearn: only the non-empty bins
    assert len(d.count) == 10                       # scorebench: every bin, aligned with its edges
    assert d.count.tolist()[2:8] == [0] * 6
    assert np.isnan(d.observed_frequency[2:8]).all() and np.isnan(d.ci_low[2:8]).all()
    frame = d.to_frame()
    assert list(frame.columns) == ["bin", "lower", "upper", "count", "mean_predicted", "observed_frequency",
                                   "ci_low", "ci_high"]
    np.testing.assert_allclose(frame["lower"], np.linspace(0, 1, 11)[:-1])
    assert math.isclose(d.ece, ece(y, p, n_bins=10), rel_tol=1e-12)


@pytest.mark.parametrize("binning", ["uniform", "quantile"])
def test_ece_matches_sklearn_bins_and_loop(binning):
    y, p = _calibrated(800, 5, power=0.7)
    prob_true, prob_pred = calibration_curve(y, p, n_bins=10, strategy=binning)
    counts = reliability_diagram(y, p, n_bins=10, binning=binning).count
    expected = np.sum(counts[counts > 0] / len(y) * np.abs(prob_true - prob_pred))
    assert math.isclose(ece(y, p, n_bins=10, binning=binning), expected, rel_tol=1e-12)
    if binning == "uniform":
        assert math.isclose(ece(y, p, n_bins=10), _ece_loop(y, p, np.linspace(0, 1, 11)), rel_tol=1e-12)
    assert math.isclose(mce(y, p, n_bins=10, binning=binning), np.max(np.abs(prob_true - prob_pred)),
                        rel_tol=1e-12)


def test_brier_decomposition_brier_matches_sklearn():
    y, p = _calibrated(1000, 7, power=1.5)
    d = brier_decomposition(y, p, n_bins=10)
    assert math.isclose(d.brier, brier_score_loss(y, p), rel_tol=1e-12)


# --- issue 13 item 6: equal-mass bins put a forecast on a quantile in the bin below ----------


def _equal_mass_ids(p, n_bins):
    """Bin of each distinct forecast from its rank r: the k with h_(k-1) < r <= h_k, h_k = k(n-1)/B."""
    ranks = np.argsort(np.argsort(p, kind="stable"), kind="stable")
    # smallest k with r * B <= k * (n - 1): ceil(r B / (n - 1)), rank 0 in bin 1
    k = -(-(ranks * n_bins) // (len(p) - 1))
    return np.maximum(k, 1) - 1


@pytest.mark.parametrize("n, n_bins", [(16, 15), (11, 10), (101, 10), (31, 15), (50, 7)])
def test_equal_mass_bins_are_equal_when_forecasts_sit_on_the_quantiles(n, n_bins):
    p = np.linspace(0.0, 1.0, n)
    y = (np.arange(n) % 3 == 0).astype(float)
    ids = _equal_mass_ids(p, n_bins)
    d = reliability_diagram(y, p, n_bins=n_bins, binning="quantile")
    np.testing.assert_array_equal(d.count, np.bincount(ids, minlength=n_bins))
    # equal mass: (n - 1) / B per bin, rounded, plus the minimum in the first bin
    inner = d.count.copy()
    inner[0] -= 1
    assert inner.max() - inner.min() <= 1 and (d.count > 0).all()
    gaps = np.array([abs(y[ids == k].mean() - p[ids == k].mean()) for k in range(n_bins)])
    sizes = np.bincount(ids, minlength=n_bins)
    assert math.isclose(ece(y, p, n_bins=n_bins, binning="quantile"), np.sum(sizes / n * gaps), rel_tol=1e-12)
    assert math.isclose(mce(y, p, n_bins=n_bins, binning="equal_mass"), gaps.max(), rel_tol=1e-12)
    dec = brier_decomposition(y, p, n_bins=n_bins, binning="quantile")
    assert dec.n_bins == n_bins
    rel = np.sum(sizes * np.array([(p[ids == k].mean() - y[ids == k].mean()) ** 2 for k in range(n_bins)])) / n
    assert math.isclose(dec.reliability, rel, rel_tol=1e-12)


def test_equal_mass_issue_example_and_the_scikit_learn_difference():
    p = np.linspace(0.0, 1.0, 16)
    y = (np.arange(16) % 2).astype(float)
    d = reliability_diagram(y, p, n_bins=15, binning="quantile")
    assert d.count.tolist() == [2] + [1] * 14      # was [2,1,1,1,0,2,0,2,1,0,2,1,1,0,2]
    # the edges are the forecasts themselves (numpy.percentile lands an ulp below some)
    np.testing.assert_array_equal(d.upper[:-1], p[1:-1])
    # scikit-learn's calibration_curve(strategy="quantile") uses numpy.percentile at
    # linspace(0, 1, B + 1) * 100 and has the defect: four bins come out empty, so it
    # returns 11 points where scorebench has 15 non-empty equal-mass bins.
    prob_true, prob_pred = calibration_curve(y, p, n_bins=15, strategy="quantile")
    assert len(prob_true) == 11 and (d.count > 0).sum() == 15
    np.testing.assert_allclose(d.mean_predicted[1:], p[2:], rtol=1e-15)
    assert not np.allclose(np.sort(prob_pred), np.sort(d.mean_predicted)[:11])


def test_equal_mass_edges_equal_numpy_percentile_up_to_an_ulp():
    from scorebench.metrics.calibration._common import equal_mass_edges
    rng = np.random.default_rng(11)
    for n in (1, 2, 5, 16, 1001):
        for n_bins in (1, 3, 15, 40):
            p = rng.uniform(size=n)
            p[::3] = np.round(p[::3], 1)           # ties
            np.testing.assert_allclose(equal_mass_edges(p, n_bins),
                                       np.percentile(p, np.linspace(0, 1, n_bins + 1) * 100), rtol=0, atol=1e-15)


# --- exact toy values -----------------------------------------------------------------


def test_toy_values():
    y = [0, 1, 1, 1]
    p = [0.2, 0.6, 0.7, 0.9]
    # bins [0, .5] and (.5, 1]: gaps 0.2 (1 forecast) and |3 - 2.2| / 3 (3 forecasts)
    assert math.isclose(ece(y, p, n_bins=2), (0.2 + 0.8) / 4)
    assert math.isclose(mce(y, p, n_bins=2), 0.8 / 3)
    assert math.isclose(ece(y, p, n_bins=1), abs(3 - 2.4) / 4)
    # equal-count groups {0.2, 0.6}, {0.7, 0.9}
    assert math.isclose(adaptive_ece(y, p, n_bins=2), (abs(1 - 0.8) + abs(2 - 1.6)) / 4)
    # forecast on an interior edge goes to the lower bin
    assert reliability_diagram([1, 0], [0.5, 0.5], n_bins=2).count.tolist() == [2, 0]


def test_edges_and_extremes():
    assert ece([1, 0], [1.0, 0.0]) == 0.0
    assert ece([0, 1], [1.0, 0.0]) == 1.0
    assert mce([0, 1], [1.0, 0.0]) == 1.0
    assert smooth_ece([1, 1, 0, 0], [1.0, 1.0, 0.0, 0.0]) <= 1e-4


def test_wilson_interval_toy():
    d = reliability_diagram([1, 1, 1, 0], [0.9, 0.9, 0.9, 0.9], n_bins=1, ci=0.95)
    z = 1.959963984540054
    n, phat = 4, 0.75
    centre = (phat + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(phat * (1 - phat) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert math.isclose(d.ci_low[0], centre - half, rel_tol=1e-12)
    assert math.isclose(d.ci_high[0], centre + half, rel_tol=1e-12)


def test_murphy_toy_and_distinct_values_exact():
    d = brier_decomposition([0, 1, 1, 0], [0.2, 0.8, 0.8, 0.2], n_bins=None)
    assert (d.reliability, d.resolution, d.uncertainty) == pytest.approx((0.04, 0.25, 0.25), abs=1e-15)
    assert d.within_bin_variance == 0 and d.within_bin_covariance == 0 and d.n_bins == 2
    # forecasts on tenths (a few distinct values): REL - RES + UNC is exactly the Brier score
    rng = np.random.default_rng(11)
    p = rng.integers(0, 11, size=2000) / 10
    y = (rng.uniform(size=2000) < p ** 1.2).astype(float)
    d = brier_decomposition(y, p, n_bins=None)
    assert d.binning == "distinct" and d.within_bin_variance == 0.0
    assert abs(d.within_bin_covariance) < 1e-15
    assert math.isclose(d.reliability - d.resolution + d.uncertainty, d.brier, rel_tol=1e-12)
    assert math.isclose(brier_reliability(y, p, n_bins=None), d.reliability)
    assert math.isclose(brier_resolution(y, p, n_bins=None), d.resolution)


def test_murphy_binned_needs_within_bin_terms():
    y, p = _calibrated(3000, 13, power=2.0)
    d = brier_decomposition(y, p, n_bins=5)
    assert d.within_bin_variance > 1e-3
    assert not math.isclose(d.reliability - d.resolution + d.uncertainty, d.brier, rel_tol=1e-6)
    assert math.isclose(d.reliability - d.resolution + d.uncertainty + d.residual, d.brier, rel_tol=1e-12)


def test_balance_score_definition():
    y = np.array([1, 0, 0, 1, 1])
    p = np.array([0.8, 0.3, 0.9, 0.4, 0.5])
    expected = [1 - 0.8, 0.3, -0.9, -(1 - 0.4), 1 - 0.5]
    np.testing.assert_allclose(balance_score(y, p), expected, rtol=1e-15)
    accuracy = np.mean((p >= 0.5) == y)
    assert math.isclose(balance_score(y, p).mean(), accuracy - np.maximum(p, 1 - p).mean())


def test_balance_score_expectation_is_signed_calibration_gap():
    rng = np.random.default_rng(17)
    p = rng.uniform(size=200_000)
    y = (rng.uniform(size=200_000) < p).astype(float)
    assert abs(balance_score(y, p).mean()) < 0.005
    over = np.clip(0.5 + 1.5 * (p - 0.5), 0, 1)          # over-confident: negative
    assert balance_score(y, over).mean() < -0.05
    under = 0.5 + 0.5 * (p - 0.5)                         # under-confident: positive
    assert balance_score(y, under).mean() > 0.05


def test_multiclass_variants():
    rng = np.random.default_rng(19)
    logits = rng.normal(size=(400, 4))
    P = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    y = np.array([rng.choice(4, p=row) for row in P])
    correct = (P.argmax(1) == y).astype(float)
    conf = P.max(1)
    assert math.isclose(ece_top_label(y, P, n_bins=10), ece(correct, conf, n_bins=10), rel_tol=1e-12)
    expected = np.mean([ece((y == k).astype(float), P[:, k], n_bins=10) for k in range(4)])
    assert math.isclose(classwise_ece(y, P, n_bins=10), expected, rel_tol=1e-12)
    np.testing.assert_allclose(balance_score_top_label(y, P), correct - conf)
    # two classes: class-wise ECE equals the binary ECE (mirrored bins, no forecast on an edge)
    p = rng.uniform(0.01, 0.99, 300)
    yb = (rng.uniform(size=300) < p).astype(int)
    P2 = np.column_stack([1 - p, p])
    assert math.isclose(classwise_ece(yb, P2, n_bins=10), ece(yb, p, n_bins=10), rel_tol=1e-9)
    np.testing.assert_allclose(balance_score_top_label(yb, P2), balance_score(yb, p), atol=1e-15)


# --- smooth ECE -----------------------------------------------------------------------


def _smooth_ece_direct(y, p, sigma, grid=4001):
    t = np.linspace(0.0, 1.0, grid)[:, None]
    m = np.arange(-3, 4)[None, None, :] * 2.0
    d1 = (t[..., None] - p[None, :, None] - m) / sigma
    d2 = (t[..., None] + p[None, :, None] - m) / sigma
    K = (np.exp(-0.5 * d1 ** 2) + np.exp(-0.5 * d2 ** 2)).sum(-1) / (sigma * math.sqrt(2 * math.pi))
    h = np.abs(K @ (y - p) / len(p))
    return float(np.trapezoid(h, t[:, 0]))


@pytest.mark.parametrize("sigma", [0.03, 0.1, 0.4])
def test_smooth_ece_matches_direct_quadrature(sigma):
    y, p = _calibrated(100, 23, power=1.8)
    assert math.isclose(smooth_ece_at(y, p, bandwidth=sigma), _smooth_ece_direct(y, p, sigma), rel_tol=2e-4)


def test_smooth_ece_fixed_point_and_monotone():
    y, p = _calibrated(2000, 29, power=1.6)
    value = smooth_ece(y, p)
    assert math.isclose(smooth_ece_at(y, p, bandwidth=value), value, rel_tol=1e-6)
    values = [smooth_ece_at(y, p, bandwidth=s) for s in (0.01, 0.03, 0.1, 0.3, 1.0)]
    assert all(a >= b - 1e-9 for a, b in zip(values, values[1:]))
    assert smooth_ece(y, p, bandwidth=0.1) == smooth_ece_at(y, p, bandwidth=0.1)


def test_constant_residual_smooth_ece_is_exact():
    # every residual is 0.5: the smoothed residual integrates to exactly 0.5 at any bandwidth
    assert math.isclose(smooth_ece([1] * 5, [0.5] * 5), 0.5, rel_tol=1e-12)
    assert math.isclose(smooth_ece_at([0] * 3, [0.25] * 3, bandwidth=0.05), 0.25, rel_tol=1e-12)


def test_calibrated_forecasts_have_small_errors_and_miscalibrated_large():
    y, p = _calibrated(50_000, 31)
    assert ece(y, p) < 0.015 and adaptive_ece(y, p) < 0.015 and smooth_ece(y, p) < 0.015
    y2, p2 = _calibrated(50_000, 31, power=2.0)       # true P(y=1) = p^2: over-forecasts
    for fn in (ece, adaptive_ece, smooth_ece):
        assert fn(y2, p2) > 0.1


# --- hypothesis properties ------------------------------------------------------------

_probs = st.lists(st.floats(0.0, 1.0, allow_nan=False), min_size=1, max_size=60)


@settings(max_examples=60, deadline=None)
@given(_probs, st.integers(1, 20), st.sampled_from(["uniform", "quantile"]), st.integers(0, 2**31 - 1))
def test_properties_counts_bounds_identity(p, n_bins, binning, seed):
    p = np.asarray(p)
    y = (np.random.default_rng(seed).uniform(size=len(p)) < 0.5).astype(float)
    d = reliability_diagram(y, p, n_bins=n_bins, binning=binning)
    assert d.count.sum() == len(p) and len(d.count) == n_bins
    e = ece(y, p, n_bins=n_bins, binning=binning)
    assert 0.0 <= e <= 1.0 and e <= mce(y, p, n_bins=n_bins, binning=binning) + 1e-12
    assert 0.0 <= adaptive_ece(y, p, n_bins=n_bins) <= 1.0
    for bins in (None, n_bins):
        m = brier_decomposition(y, p, n_bins=bins, binning=binning)
        assert math.isclose(m.reliability - m.resolution + m.uncertainty + m.within_bin_variance
                            - m.within_bin_covariance, m.brier, rel_tol=1e-9, abs_tol=1e-12)
        assert m.reliability >= 0 and m.resolution >= 0 and m.resolution <= m.uncertainty + 1e-12


@settings(max_examples=25, deadline=None)
@given(st.floats(0.0, 1.0), st.integers(200, 2000), st.integers(0, 2**31 - 1))
def test_property_calibrated_smooth_ece_shrinks(_unused, n, seed):
    y, p = _calibrated(n, seed)
    # a calibrated forecast's smooth ECE is O(n^-1/2)-small (a generous 4 / sqrt(n) bound); the binned
    # ECE of B bins is about sqrt(2 / pi) * 0.5 * sqrt(B / n) in expectation
    assert smooth_ece(y, p) < 4 / math.sqrt(n)
    assert ece(y, p, n_bins=10) < 1.5 * math.sqrt(10 / n)
    assert 0.0 <= smooth_ece(y, p) <= 1.0


# --- skill score ----------------------------------------------------------------------


def test_skill_score():
    assert skill_score(0.15, 0.25) == pytest.approx(0.4)
    assert skill_score(0.25, 0.25) == 0.0
    assert skill_score(0.5, 0.25) == pytest.approx(-1.0)
    np.testing.assert_allclose(skill_score([0.1, 0.2], 0.4), [0.75, 0.5])
    assert skill_score(0.8, 0.6, perfect=1.0) == pytest.approx(0.5)   # positively oriented score
    y, p = _calibrated(500, 37, power=1.2)
    climatology = np.full_like(p, y.mean())
    bss = skill_score(brier_score_loss(y, p), brier_score_loss(y, climatology))
    d = brier_decomposition(y, p, n_bins=None)
    assert math.isclose(bss, (d.resolution - d.reliability) / d.uncertainty, rel_tol=1e-9)


@pytest.mark.parametrize("args, kwargs, match", [
    ((0.1, 0.0), {}, "perfect"),
    ((0.1, [0.2, 0.0]), {}, "data row 2"),
    ((np.nan, 0.2), {}, "NaN"),
    ((0.1, np.inf), {}, "infinite"),
    (([0.1, 0.2, 0.3], [0.1, 0.2]), {}, "broadcast"),
    ((0.1, 0.2), {"perfect": "x"}, "perfect"),
])
def test_skill_score_errors(args, kwargs, match):
    with pytest.raises(InputError, match=match):
        skill_score(*args, **kwargs)


# --- errors ---------------------------------------------------------------------------


@pytest.mark.parametrize("fn", [ece, mce, adaptive_ece, smooth_ece, balance_score, reliability_diagram,
                                brier_decomposition])
@pytest.mark.parametrize("y, p, match", [
    ([0, 2], [0.1, 0.2], "binary outcomes"),
    ([0, 1], [0.1, 1.5], "outside"),
    ([0, 1], [0.1, np.nan], "NaN"),
    ([0, 1, 1], [0.1, 0.2], "mismatched lengths"),
    ([], [], "no forecasts"),
    ([[0, 1]], [[0.1, 0.2]], "dimension"),
    (["a", "b"], [0.1, 0.2], "expected numbers"),
])
def test_binary_input_errors(fn, y, p, match):
    with pytest.raises(InputError, match=match):
        fn(y, p)


@pytest.mark.parametrize("kwargs, match", [
    ({"n_bins": 0}, "n_bins"), ({"n_bins": 2.5}, "n_bins"), ({"n_bins": True}, "n_bins"),
    ({"binning": "log"}, "binning"),
])
def test_parameter_errors(kwargs, match):
    with pytest.raises(InputError, match=match):
        ece([0, 1], [0.2, 0.7], **kwargs)


def test_other_parameter_errors():
    with pytest.raises(InputError, match="bandwidth"):
        smooth_ece([0, 1], [0.2, 0.7], bandwidth=0.0)
    with pytest.raises(InputError, match="ci"):
        reliability_diagram([0, 1], [0.2, 0.7], ci=1.0)
    assert ece([0, 1], [0.2, 0.7], binning="equal_mass") == ece([0, 1], [0.2, 0.7], binning="quantile")
    assert reliability_diagram([0, 1], [0.2, 0.7], binning="equal_width").binning == "uniform"


@pytest.mark.parametrize("y, P, match", [
    ([0, 3], [[0.5, 0.5], [0.5, 0.5]], "class index"),
    ([0, 0.5], [[0.5, 0.5], [0.5, 0.5]], "class index"),
    ([0, 1], [[0.5, 0.6], [0.5, 0.5]], "sum to"),
    ([0, 1], [[1.0], [1.0]], "two class"),
    ([0, 1], [0.5, 0.5], "dimension"),
])
def test_multiclass_input_errors(y, P, match):
    for fn in (ece_top_label, classwise_ece, balance_score_top_label):
        with pytest.raises(InputError, match=match):
            fn(y, P)


# --- registry and evaluate ------------------------------------------------------------


def test_registry_records():
    record = scorebench.metric("ece")
    assert record.name == "ece" and record.kind == "binary" and record.inputs == ("y", "p")
    assert dict(record.params) == {"n_bins": 15, "binning": "uniform"} and record.per_row is False
    assert record.higher_is_better is False
    for name in ("mce", "adaptive_ece", "smooth_ece", "brier_reliability", "brier_resolution"):
        assert scorebench.metric(name).per_row is False
    assert scorebench.metric("balance_score").per_row is True
    assert scorebench.metric("balance_score").higher_is_better is None
    for name in ("ece_top_label", "classwise_ece", "balance_score_top_label"):
        assert scorebench.metric(name).kind == "multiclass" and scorebench.metric(name).inputs == ("y", "P")
    assert scorebench.metric("ece", n_bins=10)([0, 1], [0.3, 0.6]) == ece([0, 1], [0.3, 0.6], n_bins=10)


def test_evaluate_table_end_to_end():
    evaluate = pytest.importorskip("scorebench.evaluation.evaluate").evaluate
    y, p = _calibrated(400, 41, power=1.5)
    table = pd.DataFrame({"system": np.repeat(["a", "b"], 200), "y": y, "p": p})
    scores = evaluate(table, ["ece", "smooth_ece", "balance_score", "brier_reliability"], n_boot=20, seed=1)
    got = scores.set_index(["system", "metric"])["value"]
    for sys_name, part in table.groupby("system"):
        assert math.isclose(got[(sys_name, "ece")], ece(part.y, part.p), rel_tol=1e-12)
        assert math.isclose(got[(sys_name, "smooth_ece")], smooth_ece(part.y, part.p), rel_tol=1e-12)
        assert math.isclose(got[(sys_name, "balance_score")], balance_score(part.y, part.p).mean(), rel_tol=1e-12)
    assert (scores["ci_low"] <= scores["value"] + 1e-12).all()


# --- mergeable statistics (partitioned engines) ---------------------------------------


@pytest.mark.parametrize("name", ["ece", "mce", "brier_reliability", "brier_resolution", "ece_top_label",
                                  "classwise_ece"])
def test_partial_finalize_agree_with_fn_and_weighted_resamples(name):
    rng = np.random.default_rng(43)
    p = rng.uniform(size=300)
    y = (rng.uniform(size=300) < p ** 1.4).astype(float)
    logits = rng.normal(size=(300, 3))
    P = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    arrays = ({"y": y, "p": p} if scorebench.metric(name).kind == "binary"
              else {"y": rng.integers(0, 3, 300), "P": P})
    record = scorebench.metric(name, n_bins=7)
    assert record.mergeable
    halves = [{k: v[:120] for k, v in arrays.items()}, {k: v[120:] for k, v in arrays.items()}]
    merged = sum(record.partial_stats(h) for h in halves)          # partitions add
    assert math.isclose(float(record.finalize_stats(merged)), record.compute(arrays), rel_tol=1e-12)
    idx = rng.integers(0, 300, size=(5, 300))
    weights = np.stack([np.bincount(i, minlength=300) for i in idx]).astype(float)
    boot = record.finalize_stats(record.partial_stats(arrays, weights))
    expected = [record.compute({k: v[i] for k, v in arrays.items()}) for i in idx]
    np.testing.assert_allclose(boot, expected, rtol=1e-12, atol=1e-15)


def test_partial_refuses_unmergeable_settings():
    arrays = {"y": np.array([0.0, 1.0]), "p": np.array([0.2, 0.7])}
    with pytest.raises(InputError, match="quantile"):
        scorebench.metric("ece", binning="quantile").partial_stats(arrays)
    with pytest.raises(InputError, match="n_bins=None"):
        scorebench.metric("brier_reliability", n_bins=None).partial_stats(arrays)


def test_cli_evaluate_calibration_tables(tmp_path):
    from click.testing import CliRunner

    from scorebench.cli import cli

    rng = np.random.default_rng(47)
    p = rng.uniform(size=200)
    binary = pd.DataFrame({"system": np.repeat(["a", "b"], 100), "y": (rng.uniform(size=200) < p).astype(int),
                           "p": p})
    binary.to_csv(tmp_path / "binary.csv", index=False)
    runner = CliRunner()
    result = runner.invoke(cli, ["evaluate", str(tmp_path / "binary.csv"), "-m", "ece", "-m", "smooth_ece",
                                 "-m", "balance_score", "--bootstrap", "20", "--output", str(tmp_path / "s.csv")])
    assert result.exit_code == 0, result.output
    scores = pd.read_csv(tmp_path / "s.csv", comment="#").set_index(["system", "metric"])["value"]
    part = binary[binary.system == "b"]
    assert math.isclose(scores[("b", "ece")], ece(part.y, part.p), rel_tol=1e-9)
    assert math.isclose(scores[("b", "smooth_ece")], smooth_ece(part.y, part.p), rel_tol=1e-9)

    P = rng.dirichlet([1.0, 1.0, 1.0], size=90)
    labels = np.array(["cat", "dog", "eel"])[[rng.choice(3, p=row) for row in P]]
    multi = pd.DataFrame({"y": labels, "p_cat": P[:, 0], "p_dog": P[:, 1], "p_eel": P[:, 2]})
    multi.to_csv(tmp_path / "multi.csv", index=False)
    result = runner.invoke(cli, ["evaluate", str(tmp_path / "multi.csv"), "-m", "ece_top_label", "-m",
                                 "classwise_ece", "--bootstrap", "0", "--output", str(tmp_path / "m.csv")])
    assert result.exit_code == 0, result.output
    scores = pd.read_csv(tmp_path / "m.csv", comment="#").set_index("metric")["value"]
    y_idx = np.searchsorted(["cat", "dog", "eel"], labels)
    assert math.isclose(scores["ece_top_label"], ece_top_label(y_idx, P), rel_tol=1e-9)
    assert math.isclose(scores["classwise_ece"], classwise_ece(y_idx, P), rel_tol=1e-9)

    bad = binary.assign(p=binary.p * 2)
    bad.to_csv(tmp_path / "bad.csv", index=False)
    result = runner.invoke(cli, ["evaluate", str(tmp_path / "bad.csv"), "-m", "ece"])
    assert result.exit_code == 2 and "column 'p'" in result.output and "Traceback" not in result.output


# --- debiased l2 calibration error (Kumar, Liang & Ma 2019) ---------------------------

@pytest.mark.parametrize("n", [40, 1_000, 50_000])
@pytest.mark.parametrize("debias", [True, False])
def test_l2_calibration_error_matches_the_authors_package(n, debias):
    utils = pytest.importorskip("calibration.utils")
    from scorebench.metrics.calibration import l2_calibration_error

    rng = np.random.default_rng(n)
    p = rng.uniform(0.001, 0.999, n)
    y = (rng.uniform(size=n) < np.clip(p + 0.08, 0, 1)).astype(int)  # slightly miscalibrated
    expected = utils._get_ce(p, y, 2, debias, 15, utils.get_equal_prob_bins)
    assert l2_calibration_error(y, p, debias=debias) == pytest.approx(expected, rel=1e-10, abs=1e-12)


def test_debiasing_removes_the_small_sample_floor():
    # a calibrated forecaster: the plug-in error sits at a floor set by n; the debiased
    # squared error is unbiased, so its mean over samples is near 0
    from scorebench.metrics.calibration import l2_calibration_error

    rng = np.random.default_rng(3)
    plug, deb = [], []
    for _ in range(200):
        p = rng.uniform(size=300)
        y = (rng.uniform(size=300) < p).astype(int)
        plug.append(l2_calibration_error(y, p, debias=False) ** 2)
        deb.append(scorebench.metric("l2_calibration_error").compute({"y": y, "p": p}) ** 2)
    assert np.mean(plug) > 0.006  # the floor: about bins * E[p(1 - p)] / n = 15 / 6 / 300 = 0.0083
    assert np.mean(deb) < 0.25 * np.mean(plug)


def test_l2_calibration_error_bootstraps_through_its_bin_sums():
    rng = np.random.default_rng(4)
    p = rng.uniform(size=2000)
    table = pd.DataFrame({"system": "a", "y": (rng.uniform(size=2000) < p * 0.9).astype(int), "p": p})
    scores = scorebench.evaluate(table, ["l2_calibration_error", "l2_calibration_error(debias=false)"], n_boot=200)
    assert "sufficient statistics" in scores.attrs["bootstrap"]
    debiased, plug = scores.value
    assert 0 <= debiased < plug
    assert (scores.ci_low <= scores.value).all() and (scores.value <= scores.ci_high).all()
