"""Inspect AI logs on files written by the real Inspect (tests/fixtures/inspect, see make_fixtures.py):
per-sample values, accuracy and stderr as Inspect itself reports them."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import scorebench
from scorebench.cli import cli
from scorebench.core.errors import InputError
from scorebench.io.readers import detect_results_format, read_results
from scorebench.io.readers import inspect_logs
from scorebench.io.readers.inspect_logs import value_to_float

FIXTURES = Path(__file__).parents[1] / "fixtures" / "inspect"
EXPECTED = json.loads((FIXTURES / "expected.json").read_text())
LOGS = ["alpha.eval", "beta.eval", "json/alpha.json"]

pytest.importorskip("zstandard")  # current Inspect writes Zstandard-compressed .eval archives


@pytest.mark.parametrize("name", LOGS)
def test_per_sample_values_are_inspects(name):
    table = read_results(FIXTURES / name)
    expected = EXPECTED[name]
    assert table.attrs["source_format"] == "inspect"
    assert set(table["system"]) == {expected["model"]} and set(table["task"]) == {expected["task"]}
    got = table.set_index(["id", "epoch"]).sort_index()
    want = pd.DataFrame(expected["samples"]).set_index(["id", "epoch"]).sort_index()
    assert len(got) == len(want) == 24
    for scorer in ("match", "graded"):
        np.testing.assert_array_equal(got[scorer].to_numpy(), want[scorer].to_numpy())
    assert got["subject"].tolist() == want["metadata_subject"].tolist()
    assert got["difficulty"].tolist() == want["metadata_difficulty"].tolist()
    if "samples_df" in expected:  # Inspect's own data frame: raw values through the C/I/P/N mapping
        frame = pd.DataFrame(expected["samples_df"]).set_index(["id", "epoch"]).sort_index()
        for scorer in ("match", "graded"):
            np.testing.assert_array_equal(got[scorer].to_numpy(), [value_to_float(v) for v in frame[f"score_{scorer}"]])


@pytest.mark.parametrize("name", LOGS)
def test_accuracy_and_stderr_as_inspect_reports(name):
    reported = EXPECTED[name]["reported"]
    table = read_results(FIXTURES / name, epochs="mean")
    assert len(table) == 12 and set(table["n_epochs"]) == {2}
    for scorer in ("match", "graded"):
        scores = scorebench.evaluate(table, [f"sample_mean@{scorer}"], n_boot=0)
        np.testing.assert_allclose(scores["value"].item(), reported[scorer]["accuracy"], rtol=0, atol=1e-15)
        values = table[scorer].to_numpy()
        np.testing.assert_allclose(values.std(ddof=1) / np.sqrt(len(values)), reported[scorer]["stderr"], rtol=1e-12)
    results = read_results(FIXTURES / name, level="results").set_index("metric")
    for scorer in ("match", "graded"):
        assert results.loc[f"{scorer}/accuracy", "value"] == reported[scorer]["accuracy"]
        assert results.loc[f"{scorer}/accuracy", "stderr"] == reported[scorer]["stderr"]


def test_detection_and_pairing_across_runs():
    assert detect_results_format(FIXTURES / "alpha.eval") == "inspect"
    assert detect_results_format(FIXTURES / "json" / "alpha.json") == "inspect"
    assert detect_results_format(FIXTURES) == "inspect"
    table = read_results(FIXTURES)
    assert sorted(table["system"].unique()) == ["mockllm/alpha", "mockllm/beta"]
    result = scorebench.compare(table, "sample_mean@match", repeats="epoch", n_boot=200, n_perm=200, seed=0)
    a = table[table.system == "mockllm/alpha"].groupby("id")["match"].mean()
    b = table[table.system == "mockllm/beta"].groupby("id")["match"].mean()
    np.testing.assert_allclose(abs(result["mean_diff"].iloc[0]), abs((a - b.loc[a.index]).mean()), atol=1e-15)


def test_cli_journey(tmp_path):
    runner = CliRunner()
    res = runner.invoke(cli, ["compare", str(FIXTURES), "-m", "sample_mean@match", "--repeats", "epoch",
                              "--bootstrap", "100", "--permutations", "100"])
    assert res.exit_code == 0, res.output
    assert "two-level bootstrap" in res.output
    res = runner.invoke(cli, ["compare", str(FIXTURES), "--from", "inspect", "--from-option", "epochs=mean",
                              "-m", "sample_mean@graded", "--cluster", "subject", "--bootstrap", "100",
                              "--permutations", "100"])
    assert res.exit_code == 0, res.output
    assert "cluster bootstrap" in res.output
    res = runner.invoke(cli, ["import", str(FIXTURES / "alpha.eval"), "-o", str(tmp_path / "a.csv")])
    assert res.exit_code == 0 and len(pd.read_csv(tmp_path / "a.csv")) == 24


def _rezip(source: Path, target: Path, edit=None, compression=zipfile.ZIP_DEFLATED) -> None:
    """The same archive with stdlib compression (reading the Zstandard members through the reader)."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w", compression) as new:
        for info in old.infolist():
            data = inspect_logs._member_bytes(source, old, info)
            if edit is not None:
                data = edit(info.filename, data)
                if data is None:
                    continue
            new.writestr(info.filename, data)


def test_deflate_archives_read_the_same(tmp_path):
    _rezip(FIXTURES / "alpha.eval", tmp_path / "alpha.eval")
    pd.testing.assert_frame_equal(read_results(tmp_path / "alpha.eval"), read_results(FIXTURES / "alpha.eval"))


def _set_score(name, data):
    if name == "samples/add-2-3_epoch_1.json":
        doc = json.loads(data)
        doc["scores"]["match"]["value"] = "maybe"
        return json.dumps(doc).encode()
    return data


def _status(name, data):
    if name == "header.json":
        doc = json.loads(data)
        doc["status"] = "cancelled"
        return json.dumps(doc).encode()
    return data


@pytest.mark.parametrize("edit, match", [
    (_set_score, r"add-2-3_epoch_1.*scores\.match\.value.*'maybe'"),
    (lambda name, data: None if name == "header.json" else data, "no header.json"),
    (lambda name, data: b"{not json" if name.startswith("samples/mul-2-3") else data, "invalid JSON"),
    (_status, "did not finish"),
])
def test_bad_logs(tmp_path, edit, match):
    _rezip(FIXTURES / "alpha.eval", tmp_path / "bad.eval", edit)
    with pytest.raises(InputError, match=match):
        read_results(tmp_path / "bad.eval", format="inspect")


def test_incomplete_on_request(tmp_path):
    _rezip(FIXTURES / "alpha.eval", tmp_path / "c.eval", _status)
    assert len(read_results(tmp_path / "c.eval", allow_incomplete=True)) == 24


def test_damaged_archives(tmp_path, monkeypatch):
    (tmp_path / "x.eval").write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(InputError, match="not a readable .eval archive"):
        read_results(tmp_path / "x.eval", format="inspect")
    truncated = tmp_path / "t.eval"
    data = (FIXTURES / "alpha.eval").read_bytes()
    truncated.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError):
        read_results(truncated, format="inspect")
    monkeypatch.setattr(inspect_logs, "_MAX_MEMBER", 1000)  # a member that expands past the limit
    with pytest.raises(InputError, match="expands to"):
        read_results(FIXTURES / "alpha.eval")


def test_value_mapping_matches_inspect_defaults():
    assert [value_to_float(v) for v in ["C", "I", "P", "N", False, 2.5, "NO", "TRUE", " 3", "inf", [1], None]] == \
        [1.0, 0.0, 0.5, 0.0, 0.0, 2.5, 0.0, 1.0, 3.0, None, None, None]
    assert value_to_float(10 ** 400) is None  # an integer beyond float range: refused, not a crash
