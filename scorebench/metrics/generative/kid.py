r"""Kernel Inception Distance: unbiased MMD² with a cubic polynomial kernel, over subsets.

.. math::

    k(x, y) = \Bigl(\frac{x^\top y}{d} + 1\Bigr)^3, \qquad
    \widehat{\mathrm{MMD}}^2_u = \frac{\sum_{i\ne j}k(x_i,x_j)}{m(m-1)}
        + \frac{\sum_{i\ne j}k(y_i,y_j)}{m(m-1)} - \frac{2}{m^2}\sum_{i,j}k(x_i,y_j)

averaged over ``n_subsets`` random subsets of ``subset_size`` samples drawn without
replacement from each set (as Bińkowski et al.'s code, ``torch-fidelity`` and ``clean-fid``
do), seeded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from scorebench.core.registry import NO_EXTERNAL_REFERENCE, register
from scorebench.core.table_schema import Option
from scorebench.metrics.generative.kind import two_sample
from scorebench.metrics.generative._common import as_features, check_positive_int, check_rng_seed, check_same_dim, same_extractor

__all__ = ["KIDResult", "kid", "kid_details", "mmd2_unbiased"]


@dataclass(frozen=True)
class KIDResult:
    """KID over subsets: ``mean`` (the reported KID), ``std`` across subsets, settings used."""

    mean: float
    std: float
    n_subsets: int
    subset_size: int
    seed: int | None
    extractor: str | None = None


def mmd2_unbiased(x: np.ndarray, y: np.ndarray, *, degree: int = 3, gamma: float | None = None,
                  coef0: float = 1.0) -> float:
    r"""Unbiased MMD² between two samples (sizes :math:`m`, :math:`n`) with a polynomial kernel.

    The U-statistic of Gretton et al. (2012), JMLR 13:723-773, eq. 3:

    .. math:: \widehat{\mathrm{MMD}}^2_u = \frac{1}{m(m-1)}\sum_{i \ne j} k(x_i, x_j)
              + \frac{1}{n(n-1)}\sum_{i \ne j} k(y_i, y_j) - \frac{2}{mn}\sum_{i,j} k(x_i, y_j),

    .. math:: k(x, y) = (\gamma\, x^\top y + c_0)^{\text{degree}},\ \gamma = 1/d \text{ by default.}

    Unequal sizes are fine (each within-sample sum has its own normaliser; the earlier
    version divided both by :math:`m(m-1)`, biased when :math:`m \ne n`).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> x, y = rng.normal(size=(200, 4)), rng.normal(size=(200, 4))
    >>> abs(mmd2_unbiased(x, y)) < 0.05
    True
    """
    x = as_features(x, "x", min_rows=2)
    y = as_features(y, "y", min_rows=2)
    check_same_dim(x, y, ("x", "y"))
    m, n = x.shape[0], y.shape[0]
    g = 1.0 / x.shape[1] if gamma is None else gamma
    kxx = (x @ x.T * g + coef0) ** degree
    kyy = (y @ y.T * g + coef0) ** degree
    kxy = (x @ y.T * g + coef0) ** degree
    within = (kxx.sum() - np.trace(kxx)) / (m * (m - 1)) + (kyy.sum() - np.trace(kyy)) / (n * (n - 1))
    return float(within - 2.0 * kxy.sum() / (m * n))


def kid_details(real_features: Any, fake_features: Any, *, n_subsets: int = 100,
                subset_size: int = 1000, seed: int | np.random.Generator = 0) -> KIDResult:
    """KID mean and standard deviation over seeded subsets; see :func:`kid`.

    ``subset_size`` is capped at the smaller set's size.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> r = kid_details(rng.normal(size=(200, 8)), rng.normal(0.5, 1, size=(200, 8)), n_subsets=10)
    >>> r.subset_size, r.mean > 0.1
    (200, True)
    """
    fp = same_extractor(("real_features", real_features), ("fake_features", fake_features))
    real = as_features(real_features, "real_features", min_rows=2)
    fake = as_features(fake_features, "fake_features", min_rows=2)
    check_same_dim(real, fake, ("real_features", "fake_features"))
    n_subsets = check_positive_int(n_subsets, "n_subsets")
    size = min(check_positive_int(subset_size, "subset_size", minimum=2), real.shape[0], fake.shape[0])
    rng = check_rng_seed(seed)
    values = np.empty(n_subsets)
    for s in range(n_subsets):
        xi = rng.choice(real.shape[0], size, replace=False)
        yi = rng.choice(fake.shape[0], size, replace=False)
        values[s] = mmd2_unbiased(real[xi], fake[yi])
    return KIDResult(float(values.mean()), float(values.std()), n_subsets, size,
                     seed if isinstance(seed, (int, np.integer)) else None, fp)


@register("kid", family="generative", kind="features", inputs=("real_features", "fake_features"),
          higher_is_better=False, bounds=(-math.inf, math.inf), per_row=False, interval="half_sampling",
          params={"n_subsets": 100, "subset_size": 1000, "seed": Option("seed", int, 0, "seed of the random draws")}, covers="population",
          citation="Binkowski, Sutherland, Arbel & Gretton (2018), Demystifying MMD GANs, ICLR",
          table_fn=two_sample(lambda real, fake, **p: kid(real, fake, **p)), tested_against=NO_EXTERNAL_REFERENCE)
def kid(real_features: Any, fake_features: Any, *, n_subsets: int = 100, subset_size: int = 1000,
        seed: int | np.random.Generator = 0) -> float:
    r"""Kernel Inception Distance (lower is better; unbiased, so it can dip below 0).

    .. math::

        \mathrm{KID} = \frac{1}{S}\sum_{s=1}^{S}\widehat{\mathrm{MMD}}^2_u(X_s, Y_s),\qquad
        k(x,y) = (x^\top y/d + 1)^3

    Parameters
    ----------
    real_features, fake_features : array_like of shape (n, d)
    n_subsets : int, default 100
    subset_size : int, default 1000
        Capped at the smaller set's size.
    seed : int or Generator, default 0

    References
    ----------
    Bińkowski, Sutherland, Arbel & Gretton (2018), "Demystifying MMD GANs", ICLR.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> same = kid(rng.normal(size=(500, 8)), rng.normal(size=(500, 8)), n_subsets=5, subset_size=200)
    >>> shifted = kid(rng.normal(size=(500, 8)), rng.normal(0.5, 1, size=(500, 8)), n_subsets=5, subset_size=200)
    >>> abs(same) < 0.05 < shifted
    True
    """
    return kid_details(real_features, fake_features, n_subsets=n_subsets, subset_size=subset_size,
                       seed=seed).mean
