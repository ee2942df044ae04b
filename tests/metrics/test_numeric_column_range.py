"""numeric_column: integers convert exactly or are refused (both signs, the int64 extremes)."""

import numpy as np
import pandas as pd
import pytest

from scorebench.core.errors import InputError
from scorebench.core.tables import numeric_column


@pytest.mark.parametrize("values", [[1, 2**53], [1, -2**53], [0]])
def test_integers_within_2_53_convert(values):
    np.testing.assert_array_equal(numeric_column(pd.DataFrame({"a": values}), "a"), np.array(values, float))


@pytest.mark.parametrize("values", [[2**53 + 1], [-2**53 - 1], [np.iinfo(np.int64).min], [np.iinfo(np.uint64).max]])
def test_integers_beyond_2_53_are_refused(values):
    with pytest.raises(InputError, match="2\\*\\*53"):
        numeric_column(pd.DataFrame({"a": values}), "a")
