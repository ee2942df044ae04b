"""EEE records written by every-eval-ever's own Inspect converter, read back with the eee reader.

tests/fixtures/eee/from_inspect comes from tests/fixtures/eee/make_from_inspect.py (every-eval-ever
0.3.0's ``every_eval_ever.converters.inspect`` on tests/fixtures/inspect's logs, models renamed so the
converter accepts them); tests/fixtures/inspect/expected.json holds Inspect's own reported numbers.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import scorebench
from scorebench.io.readers import detect_results_format

FIXTURES = Path(__file__).parents[1] / "fixtures"
FOLDER = FIXTURES / "eee" / "from_inspect"
EXPECTED = json.loads((FIXTURES / "inspect" / "expected.json").read_text())
REPORTED = {f"scorebench-tests/{name}": EXPECTED[f"{name}.eval"]["reported"] for name in ("alpha", "beta")}


def test_aggregates_equal_inspects_reported_numbers():
    assert detect_results_format(FOLDER) == "eee"
    table = scorebench.read_results(FOLDER)
    assert len(table) == 4
    for row in table.itertuples():
        scorer = row.metric.split(":")[0]
        assert row.task == "sb_arith" and row.n == 12
        assert row.value == REPORTED[row.system][scorer]["accuracy"]
        assert row.stderr == pytest.approx(REPORTED[row.system][scorer]["stderr"], rel=1e-12)


def test_instance_records_reproduce_the_aggregates():
    samples = scorebench.read_results(FOLDER, level="samples")
    # the converter writes the epoch-reduced score into every epoch's record: 12 samples x 2 epochs
    assert samples.groupby(["system", "task"]).size().unique().tolist() == [24]
    for (system, task), group in samples.groupby(["system", "task"]):
        scorer = task.split("/")[1].split(":")[0]
        per_sample = group.groupby("sample_id")["score"].agg(["min", "max"])
        assert (per_sample["min"] == per_sample["max"]).all()
        x = per_sample["min"].to_numpy()
        assert x.mean() == pytest.approx(REPORTED[system][scorer]["accuracy"], abs=1e-15)
        assert x.std(ddof=1) / np.sqrt(len(x)) == pytest.approx(REPORTED[system][scorer]["stderr"], rel=1e-12)
    # the same sample hashes across the two models: paired comparisons pair the same items
    ids = samples.groupby("system")["id"].apply(frozenset)
    assert ids.iloc[0] == ids.iloc[1]
