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
