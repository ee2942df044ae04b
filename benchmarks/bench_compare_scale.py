"""compare over all system pairs at scale: the matrix engine (scorebench.evaluation.pairwise) end to end.

Usage::

    python benchmarks/bench_compare_scale.py                      # 100 x 20,000 and 400 x 25,000 (compare)
    python benchmarks/bench_compare_scale.py --systems 400 --items 100000   # the issue's target size
    python benchmarks/bench_compare_scale.py --engine-only --systems 400 --items 100000  # matrix in, no table
    python benchmarks/bench_compare_scale.py --dask --systems 100 --items 20000 --tests mcnemar,bootstrap,t

Each configuration runs in a fresh subprocess, so the peak resident memory reported
(``ru_maxrss`` of that process) is its own. Data: right/wrong outcomes from a 1PL model
(system skill ~ U(-1, 1), item ease ~ N(0, 1)), seed 0, ids ``q0..``; the long table has one
row per (system, item). ``compare`` is timed from the long pandas table to the corrected
output (Holm and BH over all pairs); table construction is not timed.

Tests: ``mcnemar`` alone, and ``bootstrap + mcnemar + t`` (1,000 Poisson rounds, the
issue's "McNemar or paired bootstrap, Holm"), and the default set (adds 10,000 sign flips,
capped to ``5e7 / n`` rounds as before). The per-pair loop (``stats_tests.mcnemar`` and
``stats.paired_bootstrap`` once per pair, what compare did before) is timed on a subset of
pairs and extrapolated linearly in pairs (labelled).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

import numpy as np


def outcomes(systems: int, items: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    skill = rng.uniform(-1, 1, systems)
    ease = rng.normal(0, 1, items)
    out = np.empty((items, systems), dtype=np.float64)
    for s in range(0, items, 5000):
        p = 1 / (1 + np.exp(-(ease[s:s + 5000, None] + skill)))
        out[s:s + 5000] = rng.random(p.shape) < p
    return out


def long_table(matrix: np.ndarray):
    import pandas as pd

    items, systems = matrix.shape
    names = np.array([f"sys{j:03d}" for j in range(systems)])
    ids = np.array([f"q{i}" for i in range(items)], dtype=object)
    return pd.DataFrame({"system": pd.Categorical(np.repeat(names, items)), "id": np.tile(ids, systems),
                         "correct": matrix.T.ravel().astype(np.int8)})


def one(systems: int, items: int, tests: list[str] | None, engine_only: bool, n_boot: int) -> dict:
    import scorebench
    from scorebench.core.stats import holm
    from scorebench.evaluation.comparison import unit_hashes
    from scorebench.evaluation.pairwise import pair_sums, pair_tests, permutation_rounds

    m = outcomes(systems, items)
    if engine_only:
        t0, c0 = time.perf_counter(), time.process_time()
        ia, ib = np.triu_indices(systems, 1)
        tests = tests or ["mcnemar", "bootstrap"]
        flips = permutation_rounds(items, 10_000) if "permutation" in tests else 0
        sums = pair_sums(m, unit_hashes(np.array([f"q{i}" for i in range(items)])), seed=0,
                         n_boot=n_boot if "bootstrap" in tests else 0, n_perm=flips)
        res = pair_tests(sums, ia, ib, tests, matrix=m, n_boot=n_boot if "bootstrap" in tests else 0)
        for t in tests:
            holm(res[t][1])
        seconds = time.perf_counter() - t0
        pairs = ia.size
    else:
        table = long_table(m)
        del m
        t0, c0 = time.perf_counter(), time.process_time()
        out = scorebench.compare(table, "accuracy", tests=tests, n_boot=n_boot)
        seconds = time.perf_counter() - t0
        pairs = len(out) // out["test"].nunique()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # GiB (Linux: KiB)
    return {"systems": systems, "items": items, "pairs": int(pairs), "tests": tests or "default",
            "engine_only": engine_only, "seconds": round(seconds, 2),
            "cpu_seconds": round(time.process_time() - c0, 2), "peak_rss_gib": round(peak, 2)}


def dask_run(systems: int, items: int, tests: list[str] | None, n_boot: int, folder: str) -> dict:
    """compare on a Parquet folder through a LocalCluster of 2 workers x 2 GB, against in memory."""
    import tempfile
    from pathlib import Path

    import dask.dataframe as dd
    import distributed

    import scorebench

    m = outcomes(systems, items)
    table = long_table(m)
    del m
    folder = folder or tempfile.mkdtemp(prefix="bench_compare_")
    parts = 16
    for i in range(parts):
        table.iloc[i::parts].to_parquet(Path(folder) / f"part{i:02d}.parquet")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                       memory_limit="2GB")
    with distributed.Client(cluster):
        t0 = time.perf_counter()
        got = scorebench.compare(dd.read_parquet(folder), "accuracy", tests=tests, n_boot=n_boot)
        seconds = time.perf_counter() - t0
    cluster.close()
    expected = scorebench.compare(table, "accuracy", tests=tests, n_boot=n_boot)
    diff = float(np.nanmax(np.abs(got["p_value"].to_numpy() - expected["p_value"].to_numpy())))
    return {"systems": systems, "items": items, "engine": "dask (2 workers x 2 GB, 16 Parquet files)",
            "tests": tests or "default", "seconds": round(seconds, 2), "max_abs_p_difference_vs_pandas": diff}


def per_pair_loop(systems: int, items: int, pairs: int, n_boot: int) -> dict:
    """The previous per-pair path (one McNemar and one multinomial bootstrap per pair), timed on
    ``pairs`` pairs and extrapolated to all pairs."""
    from scorebench.analysis.stats_tests import mcnemar
    from scorebench.core.stats import paired_bootstrap, rng_for

    m = outcomes(systems, items)
    ia, ib = np.triu_indices(systems, 1)
    t0 = time.perf_counter()
    for i, j in list(zip(ia, ib))[:pairs]:
        mcnemar(m[:, i], m[:, j])
    mc = (time.perf_counter() - t0) / pairs * ia.size
    t0 = time.perf_counter()
    for i, j in list(zip(ia, ib))[:pairs]:
        paired_bootstrap(m[:, i] - m[:, j], n_boot, rng_for(0, i, j))
    boot = (time.perf_counter() - t0) / pairs * ia.size
    return {"systems": systems, "items": items, "per_pair_mcnemar_s_extrapolated": round(mc, 1),
            "per_pair_bootstrap_s_extrapolated": round(boot, 1), "timed_pairs": pairs}


def run(args: list[str]) -> dict:
    res = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--systems", type=int)
    ap.add_argument("--items", type=int)
    ap.add_argument("--tests", default=None, help="comma-separated, default: compare's default set")
    ap.add_argument("--engine-only", action="store_true")
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument("--child", action="store_true")
    ap.add_argument("--loop-pairs", type=int, default=0)
    ap.add_argument("--dask", action="store_true", help="compare on a Parquet folder with a 2-worker LocalCluster")
    a = ap.parse_args()
    if a.child:
        if a.dask:
            tests = a.tests.split(",") if a.tests else None
            print(json.dumps(dask_run(a.systems, a.items, tests, a.n_boot, "")))
        elif a.loop_pairs:
            print(json.dumps(per_pair_loop(a.systems, a.items, a.loop_pairs, a.n_boot)))
        else:
            tests = a.tests.split(",") if a.tests else None
            print(json.dumps(one(a.systems, a.items, tests, a.engine_only, a.n_boot)))
        return
    if a.systems:
        configs = [[f"--systems={a.systems}", f"--items={a.items}", *([f"--tests={a.tests}"] if a.tests else []),
                    *(["--engine-only"] if a.engine_only else []), *(["--dask"] if a.dask else []),
                    f"--n-boot={a.n_boot}"]]
    else:
        configs = [["--systems=100", "--items=20000", "--tests=mcnemar"],
                   ["--systems=100", "--items=20000"],
                   ["--systems=100", "--items=20000", "--loop-pairs=50"],
                   ["--systems=400", "--items=25000", "--tests=mcnemar,bootstrap,t"]]
    for c in configs:
        print(json.dumps(run(c)), flush=True)


if __name__ == "__main__":
    main()
