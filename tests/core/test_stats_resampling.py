"""One validation of ci / n_boot / seed (stats.check_resampling) and one source of seeded
generators (stats.rng_from_seed), shared by every entry point."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import scorebench
from scorebench.core.errors import InputError
from scorebench.core.stats import MIN_BOOT, Resampling, check_resampling, rng_for, rng_from_seed


@pytest.mark.parametrize("kwargs, message", [
    ({"ci": 1.0}, "'ci' must be strictly between 0 and 1"),
    ({"ci": float("nan")}, "'ci' must be strictly between 0 and 1"),
    ({"ci": True}, "'ci' must be strictly between 0 and 1"),
    ({"ci": "0.9"}, "'ci' must be strictly between 0 and 1"),
    ({"n_boot": -1}, "'n_boot' must be a non-negative integer"),
    ({"n_boot": 2.5}, "'n_boot' must be a non-negative integer"),
    ({"n_boot": True}, "'n_boot' must be a non-negative integer"),
    ({"n_boot": 5}, f"use at least {MIN_BOOT}"),
    ({"n_boot": 10**14}, "would need"),
    ({"seed": -3}, "'seed' must be a non-negative integer"),
    ({"seed": 1.0}, "'seed' must be a non-negative integer"),
])
def test_bad_values_are_refused_with_one_message(kwargs, message):
    with pytest.raises(InputError, match=message):
        check_resampling(**kwargs)


def test_values_are_normalised_and_the_minimum_is_optional():
    assert check_resampling(ci=np.float32(0.5), n_boot=np.int64(0), seed=np.uint8(4)) == Resampling(0.5, 0, 4)
    assert check_resampling(n_boot=5, min_boot=None).n_boot == 5
    assert check_resampling() == Resampling(None, None, None)
    with pytest.raises(InputError, match=r"^spec.toml: 'seed'"):
        check_resampling(seed=-1, where="spec.toml: ")


def test_every_entry_point_uses_it():
    t = pd.DataFrame({"system": ["a"] * 4, "y": [1, 0, 1, 0], "p": [0.9, 0.2, 0.6, 0.4]})
    with pytest.raises(InputError, match="'ci' must be strictly between"):
        scorebench.evaluate(t, "brier_score", ci=1.5)
    with pytest.raises(InputError, match=f"use at least {MIN_BOOT}"):
        scorebench.evaluate(t, "brier_score", n_boot=3)
    with pytest.raises(InputError, match="'seed' must be a non-negative integer"):
        scorebench.evaluate(t, "brier_score", seed=-1)
    wide = pd.DataFrame({"t1": [3, 2, 1], "t2": [1, 3, 2]}, index=["a", "b", "c"])
    with pytest.raises(InputError, match="'seed' must be a non-negative integer"):
        scorebench.aggregate(wide, "borda", n_boot=0, seed=-1)  # checked even without a bootstrap
    with pytest.raises(InputError, match="'ci' must be strictly between"):
        scorebench.aggregate(wide, "borda", n_boot=0, ci=0)
    with pytest.raises(InputError, match="'seed' must be a non-negative integer"):
        rng_for(-1, "x")


def test_rng_from_seed_keeps_the_default_rng_stream():
    np.testing.assert_array_equal(rng_from_seed(7).random(5), np.random.default_rng(7).random(5))
    g = np.random.default_rng(1)
    assert rng_from_seed(g) is g
    with pytest.raises(InputError, match="'seed'"):
        rng_from_seed(-2)
    with pytest.raises(InputError, match="'seed'"):
        rng_from_seed(None)  # no entropy from the operating system: results stay reproducible
