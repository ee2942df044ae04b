"""Shared helpers for the torch losses: padded-batch validation, gains, discounts, reductions.

Every listwise loss takes ``scores`` and ``labels`` of shape ``[batch, list_len]``.
Items whose label equals ``padding_value`` (default ``-1``) are padding and may sit
anywhere in a list: masks, never positions, decide what is padding.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from scorebench.core.errors import InputError
from scorebench.core.validation import check_choice, check_positive_number

__all__ = ["Batch", "check_batch", "gains", "discounts", "ideal_dcg", "reduce_per_list",
           "GAINS", "REDUCTIONS", "masked_fill_min"]

GAINS = ("exponential", "linear")
REDUCTIONS = ("mean", "sum", "none")


@dataclass(frozen=True)
class Batch:
    """A validated padded batch.

    Attributes
    ----------
    scores : Tensor
        Floating scores ``[batch, list_len]`` (padded entries untouched).
    labels : Tensor
        Labels ``[batch, list_len]`` in the scores' dtype, padded entries set to 0.
    valid : Tensor
        Boolean mask ``[batch, list_len]``, True for real items.
    """

    scores: torch.Tensor
    labels: torch.Tensor
    valid: torch.Tensor

    @property
    def n_valid(self) -> torch.Tensor:
        """Number of real items per list, ``[batch]`` (int64)."""
        return self.valid.sum(-1)


def check_batch(scores: torch.Tensor, labels: torch.Tensor, *, padding_value: float = -1,
                nonnegative: bool = True, name: str = "scores") -> Batch:
    """Validate a padded batch and return it with its mask.

    Raises :class:`~scorebench.core.errors.InputError` for non-tensors, wrong shapes, integer
    scores, NaN or infinite values, and (when ``nonnegative``) negative labels that are
    not the padding value.
    """
    if not isinstance(scores, torch.Tensor) or not isinstance(labels, torch.Tensor):
        raise InputError(f"{name} and labels must be torch tensors, got {type(scores).__name__} "
                         f"and {type(labels).__name__}")
    if scores.ndim != 2 or labels.shape != scores.shape:
        raise InputError(f"{name} and labels must both have shape [batch, list_len]; got "
                         f"{tuple(scores.shape)} and {tuple(labels.shape)}")
    if not scores.is_floating_point():
        raise InputError(f"{name} must be a floating tensor (got {scores.dtype}); "
                         "convert with .double() or .float()")
    if labels.device != scores.device:
        raise InputError(f"{name} is on {scores.device} but labels are on {labels.device}")
    if not torch.isfinite(scores.detach()).all():
        raise InputError(f"{name} hold NaN or infinite values; expected finite numbers")
    labels = labels.to(scores.dtype)
    if not torch.isfinite(labels).all():
        raise InputError("labels hold NaN or infinite values; mark padding with padding_value instead")
    valid = labels != padding_value
    if nonnegative and bool((valid & (labels < 0)).any()):
        bad = labels[valid & (labels < 0)][0].item()
        raise InputError(f"labels: negative relevance {bad!r} that is not the padding value "
                         f"{padding_value!r}; expected relevance labels >= 0")
    return Batch(scores=scores, labels=labels.masked_fill(~valid, 0.0), valid=valid)


def gains(labels: torch.Tensor, gain: str) -> torch.Tensor:
    """Gain of each label: ``2**rel - 1`` (``"exponential"``) or ``rel`` (``"linear"``)."""
    check_choice(gain, "gain", GAINS)
    return torch.exp2(labels) - 1.0 if gain == "exponential" else labels


def discounts(n: int, k: int | None, *, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """Position discounts ``1 / log2(i + 1)`` for ranks ``i = 1..n``, zero beyond rank ``k``."""
    if k is not None and (not isinstance(k, int) or isinstance(k, bool) or k < 1):
        raise InputError(f"k: expected a positive integer or None, got {k!r}")
    d = 1.0 / torch.log2(torch.arange(n, dtype=dtype, device=device) + 2.0)
    if k is not None and k < n:
        d[k:] = 0.0
    return d


def ideal_dcg(gain_values: torch.Tensor, disc: torch.Tensor) -> torch.Tensor:
    """DCG of the ideal ordering, ``[batch]``; padded items must carry gain 0."""
    return (gain_values.sort(dim=-1, descending=True).values * disc).sum(-1)


def masked_fill_min(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``x`` with entries where ``mask`` is False set to the dtype's most negative finite value.

    Unlike ``-inf`` this keeps softmax and log-sum-exp finite for rows that are all padding,
    so their (discarded) gradients stay finite too.
    """
    return x.masked_fill(~mask, torch.finfo(x.dtype).min)


def reduce_per_list(values: torch.Tensor, counted: torch.Tensor, reduction: str) -> torch.Tensor:
    """Reduce per-list losses: mean over ``counted`` lists, sum, or none.

    A mean over zero counted lists is 0 (still attached to the graph).
    """
    check_choice(reduction, "reduction", REDUCTIONS)
    if reduction == "none":
        return values
    total = (values * counted).sum()
    if reduction == "sum":
        return total
    return total / counted.sum().clamp_min(1)


def check_positive_float(value: float, name: str) -> float:
    """Return ``value`` as float after checking it is finite and > 0 (0-d tensors accepted)."""
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{name}: expected a positive number, got {value!r}") from None
    return check_positive_number(value, name)
