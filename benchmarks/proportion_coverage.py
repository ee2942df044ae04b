"""Coverage of 95% intervals for accuracy: Wilson, Jeffreys and the percentile bootstrap.

The percentile bootstrap of a mean of n right/wrong answers with k right is the distribution
of Binomial(n, k/n)/n, so its interval is computed exactly (infinitely many rounds). Coverage
is exact too: the sum over k of P(k) [p in interval(k)], no simulation.

Run: ``python benchmarks/proportion_coverage.py``
"""

from __future__ import annotations

import numpy as np
from scipy.stats import binom

from scorebench.analysis.stats_tests import jeffreys_interval, wilson_interval


def _bootstrap(k: int, n: int, ci: float = 0.95) -> tuple[float, float]:
    a = (1 - ci) / 2
    return binom.ppf(a, n, k / n) / n, binom.ppf(1 - a, n, k / n) / n


def coverage(method, n: int, p: float) -> float:
    k = np.arange(n + 1)
    inside = np.array([lo <= p <= hi for lo, hi in (method(int(x), n) for x in k)])
    return float(binom.pmf(k, n, p) @ inside)


def main() -> None:
    methods = {"wilson": wilson_interval, "jeffreys": jeffreys_interval, "bootstrap": _bootstrap}
    print("| n | p | " + " | ".join(methods) + " |")
    print("| --- | --- |" + " --- |" * len(methods))
    for n in (20, 50, 200):
        for p in (0.5, 0.9, 0.97):
            cells = " | ".join(f"{coverage(m, n, p):.3f}" for m in methods.values())
            print(f"| {n} | {p} | {cells} |")


if __name__ == "__main__":
    main()
