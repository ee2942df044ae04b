"""unit_matrix (compare's units x systems matrix) is the same whatever the dtypes of the labels.

The memory-lean path (category codes, unsorted factorise + rank remap) must give the matrix,
systems and unit labels of ``pd.factorize(column.to_numpy(), sort=True)``.
"""

import numpy as np
import pandas as pd
import pytest

from scorebench.core.errors import InputError
from scorebench.evaluation.comparison import unit_matrix

SYSTEMS = ["zeta", "alpha", "Beta", "sys10", "sys9"]


def _reference(frame, contrib, key, task):
    """The plain construction: per-row labels, sorted factorise, one cell per row."""
    mask = np.ones(len(frame), bool) if task is None else (frame["task"].astype(object) == task).to_numpy()
    names = frame["system"].to_numpy()[mask]
    units = frame[key].to_numpy()[mask]
    ucode, ulabels = pd.factorize(units, sort=True)
    scode, slabels = pd.factorize(names, sort=True)
    out = np.full((len(ulabels), len(slabels)), np.nan)
    out[ucode, scode] = contrib[mask]
    return out, [str(s) for s in slabels], np.asarray(ulabels).tolist()


def _frame(id_dtype, system_dtype, seed=0):
    rng = np.random.default_rng(seed)
    ids = rng.permutation(25)
    rows = [(t, s, i) for t in ("t0", "t1") for s in SYSTEMS for i in ids]
    frame = pd.DataFrame(rows, columns=["task", "system", "id"]).sample(frac=1, random_state=seed)
    frame = frame.reset_index(drop=True)
    frame["id"] = {"int": frame["id"], "float": frame["id"] + 0.5, "str": frame["id"].astype(str),
                   "object": frame["id"].astype(str).astype(object),
                   "category": frame["id"].astype(str).astype("category")}[id_dtype]
    frame["system"] = frame["system"].astype(system_dtype)
    frame["task"] = frame["task"].astype(system_dtype)
    return frame, rng.random(len(frame))


@pytest.mark.parametrize("id_dtype", ["int", "float", "str", "object", "category"])
@pytest.mark.parametrize("system_dtype", ["category", "str", "object"])
def test_matrix_equals_the_plain_factorisation(id_dtype, system_dtype):
    frame, contrib = _frame(id_dtype, system_dtype)
    for task in ("t0", "t1"):
        got = unit_matrix(frame, contrib, "id", task)
        matrix, systems, units = _reference(frame, contrib, "id", task)
        np.testing.assert_array_equal(got.matrix, matrix)
        assert got.systems == systems == sorted(SYSTEMS)
        assert got.units.tolist() == units


def test_unused_categories_are_not_columns():
    frame, contrib = _frame("str", "category")
    frame["system"] = frame["system"].cat.add_categories(["unused"])
    got = unit_matrix(frame, contrib, "id", "t1")
    assert got.systems == sorted(SYSTEMS)


def test_missing_labels_duplicates_and_gaps_are_one_clear_error():
    frame, contrib = _frame("str", "category")
    one = frame[frame["task"] == "t0"].drop(columns="task").reset_index(drop=True)
    values = contrib[: len(one)]
    bad = one.copy()
    bad.loc[3, "id"] = None
    with pytest.raises(InputError, match="column 'id': missing"):
        unit_matrix(bad, values, "id", None)
    with pytest.raises(InputError, match="appear more than once"):
        unit_matrix(pd.concat([one, one.iloc[:1]], ignore_index=True), np.r_[values, 0.5], "id", None)
    with pytest.raises(InputError, match="not scored on the same units"):
        unit_matrix(one.iloc[1:].reset_index(drop=True), values[1:], "id", None)
