"""OOD detection metrics: against scikit-learn, brute force, properties, the engine and the CLI."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import average_precision_score, roc_auc_score, roc_curve

import scorebench
from scorebench.core.errors import InputError
from scorebench.metrics import ood
from scorebench.core.tables import get_kind


def _data(seed: int, n_id: int = 300, n_ood: int = 120, ties: bool = False):
    rng = np.random.default_rng(seed)
    score = np.r_[rng.normal(0.0, 1.0, n_id), rng.normal(1.2, 1.0, n_ood)]
    if ties:
        score = np.round(score * 2) / 2  # heavy ties across classes
    is_ood = np.r_[np.zeros(n_id), np.ones(n_ood)]
    perm = rng.permutation(score.size)
    return is_ood[perm], score[perm]


def _fpr_at_tpr_sklearn(is_ood, score, tpr=0.95):
    fpr, tpr_curve, _ = roc_curve(1 - is_ood, -score, drop_intermediate=False)
    return fpr[np.searchsorted(tpr_curve, tpr, side="left")]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("sizes", [(300, 120), (40, 400), (7, 3)])
def test_match_sklearn(seed, ties, sizes):
    y, s = _data(seed, *sizes, ties=ties)
    assert ood.auroc(y, s) == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    assert ood.aupr(y, s) == pytest.approx(average_precision_score(y, s), abs=1e-12)
    assert ood.aupr_out(y, s) == pytest.approx(average_precision_score(y, s), abs=1e-12)
    assert ood.aupr_in(y, s) == pytest.approx(average_precision_score(1 - y, -s), abs=1e-12)
    for level in (0.95, 0.8, 1.0):
        assert ood.fpr_at_95_tpr(y, s, tpr=level) == pytest.approx(_fpr_at_tpr_sklearn(y, s, level), abs=1e-12)
    curve = ood.roc_curve(y, s)
    fpr, tpr, thr = roc_curve(y, s, drop_intermediate=False)
    np.testing.assert_allclose(curve.fpr, fpr, atol=1e-15)
    np.testing.assert_allclose(curve.tpr, tpr, atol=1e-15)
    np.testing.assert_array_equal(curve.thresholds[1:], thr[1:])


def test_exact_toy_values():
    y = [0, 0, 1, 1]
    s = [0.1, 0.4, 0.35, 0.8]
    assert ood.auroc(y, s) == 0.75
    assert ood.detection_error(y, s) == 0.25
    # all tied: AUROC 0.5, AP = prevalence
    assert ood.auroc([0, 1, 0, 1], [3, 3, 3, 3]) == 0.5
    assert ood.aupr([0, 1, 0, 0], [3, 3, 3, 3]) == 0.25
    # perfect separation
    assert ood.auroc([0, 0, 1], [0.0, 0.1, 5.0]) == 1.0
    assert ood.fpr_at_95_tpr([0, 0, 1], [0.0, 0.1, 5.0]) == 0.0
    assert ood.detection_error([0, 0, 1], [0.0, 0.1, 5.0]) == 0.0
    # 20 ID scored 0..19, OOD at 17.5 and 30: accepting 19/20 ID (scores <= 18) accepts
    # the OOD at 17.5, one of two; an OOD at 18.5 instead would be rejected
    y = np.r_[np.zeros(20), [1, 1]]
    assert ood.fpr_at_95_tpr(y, np.r_[np.arange(20.0), [17.5, 30.0]]) == 0.5
    assert ood.fpr_at_95_tpr(y, np.r_[np.arange(20.0), [18.5, 30.0]]) == 0.0


def _mann_whitney(y, s):
    pos, neg = s[y == 1], s[y == 0]
    diff = pos[:, None] - neg[None, :]
    return float(((diff > 0) + 0.5 * (diff == 0)).mean())


def _brute_detection_error(y, s):
    best = 0.5
    for t in np.r_[np.unique(s), np.inf]:
        tpr = np.mean(s[y == 1] >= t)
        fpr = np.mean(s[y == 0] >= t)
        best = min(best, 0.5 * (1 - tpr) + 0.5 * fpr)
    return best


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1), st.integers(-4, 4)), min_size=2, max_size=40))
def test_properties(rows):
    y = np.array([r[0] for r in rows], float)
    s = np.array([r[1] for r in rows], float)
    if y.min() == y.max():
        with pytest.raises(InputError, match="single class"):
            ood.auroc(y, s)
        return
    a = ood.auroc(y, s)
    assert a == pytest.approx(_mann_whitney(y, s), abs=1e-12)
    assert ood.auroc(y, np.exp(s / 3)) == pytest.approx(a, abs=1e-12)  # monotone invariance
    assert ood.auroc(y, -s) == pytest.approx(1 - a, abs=1e-12)
    assert ood.auroc(1 - y, -s) == pytest.approx(a, abs=1e-12)  # swapping the positive class
    assert ood.aupr_in(y, s) == pytest.approx(ood.aupr_out(1 - y, -s), abs=1e-12)
    assert ood.detection_error(y, s) == pytest.approx(_brute_detection_error(y, s), abs=1e-12)
    assert ood.detection_error(1 - y, -s) == pytest.approx(ood.detection_error(y, s), abs=1e-12)
    assert 0.0 <= ood.fpr_at_95_tpr(y, s) <= 1.0


def test_errors():
    with pytest.raises(InputError, match="single class"):
        ood.auroc([0, 0], [1, 2])
    with pytest.raises(InputError, match="expected 0"):
        ood.auroc([0, 2], [1, 2])
    with pytest.raises(InputError, match="NaN"):
        ood.aupr([0, 1], [1, np.nan])
    with pytest.raises(InputError, match="mismatched"):
        ood.detection_error([0, 1, 1], [1, 2])
    with pytest.raises(InputError, match="tpr"):
        ood.fpr_at_95_tpr([0, 1], [1, 2], tpr=0.0)


def test_registry_metadata():
    for name in ("auroc", "aupr", "aupr_in", "aupr_out", "fpr_at_95_tpr", "detection_error"):
        m = scorebench.metric(name)
        assert (m.family, m.kind, m.per_row, m.inputs) == ("ood", "ood", False, ("is_ood", "score"))
    assert scorebench.metric("fpr_at_95_tpr").higher_is_better is False
    assert scorebench.metric("fpr_at_95_tpr", tpr=0.9).params["tpr"] == 0.9


def test_kind_and_score_direction():
    df = pd.DataFrame({"score": [0.9, 0.8, 0.2, 0.1], "is_ood": [0, 0, 1, 1]})  # confidences
    as_ood = get_kind("ood").extract(df)
    as_id = get_kind("ood").extract(df, score_direction="id")
    assert scorebench.metric("auroc").compute(as_ood.merged()) == 0.0
    assert scorebench.metric("auroc").compute(as_id.merged()) == 1.0
    with pytest.raises(InputError, match="is_ood"):
        get_kind("ood").extract(df.assign(is_ood=[0, 0, 1, 3]))
    with pytest.raises(InputError, match="score_direction"):
        get_kind("ood").extract(df, score_direction="up")
    with pytest.raises(InputError, match="score"):
        get_kind("ood").extract(df.drop(columns="score"))


def _table():
    frames = []
    for system, shift in (("msp", 0.5), ("energy", 2.0)):
        y, s = _data(7, 200, 100)
        frames.append(pd.DataFrame({"system": system, "score": s + shift * y, "is_ood": y.astype(int)}))
    return pd.concat(frames, ignore_index=True)


def test_evaluate_end_to_end_with_bootstrap():
    table = _table()
    scores = scorebench.evaluate(table, ["auroc", "fpr_at_95_tpr"], kind="ood", n_boot=200, seed=3)
    assert set(scores["metric"]) == {"auroc", "fpr_at_95_tpr"}
    for _, row in scores.iterrows():
        part = table[table["system"] == row["system"]]
        y, s = part["is_ood"].to_numpy(), part["score"].to_numpy()
        ref = roc_auc_score(y, s) if row["metric"] == "auroc" else _fpr_at_tpr_sklearn(y, s)
        assert row["value"] == pytest.approx(ref, abs=1e-12)
        assert row["ci_low"] <= row["value"] <= row["ci_high"]
        assert row["n"] == 300
    auc = scores.set_index(["system", "metric"])["value"]
    assert auc[("energy", "auroc")] > auc[("msp", "auroc")]
    again = scorebench.evaluate(table, ["auroc", "fpr_at_95_tpr"], kind="ood", n_boot=200, seed=3)
    pd.testing.assert_frame_equal(scores, again)
    flipped = scorebench.evaluate(table.assign(score=-table["score"]), "auroc", n_boot=0,
                                  score_direction="id")
    np.testing.assert_allclose(flipped["value"], scores[scores["metric"] == "auroc"]["value"])


def test_cli_evaluate(tmp_path):
    from scorebench.cli import cli

    path = tmp_path / "ood.csv"
    _table().to_csv(path, index=False)
    out = tmp_path / "scores.csv"
    result = CliRunner().invoke(cli, ["evaluate", str(path), "--metric", "auroc", "--metric", "aupr_in",
                                      "--bootstrap", "50", "-o", str(out)])
    assert result.exit_code == 0, result.output
    from scorebench.io.tables import read_table

    scores = read_table(out)
    assert set(scores["metric"]) == {"auroc", "aupr_in"}
    direct = scorebench.evaluate(_table(), ["auroc", "aupr_in"], n_boot=50)
    np.testing.assert_allclose(scores.sort_values(["system", "metric"])["value"],
                               direct.sort_values(["system", "metric"])["value"], atol=1e-9)
    bad = tmp_path / "bad.csv"
    pd.DataFrame({"score": [1.0, 2.0], "is_ood": [0, 5]}).to_csv(bad, index=False)
    result = CliRunner().invoke(cli, ["evaluate", str(bad), "--metric", "auroc"])
    assert result.exit_code == 2
    assert "is_ood" in result.output
