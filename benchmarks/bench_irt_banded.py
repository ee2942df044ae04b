"""2PL EM with item-by-item SEs: full E-step products against the banded ones, side by side in one process.

Usage::

    python benchmarks/bench_irt_banded.py                  # 5,000 x 8,000 (both paths, cProfile per phase)
    python benchmarks/bench_irt_banded.py 5000 28632 --only banded   # the Open LLM Leaderboard size, new path

Simulated responses as in ``bench_scale_aggregate_irt.py --irt`` (a ~ U(0.5, 2), b ~ N(0, 1),
theta ~ N(0, 1), seed 1); ``scorebench.irt.fit(y, "2pl")`` once with the full products
(``quadrature.BAND_MIN_CELLS`` set to infinity) and once with the banded products
(:mod:`scorebench.irt.bands`, the default at this size). Prints, per run, CPU seconds
(``time.process_time``, the figure on a shared machine), wall seconds, the 1-minute load, the
CPU seconds of the phases (E-step products, log_prob, M-step, item covariances), and at the
end the largest differences between the two fits (estimates, SEs, log-likelihood, iterations).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import resource
import time

import numpy as np

PHASES = {"E-step (banded products)": ("bands.py", "banded_estep"),
          "E-step (full products)": ("quadrature.py", "loglik_nodes"),
          "E-step counts (full)": ("quadrature.py", "counts"),
          "band search (coarse product)": ("bands.py", "find_bands"),
          "log_prob": ("models.py", "log_prob"), "M-step": ("em.py", "mstep"),
          "item covariances": ("information.py", "item_covariance"), "EM total": ("em.py", "fit_em")}


def simulate(systems: int, items: int) -> np.ndarray:
    rng = np.random.default_rng(1)
    a, b, theta = rng.uniform(0.5, 2.0, items), rng.normal(0, 1, items), rng.normal(0, 1, systems)
    y = np.empty((systems, items))
    for s in range(0, systems, 500):
        y[s:s + 500] = rng.random((min(500, systems - s), items)) < 1 / (1 + np.exp(-a * (theta[s:s + 500, None] - b)))
    return y


def run(y: np.ndarray, banded: bool):
    from scorebench import irt as sb_irt
    from scorebench.irt import quadrature

    quadrature.BAND_MIN_CELLS = 5e8 if banded else float("inf")
    prof = cProfile.Profile()
    w0, c0 = time.perf_counter(), time.process_time()
    fit = prof.runcall(sb_irt.fit, y, "2pl", warn=False)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    print(f"{'banded' if banded else 'full  '}: {cpu:.1f} s CPU, {wall:.1f} s wall (load {os.getloadavg()[0]:.1f}, "
          f"peak RSS so far {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20:.2f} GiB), "
          f"{fit.n_iter} EM iterations, loglik {fit.loglik:.6f}", flush=True)
    stats = pstats.Stats(prof).stats
    for label, (file, name) in PHASES.items():
        tot = sum(v[3] for k, v in stats.items() if k[0].endswith(file) and k[2] == name)
        if tot:
            print(f"    {label}: {tot:.1f} s (cumulative, profiler clock)")
    return fit


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("systems", type=int, nargs="?", default=5000)
    ap.add_argument("items", type=int, nargs="?", default=8000)
    ap.add_argument("--only", choices=("full", "banded"))
    a = ap.parse_args()
    y = simulate(a.systems, a.items)
    fits = {kind: run(y, kind == "banded") for kind in ("full", "banded") if a.only in (None, kind)}
    if len(fits) == 2:
        f, b = fits["full"].items, fits["banded"].items
        for col in ("a", "b", "se_a", "se_b"):
            diff = np.abs(f[col].to_numpy(float) - b[col].to_numpy(float))
            print(f"max |full - banded| {col}: {np.nanmax(diff):.2e}")
        print(f"loglik full - banded: {fits['full'].loglik - fits['banded'].loglik:.3e}; iterations "
              f"{fits['full'].n_iter} / {fits['banded'].n_iter}")


if __name__ == "__main__":
    main()
