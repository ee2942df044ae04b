"""The format registry (scorebench.io.formats): every format listed once, detected and read
back on shipped fixtures, one error when no format or several match, and the CLI asking the
registry instead of looking at files itself."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import scorebench.io.formats as formats
from scorebench.cli import cli
from scorebench.core.errors import InputError
from scorebench.core.records import Registry
from scorebench.io.formats import (
    FAMILIES,
    Format,
    all_formats,
    detect_format,
    detect_formats,
    get_format,
    read,
)
from scorebench.io.tables import read_table

ROOT = Path(__file__).resolve().parents[1].parent
FIX = ROOT / "tests" / "fixtures"
REF = ROOT.parent / "shared" / "reference" / "trec_eval"

EVERY_FORMAT = {
    "table": ["csv", "tsv", "parquet", "jsonl", "json", "markdown"],
    "trec": ["trec_run", "trec_qrels"],
    "judgments": ["trec_prefs", "trec_qrels_jg", "trec_qrels_prefs"],
    "trec_eval": ["trec_eval"],
    "harness": ["mteb", "lighteval", "lm_eval", "arena", "rewardbench", "helm", "openood", "eee", "hf",
                "lm_eval_mc", "inspect",
                "rewardbench2"],
}


def test_registry_lists_every_format_once_with_working_functions():
    for family in FAMILIES:
        assert [f.name for f in all_formats(family=family)] == EVERY_FORMAT[family]
    for record in all_formats():
        assert record.doc and record.files and (record.yields or not record.readable), record.name
        for role in ("reader", "writer", "detector"):
            if getattr(record, role) is not None:
                assert callable(record.function(role)), (record.name, role)
    assert {f.name for f in all_formats(role="write")} == {"csv", "parquet", "json", "markdown", "trec_eval", "eee",
                                                           "hf"}


def test_every_reader_module_is_registered():
    """A reader module under io/readers without a Format record would be invisible to the CLI."""
    modules = {p.stem for p in (ROOT / "scorebench" / "io" / "readers").glob("*.py") if not p.stem.startswith("_")}
    registered = {f.module.rsplit(".", 1)[-1] for f in all_formats(family="harness")}
    assert modules == registered


def test_unknown_format_name_suggests():
    with pytest.raises(InputError, match=r"unknown format 'parqet'; did you mean 'parquet'"):
        get_format("parqet")
    with pytest.raises(ValueError, match="neither a reader nor a writer"):
        Format(name="x", family="table", files="-", yields="-", doc="-")
    with pytest.raises(ValueError, match="family"):
        Format(name="x", family="nope", files="-", yields="-", doc="-", reader="a:b")


# shipped fixtures (tests/fixtures, and trec_eval's own test files read in place)
SHIPPED = [
    ("arena", FIX / "arena" / "clean_battle_20240101.json"),
    ("helm", FIX / "helm" / "runs"),
    ("inspect", FIX / "inspect" / "alpha.eval"),
    ("lm_eval", FIX / "lm_eval" / "seed0"),
    ("openood", FIX / "openood" / "scores"),
    ("rewardbench", FIX / "rewardbench" / "example-rm.json"),
    ("eee", FIX / "eee" / "scorebench_written"),
    ("csv", FIX / "eee" / "scores.csv"),
    ("trec_run", REF / "results.test"),
    ("trec_qrels", REF / "qrels.test"),
    ("trec_prefs", REF / "prefs.test"),
]


@pytest.mark.parametrize("name, path", SHIPPED, ids=[n for n, _ in SHIPPED])
def test_detect_and_read_shipped_fixture(name, path):
    if not path.exists():
        pytest.skip(f"{path} is not here")
    assert detect_formats(path) == [name]
    assert detect_format(path) == name
    table = read(path)
    assert isinstance(table, pd.DataFrame) and len(table) > 0
    pd.testing.assert_frame_equal(table, get_format(name).read(path))  # auto = named
    if get_format(name).family == "harness":
        assert table.attrs["source_format"] == name


@pytest.mark.parametrize("name, suffix", [("csv", ".csv"), ("parquet", ".parquet"), ("json", ".json"),
                                          ("csv", ".txt")])
def test_table_formats_write_detect_read_round_trip(tmp_path, name, suffix):
    t = pd.DataFrame({"system": ["a", "b"], "y": [1, 0], "p": [0.25, 0.75]})
    path = tmp_path / f"t{suffix}"
    get_format(name).write(t, path)
    assert detect_format(path) == name
    pd.testing.assert_frame_equal(read(path), t, check_dtype=False)


def test_tsv_jsonl_and_markdown(tmp_path):
    (tmp_path / "t.tsv").write_text("system\tvalue\na\t0.5\n")
    (tmp_path / "t.jsonl").write_text('{"system": "a", "value": 0.5}\n')
    for name in ("t.tsv", "t.jsonl"):
        assert read(tmp_path / name)[["system", "value"]].values.tolist() == [["a", 0.5]]
    out = tmp_path / "t.md"
    get_format("markdown").write(pd.DataFrame({"system": ["a"]}), out)
    assert detect_format(out) == "markdown" and out.read_text().startswith("| system |")
    with pytest.raises(InputError, match="cannot tell the format"):
        read(out)  # markdown is written, not read


def test_trec_files_by_suffix_or_layout(tmp_path):
    run = pd.DataFrame({"qid": ["1", "1"], "docid": ["d1", "d2"], "score": [2.0, 1.0], "system": ["bm25"] * 2})
    from scorebench.io.trec import write_trec_run

    for name in ("r.run", "r.txt", "r.test"):
        write_trec_run(run, tmp_path / name)
        assert detect_format(tmp_path / name) == "trec_run"
        assert read(tmp_path / name)[["docid", "score"]].values.tolist() == [["d1", 2.0], ["d2", 1.0]]
    (tmp_path / "q.txt").write_text("1 0 d1 2\n")
    (tmp_path / "p.txt").write_text("q1 u1 s1 d1 3\n")
    (tmp_path / "c.txt").write_text("a b, c d, e f, g h\nx,y,z,w\n")  # commas: CSV with spaces, not TREC
    assert [detect_format(tmp_path / n) for n in ("q.txt", "p.txt", "c.txt")] == ["trec_qrels", "trec_prefs", "csv"]
    (tmp_path / "r.json").write_text('[{"a": 1, "b": 2, "c": 3}]')  # six whitespace fields, but a .json
    assert detect_format(tmp_path / "r.json") == "json"


def test_named_only_formats_are_never_detected_but_read_when_named(tmp_path):
    assert "lm_eval_mc" not in detect_formats(FIX / "lm_eval" / "seed0")
    mc = read(FIX / "lm_eval" / "seed0", format="lm_eval_mc")
    assert mc.attrs["source_format"] == "lm_eval_mc" and {"y", "p_0"} <= set(mc.columns)
    (tmp_path / "jg.txt").write_text("301 0 d1 1\n301 1 d1 0\n")
    assert detect_format(tmp_path / "jg.txt") == "trec_qrels"
    assert read(tmp_path / "jg.txt", format="trec_qrels_jg")["jg"].tolist() == ["0", "1"]


def test_writers_of_harness_formats_round_trip(tmp_path):
    scores = read_table(FIX / "eee" / "scores.csv")
    paths = get_format("eee").write(scores, tmp_path / "eee", timestamp="1700000000")
    assert paths and detect_format(tmp_path / "eee") == "eee"
    back = read(tmp_path / "eee")
    assert len(back) == len(scores)
    one = pd.DataFrame({"system": ["org/m"], "task": ["cais/hle"], "metric": ["accuracy"], "value": [0.2]})
    get_format("hf").write(one, tmp_path / "hf")
    assert detect_format(tmp_path / "hf") == "hf"
    assert read(tmp_path / "hf")[["system", "value"]].values.tolist() == [["org/m", 0.2]]


def test_mteb_and_rewardbench2_made_here(tmp_path):
    root = tmp_path / "mteb" / "org__model" / "rev"
    root.mkdir(parents=True)
    entry = {"hf_subset": "default", "languages": ["eng-Latn"], "main_score": 0.5}
    (root / "BIOSSES.json").write_text(json.dumps({"task_name": "BIOSSES", "mteb_version": "1.18.0",
                                                   "scores": {"test": [entry]}}))
    assert detect_format(tmp_path / "mteb") == "mteb"
    assert read(tmp_path / "mteb")["value"].tolist() == [0.5]
    rb2 = tmp_path / "rb2"
    rb2.mkdir()
    (rb2 / "rm.json").write_text(json.dumps({"id": ["f1"], "subset": ["Math"], "scores": [[2.0, 1.0, 0.0, 0.5]],
                                             "num_correct": [1], "model": "org/rm", "model_type": "x"}))
    assert detect_format(rb2) == "rewardbench2"
    assert read(rb2)["correct"].tolist() == [1.0]


def test_no_format_matches_one_error(tmp_path):
    path = tmp_path / "data.xyz"
    path.write_text("a;b\n1;2\n")
    with pytest.raises(InputError) as info:
        detect_format(path)
    msg = str(info.value)
    assert msg.startswith(f"{path}: cannot tell the format: not a file that any of the formats ")
    assert "csv" in msg and "trec_run" in msg and "mteb" in msg
    res = CliRunner().invoke(cli, ["evaluate", str(path), "-m", "brier_score"])
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1, res.output
    assert f"{path}: cannot tell the format" in res.output and "csv" in res.output


@pytest.fixture
def twin_arena(monkeypatch):
    """A second harness format whose detector also takes Arena files (as a clashing plugin would)."""
    formats.load_formats()
    twin = Registry("format")
    for name, record in formats.FORMATS.items():
        twin.add(name, record)
    twin.add("arena_twin", Format(name="arena_twin", family="harness", files="-", yields="battles", doc="-",
                                  reader="scorebench.io.readers.arena:read",
                                  detector="scorebench.io.readers.arena:detect", content_first=True))
    monkeypatch.setattr(formats, "FORMATS", twin)


def test_several_formats_match_one_error(twin_arena):
    path = FIX / "arena" / "clean_battle_20240101.json"
    assert detect_formats(path) == ["arena", "arena_twin"]
    with pytest.raises(InputError, match=r"it matches several formats \(arena, arena_twin\); name one of them"):
        detect_format(path)
    res = CliRunner().invoke(cli, ["aggregate", str(path)])
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1, res.output
    assert f"error: {path}: cannot tell the format: it matches several formats (arena, arena_twin)" in res.output
    assert "--from FORMAT" in res.output
    assert get_format("arena").read(path).attrs["source_format"] == "arena"  # naming one still works


def test_import_help_lists_the_registry():
    res = CliRunner().invoke(cli, ["import", "--help"])
    assert res.exit_code == 0
    for record in all_formats(family="harness"):
        assert f"  {record.name}: {record.doc}" in res.output
        assert record.name in res.output.split("--from [")[1].split("]")[0]
    export = CliRunner().invoke(cli, ["export", "--help"])
    assert "[eee|hf]" in export.output


def test_import_reads_through_the_registry(tmp_path):
    out = tmp_path / "battles.csv"
    res = CliRunner().invoke(cli, ["import", str(FIX / "arena" / "clean_battle_20240101.json"), "-o", str(out)])
    assert res.exit_code == 0, res.output
    np.testing.assert_array_equal(read_table(out).columns[:3], ["a", "b", "winner"])


def _imports(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            yield node.module, [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, []


def test_cli_never_looks_at_files_itself():
    sniffers = {"looks_like_trec", "looks_like_prefs", "first_data_fields", "trec_layout", "detect_run",
                "detect_qrels", "detect_prefs", "detect_results_format"}
    for path in sorted((ROOT / "scorebench" / "cli").glob("*.py")):
        for _, names in _imports(path):
            assert not sniffers & set(names), f"{path.name} imports {sorted(sniffers & set(names))}"


def test_no_private_name_crosses_into_or_inside_io_and_aggregate_never_imports_io():
    for path in sorted((ROOT / "scorebench").rglob("*.py")):
        for module, names in _imports(path):
            if module.startswith("scorebench.io"):
                private = [n for n in names if n.startswith("_")]
                assert not private, f"{path.relative_to(ROOT)} imports {private} from {module}"
            if path.is_relative_to(ROOT / "scorebench" / "aggregate"):
                assert not module.startswith("scorebench.io"), f"{path.relative_to(ROOT)} imports {module}"
