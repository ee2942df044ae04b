"""aggregate(bradley_terry) on a Dask battles table (counts per partition) side by side with pandas.

Usage::

    python benchmarks/bench_aggregate_dask.py                                 # 2M battles, 400 models
    python benchmarks/bench_aggregate_dask.py --battles 10000000 --n-boot 200 --intervals bootstrap

Data: battles among ``--models`` models (skill ~ U(-1.5, 1.5), 10% ties), seed 0, written as 16
Parquet files to a temporary folder (not timed). Timed: ``scorebench.aggregate`` on the pandas
table (read into memory first, reading not timed) and on ``dd.read_parquet(folder)`` through a
LocalCluster of 2 workers x 2 GB (reading included). Both with rank intervals (sandwich by
default, or the multinomial bootstrap over cells with ``--intervals bootstrap``). The peak RSS
printed is the client process's own; the two results are compared column by column.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd


def battles(n: int, models: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    skill = rng.uniform(-1.5, 1.5, models)
    a = rng.integers(models, size=n)
    b = (a + rng.integers(1, models, size=n)) % models
    u = rng.random(n)
    p = 1 / (1 + np.exp(-(skill[a] - skill[b])))
    winner = np.where(u < 0.1, "tie", np.where(u < 0.1 + 0.9 * p, "model_a", "model_b"))
    names = np.array([f"model{i:03d}" for i in range(models)], dtype=object)
    return pd.DataFrame({"model_a": names[a], "model_b": names[b], "winner": winner})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--battles", type=int, default=2_000_000)
    ap.add_argument("--models", type=int, default=400)
    ap.add_argument("--n-boot", type=int, default=200)
    ap.add_argument("--intervals", choices=["sandwich", "bootstrap"], default=None)
    a = ap.parse_args()

    import dask.dataframe as dd
    import distributed

    import scorebench

    folder = Path(tempfile.mkdtemp(prefix="bench_aggregate_dask_"))
    t = battles(a.battles, a.models)
    for i in range(16):
        t.iloc[i::16].to_parquet(folder / f"part{i:02d}.parquet")
    del t
    table = pd.read_parquet(folder)
    print(f"{a.battles:,} battles among {a.models} models, n_boot={a.n_boot}, intervals={a.intervals or 'default'}")
    w0, c0 = time.perf_counter(), time.process_time()
    want = scorebench.aggregate(table, "bradley_terry", n_boot=a.n_boot, seed=0, intervals=a.intervals)
    print(f"  pandas (table in memory): {time.perf_counter() - w0:.1f} s wall, {time.process_time() - c0:.1f} s CPU, "
          f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20:.2f} GiB", flush=True)
    del table
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                       memory_limit="2GB")
    with distributed.Client(cluster):
        w0, c0 = time.perf_counter(), time.process_time()
        got = scorebench.aggregate(dd.read_parquet(folder), "bradley_terry", n_boot=a.n_boot, seed=0,
                                   intervals=a.intervals)
        print(f"  dask (2 workers x 2 GB, 16 files, reading included): {time.perf_counter() - w0:.1f} s wall, "
              f"{time.process_time() - c0:.1f} s client CPU", flush=True)
    cluster.close()
    shutil.rmtree(folder, ignore_errors=True)
    g, w = got.to_frame(), want.to_frame()
    same_ranks = all(g[c].tolist() == w[c].tolist() for c in g.columns if c.startswith("rank") or c == "system")
    diff = max(float(np.max(np.abs(g[c].to_numpy(float) - w[c].to_numpy(float))))
               for c in ("score", "ci_low", "ci_high"))
    print(f"  same systems, ranks and rank intervals: {same_ranks}; max |score/ci difference| {diff:.2e} Elo")


if __name__ == "__main__":
    main()
