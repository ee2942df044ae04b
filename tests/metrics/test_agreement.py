"""Agreement metrics: against scipy / scikit-learn, textbook values, properties, errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from sklearn.metrics import cohen_kappa_score

import scorebench
from scorebench.core.errors import InputError
from scorebench.metrics import agreement as ag
from scorebench.core.tables import get_kind

NAN = float("nan")

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: four
# observers, twelve units, values 1-5, missing data; the text gives the alphas below.
KRIPPENDORFF_2011 = np.array([
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
    [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
])
KRIPPENDORFF_2011_ALPHA = {"nominal": 0.743, "ordinal": 0.815, "interval": 0.849, "ratio": 0.797}


def _pairs(seed: int, n: int = 200, ties: bool = False):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    y = 0.6 * x + rng.normal(size=n)
    if ties:
        x, y = np.round(x * 2), np.round(y * 2)
    return x, y


# --- correlations against scipy --------------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("ties", [False, True])
def test_correlations_match_scipy(seed, ties):
    x, y = _pairs(seed, ties=ties)
    assert ag.pearson(x, y) == pytest.approx(stats.pearsonr(x, y)[0], abs=1e-12)
    assert ag.spearman(x, y) == pytest.approx(stats.spearmanr(x, y)[0], abs=1e-12)
    assert ag.kendall_tau(x, y) == pytest.approx(stats.kendalltau(x, y, variant="b")[0], abs=1e-12)


@pytest.mark.parametrize("n", [2, 3, 5, 17, 64, 1000])
def test_kendall_tau_b_heavy_ties_and_sizes(n):
    rng = np.random.default_rng(n)
    x = rng.integers(0, 4, size=n).astype(float)
    y = (x + rng.integers(-1, 2, size=n)).astype(float)
    if np.unique(x).size < 2 or np.unique(y).size < 2:
        x[0], y[0] = 0.0, 0.0
        x[-1], y[-1] = 3.0, 5.0
    assert ag.kendall_tau(x, y) == pytest.approx(stats.kendalltau(x, y)[0], abs=1e-12)


def test_kendall_table_and_merge_routes_agree(monkeypatch):
    rng = np.random.default_rng(8)
    x = rng.integers(0, 6, 500).astype(float)
    y = np.round(x / 2 + rng.normal(size=500))
    by_table = ag.kendall_tau(x, y)
    monkeypatch.setattr(ag, "_TABLE_CELLS", 0)  # force the merge-sort route
    assert ag.kendall_tau(x, y) == pytest.approx(by_table, abs=1e-12)
    assert by_table == pytest.approx(stats.kendalltau(x, y)[0], abs=1e-12)


def test_count_inversions_brute_force():
    rng = np.random.default_rng(0)
    for n in (0, 1, 2, 7, 33, 100):
        a = rng.integers(0, 10, size=n)
        brute = sum(int(a[i] > a[j]) for i in range(n) for j in range(i + 1, n))
        assert ag._count_inversions(a) == brute


def test_toy_values():
    assert ag.pearson([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0)
    assert ag.spearman([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    # one discordant pair of six: (5 - 1) / 6
    assert ag.kendall_tau([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(4 / 6)
    assert ag.rmse([0, 0], [3, 4]) == pytest.approx(np.sqrt(12.5))
    assert ag.mae([0, 0], [3, -4]).tolist() == [3.0, 4.0]


@pytest.mark.parametrize("fn", [ag.pearson, ag.spearman, ag.kendall_tau])
def test_constant_input_raises_instead_of_nan(fn):
    with pytest.raises(InputError, match="constant.*undefined"):
        fn([1, 1, 1], [1, 2, 3])
    with pytest.raises(InputError, match="y_pred"):
        fn([1, 2, 3], [4, 4, 4])


@pytest.mark.parametrize("fn", [ag.pearson, ag.spearman, ag.kendall_tau, ag.rmse, ag.qwk])
def test_bad_input_raises(fn):
    with pytest.raises(InputError, match="NaN"):
        fn([1, 2, NAN], [1, 2, 3])
    with pytest.raises(InputError, match="mismatched lengths"):
        fn([1, 2, 3], [1, 2])
    with pytest.raises(InputError):
        fn(["a", "b"], [1, 2])


# --- kappas against scikit-learn -------------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_cohen_kappa_matches_sklearn(seed, weights):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 5, size=300)
    b = np.clip(a + rng.integers(-2, 3, size=300), 0, 5)
    ref = cohen_kappa_score(a, b, weights=weights)
    assert ag.cohen_kappa(a, b, weights=weights) == pytest.approx(ref, abs=1e-12)
    labels = [0, 1, 2, 3, 4, 5, 6]  # unused grade 6 at the top shifts nothing for kappa weights
    assert ag.cohen_kappa(a, b, weights=weights, labels=labels) == pytest.approx(
        cohen_kappa_score(a, b, weights=weights, labels=labels), abs=1e-12)


def test_qwk_matches_sklearn_quadratic_and_label_set_matters():
    a = np.array([0, 1, 4, 4, 1, 0, 4])
    b = np.array([0, 1, 4, 1, 4, 0, 1])
    # grades 2 and 3 are never used: with the full scale they keep their place
    full = ag.qwk(a, b, labels=[0, 1, 2, 3, 4])
    assert full == pytest.approx(cohen_kappa_score(a, b, weights="quadratic", labels=[0, 1, 2, 3, 4]))
    observed = ag.qwk(a, b)
    assert observed == pytest.approx(cohen_kappa_score(a, b, weights="quadratic"))
    # the quadratic weights use positions in the label set, so the two differ
    assert full != pytest.approx(observed)


def test_kappa_label_set_errors_and_undefined():
    with pytest.raises(InputError, match="not in the label set"):
        ag.qwk([0, 1, 7], [0, 1, 2], labels=[0, 1, 2])
    with pytest.raises(InputError, match="duplicate"):
        ag.qwk([0, 1], [0, 1], labels=[0, 1, 1])
    # sklearn returns NaN with a warning here; scorebench explains instead
    with pytest.raises(InputError, match="expected disagreement is zero"):
        ag.cohen_kappa([2, 2, 2], [2, 2, 2])
    with pytest.raises(InputError, match="weights"):
        ag.cohen_kappa([1, 2], [1, 2], weights="cubic")


# --- Krippendorff's alpha --------------------------------------------------------------


@pytest.mark.parametrize("level", sorted(KRIPPENDORFF_2011_ALPHA))
def test_krippendorff_textbook(level):
    value = ag.krippendorff_alpha(KRIPPENDORFF_2011, level=level)
    assert round(value, 3) == KRIPPENDORFF_2011_ALPHA[level]


def test_krippendorff_nominal_hand_derived_exact():
    # Hand derivation on the textbook data: the pairable values 1..5 occur
    # n_c = (9, 13, 10, 5, 3) times (n = 40; unit 12 has one value and is not pairable).
    # Off-diagonal coincidences: unit 6 (1, 2, 3, 4) gives 12 ordered disagreeing pairs / 3,
    # unit 2 (2, 2, 3, 2) gives 6 / 3 and unit 8 (1, 1, 2, 1) gives 6 / 3: o_off = 8.
    # Nominal alpha = 1 - (n - 1) o_off / (n^2 - sum n_c^2) = 1 - 39 * 8 / 1216.
    n_c = np.array([9.0, 13.0, 10.0, 5.0, 3.0])
    n = n_c.sum()
    o_off = 12 / 3 + 6 / 3 + 6 / 3
    expected = 1.0 - (n - 1.0) * o_off / (n * n - (n_c**2).sum())
    assert expected == pytest.approx(1 - 312 / 1216)
    assert ag.krippendorff_alpha(KRIPPENDORFF_2011, level="nominal") == pytest.approx(expected, abs=1e-12)


def test_krippendorff_two_raters_matches_rows_and_interval_closed_form():
    rng = np.random.default_rng(3)
    a = rng.integers(1, 6, size=50).astype(float)
    b = np.clip(a + rng.integers(-1, 2, size=50), 1, 5).astype(float)
    as_rows = ag.krippendorff_alpha(np.vstack([a, b]), level="interval")
    assert ag.krippendorff_alpha(a, b, level="interval") == pytest.approx(as_rows)
    # interval closed form equals the V x V coincidence route used by the other levels
    values, counts = np.unique(np.concatenate([a, b]), return_counts=True)
    grid = np.arange(values.size)
    d2 = ag._delta2("interval", values, counts.astype(float), grid[:, None], grid[None, :])
    n = counts.sum()
    expected = (counts[:, None] * counts[None, :] * d2).sum()
    observed = 2.0 * ((a - b) ** 2).sum()  # m_u = 2: both orders, divided by m_u - 1 = 1
    assert as_rows == pytest.approx(1 - (n - 1) * observed / expected, abs=1e-12)


def test_krippendorff_missing_and_degenerate():
    # missing ratings are skipped; a unit with one rating is not pairable
    full = ag.krippendorff_alpha([1, 2, 3, 4], [1, 2, 3, 3])
    with_gap = ag.krippendorff_alpha([1, 2, 3, 4, 5], [1, 2, 3, 3, NAN])
    assert with_gap == pytest.approx(full)
    with pytest.raises(InputError, match="no unit has two"):
        ag.krippendorff_alpha([1, NAN], [NAN, 2])
    with pytest.raises(InputError, match="identical"):
        ag.krippendorff_alpha([3, 3, 3], [3, 3, 3])
    with pytest.raises(InputError, match="level"):
        ag.krippendorff_alpha([1, 2], [1, 2], level="cardinal")
    assert ag.krippendorff_alpha([1, 2, 3], [1, 2, 3], level="ordinal") == pytest.approx(1.0)


# --- system level ----------------------------------------------------------------------


def test_system_srcc_correlates_group_means():
    rng = np.random.default_rng(5)
    groups = np.repeat(np.array(["s1", "s2", "s3", "s4", "s5"]), 20)
    true = rng.normal(size=100) + np.repeat(np.arange(5.0), 20)
    pred = true + rng.normal(scale=3.0, size=100)
    frame = pd.DataFrame({"g": groups, "t": true, "p": pred}).groupby("g").mean()
    ref = stats.spearmanr(frame["t"], frame["p"])[0]
    assert ag.system_srcc(true, pred, groups) == pytest.approx(ref, abs=1e-12)
    with pytest.raises(InputError, match="two groups"):
        ag.system_srcc([1, 2], [1, 2], ["a", "a"])
    with pytest.raises(InputError, match="system_srcc.*constant"):
        ag.system_srcc([1, 1, 2, 2], [3, 3, 3, 3], ["a", "a", "b", "b"])


# --- properties ------------------------------------------------------------------------

_values = st.lists(st.integers(-5, 5), min_size=3, max_size=30)


@settings(max_examples=60, deadline=None)
@given(_values, st.data())
def test_rank_correlations_invariant_to_monotone_maps(x, data):
    y = data.draw(st.lists(st.integers(-5, 5), min_size=len(x), max_size=len(x)))
    x, y = np.array(x, float), np.array(y, float)
    if np.unique(x).size < 2 or np.unique(y).size < 2:
        return
    for fn in (ag.spearman, ag.kendall_tau):
        value = fn(x, y)
        assert -1.0 <= value <= 1.0
        assert fn(np.exp(x), y**3) == pytest.approx(value, abs=1e-12)
        assert fn(y, x) == pytest.approx(value, abs=1e-12)
        assert fn(x, -y) == pytest.approx(-value, abs=1e-12)
    assert ag.kendall_tau(x, y) == pytest.approx(stats.kendalltau(x, y)[0], abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=2, max_size=40), st.data())
def test_kappa_symmetry_and_perfect_agreement(a, data):
    b = data.draw(st.lists(st.integers(0, 4), min_size=len(a), max_size=len(a)))
    labels = [0, 1, 2, 3, 4]
    try:
        k = ag.qwk(a, b, labels=labels)
    except InputError:
        assert len(set(a)) == 1 and set(a) == set(b)
        return
    assert k == pytest.approx(ag.qwk(b, a, labels=labels), abs=1e-12)
    assert k <= 1.0 + 1e-12
    if len(set(a)) > 1:
        assert ag.qwk(a, a, labels=labels) == pytest.approx(1.0)
        assert ag.krippendorff_alpha(a, a, level="ordinal") == pytest.approx(1.0)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-100, 100, allow_nan=False), min_size=2, max_size=30), st.floats(-50, 50))
def test_error_metrics_shift_and_order(y, shift):
    y = np.array(y)
    pred = y + shift
    assert ag.rmse(y, pred) == pytest.approx(abs(shift), abs=1e-9)
    assert ag.mae(y, pred).mean() == pytest.approx(abs(shift), abs=1e-9)
    assert ag.mae(y, pred).mean() <= ag.rmse(y, pred) + 1e-9


# --- registry and table kind -----------------------------------------------------------


def test_registry_metadata():
    for name in ("pearson", "spearman", "kendall_tau", "qwk", "cohen_kappa", "krippendorff_alpha",
                 "rmse", "system_srcc"):
        m = scorebench.metric(name)
        assert (m.family, m.kind, m.per_row) == ("agreement", "rating", False)
    assert scorebench.metric("mae").per_row is True
    assert scorebench.metric("rmse").higher_is_better is False
    m = scorebench.metric("krippendorff_alpha", level="ordinal")
    assert m(KRIPPENDORFF_2011) == pytest.approx(0.8153875, abs=1e-6)


def test_rating_kind_extracts_arrays_and_groups():
    df = pd.DataFrame({"system": ["m1"] * 4, "group": ["b", "a", "b", "a"],
                       "y_true": [1, 2, 3, 4], "y_pred": [1.5, 2.0, 2.5, 4.5]})
    inputs = get_kind("rating").extract(df)
    assert inputs.arrays["group"].tolist() == [1, 0, 1, 0]
    assert "system" in inputs.frame.columns
    m = scorebench.metric("system_srcc")
    assert m.compute(inputs.merged()) == pytest.approx(1.0)  # means (true, pred): a=(3, 3.25), b=(2, 2)
    with pytest.raises(InputError, match="y_pred"):
        get_kind("rating").extract(df.drop(columns="y_pred"))
    bad = df.assign(y_true=[1, None, 3, 4])
    with pytest.raises(InputError, match="NaN"):
        get_kind("rating").extract(bad)
    kept = get_kind("rating").extract(bad, nan_policy="propagate")
    assert np.isnan(kept.arrays["y_true"][1])
    assert scorebench.metric("krippendorff_alpha").compute(kept.merged()) == pytest.approx(
        ag.krippendorff_alpha([1, 3, 4], [1.5, 2.5, 4.5]))
    with pytest.raises(InputError, match="group"):
        get_kind("rating").extract(df.assign(group=["a", None, "b", "a"]))


def _rating_table():
    rng = np.random.default_rng(11)
    rows = []
    for judge, noise in (("gpt", 0.4), ("small", 1.5)):
        for tts in ("sysA", "sysB", "sysC", "sysD"):
            base = {"sysA": 1.5, "sysB": 2.5, "sysC": 3.5, "sysD": 4.2}[tts]
            true = np.clip(np.round(base + rng.normal(scale=0.7, size=25)), 1, 5)
            pred = np.clip(np.round(true + rng.normal(scale=noise, size=25)), 1, 5)
            rows.append(pd.DataFrame({"system": judge, "group": tts, "y_true": true, "y_pred": pred}))
    return pd.concat(rows, ignore_index=True)


def test_evaluate_end_to_end_with_bootstrap():
    table = _rating_table()
    names = ["pearson", "spearman", "kendall_tau", "qwk", "krippendorff_alpha", "rmse", "mae", "system_srcc"]
    scores = scorebench.evaluate(table, names, n_boot=100, seed=1)
    assert len(scores) == 2 * len(names)
    value = scores.set_index(["system", "metric"])["value"]
    for judge, part in table.groupby("system"):
        t, p = part["y_true"].to_numpy(), part["y_pred"].to_numpy()
        assert value[(judge, "spearman")] == pytest.approx(stats.spearmanr(t, p)[0], abs=1e-12)
        assert value[(judge, "qwk")] == pytest.approx(cohen_kappa_score(t, p, weights="quadratic"), abs=1e-12)
        assert value[(judge, "mae")] == pytest.approx(np.abs(t - p).mean(), abs=1e-12)
        assert value[(judge, "rmse")] == pytest.approx(np.sqrt(((t - p) ** 2).mean()), abs=1e-12)
    assert value[("gpt", "qwk")] > value[("small", "qwk")]
    assert value[("gpt", "rmse")] < value[("small", "rmse")]
    assert ((scores["ci_low"] <= scores["value"] + 1e-12) & (scores["value"] <= scores["ci_high"] + 1e-12)).all()


def test_cli_evaluate_rating(tmp_path):
    from click.testing import CliRunner

    from scorebench.cli import cli
    from scorebench.io.tables import read_table

    path = tmp_path / "ratings.csv"
    _rating_table().to_csv(path, index=False)
    out = tmp_path / "scores.csv"
    result = CliRunner().invoke(cli, ["evaluate", str(path), "--metric", "qwk", "--metric", "system_srcc",
                                      "--bootstrap", "20", "-o", str(out)])
    assert result.exit_code == 0, result.output
    scores = read_table(out)
    assert set(scores["metric"]) == {"qwk", "system_srcc"} and len(scores) == 4


def test_kappa_label_order_is_the_scale_order():
    a = np.array([1, 2, 3, 3, 1, 2, 3])
    b = np.array([1, 3, 3, 2, 2, 1, 3])
    for labels in ([3, 2, 1], [2, 1, 3]):
        assert ag.qwk(a, b, labels=labels) == pytest.approx(
            cohen_kappa_score(a, b, weights="quadratic", labels=labels), abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 5), st.integers(1, 5), st.booleans()), min_size=3, max_size=25),
       st.floats(0.5, 4.0), st.floats(-3.0, 3.0))
def test_krippendorff_invariances(rows, scale, shift):
    a = np.array([r[0] for r in rows], float)
    b = np.array([np.nan if r[2] else r[1] for r in rows], float)  # some missing ratings
    try:
        base = {level: ag.krippendorff_alpha(a, b, level=level) for level in ("interval", "ordinal", "nominal")}
    except InputError:
        return  # no pairable unit, or no variation
    # interval: affine maps; ordinal: strictly increasing maps; nominal: any relabelling
    assert ag.krippendorff_alpha(scale * a + shift, scale * b + shift, level="interval") == pytest.approx(
        base["interval"], abs=1e-9)
    assert ag.krippendorff_alpha(np.exp(a), np.exp(b), level="ordinal") == pytest.approx(base["ordinal"], abs=1e-9)
    relabel = np.array([0.0, 40.0, -7.0, 3.0, 11.0, 5.0])
    ra, rb = relabel[a.astype(int)], np.where(np.isnan(b), np.nan, relabel[np.nan_to_num(b).astype(int)])
    assert ag.krippendorff_alpha(ra, rb, level="nominal") == pytest.approx(base["nominal"], abs=1e-9)
    assert ag.krippendorff_alpha(b, a, level="interval") == pytest.approx(base["interval"], abs=1e-9)
    assert all(v <= 1.0 + 1e-12 for v in base.values())
