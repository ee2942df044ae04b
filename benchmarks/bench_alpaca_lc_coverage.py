"""Coverage of the bootstrap interval of AlpacaEval's length-controlled win rate (issue 37).

Simulates annotations from the length-controlled GLM itself (instruction difficulty gamma ~ N(0, 1),
answer lengths with a model that writes longer answers, the judge's verdict Bernoulli with
logit = th_len * tanh(delta_len / sd) + th_diff * gamma + th_model, encoded 1 / 2 as alpaca_eval
does) and counts how often ``scorebench.evaluate(..., ["alpaca_lc_winrate"])``'s percentile bootstrap
interval (instructions resampled, the GLM refitted each round) covers the population value
100 * E_gamma[sigma(th_diff * gamma + th_model)] (by Monte Carlo over 10^6 draws).

    PYTHONPATH=$PWD python benchmarks/bench_alpaca_lc_coverage.py --reps 60 --n 100 --boot 100
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

import scorebench

TH_LEN, TH_DIFF, TH_MODEL = -0.6, -0.8, 0.4


def simulate(rng: np.random.Generator, n: int) -> pd.DataFrame:
    gamma = rng.normal(size=n)
    len_1 = rng.integers(300, 1500, n)
    len_2 = (len_1 * rng.lognormal(0.3, 0.4, n)).astype(int) + 1
    delta = (len_1 - len_2).astype(float)
    z = TH_LEN * np.tanh(delta / delta.std(ddof=1)) + TH_DIFF * gamma + TH_MODEL
    wins = rng.random(n) < 1 / (1 + np.exp(-z))
    return pd.DataFrame({"system": "m", "id": [f"q{i}" for i in range(n)], "preference": np.where(wins, 2.0, 1.0),
                         "len_1": len_1, "len_2": len_2, "instruction_difficulty": gamma})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=60)
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--boot", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    g = rng.normal(size=1_000_000)
    truth = 100 * float(np.mean(1 / (1 + np.exp(-(TH_DIFF * g + TH_MODEL)))))
    hits, widths, values = 0, [], []
    start = time.perf_counter()
    for rep in range(args.reps):
        table = scorebench.evaluate(simulate(rng, args.n), ["alpaca_lc_winrate"], n_boot=args.boot, seed=rep)
        lo, hi, value = table["ci_low"].iloc[0], table["ci_high"].iloc[0], table["value"].iloc[0]
        hits += lo <= truth <= hi
        widths.append(hi - lo)
        values.append(value)
    seconds = time.perf_counter() - start
    print(f"truth {truth:.3f}; mean estimate {np.mean(values):.3f} (bias {np.mean(values) - truth:+.3f}); "
          f"coverage {hits}/{args.reps} = {hits / args.reps:.3f} (nominal 0.95); mean width {np.mean(widths):.2f} "
          f"points; {seconds:.0f} s ({seconds / args.reps / (args.boot + 1):.3f} s a fit)")


if __name__ == "__main__":
    main()
