"""Scale of the Dask paths after ``evaluate``: wall, client CPU, worker memory and where the time goes.

Usage (one size per run; each run writes its Parquet files to a temporary folder, not timed)::

    python benchmarks/bench_dask_scale.py compare --rows 10000000     # 100 systems x 100,000 items
    python benchmarks/bench_dask_scale.py battles --rows 5000000      # 5 M battles among 400 models
    python benchmarks/bench_dask_scale.py items --rows 10000000       # 100 systems x 5 tasks x 20,000 items

* ``compare``: ``scorebench.compare(ddf, "accuracy", tests=["mcnemar", "bootstrap", "t"])``,
  1,000 Poisson rounds, all 4,950 pairs of 100 systems (1PL right/wrong outcomes, seed 0);
* ``battles``: ``scorebench.aggregate(ddf, "bradley_terry", n_boot=200)`` (sandwich intervals,
  rank intervals from 200 normal draws), battles as ``bench_aggregate_dask.py`` makes them;
* ``items``: ``scorebench.aggregate(ddf, "borda", n_boot=200)`` on an item-level table (one row
  per system x task x item), Poisson-by-hash item resampling on Dask.

Cluster: ``distributed.LocalCluster`` of 2 worker processes x 1 thread x 2 GB; one Parquet file of
1 M rows per partition, so partitions have the same size at every table size (memory per worker
should not grow with the rows; the number of partitions does).
Reported: wall and client CPU of the call (reading included); worker memory: the peak of the
cluster's summed process memory sampled every 0.25 s (``distributed``'s ``MemorySampler``) and
each worker's peak RSS (``ru_maxrss``, which includes the worker's start-up); and the profile:
compute seconds summed over the task stream by task prefix (reading Parquet, hashing rows to
partitions, the shuffle, partial sums, merges), and the client's own share (the wall time not
covered by worker tasks is scheduling plus the client's finishing step). One JSON line per run.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import shutil
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd

ROWS_PER_FILE = 1_000_000  # one Parquet file (= one partition) per million rows, whatever the table's size


def _files(rows: int) -> int:
    return max(2, -(-rows // ROWS_PER_FILE))


def _answers(rng: np.random.Generator, skill: np.ndarray, names: np.ndarray, lo: int, hi: int) -> dict:
    """Items ``q{lo}..q{hi-1}`` answered by every system under a Rasch model: long columns
    system, id and a 0/1 ``answer`` (item easiness drawn first, then the answers)."""
    ease = rng.normal(0, 1, hi - lo)
    p = 1 / (1 + np.exp(-(ease[:, None] + skill[None, :])))
    answer = rng.random(p.shape) < p
    ids = np.array([f"q{i}" for i in range(lo, hi)], dtype=object)
    return {"system": np.tile(names, hi - lo), "id": np.repeat(ids, len(names)), "answer": answer.ravel()}


def _write_compare(folder: Path, rows: int, systems: int = 100) -> dict:
    items = rows // systems
    files = _files(rows)
    rng = np.random.default_rng(0)
    skill = rng.uniform(-1, 1, systems)
    names = np.array([f"sys{j:03d}" for j in range(systems)], dtype=object)
    per = -(-items // files)
    for f in range(files):
        block = _answers(rng, skill, names, f * per, min(items, (f + 1) * per))
        block["correct"] = block.pop("answer").astype(np.int8)
        pd.DataFrame(block).to_parquet(folder / f"part{f:02d}.parquet")
    return {"systems": systems, "items": items}


def _write_battles(folder: Path, rows: int, models: int = 400) -> dict:
    rng = np.random.default_rng(0)
    skill = rng.uniform(-1.5, 1.5, models)
    names = np.array([f"model{i:03d}" for i in range(models)], dtype=object)
    files = _files(rows)
    per = -(-rows // files)
    for f in range(files):
        n = min(per, rows - f * per)
        a = rng.integers(models, size=n)
        b = (a + rng.integers(1, models, size=n)) % models
        u = rng.random(n)
        p = 1 / (1 + np.exp(-(skill[a] - skill[b])))
        winner = np.where(u < 0.1, "tie", np.where(u < 0.1 + 0.9 * p, "model_a", "model_b"))
        pd.DataFrame({"model_a": names[a], "model_b": names[b], "winner": winner}).to_parquet(
            folder / f"part{f:02d}.parquet")
    return {"models": models}


def _write_items(folder: Path, rows: int, systems: int = 100, tasks: int = 5) -> dict:
    items = rows // (systems * tasks)
    files = _files(rows)
    rng = np.random.default_rng(0)
    skill = rng.uniform(-1, 1, systems)
    names = np.array([f"sys{j:03d}" for j in range(systems)], dtype=object)
    per = -(-items // files)
    for f in range(files):
        lo, hi = f * per, min(items, (f + 1) * per)
        frames = []
        for t in range(tasks):
            block = _answers(rng, skill, names, lo, hi)
            frames.append(pd.DataFrame({"system": block["system"], "task": f"task{t}", "id": block["id"],
                                        "value": block["answer"].astype(np.float64)}))
        pd.concat(frames, ignore_index=True).to_parquet(folder / f"part{f:02d}.parquet")
    return {"systems": systems, "tasks": tasks, "items_per_task": items}


def _run(what: str, ddf, n_boot: int):
    import scorebench

    if what == "compare":
        return scorebench.compare(ddf, "accuracy", tests=["mcnemar", "bootstrap", "t"], n_boot=n_boot)
    if what == "battles":
        return scorebench.aggregate(ddf, "bradley_terry", n_boot=n_boot, seed=0)
    return scorebench.aggregate(ddf, "borda", n_boot=n_boot, seed=0)


def _prefix(key) -> str:
    name = key[0] if isinstance(key, tuple) else str(key)
    name = re.sub(r"-[0-9a-f]{32}$", "", str(name))
    return re.sub(r"-[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$", "", name)


def _profile(stream: list[dict]) -> dict:
    seconds: dict[str, float] = defaultdict(float)
    transfer = 0.0
    for task in stream:
        for ss in task.get("startstops", ()):
            if ss["action"] == "compute":
                seconds[_prefix(task["key"])] += ss["stop"] - ss["start"]
            elif ss["action"] == "transfer":
                transfer += ss["stop"] - ss["start"]
    top = dict(sorted(((k, round(v, 2)) for k, v in seconds.items()), key=lambda kv: -kv[1]))
    return {"worker_compute_s_by_task": top, "worker_compute_s": round(sum(seconds.values()), 2),
            "transfer_s": round(transfer, 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["compare", "battles", "items"])
    ap.add_argument("--rows", type=int, required=True)
    ap.add_argument("--n-boot", type=int, default=None, help="default: 1000 for compare, 200 otherwise")
    a = ap.parse_args()
    n_boot = a.n_boot if a.n_boot is not None else (1000 if a.what == "compare" else 200)

    import dask.dataframe as dd
    import distributed
    from distributed.diagnostics import MemorySampler

    folder = Path(tempfile.mkdtemp(prefix="bench_dask_scale_"))
    try:
        g0 = time.perf_counter()
        shape = {"compare": _write_compare, "battles": _write_battles, "items": _write_items}[a.what](folder, a.rows)
        shape["data_written_s"] = round(time.perf_counter() - g0, 1)
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                           memory_limit="2GB")
        with distributed.Client(cluster) as client:
            sampler = MemorySampler()
            with sampler.sample("run", interval=0.25), distributed.get_task_stream() as ts:
                w0, c0 = time.perf_counter(), time.process_time()
                _run(a.what, dd.read_parquet(folder), n_boot)
                wall, cpu = time.perf_counter() - w0, time.process_time() - c0
            memory = sampler.to_pandas()
            peaks = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20)
            prof = _profile(ts.data)
        cluster.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    out = {"what": a.what, "rows": a.rows, "files": _files(a.rows), **shape, "n_boot": n_boot, "wall_s": round(wall, 1),
           "client_cpu_s": round(cpu, 1), "us_per_row_wall": round(wall / a.rows * 1e6, 3),
           "workers_peak_process_memory_gib_sum": round(float(memory["run"].max()) / 2**30, 2),
           "worker_peak_rss_gib": sorted(round(v, 2) for v in peaks.values()),
           "client_peak_rss_gib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2), **prof}
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
