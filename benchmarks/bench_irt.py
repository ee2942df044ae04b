"""2PL calibration speed and accuracy: scorebench.irt against girth, side by side.

Usage::

    python benchmarks/bench_irt.py                 # 5,000 x 2,000 plus girth on smaller sizes
    python benchmarks/bench_irt.py --metabench     # also 5,000 x 28,000 (metabench-sized)
    python benchmarks/bench_irt.py --poly-only     # polytomous: GRM 5,000 x 200 x 5 speed, GRM/GPCM recovery

Accuracy is measured as the issue asks: RMSE of the slopes against the generating values
and the mean-sigma linking constant A = sd(b_true) / sd(b_hat) (1 = no shrinkage), never
correlations. Data: a ~ U(0.5, 2), b ~ N(0, 1), theta ~ N(0, 1), seed 1.
girth (MML with a fixed quadrature) is far slower; it is timed at smaller sizes and the
5,000 x 2,000 time is extrapolated linearly in systems x items (labelled as such).
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def simulate(n: int, j: int, seed: int = 1):
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.5, 2.0, j)
    b = rng.normal(0.0, 1.0, j)
    theta = rng.normal(0.0, 1.0, n)
    y = np.empty((n, j), dtype=np.float64)
    for s in range(0, n, 500):  # in row blocks to bound memory
        p = 1.0 / (1.0 + np.exp(-a * (theta[s:s + 500, None] - b)))
        y[s:s + 500] = rng.random(p.shape) < p
    return y, a, b, theta


def accuracy(a_hat, b_hat, a, b) -> str:
    rmse_a = float(np.sqrt(np.mean((a_hat - a) ** 2)))
    rmse_b = float(np.sqrt(np.mean((b_hat - b) ** 2)))
    link = float(np.std(b) / np.std(b_hat))
    ratio = a_hat.mean() / a.mean()
    return f"RMSE(a) {rmse_a:.4f}  RMSE(b) {rmse_b:.4f}  linking A {link:.4f}  mean a ratio {ratio:.4f}"


def run_scorebench(n: int, j: int, method: str = "em") -> float:
    import scorebench.irt as irt

    y, a, b, theta = simulate(n, j)
    start = time.perf_counter()
    fit = irt.fit(y, "2pl", method=method, warn=False)
    elapsed = time.perf_counter() - start
    print(f"scorebench {method:>3} {n:>5} x {j:>5}: {elapsed:7.1f} s  converged={fit.converged} "
          f"({fit.n_iter} it)  {accuracy(fit.items['a'].to_numpy(), fit.items['b'].to_numpy(), a, b)}  "
          f"sample sd(theta) {theta.std():.4f}", flush=True)
    return elapsed


def run_girth(n: int, j: int) -> float | None:
    try:
        import girth
    except ImportError:
        print("girth not installed; skipped")
        return None
    y, a, b, theta = simulate(n, j)
    start = time.perf_counter()
    out = girth.twopl_mml(y.T.astype(int))
    elapsed = time.perf_counter() - start
    print(f"girth          {n:>5} x {j:>5}: {elapsed:7.1f} s  "
          f"{accuracy(out['Discrimination'], out['Difficulty'], a, b)}", flush=True)
    return elapsed


def simulate_poly(kind: str, n: int, j: int, seed: int):
    """Five categories: a ~ U(0.8, 2.2); thresholds location N(0, 0.6) + (-1.5, -0.5, 0.5, 1.5) x U(0.6, 1.2)."""
    from scorebench.irt.polymodels import simulate as draw

    rng = np.random.default_rng(seed)
    a = rng.uniform(0.8, 2.2, j)
    b = rng.normal(0.0, 0.6, (j, 1)) + np.array([-1.5, -0.5, 0.5, 1.5]) * rng.uniform(0.6, 1.2, (j, 1))
    d = -a[:, None] * b if kind == "graded" else -np.cumsum(a[:, None] * b, axis=1)
    return draw(kind, a, d, rng.normal(size=n), rng), a, b


def run_poly(kind: str, n: int, j: int, seed: int = 1) -> float:
    from scorebench import irt

    y, a, b = simulate_poly(kind, n, j, seed)
    wall, cpu = time.perf_counter(), time.process_time()
    f = irt.fit(y, "grm" if kind == "graded" else kind)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    b_hat = f.items[[f"b{k}" for k in range(1, 5)]].to_numpy()
    rmse_a = float(np.sqrt(np.mean((f.items["a"] - a) ** 2)))
    rmse_b = float(np.sqrt(np.mean((b_hat - b) ** 2)))
    link = float(np.std(b) / np.std(b_hat))
    print(f"{kind:<7} {n:>5} x {j:>4} x 5: {wall:6.1f} s wall, {cpu:6.1f} s CPU, {f.n_iter} EM iterations, "
          f"{len(f.nodes)} nodes; RMSE(a) {rmse_a:.3f}, RMSE(b) {rmse_b:.3f}, linking A {link:.3f}", flush=True)
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--metabench", action="store_true", help="also fit 5,000 x 28,000")
    parser.add_argument("--no-girth", action="store_true")
    parser.add_argument("--poly-only", action="store_true", help="only the polytomous section")
    args = parser.parse_args()
    run_poly("graded", 5000, 200)
    for kind in ("graded", "gpcm"):
        for n in (1000, 5000):
            run_poly(kind, n, 20, seed=2)
    if args.poly_only:
        return
    ours = run_scorebench(5000, 2000)
    run_scorebench(1000, 500)
    if not args.no_girth:
        for n, j in ((1000, 100), (2000, 200)):
            t_small = run_scorebench(n, j)
            t_girth = run_girth(n, j)
            if t_girth:
                print(f"  ratio girth / scorebench at {n} x {j}: {t_girth / t_small:.1f}x")
        if t_girth:
            extrapolated = t_girth * (5000 * 2000) / (2000 * 200)
            print(f"girth 5000 x 2000: ~{extrapolated:.0f} s EXTRAPOLATED linearly from 2000 x 200 "
                  f"(scorebench measured {ours:.1f} s; ratio ~{extrapolated / ours:.0f}x)")
    if args.metabench:
        run_scorebench(5000, 28000)


if __name__ == "__main__":
    main()
