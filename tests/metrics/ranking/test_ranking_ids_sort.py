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


def _grouped_keys(rng: np.random.Generator, groups: np.ndarray, low_bits: int) -> np.ndarray:
    gbits = max(1, int(groups.max(initial=0)).bit_length())
    low = rng.integers(0, 2**63, groups.size, dtype=np.uint64) >> np.uint64(63 - low_bits)
    return (groups.astype(np.uint64) << np.uint64(64 - gbits)) | (low >> np.uint64(gbits))


@pytest.mark.parametrize("low_bits", [1, 12, 40, 63])
@pytest.mark.parametrize("layout", ["ascending", "shuffled_blocks", "uneven", "split_group", "one_block"])
def test_argsort_u64_with_groups_matches_stable_argsort(layout: str, low_bits: int) -> None:
    # blocks sorted as rows of a padded 2-D array must give exactly the global stable order
    rng = np.random.default_rng(low_bits)
    n_groups = 300
    lengths = {"uneven": rng.integers(0, 300, n_groups), "one_block": np.array([5000])}.get(
        layout, rng.integers(90, 101, n_groups))
    block_group = rng.permutation(len(lengths)) if layout == "shuffled_blocks" else np.arange(len(lengths))
    groups = np.repeat(block_group, lengths)
    if layout == "split_group":  # a group in two places: the plain sort takes over
        groups[-3:] = groups[0]
    keys = _grouped_keys(rng, groups, low_bits)
    np.testing.assert_array_equal(argsort_u64(keys, groups), np.argsort(keys, kind="stable"))


def test_argsort_u64_with_groups_exact_duplicates_keep_row_order() -> None:
    groups = np.array([1, 1, 1, 0, 0, 2, 2, 2, 2])
    keys = (groups.astype(np.uint64) << np.uint64(60)) | np.array([7, 3, 7, 3, 3, 0, 9, 0, 9], dtype=np.uint64)
    np.testing.assert_array_equal(argsort_u64(keys, groups), np.argsort(keys, kind="stable"))
