"""Anytime-valid confidence sequences: error under continuous peeking, by simulation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scorebench.analysis.confseq import betting_cs, confidence_sequence, fixed_n_interval
from scorebench.core.errors import InputError

REPS, N = 200, 300


def _ever_misses(frame: pd.DataFrame, truth: float, start: int = 0) -> bool:
    f = frame.iloc[start:]
    return bool(((f["lower"] > truth) | (f["upper"] < truth)).any())


def test_peeking_keeps_alpha_where_the_fixed_n_interval_does_not():
    """Bernoulli(0.5) streams checked after every item: the CS misses in at most ~alpha of runs,
    the fixed-n t interval (checked from t = 10 on) in far more."""
    rng = np.random.default_rng(3)
    cs_miss = fixed_miss = 0
    for _ in range(REPS):
        x = (rng.random(N) < 0.5).astype(float)
        cs_miss += _ever_misses(betting_cs(x, alpha=0.05, grid=100), 0.5)
        fixed_miss += _ever_misses(fixed_n_interval(x, alpha=0.05), 0.5, start=9)
    mc = np.sqrt(0.05 * 0.95 / REPS)
    assert cs_miss / REPS <= 0.05 + 2 * mc, cs_miss / REPS
    assert fixed_miss / REPS > 0.15, fixed_miss / REPS  # ~0.4: peeking breaks the fixed-n guarantee


def test_paired_differences_under_peeking():
    """Two systems of equal accuracy: the CS of the paired difference (in [-1, 1]) stays valid."""
    rng = np.random.default_rng(4)
    miss = 0
    for _ in range(REPS):
        base = rng.random(N) < 0.6
        flip = rng.random(N) < 0.3
        other = np.where(flip, rng.random(N) < 0.6, base)
        miss += _ever_misses(betting_cs(other.astype(float) - base, bounds=(-1, 1), grid=100), 0.0)
    assert miss / REPS <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / REPS)


def test_shrinks_and_covers_a_skewed_mean():
    rng = np.random.default_rng(0)
    x = rng.beta(0.5, 3.0, 4000)  # mean 1/7
    cs = betting_cs(x, grid=500)
    assert cs["lower"].iloc[-1] < 1 / 7 < cs["upper"].iloc[-1]
    width = (cs["upper"] - cs["lower"]).to_numpy()
    assert (np.diff(width) <= 1e-12).all() and width[-1] < 0.05  # running intersection never widens


def test_table_api_and_errors():
    n = 500
    rng = np.random.default_rng(1)
    base = (rng.random(n) < 0.5).astype(int)
    better = np.where(rng.random(n) < 0.4, 1, base)
    t = pd.DataFrame({"system": ["base"] * n + ["new"] * n, "id": list(range(n)) * 2, "correct": np.r_[base, better]})
    cs = confidence_sequence(t, "accuracy", baseline="base", grid=200, path=True)
    assert cs["system"].unique().tolist() == ["new"] and len(cs) == n
    last = cs.iloc[-1]
    assert last["lower"] > 0  # the improvement is detected
    with pytest.raises(InputError, match="outside the bounds"):
        betting_cs([0.5, 2.0])
    with pytest.raises(InputError, match="baseline"):
        confidence_sequence(t, "accuracy", baseline="nope")


def test_cli(tmp_path):
    from click.testing import CliRunner

    from scorebench.cli import cli

    n = 300
    rng = np.random.default_rng(2)
    base = (rng.random(n) < 0.5).astype(int)
    t = pd.DataFrame({"system": ["base"] * n + ["new"] * n, "id": list(range(n)) * 2,
                      "correct": np.r_[base, np.where(rng.random(n) < 0.5, 1, base)]})
    path = tmp_path / "t.csv"
    t.to_csv(path, index=False)
    out = tmp_path / "cs.csv"
    result = CliRunner().invoke(cli, ["anytime", str(path), "-m", "accuracy", "--baseline", "base", "--path",
                                      "--grid", "200", "-o", str(out)])
    assert result.exit_code == 0, result.output
    cs = pd.read_csv(out, comment="#")
    assert len(cs) == n and (cs["lower"] <= cs["mean"]).all() and (cs["mean"] <= cs["upper"]).all()
    bad = CliRunner().invoke(cli, ["anytime", str(path), "-m", "accuracy", "--bounds", "0", "0.5"])
    assert bad.exit_code == 2 and "outside the bounds" in bad.output
