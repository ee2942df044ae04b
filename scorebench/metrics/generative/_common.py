"""Validation and helpers shared by the generative-metric modules.

Features arrive as plain arrays, as :class:`~scorebench.metrics.generative.stats.FeatureStats`
or as any object with ``features`` (an array) and ``extractor`` (a fingerprint string)
attributes, e.g. what :mod:`scorebench.models` produces. The extractor identity travels
with the features so that numbers from different extractors are never compared silently.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from scorebench.core.errors import InputError
from scorebench.core.validation import as_float_array, check_finite, check_positive_int

__all__ = ["as_features", "extractor_of", "same_extractor", "check_same_dim", "check_rng_seed",
           "check_positive_int"]


def extractor_of(x: Any) -> str | None:
    """The feature extractor fingerprint carried by ``x`` (``None`` for bare arrays)."""
    value = getattr(x, "extractor", None)
    return None if value is None else str(value)


def as_features(x: Any, name: str, *, min_rows: int = 1) -> np.ndarray:
    """``x`` (or ``x.features``) as a finite float64 ``(n, d)`` array with ``n >= min_rows``."""
    if hasattr(x, "m2") and hasattr(x, "mean") and not isinstance(x, np.ndarray):
        raise InputError(f"{name}: this metric needs the feature vectors themselves, not a FeatureStats "
                         "summary (only FID and sFID work from statistics)")
    if hasattr(x, "features") and not isinstance(x, np.ndarray):
        x = x.features
    arr = as_float_array(x, name, ndim=2)
    if arr.shape[0] < min_rows:
        raise InputError(f"{name}: expected at least {min_rows} sample(s) (rows), got {arr.shape[0]}")
    if arr.shape[1] < 1:
        raise InputError(f"{name}: expected at least one feature column, got shape {arr.shape}")
    check_finite(arr, name)
    return arr


def same_extractor(*named: tuple[str, Any]) -> str | None:
    """The common extractor fingerprint of the inputs; raise when two differ.

    Inputs without a fingerprint (bare arrays) are compatible with anything.
    """
    seen = {name: fp for name, x in named if (fp := extractor_of(x)) is not None}
    if len(set(seen.values())) > 1:
        described = ", ".join(f"{k} from {v}" for k, v in seen.items())
        raise InputError(f"features come from different extractors ({described}); "
                         "compute both sets with the same feature extractor")
    return next(iter(seen.values()), None)


def check_same_dim(a: np.ndarray, b: np.ndarray, names: tuple[str, str]) -> None:
    """Raise unless two feature arrays have the same number of columns."""
    if a.shape[-1] != b.shape[-1]:
        raise InputError(f"{names[0]} has {a.shape[-1]} feature dimension(s) but {names[1]} has "
                         f"{b.shape[-1]}; expected features from the same extractor")


def check_rng_seed(seed: Any) -> np.random.Generator:
    """A numpy Generator from an int seed or an existing Generator."""
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise InputError(f"seed: expected an integer or numpy Generator, got {seed!r}")
    return np.random.default_rng(int(seed))


