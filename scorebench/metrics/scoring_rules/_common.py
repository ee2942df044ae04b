"""Conventions, shape checks and chunking shared by the scoring-rule modules.

Every public scoring-rule function validates its inputs with :mod:`scorebench.core.validation`
under the same conventions:

* inputs become float64 arrays with ``as_float_array(..., check_inf=True)``: integers are
  converted exactly (integers beyond ``2**53`` are refused rather than silently rounded);
* ``+-inf`` is refused with the offending rows named; ``NaN`` is allowed and propagates
  to the score of its row (tables apply their ``nan_policy`` before calling);
* arrays that must describe the same rows have to broadcast against each other
  (``broadcast_arrays``, :func:`check_batch`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from scorebench.core.errors import InputError
from scorebench.core.validation import as_float_array, broadcast_arrays, check_binary, check_finite, check_probability, check_simplex

FAMILY = "scoring_rules"
GNEITING_RAFTERY = "Gneiting & Raftery (2007), JASA 102(477):359-378"
#: Reference implementations named in the registry's ``tested_against`` pairs.
SCORINGRULES = "scoringrules 0.7 (numpy backend)"
SCIPY = "scipy (distributions / numerical integration)"

#: Probabilities are clipped to ``[PROB_CLIP, 1 - PROB_CLIP]`` before taking logarithms.
#: The constant is fixed (not ``np.finfo(dtype).eps``) so a score never depends on the
#: dtype the caller happened to use: all computation is float64.
PROB_CLIP = 1e-15

#: Working-memory budget of one chunk of a chunked computation, in bytes.
CHUNK_BYTES = 1 << 23  # 8 MiB of temporaries per chunk


def run_engine(engine: Callable[..., np.ndarray], obs: np.ndarray, ens: np.ndarray, batch: tuple[int, ...],
               *args: Any, **kwargs: Any) -> np.ndarray:
    """``engine(obs, ens, *args, **kwargs)`` reshaped to ``batch``, naming infinite inputs if any.

    For inputs read with ``as_float_array(..., check_inf=False)``: infinite inputs always
    make the score non-finite, so a finite result proves there were none and the scan
    that names the infinite rows runs only otherwise, off the hot path of large ensembles.
    """
    with np.errstate(invalid="ignore"):  # infinities are reported below, not warned about
        out = engine(obs, ens, *args, **kwargs)
    if not np.isfinite(out).all():
        check_finite(obs, "obs", allow_nan=True)
        check_finite(ens, "ens", allow_nan=True)
    return out.reshape(batch)


def check_batch(obs: np.ndarray, fct: np.ndarray, obs_name: str, fct_name: str, core: int) -> tuple[int, ...]:
    """Check that ``obs`` broadcasts with the batch shape of ``fct`` (all but its ``core``
    last axes); return the broadcast batch shape."""
    batch = fct.shape[:fct.ndim - core]
    try:
        return np.broadcast_shapes(obs.shape, batch)
    except ValueError:
        raise InputError(
            f"mismatched lengths: {obs_name} has shape {obs.shape} but {fct_name} has shape "
            f"{fct.shape}; expected {obs_name} of shape {batch}") from None


def chunk_slices(n: int, row_bytes: int, budget: int = CHUNK_BYTES) -> Iterator[slice]:
    """Slices of ``range(n)`` whose working set stays within ``budget`` bytes."""
    step = max(1, int(budget // max(row_bytes, 1)))
    for start in range(0, n, step):
        yield slice(start, min(n, start + step))


def binary_inputs(y: Any, p: Any) -> tuple[np.ndarray, np.ndarray]:
    """Outcomes ``y`` in {0, 1} and probabilities ``p`` in [0, 1], broadcast together."""
    y = as_float_array(y, "y", check_inf=True)
    p = as_float_array(p, "p", check_inf=True)
    check_binary(y)
    check_probability(p, "p")
    y, p = broadcast_arrays(y=y, p=p)
    return y, p


def probability_matrix(P: Any, name: str = "P", *, atol: float = 1e-6) -> np.ndarray:
    """A ``(..., K)`` array of probability vectors (rows on the last axis summing to 1)."""
    P = as_float_array(P, name, check_inf=True)
    if P.ndim < 1 or P.shape[-1] < 2:
        raise InputError(f"{name}: expected probabilities over at least 2 classes on the last axis, "
                         f"got shape {P.shape}")
    return check_simplex(P, name, atol=atol)


def check_thresholds(a: Any, b: Any) -> tuple[float, float]:
    """The weight window ``[a, b]`` of a threshold-weighted score as floats, with ``a < b``."""
    try:
        a, b = float(a), float(b)
    except (TypeError, ValueError):
        raise InputError(f"a, b: expected numbers, got {a!r}, {b!r}") from None
    if np.isnan(a) or np.isnan(b) or not a < b:
        raise InputError(f"a, b: expected thresholds with a < b, got a={a!r}, b={b!r}")
    return a, b
