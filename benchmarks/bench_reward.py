"""CPU time of the reward family: style-controlled Bradley-Terry and RewardBench accuracy.

Run: ``python -u benchmarks/bench_reward.py``. Reports process CPU time (the machine is
shared, so wall time says little) for a style-control fit and its bootstrap on synthetic
Arena battles, and for ``evaluate`` of RewardBench metrics with 1000 bootstrap rounds.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

import scorebench
from scorebench.aggregate.style_control import style_control


def battles(n: int, n_models: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, n_models, n)
    b = (a + rng.integers(1, n_models, n)) % n_models
    r = rng.normal(0, 0.3, n_models)
    p = 1 / (1 + 10 ** (-(r[a] - r[b])))
    t = pd.DataFrame({"a": [f"m{i}" for i in a], "b": [f"m{i}" for i in b],
                      "winner": np.where(rng.uniform(size=n) < p, "a", "b")})
    for f, lam in (("sum_assistant_{}_tokens", 400), ("header_count_{}", 2), ("list_count_{}", 5),
                   ("bold_count_{}", 3)):
        t[f"style_{f.format('a')}"] = rng.poisson(lam, n)
        t[f"style_{f.format('b')}"] = rng.poisson(lam, n)
    return t


def cpu(fn) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def main() -> None:
    for n, k in ((10_000, 20), (100_000, 50)):
        t = battles(n, k)
        fit = cpu(lambda t=t: style_control(t))
        boot = cpu(lambda t=t: style_control(t, n_boot=20))
        print(f"style control: {n:>7,} battles, {k} models: fit {fit:.2f} s CPU, fit + 20 bootstrap rounds "
              f"{boot:.2f} s CPU")
    rng = np.random.default_rng(1)
    subsets = list(scorebench.io.readers.rewardbench.EXAMPLE_COUNTS)
    n = 3000
    prefs = pd.concat([pd.DataFrame({"system": f"rm{s}", "id": np.arange(n), "subset": np.array(subsets)[
        np.arange(n) % len(subsets)], "score_chosen": rng.normal(0.5, 1, n), "score_rejected": rng.normal(0, 1, n)})
        for s in range(10)])
    took = cpu(lambda: scorebench.evaluate(prefs, ["rm_accuracy", "rewardbench_score"], n_boot=1000))
    print(f"evaluate rm_accuracy + rewardbench_score: 10 reward models x {n:,} prompts, 1000 rounds: "
          f"{took:.2f} s CPU")


if __name__ == "__main__":
    main()
