"""Battles drawn from a known style-controlled Bradley-Terry model (FastChat's conv_metadata columns),
shared by the style-control tests and the Arena board tests."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy.special import expit

MODELS = ["m0", "m1", "m2", "m3", "m4", "m5"]
TRUE_R = np.array([0.30, 0.15, 0.05, 0.0, -0.1, -0.25])  # log10-odds units (x 400 = Elo)
TRUE_COEF = np.array([0.45, 0.10, 0.05, -0.05])


def style_battles(seed: int = 7, n: int = 4000) -> pd.DataFrame:
    """Battles drawn from a known style-controlled BT model (FastChat's conv_metadata columns)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, len(MODELS), n)
    b = (a + rng.integers(1, len(MODELS), n)) % len(MODELS)
    verbosity = np.linspace(200, 700, len(MODELS))  # models differ in length, as on the Arena
    tok_a, tok_b = rng.poisson(verbosity[a]), rng.poisson(verbosity[b])
    cols = {"sum_assistant_a_tokens": tok_a, "sum_assistant_b_tokens": tok_b}
    for f, lam in (("header_count", 2.0), ("list_count", 5.0), ("bold_count", 3.0)):
        cols[f"{f}_a"], cols[f"{f}_b"] = rng.poisson(lam, n), rng.poisson(lam, n)
    feats = []
    for f in ("sum_assistant_{}_tokens", "header_count_{}", "list_count_{}", "bold_count_{}"):
        fa, fb = cols[f.format("a")], cols[f.format("b")]
        feats.append((fa - fb) / (fa + fb + 1.0))
    Z = np.column_stack(feats)
    Z = (Z - Z.mean(0)) / Z.std(0)
    p = expit(math.log(10) * (TRUE_R[a] - TRUE_R[b]) + Z @ TRUE_COEF)
    u = rng.uniform(size=n)
    tie = rng.uniform(size=n) < 0.15
    winner = np.where(tie, np.where(rng.uniform(size=n) < 0.3, "tie (bothbad)", "tie"),
                      np.where(u < p, "model_a", "model_b"))
    table = pd.DataFrame({"model_a": np.array(MODELS)[a], "model_b": np.array(MODELS)[b], "winner": winner,
                          "anony": rng.uniform(size=n) < 0.8, "language": np.where(rng.uniform(size=n) < 0.7,
                                                                                   "English", "Chinese")})
    for k, v in cols.items():
        table[f"style_{k}"] = v
    return table
