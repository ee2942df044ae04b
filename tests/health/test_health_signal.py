"""Signal, noise, SNR, decision accuracy, monotonicity and noisy sub-tasks on simulated suites
with known signal and noise (Heineman et al., 2025; Madaan et al., 2024)."""

import numpy as np
import pandas as pd
import pytest

from scorebench.core.errors import InputError
from scorebench.health import (decision_accuracy, monotonicity, relative_dispersion, relative_std, signal_noise,
                               signal_to_noise)


def test_closed_forms():
    assert relative_dispersion([0.2, 0.4, 0.6, 0.8]) == pytest.approx(0.6 / 0.5)
    s = np.array([0.48, 0.52, 0.50, 0.46, 0.54])
    assert relative_std(s) == pytest.approx(s.std(ddof=0) / s.mean())
    assert signal_to_noise([0.2, 0.4, 0.6, 0.8], s) == pytest.approx(1.2 / (s.std() / s.mean()))
    assert signal_to_noise([0.2, 0.4], [0.5, 0.5]) == np.inf


def test_decision_accuracy_and_monotonicity():
    assert decision_accuracy([1, 2, 3, 4], [10, 20, 30, 40]) == 1.0
    assert decision_accuracy([1, 2, 3, 4], [40, 30, 20, 10]) == 0.0
    # pairs (0,1) agree, (0,2) agree, (1,2) disagree
    assert decision_accuracy([0.1, 0.2, 0.3], [0.5, 0.7, 0.6]) == pytest.approx(2 / 3)
    assert monotonicity([1, 2, 3, 4, 5], [0.1, 0.2, 0.3, 0.4, 0.5]) == pytest.approx(1.0)
    assert monotonicity([1, 2, 3, 4, 5], [0.5, 0.4, 0.3, 0.2, 0.1]) == pytest.approx(-1.0)
    assert np.isnan(monotonicity([1, 2, 3], [0.3, 0.3, 0.3]))
    with pytest.raises(InputError, match="one of each per model"):
        decision_accuracy([1, 2], [1, 2, 3])


def _suite(rng, means, sigma, steps=200, trend=0.0, task=None):
    rows = []
    for s, m in enumerate(means):
        for t in range(steps):
            row = {"system": f"m{s}", "step": t, "value": m + trend * (t - steps) + rng.normal(0, sigma)}
            if task is not None:
                row["task"] = task
            rows.append(row)
    return rows


def test_known_signal_and_noise_are_recovered():
    rng = np.random.default_rng(0)
    means, sigma = np.array([0.40, 0.45, 0.50, 0.55, 0.60]), 0.01
    out = signal_noise(pd.DataFrame(_suite(rng, means, sigma)), last=200)
    true_signal = (means.max() - means.min()) / means.mean()
    true_noise = np.mean(sigma / means)
    row = out.iloc[0]
    assert row["n_systems"] == 5
    assert row["signal"] == pytest.approx(true_signal, rel=0.15)  # final checkpoints carry the noise sigma
    assert row["noise"] == pytest.approx(true_noise, rel=0.1)
    assert row["snr"] == pytest.approx(row["signal"] / row["noise"])
    # ten times the noise: the SNR falls about tenfold
    noisy = signal_noise(pd.DataFrame(_suite(rng, means, 10 * sigma)), last=200).iloc[0]
    assert noisy["noise"] == pytest.approx(10 * true_noise, rel=0.1)
    assert noisy["snr"] < row["snr"] / 4


def test_noise_uses_only_the_last_checkpoints():
    rng = np.random.default_rng(1)
    rows = _suite(rng, [0.4, 0.6], 0.0, steps=20)
    for r in rows:  # wild early training, flat at the end
        if r["step"] < 10:
            r["value"] += 0.2 * (-1) ** r["step"]
    out = signal_noise(pd.DataFrame(rows), last=5).iloc[0]
    assert out["noise"] == 0.0 and out["snr"] == np.inf


def test_monotonicity_over_training():
    rng = np.random.default_rng(2)
    up = signal_noise(pd.DataFrame(_suite(rng, [0.4, 0.6], 0.001, steps=30, trend=0.01))).iloc[0]
    flat = signal_noise(pd.DataFrame(_suite(rng, [0.4, 0.6], 0.01, steps=30))).iloc[0]
    assert up["monotonicity"] > 0.95
    assert abs(flat["monotonicity"]) < 0.3


def test_noisy_subtask_is_flagged():
    rng = np.random.default_rng(3)
    means = np.linspace(0.3, 0.7, 6)
    rows = (_suite(rng, means, 0.005, steps=30, task="clean_a") + _suite(rng, means, 0.005, steps=30, task="clean_b")
            + _suite(rng, np.full(6, 0.5), 0.08, steps=30, task="noisy"))
    out = signal_noise(pd.DataFrame(rows), task="task").set_index("task")
    assert out.loc["noisy", "noisy"]
    assert not out.loc["clean_a", "noisy"] and not out.loc["clean_b", "noisy"]
    assert out.loc["noisy", "snr_without"] > out.loc["(aggregate)", "snr"]
    assert out.loc["noisy", "snr"] < out.loc["clean_a", "snr"]


def test_decision_accuracy_across_scales():
    rng = np.random.default_rng(4)
    large = np.linspace(0.3, 0.8, 8)
    rows = []
    for scale, noise in ((1, 0.0), (2, 0.3), (10, 0.0)):
        for s, m in enumerate(large):
            small = m * 0.5 + (rng.normal(0, noise) if noise else 0.0)
            rows.append({"system": f"corpus{s}", "size": scale, "value": m if scale == 10 else small})
    out = signal_noise(pd.DataFrame(rows), over=None, scale="size").set_index("scale")
    assert out.loc[1, "decision_accuracy"] == 1.0           # same order as the target
    assert out.loc[2, "decision_accuracy"] < 1.0            # shuffled by noise
    assert np.isnan(out.loc[10, "decision_accuracy"])       # the target itself
    assert np.isnan(out.loc[1, "noise"])                    # no checkpoints, no noise


def test_seeds_as_replicates():
    rng = np.random.default_rng(5)
    rows = [{"system": s, "seed": k, "value": 0.5 + 0.1 * s + rng.normal(0, 0.01)} for s in range(3) for k in range(40)]
    out = signal_noise(pd.DataFrame(rows), over="seed", seeds=True).iloc[0]
    assert out["signal"] == pytest.approx(0.2 / 0.6, rel=0.1)
    assert np.isnan(out["monotonicity"])


@pytest.mark.parametrize("table, kwargs, match", [
    (pd.DataFrame({"system": ["a"], "value": [1.0]}), {}, "missing column"),
    (pd.DataFrame({"system": ["a", "b"], "step": [1, 1], "value": [1.0, np.nan]}), {}, "finite numbers"),
    (pd.DataFrame({"system": ["a", "a"], "step": [1, 1], "value": [1.0, 2.0]}), {}, "more than one score"),
    (pd.DataFrame({"system": ["a", "b"], "step": ["x", 1], "value": [1.0, 2.0]}), {}, "must hold numbers"),
    (pd.DataFrame({"system": ["a", "b"], "step": [1, 1], "value": [1.0, 2.0]}), {"last": 1}, "last"),
    (pd.DataFrame({"system": ["a", "b"], "step": [1, 1], "value": [1.0, -1.0]}), {}, "mean score is 0"),
    ("not a table", {}, "expected a DataFrame"),
])
def test_bad_input(table, kwargs, match):
    with pytest.raises(InputError, match=match):
        signal_noise(table, **kwargs)
