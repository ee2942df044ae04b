"""evaluate(per_unit=True) gives one row per unit for kinds without a key column too."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import scorebench
from scorebench.core.errors import InputError


def test_rows_without_an_id_are_named_by_their_position():
    t = pd.DataFrame({"system": ["a"] * 3 + ["b"] * 3, "y": [1, 0, 1] * 2, "p": [0.2, 0.3, 0.9, 0.5, 0.5, 0.5]})
    out = scorebench.evaluate(t, "brier_score", n_boot=0, per_unit=True)
    units = out[out["row"] != "all"]
    assert units["row"].tolist() == [str(i) for i in range(6)]
    np.testing.assert_allclose(units["value"], (t["p"] - t["y"]) ** 2, rtol=1e-12)
    means = units.groupby("system")["value"].mean()
    overall = out[out["row"] == "all"].set_index("system")["value"]
    np.testing.assert_allclose(means.loc[overall.index], overall, rtol=1e-12)
    # nothing pairs the rows of different systems, so item-level aggregation refuses them
    with pytest.raises(InputError, match="not every system is scored on every item"):
        scorebench.aggregate(out, "mean", n_boot=0)


def test_judgment_rows_get_unit_rows():
    j = pd.DataFrame({"question_id": [1, 2, 3], "model_1": ["a"] * 3, "model_2": ["b"] * 3,
                      "g1_winner": ["model_1", "model_2", "tie"], "g2_winner": ["model_1", "model_1", "tie"]})
    out = scorebench.evaluate(j, "swap_consistency", n_boot=0, per_unit=True)
    assert out["row"].tolist() == ["0", "1", "2", "all"]
    assert out["value"].iloc[:3].tolist() == [1.0, 0.0, 1.0]
    assert out["value"].iloc[3] == pytest.approx(2 / 3)


def test_a_key_column_still_names_the_units():
    t = pd.DataFrame({"system": ["a", "a", "b", "b"], "id": [7, 8, 7, 8], "y": [1, 0, 1, 0], "p": [0.9, 0.2, 0.6, 0.5]})
    out = scorebench.evaluate(t, "brier_score", n_boot=0, per_unit=True)
    assert "row" not in out.columns and out["id"].tolist() == ["7", "8", "7", "8", "all", "all"]
    assert scorebench.aggregate(out, "mean", n_boot=0).systems == ("a", "b")
