r"""FID∞: the Fréchet distance extrapolated to infinitely many samples (Chong & Forsyth, 2020).

The plug-in FID is biased upward at finite sample size: with :math:`n` samples its
expectation is, to first order,

.. math:: \mathbb{E}[\mathrm{FID}_n] \approx \mathrm{FID}_\infty + \frac{k}{n},

(Chong & Forsyth, 2020, sec. 3), so an interval around the plug-in value covers the
estimator's mean at this :math:`n`, not the Fréchet distance between the two populations
(with 32-dimensional features and 500 + 500 samples the bias is several standard errors).
FID∞ computes the FID on random subsets of both sample sets at ``n_points`` fractions
:math:`f` between ``min_fraction`` and 1 (``n_draws`` draws each, averaged), fits
:math:`\mathrm{FID}(f) = a + b/f` by least squares and reports the intercept :math:`a`, the
value at :math:`1/f = 0`. Subsetting both sets by the same fraction scales both bias terms
(:math:`c_r/n_r + c_g/n_g`) by :math:`1/f`, so the fit removes them together.

FID∞ is unbiased only to first order and has a larger variance than the plug-in FID; it
can be negative when the two populations are close. Its (half-sampling) interval is an
interval for the population Fréchet distance (``covers="population"`` in the registry),
which the plug-in FID's is not (``tests/evaluation/test_interval_targets.py`` checks both by
simulation).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from scorebench.core.errors import InputError
from scorebench.core.registry import NO_EXTERNAL_REFERENCE, register
from scorebench.core.table_schema import Option
from scorebench.metrics.generative._common import as_features, check_positive_int, check_rng_seed, check_same_dim, same_extractor
from scorebench.metrics.generative.frechet import fid
from scorebench.metrics.generative.kind import two_sample

__all__ = ["FIDInfinityResult", "fid_infinity", "fid_infinity_details"]

_CITATION = ("Chong & Forsyth (2020), Effectively Unbiased FID and Inception Score and Where to Find Them, "
             "CVPR")


@dataclass(frozen=True)
class FIDInfinityResult:
    """FID∞ (``value``, the intercept), the fitted slope, and the points of the fit."""

    value: float
    slope: float
    fractions: tuple[float, ...]
    fids: tuple[float, ...]
    n_real: int
    n_fake: int


def fid_infinity_details(real_features: Any, fake_features: Any, *, n_points: int = 8, min_fraction: float = 0.5,
                         n_draws: int = 2, seed: int | np.random.Generator = 0) -> FIDInfinityResult:
    """FID∞ with the points of its linear fit; see :func:`fid_infinity`.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> r = fid_infinity_details(rng.normal(size=(400, 4)), rng.normal(0.5, 1, size=(400, 4)))
    >>> len(r.fractions), r.fractions[-1], r.slope > 0
    (8, 1.0, True)
    """
    same_extractor(("real_features", real_features), ("fake_features", fake_features))
    real = as_features(real_features, "real_features", min_rows=2)
    fake = as_features(fake_features, "fake_features", min_rows=2)
    check_same_dim(real, fake, ("real_features", "fake_features"))
    n_points = check_positive_int(n_points, "n_points", minimum=2)
    n_draws = check_positive_int(n_draws, "n_draws")
    try:
        min_fraction = float(min_fraction)
    except (TypeError, ValueError):
        raise InputError(f"min_fraction must be a number in (0, 1), got {min_fraction!r}") from None
    if not 0.0 < min_fraction < 1.0:
        raise InputError(f"min_fraction must be in (0, 1), got {min_fraction!r}")
    smallest = min(real.shape[0], fake.shape[0]) * min_fraction
    if smallest < 3:
        raise InputError(f"fid_infinity: the smallest subset would hold {smallest:.0f} samples; need at least 3 "
                         f"(raise min_fraction or pass more samples; got {real.shape[0]} real, {fake.shape[0]} fake)")
    rng = check_rng_seed(seed)
    fractions = np.linspace(min_fraction, 1.0, n_points)
    values = np.empty(n_points)
    for i, f in enumerate(fractions):
        m_r, m_f = max(2, int(round(f * real.shape[0]))), max(2, int(round(f * fake.shape[0])))
        if m_r == real.shape[0] and m_f == fake.shape[0]:
            values[i] = fid(real, fake)
            continue
        values[i] = np.mean([fid(real[rng.choice(real.shape[0], m_r, replace=False)],
                                 fake[rng.choice(fake.shape[0], m_f, replace=False)]) for _ in range(n_draws)])
    design = np.column_stack([np.ones(n_points), 1.0 / fractions])
    (intercept, slope), *_ = np.linalg.lstsq(design, values, rcond=None)
    return FIDInfinityResult(float(intercept), float(slope), tuple(float(f) for f in fractions),
                             tuple(float(v) for v in values), real.shape[0], fake.shape[0])


@register("fid_infinity", family="generative", kind="features", inputs=("real_features", "fake_features"),
          higher_is_better=False, bounds=(-math.inf, math.inf), per_row=False, interval="half_sampling",
          covers="population", params={"n_points": 8, "min_fraction": 0.5, "n_draws": 2, "seed": Option("seed", int, 0, "seed of the random draws")},
          citation=_CITATION, table_fn=two_sample(lambda real, fake, **p: fid_infinity(real, fake, **p)), tested_against=NO_EXTERNAL_REFERENCE)
def fid_infinity(real_features: Any, fake_features: Any, *, n_points: int = 8, min_fraction: float = 0.5,
                 n_draws: int = 2, seed: int | np.random.Generator = 0) -> float:
    r"""FID∞: the FID extrapolated to infinite sample size (lower is better; may dip below 0).

    .. math::

        \mathrm{FID}(f) \approx \mathrm{FID}_\infty + \frac{b}{f}, \qquad
        f \in \{\text{min\_fraction}, \dots, 1\}

    fitted by least squares to the FID of random subsets holding the fraction :math:`f` of
    each sample set; the intercept is returned.

    Parameters
    ----------
    real_features, fake_features : array_like of shape (n, d)
    n_points : int, default 8
        Fractions in the fit (equally spaced from ``min_fraction`` to 1).
    min_fraction : float, default 0.5
        The smallest subset, as a fraction of each set; keep ``min_fraction * n`` well above
        the feature dimension (the :math:`1/n` law holds for :math:`n \gg d`).
    n_draws : int, default 2
        Random subsets per fraction below 1 (their FIDs are averaged).
    seed : int or Generator, default 0

    References
    ----------
    Chong & Forsyth (2020), "Effectively Unbiased FID and Inception Score and Where to Find
    Them", CVPR.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> real, fake = rng.normal(size=(600, 8)), rng.normal(size=(600, 8))
    >>> from scorebench.metrics.generative import fid
    >>> # same population: the true distance is 0; FID's 1/n bias is mostly removed
    >>> round(fid(real, fake), 3), round(fid_infinity(real, fake), 3)
    (0.074, 0.027)
    """
    return fid_infinity_details(real_features, fake_features, n_points=n_points, min_fraction=min_fraction,
                                n_draws=n_draws, seed=seed).value
