"""Input validation shared by every public function.

Validation happens once, at the public boundary, and each failure raises
:class:`~scorebench.core.errors.InputError` naming *what* (argument or column), *where* (the
first offending rows) and *what was expected*.

Conventions: arrays become float64 (integers are converted exactly; integers beyond
``2**53`` are refused rather than silently rounded); the checks on values (range,
positivity, binary outcomes, simplex rows) let ``NaN`` pass, so that callers decide
whether missing values propagate (:func:`check_finite` refuses them); a mask of any
shape names rows along axis 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from scorebench.core.errors import InputError

__all__ = [
    "show_value",
    "describe_rows",
    "as_float_array",
    "as_float_matrix",
    "broadcast_arrays",
    "check_finite",
    "check_in_range",
    "check_positive",
    "check_positive_int",
    "check_positive_number",
    "check_level",
    "check_probability",
    "check_binary",
    "as_class_index",
    "check_same_length",
    "check_simplex",
    "check_choice",
    "parse_bool",
]

_SHOW_ROWS = 5
_MAX_EXACT_INT = 2**53


_TRUE_WORDS = frozenset({"true", "1", "yes", "on"})
_FALSE_WORDS = frozenset({"false", "0", "no", "off"})


def parse_bool(value: Any, name: str) -> bool:
    """A boolean option, parsed strictly: the one parser of every on/off option.

    Accepted: ``True``/``False``, the integers 0 and 1, and the words ``true``/``false``,
    ``1``/``0``, ``yes``/``no``, ``on``/``off`` (any case, surrounding spaces ignored).
    Anything else raises: ``bool("no")`` is ``True`` in Python, so a string option such as
    ``trust_pickle="no"`` must never be tested for truth. Used by the Python API (reader and
    metric options), ``--from-option``, ``-O`` and leaderboard specs alike.

    Examples
    --------
    >>> parse_bool("no", "trust_pickle"), parse_bool(1, "x"), parse_bool(" TRUE ", "x")
    (False, True, True)
    >>> parse_bool("nope", "trust_pickle")
    Traceback (most recent call last):
    ...
    scorebench.core.errors.InputError: trust_pickle: expected true or false (true/false, 1/0, yes/no, on/off), got 'nope'
    """
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _TRUE_WORDS:
            return True
        if word in _FALSE_WORDS:
            return False
    raise InputError(f"{name}: expected true or false (true/false, 1/0, yes/no, on/off), got {show_value(value)}")


def show_value(value: Any) -> str:
    """``repr`` of a value as the user wrote it (``1.5``, not ``np.float64(1.5)``)."""
    if isinstance(value, np.generic):
        value = value.item()
    return repr(value)


def _first(arr: np.ndarray, mask: np.ndarray) -> str:
    """The first value of ``arr`` where ``mask`` holds, printed by :func:`show_value`."""
    return show_value(np.asarray(arr)[mask].ravel()[0])


def describe_rows(bad: np.ndarray, labels: Sequence[Any] | None = None) -> str:
    """Return ``"data rows 4, 8 (and 12 more)"`` for a boolean mask or an index array.

    Data rows are counted from 1, as a reader counts them: data row 1 is the first row under
    a file's header (its line 2) and element 0 of an array. A boolean mask of any shape
    names the positions along axis 0 where any entry is true (a 0-d mask is data row 1).
    ``labels`` maps positions to what the user sees: a DataFrame index of integers (the
    default ``RangeIndex``, or what is left of it after filtering) is a 0-based position in
    the table as read, so label ``i`` is data row ``i + 1``; other labels (system names, a
    text index) are quoted as they are (``row 'bert'``).

    Examples
    --------
    >>> describe_rows(np.array([[False, True], [False, False], [True, True]]))
    'data rows 1, 3'
    >>> describe_rows(np.array([True, False]), labels=["bert", "roberta"])
    "row 'bert'"
    """
    bad = np.asarray(bad)
    if bad.dtype == bool:
        bad = np.atleast_1d(bad)
        bad = np.flatnonzero(bad.reshape(len(bad), -1).any(axis=1) if bad.ndim > 1 else bad)
    bad = np.atleast_1d(bad)
    shown = list(bad[:_SHOW_ROWS])
    numbered = True
    if labels is not None:
        shown = [labels[i] for i in shown]
        numbered = all(isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))
                       for x in shown)
    if numbered:
        text = ", ".join(str(int(r) + 1) for r in shown)
    else:
        text = ", ".join(show_value(r) for r in shown)
    more = len(bad) - len(shown)
    noun = "row" if len(bad) == 1 else "rows"
    if numbered:
        noun = "data " + noun
    return f"{noun} {text}" + (f" (and {more} more)" if more > 0 else "")


def as_float_array(x: Any, name: str, *, ndim: int | tuple[int, ...] | None = None,
                   check_inf: bool = False) -> np.ndarray:
    """Convert ``x`` to a float64 array without silently truncating or dropping data.

    Integer and boolean inputs are converted exactly (integers beyond ``2**53``, which
    float64 cannot represent, raise); strings, objects that are not numbers and complex
    values raise. ``ndim`` restricts the number of dimensions; ``check_inf`` refuses
    ``+-inf`` naming the rows (NaN passes, see :func:`check_finite` to refuse it too).
    """
    try:
        arr = np.asarray(x)
    except (ValueError, TypeError) as exc:  # ragged nested lists
        raise InputError(f"{name}: could not be read as a numeric array ({exc})") from None
    kind = arr.dtype.kind
    if kind == "c":
        raise InputError(f"{name}: complex values are not supported; expected real numbers")
    if kind in "iu":
        if arr.size and np.abs(arr).max() > _MAX_EXACT_INT:
            raise InputError(f"{name}: integers larger than 2**53 cannot be represented exactly "
                             "as float64; expected numbers of moderate size")
    elif kind not in "bf":
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
    if check_inf:
        check_finite(arr, name, allow_nan=True)
    return arr


def as_float_matrix(x: Any, name: str, *, min_cols: int = 1, cols: str = "d",
                    unit: str = "columns") -> np.ndarray:
    """A finite float64 ``(n, cols)`` matrix with ``n >= 1`` rows and at least ``min_cols`` columns.

    ``cols`` and ``unit`` name the columns in the message (e.g. ``"K"``, ``"classes"``).

    Examples
    --------
    >>> as_float_matrix([[1, 2]], "features").tolist()
    [[1.0, 2.0]]
    """
    arr = as_float_array(x, name, ndim=2)
    check_finite(arr, name)
    if arr.shape[0] == 0 or arr.shape[1] < min_cols:
        raise InputError(f"{name}: expected a (n, {cols}) array with n >= 1 rows and {cols} >= {min_cols} {unit}, "
                         f"got shape {arr.shape}")
    return arr


def broadcast_arrays(**arrays: np.ndarray) -> list[np.ndarray]:
    """Broadcast the arrays together (:func:`numpy.broadcast_arrays`) or raise naming their shapes."""
    try:
        return list(np.broadcast_arrays(*arrays.values()))
    except ValueError:
        shapes = ", ".join(f"{k} has shape {np.shape(v)}" for k, v in arrays.items())
        raise InputError(f"mismatched lengths: {shapes}; expected shapes that match "
                         "(or broadcast) row for row") from None


def check_finite(arr: np.ndarray, name: str, *, labels: Sequence[Any] | None = None,
                 allow_nan: bool = False) -> None:
    """Raise if ``arr`` holds NaN (unless ``allow_nan``) or +-inf."""
    bad = np.isinf(arr) if allow_nan else ~np.isfinite(arr)
    if bad.any():
        kind = "NaN" if np.isnan(arr[bad]).any() else "infinite values"
        raise InputError(f"{name}: {kind} in {describe_rows(bad, labels)}; expected finite numbers")


def check_in_range(arr: np.ndarray, name: str, low: float, high: float, *,
                   labels: Sequence[Any] | None = None, what: str | None = None) -> None:
    """Raise if any value of ``arr`` lies outside ``[low, high]`` (NaN is ignored here)."""
    bad = (arr < low) | (arr > high)
    if bad.any():
        interval = f"[{low:g}, {high:g}]"
        raise InputError(f"{name}: value {_first(arr, bad)} outside {interval} in {describe_rows(bad, labels)}; "
                         f"expected {what or f'values in {interval}'}")


def check_positive(arr: np.ndarray, name: str, *, labels: Sequence[Any] | None = None,
                   strict: bool = True) -> None:
    """Raise if any value is <= 0 (``strict``) or < 0 (NaN is ignored here)."""
    bad = arr <= 0 if strict else arr < 0
    if bad.any():
        op = "> 0" if strict else ">= 0"
        raise InputError(f"{name}: expected values {op}, got {_first(arr, bad)} in {describe_rows(bad, labels)}")


def check_positive_int(value: Any, name: str, *, minimum: int = 1) -> int:
    """Return ``value`` as an ``int`` or raise unless it is an integer >= ``minimum`` (bools refused)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < minimum:
        expected = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
        raise InputError(f"{name}: expected {expected}, got {value!r}")
    return int(value)


def check_count(value: Any, name: str, *, itemsize: int = 8, minimum: int = 1) -> int:
    """:func:`check_positive_int` for a size that will be allocated (bins, bootstrap rounds).

    ``itemsize`` is the bytes held per unit of ``value``; a value whose arrays cannot fit in
    the available memory is refused up front (:func:`scorebench.core.resources.check_allocation`).
    """
    from scorebench.core.resources import check_allocation

    count = check_positive_int(value, name, minimum=minimum)
    check_allocation(count, itemsize, f"{name}={count}")
    return count


def _is_real(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def check_positive_number(value: Any, name: str) -> float:
    """Return ``value`` as a float or raise unless it is a finite real number > 0 (bools refused)."""
    if not _is_real(value) or not np.isfinite(value) or value <= 0:
        raise InputError(f"{name}: expected a positive number, got {value!r}")
    return float(value)


def check_level(value: Any, name: str) -> float:
    """Return ``value`` as a float or raise unless it lies strictly between 0 and 1 (a confidence
    or significance level)."""
    if not _is_real(value) or not 0.0 < value < 1.0:
        raise InputError(f"{name}: expected a level in (0, 1), got {value!r}")
    return float(value)


def check_probability(arr: np.ndarray, name: str, *, labels: Sequence[Any] | None = None) -> None:
    """Raise if values are not probabilities in [0, 1]."""
    check_in_range(arr, name, 0.0, 1.0, labels=labels, what="probabilities in [0, 1]")


def check_binary(y: np.ndarray, name: str = "y", *, labels: Sequence[Any] | None = None,
                 what: str = "binary outcomes 0 or 1") -> None:
    """Raise if ``y`` holds values other than 0 and 1 (NaN is ignored here)."""
    bad = (y != 0) & (y != 1) & ~np.isnan(y)
    if bad.any():
        raise InputError(f"{name}: value {_first(y, bad)} in {describe_rows(bad, labels)}; expected {what}")


def as_class_index(y: Any, n_classes: int, name: str = "y", *, of: str | None = None) -> np.ndarray:
    """Integer class indices in ``[0, n_classes)`` as int64; floats must be whole numbers.

    ``of`` names what holds the classes (e.g. ``"P"`` for the columns of a probability
    matrix) in the message for an index that is out of range. NaN is refused.

    Examples
    --------
    >>> as_class_index([0.0, 2.0], 3).tolist()
    [0, 2]
    """
    arr = np.asarray(y)
    if arr.dtype.kind in "iu":
        idx = arr.astype(np.int64)
    else:
        values = as_float_array(arr, name, check_inf=True)
        if np.isnan(values).any():
            raise InputError(f"{name}: NaN class labels in {describe_rows(np.isnan(values))}; "
                             "expected class indices")
        frac = values != np.round(values)
        if frac.any():
            raise InputError(f"{name}: value {_first(values, frac)} in {describe_rows(frac)} is not a whole "
                             f"number; expected an integer class index in 0..{n_classes - 1}")
        idx = values.astype(np.int64)
    bad = (idx < 0) | (idx >= n_classes)
    if bad.any():
        classes = f"the {n_classes} classes" + (f" of {of}" if of else "")
        raise InputError(f"{name}: class index {_first(idx, bad)} in {describe_rows(bad)} is not among "
                         f"{classes}; expected integers in the class range 0..{n_classes - 1}")
    return idx


def check_simplex(p: np.ndarray, name: str, *, atol: float = 1e-6, renormalize: bool = False,
                  labels: Sequence[Any] | None = None) -> np.ndarray:
    """Check that each row of ``p`` (last axis) is a probability vector.

    Returns ``p`` (renormalised to sum exactly 1 when ``renormalize`` is true; rows that
    sum to 0 are refused even then). Rows with NaN pass (and stay NaN).
    """
    check_probability(p, name, labels=labels)
    sums = p.sum(axis=-1)
    if renormalize:
        zero = sums <= 0
        if zero.any():
            raise InputError(f"{name}: probabilities sum to 0 in {describe_rows(zero, labels)}; "
                             "cannot renormalize")
        return p / sums[..., None]
    bad = np.abs(sums - 1.0) > atol
    if bad.any():
        raise InputError(
            f"{name}: probabilities sum to {_first(sums, bad)} in {describe_rows(bad, labels)}; "
            f"expected each row to sum to 1 within {atol:g} (rescale the rows, or allow a larger tolerance)"
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
