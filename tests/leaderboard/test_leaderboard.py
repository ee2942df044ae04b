"""Leaderboards: specs, build, rendering (escaping, determinism), --check, CLI, Friedman/Nemenyi."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats

from scorebench.cli import cli
from scorebench.core.errors import InputError
from scorebench.leaderboard import board_files, build_board, diff_board, load_spec, write_board
from scorebench.leaderboard.build import overlap_rank_intervals, tie_bands
from scorebench.leaderboard.friedman import friedman_nemenyi
from scorebench.leaderboard.plots import label

EVIL = "<script>alert(1)</script>"
PIPE = "pipe|name\nwith newline"


def _binary_table(systems: dict[str, float], n: int = 120, seed: int = 0) -> pd.DataFrame:
    """Binary predictions: each system's forecast is the truth's probability blurred by ``noise``."""
    rng = np.random.default_rng(seed)
    frames = []
    for task in ("t1", "t2", "t3"):
        truth = rng.uniform(0.05, 0.95, n)
        y = rng.binomial(1, truth)
        for system, noise in systems.items():
            p = np.clip(truth + rng.normal(0, noise, n), 0.01, 0.99)
            frames.append(pd.DataFrame({"task": task, "system": system, "id": np.arange(n), "y": y, "p": p}))
    return pd.concat(frames, ignore_index=True)


SPEC = """
name = "toy"
title = "Toy <b>board</b>"
description = "A toy board | with a pipe."
seed = 3
n_boot = 200
digits = 3

[[sources]]
name = "preds"
path = "preds.csv"

[[evaluate]]
source = "preds"
kind = "binary"
metrics = ["brier_score", "log_score", "ece"]

[[compare]]
source = "preds"
metric = "brier_score"
test = "permutation"

[aggregate]
metrics = ["brier_score"]
methods = ["mean", "borda", "copeland"]
n_boot = 100

[[plots]]
type = "reliability"
source = "preds"

[[plots]]
type = "rank_intervals"

[[plots]]
type = "critical_difference"
"""


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    root = tmp_path_factory.mktemp("board")
    table = _binary_table({"good": 0.0, EVIL: 0.15, PIPE: 0.25, "bad": 0.4}, n=200)
    table.to_csv(root / "preds.csv", index=False)
    (root / "toy.toml").write_text(SPEC, encoding="utf-8")
    spec = load_spec(root / "toy.toml")
    board = build_board(spec)
    return root, spec, board


# --- specs ----------------------------------------------------------------------------


@pytest.mark.parametrize("body, message", [
    ('title = "x"', "missing required key 'name'"),
    ('name = "x"\nbogus = 1\n[[sources]]\nname="s"\npath="s.csv"\n[[evaluate]]\nsource="s"\nmetrics=["brier_score"]',
     "unknown key"),
    ('name = "x"\n[[sources]]\nname="s"\npath="s.csv"\n[[evaluate]]\nsource="t"\nmetrics=["brier_score"]',
     "unknown source 't'"),
    ('name = "x"\n[[sources]]\nname="s"\npath="s.csv"\n[[evaluate]]\nsource="s"\nmetrics=["brier_score"]\n'
     'rank_by="ece"', "rank_by 'ece' is not one of the metrics"),
    ('name = "x"\n[[sources]]\nname="s"\npath="s.csv"\n[[evaluate]]\nsource="s"\nmetrics=["brier_score"]\n'
     '[[plots]]\ntype="pie"', "plot type 'pie'"),
    ('name = "x"\nseed = "1"\n[[sources]]\nname="s"\npath="s.csv"\n[[evaluate]]\nsource="s"\nmetrics=["x"]',
     "'seed' expected an integer"),
    ('name = "../up"\n[[sources]]\nname="s"\npath="s.csv"\n[[evaluate]]\nsource="s"\nmetrics=["x"]',
     "plain folder name"),
    ('name = "x"', "needs at least one"),
    ('name = "x"\nci = 1.5\n[[sources]]\nname="s"\npath="s.csv"\n[[evaluate]]\nsource="s"\nmetrics=["x"]',
     "'ci' must be strictly between"),
    ('name = [', "invalid TOML"),
])
def test_spec_errors_name_the_problem(tmp_path, body, message):
    path = tmp_path / "b.toml"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(InputError, match=re.escape(message)):
        load_spec(path)


def test_spec_paths_resolve_against_the_spec_folder(tmp_path):
    (tmp_path / "sub").mkdir()
    path = tmp_path / "sub" / "b.toml"
    path.write_text('name = "b"\nrequires = ["../missing.csv"]\n[[sources]]\nname="s"\npath="../d/s.csv"\n'
                    '[[evaluate]]\nsource="s"\nmetrics=["brier_score"]\n', encoding="utf-8")
    with pytest.raises(InputError, match="outside the spec's folder"):  # confined unless allowed
        load_spec(path)
    spec = load_spec(path, allow_outside=True)
    assert spec.sources[0].path == tmp_path / "sub" / "../d/s.csv"
    assert spec.out_dir == tmp_path / "sub" / "b"
    assert spec.missing_requirements == ((tmp_path / "missing.csv").resolve(),)


# --- the board ------------------------------------------------------------------------


def test_board_ranks_the_systems_by_their_noise(toy):
    _, _, board = toy
    section = next(s for s in board.sections if s.key.startswith("eval0-t1"))
    order = [row[section.columns.index("system")] for row in section.rows]
    assert order[0] == "good" and order[-1] == "bad"
    # every cell carries an interval, every rank a rank interval
    for row in section.rows:
        assert re.fullmatch(r"\d+ \(\d+–\d+\)", row[1])
        assert re.fullmatch(r"\d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\]", row[3])
    ranked = section.data.dropna(subset=["rank"])
    assert (ranked["rank_low"] <= ranked["rank"]).all() and (ranked["rank"] <= ranked["rank_high"]).all()
    agg = next(s for s in board.sections if s.key == "aggregate")
    assert agg.rows[0][0] == "good"
    assert {f.name for f in board.figures} >= {"reliability-t1", "rank-intervals", "critical-difference"}


def test_cell_values_match_evaluate(toy):
    import scorebench

    root, spec, board = toy
    table = pd.read_csv(root / "preds.csv")
    sub = table[table.task == "t2"].drop(columns="task")
    expected = scorebench.evaluate(sub, ["brier_score"], by="system", n_boot=200, seed=3)
    data = next(s for s in board.sections if s.key == "eval0-t2").data
    got = data[data.metric == "brier_score"].set_index("system")
    for row in expected.itertuples():
        assert got.loc[row.system, "value"] == pytest.approx(row.value, rel=1e-12)
        assert got.loc[row.system, "ci_low"] == pytest.approx(row.ci_low, rel=1e-12)


def test_compare_section_uses_the_best_system_as_baseline(toy):
    _, _, board = toy
    section = next(s for s in board.sections if s.key == "compare0-t1")
    assert "vs good" in section.columns[1]
    assert "good" not in [r[0] for r in section.rows]
    assert (section.data["p_holm"] >= section.data["p_value"] - 1e-15).all()


def test_outputs_are_byte_identical_across_builds(toy):
    _, spec, board = toy
    again = build_board(spec)
    assert board_files(board) == board_files(again)


def test_markdown_escapes_untrusted_names_and_keeps_the_table(toy):
    _, _, board = toy
    md = board_files(board)["README.md"].decode()
    assert EVIL not in md and "&lt;script&gt;alert(1)&lt;/script&gt;" in md
    assert "pipe\\|name with newline" in md
    assert "Toy &lt;b&gt;board&lt;/b&gt;" in md
    # every row of every table has as many cells as its header
    for block in re.findall(r"(?:^\|.*\|$\n?)+", md, flags=re.M):
        lines = block.strip().splitlines()
        widths = {len(re.split(r"(?<!\\)\|", line)) for line in lines}
        assert len(widths) == 1, lines


def test_html_escapes_untrusted_names_and_loads_nothing_external(toy):
    _, _, board = toy
    page = board_files(board)["index.html"].decode()
    # three script elements only: the <head> one-liner and the page script, both named by their hash
    # in the CSP, and the inert JSON data
    from scorebench.leaderboard import interactive

    assert page.lower().count("<script") == 3 and page.count("</script>") == 3
    assert f'<script type="application/json" id="sb-data">' in page and f"<script>{interactive.script()}</script>" in page
    assert interactive.head_block() in page.split("</head>")[0]
    assert f"script-src {interactive.script_hash(interactive.HEAD_SCRIPT)} {interactive.script_hash()}\"" in page
    assert "<script>alert(1)" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "pipe|name\nwith newline" in page
    assert not re.search(r"(src|href)=\"(?!data:image/svg\+xml;base64,)", page)
    shown = re.sub(r' title="[^"]*"', "", page)  # a citation's URL in a tooltip loads nothing
    assert "http://" not in shown.replace("http://www.w3.org", "") and "https://" not in shown
    assert page.count("<figure") == len(board.figures)


def test_csv_and_json_carry_the_numbers_and_provenance(tmp_path, toy):
    root, _, board = toy
    files = board_files(board)
    doc = json.loads(files["board.json"])
    assert doc["provenance"]["seed"] == "3"
    assert "sha256" in doc["provenance"]["source preds"]
    csv_text = files["board.csv"].decode()
    assert csv_text.startswith("section,")  # plain CSV, header first: every reader takes it
    (tmp_path / "b.csv").write_bytes(files["board.csv"])
    frame = pd.read_csv(tmp_path / "b.csv")
    assert set(frame["system"].dropna()) >= {"good", "bad", EVIL}
    assert not re.search(r"\d{2}:\d{2}:\d{2}", files["README.md"].decode())  # no timestamps


def test_svg_plots_are_deterministic_and_escape_labels(toy):
    _, _, board = toy
    fig = next(f for f in board.figures if f.name == "rank-intervals")
    assert "<script" not in fig.svg and "&lt;script&gt;" in fig.svg
    assert "<dc:date>" not in fig.svg
    assert label("a$x$\nb") == "a\\$x\\$ b"


def test_check_passes_then_reports_a_changed_file(tmp_path, toy):
    _, spec, board = toy
    out = tmp_path / "out"
    write_board(board, out)
    assert diff_board(board, out).ok
    readme = out / "README.md"
    readme.write_text(readme.read_text().replace("good", "g00d", 1))
    (out / "plots" / "stale.svg").write_text("<svg/>")
    (out / "board.csv").unlink()
    diff = diff_board(board, out)
    assert not diff.ok
    assert diff.changed == ("README.md",) and diff.extra == ("plots/stale.svg",) and diff.missing == ("board.csv",)
    summary = diff.summary()
    assert "line" in summary and "g00d" in summary and "committed" in summary and "rebuilt" in summary


def test_cli_build_and_check(tmp_path, toy):
    root, _, _ = toy
    light = root / "light.toml"  # a quick board: the CLI is under test here, not the statistics
    light.write_text('name = "light"\nn_boot = 20\n[[sources]]\nname = "preds"\npath = "preds.csv"\n'
                     '[[evaluate]]\nsource = "preds"\nmetrics = ["brier_score"]\n', encoding="utf-8")
    runner = CliRunner()
    out = tmp_path / "boards"
    result = runner.invoke(cli, ["leaderboard", "build", str(light), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert (out / "light" / "index.html").is_file()
    ok = runner.invoke(cli, ["leaderboard", "build", str(light), "--out", str(out), "--check"])
    assert ok.exit_code == 0, ok.output
    (out / "light" / "board.json").write_text("{}")
    bad = runner.invoke(cli, ["leaderboard", "build", str(light), "--out", str(out), "--check"])
    assert bad.exit_code == 1
    assert "changed: board.json" in bad.output and "out of date" in bad.output


def test_cli_skips_a_board_whose_external_data_is_absent(tmp_path):
    spec = tmp_path / "ext.toml"
    spec.write_text('name = "ext"\nrequires = ["nowhere/GLUE.csv"]\n[[sources]]\nname = "g"\n'
                    'path = "nowhere/GLUE.csv"\n[aggregate]\nsource = "g"\nmethods = ["borda"]\n')
    result = CliRunner().invoke(cli, ["leaderboard", "build", str(spec)])
    assert result.exit_code == 0 and "skipped" in result.output
    assert not (tmp_path / "ext").exists()


def test_cli_reports_bad_spec_in_one_line(tmp_path):
    spec = tmp_path / "bad.toml"
    spec.write_text('name = "x"\n[[sources]]\nname="s"\npath="nothere.csv"\n[[evaluate]]\nsource="s"\n'
                    'metrics=["brier_score"]\n')
    result = CliRunner().invoke(cli, ["leaderboard", "build", str(spec)])
    assert result.exit_code == 2
    assert "source file(s) not found" in result.output and "Traceback" not in result.output


# --- rank helpers and Friedman/Nemenyi --------------------------------------------------


def test_tie_bands_and_overlap_intervals():
    assert tie_bands(np.array([1, 2, 3]), np.array([1, 2, 3])).tolist() == [1, 2, 3]
    assert tie_bands(np.array([1, 1, 1]), np.array([3, 3, 3])).tolist() == [1, 1, 1]
    lo, hi = overlap_rank_intervals(np.array([0.1, 0.2, 0.9]), np.array([0.05, 0.15, 0.8]),
                                    np.array([0.16, 0.3, 1.0]), False)
    assert lo.tolist() == [1, 1, 3] and hi.tolist() == [2, 2, 3]


def test_friedman_matches_scipy_and_demsar_table():
    rng = np.random.default_rng(1)
    m = rng.normal(size=(5, 12)) + np.arange(5)[:, None] * 0.5
    res = friedman_nemenyi(m, tuple("abcde"))
    assert res.statistic == pytest.approx(stats.friedmanchisquare(*m).statistic, rel=1e-10)
    # Demsar (2006), Table 5: q_0.05 = 2.728 for k = 5
    assert res.critical_difference == pytest.approx(2.728 * np.sqrt(5 * 6 / (6 * 12)), abs=2e-3)
    assert res.average_ranks.sum() == pytest.approx(5 * 6 / 2)
    with pytest.raises(InputError):
        friedman_nemenyi(m[:, :1], tuple("abcde"))


# --- a real browser ---------------------------------------------------------------------


def _chromium() -> str | None:
    import shutil

    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


class _DomSummary:
    """Counts tables, rows, inline SVG images and scripts; collects table-cell text."""

    def __init__(self, markup: str) -> None:
        from html.parser import HTMLParser

        summary = self
        self.tables = self.rows = self.svg_images = self.scripts = 0
        self.cells: list[str] = []

        class Parser(HTMLParser):
            in_cell = False

            def handle_starttag(self, tag, attrs):
                attrs = dict(attrs)
                if tag == "table":
                    summary.tables += 1
                elif tag == "tr":
                    summary.rows += 1
                elif tag == "script":
                    summary.scripts += 1
                elif tag == "img" and (attrs.get("src") or "").startswith("data:image/svg+xml;base64,"):
                    summary.svg_images += 1
                elif tag == "td":
                    self.in_cell = True
                    summary.cells.append("")

            def handle_endtag(self, tag):
                if tag == "td":
                    self.in_cell = False

            def handle_data(self, data):
                if self.in_cell:
                    summary.cells[-1] += data

        Parser().feed(markup)


def test_html_renders_in_headless_chromium(tmp_path, toy):
    import subprocess

    browser = _chromium()
    if browser is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install -y chromium); browser rendering not checked")
    _, _, board = toy
    write_board(board, tmp_path / "site")
    page = (tmp_path / "site" / "index.html").resolve()
    flags = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run([*flags, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    summary = _DomSummary(dom.stdout)
    expected_rows = sum(len(s.rows) + 1 for s in board.sections if s.columns)
    assert summary.tables == sum(1 for s in board.sections if s.columns)
    assert summary.rows == expected_rows  # no row was broken up by a name
    assert summary.svg_images == len(board.figures) > 0
    assert summary.scripts == 3  # the hashed head one-liner and page script, and the inert JSON data
    assert EVIL in summary.cells and PIPE in summary.cells  # shown as text, not markup
    shot = tmp_path / "shot.png"
    run = subprocess.run([*flags, f"--screenshot={shot}", "--window-size=1200,2400", "--hide-scrollbars",
                          page.as_uri()], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and shot.is_file(), run.stderr[-2000:]
    import matplotlib.image

    pixels = matplotlib.image.imread(str(shot))
    assert pixels.shape[0] >= 2000 and pixels[..., :3].std() > 0.05  # a page was painted, not a blank


def test_ood_board_with_roc_and_pr_curves(tmp_path):
    rng = np.random.default_rng(5)
    frames = []
    for system, shift in (("strong", 2.5), ("weak", 0.5), (EVIL, 1.5)):
        is_ood = np.r_[np.zeros(150, int), np.ones(150, int)]
        frames.append(pd.DataFrame({"system": system, "is_ood": is_ood,
                                    "score": rng.normal(size=300) + shift * is_ood}))
    pd.concat(frames).to_csv(tmp_path / "ood.csv", index=False)
    (tmp_path / "ood.toml").write_text(
        'name = "ood"\nn_boot = 50\n[[sources]]\nname = "s"\npath = "ood.csv"\n[[evaluate]]\nsource = "s"\n'
        'kind = "ood"\nmetrics = ["auroc", "fpr_at_95_tpr"]\n[[plots]]\ntype = "roc"\nsource = "s"\n'
        '[[plots]]\ntype = "pr"\nsource = "s"\n', encoding="utf-8")
    board = build_board(load_spec(tmp_path / "ood.toml"))
    section = board.sections[0]
    assert [row[2] for row in section.rows] == ["strong", EVIL, "weak"]
    assert "confidence-interval overlap" in section.note  # AUROC is set-level
    assert [f.name for f in board.figures] == ["roc-all", "pr-all"]
    assert all("<script" not in f.svg for f in board.figures)
