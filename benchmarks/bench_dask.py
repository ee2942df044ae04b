"""Dask engine at scale: binary forecasts and ranking rows generated partition by partition.

Run: ``python -u benchmarks/bench_dask.py [--forecasts 100_000_000] [--queries 100_000]``

* Binary: ``--forecasts`` binary forecasts x 4 systems (400 million rows of
  (system, id, y, p) at the default), generated inside the workers by
  ``dask.dataframe.from_map`` in partitions of 1 million rows (never whole in memory,
  never on disk), scored by Brier + log score + ECE with 200 Poisson-bootstrap rounds.
* Ranking: ``--queries`` queries x 100 documents (10 million rows per system at the
  default) x 2 systems, NDCG@10 and MAP against generated qrels, shuffled on ``qid``.

A LocalCluster of 2 worker processes with a 2 GB memory limit each runs both; the script
reports wall time, rows/s and the peak resident memory of each worker. On a
multi-machine cluster, start ``dask scheduler`` and ``dask worker tcp://HOST:8786`` on
each machine and run ``scorebench evaluate 'data/part-*.parquet' --engine dask
--scheduler tcp://HOST:8786 --metric brier_score --metric log_score --metric ece``.
"""

from __future__ import annotations

import argparse
import os
import threading
import time

import numpy as np
import pandas as pd

SYSTEMS = ("calibrated", "overconfident", "underconfident", "coin")
ROWS_PER_PART = 1_000_000
FORECASTS_PER_PART = ROWS_PER_PART // len(SYSTEMS)
QUERIES_PER_PART = 5_000


def binary_partition(i: int) -> pd.DataFrame:
    rng = np.random.default_rng([7, i])
    n = FORECASTS_PER_PART
    truth = rng.uniform(0.02, 0.98, n)
    y = (rng.uniform(size=n) < truth).astype(np.int8)
    ids = np.arange(i * n, (i + 1) * n)
    logit = np.log(truth / (1 - truth))
    probs = {
        "calibrated": truth,
        "overconfident": 1 / (1 + np.exp(-2.0 * logit)),
        "underconfident": 1 / (1 + np.exp(-0.5 * logit)),
        "coin": np.full(n, 0.5),
    }
    return pd.concat([pd.DataFrame({"system": s, "id": ids, "y": y, "p": probs[s]}) for s in SYSTEMS],
                     ignore_index=True)


def ranking_partition(i: int, queries: int) -> pd.DataFrame:
    rng = np.random.default_rng([11, i])
    docs = 100
    qid = np.repeat(np.arange(i * queries, (i + 1) * queries), docs).astype(str)
    docid = np.tile(np.arange(docs), queries).astype(str)
    rel = rng.integers(0, 4, queries * docs)
    frames = [pd.DataFrame({"system": s, "qid": qid, "docid": docid, "score": rel * k + rng.normal(size=rel.size)})
              for s, k in (("bm25", 0.5), ("dense", 1.0))]
    return pd.concat(frames, ignore_index=True)


def qrels_partition(i: int, queries: int) -> pd.DataFrame:
    """The judgements of ``ranking_partition(i)``'s queries (same generator stream)."""
    rel = np.random.default_rng([11, i]).integers(0, 4, queries * 100)
    return pd.DataFrame({"qid": np.repeat(np.arange(i * queries, (i + 1) * queries), 100).astype(str),
                         "docid": np.tile(np.arange(100), queries).astype(str), "relevance": rel})


class PeakMemory:
    """Peak resident memory of each worker process, sampled every 0.2 s while in the block."""

    def __init__(self, client) -> None:
        self.client, self.peaks, self._stop = client, {}, threading.Event()

    def _sample(self) -> None:
        while not self._stop.wait(0.2):
            try:
                now = self.client.run(lambda: __import__("psutil").Process().memory_info().rss / 2**20)
            except Exception:  # a worker restarting mid-sample: try again
                continue
            for worker, mb in now.items():
                self.peaks[worker] = max(self.peaks.get(worker, 0.0), mb)

    def __enter__(self) -> PeakMemory:
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def mb(self) -> list[int]:
        return sorted(round(v) for v in self.peaks.values())


def main() -> None:
    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    import scorebench

    parser = argparse.ArgumentParser()
    parser.add_argument("--forecasts", type=int, default=100_000_000, help="binary forecasts per system")
    parser.add_argument("--queries", type=int, default=100_000, help="ranking queries (100 documents each)")
    parser.add_argument("--boot", type=int, default=200)
    args = parser.parse_args()
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, memory_limit="2GB",
                           dashboard_address=None)
    client = Client(cluster)

    parts = max(1, args.forecasts // FORECASTS_PER_PART)
    ddf = dd.from_map(binary_partition, range(parts))
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    with PeakMemory(client) as peak:
        start = time.perf_counter()
        scores = scorebench.evaluate(ddf, ["brier_score", "log_score", "ece"], n_boot=args.boot, seed=0)
        elapsed = time.perf_counter() - start
    rows = parts * ROWS_PER_PART
    print(scores.to_string(index=False))
    print(f"binary: {rows:,} rows, {args.boot} Poisson rounds: {elapsed:.1f} s, {rows / elapsed:,.0f} rows/s; "
          f"worker peak RSS MB: {peak.mb}; load average after: {os.getloadavg()[0]:.1f}")

    queries_per_part = QUERIES_PER_PART
    rank_parts = max(1, args.queries // queries_per_part)
    qrels = dd.from_map(qrels_partition, range(rank_parts), queries=queries_per_part)  # a table at scale too
    rdf = dd.from_map(ranking_partition, range(rank_parts), queries=queries_per_part)
    with PeakMemory(client) as peak:
        start = time.perf_counter()
        ranked = scorebench.evaluate(rdf, ["ndcg@10", "map"], qrels=qrels, n_boot=args.boot, seed=0)
        elapsed = time.perf_counter() - start
    rrows = rank_parts * queries_per_part * 100 * 2
    print(ranked.to_string(index=False))
    print(f"ranking: {rrows:,} rows ({rank_parts * queries_per_part:,} queries x 100 docs x 2 systems, qrels "
          f"{rrows // 2:,} rows): {elapsed:.1f} s, {rrows / elapsed:,.0f} rows/s; worker peak RSS MB: {peak.mb}; "
          f"load average after: {os.getloadavg()[0]:.1f}")
    client.close()
    cluster.close()


if __name__ == "__main__":
    main()
