"""Ranking metrics at scale: scorebench vs ranx vs pytrec_eval-terrier, side by side.

Workload (issue 3): 100,000 queries x 100 retrieved documents, graded relevance 0-3,
NDCG@10 + MAP + MRR from DataFrames, everything a user waits for included:

* scorebench: ``extract_ranking`` (id factorisation, qrels join, sort) + the three metrics,
  and the same through ``scorebench.evaluate`` (with its bootstrap CIs);
* ranx: ``Qrels.from_df`` + ``Run.from_df`` + ``evaluate`` at steady state (a warm-up call
  first, so numba's compile cache is warm);
* pytrec_eval: building its dict-of-dicts from the DataFrames + ``RelevanceEvaluator`` +
  ``evaluate``.

Also: peak memory of the scorebench path (tracemalloc peak and the growth of the process's
maximum resident set) and the first-call latency in a fresh process.

Usage::

    python benchmarks/bench_ranking.py                 # full size (several minutes: ranx is slow)
    python benchmarks/bench_ranking.py --queries 10000 # smaller
    python benchmarks/bench_ranking.py --skip ranx     # leave a library out
"""

from __future__ import annotations

import argparse
import gc
import resource
import subprocess
import sys
import time
import tracemalloc

import numpy as np
import pandas as pd

METRICS = ["ndcg@10", "map", "mrr"]


def make_data(n_queries: int, depth: int, judged: float, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Run (qid, docid, score) and graded qrels (qid, docid, relevance in 0..3), string ids."""
    rng = np.random.default_rng(seed)
    n = n_queries * depth
    qnum = np.repeat(np.arange(n_queries), depth)
    # distinct documents per query drawn from a large collection
    dnum = (qnum.astype(np.int64) * 7919 + rng.permutation(n) % (depth * 50)) % 50_000_000
    qid = pd.Series(qnum).astype(str).radd("q")
    docid = pd.Series(dnum).astype(str).radd("D")
    run = pd.DataFrame({"qid": qid, "docid": docid, "score": rng.normal(size=n)})
    run = run.drop_duplicates(["qid", "docid"], ignore_index=True)
    take = rng.random(len(run)) < judged
    qrels = run.loc[take, ["qid", "docid"]].copy()
    qrels["relevance"] = rng.choice(4, size=len(qrels), p=[0.55, 0.25, 0.12, 0.08])
    # a qrels file is grouped by query, but its documents are not in the run's order
    qrels = qrels.sample(frac=1.0, random_state=1).sort_values("qid", kind="stable", ignore_index=True)
    # fresh string objects for the qrels (as if read from another file)
    qrels["qid"] = qrels["qid"].str.slice(0)
    qrels["docid"] = qrels["docid"].str.slice(0)
    return run, qrels


def run_scorebench(run: pd.DataFrame, qrels: pd.DataFrame) -> dict[str, float]:
    import scorebench
    from scorebench.metrics.ranking import extract_ranking

    inputs = extract_ranking(run, qrels=qrels)
    merged = inputs.merged()
    return {m: float(np.mean(scorebench.metric(m).compute(merged))) for m in METRICS}


def run_evaluate(run: pd.DataFrame, qrels: pd.DataFrame, n_boot: int) -> dict[str, float]:
    import scorebench

    out = scorebench.evaluate(run, METRICS, kind="ranking", qrels=qrels, n_boot=n_boot)
    return dict(zip(METRICS, out["value"]))


def run_ranx(run: pd.DataFrame, qrels: pd.DataFrame) -> dict[str, float]:
    import ranx

    q = ranx.Qrels.from_df(qrels, q_id_col="qid", doc_id_col="docid", score_col="relevance")
    r = ranx.Run.from_df(run, q_id_col="qid", doc_id_col="docid", score_col="score")
    res = ranx.evaluate(q, r, ["ndcg@10", "map", "mrr"])
    return dict(zip(METRICS, res.values()))


def run_pytrec(run: pd.DataFrame, qrels: pd.DataFrame) -> dict[str, float]:
    import pytrec_eval

    qd: dict = {}
    for a, b, c in zip(qrels["qid"].to_numpy(object), qrels["docid"].to_numpy(object),
                       qrels["relevance"].to_numpy().tolist()):
        qd.setdefault(a, {})[b] = c
    rd: dict = {}
    for a, b, c in zip(run["qid"].to_numpy(object), run["docid"].to_numpy(object), run["score"].to_numpy().tolist()):
        rd.setdefault(a, {})[b] = c
    per_q = pytrec_eval.RelevanceEvaluator(qd, {"ndcg_cut.10", "map", "recip_rank"}).evaluate(rd)
    return {m: float(np.mean([v[k] for v in per_q.values()]))
            for m, k in zip(METRICS, ["ndcg_cut_10", "map", "recip_rank"])}


CPU: dict[str, float] = {}


def timed(fn, *args) -> tuple[float, dict]:
    """Wall seconds (and, in CPU[fn name], the process CPU seconds: on a shared machine the
    CPU time is the steadier measure of the work done)."""
    gc.collect()
    c = time.process_time()
    t = time.perf_counter()
    out = fn(*args)
    CPU[fn.__name__] = time.process_time() - c
    return time.perf_counter() - t, out


def first_call_latency(n_queries: int = 1000) -> tuple[float, float]:
    code = f"""
import time
t0 = time.perf_counter()
import scorebench
import numpy as np, pandas as pd
t1 = time.perf_counter()
rng = np.random.default_rng(0)
n = {n_queries} * 100
run = pd.DataFrame({{"qid": np.repeat(np.arange({n_queries}), 100).astype(str),
                    "docid": np.arange(n).astype(str), "score": rng.normal(size=n)}})
qrels = run[["qid", "docid"]].assign(relevance=rng.integers(0, 4, n))
t2 = time.perf_counter()
scorebench.evaluate(run, ["ndcg@10", "map", "mrr"], kind="ranking", qrels=qrels)
t3 = time.perf_counter()
print(t1 - t0, t3 - t2)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    imp, call = map(float, out.stdout.split())
    return imp, call


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--judged", type=float, default=1.0, help="fraction of retrieved docs in the qrels")
    parser.add_argument("--n-boot", type=int, default=1000)
    parser.add_argument("--skip", nargs="*", default=[], choices=["ranx", "pytrec", "evaluate"])
    args = parser.parse_args()

    run, qrels = make_data(args.queries, args.depth, args.judged)
    print(f"run: {len(run):,} rows, qrels: {len(qrels):,} rows, {args.queries:,} queries "
          f"(dtypes {run.qid.dtype}/{run.docid.dtype})", flush=True)
    small_run, small_qrels = make_data(200, 20, 1.0, seed=1)

    run_scorebench(small_run, small_qrels)  # imports
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tracemalloc.start()
    t_sb, v_sb = timed(run_scorebench, run, qrels)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss_growth = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0) / 1024
    t_sb2, _ = timed(run_scorebench, run, qrels)
    cpu_sb = CPU["run_scorebench"]
    print(f"scorebench extract+metrics: {t_sb:.2f} s (again: {t_sb2:.2f} s, CPU {cpu_sb:.2f} s); tracemalloc peak "
          f"{peak / 2**20:.0f} MiB, max-RSS growth {rss_growth:.0f} MiB; {v_sb}", flush=True)
    obj_run = run.astype({"qid": object, "docid": object})
    obj_qrels = qrels.astype({"qid": object, "docid": object})
    t_obj, _ = timed(run_scorebench, obj_run, obj_qrels)
    print(f"scorebench on object-dtype frames: {t_obj:.2f} s", flush=True)
    results = {"scorebench": min(t_sb, t_sb2)}
    cpu = {"scorebench": cpu_sb}
    if "evaluate" not in args.skip:
        t_ev, v_ev = timed(run_evaluate, run, qrels, args.n_boot)
        print(f"scorebench.evaluation.evaluate (n_boot={args.n_boot}, CIs included): {t_ev:.2f} s; {v_ev}", flush=True)
    if "pytrec" not in args.skip:
        t_pt, v_pt = timed(run_pytrec, run, qrels)
        results["pytrec_eval"] = t_pt
        cpu["pytrec_eval"] = CPU["run_pytrec"]
        print(f"pytrec_eval build+evaluate: {t_pt:.2f} s (CPU {cpu['pytrec_eval']:.2f} s); {v_pt}", flush=True)
        for m in METRICS:
            assert abs(v_pt[m] - v_sb[m]) < 1e-9, (m, v_pt[m], v_sb[m])
    if "ranx" not in args.skip:
        run_ranx(small_run.astype({"qid": object, "docid": object}),
                 small_qrels.astype({"qid": object, "docid": object}))  # compile / load numba cache
        t_rx, v_rx = timed(run_ranx, obj_run, obj_qrels)
        results["ranx"] = t_rx
        cpu["ranx"] = CPU["run_ranx"]
        print(f"ranx from_df+evaluate (steady state, object-dtype frames given): {t_rx:.2f} s "
              f"(CPU {cpu['ranx']:.2f} s, numba threads included); {v_rx}", flush=True)
    del obj_run, obj_qrels
    imp, call = first_call_latency()
    print(f"fresh process: import scorebench {imp:.2f} s, first evaluate call (1,000 queries, CIs) {call:.2f} s")
    for name, seconds in results.items():
        if name != "scorebench":
            print(f"speed-up vs {name}: {seconds / results['scorebench']:.1f}x wall, "
                  f"{cpu[name] / cpu['scorebench']:.1f}x CPU")


if __name__ == "__main__":
    main()
