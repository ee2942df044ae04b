"""Recall@1 / R-precision / MAP@R of an embedding set: scorebench vs pytorch-metric-learning.

pytorch-metric-learning's ``AccuracyCalculator`` runs with its batched exact k-NN
(``CustomKNN(CosineSimilarity(), batch_size=...)``; faiss is not installed) and
``k="max_bin_count"``, the setting that gives MAP@R. Both run in this process on the same
data; values are checked to agree before times are printed. ``retrieval_scores`` computes the three
in one pass. Run it with ``OPENBLAS_NUM_THREADS`` equal to ``--threads`` for a like-for-like thread count. Peak
memory of scorebench's chunked pass is measured with tracemalloc (numpy allocations).

Usage::

    python benchmarks/bench_embedding_retrieval.py [--n 20000] [--dim 128] [--classes 500]
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np

from scorebench.metrics.embedding_retrieval import retrieval_scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--classes", type=int, default=500)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    y = rng.integers(0, args.classes, args.n)
    X = rng.normal(size=(args.classes, args.dim))[y] + 1.5 * rng.normal(size=(args.n, args.dim))

    tracemalloc.start()
    start = time.perf_counter()
    scores = retrieval_scores(y, X, ks=(1,))
    ours = {"precision_at_1": scores.recall[1], "r_precision": scores.r_precision,
            "mean_average_precision_at_r": scores.map_at_r}
    ours_time = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()

    import torch
    from pytorch_metric_learning.distances import CosineSimilarity
    from pytorch_metric_learning.utils.accuracy_calculator import AccuracyCalculator
    from pytorch_metric_learning.utils.inference import CustomKNN

    torch.set_num_threads(args.threads)
    calc = AccuracyCalculator(include=tuple(ours), k="max_bin_count", device=torch.device("cpu"),
                              knn_func=CustomKNN(CosineSimilarity(), batch_size=1024))
    start = time.perf_counter()
    theirs = calc.get_accuracy(torch.tensor(X, dtype=torch.float32), torch.tensor(y), ref_includes_query=True)
    theirs_time = time.perf_counter() - start
    for key, value in ours.items():
        assert abs(value - theirs[key]) < 1e-3, (key, value, theirs[key])  # PML computes in float32
    print(f"n={args.n}, dim={args.dim}, {args.classes} classes, torch threads {args.threads}")
    print(f"  scorebench (exact float64 ranking, float32 screen, 1 pass) {ours_time:7.2f} s   "
          f"peak numpy memory {peak:.0f} MiB")
    print(f"  pytorch-metric-learning (float32, batched) {theirs_time:7.2f} s")
    print(f"  ratio scorebench/pml {ours_time / theirs_time:.2f}; values "
          + ", ".join(f"{k}={v:.4f}" for k, v in ours.items()))


if __name__ == "__main__":
    main()
