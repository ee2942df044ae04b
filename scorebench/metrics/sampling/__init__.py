r"""Repeated sampling: pass@k, pass^k, maj@k, G-Pass@k_tau, mG-Pass@k, avg@n and Bayes@N.

Read from an ``attempts`` table (one row per system, item and attempt; see
:mod:`scorebench.metrics.sampling.kind`). Each metric is the mean over items of an unbiased
per-item estimate from the item's :math:`n_i` attempts (:mod:`.estimators`), so it merges by
sums on every engine. The pandas engine's default interval is a two-level bootstrap (items,
then attempts within items), so a 30-item run does not claim the precision of 30 x 64
independent draws. Estimators that are nonlinear in the per-item success count (pass@k for
k > 1, pass^k, G-Pass, maj@k) use the centred percentile rule: resampled attempts shift
their replicates upward or downward (Jensen), and the centred rule does not add that shift
to the interval.

Examples
--------
>>> import numpy as np, pandas as pd, scorebench
>>> rng = np.random.default_rng(0)
>>> t = pd.DataFrame({"item": np.repeat(np.arange(20), 8), "attempt": np.tile(np.arange(8), 20),
...                   "correct": rng.integers(0, 2, 160)})
>>> s = scorebench.evaluate(t, ["pass@1", "pass@4", "bayes_at_n"], n_boot=200, seed=0)
>>> s[["metric", "n"]].values.tolist()
[['pass@1', 20], ['pass@4', 20], ['bayes_at_n', 20]]
"""

from __future__ import annotations

from scorebench.core.registry import register
from scorebench.metrics.sampling import kind as _kind  # noqa: F401  (registers the attempts kind)
from scorebench.metrics.sampling.estimators import (avg_at_n, bayes_at_n, bayes_at_n_posterior, g_pass_at_k, g_pass_at_k_tau,
                         majority_at_k, mg_pass_at_k, pass_at_k, pass_at_k_curve, pass_hat_at_k, pass_hat_k)

__all__ = ["pass_at_k", "pass_hat_at_k", "g_pass_at_k", "pass_hat_k", "g_pass_at_k_tau", "mg_pass_at_k", "avg_at_n", "bayes_at_n",
           "bayes_at_n_posterior", "majority_at_k", "pass_at_k_curve"]

_FAMILY = "sampling"
_KIND = "attempts"
_CHEN = "Chen et al. (2021), Evaluating Large Language Models Trained on Code, arXiv:2107.03374"
_LIU = "Liu et al. (2024), Are Your LLMs Capable of Stable Reasoning? (G-Pass@k), arXiv:2412.13147"
_SHARED = dict(family=_FAMILY, kind=_KIND, higher_is_better=True, bounds=(0.0, 1.0), per_row=True)

register("pass@k", inputs=("outcomes",), params={"k": None}, interval="centered_percentile",
         citation=_CHEN + " (unbiased estimator, product form)", **_SHARED, tested_against=('closed forms and brute-force enumeration (tests/evaluation/test_sampling.py)', 1e-12))(pass_at_k)
register("pass_hat@k", inputs=("outcomes",), params={"k": None}, interval="centered_percentile",
         citation="Yao et al. (2024), tau-bench, arXiv:2406.12045 (pass^k)", **_SHARED, tested_against=('closed forms and brute-force enumeration (tests/evaluation/test_sampling.py)', 1e-12))(pass_hat_at_k)
register("g_pass@k", inputs=("outcomes",), params={"k": None, "tau": 1.0}, interval="centered_percentile",
         citation=_LIU, **_SHARED, tested_against=('closed forms and brute-force enumeration (tests/evaluation/test_sampling.py)', 1e-12))(g_pass_at_k)
register("mg_pass@k", inputs=("outcomes",), params={"k": None}, interval="centered_percentile",
         citation=_LIU, **_SHARED, tested_against=('closed forms and brute-force enumeration (tests/evaluation/test_sampling.py)', 1e-12))(mg_pass_at_k)
register("avg_at_n", inputs=("outcomes",), interval="percentile",
         citation="mean accuracy over n attempts (avg@n = unbiased pass@1); " + _CHEN, **_SHARED, tested_against=('closed forms and brute-force enumeration (tests/evaluation/test_sampling.py)', 1e-12))(avg_at_n)
register("bayes_at_n", inputs=("outcomes",), interval="percentile",
         citation="Hariri et al. (2026), Don't Pass@k: A Bayesian Framework for LLM Evaluation, ICLR 2026, "
                  "arXiv:2510.04265", **_SHARED, tested_against=('closed forms and brute-force enumeration (tests/evaluation/test_sampling.py)', 1e-12))(bayes_at_n)
register("majority@k", aliases=("maj@k",), inputs=("answers", "outcomes"), params={"k": None}, interval="centered_percentile",
         citation="Wang et al. (2023), Self-Consistency, ICLR 2023 (majority vote; ties split evenly)",
         **_SHARED, tested_against=('closed forms and brute-force enumeration (tests/evaluation/test_sampling.py)', 1e-12))(majority_at_k)
