"""NeuralNDCG forward + backward on a [1024, 128] batch on CPU: scorebench vs an allRank-style reference.

The reference (``tests/_allrank_reference.py``) re-implements allRank's NeuralNDCG definition
and computational structure (full-matrix Sinkhorn, A_s (1 1^T) matmul, per-list rank
factors); it is a faithful re-derivation, not allRank itself, which is not installed.
Both run in this process on the same inputs (float32, as allRank trains), with the
library defaults: temperature 1, at most 50 Sinkhorn rounds with tolerance 1e-6.

Usage::

    python benchmarks/bench_losses.py [--batch 1024] [--length 128] [--repeats 5] [--threads N]
"""

from __future__ import annotations

import argparse
import importlib.util
import resource
import statistics
import time
from pathlib import Path

import torch

from scorebench.losses import neural_ndcg

_spec = importlib.util.spec_from_file_location(
    "_allrank_reference", Path(__file__).resolve().parents[1] / "tests" / "_allrank_reference.py")
_reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_reference)


def make_batch(batch: int, length: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    scores = torch.randn(batch, length, generator=g)
    labels = torch.randint(0, 5, (batch, length), generator=g).float()
    lengths = torch.randint(length // 2, length + 1, (batch,), generator=g)
    labels[torch.arange(length)[None, :] >= lengths[:, None]] = -1.0  # padding at the end (allRank's case)
    return scores, labels


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def time_fwd_bwd(fn, scores: torch.Tensor, labels: torch.Tensor, repeats: int) -> tuple[list[float], float]:
    times = []
    value = float("nan")
    for _ in range(repeats + 1):  # first call warms up
        s = scores.clone().requires_grad_(True)
        start = time.perf_counter()
        loss = fn(s, labels)
        loss.backward()
        times.append(time.perf_counter() - start)
        value = loss.item()
    return times[1:], value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--length", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    scores, labels = make_batch(args.batch, args.length)
    print(f"NeuralNDCG forward+backward, [{args.batch}, {args.length}] float32, CPU, "
          f"{torch.get_num_threads()} torch threads, median of {args.repeats}")
    rows = []
    for variant in ("standard", "transposed"):
        ours_fn = lambda s, y, v=variant: neural_ndcg(s, y, variant=v)  # noqa: E731
        ref_fn = lambda s, y, v=variant: _reference.allrank_neural_ndcg(s, y, transposed=v == "transposed")  # noqa: E731
        before = peak_rss_mib()
        ours_t, ours_v = time_fwd_bwd(ours_fn, scores, labels, args.repeats)
        ours_peak = peak_rss_mib()
        ref_t, ref_v = time_fwd_bwd(ref_fn, scores, labels, args.repeats)
        ref_peak = peak_rss_mib()
        a, b = statistics.median(ours_t), statistics.median(ref_t)
        rows.append((variant, a, b, ours_v, ref_v))
        print(f"  {variant:10s} scorebench {a * 1e3:8.1f} ms (min {min(ours_t) * 1e3:.1f})   "
              f"allRank-style {b * 1e3:8.1f} ms (min {min(ref_t) * 1e3:.1f})   "
              f"ratio scorebench/reference {a / b:.2f}   loss {ours_v:.6f} vs {ref_v:.6f}   "
              f"peak RSS {before:.0f} -> {ours_peak:.0f} -> {ref_peak:.0f} MiB")
    print("(peak RSS is the process high-water mark after scorebench, then after the reference)")


if __name__ == "__main__":
    main()
