"""mpmath CDFs of generalised truncated-censored distributions for the reference integrals."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import mpmath as mp

sys.path.insert(0, str(Path(__file__).parent))  # also when collected alone (doctest-modules)
from _crps_numeric import crps_numeric  # noqa: E402


def normal_cdf(z):
    return mp.ncdf(z)


def logistic_cdf(z):
    return 1 / (1 + mp.exp(-z))


def t_cdf(df):
    df = mp.mpf(df)

    def cdf(z):
        h = mp.betainc(df / 2, mp.mpf(1) / 2, 0, df / (df + z * z), regularized=True) / 2
        return 1 - h if z > 0 else h

    return cdf


def gtc_crps(base, y, mu, s, lo, up, lmass=0.0, umass=0.0, censored=False):
    """CRPS of the gtc distribution by quadrature; the base is symmetric, so upper tails
    are the lower tails of the mirror image (kept exact)."""
    mu, s = mp.mpf(mu), mp.mpf(s)
    l = (mp.mpf(lo) - mu) / s if math.isfinite(lo) else -mp.inf
    u = (mp.mpf(up) - mu) / s if math.isfinite(up) else mp.inf
    bl = base(l) if l != -mp.inf else mp.mpf(0)
    bu = base(u) if u != mp.inf else mp.mpf(1)
    sbl, sbu = base(-l) if l != -mp.inf else mp.mpf(1), base(-u) if u != mp.inf else mp.mpf(0)
    d = bu - bl if l <= 0 else sbl - sbu
    if censored:
        lmass, umass = bl, sbu
    lmass, umass = mp.mpf(lmass), mp.mpf(umass)
    m = 1 - lmass - umass
    lo_, up_ = (mp.mpf(lo) if math.isfinite(lo) else -mp.inf), (mp.mpf(up) if math.isfinite(up) else mp.inf)

    def cdf(x):
        if x < lo_:
            return mp.mpf(0)
        if x >= up_:
            return mp.mpf(1)
        z = (x - mu) / s
        return lmass + m * ((base(z) - bl) if l <= 0 else (sbl - base(-z))) / d

    def sf(x):
        if x < lo_:
            return mp.mpf(1)
        if x >= up_:
            return mp.mpf(0)
        z = (x - mu) / s
        return umass + m * ((base(-z) - sbu) if u >= 0 else (bu - base(z))) / d

    # Truncated far in a tail the mass sits within ~s/|l| of the bound: break points there.
    pts = [mu, mu + s, mu - s]
    for b, z in ((lo_, l), (up_, u)):
        if mp.isfinite(b):
            pts += [b + sign * s * f / max(1, abs(z)) for f in (0.01, 0.1, 1, 3, 10) for sign in (-1, 1)]
    return crps_numeric(cdf, y, pts, lo_, up_, sf=sf)
