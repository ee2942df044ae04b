"""Generative metrics: scorebench vs the reference implementations, side by side in one process.

* Vendi score, 10,000 x 512 features: ``vendi_score.vendi.score_X`` (n x n eigenproblem)
  vs ``scorebench`` (d x d eigenproblem, float64).
* FID, 50,000 x 2,048 float32 features per side, end to end (means, covariances, distance):
  pytorch-fid's route (``np.mean``/``np.cov`` then ``scipy.linalg.sqrtm(s1 @ s2)``, as in
  ``pytorch_fid.fid_score``) vs ``FeatureStats`` (chunked float64 ``dsyrk``) + ``fid``.
* Precision/recall/density/coverage, 10,000 x 64 (k = 5): ``prdc.compute_prdc`` vs
  ``manifold_metrics``; time and peak traced memory (numpy allocations, via tracemalloc).

Run:  python benchmarks/bench_generative.py            (full sizes, a few minutes)
      python benchmarks/bench_generative.py --quick    (smaller sizes, labelled)
"""

from __future__ import annotations

import argparse
import gc
import time
import tracemalloc

import numpy as np
import scipy.linalg


def timed(fn, *args, **kwargs):
    gc.collect()
    tracemalloc.start()
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    elapsed = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return out, elapsed, peak / 2**20


def pytorch_fid_route(act1, act2):
    mu1, sigma1 = np.mean(act1, axis=0), np.cov(act1, rowvar=False)
    mu2, sigma2 = np.mean(act2, axis=0), np.cov(act2, rowvar=False)
    diff = mu1 - mu2
    covmean = scipy.linalg.sqrtm(sigma1.dot(sigma2))
    if np.iscomplexobj(covmean):
        covmean = covmean.real
    return diff.dot(diff) + np.trace(sigma1) + np.trace(sigma2) - 2 * np.trace(covmean)


def scorebench_fid_route(act1, act2):
    from scorebench.metrics.generative import FeatureStats, fid

    return fid(FeatureStats.from_features(act1), FeatureStats.from_features(act2))


def report(name, ref, ours, ref_value, our_value, size):
    print(f"{name:<34} {size:<22} reference {ref[1]:8.2f} s {ref[2]:8.0f} MiB | scorebench "
          f"{ours[1]:8.3f} s {ours[2]:7.0f} MiB | speed-up {ref[1] / ours[1]:7.1f}x | "
          f"values {ref_value:.10g} vs {our_value:.10g}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes (labelled in the output)")
    parser.add_argument("--only", choices=("vendi", "fid", "prdc"), action="append",
                        help="run only these parts (repeatable; default: all)")
    args = parser.parse_args()
    parts = set(args.only or ("vendi", "fid", "prdc"))
    rng = np.random.default_rng(0)

    from vendi_score import vendi

    from scorebench.metrics.generative import manifold_metrics, vendi_score

    if "vendi" in parts:
        n_v = 3000 if args.quick else 10_000
        x = rng.normal(size=(n_v, 512)).astype(np.float32) + 0.05
        ref = timed(vendi.score_X, x)
        ours = timed(vendi_score, x)
        report("vendi_score (q=1, cosine)", ref, ours, ref[0], ours[0], f"{n_v} x 512")
        del x

    if "fid" in parts:
        fid_part(rng, 10_000 if args.quick else 50_000)
    if "prdc" in parts:
        prdc_part(rng, manifold_metrics)


def fid_part(rng, n_f):
    from scorebench.metrics.generative import FeatureStats, frechet_distance

    mix = rng.normal(size=(2048, 2048)) / np.sqrt(2048)
    act1 = (rng.normal(size=(n_f, 2048)) @ mix + 0.5).astype(np.float32)
    act2 = (rng.normal(size=(n_f, 2048)) @ (mix * 1.1) + 0.45).astype(np.float32)
    del mix
    ref = timed(pytorch_fid_route, act1, act2)
    ours = timed(scorebench_fid_route, act1, act2)
    report("fid (end to end, 2 x stats)", ref, ours, ref[0], ours[0], f"2 x {n_f} x 2048")
    covs = timed(lambda a, b: (np.cov(a, rowvar=False), np.cov(b, rowvar=False)), act1, act2)
    stats = timed(lambda a, b: (FeatureStats.from_features(a), FeatureStats.from_features(b)), act1, act2)
    report("  of which: both covariances", covs, stats, 0.0, 0.0, "np.cov vs FeatureStats")
    s1, s2 = stats[0][0].cov, stats[0][1].cov
    m1, m2 = stats[0][0].mean, stats[0][1].mean
    ref_d = timed(lambda: _sqrtm_distance(m1, s1, m2, s2))
    our_d = timed(frechet_distance, m1, s1, m2, s2)
    report("  of which: distance from stats", ref_d, our_d, ref_d[0], our_d[0], "2048 x 2048")


def _sqrtm_distance(mu1, sigma1, mu2, sigma2):
    diff = mu1 - mu2
    covmean = scipy.linalg.sqrtm(sigma1.dot(sigma2))
    if np.iscomplexobj(covmean):
        covmean = covmean.real
    return diff.dot(diff) + np.trace(sigma1) + np.trace(sigma2) - 2 * np.trace(covmean)


def prdc_part(rng, manifold_metrics):
    import prdc

    n_p = 10_000
    real = rng.normal(size=(n_p, 64))
    fake = rng.normal(0.1, 1.05, size=(n_p, 64))
    ref = timed(prdc.compute_prdc, real_features=real, fake_features=fake, nearest_k=5)
    ours = timed(manifold_metrics, real, fake, k=5)
    for key in ("precision", "recall", "density", "coverage"):
        print(f"  {key:<10} prdc {ref[0][key]:.6f}  scorebench {getattr(ours[0], key):.6f}")
    report("precision/recall/density/coverage", ref, ours, ref[0]["density"], ours[0].density,
           f"2 x {n_p} x 64, k=5")


if __name__ == "__main__":
    main()
