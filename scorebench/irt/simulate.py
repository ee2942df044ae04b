r"""Simulated right/wrong answers from a two-parameter logistic model (examples and checks).

.. math:: P(y_{ij} = 1) = \frac{1}{1 + \exp(-a_j(\theta_i - b_j))},\qquad
          \theta_i \sim N(0, 1),\ a_j \sim U(a_{\min}, a_{\max}),\ b_j \sim N(0, 1).
"""

from __future__ import annotations

import numpy as np

from scorebench.core.errors import InputError

__all__ = ["simulate_2pl"]


def simulate_2pl(n_systems: int, n_items: int, *, seed: int = 0,
                 slopes: tuple[float, float] = (0.5, 2.0)) -> np.ndarray:
    """A ``(n_systems, n_items)`` 0/1 matrix drawn from a 2PL with the stated distributions.

    Abilities, slopes, difficulties and answers are drawn in that order from
    ``numpy.random.default_rng(seed)``, so the same seed gives the same matrix.

    Examples
    --------
    >>> y = simulate_2pl(200, 30, seed=1)
    >>> y.shape, bool(set(np.unique(y)) <= {0.0, 1.0})
    ((200, 30), True)
    """
    if isinstance(n_systems, bool) or isinstance(n_items, bool) or int(n_systems) < 1 or int(n_items) < 1:
        raise InputError(f"simulate_2pl: expected positive sizes, got {n_systems!r} x {n_items!r}")
    lo, hi = (float(v) for v in slopes)
    if not 0 < lo <= hi:
        raise InputError(f"simulate_2pl: slopes expected 0 < low <= high, got {slopes!r}")
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=int(n_systems))
    a, b = rng.uniform(lo, hi, int(n_items)), rng.normal(size=int(n_items))
    return (rng.random((int(n_systems), int(n_items))) < 1 / (1 + np.exp(-a * (theta[:, None] - b)))).astype(float)
