"""Benchmark: closed-form CRPS of parametric distributions, 1e6 evaluations each (issue 19).

Run from the repository root::

    python benchmarks/bench_closed_forms.py              # 1,000,000 rows
    python benchmarks/bench_closed_forms.py --n 100000   # quick check
    python benchmarks/bench_closed_forms.py --only binomial,gtct --no-sr   # some rules

Target: each closed form vectorised, 1e6 evaluations in under 0.5 s. Reported: best of
``--repeat`` runs, wall-clock and CPU time of the process (on a shared machine the CPU
time is the steadier figure), and scoringrules' numpy backend for comparison where it
vectorises (its binomial and hypergeometric loop in Python).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from scorebench.metrics import scoring_rules as S


def best(fn, repeat):
    wall = cpu = float("inf")
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        fn()
        wall, cpu = min(wall, time.perf_counter() - w), min(cpu, time.process_time() - c)
    return wall, cpu


def cases(n, g):
    y = g.normal(0, 2, n)
    mu, sig = g.normal(size=n), g.uniform(0.3, 3, n)
    lo = g.uniform(-2, 0.5, n)
    up = lo + g.uniform(0.5, 4, n)
    lm, um = g.uniform(0, 0.4, n), g.uniform(0, 0.4, n)
    df, xi, m = g.uniform(1.5, 20, n), g.uniform(-0.8, 0.8, n), g.uniform(0, 1, n)
    pos, a, rate = g.gamma(1, 2, n), g.uniform(0.2, 5, n), g.uniform(0.2, 3, n)
    sl = g.uniform(0.05, 0.95, n)
    cnt = np.round(pos * 3)
    nb = g.integers(0, 20, n)
    return {
        "crps_gtcnormal": (lambda: S.crps_gtcnormal(y, mu, sig, lo, up, lm, um), "crps_gtcnormal",
                            (y, mu, sig, lo, up, lm, um)),
        "crps_tnormal": (lambda: S.crps_tnormal(y, mu, sig, lo, up), "crps_tnormal", (y, mu, sig, lo, up)),
        "crps_cnormal": (lambda: S.crps_cnormal(y, mu, sig, lo, up), "crps_cnormal", (y, mu, sig, lo, up)),
        "crps_gtclogistic": (lambda: S.crps_gtclogistic(y, mu, sig, lo, up, lm, um), "crps_gtclogistic",
                              (y, mu, sig, lo, up, lm, um)),
        "crps_gtct": (lambda: S.crps_gtct(y, df, mu, sig, lo, up, lm, um), "crps_gtct",
                       (y, df, mu, sig, lo, up, lm, um)),
        "crps_2pnormal": (lambda: S.crps_2pnormal(y, sig, a, mu), "crps_2pnormal", (y, sig, a, mu)),
        "crps_2pexponential": (lambda: S.crps_2pexponential(y, sig, a, mu), "crps_2pexponential", (y, sig, a, mu)),
        "crps_expm": (lambda: S.crps_expm(y, m, mu, sig), "crps_exponentialM", (y, m, mu, sig)),
        "crps_gev": (lambda: S.crps_gev(y, xi, mu, sig), "crps_gev", (y, xi, mu, sig)),
        "crps_gpd": (lambda: S.crps_gpd(y, xi, mu, sig, m), "crps_gpd", (y, xi, mu, sig, m)),
        "crps_uniform (masses)": (lambda: S.crps_uniform(y, lo, up, lm, um), "crps_uniform", (y, lo, up, lm, um)),
        "crps_beta": (lambda: S.crps_beta(g.uniform(size=n), a, rate), None, None),
        "crps_csg0": (lambda: S.crps_csg0(pos, a, rate, sl), None, None),
        "crps_loglaplace": (lambda: S.crps_loglaplace(pos, mu, sl), "crps_loglaplace", (pos, mu, sl)),
        "crps_loglogistic": (lambda: S.crps_loglogistic(pos, mu, sl), "crps_loglogistic", (pos, mu, sl)),
        "crps_poisson": (lambda: S.crps_poisson(cnt, a * 4), "crps_poisson", (cnt, a * 4)),
        "crps_negbinom": (lambda: S.crps_negbinom(cnt, a, m * 0.9 + 0.1), "crps_negbinom", (cnt, a, m * 0.9 + 0.1)),
        "crps_binomial (n < 20)": (lambda: S.crps_binomial(cnt, nb, m), None, None),
        "crps_hypergeometric (k < 20)": (lambda: S.crps_hypergeometric(cnt, nb, nb, nb), None, None),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", default="", help="comma-separated substrings of the rule names to run")
    parser.add_argument("--no-sr", action="store_true", help="skip the scoringrules comparison")
    args = parser.parse_args()
    import scoringrules as sr

    wanted = [w for w in args.only.split(",") if w]

    print(f"{args.n:,} evaluations, best of {args.repeat}")
    print(f"  {'rule':30s} {'wall s':>8s} {'CPU s':>8s} {'sr wall s':>10s}")
    for name, (fn, sr_name, sr_args) in cases(args.n, np.random.default_rng(0)).items():
        if wanted and not any(w in name for w in wanted):
            continue
        wall, cpu = best(fn, args.repeat)
        ref = ""
        if sr_name is not None and not args.no_sr:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                f = getattr(sr, sr_name)
                ref = f"{best(lambda f=f, sr_args=sr_args: f(*sr_args, backend='numpy'), args.repeat)[0]:10.3f}"
        print(f"  {name:30s} {wall:8.3f} {cpu:8.3f} {ref:>10s}")


if __name__ == "__main__":
    main()
