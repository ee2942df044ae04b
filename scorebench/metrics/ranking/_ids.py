"""Document ids as 64-bit keys without a global hash table.

Joining a run (millions of (qid, docid) rows) with its qrels is the costly part of a
ranking evaluation: a hash-table factorisation of ten million distinct document strings is
dominated by cache misses. Here each id string is hashed straight from its Arrow buffers
(two independent multiplicative hashes over the bytes, vectorised over all strings
one byte position at a time); matching then needs only integer sorts and binary searches.
A match needs the same query, the same 64-bit hash and the same 32-bit second hash (for two
different ids of one query to pass, both must collide), and
every duplicate candidate is compared string by string; :class:`HashCollision` sends the
caller to an exact (factorising) path when a first-hash collision shows up.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from scorebench.core.tables import label_text

__all__ = ["HashCollision", "id_array", "hash_strings", "mix", "same_strings"]

_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)
_ALT_OFFSET = np.uint64(0x84222325CBF29CE4)
_ALT_PRIME = np.uint64(0x9E3779B97F4A7C15)


class HashCollision(Exception):
    """Two different ids share a 64-bit key (use the exact path)."""


def id_array(values: pd.Series) -> pa.Array:
    """The ids of a column as an Arrow string array (integers print as integers)."""
    series = label_text(values)
    try:
        out = pa.array(series, type=pa.large_string(), from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        out = pa.array([_as_text(v) for v in series.to_numpy(object)], type=pa.large_string())
    if isinstance(out, pa.ChunkedArray):
        out = out.combine_chunks()
    return out


def _as_text(value: object) -> str | None:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value)


def hash_strings(arr: pa.Array, *, chunk: int = 1 << 15) -> tuple[np.ndarray, np.ndarray]:
    """Two independent hashes of each string of an Arrow (large_)string array: a 64-bit
    FNV-1a and a 32-bit multiplicative hash, vectorised over the strings in chunks small
    enough that a chunk's temporaries stay in the CPU cache."""
    n = len(arr)
    h = np.empty(n, dtype=np.uint64)
    g = np.empty(n, dtype=np.uint32)
    if n == 0:
        return h, g
    buffers = arr.buffers()
    off_type = np.int64 if pa.types.is_large_string(arr.type) else np.int32
    offsets = np.frombuffer(buffers[1], dtype=off_type)[arr.offset:arr.offset + n + 1]
    data = np.frombuffer(buffers[2], dtype=np.uint8) if buffers[2] is not None else np.zeros(0, np.uint8)
    data = data[:int(offsets[-1])]
    if data.size < 8:  # too short for one 8-byte read: pad a copy
        data = np.concatenate([data, np.zeros(8 - data.size, np.uint8)])
    # every 8-byte window of the data, read unaligned: word k of a string is one gather
    windows = np.ndarray(shape=(data.size - 7,), dtype="<u8", buffer=data, strides=(1,))
    for lo in range(0, n, chunk):
        hi = min(lo + chunk, n)
        chunk_offsets = offsets[lo:hi + 1].astype(np.int64)
        h[lo:hi], g[lo:hi] = _hash_words(windows, chunk_offsets[:-1], np.diff(chunk_offsets))
    return h, g


#: MASKS[r] keeps the low r bytes of a little-endian word.
_MASKS = np.array([(1 << (8 * r)) - 1 for r in range(9)], dtype=np.uint64)


def _word(windows: np.ndarray, starts: np.ndarray, lengths: np.ndarray, k: int) -> np.ndarray:
    """Bytes ``8k .. 8k+7`` of each string as a little-endian uint64, zero-padded past the
    string's end (an 8-byte read that would run past the data is shifted back). Only the
    last strings can run past it: Arrow offsets never decrease."""
    last = windows.size - 1
    pos = starts + 8 * k
    over = int(np.searchsorted(pos, last, side="right"))
    if over == len(pos):
        word = windows[pos]
    else:
        word = np.empty(len(pos), dtype=np.uint64)
        word[:over] = windows[pos[:over]]
        tail = pos[over:]
        word[over:] = windows[np.minimum(tail, last)] >> (8 * np.maximum(tail - last, 0)).astype(np.uint64)
    remaining = lengths - 8 * k
    if remaining.min() < 8:
        word &= _MASKS[np.clip(remaining, 0, 8)]
    return word


def _hash_words(windows: np.ndarray, starts: np.ndarray,
                lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The two hashes over the 8-byte words that hold string bytes (a padding-only word is
    skipped, so the value never depends on the batch's widest string); each step is a
    bijection of the word, so one-word strings of one length never collide."""
    lengths_u = lengths.astype(np.uint64)
    longest = int(lengths.max()) if len(lengths) else 0
    h = lengths_u ^ _FNV_OFFSET
    g = lengths_u ^ _ALT_OFFSET
    nh, ng, tmp = np.empty_like(h), np.empty_like(h), np.empty_like(h)
    with np.errstate(over="ignore"):  # in place: the chunk's arrays stay in cache
        h *= _FNV_PRIME
        g *= _ALT_PRIME
        for k in range(max(1, -(-longest // 8))):
            w = _word(windows, starts, lengths, k)
            np.bitwise_xor(h, w, out=nh)
            nh *= _FNV_PRIME
            np.right_shift(nh, np.uint64(29), out=tmp)
            nh ^= tmp
            np.add(g, w, out=ng)
            ng *= _ALT_PRIME
            np.right_shift(ng, np.uint64(32), out=tmp)
            ng ^= tmp
            active = lengths > 8 * k
            if active.all():
                h, nh, g, ng = nh, h, ng, g
            else:
                np.copyto(h, nh, where=active)
                np.copyto(g, ng, where=active)
    g >>= np.uint64(32)
    return h, g.astype(np.uint32)


def mix(key: np.ndarray, salt: np.ndarray) -> np.ndarray:
    """Combine a 64-bit key with a small integer (a query or group code) into one key."""
    with np.errstate(over="ignore"):
        z = key + (salt.astype(np.uint64) + np.uint64(1)) * np.uint64(0x9E3779B97F4A7C15)
        z ^= z >> np.uint64(31)
        z *= np.uint64(0xBF58476D1CE4E5B9)
        z ^= z >> np.uint64(29)
    return z


def same_strings(a: pa.Array, ia: np.ndarray, b: pa.Array, ib: np.ndarray) -> np.ndarray:
    """Element-wise ``a[ia] == b[ib]`` as a boolean array."""
    if len(ia) == 0:
        return np.zeros(0, dtype=bool)
    left = a.take(pa.array(ia, type=pa.int64()))
    right = b.take(pa.array(ib, type=pa.int64()))
    return pc.equal(left, right).to_numpy(zero_copy_only=False).astype(bool)


def argsort_u64(keys: np.ndarray, groups: np.ndarray | None = None) -> np.ndarray:
    """Stable argsort of uint64 keys through value sorts.

    ``np.sort`` of 64-bit values is several times faster than ``np.argsort``, so the row
    index is packed into the low bits of each key, the packed values are sorted, and the
    index is read back. Keys that agree on the remaining high bits are then put in exact
    (key, index) order with a small lexsort of just those groups.

    Parameters
    ----------
    keys : ndarray of uint64
    groups : ndarray of int, optional
        The group of each key, where a smaller group always means a smaller key (a query
        or unit code in the keys' high bits). When each group's rows are contiguous, every
        group is sorted on its own, as a row of a 2-D array: sorting many lists of a hundred
        keys is far cheaper than one sort of all of them. The result is the same.
    """
    n = len(keys)
    if n < 2:
        return np.arange(n, dtype=np.int64)
    blocks = None if groups is None else _contiguous_blocks(groups)
    order, same = _sort_all(keys) if blocks is None else _sort_blocks(keys, *blocks)
    if same is not None:
        _order_ties(order, keys, same)
    return order


def _sort_all(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """One packed sort of all keys: the order, and where neighbours tie on the high bits."""
    n = len(keys)
    bits = int(n - 1).bit_length()
    mask = np.uint64((1 << bits) - 1)
    packed = np.arange(n, dtype=np.uint64)
    np.bitwise_or(packed, keys & ~mask, out=packed)
    packed.sort()
    same = np.bitwise_xor(packed[1:], packed[:-1]) <= mask  # equal high bits
    packed &= mask  # in place: the index, no second n-sized array
    return packed.view(np.int64), (same if same.any() else None)


def _contiguous_blocks(groups: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Start, length and output start of each block of equal neighbouring groups; None
    when there is a single block or a group is split over several blocks."""
    n = len(groups)
    starts = np.flatnonzero(groups[1:] != groups[:-1]) + 1
    if starts.size == 0:
        return None
    starts = np.concatenate([[0], starts])
    lengths = np.diff(np.append(starts, n))
    first = groups[starts]
    by_group = np.argsort(first, kind="stable")
    if np.any(first[by_group][1:] == first[by_group][:-1]):
        return None
    out_start = np.empty(len(starts), dtype=np.int64)
    out_start[by_group] = np.cumsum(lengths[by_group]) - lengths[by_group]
    return starts, lengths, out_start


#: Keys handled per step of the block sort: a step's temporaries stay in the CPU cache.
_STEP = 1 << 16


def _sort_blocks(keys: np.ndarray, starts: np.ndarray, lengths: np.ndarray,
                 out_start: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """Sort each block on its own: blocks of similar length (within a factor of two) are
    rows of padded 2-D arrays, a few thousand keys at a time. Returns the order and the
    high-bit ties (or None)."""
    n = len(keys)
    order = np.empty(n, dtype=np.int64)
    ties = []
    width_class = np.frexp((lengths - 1).astype(np.float64))[1]  # bit length of length - 1
    classes = np.unique(width_class)
    for c in classes:
        members = np.arange(len(lengths)) if len(classes) == 1 else np.flatnonzero(width_class == c)
        width = int(lengths[members].max())
        rows = max(1, _STEP // width)
        for r in range(0, len(members), rows):
            b = members[r:r + rows]
            ties.append(_sort_rows(keys, order, starts[b], lengths[b], out_start[b], width))
    ties = [t for t in ties if t.size]
    if not ties:
        return order, None
    same = np.zeros(n - 1, dtype=bool)
    same[np.concatenate(ties)] = True
    return order, same


def _sort_rows(keys: np.ndarray, order: np.ndarray, starts: np.ndarray, lengths: np.ndarray,
               out_start: np.ndarray, width: int) -> np.ndarray:
    """Sort the given blocks as the rows of a 2-D array of ``width`` columns (shorter rows
    padded with the largest value), writing ``order[out_start[b] + j]``; returns the output
    positions i whose key ties with i + 1 on the packed high bits."""
    mask = np.uint64((1 << (width - 1).bit_length()) - 1)
    grid = np.empty((len(starts), width), dtype=np.uint64)
    valid = None if bool(np.all(lengths == width)) else np.arange(width) < lengths[:, None]
    lo, hi = int(starts[0]), int(starts[-1] + lengths[-1])
    src = keys[lo:hi] if hi - lo == grid.size else keys[_block_rows(starts, lengths)]
    if valid is None:
        grid.reshape(-1)[:] = src
    else:
        grid.fill(np.iinfo(np.uint64).max)
        grid[valid] = src
    grid &= ~mask
    grid |= np.arange(width, dtype=np.uint64)  # the position in the block, in the low bits
    grid.sort(axis=1)
    tie = np.bitwise_xor(grid[:, 1:], grid[:, :-1]) <= mask  # equal high bits
    if valid is not None:
        tie &= valid[:, 1:]
    tie_row, tie_col = np.nonzero(tie) if tie.any() else (np.zeros(0, np.int64), np.zeros(0, np.int64))
    grid &= mask
    grid += starts[:, None].astype(np.uint64)  # the input position
    rows = grid.view(np.int64)
    o_lo = int(out_start[0])
    if bool(np.all(np.diff(out_start) == lengths[:-1])):  # the blocks stay side by side
        order[o_lo:o_lo + int(lengths.sum())] = rows.reshape(-1) if valid is None else rows[valid]
    else:
        order[_block_rows(out_start, lengths)] = rows.reshape(-1) if valid is None else rows[valid]
    return out_start[tie_row] + tie_col


def _block_rows(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Row indices ``starts[b] + arange(lengths[b])`` of every block, concatenated."""
    offsets = np.cumsum(lengths) - lengths
    return np.arange(int(lengths.sum()), dtype=np.int64) + np.repeat(starts - offsets, lengths)


def _order_ties(order: np.ndarray, keys: np.ndarray, same: np.ndarray) -> None:
    """Put the runs of equal high bits (``same[i]``: positions i and i + 1 agree) in exact
    (key, index) order, touching only those positions."""
    idx = np.flatnonzero(same)
    grouped = np.union1d(idx, idx + 1)
    starts_group = np.ones(len(grouped), dtype=bool)
    inner = grouped > 0
    starts_group[inner] = ~same[grouped[inner] - 1]
    group = np.cumsum(starts_group)
    members = order[grouped]
    order[grouped] = members[np.lexsort((members, keys[members], group))]


def float_order_keys(values: np.ndarray) -> np.ndarray:
    """uint64 keys whose unsigned order is the order of the float64 ``values`` (no NaN)."""
    bits = np.ascontiguousarray(values, dtype=np.float64).view(np.uint64)
    negative = (bits >> np.uint64(63)).astype(bool)
    return np.where(negative, ~bits, bits | np.uint64(1 << 63))
