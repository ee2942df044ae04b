"""Set-level bootstrap in memory: linear in rows x rounds, and never slower than Dask.

Run: ``python -u benchmarks/bench_set_bootstrap.py [--rows 100000 1000000 5000000] [--dask-rows 200000 1000000]``

1. One system, ``n_boot=200``: ``evaluate(table, ["ece"])`` beside ``["brier_score"]`` at each
   row count (time per metric, including extraction; ECE should cost at most 3x Brier).
2. Five systems x each of ``--dask-rows`` rows, Brier + log score + ECE, ``n_boot=200``: the
   in-memory engine against the Dask engine (LocalCluster, 2 worker processes, 1 thread each)
   on the same table split into 10 partitions; wall and CPU seconds (the in-memory engine's
   process time; Dask's is spread over its workers, so only its wall time is printed).
   ``--dask-rows 0`` skips this part. 200,000 rows x 200 rounds sits just below the exact
   resampling switch (``EXACT_BOOTSTRAP_LIMIT`` = 5e7 draws), 1,000,000 above it.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

import scorebench


def binary(systems: int, rows: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    p = rng.uniform(size=systems * rows)
    return pd.DataFrame({"system": np.repeat([f"s{i}" for i in range(systems)], rows),
                         "id": np.tile(np.arange(rows), systems),
                         "y": (rng.uniform(size=p.size) < p).astype(np.int8), "p": p})


def timed(fn) -> tuple[float, object]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def run(rows=(100_000, 1_000_000, 5_000_000), dask_rows=(200_000, 1_000_000), n_boot: int = 200,
        verbose: bool = True) -> dict:
    """Time the ECE/Brier scaling rows and the in-memory vs Dask comparison; return the figures."""
    out: dict = {"scaling": []}
    if verbose:
        print("| rows | brier_score s | ece s | ece / brier | ECE method |")
        print("| ---: | ---: | ---: | ---: | --- |")
    for n in rows:
        table = binary(1, n)
        brier, _ = timed(lambda table=table: scorebench.evaluate(table, ["brier_score"], n_boot=n_boot))
        ece, scores = timed(lambda table=table: scorebench.evaluate(table, ["ece"], n_boot=n_boot))
        out["scaling"].append((n, brier, ece))
        if verbose:
            print(f"| {n:,} | {brier:.3f} | {ece:.3f} | {ece / brier:.2f} | {scores.attrs['bootstrap']} |")
    sizes = [n for n in ((dask_rows,) if isinstance(dask_rows, int) else tuple(dask_rows)) if n]
    if not sizes:
        return out
    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    metrics = ["brier_score", "log_score", "ece"]
    out["memory_vs_dask"] = []
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True) as cluster, Client(cluster):
        for n in sizes:
            table = binary(5, n)
            cpu0 = time.process_time()
            memory, _ = timed(lambda table=table: scorebench.evaluate(table, metrics, n_boot=n_boot))
            memory_cpu = time.process_time() - cpu0
            ddf = dd.from_pandas(table, npartitions=10).persist()
            dask_s, _ = timed(lambda ddf=ddf: scorebench.evaluate(ddf, metrics, n_boot=n_boot))
            del ddf
            out["memory_vs_dask"].append((n, memory, dask_s))
            if verbose:
                print(f"5 x {n:,} rows, {', '.join(metrics)}, n_boot={n_boot}: in memory {memory:.2f} s wall "
                      f"({memory_cpu:.2f} s cpu), Dask (2 workers) {dask_s:.2f} s wall, ratio {memory / dask_s:.2f}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, nargs="+", default=[100_000, 1_000_000, 5_000_000])
    parser.add_argument("--dask-rows", type=int, nargs="+", default=[200_000, 1_000_000])
    parser.add_argument("--n-boot", type=int, default=200)
    args = parser.parse_args()
    run(args.rows, args.dask_rows, args.n_boot)


if __name__ == "__main__":
    main()
