"""FID end to end (issue 18): scorebench ``precision="mixed"`` / ``"float64"`` vs the pytorch-fid route.

Both sides start from two float32 ``(n, 2048)`` activation arrays (what Inception emits) and
return the FID. The pytorch-fid side is its ``calculate_activation_statistics`` tail
(``np.mean``, ``np.cov``) and ``calculate_frechet_distance`` (``scipy.linalg.sqrtm`` of
``sigma1 @ sigma2``), re-stated in ``bench_generative.pytorch_fid_route`` with the same
NumPy/SciPy calls, because the package itself (which pulls in torchvision) is not installed
here.
Each side runs in the same process, one after the other; wall and CPU (process) time are
both printed, because the 2-core machine is shared.

Run:  python benchmarks/bench_fid.py               (2 x 50,000 x 2,048, the issue's size)
      python benchmarks/bench_fid.py --rows 20000  (smaller)
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from bench_generative import pytorch_fid_route


def _timed(fn, *args, **kwargs):
    c0, w0 = time.process_time(), time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - w0, time.process_time() - c0


def features(n: int, d: int = 2048, seed: int = 0):
    rng = np.random.default_rng(seed)
    mix = rng.normal(size=(d, d)) / np.sqrt(d)
    act1 = (rng.normal(size=(n, d)) @ mix + 0.5).astype(np.float32)
    act2 = (rng.normal(size=(n, d)) @ (mix * 1.1) + 0.45).astype(np.float32)
    return act1, act2


def run(n: int = 50_000, d: int = 2048, verbose: bool = True) -> dict:
    """Time the three routes on ``2 x n x d`` float32 features; return figures and ratios."""
    from scorebench.metrics.generative import fid

    act1, act2 = features(n, d)
    ref, ref_w, ref_c = _timed(pytorch_fid_route, act1, act2)
    f64, f64_w, f64_c = _timed(fid, act1, act2, precision="float64")
    mixed, mix_w, mix_c = _timed(fid, act1, act2, precision="mixed")
    out = {"rows": n, "dim": d, "pytorch_fid": (ref, ref_w, ref_c), "float64": (f64, f64_w, f64_c),
           "mixed": (mixed, mix_w, mix_c), "rel_err_mixed": abs(mixed - f64) / f64,
           "ratio_wall": ref_w / mix_w, "ratio_cpu": ref_c / mix_c}
    if verbose:
        for name in ("pytorch_fid", "float64", "mixed"):
            v, w, c = out[name]
            print(f"{name:<12} 2 x {n} x {d}: {w:7.2f} s wall {c:7.2f} s cpu  FID {v:.12g}")
        print(f"mixed vs float64: relative difference {out['rel_err_mixed']:.2e}; "
              f"pytorch-fid route vs scorebench float64: {abs(ref - f64) / f64:.2e}")
        print(f"speed-up of mixed over the pytorch-fid route: {out['ratio_wall']:.2f}x wall, "
              f"{out['ratio_cpu']:.2f}x cpu (goal >= 3x); float64: {ref_w / f64_w:.2f}x wall, "
              f"{ref_c / f64_c:.2f}x cpu")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--dim", type=int, default=2048)
    args = parser.parse_args()
    run(args.rows, args.dim)


if __name__ == "__main__":
    main()
