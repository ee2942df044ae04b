"""Input validation shared by every public function.

Validation happens once, at the public boundary, and each failure raises
:class:`~scorebench.errors.InputError` naming *what* (argument or column), *where* (the
first offending rows) and *what was expected*.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .errors import InputError

__all__ = [
    "show_value",
    "describe_rows",
    "as_float_array",
    "check_finite",
    "check_in_range",
    "check_positive",
    "check_probability",
    "check_same_length",
    "check_simplex",
    "check_choice",
]

_SHOW_ROWS = 5


def show_value(value: Any) -> str:
    """``repr`` of a value as the user wrote it (``1.5``, not ``np.float64(1.5)``)."""
    if isinstance(value, np.generic):
        value = value.item()
    return repr(value)


def describe_rows(bad: np.ndarray, labels: Sequence[Any] | None = None) -> str:
    """Return ``"rows 3, 7 (and 12 more)"`` for a boolean mask or an index array.

    ``labels`` maps positions to what the user sees (e.g. a DataFrame index).
    """
    bad = np.asarray(bad)
    if bad.dtype == bool:
        bad = np.flatnonzero(bad.reshape(len(bad), -1).any(axis=1) if bad.ndim > 1 else bad)
    shown = bad[:_SHOW_ROWS]
    if labels is not None:
        shown = [labels[i] for i in shown]
    text = ", ".join(str(r) for r in shown)
    more = len(bad) - len(shown)
    noun = "row" if len(bad) == 1 else "rows"
    return f"{noun} {text}" + (f" (and {more} more)" if more > 0 else "")


def as_float_array(x: Any, name: str, *, ndim: int | tuple[int, ...] | None = None) -> np.ndarray:
    """Convert ``x`` to a float64 array without silently truncating or dropping data.

    Integer and boolean inputs are converted exactly; strings, objects that are not
    numbers and complex values raise.
    """
    try:
        arr = np.asarray(x)
    except (ValueError, TypeError) as exc:  # ragged nested lists
        raise InputError(f"{name}: could not be read as a numeric array ({exc})") from None
    if arr.dtype.kind == "c":
        raise InputError(f"{name}: complex values are not supported; expected real numbers")
    if arr.dtype.kind not in "biuf":
        try:
            arr = arr.astype(np.float64)
        except (ValueError, TypeError):
            raise InputError(
                f"{name}: expected numbers, got values of type {arr.dtype} "
                f"(e.g. {np.ravel(arr)[:1].tolist()!r})"
            ) from None
    arr = arr.astype(np.float64, copy=False)
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else ndim
        if arr.ndim not in allowed:
            raise InputError(
                f"{name}: expected an array with {' or '.join(map(str, allowed))} dimension(s), "
                f"got shape {arr.shape}"
            )
    return arr


def check_finite(arr: np.ndarray, name: str, *, labels: Sequence[Any] | None = None,
                 allow_nan: bool = False) -> None:
    """Raise if ``arr`` holds NaN (unless ``allow_nan``) or +-inf."""
    bad = ~np.isfinite(arr)
    if allow_nan:
        bad &= ~np.isnan(arr)
    if bad.any():
        flat = bad.reshape(bad.shape[0], -1).any(axis=1) if bad.ndim > 1 else bad
        kind = "NaN" if np.isnan(arr[bad]).any() else "infinite values"
        raise InputError(f"{name}: {kind} in {describe_rows(flat, labels)}; expected finite numbers")


def check_in_range(arr: np.ndarray, name: str, low: float, high: float, *,
                   labels: Sequence[Any] | None = None, what: str | None = None) -> None:
    """Raise if any value of ``arr`` lies outside ``[low, high]`` (NaN is ignored here)."""
    bad = (arr < low) | (arr > high)
    if bad.any():
        flat = bad.reshape(bad.shape[0], -1).any(axis=1) if bad.ndim > 1 else bad
        example = arr[bad].ravel()[0]
        raise InputError(
            f"{name}: value {show_value(example)} outside [{low}, {high}] in {describe_rows(flat, labels)}; "
            f"expected {what or f'values in [{low}, {high}]'}"
        )


def check_positive(arr: np.ndarray, name: str, *, labels: Sequence[Any] | None = None,
                   strict: bool = True) -> None:
    """Raise if any value is <= 0 (``strict``) or < 0."""
    bad = arr <= 0 if strict else arr < 0
    if bad.any():
        flat = bad.reshape(bad.shape[0], -1).any(axis=1) if bad.ndim > 1 else bad
        op = "> 0" if strict else ">= 0"
        raise InputError(f"{name}: expected values {op}, got {show_value(arr[bad].ravel()[0])} in "
                         f"{describe_rows(flat, labels)}")


def check_probability(arr: np.ndarray, name: str, *, labels: Sequence[Any] | None = None) -> None:
    """Raise if values are not probabilities in [0, 1]."""
    check_in_range(arr, name, 0.0, 1.0, labels=labels, what="probabilities in [0, 1]")


def check_simplex(p: np.ndarray, name: str, *, atol: float = 1e-6, renormalize: bool = False,
                  labels: Sequence[Any] | None = None) -> np.ndarray:
    """Check that each row of ``p`` (last axis) is a probability vector.

    Returns ``p`` (renormalised to sum exactly 1 when ``renormalize`` is true; rows that
    sum to 0 are refused even then).
    """
    check_probability(p, name, labels=labels)
    sums = p.sum(axis=-1)
    if renormalize:
        zero = sums <= 0
        if zero.any():
            raise InputError(f"{name}: probabilities sum to 0 in {describe_rows(zero.ravel(), labels)}; "
                             "cannot renormalize")
        return p / sums[..., None]
    bad = np.abs(sums - 1.0) > atol
    if bad.any():
        raise InputError(
            f"{name}: probabilities sum to {show_value(sums[bad].ravel()[0])} in "
            f"{describe_rows(bad.ravel(), labels)}; expected each row to sum to 1 within "
            f"{atol:g} (pass renormalize=True to rescale, or a larger tolerance)"
        )
    return p


def check_same_length(**arrays: np.ndarray) -> int:
    """Raise unless every array has the same length along axis 0; return that length."""
    lengths = {name: (np.shape(a)[0] if np.ndim(a) else 1) for name, a in arrays.items()}
    if len(set(lengths.values())) > 1:
        described = ", ".join(f"{k} has {v}" for k, v in lengths.items())
        raise InputError(f"mismatched lengths: {described}; expected the same number of rows")
    return next(iter(lengths.values()))


def check_choice(value: Any, name: str, choices: Sequence[Any]) -> Any:
    """Raise unless ``value`` is one of ``choices``."""
    if value not in choices:
        raise InputError(f"{name}: expected one of {', '.join(map(repr, choices))}, got {value!r}")
    return value
