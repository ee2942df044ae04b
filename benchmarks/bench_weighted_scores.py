"""Threshold-weighted energy score vs the unweighted one (issue 19; goal: within 2x).

Usage: python benchmarks/bench_weighted_scores.py [--n 100000] [--members 50] [--dims 10] [--repeat 2]
Reports the best wall and CPU time of each; the weighted score is the unweighted one after
a clip, so the ratio should stay close to 1.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from scorebench.metrics.scoring_rules import energy_score
from scorebench.metrics.scoring_rules.weighted_mv import twenergy_score


def timed(fn, repeat):
    wall, cpu = [], []
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
    return min(wall), min(cpu)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--members", type=int, default=50)
    ap.add_argument("--dims", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    obs = rng.normal(size=(args.n, args.dims))
    ens = rng.normal(size=(args.n, args.members, args.dims))
    runs = {"energy_score": lambda: energy_score(obs, ens),
            "twenergy_score (a=0)": lambda: twenergy_score(obs, ens, a=0.0),
            "twenergy_score (a=-0.5, b=1)": lambda: twenergy_score(obs, ens, a=-0.5, b=1.0)}
    res = {k: timed(f, args.repeat) for k, f in runs.items()}
    print(f"{args.n:,} x {args.members} members x {args.dims} dims, best of {args.repeat}")
    for k, (w, c) in res.items():
        print(f"  {k:32s} wall {w:7.2f} s  CPU {c:7.2f} s  ratio (CPU) {c / res['energy_score'][1]:.2f}x")


if __name__ == "__main__":
    main()
