"""Boundary validation and chunking shared by the scoring-rule modules.

Conventions enforced here, once, for every public scoring-rule function:

* inputs become float64 arrays; integer inputs are converted exactly (integers beyond
  ``2**53`` are refused rather than silently rounded);
* ``+-inf`` is refused with the offending rows named; ``NaN`` is allowed and propagates
  to the score of its row (tables apply their ``nan_policy`` before calling);
* arrays that must describe the same rows have to broadcast against each other.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from ...errors import InputError
from ...validation import describe_rows

FAMILY = "scoring_rules"
GNEITING_RAFTERY = "Gneiting & Raftery (2007), JASA 102(477):359-378"

#: Probabilities are clipped to ``[PROB_CLIP, 1 - PROB_CLIP]`` before taking logarithms.
#: The constant is fixed (not ``np.finfo(dtype).eps``) so a score never depends on the
#: dtype the caller happened to use: all computation is float64.
PROB_CLIP = 1e-15

#: Working-memory budget of one chunk of a chunked computation, in bytes.
CHUNK_BYTES = 1 << 23  # 8 MiB of temporaries per chunk


def as_float(x: Any, name: str, *, check_inf: bool = True) -> np.ndarray:
    """``x`` as a float64 array; refuse text, complex, huge integers and infinities.

    ``check_inf=False`` skips the infinity scan for callers that detect infinities more
    cheaply from their (non-finite) results, see :func:`raise_if_inf`.
    """
    try:
        arr = np.asarray(x)
    except (ValueError, TypeError) as exc:
        raise InputError(f"{name}: could not be read as a numeric array ({exc})") from None
    kind = arr.dtype.kind
    if kind == "c":
        raise InputError(f"{name}: complex values are not supported; expected real numbers")
    if kind in "iu":
        if arr.size and np.abs(arr).max() > 2**53:
            raise InputError(f"{name}: integers larger than 2**53 cannot be represented exactly "
                             "as float64; expected numbers of moderate size")
    elif kind not in "bf":
        try:
            arr = arr.astype(np.float64)
        except (ValueError, TypeError):
            raise InputError(f"{name}: expected numbers, got values of type {arr.dtype} "
                             f"(e.g. {np.ravel(arr)[:1].tolist()!r})") from None
    arr = np.asarray(arr, dtype=np.float64)
    if check_inf and np.isinf(arr).any():
        raise InputError(f"{name}: infinite values in {_rows(np.isinf(arr))}; expected finite numbers")
    return arr


def raise_if_inf(result: np.ndarray, **inputs: np.ndarray) -> None:
    """Raise for infinite inputs, scanning only when ``result`` has non-finite values.

    Infinite inputs always make the score non-finite, so a finite result proves there
    were none; this keeps the scan off the hot path of large ensembles.
    """
    if np.isfinite(result).all():
        return
    for name, arr in inputs.items():
        if np.isinf(arr).any():
            raise InputError(f"{name}: infinite values in {_rows(np.isinf(arr))}; expected finite numbers")


def _val(arr: np.ndarray, mask: np.ndarray) -> str:
    """The first offending value, printed as a plain Python number."""
    value = arr[mask].ravel()[0]
    return repr(value.item() if hasattr(value, "item") else value)


def _rows(mask: np.ndarray) -> str:
    mask = np.atleast_1d(mask)
    flat = mask.reshape(mask.shape[0], -1).any(axis=1) if mask.ndim > 1 else mask
    return describe_rows(flat)


def check_positive(arr: np.ndarray, name: str) -> None:
    """Refuse values <= 0 (NaN passes and propagates)."""
    bad = arr <= 0
    if bad.any():
        raise InputError(f"{name}: expected values > 0, got {_val(arr, bad)} in {_rows(bad)}")


def check_range(arr: np.ndarray, name: str, low: float, high: float, what: str) -> None:
    """Refuse values outside ``[low, high]`` (NaN passes)."""
    bad = (arr < low) | (arr > high)
    if bad.any():
        raise InputError(f"{name}: value {_val(arr, bad)} outside [{low:g}, {high:g}] in "
                         f"{_rows(bad)}; expected {what}")


def check_binary(y: np.ndarray, name: str = "y") -> None:
    """Refuse outcomes other than 0 and 1 (NaN passes)."""
    bad = (y != 0) & (y != 1) & ~np.isnan(y)
    if bad.any():
        raise InputError(f"{name}: value {_val(y, bad)} in {_rows(bad)}; expected binary outcomes 0 or 1")


def broadcast(**arrays: np.ndarray) -> list[np.ndarray]:
    """Broadcast the arrays together or raise naming their shapes."""
    try:
        return list(np.broadcast_arrays(*arrays.values()))
    except ValueError:
        shapes = ", ".join(f"{k} has shape {np.shape(v)}" for k, v in arrays.items())
        raise InputError(f"mismatched lengths: {shapes}; expected shapes that match "
                         "(or broadcast) row for row") from None


def check_batch(obs: np.ndarray, fct: np.ndarray, obs_name: str, fct_name: str, core: int) -> None:
    """Check that ``obs`` matches the batch shape of ``fct`` (all but its ``core`` last axes)."""
    batch = fct.shape[:fct.ndim - core]
    if obs.shape != batch:
        try:
            np.broadcast_shapes(obs.shape, batch)
        except ValueError:
            raise InputError(
                f"mismatched lengths: {obs_name} has shape {obs.shape} but {fct_name} has shape "
                f"{fct.shape}; expected {obs_name} of shape {batch}") from None


def chunk_slices(n: int, row_bytes: int, budget: int = CHUNK_BYTES) -> Iterator[slice]:
    """Slices of ``range(n)`` whose working set stays within ``budget`` bytes."""
    step = max(1, int(budget // max(row_bytes, 1)))
    for start in range(0, n, step):
        yield slice(start, min(n, start + step))


def class_index(y: Any, n_classes: int, name: str = "y") -> np.ndarray:
    """Integer class indices in ``[0, n_classes)``; floats must be whole numbers."""
    arr = np.asarray(y)
    if arr.dtype.kind in "iu":
        idx = arr.astype(np.int64)
    else:
        values = as_float(arr, name)
        if np.isnan(values).any():
            raise InputError(f"{name}: NaN class labels in {_rows(np.isnan(values))}; expected class indices")
        frac = values != np.round(values)
        if frac.any():
            raise InputError(f"{name}: value {_val(values, frac)} in {_rows(frac)} is not a "
                             "whole number; expected integer class indices 0..K-1")
        idx = values.astype(np.int64)
    bad = (idx < 0) | (idx >= n_classes)
    if bad.any():
        raise InputError(f"{name}: class index {_val(idx, bad)} in {_rows(bad)} is not among the "
                         f"{n_classes} classes; expected integers in [0, {n_classes - 1}]")
    return idx


def probability_matrix(P: Any, name: str = "P", *, atol: float = 1e-6) -> np.ndarray:
    """A ``(..., K)`` array of probability vectors (rows on the last axis summing to 1)."""
    P = as_float(P, name)
    if P.ndim < 1 or P.shape[-1] < 2:
        raise InputError(f"{name}: expected probabilities over at least 2 classes on the last axis, "
                         f"got shape {P.shape}")
    check_range(P, name, 0.0, 1.0, "probabilities in [0, 1]")
    sums = P.sum(axis=-1)
    off = np.abs(sums - 1.0) > atol
    if off.any():
        raise InputError(f"{name}: probabilities sum to {_val(sums, off)} in {_rows(off)}; "
                         f"expected each row to sum to 1 within {atol:g}")
    return P
