"""Ensemble member weights and NaN members, shared by the ensemble CRPS, energy and variogram scores.

A weighted ensemble :math:`\\{(x_i, w_i)\\}` stands for the distribution
:math:`\\sum_i w_i \\delta_{x_i}` with :math:`\\sum_i w_i = 1` (weights are normalised per
row, as scoringrules' ``ens_w``). Omitting NaN members (``nan_policy="omit"``) is the
same as giving them weight zero and renormalising, so both options share one code path:
a NaN member is replaced by a finite placeholder and weighted 0.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from scorebench.core.errors import InputError
from scorebench.core.validation import as_float_array, check_choice, describe_rows

__all__ = ["member_weights", "omit_nan_members", "fair_denominator", "NAN_POLICIES"]

NAN_POLICIES = ("propagate", "omit")


def member_weights(ens_w: Any, n: int, m: int, batch: tuple[int, ...], name: str = "ens_w") -> np.ndarray:
    """Validate member weights broadcastable to ``batch + (M,)``; return them ``(N, M)``, rows summing to 1.

    Weights must be finite and non-negative with a positive sum in every row.
    """
    w = as_float_array(ens_w, name, check_inf=True)
    if w.ndim == 0 or w.shape[-1] != m:
        raise InputError(f"{name}: expected one weight per ensemble member (last axis of length {m}), "
                         f"got shape {w.shape}")
    try:
        w = np.broadcast_to(w, (*batch, m)).reshape(n, m)
    except ValueError:
        raise InputError(f"{name}: shape {w.shape} does not broadcast to the ensemble's shape "
                         f"{(*batch, m)}") from None
    bad = np.isnan(w).any(axis=1) | (w < 0).any(axis=1)
    if bad.any():
        raise InputError(f"{name}: NaN or negative weights in {describe_rows(bad)}; expected weights >= 0")
    total = w.sum(axis=1)
    zero = total <= 0
    if zero.any():
        raise InputError(f"{name}: all member weights are zero in {describe_rows(zero)}; "
                         "expected a positive total weight per row")
    return w / total[:, None]


def omit_nan_members(ens: np.ndarray, w: np.ndarray | None, nan_policy: str,
                     *, multivariate: bool = False, empty: str = "raise") -> tuple[np.ndarray, np.ndarray | None]:
    """Apply ``nan_policy`` to the members of ``ens`` (``(N, M)`` or ``(N, M, d)``).

    ``"propagate"`` returns the inputs unchanged. ``"omit"`` gives NaN members (for a
    multivariate member: any NaN component) weight zero, renormalises the weights and
    replaces those members by a finite placeholder (the row's first kept member, so no
    extra distance enters the pair terms). A row with no kept member raises, or with
    ``empty="nan"`` gets NaN weights (so it scores NaN, as the unweighted CRPS does).
    """
    check_choice(nan_policy, "nan_policy", NAN_POLICIES)
    if nan_policy == "propagate":
        return ens, w
    nan = np.isnan(ens).any(axis=-1) if multivariate else np.isnan(ens)
    if not nan.any():
        return ens, w
    n, m = nan.shape
    keep = (~nan).astype(np.float64)
    if w is not None:
        keep *= w
    total = keep.sum(axis=1)
    none = total <= 0
    if none.any() and empty == "nan":
        total = np.where(none, np.nan, total)
    elif none.any():
        raise InputError(f"ens: every ensemble member is NaN (or has zero weight) in {describe_rows(none)}; "
                         "nan_policy='omit' leaves no member to score those rows")
    first = np.argmax(~nan, axis=1)
    filler = ens[np.arange(n), first]
    filled = np.where(nan[..., None], filler[:, None], ens) if multivariate else np.where(nan, filler[:, None], ens)
    return filled, keep / total[:, None]


def fair_denominator(w: np.ndarray | None, m: int) -> np.ndarray | float:
    r""":math:`1 - \sum_i w_i^2`, the normaliser of the fair pair term (``(M-1)/M`` unweighted).

    Rows whose weight sits on a single member have no fair estimate and raise.
    """
    if w is None:
        if m < 2:
            raise InputError("ens: the fair estimator needs at least 2 members")
        return (m - 1.0) / m
    c = 1.0 - np.einsum("nm,nm->n", w, w)
    single = c <= 1e-12
    if single.any():
        raise InputError(f"ens: the fair estimator needs at least 2 members with positive weight; "
                         f"{describe_rows(single)} have one")
    return c
