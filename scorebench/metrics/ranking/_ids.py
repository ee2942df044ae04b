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

__all__ = ["HashCollision", "id_array", "hash_strings", "mix", "same_strings"]

_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)
_ALT_OFFSET = np.uint64(0x84222325CBF29CE4)
_ALT_PRIME = np.uint64(0x9E3779B97F4A7C15)


class HashCollision(Exception):
    """Two different ids share a 64-bit key (use the exact path)."""


def id_array(values: pd.Series) -> pa.Array:
    """The ids of a column as an Arrow string array (integers print as integers)."""
    series = values
    if series.dtype.kind in "iub":
        series = series.astype(str)
    elif series.dtype.kind == "f":
        arr = series.to_numpy()
        series = (series.astype(np.int64) if np.all(arr == np.round(arr)) else series).astype(str)
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


def hash_strings(arr: pa.Array, *, chunk: int = 1 << 20) -> tuple[np.ndarray, np.ndarray]:
    """Two independent hashes of each string of an Arrow (large_)string array: a 64-bit
    FNV-1a and a 32-bit multiplicative hash, vectorised over the strings in chunks (so the
    temporaries stay small)."""
    n = len(arr)
    h = np.empty(n, dtype=np.uint64)
    g = np.empty(n, dtype=np.uint32)
    if n == 0:
        return h, g
    buffers = arr.buffers()
    off_type = np.int64 if pa.types.is_large_string(arr.type) else np.int32
    offsets = np.frombuffer(buffers[1], dtype=off_type)[arr.offset:arr.offset + n + 1]
    data = np.frombuffer(buffers[2], dtype=np.uint8) if buffers[2] is not None else np.zeros(1, np.uint8)
    if data.size == 0:
        data = np.zeros(1, np.uint8)
    for lo in range(0, n, chunk):
        hi = min(lo + chunk, n)
        chunk_offsets = offsets[lo:hi + 1].astype(np.int64)
        lengths = np.diff(chunk_offsets)
        words = _ascii_words(arr.slice(lo, hi - lo), lengths)
        if words is None:
            words = _gathered_words(chunk_offsets, data)
        h[lo:hi], g[lo:hi] = _hash_words(words, lengths)
    return h, g


def _ascii_words(arr: pa.Array, lengths: np.ndarray) -> np.ndarray | None:
    """ASCII strings zero-padded to a common width of 8k bytes, as an (n, k) uint64 matrix
    (one C++ pass); None when some string is not ASCII (padding counts characters)."""
    longest = int(lengths.max())
    if longest == 0 or not pc.all(pc.string_is_ascii(arr)).as_py():
        return None
    width = -(-longest // 8) * 8
    padded = pc.utf8_rpad(arr, width=width, padding="\0")
    buffers = padded.buffers()
    off_type = np.int64 if pa.types.is_large_string(padded.type) else np.int32
    start = int(np.frombuffer(buffers[1], dtype=off_type)[padded.offset])
    raw = np.frombuffer(buffers[2], dtype=np.uint8)[start:start + width * len(arr)]
    return raw.view(np.uint64).reshape(len(arr), width // 8)


def _gathered_words(offsets: np.ndarray, data: np.ndarray) -> np.ndarray:
    """The same zero-padded word matrix, gathered byte by byte (any UTF-8)."""
    starts = offsets[:-1]
    lengths = offsets[1:] - starts
    width = max(8, -(-int(lengths.max()) // 8) * 8)
    out = np.zeros((len(starts), width), dtype=np.uint8)
    for j in range(int(lengths.max())):
        active = lengths > j
        out[active, j] = data[starts[active] + j]
    return out.view(np.uint64)


def _hash_words(words: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The two hashes over the 8-byte words that hold string bytes (a padding-only word is
    skipped, so the value never depends on the batch's widest string); each step is a
    bijection of the word, so one-word strings of one length never collide."""
    h = np.full(len(words), _FNV_OFFSET, dtype=np.uint64)
    g = np.full(len(words), _ALT_OFFSET, dtype=np.uint64)
    with np.errstate(over="ignore"):
        h ^= lengths.astype(np.uint64)
        h *= _FNV_PRIME
        g ^= lengths.astype(np.uint64)
        g *= _ALT_PRIME
        for k in range(words.shape[1]):
            w = words[:, k]
            nh = (h ^ w) * _FNV_PRIME
            nh ^= nh >> np.uint64(29)
            ng = (g + w) * _ALT_PRIME
            ng ^= ng >> np.uint64(32)
            active = lengths > 8 * k
            if active.all():
                h, g = nh, ng
            else:
                h, g = np.where(active, nh, h), np.where(active, ng, g)
    return h, (g >> np.uint64(32)).astype(np.uint32)


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


def argsort_u64(keys: np.ndarray) -> np.ndarray:
    """Stable argsort of uint64 keys through one value sort.

    ``np.sort`` of 64-bit values is several times faster than ``np.argsort``, so the row
    index is packed into the low bits of each key, the packed values are sorted, and the
    index is read back. Keys that agree on the remaining high bits are then put in exact
    (key, index) order with a small lexsort of just those groups.
    """
    n = len(keys)
    if n < 2:
        return np.arange(n, dtype=np.int64)
    bits = int(n - 1).bit_length()
    mask = np.uint64((1 << bits) - 1)
    packed = keys & ~mask
    packed |= np.arange(n, dtype=np.uint64)
    packed.sort()
    order = (packed & mask).astype(np.int64)
    high = packed >> np.uint64(bits)
    del packed
    same = high[1:] == high[:-1]
    if same.any():
        grouped = np.zeros(n, dtype=bool)
        grouped[1:] |= same
        grouped[:-1] |= same
        idx = np.flatnonzero(grouped)
        group = np.cumsum(np.concatenate([[True], ~same]))[idx]
        members = order[idx]
        order[idx] = members[np.lexsort((members, keys[members], group))]
    return order


def float_order_keys(values: np.ndarray) -> np.ndarray:
    """uint64 keys whose unsigned order is the order of the float64 ``values`` (no NaN)."""
    bits = np.ascontiguousarray(values, dtype=np.float64).view(np.uint64)
    negative = (bits >> np.uint64(63)).astype(bool)
    return np.where(negative, ~bits, bits | np.uint64(1 << 63))
