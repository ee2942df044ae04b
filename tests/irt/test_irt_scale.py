"""IRT at scale: the whole cross-item information is refused with one clear line when it cannot fit."""

import numpy as np
import pytest

from scorebench import irt
from scorebench.core.errors import InputError


def test_full_se_refused_beyond_the_memory_limit():
    y = (np.random.default_rng(0).random((3000, 400)) < 0.5).astype(float)
    with pytest.raises(InputError, match="full_se=True: the whole observed information .* GiB"):
        irt.fit(y, "2pl", full_se=True, warn=False)
