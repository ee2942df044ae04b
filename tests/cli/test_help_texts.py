"""Help and listing texts say what is true and stay readable (issue 35 item 5)."""

from __future__ import annotations

import json

import pandas as pd
from click.testing import CliRunner

from scorebench.cli import cli
from scorebench.cli.metrics_cmd import shorten
from scorebench.core.registry import all_metrics, list_metrics
from scorebench.core.stats import INTERVAL_METHODS


def _run(*args):
    res = CliRunner().invoke(cli, list(args))
    assert res.exit_code == 0, res.output
    return res.output


def test_metrics_listing_shows_the_interval_rule_and_what_it_covers():
    out = _run("metrics", "--family", "generative")
    header = out.splitlines()[0].split()
    assert "interval" in header
    assert "interval_covers" in header
    assert "half_sampling" in out and "estimator mean at this n" in out and "population value" in out
    table = list_metrics()
    assert set(table["interval"]) <= set(INTERVAL_METHODS) | {"wilson"} and table["interval_covers"].notna().all()
    assert table.set_index("name").loc["accuracy", "interval"] == "wilson"
    records = json.loads(_run("metrics", "--format", "json"))
    assert {"interval", "interval_covers"} <= set(records[0])


def test_citations_are_not_cut_mid_word():
    out = _run("metrics")
    full = {m.name: " ".join(m.citation.split()) for m in all_metrics()}
    lines = out.split("\n\nintervals cover:")[0].splitlines()[1:]
    checked = 0
    for line in lines:
        name = line.split()[0]
        if full.get(name) and len(full[name]) > 60:
            short = shorten(full[name])
            assert short in line and short.endswith(" ...")
            assert full[name].startswith(short[:-4]) and full[name][len(short) - 4] == " "
            checked += 1
    assert checked > 10


def test_import_help_is_true():
    out = _run("import", "--help")
    assert "MTEB, ..." not in out and "# key: value" not in out
    assert ".meta.json" in " ".join(out.split()) and "--skipped" in out


def test_list_methods_lines_are_wrapped():
    out = _run("aggregate", "--list-methods")
    assert max(len(line) for line in out.splitlines()) <= 100
    assert "borda (positional; reads: matrix)" in out
    assert "zero" in out  # the missing-score policies are all there, wrapped, not cut


def test_skipped_cells_are_written_by_the_cli(tmp_path, reference_dir):
    target = tmp_path / "skipped.csv"
    res = CliRunner().invoke(cli, ["import", str(reference_dir / "mteb" / "results"), "--from", "mteb",
                                   "-o", str(tmp_path / "t.parquet"), "--skipped", str(target)])
    assert res.exit_code == 0, res.output
    assert "attrs[" not in res.output and f"listed in {target}" in res.output
    skipped = pd.read_csv(target)
    assert list(skipped.columns) == ["file", "reason"] and len(skipped) > 0
    res = CliRunner().invoke(cli, ["import", str(reference_dir / "mteb" / "results"), "--from", "mteb",
                                   "-o", str(tmp_path / "t2.parquet")])
    assert "--skipped FILE" in res.output and "attrs[" not in res.output
