"""Ranking from DataFrames (issue 18): scorebench vs pytrec_eval (fastest dict build) vs the floor.

Workload: ``queries`` x 100 retrieved documents (10 M run rows at the default 100,000
queries), string qids/docids, fully judged graded qrels 0-3 in another document order
(``bench_ranking.make_data``), NDCG@10 + MAP + MRR, no bootstrap. Timed in one process:

* scorebench: ``extract_ranking(run, qrels=qrels)`` + the three metrics (what a user waits for);
* pytrec_eval-terrier: dict-of-dicts built from the frames by the faster of a plain ``zip``
  loop and ``groupby`` + ``to_dict`` (both are timed; the faster counts), then
  ``RelevanceEvaluator`` + ``evaluate``;
* the floor: ``pd.factorize`` of the qids and of the docids of both tables at once, one
  ``np.lexsort`` of the run by (qid, -score), and the qrels join on the integer codes
  (sorted keys + ``searchsorted``): the work no implementation can skip.

Memory: tracemalloc peak of the scorebench call (NumPy and Python allocations). Wall and CPU
(process) seconds are both printed (the machine is shared).

Run:  python benchmarks/bench_ranking_floor.py [--queries 100000]
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_ranking import METRICS, make_data, run_scorebench  # noqa: E402

GOAL_VS_PYTREC, GOAL_VS_FLOOR = 5.0, 3.0


def _timed(fn, *args):
    gc.collect()
    c0, w0 = time.process_time(), time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - w0, time.process_time() - c0


def dicts_zip(run: pd.DataFrame, qrels: pd.DataFrame) -> tuple[dict, dict]:
    qd: dict = {}
    for a, b, c in zip(qrels["qid"].to_numpy(object), qrels["docid"].to_numpy(object),
                       qrels["relevance"].to_numpy().tolist()):
        qd.setdefault(a, {})[b] = c
    rd: dict = {}
    for a, b, c in zip(run["qid"].to_numpy(object), run["docid"].to_numpy(object), run["score"].to_numpy().tolist()):
        rd.setdefault(a, {})[b] = c
    return qd, rd


def dicts_groupby(run: pd.DataFrame, qrels: pd.DataFrame) -> tuple[dict, dict]:
    def build(df, value):
        return {q: dict(zip(g["docid"].tolist(), g[value].tolist())) for q, g in df.groupby("qid", sort=False)}
    return build(qrels, "relevance"), build(run, "score")


def pytrec_evaluate(qd: dict, rd: dict) -> dict[str, float]:
    import pytrec_eval

    per_q = pytrec_eval.RelevanceEvaluator(qd, {"ndcg_cut.10", "map", "recip_rank"}).evaluate(rd)
    return {m: float(np.mean([v[k] for v in per_q.values()]))
            for m, k in zip(METRICS, ["ndcg_cut_10", "map", "recip_rank"])}


def floor(run: pd.DataFrame, qrels: pd.DataFrame) -> np.ndarray:
    """Grades of the run's documents in (qid, -score) order: factorise, one lexsort, join."""
    nr = len(run)
    q = pd.factorize(pd.concat([run["qid"], qrels["qid"]], ignore_index=True))[0]
    d = pd.factorize(pd.concat([run["docid"], qrels["docid"]], ignore_index=True))[0]
    key = q.astype(np.int64) * (int(d.max()) + 1) + d
    order = np.lexsort((-run["score"].to_numpy(), q[:nr]))
    qkey = key[nr:]
    qorder = np.argsort(qkey, kind="stable")
    sorted_keys = qkey[qorder]
    want = key[:nr][order]
    pos = np.minimum(np.searchsorted(sorted_keys, want), len(sorted_keys) - 1)
    hit = sorted_keys[pos] == want
    return np.where(hit, qrels["relevance"].to_numpy()[qorder][pos], 0)


def run(queries: int = 100_000, depth: int = 100, verbose: bool = True) -> dict:
    """Time the three sides on ``queries x depth`` rows; return figures and ratios."""
    data_run, data_qrels = make_data(queries, depth, 1.0)
    small_run, small_qrels = make_data(200, 20, 1.0, seed=1)
    run_scorebench(small_run, small_qrels)  # imports, first-call costs
    tracemalloc.start()
    values, sb_w, sb_c = _timed(run_scorebench, data_run, data_qrels)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    _, sb_w2, sb_c2 = _timed(run_scorebench, data_run, data_qrels)  # untraced
    sb_w, sb_c = min(sb_w, sb_w2), min(sb_c, sb_c2)
    _, fl_w, fl_c = _timed(floor, data_run, data_qrels)
    (qd, rd), z_w, z_c = _timed(dicts_zip, data_run, data_qrels)
    del qd, rd
    (qd, rd), g_w, g_c = _timed(dicts_groupby, data_run, data_qrels)
    ref, pt_w, pt_c = _timed(pytrec_evaluate, qd, rd)
    for m in METRICS:
        assert abs(ref[m] - values[m]) < 1e-9, (m, ref[m], values[m])
    build_w, build_c, how = (z_w, z_c, "zip") if z_w <= g_w else (g_w, g_c, "groupby")
    out = {"rows": len(data_run), "scorebench": (sb_w, sb_c), "floor": (fl_w, fl_c),
           "pytrec_build": (build_w, build_c, how), "pytrec_eval": (pt_w, pt_c),
           "peak_mib": peak / 2**20,
           "ratio_vs_pytrec_wall": (build_w + pt_w) / sb_w, "ratio_vs_pytrec_cpu": (build_c + pt_c) / sb_c,
           "ratio_vs_floor_wall": sb_w / fl_w, "ratio_vs_floor_cpu": sb_c / fl_c}
    if verbose:
        print(f"{len(data_run):,} run rows, {len(data_qrels):,} qrels rows, {queries:,} queries; values {values}")
        print(f"scorebench extract + 3 metrics : {sb_w:7.2f} s wall {sb_c:7.2f} s cpu; tracemalloc peak "
              f"{peak / 2**20:.0f} MiB (goal < 1024)")
        print(f"floor (factorize, lexsort, join): {fl_w:7.2f} s wall {fl_c:7.2f} s cpu")
        print(f"pytrec_eval dicts: zip {z_w:.2f} s wall {z_c:.2f} s cpu, groupby {g_w:.2f} s wall {g_c:.2f} s cpu "
              f"(using {how}); evaluate {pt_w:.2f} s wall {pt_c:.2f} s cpu")
        print(f"scorebench vs pytrec_eval: {out['ratio_vs_pytrec_wall']:.2f}x wall, "
              f"{out['ratio_vs_pytrec_cpu']:.2f}x cpu (goal >= {GOAL_VS_PYTREC}x); scorebench / floor: "
              f"{out['ratio_vs_floor_wall']:.2f}x wall, {out['ratio_vs_floor_cpu']:.2f}x cpu "
              f"(goal <= {GOAL_VS_FLOOR}x)")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--depth", type=int, default=100)
    args = parser.parse_args()
    run(args.queries, args.depth)


if __name__ == "__main__":
    main()
