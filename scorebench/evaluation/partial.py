"""Mergeable partial results of the evaluation pipeline.

A partition of a table reduces, per (group, metric), to statistics that add: the sum and
count of a per-row metric's contributions with their Poisson-weighted sums per bootstrap
round (:class:`RowSums`), or a set-level metric's sufficient statistics and their
weighted versions (:class:`SetStats`). The in-memory engine, one partition holding every
unit, also keeps replicates that need a group's units together (:class:`Replicates`). A
:class:`Partial` holds them for every (group, metric) of a partition, plus optionally the unit
keys each group has seen (a kind's ``complete_units`` hook needs them to score the units a group lacks).
Partials add with
``+`` (associative and commutative), so any tree of merges gives the same sums, up to the
order of floating-point additions.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Union

import numpy as np

__all__ = ["RowSums", "SetStats", "Replicates", "Partial", "merge"]

Group = tuple  # the values of the ``by`` columns


@dataclass
class RowSums:
    """Sums of a per-row metric's contributions over some units of one group.

    ``total`` and ``n`` give the value (their ratio); ``sums[b]`` and ``totals[b]`` are the
    Poisson-weighted sum and total weight of bootstrap round ``b``.

    Examples
    --------
    >>> a = RowSums(1.0, 2, np.array([1.0]), np.array([2.0]))
    >>> (a + a).value()
    0.5
    """

    total: float
    n: int
    sums: np.ndarray
    totals: np.ndarray

    def __add__(self, other: RowSums) -> RowSums:
        return RowSums(self.total + other.total, self.n + other.n, self.sums + other.sums,
                       self.totals + other.totals)

    def value(self) -> float:
        """The mean contribution (NaN for no units)."""
        return self.total / self.n if self.n else np.nan

    def replicates(self) -> np.ndarray:
        """The bootstrap means (a round of total weight 0 is dropped)."""
        ok = self.totals > 0
        return self.sums[ok] / self.totals[ok]


@dataclass
class SetStats:
    """Sufficient statistics of a set-level mergeable metric over some units of one group.

    ``stats`` has shape ``(S,)``; ``boot`` has shape ``(n_boot, S)`` (0.0 before any
    weighted block was added; an empty array when there is no bootstrap).
    """

    stats: np.ndarray
    n: int
    boot: Any

    def __add__(self, other: SetStats) -> SetStats:
        return SetStats(self.stats + other.stats, self.n + other.n, self.boot + other.boot)


@dataclass
class Replicates:
    """A group's value with bootstrap replicates drawn in memory over all its units at once.

    The entry of the resampling schemes that need every unit of a group together (the
    multinomial, cluster, two-level and half-sample bootstraps, and set-level metrics
    recomputed on each resample), so it does not merge. ``replicates`` is ``None`` when no
    resampling was drawn (no rounds, or an interval that needs none); ``method`` names how
    they were drawn; ``rule`` overrides the metric's interval rule (the cluster bootstrap is
    read by percentiles); ``successes`` is the sum of 0/1 outcomes of a proportion.

    Examples
    --------
    >>> Replicates(0.5, 4, np.array([0.25, 0.75]), "multinomial").n
    4
    """

    value: float
    n: int
    replicates: np.ndarray | None
    method: str
    rule: str | None = None
    successes: float = float("nan")

    def __add__(self, other: Replicates) -> Replicates:
        raise TypeError("in-memory bootstrap replicates do not merge; reduce the group's units together")


Entry = Union[RowSums, SetStats, Replicates]


@dataclass
class Partial:
    """The mergeable result of one partition: an entry per (group, metric name).

    ``units`` maps each group to the set of unit keys it has seen, when collected (else
    ``None``).

    Examples
    --------
    >>> e = RowSums(2.0, 2, np.zeros(0), np.zeros(0))
    >>> p = Partial({(("a",), "m"): e}) + Partial({(("a",), "m"): e})
    >>> p.entries[(("a",), "m")].value()
    1.0
    """

    entries: dict[tuple[Group, str], Entry] = field(default_factory=dict)
    units: dict[Group, set] | None = None

    def __add__(self, other: Partial) -> Partial:
        entries = dict(self.entries)
        for key, entry in other.entries.items():
            entries[key] = entries[key] + entry if key in entries else entry
        return Partial(entries, _union(self.units, other.units))

    def __bool__(self) -> bool:
        return bool(self.entries)


def _union(a: dict[Group, set] | None, b: dict[Group, set] | None) -> dict[Group, set] | None:
    if a is None or b is None:
        return b if a is None else a
    out = {g: set(units) for g, units in a.items()}
    for g, units in b.items():
        out.setdefault(g, set()).update(units)
    return out


def merge(parts: Iterable[Partial]) -> Partial:
    """The sum of several partials (an empty :class:`Partial` for none)."""
    total = Partial()
    for part in parts:
        total = total + part
    return total
