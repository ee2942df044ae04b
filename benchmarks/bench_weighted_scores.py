"""Benchmark: weighted multivariate scores against the unweighted energy score (issue 19).

Run from the repository root::

    python benchmarks/bench_weighted_scores.py                 # 100,000 rows x 50 members x 10 dims
    python benchmarks/bench_weighted_scores.py --n 10000       # quick check

Target: the weighted energy scores on 1e5 x 50 x 10 within 2x of the unweighted one. The
variogram and Gaussian kernel rows are for reference (the weighted kernel scores against
``gksmv_ensemble``).
Reported: best of ``--repeat`` runs, wall-clock and CPU time of the process (on a shared
machine the CPU time is the steadier figure) and the ratio to ``energy_score``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from scorebench.metrics import scoring_rules as S


def best(fn, repeat):
    wall = cpu = float("inf")
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        fn()
        wall, cpu = min(wall, time.perf_counter() - w), min(cpu, time.process_time() - c)
    return wall, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--m", "--members", type=int, default=50)
    ap.add_argument("--d", "--dims", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    g = np.random.default_rng(0)
    obs, ens = g.normal(size=(args.n, args.d)), g.normal(size=(args.n, args.m, args.d))
    w = g.random((args.n, args.m)) + 0.1
    cases = {
        "energy_score": lambda: S.energy_score(obs, ens),
        "energy_score(ens_w)": lambda: S.energy_score(obs, ens, ens_w=w),
        "energy_score(ens_w, fair)": lambda: S.energy_score(obs, ens, ens_w=w, estimator="fair"),
        "twenergy_score(a=0)": lambda: S.twenergy_score(obs, ens, a=0.0),
        "twenergy_score(a=-0.5, b=1)": lambda: S.twenergy_score(obs, ens, a=-0.5, b=1.0),
        "owenergy_score(a=-2)": lambda: S.owenergy_score(obs, ens, a=-2.0),
        "vrenergy_score(a=-2)": lambda: S.vrenergy_score(obs, ens, a=-2.0),
        "variogram_score": lambda: S.variogram_score(obs, ens),
        "variogram_score(ens_w, fair)": lambda: S.variogram_score(obs, ens, ens_w=w, estimator="fair"),
        "vrvariogram_score(a=-2)": lambda: S.vrvariogram_score(obs, ens, a=-2.0),
        "gksmv_ensemble": lambda: S.gksmv_ensemble(obs, ens),
        "twgksmv_ensemble(a=0)": lambda: S.twgksmv_ensemble(obs, ens, a=0.0),
        "owgksmv_ensemble(a=-2)": lambda: S.owgksmv_ensemble(obs, ens, a=-2.0),
        "vrgksmv_ensemble(a=-2)": lambda: S.vrgksmv_ensemble(obs, ens, a=-2.0),
    }
    print(f"{args.n} rows x {args.m} members x {args.d} dims, best of {args.repeat}")
    print(f"{'score':32s} {'wall s':>8s} {'cpu s':>8s} {'cpu / energy_score':>19s}")
    base = None
    for name, fn in cases.items():
        wall, cpu = best(fn, args.repeat)
        base = cpu if base is None else base
        print(f"{name:32s} {wall:8.3f} {cpu:8.3f} {cpu / base:19.2f}")


if __name__ == "__main__":
    main()
