"""High-precision CRPS by quadrature of the definition, for the closed-form tests.

``crps_numeric(cdf, y, points)`` integrates ``(F(x) - 1{x >= y})^2`` over the real line
with mpmath, splitting at ``y`` and at the given break points (support bounds, modes),
where ``cdf`` (and ``sf``) map an ``mpmath.mpf`` to the CDF value (point masses included).
"""

from __future__ import annotations

import mpmath as mp

mp.mp.dps = 40


def crps_numeric(cdf, y: float, points=(), lo=-mp.inf, hi=mp.inf, sf=None) -> float:
    """CRPS of the distribution with CDF ``cdf`` (support within ``[lo, hi]``) at ``y``;
    ``sf`` (default ``1 - cdf``) is the survival function, exact in the upper tail."""
    sf = sf or (lambda x: 1 - cdf(x))
    y = mp.mpf(y)
    pts = sorted({mp.mpf(p) for p in points if lo <= p <= hi} | {mp.mpf(lo), mp.mpf(hi)})
    total = mp.mpf(0)
    # Outside the support the integrand is 1 between y and the support, 0 elsewhere.
    if y < lo:
        total += lo - y
    if y > hi:
        total += y - hi
    inner = sorted(set(pts) | ({y} if lo < y < hi else set()))
    for a, b in zip(inner[:-1], inner[1:]):
        below = b <= y
        f = (lambda x: cdf(x) ** 2) if below else (lambda x: sf(x) ** 2)
        total += mp.quad(f, [a, b])
    return float(total)
