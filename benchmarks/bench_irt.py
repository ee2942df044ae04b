"""2PL calibration speed and accuracy: scorebench.irt against girth, side by side.

Usage::

    python benchmarks/bench_irt.py                 # 5,000 x 2,000 plus girth on smaller sizes
    python benchmarks/bench_irt.py --metabench     # also 5,000 x 28,000 (metabench-sized)

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
    return f"RMSE(a) {rmse_a:.4f}  RMSE(b) {rmse_b:.4f}  linking A {link:.4f}  mean a ratio {a_hat.mean() / a.mean():.4f}"


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--metabench", action="store_true", help="also fit 5,000 x 28,000")
    parser.add_argument("--no-girth", action="store_true")
    args = parser.parse_args()
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
