"""Dask engine at scale: binary forecasts and ranking rows generated partition by partition.

Run: ``python benchmarks/bench_dask.py [--rows 100_000_000] [--rank-rows 10_000_000]``

* Binary: ``--rows`` rows of (system, id, y, p) for 4 systems, generated inside the
  workers by ``dask.dataframe.from_map`` (never whole in memory, never on disk), scored by
  Brier + log score + ECE with 200 Poisson-bootstrap rounds.
* Ranking: ``--rank-rows`` (qid, docid, score, system) rows, 100 documents per query,
  NDCG@10 and MAP against generated qrels.

A LocalCluster of 2 worker processes with a 2 GB memory limit each runs both; the script
reports wall time, rows/s and the peak resident memory of each worker. On a
multi-machine cluster, start ``dask scheduler`` and ``dask worker tcp://HOST:8786`` on
each machine and run ``scorebench evaluate 'data/part-*.parquet' --engine dask
--scheduler tcp://HOST:8786 --metric brier_score --metric log_score --metric ece``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

SYSTEMS = ("calibrated", "overconfident", "underconfident", "coin")
ROWS_PER_PART = 1_000_000


def binary_partition(i: int, rows: int = ROWS_PER_PART) -> pd.DataFrame:
    rng = np.random.default_rng([7, i])
    n = rows // len(SYSTEMS)
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


def qrels_for(parts: int, queries: int) -> pd.DataFrame:
    frames = []
    for i in range(parts):
        rng = np.random.default_rng([11, i])
        rel = rng.integers(0, 4, queries * 100)
        frames.append(pd.DataFrame({"qid": np.repeat(np.arange(i * queries, (i + 1) * queries), 100).astype(str),
                                    "docid": np.tile(np.arange(100), queries).astype(str), "relevance": rel}))
    return pd.concat(frames, ignore_index=True)


def main() -> None:
    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    import scorebench

    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000_000)
    parser.add_argument("--rank-rows", type=int, default=10_000_000)
    parser.add_argument("--boot", type=int, default=200)
    args = parser.parse_args()
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, memory_limit="2GB",
                           dashboard_address=None)
    client = Client(cluster)

    def peaks() -> dict:
        import resource

        return client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)

    parts = max(1, args.rows // ROWS_PER_PART)
    ddf = dd.from_map(binary_partition, range(parts))
    start = time.perf_counter()
    scores = scorebench.evaluate(ddf, ["brier_score", "log_score", "ece"], n_boot=args.boot, seed=0)
    elapsed = time.perf_counter() - start
    rows = parts * ROWS_PER_PART
    print(scores.to_string(index=False))
    print(f"binary: {rows:,} rows, {args.boot} Poisson rounds: {elapsed:.1f} s, {rows / elapsed:,.0f} rows/s; "
          f"worker peak RSS MB: { {k: round(v) for k, v in peaks().items()} }")

    queries_per_part = 5_000
    rank_parts = max(1, args.rank_rows // (queries_per_part * 100 * 2))
    qrels = qrels_for(rank_parts, queries_per_part)
    rdf = dd.from_map(ranking_partition, range(rank_parts), queries=queries_per_part)
    start = time.perf_counter()
    ranked = scorebench.evaluate(rdf, ["ndcg@10", "map"], qrels=qrels, n_boot=args.boot, seed=0)
    elapsed = time.perf_counter() - start
    rrows = rank_parts * queries_per_part * 100 * 2
    print(ranked.to_string(index=False))
    print(f"ranking: {rrows:,} rows ({rank_parts * queries_per_part:,} queries x 2 systems): {elapsed:.1f} s, "
          f"{rrows / elapsed:,.0f} rows/s; worker peak RSS MB: { {k: round(v) for k, v in peaks().items()} }")
    client.close()
    cluster.close()


if __name__ == "__main__":
    main()
