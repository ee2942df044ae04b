r"""Inception Score from a classifier's class probabilities on generated samples.

.. math::

    \mathrm{IS} = \exp\Bigl(\frac{1}{n}\sum_i \mathrm{KL}\bigl(p(y\mid x_i)\,\Vert\,p(y)\bigr)\Bigr),
    \qquad p(y) = \frac{1}{n}\sum_i p(y\mid x_i),

computed on each of ``n_splits`` splits (after a seeded shuffle) and reported as the mean
(and standard deviation) over splits, as in Salimans et al.'s code.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from scorebench.core.lazy import lazy_attr
from scorebench.core.errors import InputError
from scorebench.core.registry import register
from scorebench.core.table_schema import Option
from scorebench.core.validation import as_float_array, check_finite, check_simplex
from scorebench.metrics.generative._common import check_positive_int, check_rng_seed

xlogy = lazy_attr("scipy.special", "xlogy")

__all__ = ["ISResult", "inception_score", "inception_score_details"]


@dataclass(frozen=True)
class ISResult:
    """Inception Score over splits: ``mean`` (reported), ``std``, settings used."""

    mean: float
    std: float
    n_splits: int
    seed: int | None


def _split_scores(probs: np.ndarray, n_splits: int) -> np.ndarray:
    scores = np.empty(n_splits)
    # Split boundaries i*N // n_splits as Salimans et al.'s code and torch-fidelity
    # (np.array_split puts the remainder in the first splits instead).
    n = probs.shape[0]
    bounds = [i * n // n_splits for i in range(n_splits + 1)]
    for s, part in enumerate(probs[a:b] for a, b in zip(bounds[:-1], bounds[1:])):
        marginal = part.mean(axis=0, keepdims=True)
        kl = (xlogy(part, part) - xlogy(part, marginal)).sum(axis=1)
        scores[s] = math.exp(kl.mean())
    return scores


def inception_score_details(probs: Any, *, n_splits: int = 10,
                            seed: int | np.random.Generator | None = 0, atol: float = 1e-4) -> ISResult:
    """Inception Score mean and standard deviation over splits; see :func:`inception_score`.

    ``seed=None`` keeps the given order (no shuffle), which reproduces the original code.

    Examples
    --------
    >>> import numpy as np
    >>> r = inception_score_details(np.eye(4)[np.arange(40) % 4], n_splits=2, seed=None)
    >>> round(r.mean, 12), r.std
    (4.0, 0.0)
    """
    p = as_float_array(probs, "probs", ndim=2)
    check_finite(p, "probs")
    p = check_simplex(p, "probs", atol=atol, renormalize=False)
    n_splits = check_positive_int(n_splits, "n_splits")
    if p.shape[0] < n_splits:
        raise InputError(f"probs: {p.shape[0]} samples cannot make {n_splits} splits")
    if seed is not None:
        p = p[check_rng_seed(seed).permutation(p.shape[0])]
    scores = _split_scores(p, n_splits)
    return ISResult(float(scores.mean()), float(scores.std()), n_splits,
                    seed if isinstance(seed, (int, np.integer)) else None)


@register("inception_score", family="generative", kind="features", inputs=("probs",),
          higher_is_better=True, bounds=(1.0, math.inf), per_row=False, interval="half_sampling",
          params={"n_splits": 10, "seed": Option("seed", int, 0, "seed of the random draws")},
          citation="Salimans et al. (2016), Improved techniques for training GANs, NeurIPS",
          tested_against=('closed form (uniform and one-hot class probabilities)', 1e-12))
def inception_score(probs: Any, *, n_splits: int = 10, seed: int | np.random.Generator | None = 0) -> float:
    r"""Inception Score (higher is better; between 1 and the number of classes).

    .. math:: \mathrm{IS} = \exp\,\mathbb{E}_x\,\mathrm{KL}\bigl(p(y\mid x)\,\Vert\,p(y)\bigr)

    Parameters
    ----------
    probs : array_like of shape (n, n_classes)
        Class probabilities of the generated samples (rows sum to 1).
    n_splits : int, default 10
    seed : int, Generator or None, default 0
        Shuffle before splitting (``None``: keep the order).

    References
    ----------
    Salimans, Goodfellow, Zaremba, Cheung, Radford & Chen (2016), "Improved techniques for
    training GANs", NeurIPS.

    Examples
    --------
    >>> import numpy as np
    >>> round(inception_score(np.full((20, 5), 0.2), n_splits=2), 12)   # uninformative
    1.0
    """
    return inception_score_details(probs, n_splits=n_splits, seed=seed).mean
