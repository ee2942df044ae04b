"""Board integrity: a --check that means "same results", parameterised metrics on boards,
no empty sections, a regenerate hint that works, and plain CSV everywhere."""

from __future__ import annotations

import base64
import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from scorebench.cli import cli
from scorebench.core.errors import InputError
from scorebench.leaderboard import ATOL, RTOL, board_files, build_board, diff_files, load_spec

ROOT = Path(__file__).resolve().parents[2]
BOARDS = ROOT / "leaderboards"


# --- the tolerant comparison ----------------------------------------------------------------


def _files(**texts: str) -> dict[str, bytes]:
    return {name.replace("_", "."): text.encode() for name, text in texts.items()}


CSV = "section,system,metric,value,ci_low,rank\ns,a,fid,0.2918001234,0.25,1\ns,b,fid,0.6554,0.6,2\n"


def _diff(old: dict[str, bytes], new: dict[str, bytes]):
    return diff_files("b", old, new, Path("b"))


def test_numbers_within_the_tolerance_pass_and_a_real_change_fails():
    moved = CSV.replace("0.2918001234", f"{0.2918001234 * (1 + 1e-7):.10g}")
    result = _diff({"board.csv": CSV.encode()}, {"board.csv": moved.encode()})
    assert result.ok and result.tolerated == ("board.csv",)
    changed = CSV.replace("0.2918001234", f"{0.2918001234 * (1 + 1e-4):.10g}")
    result = _diff({"board.csv": CSV.encode()}, {"board.csv": changed.encode()})
    assert not result.ok
    assert "data row 1, column 'value': committed '0.2918001234', rebuilt '0.2918293034" in result.summary()


def test_ranks_text_and_order_must_match_exactly():
    swapped_rank = CSV.replace(",1\n", ",2\n", 1)
    assert "column 'rank'" in _diff({"board.csv": CSV.encode()}, {"board.csv": swapped_rank.encode()}).summary()
    renamed = CSV.replace(",a,", ",A,")
    assert not _diff({"board.csv": CSV.encode()}, {"board.csv": renamed.encode()}).ok
    lines = CSV.splitlines()
    reordered = "\n".join([lines[0], lines[2], lines[1]]) + "\n"
    assert not _diff({"board.csv": CSV.encode()}, {"board.csv": reordered.encode()}).ok


def test_json_numbers_are_tolerant_but_integers_and_strings_exact():
    doc = {"sections": [{"rows": [["1", "0.2918 [0.25, 0.31]"]], "data": [{"value": 0.2918001234, "rank": 1}]}]}
    near = json.loads(json.dumps(doc))
    near["sections"][0]["data"][0]["value"] = 0.2918001234 * (1 + 5e-7)
    near["sections"][0]["rows"][0][1] = "0.2919 [0.25, 0.31]"  # a rounding flip in the last digit
    assert _diff({"board.json": json.dumps(doc).encode()}, {"board.json": json.dumps(near).encode()}).ok
    far = json.loads(json.dumps(doc))
    far["sections"][0]["rows"][0][1] = "0.2921 [0.25, 0.31]"  # three units: a real change
    assert not _diff({"board.json": json.dumps(doc).encode()}, {"board.json": json.dumps(far).encode()}).ok
    rank = json.loads(json.dumps(doc))
    rank["sections"][0]["data"][0]["rank"] = 2
    assert not _diff({"board.json": json.dumps(doc).encode()}, {"board.json": json.dumps(rank).encode()}).ok


def test_rendered_text_and_embedded_svg_allow_one_unit_in_the_last_digit():
    def page(svg: str, cell: str) -> bytes:
        data = base64.b64encode(svg.encode()).decode()
        return f'<td>{cell}</td><img src="data:image/svg+xml;base64,{data}">'.encode()

    old = page('<path d="M 10.5 20 L 30.25 40"/>', "1 (1–3)")
    assert _diff({"index.html": old}, {"index.html": page('<path d="M 10.6 20 L 30.25 40"/>', "1 (1–3)")}).ok
    assert not _diff({"index.html": old}, {"index.html": page('<path d="M 10.8 20 L 30.25 40"/>', "1 (1–3)")}).ok
    assert not _diff({"index.html": old}, {"index.html": page('<path d="M 10.5 20 L 30.25 40"/>', "1 (1–4)")}).ok


def test_tolerance_is_stated_in_the_cli_help():
    result = CliRunner().invoke(cli, ["leaderboard", "build", "--help"])
    assert result.exit_code == 0
    assert f"{RTOL:g}" in result.output and f"{ATOL:g}" in result.output


# --- committed boards ---------------------------------------------------------------------


def _committed_boards() -> list[Path]:
    return sorted(p for p in BOARDS.iterdir() if (p / "board.json").is_file())


@pytest.mark.parametrize("board", _committed_boards(), ids=lambda p: p.name)
def test_every_section_of_every_committed_board_has_rows(board):
    doc = json.loads((board / "board.json").read_text(encoding="utf-8"))
    for section in doc["sections"]:
        if section["columns"]:
            assert section["rows"], f"{board.name}: section {section['title']!r} is empty"
    readme = (board / "README.md").read_text(encoding="utf-8")
    assert f"scorebench leaderboard build leaderboards/{board.name}.toml" in readme


@pytest.mark.parametrize("board", _committed_boards(), ids=lambda p: p.name)
def test_committed_board_csv_reads_with_default_pandas(board):
    frame = pd.read_csv(board / "board.csv")
    assert {"section", "system", "value"} <= set(frame.columns) and len(frame) > 0


def test_generative_board_shows_kid_with_intervals():
    doc = json.loads((BOARDS / "generative" / "board.json").read_text(encoding="utf-8"))
    kid = [s for s in doc["sections"] if any(c.startswith("kid") for c in s["columns"])]
    assert kid and len(kid[0]["rows"]) == 6
    values = [r for r in kid[0]["data"] if r["metric"].startswith("kid")]
    assert all(r["ci_low"] is not None and r["ci_high"] is not None for r in values)


# --- parameterised metrics in specs ----------------------------------------------------------


def _table(n: int = 150) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    truth = rng.uniform(0.05, 0.95, n)
    y = rng.binomial(1, truth)
    frames = [pd.DataFrame({"system": s, "id": np.arange(n), "y": y,
                            "p": np.clip(truth + rng.normal(0, noise, n), 0.01, 0.99)})
              for s, noise in (("good", 0.02), ("bad", 0.3))]
    return pd.concat(frames, ignore_index=True)


def _spec(tmp_path: Path, block: str) -> Path:
    _table().to_csv(tmp_path / "preds.csv", index=False)
    path = tmp_path / "b.toml"
    path.write_text('name = "b"\nn_boot = 30\n[[sources]]\nname = "preds"\npath = "preds.csv"\n'
                    '[[evaluate]]\nsource = "preds"\nkind = "binary"\n' + block)
    return path


def test_params_on_a_metric_that_is_not_ranked_by(tmp_path):
    spec = load_spec(_spec(tmp_path, 'metrics = ["brier_score", "ece"]\nrank_by = "brier_score"\n'
                                     'params = { ece = { n_bins = 10 } }\n'))
    section = build_board(spec).sections[0]
    assert "ece(n_bins=10) ↓" in section.columns
    assert set(section.data["metric"]) == {"brier_score", "ece(n_bins=10)"}
    assert section.data["value"].notna().all() and len(section.rows) == 2


@pytest.mark.parametrize("rank_by", ["ece", "ece(n_bins=10)"])
def test_rank_by_a_parameterised_metric(tmp_path, rank_by):
    block = 'metrics = ["brier_score", "ece"]\nrank_by = "' + rank_by + '"\nparams = { ece = { n_bins = 10 } }\n'
    spec = load_spec(_spec(tmp_path, block))
    section = build_board(spec).sections[0]
    ranked = section.data.dropna(subset=["rank"])
    assert set(ranked["metric"]) == {"ece(n_bins=10)"}
    assert "Ranked by ece(n_bins=10)" in section.note


@pytest.mark.parametrize("block, message", [
    ('metrics = ["brier_score"]\nrank_by = "ece"\n', "rank_by 'ece' is not one of the metrics"),
    ('metrics = ["brier_scor"]\n', "did you mean 'brier_score'"),
    ('metrics = ["ece"]\nparams = { ece = { n_bin = 10 } }\n', "unknown parameter"),
])
def test_spec_errors_for_metrics_that_name_nothing(tmp_path, block, message):
    with pytest.raises(InputError, match=message):
        load_spec(_spec(tmp_path, block))


def test_a_build_with_an_empty_section_fails(tmp_path, monkeypatch):
    from scorebench.leaderboard import build as build_module

    spec = load_spec(_spec(tmp_path, 'metrics = ["brier_score"]\n'))
    original = build_module._task_section

    def emptied(*args, **kwargs):
        from dataclasses import replace

        return replace(original(*args, **kwargs), rows=())

    monkeypatch.setattr(build_module, "_task_section", emptied)
    with pytest.raises(InputError, match="have no rows"):
        build_board(spec)


# --- regenerate hint ---------------------------------------------------------------------------


def test_regenerate_hint_is_relative_to_the_project_root(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "boards").mkdir()
    spec_path = _spec(tmp_path / "boards", 'metrics = ["brier_score"]\n')
    spec = load_spec(spec_path)
    assert spec.command_path == "boards/b.toml"
    readme = board_files(build_board(spec))["README.md"].decode()
    assert "scorebench leaderboard build boards/b.toml" in readme


def test_the_committed_hint_works_from_the_repository_root_and_from_leaderboards():
    for cwd, arg in ((ROOT, "leaderboards/retrieval.toml"), (ROOT, "retrieval.toml"), (BOARDS, "retrieval.toml")):
        out = subprocess.run([sys.executable, "-m", "scorebench.cli", "leaderboard", "build", "--check", arg],
                             cwd=cwd, capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, (cwd, arg, out.stderr)
        assert "retrieval: up to date" in out.stdout + out.stderr


# --- another thread count is another machine ------------------------------------------------------


FEATURES_SPEC = """
name = "feat"
n_boot = 20
[[sources]]
name = "f"
path = "features.parquet"
[[evaluate]]
source = "f"
kind = "features"
metrics = ["fid", "precision", "vendi_score"]
"""


def test_a_board_built_with_one_thread_checks_against_one_built_with_two(tmp_path):
    rng = np.random.default_rng(0)
    d = 48
    frames = [pd.DataFrame(rng.normal(0, 1, (300, d)), columns=[f"f{i}" for i in range(d)]).assign(system="real")]
    for name, shift in (("near", 0.05), ("far", 0.4)):
        frames.append(pd.DataFrame(rng.normal(shift, 1, (300, d)), columns=[f"f{i}" for i in range(d)])
                      .assign(system=name))
    table = pd.concat(frames, ignore_index=True)
    table[["system"] + [f"f{i}" for i in range(d)]].to_parquet(tmp_path / "features.parquet")
    (tmp_path / "feat.toml").write_text(FEATURES_SPEC)

    def run(threads: int, *args: str) -> subprocess.CompletedProcess:
        env = {**os.environ, "OPENBLAS_NUM_THREADS": str(threads), "OMP_NUM_THREADS": str(threads),
               "MKL_NUM_THREADS": str(threads)}
        return subprocess.run([sys.executable, "-m", "scorebench.cli", "leaderboard", "build", "feat.toml", *args],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)

    built = run(1)
    assert built.returncode == 0, built.stderr
    checked = run(2, "--check")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "feat: up to date" in checked.stdout + checked.stderr
    # ... and the check is not blind: a changed committed number is reported
    csv_path = tmp_path / "feat" / "board.csv"
    rows = list(csv.reader(csv_path.read_text().splitlines()))
    value = rows[0].index("value")
    first_fid = next(r for r in rows[1:] if r[rows[0].index("metric")] == "fid")
    first_fid[value] = repr(float(first_fid[value]) * 1.001)
    with open(csv_path, "w", newline="") as handle:
        csv.writer(handle, lineterminator="\n").writerows(rows)
    failed = run(2, "--check")
    assert failed.returncode == 1 and "column 'value'" in failed.stderr


@pytest.mark.parametrize("board", _committed_boards(), ids=lambda p: p.name)
def test_every_committed_value_lies_inside_its_own_interval(board):
    doc = json.loads((board / "board.json").read_text(encoding="utf-8"))
    outside = [(s["key"], r.get("system"), r.get("metric"), r["value"], r["ci_low"], r["ci_high"])
               for s in doc["sections"] for r in s["data"]
               if isinstance(r.get("value"), (int, float)) and isinstance(r.get("ci_low"), (int, float))
               and isinstance(r.get("ci_high"), (int, float))
               and not r["ci_low"] - 1e-12 <= r["value"] <= r["ci_high"] + 1e-12]
    assert not outside, outside[:5]
