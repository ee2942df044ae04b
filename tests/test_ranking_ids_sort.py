"""argsort_u64 (the packed-index sort behind the ranking join) against NumPy's stable argsort."""

import numpy as np
import pytest

from scorebench.metrics.ranking._ids import argsort_u64


@pytest.mark.parametrize("shift", [0, 20, 40, 58])
@pytest.mark.parametrize("n", [0, 1, 2, 3, 17, 1000, 70_001])
def test_argsort_u64_matches_stable_argsort(n: int, shift: int) -> None:
    # shifting the keys right makes many of them share their high bits (ties and near-ties)
    rng = np.random.default_rng(n + shift)
    keys = rng.integers(0, 2**63, n, dtype=np.uint64) >> np.uint64(shift)
    np.testing.assert_array_equal(argsort_u64(keys), np.argsort(keys, kind="stable"))


def test_argsort_u64_exact_duplicates_keep_row_order() -> None:
    keys = np.array([5, 3, 5, 3, 2**64 - 1, 0, 5], dtype=np.uint64)
    np.testing.assert_array_equal(argsort_u64(keys), [5, 1, 3, 0, 2, 6, 4])


def test_argsort_u64_grouped_prefix_keys() -> None:
    # query code in the high bits, a hash below: the layout the ranking join sorts
    rng = np.random.default_rng(0)
    q = np.repeat(np.arange(500, dtype=np.uint64), 40)
    keys = (q << np.uint64(50)) | (rng.integers(0, 2**50, q.size, dtype=np.uint64) >> np.uint64(30))
    np.testing.assert_array_equal(argsort_u64(keys), np.argsort(keys, kind="stable"))


def _grouped_keys(rng, counts, groups, prefix_bits=20, collide=0.0):
    """Keys with ``groups`` (one per block of ``counts`` rows) in the high bits."""
    prefix = np.repeat(np.asarray(groups, dtype=np.uint64), counts)
    low = rng.integers(0, 2**63, int(np.sum(counts)), dtype=np.int64).astype(np.uint64) >> np.uint64(prefix_bits)
    if collide:  # equal high bits (ties for the packed sort) and fully equal keys
        pick = rng.random(len(low)) < collide
        low[pick] &= ~np.uint64(0xFFFF)
        low[rng.random(len(low)) < collide] = np.uint64(5)
    return (prefix << np.uint64(64 - prefix_bits)) | low


@pytest.mark.parametrize("case", ["equal", "unequal", "shuffled", "ties", "single", "one_row_blocks"])
def test_block_argsort_is_the_stable_argsort(case):
    rng = np.random.default_rng(7)
    counts = {"equal": np.full(300, 40), "single": np.array([50]), "one_row_blocks": np.ones(200, int)}.get(
        case, rng.integers(1, 60, 300))
    groups = rng.permutation(len(counts)) if case in ("shuffled", "ties", "equal") else np.arange(len(counts))
    keys = _grouped_keys(rng, counts, groups, collide=0.3 if case == "ties" else 0.0)
    np.testing.assert_array_equal(argsort_u64(keys, prefix_bits=20), np.argsort(keys, kind="stable"))


def test_block_argsort_falls_back_when_a_group_is_split_or_sparse():
    rng = np.random.default_rng(8)
    split = np.concatenate([_grouped_keys(rng, [5] * 10, range(10)), _grouped_keys(rng, [5] * 10, range(10))])
    np.testing.assert_array_equal(argsort_u64(split, prefix_bits=20), np.argsort(split, kind="stable"))
    sparse = _grouped_keys(rng, [1] * 50 + [500], range(51))  # padding would be 100x the rows
    np.testing.assert_array_equal(argsort_u64(sparse, prefix_bits=20), np.argsort(sparse, kind="stable"))
