"""Every comparison in ``benchmarks/`` at reduced size, with one table of ratios vs goals.

Issue 18's goals are run in this process through each script's ``run(size)`` function and
checked against their goals; the other comparison scripts run as subprocesses with their
quick/small options (their own output lists their ratios; here: whether they ran and how
long). Sizes are labelled; full-size figures are in ``benchmarks/README.md``. Times are wall
seconds except where "cpu" is written: on the shared 2-core machine CPU time is steadier.

Run:  python benchmarks/run_all.py --quick          (target: under 3 minutes on an idle machine)
      python benchmarks/run_all.py --quick --only issue18   (just issue 18's goals)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

# other comparison scripts and their reduced-size arguments
OTHERS = {
    "bench_scoring_rules.py": ["--scale", "0.05", "--repeat", "1"],
    "bench_generative.py": ["--quick", "--only", "vendi", "--only", "prdc"],
    "bench_aggregate.py": ["--quick"],
    "bench_calibration.py": [],
    "bench_agreement_ood.py": [],
    "bench_embedding_retrieval.py": ["--n", "5000"],
    "bench_irt.py": ["--no-girth"],  # girth alone runs past the 120 s per-script limit
    "bench_evaluate.py": [],
    "bench_losses.py": ["--batch", "64", "--length", "64", "--repeats", "1"],
    "bench_ranking.py": ["--queries", "2000", "--skip", "ranx"],
}


def _row(rows: list, goal: str, size: str, ratio: str, target: str, met) -> None:
    rows.append((goal, size, ratio, target, {True: "yes", False: "NO", None: "-"}[met]))


def issue18(rows: list, quick: bool) -> None:
    import bench_cold_start
    import bench_fid
    import bench_ranking_floor
    import bench_set_bootstrap

    n = 8000 if quick else 50_000
    f = bench_fid.run(n, verbose=False)
    _row(rows, "FID mixed vs pytorch-fid route", f"2 x {n} x 2048",
         f"{f['ratio_wall']:.2f}x wall / {f['ratio_cpu']:.2f}x cpu", ">= 3x", f["ratio_cpu"] >= 3)
    _row(rows, "FID mixed vs float64 (rel. diff.)", f"2 x {n} x 2048", f"{f['rel_err_mixed']:.1e}", "<= 1e-6",
         f["rel_err_mixed"] <= 1e-6)
    q = 5000 if quick else 100_000
    r = bench_ranking_floor.run(q, verbose=False)
    _row(rows, "ranking vs pytrec_eval (dicts incl.)", f"{r['rows']:,} rows",
         f"{r['ratio_vs_pytrec_wall']:.2f}x wall / {r['ratio_vs_pytrec_cpu']:.2f}x cpu", ">= 5x",
         r["ratio_vs_pytrec_cpu"] >= 5)
    _row(rows, "ranking / floor (lexsort + join)", f"{r['rows']:,} rows",
         f"{r['ratio_vs_floor_wall']:.2f}x wall / {r['ratio_vs_floor_cpu']:.2f}x cpu", "<= 3x",
         r["ratio_vs_floor_cpu"] <= 3)
    _row(rows, "ranking peak memory (tracemalloc)", f"{r['rows']:,} rows", f"{r['peak_mib']:.0f} MiB", "< 1024 MiB",
         r["peak_mib"] < 1024)
    c = bench_cold_start.run(3, verbose=False)
    for name in ("scorebench --help", "scorebench evaluate (10 rows)"):
        wall, cpu = c[name]
        # the goal is wall time on an idle machine: on a loaded one this row reads NO, see the cpu figure
        _row(rows, f"cold start: {name}", "fresh process", f"{wall:.2f} s wall / {cpu:.2f} s cpu", "< 1.0 s wall",
             wall < 1.0)
    big = 1_000_000 if not quick else 300_000
    s = bench_set_bootstrap.run((big,), dask_rows=(200_000,) if quick else (200_000, 1_000_000), verbose=False)
    _, brier, ece = s["scaling"][0]
    _row(rows, "ECE / Brier bootstrap (200 rounds)", f"{big:,} rows", f"{ece / brier:.2f}x", "<= 3x", ece / brier <= 3)
    for d_rows, mem, dsk in s["memory_vs_dask"]:
        _row(rows, "in-memory / Dask (brier+log+ece)", f"5 x {d_rows:,} rows", f"{mem / dsk:.2f}x wall", "<= 1x",
             mem <= dsk)


def others(rows: list, timeout: float) -> None:
    env = dict(os.environ, PYTHONPATH=str(HERE.parent) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    for script, args in OTHERS.items():
        t0 = time.perf_counter()
        try:
            res = subprocess.run([sys.executable, str(HERE / script), *args], env=env, capture_output=True,
                                 text=True, timeout=timeout)
            ok, note = res.returncode == 0, ("ran" if res.returncode == 0 else f"exit {res.returncode}")
        except subprocess.TimeoutExpired:
            ok, note = False, f"timeout {timeout:.0f} s"
        _row(rows, script, " ".join(args) or "default", f"{note}, {time.perf_counter() - t0:.1f} s", "runs", ok)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="reduced sizes (the point of this script)")
    parser.add_argument("--only", choices=("issue18", "others"), default=None)
    parser.add_argument("--timeout", type=float, default=120.0, help="per other script, seconds")
    args = parser.parse_args()
    t0 = time.perf_counter()
    rows: list = []
    if args.only in (None, "issue18"):
        issue18(rows, args.quick)
    if args.only in (None, "others"):
        others(rows, args.timeout)
    header = ("goal", "size", "measured", "target", "met")
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(5)]
    for r in [header, tuple("-" * w for w in widths), *rows]:
        print(" | ".join(str(v).ljust(w) for v, w in zip(r, widths)))
    print(f"\ntotal {time.perf_counter() - t0:.0f} s wall; load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores")


if __name__ == "__main__":
    main()
