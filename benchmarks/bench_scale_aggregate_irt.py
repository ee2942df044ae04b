"""Aggregation with rank intervals on a sparse systems x benchmarks matrix, and 2PL IRT with SEs, at scale.

Usage::

    python benchmarks/bench_scale_aggregate_irt.py                    # 22,000 x 2,200 sparse (5% scored), 200 rounds
    python benchmarks/bench_scale_aggregate_irt.py --n-boot 1000
    python benchmarks/bench_scale_aggregate_irt.py --irt 5000 2000     # 2PL with SEs (and a profile)
    python benchmarks/bench_scale_aggregate_irt.py --irt 5000 28632    # the Open LLM Leaderboard size
    python benchmarks/bench_scale_aggregate_irt.py --irt-sparse        # 2PL on the sparse 22,000 x 2,200 matrix

Aggregation: ``scorebench.aggregate(wide, method, n_boot=..., missing=...)`` on a wide
DataFrame (systems x benchmarks, NaN = not scored; every system scored on >= 3 benchmarks),
timed from the DataFrame to the Ranking with score and rank intervals (task resampling).
Borda (``missing="complete"``, the expected Borda score over uniform completions) and HELM's
win rate (only scored systems compete) resample tasks in one matrix product
(``Method.column_parts``); rank intervals use the O(n log n) competition ranks.

IRT: ``scorebench.irt.fit(y, "2pl")`` (standard errors of every item, item by item: the whole
cross-item information needs systems x grid x items x 4 doubles, 71 GiB at 5,000 x 2,000, so
``full_se=True`` is refused beyond 4 GiB) on simulated responses (a ~ U(0.5, 2),
b ~ N(0, 1), theta ~ N(0, 1), seed 1), wall and CPU seconds, and the top of a cProfile.
Every timing prints wall and process CPU seconds and the 1-minute load average.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import resource
import time

import numpy as np
import pandas as pd


def sparse_wide(systems: int, tasks: int, density: float, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    skill = rng.normal(0, 1, systems)
    hard = rng.normal(0, 1, tasks)
    values = np.full((systems, tasks), np.nan)
    filled = rng.random((systems, tasks)) < density
    filled[np.arange(systems)[:, None], rng.integers(0, tasks, (systems, 3))] = True
    rows, cols = np.nonzero(filled)
    values[rows, cols] = 1 / (1 + np.exp(-(skill[rows] - hard[cols] + rng.normal(0, 0.5, rows.size))))
    return pd.DataFrame(values, index=[f"m{i}" for i in range(systems)], columns=[f"b{j}" for j in range(tasks)])


def timed(label: str, fn):
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    print(f"{label}: {time.perf_counter() - w0:.1f} s wall, {time.process_time() - c0:.1f} s CPU "
          f"(load {os.getloadavg()[0]:.1f}, peak RSS so far "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20:.2f} GiB)", flush=True)
    return out


def aggregation(systems: int, tasks: int, density: float, n_boot: int) -> None:
    import scorebench

    wide = sparse_wide(systems, tasks, density)
    print(f"sparse matrix {systems} x {tasks}, {np.isfinite(wide.to_numpy()).mean():.1%} scored, "
          f"n_boot={n_boot}")
    for method, params in (("borda", {"missing": "complete"}), ("win_rate", {})):
        r = timed(f"  {method} {params} with score and rank intervals",
                  lambda method=method, params=params: scorebench.aggregate(wide, method, n_boot=n_boot, seed=0,
                                                                            **params))
        width = (r.rank_high - r.rank_low).astype(float)
        print(f"    median rank-interval width {np.median(width):.0f}, top system {r.systems[int(np.argmin(r.ranks))]}")


def irt(systems: int, items: int) -> None:
    from scorebench import irt as sb_irt

    rng = np.random.default_rng(1)
    a, b, theta = rng.uniform(0.5, 2.0, items), rng.normal(0, 1, items), rng.normal(0, 1, systems)
    y = np.empty((systems, items))
    for s in range(0, systems, 500):
        y[s:s + 500] = rng.random((min(500, systems - s), items)) < 1 / (1 + np.exp(-a * (theta[s:s + 500, None] - b)))
    prof = cProfile.Profile()
    fit = timed(f"2PL {systems} x {items} with item-by-item SEs",
                lambda: prof.runcall(sb_irt.fit, y, "2pl", warn=False))
    items_table = fit.items
    se_cols = [c for c in items_table.columns if c.startswith("se")]
    print(f"  SE columns {se_cols}; finite share {np.isfinite(items_table[se_cols].to_numpy(float)).mean():.3f}")
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(18)
    print("\n".join(line for line in out.getvalue().splitlines() if line.strip())[-2400:])


def irt_sparse(systems: int, tasks: int, density: float) -> None:
    """2PL on the sparse matrix (NaN = not answered): each scored cell drawn right/wrong from its score."""
    from scorebench import irt as sb_irt

    wide = sparse_wide(systems, tasks, density).to_numpy()
    rng = np.random.default_rng(2)
    y = np.where(np.isnan(wide), np.nan, (rng.random(wide.shape) < np.nan_to_num(wide)).astype(float))
    print(f"sparse responses {systems} x {tasks}, {np.isfinite(y).mean():.1%} answered")
    fit = timed("  2PL with item-by-item SEs", lambda: sb_irt.fit(y, "2pl", warn=False))
    print(f"  converged {fit.converged}; finite SE share "
          f"{np.isfinite(fit.items[['se_a', 'se_b']].to_numpy(float)).mean():.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--systems", type=int, default=22_000)
    ap.add_argument("--tasks", type=int, default=2_200)
    ap.add_argument("--density", type=float, default=0.05)
    ap.add_argument("--n-boot", type=int, default=200)
    ap.add_argument("--irt", type=int, nargs=2, metavar=("SYSTEMS", "ITEMS"))
    ap.add_argument("--irt-sparse", action="store_true", help="2PL on the sparse systems x tasks matrix")
    a = ap.parse_args()
    if a.irt:
        irt(*a.irt)
    elif a.irt_sparse:
        irt_sparse(a.systems, a.tasks, a.density)
    else:
        aggregation(a.systems, a.tasks, a.density, a.n_boot)


if __name__ == "__main__":
    main()
