"""Readers and writers: formats, atomic writes, and fuzzing with malformed input."""

from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import scorebench
from scorebench.core.errors import InputError
from scorebench.io.tables import read_meta, read_table, render_markdown, write_table

FUZZ_EXAMPLES = 150  # per fuzz test; four fuzz tests => 600 malformed inputs per run
fuzz_counter = {"cases": 0}


def _table() -> pd.DataFrame:
    return pd.DataFrame({"system": ["a", "a", "b"], "y": [1, 0, 1], "p": [0.9, 0.2, 0.5]})


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".jsonl", ".json"])
def test_round_trip(tmp_path, suffix):
    path = tmp_path / f"t{suffix}"
    t = _table()
    if suffix == ".jsonl":
        path.write_text("\n".join(json.dumps(r) for r in t.to_dict("records")))
    elif suffix == ".json":
        write_table(t, path, meta={"seed": 1})
    else:
        write_table(t, path, meta={"seed": 1})
    back = read_table(path)
    pd.testing.assert_frame_equal(back.reset_index(drop=True), t, check_dtype=False)


def test_csv_is_plain_and_metadata_goes_to_a_sidecar(tmp_path):
    t = _table()
    t.attrs["seed"] = 7
    t.attrs["bootstrap"] = "percentile, 1000 rounds"
    path = write_table(t, tmp_path / "s.csv")
    assert path.read_text().startswith("system,y,p\n")
    pd.testing.assert_frame_equal(pd.read_csv(path), t)  # default arguments, no comment handling
    assert read_meta(path) == {"bootstrap": "percentile, 1000 rounds", "seed": 7}
    assert sorted(os.listdir(tmp_path)) == ["s.csv", "s.csv.meta.json"]
    for suffix in (".parquet", ".json"):
        assert read_meta(write_table(t, tmp_path / f"s{suffix}"))["seed"] == 7


def test_older_csv_with_comment_lines_still_reads(tmp_path):
    path = tmp_path / "old.csv"
    path.write_text("# seed: 7\n# scorebench: 0.1.0\nsystem,y,p\na,1,0.9\n")
    assert read_table(path).shape == (1, 3)
    assert read_meta(path) == {"seed": "7", "scorebench": "0.1.0"}


def test_written_files_follow_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        path = write_table(_table(), tmp_path / "m.csv")
    finally:
        os.umask(old)
    assert oct(path.stat().st_mode & 0o777) == oct(0o644)


def test_stale_temp_files_of_a_killed_writer_are_removed(tmp_path):
    import subprocess
    import sys

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    litter = tmp_path / f".out.csv.{dead.pid}.0badc0de.scorebench.tmp"
    litter.write_text("half a file")
    live = tmp_path / f".out.csv.{os.getpid()}.feedf00d.scorebench.tmp"  # a writer still running
    live.write_text("being written")
    write_table(_table(), tmp_path / "out.csv")
    assert not litter.exists() and live.exists()


def test_markdown_escapes_untrusted_names(tmp_path):
    t = pd.DataFrame({"system": ["<script>alert(1)</script>", "a|b\nc"], "value": [0.5, 0.25]})
    md = render_markdown(t)
    assert "<script>" not in md and "&lt;script&gt;" in md
    assert "a\\|b c" in md
    assert len(md.splitlines()) == 4


def test_write_is_atomic_on_failure(tmp_path, monkeypatch):
    path = tmp_path / "out.csv"
    path.write_text("old content\n")

    def boom(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(pd.DataFrame, "to_csv", boom)
    with pytest.raises(RuntimeError):
        write_table(_table(), path)
    assert path.read_text() == "old content\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.csv"]  # no temporary file, no sidecar


@pytest.mark.parametrize("content, message", [
    (b"", "empty"),
    (b"system,y,y\na,1,0\n", "duplicate column"),
    (b"system,y,p\na,1,0.5,7,8\n", "malformed"),
    (b"\xff\xfe\x00s\x00y", "not valid utf-8"),
])
def test_bad_csv_gets_clear_error(tmp_path, content, message):
    path = tmp_path / "bad.csv"
    path.write_bytes(content)
    with pytest.raises(InputError, match=message):
        read_table(path)


def test_bad_jsonl_names_the_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"y": 1, "p": 0.5}\n{"y": 1, "p": \n')
    with pytest.raises(InputError, match="line 2"):
        read_table(path)
    path.write_text('{"y": NaN, "p": 0.5}\n')
    with pytest.raises(InputError, match="NaN"):
        read_table(path)


def test_unknown_suffix_and_missing_file(tmp_path):
    with pytest.raises(InputError, match="cannot tell the format"):
        read_table(tmp_path / "x.xyz")
    with pytest.raises(FileNotFoundError):
        read_table(tmp_path / "missing.csv")


def test_huge_and_infinite_numbers_are_refused_by_the_kind(tmp_path):
    path = tmp_path / "huge.csv"
    path.write_text("system,y,p\na,1,1e999\na,0,0.5\n")
    with pytest.raises(InputError, match="infinite"):
        scorebench.evaluate(read_table(path), "brier_score", n_boot=0)


def _check_reader_and_engine(path) -> None:
    """A malformed file yields a table or an InputError — never another exception."""
    fuzz_counter["cases"] += 1
    try:
        table = read_table(path)
    except InputError:
        return
    try:
        scores = scorebench.evaluate(table, ["brier_score", "log_score"], n_boot=20)
    except InputError:
        return
    assert np.isfinite(scores["value"]).all()


_settings = settings(max_examples=FUZZ_EXAMPLES, deadline=None,
                     suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
_cells = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**30, 10**30),
                   st.text(max_size=6), st.sampled_from(["", "nan", "inf", "-", "1e999", "0.5", "1"]))


@_settings
@given(raw=st.binary(max_size=300))
def test_fuzz_random_bytes_csv(tmp_path_factory, raw):
    path = tmp_path_factory.mktemp("fz") / "t.csv"
    path.write_bytes(b"system,y,p\n" + raw)
    _check_reader_and_engine(path)


@_settings
@given(rows=st.lists(st.lists(_cells, min_size=1, max_size=5), max_size=8),
       header=st.lists(st.sampled_from(["system", "y", "p", "id", "y", "x"]), min_size=1, max_size=5))
def test_fuzz_structured_csv(tmp_path_factory, rows, header):
    path = tmp_path_factory.mktemp("fz") / "t.csv"
    lines = [",".join(header)] + [",".join(map(str, r)) for r in rows]
    path.write_text("\n".join(lines), encoding="utf-8")
    _check_reader_and_engine(path)


@_settings
@given(records=st.lists(st.dictionaries(st.sampled_from(["system", "y", "p", "id"]), _cells, max_size=4),
                        max_size=8),
       garbage=st.text(max_size=20))
def test_fuzz_jsonl(tmp_path_factory, records, garbage):
    path = tmp_path_factory.mktemp("fz") / "t.jsonl"
    body = "\n".join(json.dumps(r, allow_nan=True) for r in records)
    path.write_text(body + ("\n" + garbage if garbage.strip() else ""), encoding="utf-8")
    _check_reader_and_engine(path)


@_settings
@given(raw=st.binary(max_size=400))
def test_fuzz_parquet_bytes(tmp_path_factory, raw):
    path = tmp_path_factory.mktemp("fz") / "t.parquet"
    good = tmp_path_factory.mktemp("ok") / "g.parquet"
    write_table(_table(), good)
    data = good.read_bytes()
    # Corrupt a valid file: keep its magic bytes, splice random bytes into the middle.
    cut = len(data) // 2
    path.write_bytes(data[:cut] + raw + data[cut + len(raw):])
    _check_reader_and_engine(path)


def test_fuzz_cases_recorded():
    """Runs last in this module: the fuzz tests above ran their examples."""
    assert fuzz_counter["cases"] >= 4, fuzz_counter
    print(f"fuzz cases run: {fuzz_counter['cases']}")


def test_no_temp_files_left(tmp_path):
    write_table(_table(), tmp_path / "a.parquet")
    write_table(_table(), tmp_path / "a.md")
    assert sorted(os.listdir(tmp_path)) == ["a.md", "a.parquet"]
