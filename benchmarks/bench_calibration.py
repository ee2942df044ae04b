"""Calibration metrics and the scoring-rule power analysis: speed next to reference code.

Run: ``python benchmarks/bench_calibration.py``

* binned ECE over 1,000,000 forecasts: ``scorebench.metrics.calibration.ece`` next to the
  same number computed from scikit-learn's ``calibration_curve`` (plus the bin counts it
  does not return);
* smooth ECE over 1,000,000 forecasts, next to Apple's ``relplot.smECE`` when that package
  is importable (it is not a dependency);
* ``scorebench.evaluate`` of the set-level ``ece`` with 1,000 bootstrap resamples, 100,000
  rows x 2 systems;
* ``scorebench.analysis.power.power`` for the energy and variogram scores (when registered), 10
  dimensions, 50 members, N up to 100, 100 replications.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd


def _timed(fn, *args, repeat: int = 3, **kwargs):
    best, value = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        value = fn(*args, **kwargs)
        best = min(best, time.perf_counter() - start)
    return best, value


def _sklearn_ece(y, p, n_bins):
    from sklearn.calibration import calibration_curve

    prob_true, prob_pred = calibration_curve(y, p, n_bins=n_bins)
    ids = np.searchsorted(np.linspace(0, 1, n_bins + 1)[1:-1], p)
    counts = np.bincount(ids, minlength=n_bins)
    return float(np.sum(counts[counts > 0] / len(p) * np.abs(prob_true - prob_pred)))


def main() -> None:
    import scorebench
    from scorebench.metrics.calibration import ece, smooth_ece

    rng = np.random.default_rng(0)
    n = 1_000_000
    p = rng.uniform(size=n)
    y = (rng.uniform(size=n) < p ** 1.2).astype(np.float64)

    ours, v1 = _timed(ece, y, p, n_bins=15)
    ref, v2 = _timed(_sklearn_ece, y, p, 15)
    print(f"ece, {n:,} forecasts: scorebench {ours * 1e3:.1f} ms, scikit-learn calibration_curve "
          f"{ref * 1e3:.1f} ms (ratio {ref / ours:.2f}x); |difference| {abs(v1 - v2):.1e}")

    ours, v1 = _timed(smooth_ece, y, p, repeat=2)
    try:
        from relplot.metrics import smECE
    except ImportError:
        print(f"smooth_ece, {n:,} forecasts: scorebench {ours:.2f} s (value {v1:.5f}); relplot not installed")
    else:
        ref, v2 = _timed(smECE, p, y, repeat=2)
        print(f"smooth_ece, {n:,} forecasts: scorebench {ours:.2f} s, relplot {ref:.2f} s "
              f"(ratio {ref / ours:.2f}x); values {v1:.5f} vs {v2:.5f}")

    m = 100_000
    table = pd.DataFrame({"system": np.repeat(["a", "b"], m), "y": y[: 2 * m], "p": p[: 2 * m]})
    start = time.perf_counter()
    scorebench.evaluate(table, ["ece"], n_boot=1000, seed=0)
    print(f"evaluate ece, {m:,} rows x 2 systems, 1000 bootstrap resamples: {time.perf_counter() - start:.2f} s")

    from scorebench.analysis.power import MultivariateNormal, misspecify, power

    rules = [r for r in ("energy_score", "variogram_score") if r in set(scorebench.list_metrics()["name"])]
    if not rules:
        print("power: energy_score / variogram_score not registered; skipped")
        return
    truth = MultivariateNormal.equicorrelated(10, rho=0.5)
    start = time.perf_counter()
    result = power(rules, truth, misspecify(truth, "correlation", 1.0), n=[10, 30, 100], ensemble_size=50,
                   replications=100, seed=0)
    elapsed = time.perf_counter() - start
    print(result.table.to_string(index=False))
    print(f"power, {len(rules)} rules, d=10, M=50, N<=100, 100 replications "
          f"({100 * 100:,} scored rows per forecast and rule): {elapsed:.2f} s")


if __name__ == "__main__":
    main()
