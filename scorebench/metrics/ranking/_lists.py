"""The shared engine of the ranking metrics: ranked relevance lists in compact (CSR) form.

Every ranking metric reads the same structure, :class:`RankedLists`:

* ``rel`` -- one flat float64 array holding, for every retrieved document, its relevance
  in ranked order, the lists of all queries one after another; ``NaN`` marks a document
  that the qrels do not judge (trec_eval's "not in pool"); a negative value is a judgment
  that trec_eval reads as "in the pool but unjudged".
* ``start`` / ``n_ret`` -- per query, where its list starts in ``rel`` and how long it is.
* ``judged`` / ``judged_start`` / ``judged_count`` -- per query, the relevance values of
  all its judged documents (relevance >= 0), sorted in decreasing order: what the ideal
  ranking of NDCG is built from.
* ``num_rel`` / ``num_nonrel`` -- per query, the judged documents with relevance >=
  ``relevance_level`` and those with ``0 <= relevance < relevance_level``.

Both flat arrays are cut into per-query segments the same way, described by one
:class:`Segments` each (``segments`` for ``rel``, ``judged_segments`` for ``judged``):
where each query starts, the query of each element and its 0-based position in the query,
read by the metrics as ``offsets`` / ``seg`` / ``pos`` and ``judged_offsets`` /
``judged_seg`` / ``judged_pos``, each computed once per instance.

A table kind stores the flat arrays as constants and the per-query arrays as per-unit
arrays, so selecting or resampling queries (``Inputs.take``) keeps the structure valid.
Each metric derives its per-query values from :meth:`RankedLists.from_arrays` with a few
vectorised segment operations (cumulative counts, discounts, bincount sums), never a
Python loop over queries.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

import numpy as np

from scorebench.core.errors import InputError
from scorebench.core.validation import as_float_array

__all__ = ["RankedLists", "Segments", "segment_sum", "ARRAY_NAMES", "CONST_NAMES"]

#: Per-query (per-unit) arrays of the ``ranking`` kind.
ARRAY_NAMES = ("start", "n_ret", "num_rel", "num_nonrel", "judged_start", "judged_count")
#: Flat arrays and scalars shared by all queries.
CONST_NAMES = ("rel", "judged", "relevance_level", "max_relevance")


def segment_sum(values: np.ndarray, seg: np.ndarray, n: int) -> np.ndarray:
    """Sum ``values`` per segment id ``seg`` (0 <= seg < n) as float64."""
    if values.dtype == bool:
        return np.bincount(seg, minlength=n).astype(np.float64) if values.all() else \
            np.bincount(seg[values], minlength=n).astype(np.float64)
    return np.bincount(seg, weights=values, minlength=n)


def segment_offsets(counts: np.ndarray) -> np.ndarray:
    """Start of each segment in a flat array holding segments of lengths ``counts`` (int64).

    >>> segment_offsets(np.array([2, 0, 3])).tolist()
    [0, 2, 2]
    """
    out = np.zeros(len(counts), dtype=np.int64)
    np.cumsum(counts[:-1], out=out[1:])
    return out


def segment_ids(counts: np.ndarray) -> np.ndarray:
    """Segment index of each element of a flat array of segments of lengths ``counts``.

    >>> segment_ids(np.array([2, 0, 3])).tolist()
    [0, 0, 2, 2, 2]
    """
    return np.repeat(np.arange(len(counts), dtype=np.int64), counts)


def segment_positions(offsets: np.ndarray, counts: np.ndarray, size: int | None = None) -> np.ndarray:
    """0-based position of each element within its segment, given the segments' ``offsets``
    (:func:`segment_offsets`) and ``counts``; ``size`` is the flat array's length
    (``counts.sum()`` by default).

    >>> segment_positions(np.array([0, 2, 2]), np.array([2, 0, 3])).tolist()
    [0, 1, 0, 1, 2]
    """
    size = int(counts.sum()) if size is None else size
    return np.arange(size, dtype=np.int64) - np.repeat(offsets, counts)


def gather_segments(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Flat indices ``starts[i] + arange(counts[i])`` for every i, concatenated."""
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    return np.arange(total, dtype=np.int64) + np.repeat(starts - segment_offsets(counts), counts)


class Segments:
    """A flat array cut into consecutive segments of lengths ``counts`` (a query's ranked
    list, its judgments, its ideal ranking), with the three arrays that locate each element,
    each computed once, on first use: ``offsets`` (:func:`segment_offsets`), ``ids``
    (:func:`segment_ids`) and ``positions`` (:func:`segment_positions`).

    Parameters
    ----------
    counts : ndarray of int64
        Length of each segment.
    size : int
        Length of the flat array, ``counts.sum()``.

    Examples
    --------
    >>> cut = Segments(np.array([2, 0, 3]), 5)
    >>> cut.offsets.tolist(), cut.ids.tolist(), cut.positions.tolist()
    ([0, 2, 2], [0, 0, 2, 2, 2], [0, 1, 0, 1, 2])
    """

    def __init__(self, counts: np.ndarray, size: int) -> None:
        self.counts = counts
        self.size = size

    @cached_property
    def offsets(self) -> np.ndarray:
        """Start of each segment in the flat array."""
        return segment_offsets(self.counts)

    @cached_property
    def ids(self) -> np.ndarray:
        """Segment index of each element."""
        return segment_ids(self.counts)

    @cached_property
    def positions(self) -> np.ndarray:
        """0-based position of each element within its segment."""
        return segment_positions(self.offsets, self.counts, self.size)


def _segment_array(segments: str, array: str, doc: str) -> cached_property:
    """A cached :class:`RankedLists` attribute: array ``array`` of its :class:`Segments`
    attribute ``segments``."""

    def read(self: Any) -> np.ndarray:
        return getattr(getattr(self, segments), array)

    read.__doc__ = doc
    return cached_property(read)


@dataclass(frozen=True)
class RankedLists:
    """Ranked relevance lists of ``n`` queries, compacted so that query i's list is
    ``rel[offsets[i]:offsets[i] + n_ret[i]]`` (see the module docstring)."""

    rel: np.ndarray
    n_ret: np.ndarray
    num_rel: np.ndarray
    num_nonrel: np.ndarray
    judged: np.ndarray
    judged_count: np.ndarray
    relevance_level: float
    max_relevance: float

    # --- construction -------------------------------------------------------------------

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, Any]) -> RankedLists:
        """Build from the mapping a ``ranking`` table kind provides (possibly a subset of
        its queries, in any order, with repeats).

        The metrics of one evaluation all receive the same arrays: the lists built from
        them (and the per-position arrays derived on demand) are kept while those arrays
        live, so every metric after the first reuses them (see :class:`_SharedLists`).
        """
        missing = [k for k in (*ARRAY_NAMES, *CONST_NAMES) if k not in arrays]
        if missing:
            raise InputError(f"ranking metrics need the arrays of the 'ranking' table kind; missing {missing}")
        shared = _SHARED.get(arrays)
        if shared is not None:
            return shared
        start = np.asarray(arrays["start"], dtype=np.int64)
        n_ret = np.asarray(arrays["n_ret"], dtype=np.int64)
        jstart = np.asarray(arrays["judged_start"], dtype=np.int64)
        jcount = np.asarray(arrays["judged_count"], dtype=np.int64)
        rel = np.asarray(arrays["rel"], dtype=np.float64)
        judged = np.asarray(arrays["judged"], dtype=np.float64)
        lists = cls(rel=_compact(rel, start, n_ret), n_ret=n_ret,
                    num_rel=np.asarray(arrays["num_rel"], dtype=np.float64),
                    num_nonrel=np.asarray(arrays["num_nonrel"], dtype=np.float64),
                    judged=_compact(judged, jstart, jcount), judged_count=jcount,
                    relevance_level=float(arrays["relevance_level"]),
                    max_relevance=float(arrays["max_relevance"]))
        _SHARED.put(arrays, lists)
        return lists

    @classmethod
    def from_sequences(cls, ranked: Any, judged: Any, *, relevance_level: float = 1) -> RankedLists:
        """Build from per-query sequences, the form the public array functions take.

        Parameters
        ----------
        ranked : sequence of 1-D array-likes (or a 2-D array)
            Per query, the relevance of each retrieved document in ranked order (best
            first); ``NaN`` for a document the judgments do not cover.
        judged : sequence of 1-D array-likes (or a 2-D array)
            Per query, the relevance of every judged document (retrieved or not): the
            qrels. ``NaN`` entries are ignored (use them to pad a 2-D array).
        relevance_level : float
            Relevance at or above which a document counts as relevant (trec_eval ``-l``).
        """
        ranked_rows = _rows(ranked, "ranked")
        judged_rows = _rows(judged, "judged")
        if len(ranked_rows) != len(judged_rows):
            raise InputError(f"ranked has {len(ranked_rows)} queries but judged has {len(judged_rows)}; "
                             "expected one judged list per ranked list")
        level = check_level(relevance_level)
        n_ret = np.array([len(r) for r in ranked_rows], dtype=np.int64)
        rel = np.concatenate(ranked_rows) if ranked_rows else np.zeros(0)
        judged_sorted, counts, num_rel, num_nonrel = [], [], [], []
        for row in judged_rows:
            row = row[~np.isnan(row)]
            num_rel.append(np.count_nonzero(row >= level))
            num_nonrel.append(np.count_nonzero((row >= 0) & (row < level)))
            row = -np.sort(-row[row >= 0])
            judged_sorted.append(row)
            counts.append(len(row))
        judged_flat = np.concatenate(judged_sorted) if judged_sorted else np.zeros(0)
        max_rel = float(judged_flat.max()) if judged_flat.size else 0.0
        return cls(rel=rel, n_ret=n_ret, num_rel=np.array(num_rel, dtype=np.float64),
                   num_nonrel=np.array(num_nonrel, dtype=np.float64), judged=judged_flat,
                   judged_count=np.array(counts, dtype=np.int64), relevance_level=level,
                   max_relevance=max_rel)

    # --- derived arrays (computed once per instance, on demand) --------------------------

    @property
    def n(self) -> int:
        """Number of queries."""
        return len(self.n_ret)

    @cached_property
    def segments(self) -> Segments:
        """``rel`` cut into the queries' ranked lists."""
        return Segments(self.n_ret, len(self.rel))

    @cached_property
    def judged_segments(self) -> Segments:
        """``judged`` cut into the queries' judgments (each in decreasing relevance)."""
        return Segments(self.judged_count, len(self.judged))

    # the arrays of the two segmentations that the metrics read, kept on the instance
    offsets = _segment_array("segments", "offsets", "Start of each query's list in ``rel``.")
    seg = _segment_array("segments", "ids", "Query index of each element of ``rel``.")
    pos = _segment_array("segments", "positions", "0-based rank of each element of ``rel`` within its query.")
    judged_offsets = _segment_array("judged_segments", "offsets", "Start of each query's judgments in ``judged``.")
    judged_seg = _segment_array("judged_segments", "ids", "Query index of each element of ``judged``.")
    judged_pos = _segment_array("judged_segments", "positions",
                                "0-based position of each judgment within its query (decreasing relevance).")

    @cached_property
    def is_rel(self) -> np.ndarray:
        """Whether each retrieved document is relevant (relevance >= relevance_level)."""
        return self.rel >= self.relevance_level  # NaN compares False

    @cached_property
    def rel_cum(self) -> np.ndarray:
        """Number of relevant documents at or above each rank, within its query."""
        return segment_cumsum(self.is_rel, self.offsets, self.n_ret)

    # the relevant retrieved documents alone ("hits"), for the metrics that only read them:
    # arrays of the hits' length, not of the lists'

    @cached_property
    def hits(self) -> np.ndarray:
        """Positions in ``rel`` of the relevant documents."""
        return np.flatnonzero(self.is_rel)

    @cached_property
    def hit_count(self) -> np.ndarray:
        """Relevant documents retrieved per query (int64)."""
        return np.diff(np.searchsorted(self.hits, np.append(self.offsets, len(self.rel))))

    @cached_property
    def hit_first(self) -> np.ndarray:
        """Index in ``hits`` of each query's first hit (its count of earlier hits)."""
        return np.searchsorted(self.hits, self.offsets)

    @cached_property
    def hit_seg(self) -> np.ndarray:
        """Query index of each hit."""
        return np.repeat(np.arange(self.n, dtype=np.int64), self.hit_count)

    @cached_property
    def hit_pos(self) -> np.ndarray:
        """0-based rank of each hit within its query."""
        return self.hits - self.offsets[self.hit_seg]

    @cached_property
    def hit_rank(self) -> np.ndarray:
        """1-based count of the relevant documents at or above each hit (``rel_cum`` there)."""
        out = np.arange(1, len(self.hits) + 1, dtype=np.int64)
        out -= np.repeat(self.hit_first, self.hit_count)
        return out

    @cached_property
    def _heads(self) -> dict[int, RankedLists]:
        return {}

    def head(self, k: int | None) -> RankedLists:
        """The lists cut to their top ``k`` documents (``self`` when k is None or no list is
        longer), built once per k: an @k metric then visits k elements per query, not the
        whole list. The judged side is unchanged."""
        if k is None or self.n == 0 or int(self.n_ret.max()) <= k:
            return self
        heads = self._heads
        if k not in heads:
            n_ret = np.minimum(self.n_ret, k)
            heads[k] = replace(self, rel=self.rel[gather_segments(self.offsets, n_ret)], n_ret=n_ret)
        return heads[k]

    def count_rel(self, k: int | None = None) -> np.ndarray:
        """Relevant documents retrieved in the top ``k`` (all retrieved when None)."""
        return self.head(k).hit_count.astype(np.float64)


class _SharedLists:
    """The lists built from the arrays of the last few ``from_arrays`` calls.

    An entry is found again only while each source array is the very object it was built
    from (weak references, so an entry never keeps the caller's arrays alive) and the
    scalars are equal; it is dropped when the caller's ``start`` array is freed, and the
    oldest entries go past ``size``. Arrays are treated as read-only, as the kinds make them.
    Each dictionary operation is atomic, so concurrent callers at worst rebuild a list.
    """

    _SCALARS = ("relevance_level", "max_relevance")

    def __init__(self, size: int = 4) -> None:
        self.size = size
        self._entries: dict[int, tuple[tuple[weakref.ref, ...], tuple[Any, ...], RankedLists]] = {}

    @staticmethod
    def _sources(arrays: Mapping[str, Any]) -> list[Any] | None:
        sources = [arrays[k] for k in (*ARRAY_NAMES, "rel", "judged")]
        return sources if all(isinstance(a, np.ndarray) for a in sources) else None

    def get(self, arrays: Mapping[str, Any]) -> RankedLists | None:
        """The lists built from these very arrays, if still held."""
        sources = self._sources(arrays)
        entry = None if sources is None else self._entries.get(id(sources[0]))
        if entry is None:
            return None
        refs, scalars, lists = entry
        same = all(ref() is a for ref, a in zip(refs, sources)) and \
            scalars == tuple(arrays[k] for k in self._SCALARS)
        return lists if same else None

    def put(self, arrays: Mapping[str, Any], lists: RankedLists) -> None:
        """Keep ``lists`` for later calls with the same arrays."""
        sources = self._sources(arrays)
        if sources is None:
            return
        key = id(sources[0])
        entries = self._entries

        def drop(ref: weakref.ref) -> None:  # the start array was freed
            entry = entries.get(key)
            if entry is not None and entry[0][0] is ref:
                entries.pop(key, None)

        refs = (weakref.ref(sources[0], drop), *(weakref.ref(a) for a in sources[1:]))
        entries.pop(key, None)
        entries[key] = (refs, tuple(arrays[k] for k in self._SCALARS), lists)
        for old in list(entries)[:-self.size]:
            entries.pop(old, None)


_SHARED = _SharedLists()


def segment_cumsum(values: np.ndarray, offsets: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Cumulative sum restarting at each segment (int64 for bool input, exact)."""
    total = np.cumsum(values, dtype=np.int64 if values.dtype == bool else np.float64)
    if total.size == 0:
        return total
    before = np.zeros(len(counts), dtype=total.dtype)
    nonempty = counts > 0
    first = offsets[nonempty]
    before[nonempty] = total[first] - values[first]
    return total - np.repeat(before, counts)


def _compact(flat: np.ndarray, start: np.ndarray, count: np.ndarray) -> np.ndarray:
    """``flat`` restricted to the listed segments, laid out back to back (no copy when the
    segments already are)."""
    if len(start) == 0:
        return flat[:0]
    if start[0] == 0 and np.array_equal(start, segment_offsets(count)) and int(count.sum()) == len(flat):
        return flat
    return flat[gather_segments(start, count)]


def _rows(values: Any, name: str) -> list[np.ndarray]:
    if isinstance(values, np.ndarray) and values.ndim == 2:
        rows = list(as_float_array(values, name, ndim=2))
    elif isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray)):
        raise InputError(f"{name}: expected a sequence of per-query 1-D arrays (or a 2-D array), "
                         f"got {type(values).__name__}")
    else:
        rows = [as_float_array(v, f"{name}[{i}]", ndim=1) for i, v in enumerate(values)]
    for i, row in enumerate(rows):
        if np.isinf(row).any():
            raise InputError(f"{name}[{i}]: infinite relevance values; expected finite numbers (NaN = unjudged)")
    return rows


def check_level(level: Any) -> float:
    """The relevance threshold ``relevance_level`` as a finite positive float (one error otherwise)."""
    try:
        value = float(level)
    except (TypeError, ValueError):
        raise InputError(f"relevance_level: expected a number, got {level!r}") from None
    if not np.isfinite(value) or value <= 0:
        raise InputError(f"relevance_level: expected a positive number (trec_eval -l), got {level!r}")
    return value
