"""RewardBench accuracy, section weighting, best-of-N and length-bias diagnostics."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import scorebench
from scorebench.core.errors import InputError
from scorebench.metrics.reward.accuracy import credit, rewardbench_score, rewardbench_section
from scorebench.io.readers.rewardbench import EXAMPLE_COUNTS, SECTIONS, section_scores


def _table(seed=0, n_per=12, systems=("rm-a", "rm-b")):
    rng = np.random.default_rng(seed)
    rows = []
    for system in systems:
        for subset in EXAMPLE_COUNTS:
            for i in range(n_per):
                lc, lr = rng.integers(50, 900, 2)
                rows.append({"system": system, "id": f"{subset}-{i}", "subset": subset,
                             "score_chosen": float(rng.integers(0, 5)), "score_rejected": float(rng.integers(0, 5)),
                             "len_chosen": lc, "len_rejected": lr})
    return pd.DataFrame(rows)


def test_accuracy_ties_half_or_loss_and_interval():
    t = _table()
    half = scorebench.evaluate(t, "rm_accuracy", n_boot=200).set_index("system")
    loss = scorebench.evaluate(t, "rm_accuracy(ties=loss)", n_boot=0).set_index("system")
    for system, part in t.groupby("system"):
        c, r = part.score_chosen.to_numpy(), part.score_rejected.to_numpy()
        assert half.loc[system, "value"] == pytest.approx(((c > r) + 0.5 * (c == r)).mean(), rel=1e-12)
        assert loss.loc[system, "value"] == pytest.approx((c > r).mean(), rel=1e-12)  # RewardBench v1's strict >
        assert half.loc[system, "ci_low"] < half.loc[system, "value"] < half.loc[system, "ci_high"]


def test_best_of_n_shares_credit_among_tied_maxima():
    assert credit([3.0, 3.0, 3.0, 1.0], [[1, 2, 2], [3, 1, 1], [3, 3, 3], [1, 0, 0]]).tolist() == \
        [1.0, 0.5, 0.25, 0.5]
    assert credit([3.0, 3.0], [[3, 3, 1], [4, 1, 1]], ties="loss").tolist() == [0.0, 0.0]
    t = pd.DataFrame({"system": "rm", "score_chosen": [3.0, 3.0, 2.0], "score_rejected_1": [1.0, 3.0, 2.0],
                      "score_rejected_2": [2.0, 3.0, 5.0], "score_rejected_3": [0.0, 0.0, 2.0]})
    out = scorebench.evaluate(t, "rm_accuracy", n_boot=0)
    assert out.value.iloc[0] == pytest.approx((1 + 1 / 3 + 0) / 3)


def test_section_scores_use_official_counts_like_the_reader():
    t = _table(seed=1)
    out = scorebench.evaluate(t, ["rewardbench_score", "rewardbench_section(section=reasoning)"],
                              n_boot=0).set_index(["system", "metric"])["value"]
    half = scorebench.evaluate(t, "rewardbench_score(ties=half)", n_boot=0).set_index("system")["value"]
    for system, part in t.groupby("system"):
        c, r = part.score_chosen.to_numpy(), part.score_rejected.to_numpy()
        acc_half = pd.Series((c > r) + 0.5 * (c == r), index=part.subset.to_numpy()).groupby(level=0).mean()
        assert half[system] == pytest.approx(np.mean(list(section_scores(acc_half.to_dict()).values())), rel=1e-12)
        # RewardBench's default: a tie is a loss (strict chosen > rejected)
        acc = pd.Series((c > r) + 0.0, index=part.subset.to_numpy()).groupby(level=0).mean().to_dict()
        sections = section_scores(acc)  # the RewardBench reader's implementation of the convention
        assert out[system, "rewardbench_score"] == pytest.approx(np.mean(list(sections.values())), rel=1e-12)
        assert out[system, "rewardbench_section(section=reasoning)"] == pytest.approx(sections["Reasoning"])
        # by hand: math-prm weighs 984, each code subset 164
        hand = (984 * acc["math-prm"] + sum(164 * acc[s] for s in SECTIONS["Reasoning"][1:])) / (984 + 6 * 164)
        assert sections["Reasoning"] == pytest.approx(hand)
    observed = scorebench.evaluate(t, "rewardbench_section(section=reasoning,weights=observed)", n_boot=0)
    part = t[t.subset.isin(SECTIONS["Reasoning"])]
    for system, p in part.groupby("system"):
        c, r = p.score_chosen.to_numpy(), p.score_rejected.to_numpy()
        assert observed.set_index("system").loc[system, "value"] == pytest.approx((c > r).mean())


def test_section_score_of_the_rewardbench_reader_output(tmp_path):
    """The reader's per-prompt table (subset, margin) evaluates to the reader's own section scores by default."""
    records = []
    rng = np.random.default_rng(2)
    for subset in ("alpacaeval-easy", "mt-bench-hard", "donotanswer", "hep-go", "math-prm"):
        for i in range(10):
            sc, sr = rng.normal(size=2)
            records.append({"id": f"{subset}{i}", "subset": subset, "scores_chosen": [sc], "scores_rejected": [sr],
                            "results": int(sc > sr)})
    path = tmp_path / "out.json"
    path.write_text(json.dumps(records))
    samples = scorebench.io.readers.rewardbench.read(path)
    sections = scorebench.io.readers.rewardbench.read(path, level="sections")
    # default grouping (system, task): one row per reward model, RewardBench's number
    ours = scorebench.evaluate(samples, "rewardbench_score", n_boot=0)
    assert len(ours) == 1 and ours.value.iloc[0] == pytest.approx(sections["value"].mean(), rel=1e-12)
    per_subset = scorebench.evaluate(samples, "rm_accuracy(ties=loss)", by="system,subset",
                                     n_boot=0).set_index("subset")["value"]
    assert per_subset.to_dict() == pytest.approx(samples.attrs["subset_accuracy"])
    # per section with intervals: the official (math-prm-weighted) section scores
    by_section = scorebench.evaluate(samples, "rewardbench_section", by="system,section", n_boot=50)
    present = sections[sections["value"] > 0].set_index("task")["value"]
    got = by_section.set_index("section")["value"]
    for name in got.index:
        assert got[name] == pytest.approx(sections.set_index("task")["value"][name], rel=1e-12)
    assert set(got.index) <= set(sections["task"]) and len(present) >= 1
    weighted = samples.groupby("section").apply(lambda p: np.average(p["correct"], weights=p["weight"]))
    assert weighted.to_dict() == pytest.approx(got.to_dict(), rel=1e-12)


def test_section_errors():
    with pytest.raises(InputError, match="not RewardBench subsets"):
        rewardbench_score([1.0], [0.0], [0], ("my-subset",))
    with pytest.raises(InputError, match="counts a missing section as 0"):
        rewardbench_score([1.0], [0.0], [0], ("hep-go",), missing="raise")
    assert rewardbench_score([1.0], [0.0], [0], ("hep-go",)) == 0.25  # Chat, Chat Hard, Safety absent: 0
    assert rewardbench_score([1.0], [0.0], [0], ("hep-go",), missing="available") == 1.0
    with pytest.raises(InputError, match="spans sections"):
        rewardbench_section([1.0, 1.0], [0.0, 0.0], [0, 1], ("hep-go", "donotanswer"))
    with pytest.raises(InputError, match="no prompt of section"):
        rewardbench_section([1.0], [0.0], [0], ("hep-go",), section="safety")
    with pytest.raises(InputError, match="section"):
        rewardbench_section([1.0], [0.0], [0], ("hep-go",), section="Safety!")


def test_length_bias_diagnostics():
    rng = np.random.default_rng(4)
    n = 400
    lc, lr = rng.integers(100, 1000, n), rng.integers(100, 1000, n)
    length_rm = (lc - lr) / 100 + rng.normal(scale=0.5, size=n)  # a reward that tracks length
    t = pd.DataFrame({"system": "length-rm", "subset": "alpacaeval-length", "score_chosen": length_rm,
                      "score_rejected": 0.0, "len_chosen": lc, "len_rejected": lr})
    out = scorebench.evaluate(t, ["length_baseline_accuracy", "length_baseline_accuracy(pick=shorter)",
                                  "rm_longer_preference", "margin_length_correlation",
                                  "margin_length_correlation(method=spearman)"], n_boot=100).set_index("metric")
    longer = ((lc > lr) + 0.5 * (lc == lr)).mean()
    assert out.loc["length_baseline_accuracy", "value"] == pytest.approx(longer)
    assert out.loc["length_baseline_accuracy(pick=shorter)", "value"] == pytest.approx(1 - longer)
    assert out.loc["rm_longer_preference", "value"] > 0.8
    from scipy.stats import pearsonr, spearmanr

    assert out.loc["margin_length_correlation", "value"] == pytest.approx(pearsonr(length_rm, lc - lr)[0], rel=1e-10)
    assert out.loc["margin_length_correlation(method=spearman)", "value"] == pytest.approx(
        spearmanr(length_rm, lc - lr)[0], rel=1e-10)
    texts = pd.DataFrame({"system": "rm", "score_chosen": [1.0, 2.0], "score_rejected": [0.0, 3.0],
                          "chosen": ["a long answer", "no"], "rejected": ["short", "longer one"]})
    assert scorebench.evaluate(texts, "length_baseline_accuracy", n_boot=0).value.iloc[0] == 0.5
    with pytest.raises(InputError, match="len_chosen"):
        scorebench.evaluate(t.drop(columns=["len_chosen"]), "rm_longer_preference", n_boot=0)


def test_preferences_kind_errors_and_margin_form():
    with pytest.raises(InputError, match="score_chosen and score_rejected"):
        scorebench.evaluate(pd.DataFrame({"system": ["a"], "score_chosen": [1.0]}), "rm_accuracy", n_boot=0)
    with pytest.raises(InputError, match="expected numbers"):
        scorebench.evaluate(pd.DataFrame({"score_chosen": ["x"], "score_rejected": [1.0]}), "rm_accuracy", n_boot=0)
    with pytest.raises(InputError, match="negative length"):
        scorebench.evaluate(pd.DataFrame({"score_chosen": [1.0], "score_rejected": [0.0], "len_chosen": [-1],
                                          "len_rejected": [3]}), "rm_accuracy", n_boot=0)
    margin = pd.DataFrame({"system": "rm", "margin": [1.0, -1.0, 0.0, 2.0]})
    assert scorebench.evaluate(margin, "rm_accuracy", n_boot=0).value.iloc[0] == pytest.approx(0.625)
    nan = pd.DataFrame({"score_chosen": [1.0, np.nan], "score_rejected": [0.0, 0.0]})
    with pytest.raises(InputError, match="NaN"):
        scorebench.evaluate(nan, "rm_accuracy", n_boot=0)
    assert scorebench.evaluate(nan, "rm_accuracy", n_boot=0, nan_policy="omit").value.iloc[0] == 1.0


def test_cli_evaluate_preferences(tmp_path):
    from click.testing import CliRunner

    from scorebench.cli import cli

    path = tmp_path / "prefs.csv"
    _table().to_csv(path, index=False)
    out = tmp_path / "out.csv"
    result = CliRunner().invoke(cli, ["evaluate", str(path), "-m", "rm_accuracy", "-m", "rewardbench_score",
                                      "--by", "system", "--bootstrap", "50", "--output", str(out)])
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(out)
    assert set(frame.metric) == {"rm_accuracy", "rewardbench_score"} and len(frame) == 4


def test_per_subset_accuracy_by_subset_column():
    t = _table(seed=6)
    out = scorebench.evaluate(t, ["rm_accuracy", "length_baseline_accuracy"], by="system,subset", n_boot=0)
    assert len(out) == 2 * 2 * len(EXAMPLE_COUNTS)
    one = out[(out.system == "rm-a") & (out.subset == "hep-go") & (out.metric == "rm_accuracy")].value.iloc[0]
    p = t[(t.system == "rm-a") & (t.subset == "hep-go")]
    c, r = p.score_chosen.to_numpy(), p.score_rejected.to_numpy()
    assert one == pytest.approx(((c > r) + 0.5 * (c == r)).mean())
