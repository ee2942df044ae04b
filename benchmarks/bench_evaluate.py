"""The evaluate engine: 1,000 bootstrap rounds of CRPS over 1,000,000 rows x 5 systems.

Run: ``python benchmarks/bench_evaluate.py``

Times ``scorebench.evaluate(table, "crps_normal", n_boot=1000)`` end to end (kind
validation, CRPS for 5,000,000 rows, grouping, bootstrap intervals per system) next to
the cost of the CRPS computation alone, and compares with the obvious alternative:
scoringrules' CRPS plus a NumPy resampling loop for one system.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd


def main() -> None:
    import scorebench

    rng = np.random.default_rng(0)
    n, systems = 1_000_000, 5
    y = rng.normal(size=n)
    table = pd.concat([pd.DataFrame({"system": f"s{k}", "y": y, "mu": y + rng.normal(0, 0.3 + 0.1 * k, n),
                                     "sigma": 0.5 + 0.1 * k}) for k in range(systems)], ignore_index=True)
    crps = scorebench.metric("crps_normal").fn
    start = time.perf_counter()
    crps(table.y.to_numpy(), table.mu.to_numpy(), table.sigma.to_numpy())
    alone = time.perf_counter() - start
    start = time.perf_counter()
    scores = scorebench.evaluate(table, "crps_normal", n_boot=1000, seed=0)
    total = time.perf_counter() - start
    print(scores.to_string(index=False))
    print(f"evaluate, {n:,} rows x {systems} systems, 1000 bootstrap rounds: {total:.2f} s "
          f"(CRPS alone {alone:.2f} s; bootstrap method: {scores.attrs['bootstrap']})")
    start = time.perf_counter()
    exact = scorebench.evaluate(table[table.system == "s0"].iloc[:40_000], "crps_normal", n_boot=1000)  # n*B <= 5e7
    print(f"exact multinomial bootstrap, 40,000 rows x 1 system: {time.perf_counter() - start:.2f} s "
          f"({exact.attrs['bootstrap']})")
    try:
        import scoringrules as sr
    except ImportError:
        return
    sub = table[table.system == "s0"]
    start = time.perf_counter()
    values = sr.crps_normal(sub.y.to_numpy(), sub.mu.to_numpy(), sub.sigma.to_numpy())
    idx_rng = np.random.default_rng(0)
    means = [values[idx_rng.integers(0, n, n)].mean() for _ in range(100)]
    naive = (time.perf_counter() - start) * 10  # 100 rounds measured, scaled to 1000
    np.quantile(means, [0.025, 0.975])
    print(f"scoringrules + naive NumPy resampling, 1 system, 1000 rounds (extrapolated from 100): {naive:.1f} s "
          f"-> x{systems} systems = {naive * systems:.1f} s; ratio {naive * systems / total:.1f}x")


if __name__ == "__main__":
    main()
