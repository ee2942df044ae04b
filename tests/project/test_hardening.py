"""Red-team tests (issue 22): hostile models, specs, names and sizes; no tracebacks, no partial outputs.

CLI cases run in a subprocess (``python -m scorebench.cli``), so what a user sees on stderr
is what is checked: one ``error:`` line and exit status 2. Huge sizes are only *asked for*;
nothing here allocates more than a few megabytes.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import re
import signal
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from scorebench.cli import cli
from scorebench.core.errors import InputError
from scorebench.io.tables import escape_markdown, safe_cell, write_table
from scorebench.leaderboard import build_board, load_spec, write_board
from scorebench.leaderboard.output import MANIFEST, BoardLockedError, write_board_files


def sb(*args: str, cwd: Path | None = None, timeout: int = 300) -> subprocess.CompletedProcess:
    """Run the CLI in a fresh interpreter (PYTHONPATH is inherited, so this checkout is used)."""
    return subprocess.run([sys.executable, "-m", "scorebench.cli", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, timeout=timeout)


def one_line_error(res: subprocess.CompletedProcess, *needles: str) -> str:
    assert res.returncode == 2, (res.returncode, res.stdout[-500:], res.stderr[-2000:])
    assert "Traceback" not in res.stderr and "Warning" not in res.stderr, res.stderr[-2000:]
    errors = [line for line in res.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, res.stderr
    for needle in needles:
        assert needle in errors[0], errors[0]
    return errors[0]


def _binary_csv(path: Path, systems=("a", "b"), tasks=(None,), n: int = 30) -> Path:
    rng = np.random.default_rng(0)
    frames = []
    for task in tasks:
        y = rng.integers(0, 2, n)
        for s in systems:
            frame = pd.DataFrame({"system": s, "id": np.arange(n), "y": y, "p": rng.uniform(0.05, 0.95, n)})
            if task is not None:
                frame.insert(0, "task", task)
            frames.append(frame)
    pd.concat(frames).to_csv(path, index=False)
    return path


def _spec(folder: Path, body: str = "", *, name: str = "b", source: str = "preds.csv", n_boot: int = 0,
          head: str = "") -> Path:
    path = folder / f"{name}.toml"
    path.write_text(f'name = "{name}"\ntitle = "B"\nn_boot = {n_boot}\n{head}[[sources]]\nname = "s"\npath = "{source}"\n'
                    f'[[evaluate]]\nsource = "s"\nkind = "binary"\nmetrics = ["brier_score"]\n{body}',
                    encoding="utf-8")
    return path


# --- security 1: a model is code ------------------------------------------------------

_MODEL_PY = """
import pathlib, torch
pathlib.Path(__file__).with_name("ran.txt").write_text("model code ran")

def build():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(4, 3))
"""


@pytest.fixture
def model_files(tmp_path):
    pytest.importorskip("torch")
    py = tmp_path / "net.py"
    py.write_text(_MODEL_PY)
    np.save(tmp_path / "x.npy", np.ones((5, 2, 2), dtype=np.float32))
    return tmp_path, py


def test_cli_refuses_an_unpinned_model_file_and_runs_nothing(model_files):
    tmp, py = model_files
    res = sb("run", "--model", f"{py}:build", "--data", tmp / "x.npy", "-o", tmp / "f.csv")
    line = one_line_error(res, "is code", "--sha256", "--trust-model")
    assert hashlib.sha256(py.read_bytes()).hexdigest() in line  # the pin to use, if the user trusts it
    assert not (tmp / "ran.txt").exists() and not (tmp / "f.csv").exists()
    wrong = sb("run", "--model", f"{py}:build", "--sha256", "0" * 64, "--data", tmp / "x.npy", "-o", tmp / "f.csv")
    one_line_error(wrong, "does not match")
    assert not (tmp / "ran.txt").exists()
    ok = sb("run", "--model", f"{py}:build", "--sha256", hashlib.sha256(py.read_bytes()).hexdigest(),
            "--data", tmp / "x.npy", "-o", tmp / "f.csv", "--device", "cpu")
    assert ok.returncode == 0, ok.stderr
    assert f"running model code from {py}" in ok.stderr  # says what it executes
    assert (tmp / "ran.txt").exists() and (tmp / "f.csv").exists()


def test_cli_evaluate_model_needs_a_pin_or_trust(model_files):
    tmp, py = model_files
    np.save(tmp / "real.npy", np.random.default_rng(0).normal(size=(30, 2, 2)).astype(np.float32))
    np.save(tmp / "gen.npy", np.random.default_rng(1).normal(size=(30, 2, 2)).astype(np.float32))
    args = ["evaluate", "--model", f"{py}:build", "--reference", tmp / "real.npy", "--data", tmp / "gen.npy",
            "-m", "fid", "--bootstrap", "0", "--device", "cpu"]
    one_line_error(sb(*args), "is code")
    assert not (tmp / "ran.txt").exists()
    res = sb(*args, "--trust-model")
    assert res.returncode == 0, res.stderr
    assert "note: importing and running model code" in res.stderr and "gen" in res.stdout


def test_api_model_trust_and_program_fingerprint(tmp_path):
    torch = pytest.importorskip("torch")
    from scorebench.models import file_sha256, load_extractor

    class Plain(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(3, 2)

        def forward(self, x):
            return self.lin(x)

    class Doubled(Plain):
        def forward(self, x):
            return self.lin(x) * 2.0

    torch.manual_seed(0)
    a = Plain()
    b = Doubled()
    b.load_state_dict(a.state_dict())  # identical weights, different forward
    pa, pb = tmp_path / "a.pt", tmp_path / "b.pt"
    torch.jit.script(a).save(str(pa))
    torch.jit.script(b).save(str(pb))
    with pytest.raises(InputError, match="is code"):
        load_extractor(pa)
    fa = load_extractor(pa, expected_sha256=file_sha256(pa)).fingerprint
    fb = load_extractor(pb, trust=True).fingerprint
    assert fa != fb  # the whole serialized program counts, not only the weights
    with pytest.raises(InputError, match="imports and runs the module 'json'"):
        load_extractor("json:loads")
    with pytest.raises(InputError, match="64 hexadecimal"):
        load_extractor(pa, expected_sha256="abc")


def test_board_spec_running_a_model_must_pin_it(tmp_path):
    torch = pytest.importorskip("torch")
    from scorebench.leaderboard.build import _Context

    torch.manual_seed(0)
    torch.jit.script(torch.nn.Flatten()).save(str(tmp_path / "m.pt"))
    np.save(tmp_path / "x.npy", np.ones((4, 2, 3), dtype=np.float32))
    body = '\n[[sources]]\nname = "feat"\npath = "x.npy"\nmodel = "m.pt"\n{pin}system = "real"\n'
    path = _spec(tmp_path, body.format(pin=""))
    _binary_csv(tmp_path / "preds.csv")
    with pytest.raises(InputError, match="must pin it with sha256"):
        load_spec(path)
    sha = hashlib.sha256((tmp_path / "m.pt").read_bytes()).hexdigest()
    _spec(tmp_path, body.format(pin=f'sha256 = "{"0" * 64}"\n'))
    with pytest.raises(InputError, match="does not match"):
        _Context(load_spec(path)).table("feat")
    _spec(tmp_path, body.format(pin=f'sha256 = "{sha}"\n'))
    table = _Context(load_spec(path)).table("feat")
    assert list(table.columns[:3]) == ["id", "system", "f0"] and len(table) == 4


# --- security 2: board writes never follow links; cleanup deletes only our files -------


def test_board_folder_or_plots_symlink_is_refused(tmp_path):
    victim = tmp_path / "victim"
    (victim / "keep").mkdir(parents=True)
    (victim / "keep" / "important.svg").write_text("<svg/>")
    out = tmp_path / "boards"
    out.mkdir()
    (out / "b").symlink_to(victim)
    with pytest.raises(InputError, match="symbolic link"):
        write_board_files({"README.md": b"x", "plots/p.svg": b"<svg/>"}, out / "b")
    (out / "b").unlink()
    (out / "b").mkdir()
    (out / "b" / "plots").symlink_to(victim / "keep")
    with pytest.raises(InputError, match="symbolic link"):
        write_board_files({"README.md": b"x", "plots/p.svg": b"<svg/>"}, out / "b")
    (out / "b" / "plots").unlink()
    (out / "b" / "README.md").symlink_to(victim / "keep" / "important.svg")
    with pytest.raises(InputError, match="symbolic link"):
        write_board_files({"README.md": b"x"}, out / "b")
    assert (victim / "keep" / "important.svg").read_text() == "<svg/>"
    assert sorted(p.name for p in victim.rglob("*")) == ["important.svg", "keep"]


def test_stale_plot_cleanup_removes_only_files_the_builder_wrote(tmp_path):
    out = tmp_path / "b"
    write_board_files({"README.md": b"1", "plots/old.svg": b"<svg/>", "plots/kept.svg": b"<svg/>"}, out)
    assert json.loads((out / MANIFEST).read_text())["files"] == ["README.md", "plots/kept.svg", "plots/old.svg"]
    (out / "plots" / "mine.svg").write_text("user's own")
    (out / "notes.txt").write_text("user's notes")
    write_board_files({"README.md": b"2", "plots/kept.svg": b"<svg/>"}, out)
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == [
        MANIFEST, "README.md", "notes.txt", "plots/kept.svg", "plots/mine.svg"]
    assert (out / "README.md").read_bytes() == b"2" and (out / "notes.txt").read_text() == "user's notes"
    assert not list(tmp_path.glob(".b.*"))  # no temporary folders or lock left


# --- security 3 and 5: names render inert ---------------------------------------------

HOSTILE = ["[Official results](https://evil.example/login)", "![pixel](https://evil.example/t.png)",
           "=cmd|' /C calc'!A0", "abc\u202edef", "<img src=x onerror=alert(1)>"]


@pytest.fixture(scope="module")
def hostile_board(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    _binary_csv(root / "preds.csv", systems=HOSTILE, tasks=("A b", "a-b"), n=40)
    path = _spec(root, '\n[[plots]]\ntype = "reliability"\nsource = "s"\n', n_boot=0)
    board = build_board(load_spec(path))
    write_board(board, root / "b")
    return root / "b", board


def test_markdown_cells_have_no_live_links_or_images(hostile_board):
    from markdown_it import MarkdownIt

    out, _ = hostile_board
    text = (out / "README.md").read_text(encoding="utf-8")
    html = MarkdownIt("commonmark").enable("table").render(text)
    assert "evil.example" in html  # the names are shown ...
    assert 'href="https://evil' not in html and 'src="https://evil' not in html  # ... but are not live
    assert "<img src=x" not in html and "&lt;img src=x" in html
    assert html.count("<img") == text.count("](plots/")  # only the board's own plots are images
    for name in HOSTILE[:2]:
        rendered = MarkdownIt("commonmark").enable("table").render("| h |\n|---|\n| " + escape_markdown(name) + " |")
        assert "<a " not in rendered and "<img" not in rendered


def test_bidi_controls_are_marked_in_every_rendered_file(hostile_board):
    out, _ = hostile_board
    for name in ("README.md", "index.html", "board.csv", *(f"plots/{p.name}" for p in (out / "plots").iterdir())):
        text = (out / name).read_text(encoding="utf-8")
        assert "\u202e" not in text, name
    assert "abc[U+202E]def" in (out / "README.md").read_text(encoding="utf-8")
    assert "abc[U+202E]def" in (out / "index.html").read_text(encoding="utf-8")


def test_bidi_controls_in_the_spec_title_and_description_are_marked(tmp_path):
    _binary_csv(tmp_path / "preds.csv", systems=("a", "b"), tasks=("t",), n=20)
    path = _spec(tmp_path)
    path.write_text(path.read_text(encoding="utf-8").replace('title = "B"', 'title = "x\u202ey"\ndescription = "d\u2066e"'),
                    encoding="utf-8")
    spec = load_spec(path)
    assert (spec.title, spec.description) == ("x[U+202E]y", "d[U+2066]e")
    write_board(build_board(spec), tmp_path / "out")
    for name in ("README.md", "index.html"):
        text = (tmp_path / "out" / name).read_text(encoding="utf-8")
        assert "\u202e" not in text and "\u2066" not in text and "x[U+202E]y" in text, name


def test_colliding_task_slugs_get_distinct_files_and_ids(hostile_board):
    out, board = hostile_board
    keys = [s.key for s in board.sections]
    assert len(keys) == len(set(keys))
    plots = sorted(p.name for p in (out / "plots").iterdir())
    assert len(plots) == len(board.figures) == 2  # one per task, none overwritten
    ids = re.findall(r'id="([^"]+)"', (out / "index.html").read_text(encoding="utf-8"))
    assert len(ids) == len(set(ids))


# --- security 4: CSV formula injection ------------------------------------------------


def test_board_csv_neutralises_formulas_but_keeps_negative_numbers(hostile_board):
    out, _ = hostile_board
    frame = pd.read_csv(out / "board.csv")
    systems = set(frame["system"])
    assert "'=cmd|' /C calc'!A0" in systems and "=cmd|' /C calc'!A0" not in systems
    assert safe_cell(-0.5) == -0.5 and safe_cell("-0.5") == "'-0.5" and safe_cell("@x") == "'@x"
    assert safe_cell("\tx") == "'\tx" and safe_cell(None) is None


def test_cli_safe_csv_flag(tmp_path):
    table = pd.DataFrame({"system": ["=1+2", "+x", "ok"], "y": [1, 0, 1], "p": [0.9, 0.2, 0.6]})
    table.to_csv(tmp_path / "t.csv", index=False)
    res = sb("evaluate", tmp_path / "t.csv", "-m", "brier_score", "--bootstrap", "0", "-o", tmp_path / "plain.csv")
    assert res.returncode == 0, res.stderr
    assert "=1+2" in set(pd.read_csv(tmp_path / "plain.csv")["system"])  # as-is unless asked (documented)
    res = sb("evaluate", tmp_path / "t.csv", "-m", "brier_score", "--bootstrap", "0", "--safe-csv",
             "-o", tmp_path / "safe.csv")
    assert res.returncode == 0, res.stderr
    safe = pd.read_csv(tmp_path / "safe.csv")
    assert set(safe["system"]) == {"'=1+2", "'+x", "ok"} and (safe["value"] >= 0).all()


# --- security 5: specs read only inside their folder / repository ---------------------


def test_spec_sources_are_confined_and_requires_reveals_nothing(tmp_path):
    root = tmp_path / "repo"
    (root / "boards").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    outside = tmp_path / "secret.csv"
    _binary_csv(outside)
    messages = []
    for src in ("/etc/passwd", "../../secret.csv", "../../no-such-file.csv", str(outside)):
        with pytest.raises(InputError, match="outside the spec's folder") as info:
            load_spec(_spec(root / "boards", source=src))
        messages.append(re.sub(r"'[^']*'", "<p>", str(info.value)))
    assert len(set(messages)) == 1  # the same words whether the outside path exists or not
    for req in ("/etc/passwd", "/no/such/path"):
        with pytest.raises(InputError, match="outside the spec's folder") as info:
            load_spec(_spec(root / "boards", head=f'requires = ["{req}"]\n', source="p.csv"))
        messages.append(re.sub(r"'[^']*'", "<p>", str(info.value)).replace("requires", "sources[s].path"))
    (root / "boards" / "link.csv").symlink_to(outside)  # a link inside pointing out is outside too
    with pytest.raises(InputError, match="outside"):
        load_spec(_spec(root / "boards", source="link.csv"))
    _binary_csv(root / "data.csv")
    assert load_spec(_spec(root / "boards", source="../data.csv")).sources[0].path.name == "data.csv"
    assert load_spec(_spec(root / "boards", source=str(outside)), allow_outside=True).sources[0].path == outside


def test_cli_allow_outside(tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    _binary_csv(outside / "preds.csv")
    (tmp_path / "home").mkdir()
    moved = _spec(tmp_path / "home", source="../elsewhere/preds.csv")
    one_line_error(sb("leaderboard", "build", moved, "--out", tmp_path / "out"), "outside the spec's folder",
                   "--allow-outside")
    res = sb("leaderboard", "build", moved, "--out", tmp_path / "out", "--allow-outside")
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "out" / "b" / "README.md").is_file()


# --- security 6: one writer per board folder --------------------------------------------


def test_concurrent_board_build_fails_clearly(tmp_path):
    _binary_csv(tmp_path / "preds.csv")
    spec = _spec(tmp_path)
    lock = tmp_path / ".b.lock"
    fd = os.open(lock, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(BoardLockedError, match="another `leaderboard build` is writing"):
            write_board_files({"README.md": b"x"}, tmp_path / "b")
        one_line_error(sb("leaderboard", "build", spec), "another `leaderboard build` is writing this board")
    finally:
        os.close(fd)
    assert not (tmp_path / "b").exists()
    res = sb("leaderboard", "build", spec)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "b" / "README.md").is_file() and not lock.exists()


# --- resource bounds ----------------------------------------------------------------------


@pytest.fixture
def small_csv(tmp_path):
    return _binary_csv(tmp_path / "t.csv")


def test_huge_bootstrap_and_bins_are_refused_up_front(small_csv):
    one_line_error(sb("evaluate", small_csv, "-m", "brier_score", "--bootstrap", "1000000000000"),
                   "n_boot=1000000000000 would need", "TiB of memory")
    one_line_error(sb("evaluate", small_csv, "-m", "ece(n_bins=10000000000)", "--bootstrap", "0"),
                   "n_bins=10000000000 would need", "GiB of memory")


def test_huge_spec_n_boot_is_a_spec_error(tmp_path):
    _binary_csv(tmp_path / "preds.csv")
    with pytest.raises(InputError, match="n_boot=100000000000 would need"):
        load_spec(_spec(tmp_path, n_boot=100000000000))
    one_line_error(sb("leaderboard", "build", _spec(tmp_path, n_boot=100000000000)), "would need")


def _png_header_only(path: Path, width: int, height: int) -> None:
    """A PNG that declares width x height but holds almost no data (never decoded in full)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 64))
                     + chunk(b"IEND", b""))


def test_image_bomb_corrupt_image_and_object_npy(tmp_path):
    pytest.importorskip("PIL")
    from scorebench.models import load_inputs

    bomb = tmp_path / "bomb"
    bomb.mkdir()
    _png_header_only(bomb / "big.png", 20000, 20000)
    with pytest.raises(InputError, match="too large|over the limit"):
        load_inputs(bomb)
    corrupt = tmp_path / "corrupt"
    corrupt.mkdir()
    (corrupt / "bad.png").write_bytes(b"\x89PNG\r\n\x1a\n" + os.urandom(64))
    with pytest.raises(InputError, match="not a readable image"):
        load_inputs(corrupt)
    np.save(tmp_path / "obj.npy", np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    with pytest.raises(InputError, match="object \\(pickled\\) array"):
        load_inputs(tmp_path / "obj.npy")


def test_cli_image_bomb_and_object_npy_are_one_line(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("PIL")
    (tmp_path / "imgs").mkdir()
    _png_header_only(tmp_path / "imgs" / "big.png", 20000, 20000)
    np.save(tmp_path / "obj.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    res = sb("run", "--model", "torch.nn:Flatten", "--trust-model", "--data", tmp_path / "imgs", "-o", tmp_path / "f.csv")
    one_line_error(res, "big.png")
    res = sb("run", "--model", "torch.nn:Flatten", "--trust-model", "--data", tmp_path / "obj.npy", "-o", tmp_path / "f.csv")
    one_line_error(res, "obj.npy", "pickled")


def test_deeply_nested_json_is_one_line(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    one_line_error(sb("evaluate", path, "-m", "brier_score"), "deep.json", "nested too deeply")


# --- tracebacks become one line -----------------------------------------------------------


@pytest.mark.parametrize("prior, words", [("a=1,0", "standard deviation > 0"), ("a=0,-1", "standard deviation > 0"),
                                          ("c=-1,5", "Beta prior"), ("u=2,0", "Beta prior")])
def test_invalid_irt_priors_are_rejected(tmp_path, prior, words):
    path = tmp_path / "r.csv"
    pd.DataFrame({"system": list("abcd"), "i1": [1, 0, 1, 0], "i2": [0, 0, 1, 1], "i3": [1, 1, 1, 0]}).to_csv(
        path, index=False)
    one_line_error(sb("irt", "fit", path, "--model", "3pl", "--prior", prior), words)


def test_null_byte_in_spec_name(tmp_path):
    _binary_csv(tmp_path / "preds.csv")
    path = _spec(tmp_path)
    path.write_text(path.read_text().replace('name = "b"', 'name = "a\\u0000b"'), encoding="utf-8")
    one_line_error(sb("leaderboard", "build", path), "'name'")


@pytest.mark.parametrize("code, reason", [(errno.ENOSPC, "No space left on device"),
                                          (errno.EROFS, "Read-only file system")])
def test_disk_full_or_read_only_output_is_one_line_and_leaves_nothing(tmp_path, small_csv, monkeypatch, code, reason):
    import scorebench.io.tables as sio

    def failing(tmp, write):
        Path(tmp).write_text("partial")
        raise OSError(code, os.strerror(code), str(tmp))

    monkeypatch.setattr(sio, "write_text_file", failing)
    out = tmp_path / "scores.csv"
    res = CliRunner().invoke(cli, ["evaluate", str(small_csv), "-m", "brier_score", "--bootstrap", "0", "-o", str(out)])
    assert res.exit_code == 2 and res.output.startswith(f"error: {reason}: {out}"), res.output
    assert len(res.output.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.csv"]  # no output, no temp file


def test_full_disk_during_board_build_keeps_the_old_board(tmp_path, monkeypatch):
    import scorebench.leaderboard.output as out_mod

    out = tmp_path / "b"
    write_board_files({"README.md": b"old readme", "index.html": b"old html"}, out)
    calls = []

    def fsync(fd):
        calls.append(fd)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(out_mod.os, "fsync", fsync)
    with pytest.raises(OSError):
        write_board_files({"README.md": b"new readme", "index.html": b"new html"}, out)
    assert (out / "README.md").read_bytes() == b"old readme" and (out / "index.html").read_bytes() == b"old html"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b"]


# --- silent wrong answers --------------------------------------------------------------


def test_crps_overflow_is_an_error_without_numpy_warnings(tmp_path):
    path = tmp_path / "t.csv"
    pd.DataFrame({"system": "a", "y": [1e308, 1.0, 2.0], "mu": [-1e308, 0.0, 0.5], "sigma": 1.0}).to_csv(path, index=False)
    one_line_error(sb("evaluate", path, "-m", "crps_normal", "--bootstrap", "100"), "overflows float64", "data row 1")
    import scorebench

    with pytest.raises(InputError, match="overflows"):
        scorebench.evaluate(pd.read_csv(path), ["crps_normal"], n_boot=0)
    # finite inputs that do not overflow still work
    ok = scorebench.evaluate(pd.read_csv(path).iloc[1:], ["crps_normal"], n_boot=50)
    assert np.isfinite(ok[["value", "ci_low", "ci_high"]].to_numpy()).all()


# --- partial outputs and early checks --------------------------------------------------------


def test_kill_9_litter_is_cleaned_on_the_next_write(tmp_path):
    target = tmp_path / "out.csv"
    code = ("import time, pandas as pd; from scorebench.io.tables import atomic_write; from pathlib import Path\n"
            "def slow(tmp):\n    Path(tmp).write_text('partial'); print('writing', flush=True); time.sleep(600)\n"
            f"atomic_write({{Path({str(target)!r}): slow}})\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "writing"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
    litter = [p for p in tmp_path.iterdir() if p.name.startswith(".out.csv.")]
    assert len(litter) == 1  # what a killed writer leaves ...
    write_table(pd.DataFrame({"a": [1]}), target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv", "out.csv.meta.json"]  # ... is removed


def test_output_path_and_format_are_checked_before_any_work(small_csv, tmp_path):
    # the bootstrap size would fail too: the output error comes first, so nothing was computed
    one_line_error(sb("evaluate", small_csv, "-m", "brier_score", "--bootstrap", "1000000000000",
                      "-o", tmp_path / "no" / "such" / "x.csv"), "does not exist")
    one_line_error(sb("evaluate", small_csv, "-m", "brier_score", "--bootstrap", "1000000000000",
                      "-o", tmp_path / "x.xyz"), "cannot tell the format")


def test_written_files_follow_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        write_table(pd.DataFrame({"a": [1]}), tmp_path / "o.csv")
        write_board_files({"README.md": b"x"}, tmp_path / "b")
    finally:
        os.umask(old)
    assert (tmp_path / "o.csv").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "b" / "README.md").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "b").stat().st_mode & 0o777 == 0o755


# --- round two (issue 36): code execution and trust ----------------------------------------

from scorebench.io.readers import read_results  # noqa: E402


class _Evil:
    """A pickle whose ``__reduce__`` runs code: unpickling it makes the folder ``path``."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)

    def __reduce__(self):
        return (os.mkdir, (self.path,))


def _openood_scores(n: int = 20) -> dict:
    rng = np.random.default_rng(0)
    ids = [np.zeros(n, int), rng.uniform(0.5, 1, n), np.zeros(n, int)]
    return {"id": {"test": ids}, "ood": {"near": {"d": [np.zeros(n, int), rng.uniform(0, 0.7, n), -np.ones(n, int)]}}}


@pytest.mark.parametrize("value, expected", [(True, True), ("no", False), ("YES", True), (" 0 ", False), (1, True),
                                             ("off", False), ("true", True)])
def test_parse_bool_accepts_only_boolean_words(value, expected):
    from scorebench.core.validation import parse_bool

    assert parse_bool(value, "x") is expected


@pytest.mark.parametrize("value", ["nope", "", "2", 2, 0.5, None, "truee", [1]])
def test_parse_bool_refuses_anything_else(value):
    from scorebench.core.validation import parse_bool

    with pytest.raises(InputError, match="expected true or false"):
        parse_bool(value, "x")


def test_trust_pickle_no_is_false_in_the_api_and_the_cli(tmp_path):
    import pickle

    marker = tmp_path / "code-ran"
    (tmp_path / "scores").mkdir()
    pkl = tmp_path / "scores" / "evil.pkl"
    pkl.write_bytes(pickle.dumps(_Evil(marker)))
    for word in ("no", "false", "0", 0, False):
        with pytest.raises(InputError, match="refusing to load"):
            read_results(pkl, format="openood", trust_pickle=word)
    with pytest.raises(InputError, match="expected true or false"):
        read_results(pkl, format="openood", trust_pickle="maybe")
    one_line_error(sb("import", pkl, "--from", "openood", "--from-option", "trust_pickle=no"), "refusing to load")
    one_line_error(sb("import", pkl, "--from", "openood", "--from-option", "trust_pickle=nah"),
                   "trust_pickle", "expected true or false")
    assert not marker.exists()


def test_boolean_kind_and_metric_options_are_strict(tmp_path):
    from scorebench.core.registry import metric

    run = tmp_path / "run.txt"
    run.write_text("1 Q0 d1 1 1.0 r\n1 Q0 d2 2 0.5 r\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 d1 1\n1 0 d2 0\n")
    one_line_error(sb("evaluate", run, "--qrels", qrels, "-m", "map", "--bootstrap", "0",
                      "-O", "judged_docs_only=perhaps"), "judged_docs_only", "true or false")
    ok = sb("evaluate", run, "--qrels", qrels, "-m", "map", "--bootstrap", "0", "-O", "judged_docs_only=no")
    assert ok.returncode == 0, ok.stderr
    from scorebench.core.registry import all_metrics

    name, key = next((m.name, k) for m in all_metrics() for k, v in m.params.items() if isinstance(v, bool))
    assert metric(name, **{key: "no"}).params[key] is False
    with pytest.raises(InputError, match="true or false"):
        metric(name, **{key: "sometimes"})
    from scorebench.aggregate import get_method

    assert get_method("kemeny").check_params({"all_optimal": "no"}) == {"all_optimal": False}
    table = tmp_path / "wide.csv"
    pd.DataFrame({"system": ["a", "b", "c"], "t1": [3, 2, 1], "t2": [1, 3, 2],
                  "t3": [3, 1, 2]}).to_csv(table, index=False)
    one_line_error(sb("aggregate", table, "-m", "kemeny", "--param", "all_optimal=perhaps"),
                   "all_optimal", "true or false")


def _pickle_spec(folder: Path, body: str) -> Path:
    path = folder / "p.toml"
    path.write_text('name = "p"\ntitle = "P"\nn_boot = 0\n[[sources]]\nname = "s"\npath = "scores/msp.pkl"\n'
                    f'from = "openood"\n{body}[[evaluate]]\nsource = "s"\nkind = "binary"\n'
                    'metrics = ["brier_score"]\n', encoding="utf-8")
    return path


def test_spec_reads_a_trusted_pickle_only_with_its_sha256_pinned(tmp_path):
    import pickle

    from scorebench.leaderboard.build import _Context

    (tmp_path / "scores").mkdir()
    pkl = tmp_path / "scores" / "msp.pkl"
    marker = tmp_path / "code-ran"
    pkl.write_bytes(pickle.dumps(_Evil(marker)))
    with pytest.raises(InputError, match="only when it pins the file with sha256"):
        load_spec(_pickle_spec(tmp_path, "trust_pickle = true\n"))
    with pytest.raises(InputError, match="trust_pickle"):
        load_spec(_pickle_spec(tmp_path, 'trust_pickle = "maybe"\n'))
    # "no" is false: the restricted unpickler refuses the code
    spec = load_spec(_pickle_spec(tmp_path, 'trust_pickle = "no"\n'))
    with pytest.raises(InputError, match="refusing to load"):
        _Context(spec).table("s")
    # a pin of other bytes: refused before anything is unpickled
    spec = load_spec(_pickle_spec(tmp_path, f'trust_pickle = true\nsha256 = "{"0" * 64}"\n'))
    with pytest.raises(InputError, match="differs from the pinned"):
        _Context(spec).table("s")
    one_line_error(sb("leaderboard", "build", tmp_path / "p.toml", "--out", tmp_path / "out"),
                   "differs from the pinned")
    assert not marker.exists()
    # the pinned file is read with the full unpickler
    pkl.write_bytes(pickle.dumps(_openood_scores()))
    sha = hashlib.sha256(pkl.read_bytes()).hexdigest()
    table = _Context(load_spec(_pickle_spec(tmp_path, f'trust_pickle = true\nsha256 = "{sha}"\n'))).table("s")
    assert table.attrs["trust_pickle"] is True and set(table["task"]) == {"near/d"}


def test_pyproject_beside_an_untrusted_spec_grants_nothing(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    _binary_csv(outside / "preds.csv")
    evil = tmp_path / "downloads" / "evil"
    evil.mkdir(parents=True)
    for grant in ('["/"]', '["../../outside"]'):
        (evil / "pyproject.toml").write_text(f"[tool.scorebench.leaderboard]\ntrusted-paths = {grant}\n")
        spec = _spec(evil, source=str(outside / "preds.csv"))
        for cwd in (tmp_path, evil):  # not from the spec's own folder either
            one_line_error(sb("leaderboard", "build", spec, "--out", tmp_path / "o", cwd=cwd),
                           "outside the spec's folder")
    # trust from the repository the user runs in ...
    work = tmp_path / "work"
    work.mkdir()
    (work / "pyproject.toml").write_text(f'[tool.scorebench.leaderboard]\ntrusted-paths = ["{outside}"]\n')
    ok = sb("leaderboard", "build", spec, "--out", tmp_path / "o", cwd=work)
    assert ok.returncode == 0, ok.stderr
    # ... or from an explicit flag
    ok = sb("leaderboard", "build", spec, "--out", tmp_path / "o2", "--trusted-path", outside, cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert load_spec(spec, trusted_paths=(outside,)).sources[0].path.name == "preds.csv"


def _mteb_result(task: str = "BIOSSES", score: str = "0.5") -> str:
    return ('{"task_name": "%s", "mteb_version": "1.18.0", "scores": {"test": [{"hf_subset": "default", '
            '"languages": ["eng-Latn"], "main_score": %s}]}}' % (task, score))


def _mteb_spec(folder: Path) -> Path:
    path = folder / "m.toml"
    path.write_text('name = "m"\ntitle = "M"\nn_boot = 0\n[[sources]]\nname = "s"\npath = "results"\n'
                    'from = "mteb"\n[[evaluate]]\nsource = "s"\nkind = "binary"\nmetrics = ["brier_score"]\n')
    return path


def test_links_inside_a_confined_results_folder_are_checked_at_their_resolved_path(tmp_path):
    from scorebench.leaderboard.build import _Context
    from scorebench.io.readers import confine_reads

    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "r.json").write_text(_mteb_result())
    (secret / "meta.json").write_text('{"name": "leaked"}')
    board = tmp_path / "repo" / "boards"
    rev = board / "results" / "org__m" / "rev"
    rev.mkdir(parents=True)
    (rev / "BIOSSES.json").symlink_to(secret / "r.json")
    spec = load_spec(_mteb_spec(board))
    with pytest.raises(InputError, match="resolves outside"):
        _Context(spec).table("s")
    one_line_error(sb("leaderboard", "build", board / "m.toml", "--out", tmp_path / "o"), "resolves outside")
    (rev / "BIOSSES.json").unlink()
    (rev / "BIOSSES.json").write_text(_mteb_result())
    (rev / "model_meta.json").symlink_to(secret / "meta.json")
    with pytest.raises(InputError, match="model_meta.json: resolves outside"):
        _Context(load_spec(_mteb_spec(board))).table("s")
    assert read_results(board / "results").loc[0, "system"] == "leaked"  # unconfined API reads follow links
    with confine_reads([board]), pytest.raises(InputError, match="resolves outside"):
        read_results(board / "results")
    # --allow-outside lifts the confinement of reads too
    assert _Context(load_spec(_mteb_spec(board), allow_outside=True)).table("s").loc[0, "system"] == "leaked"


_HELPER_MODEL = """
import torch
import helper

def build():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(4, 3))
"""


def test_a_pin_covers_one_file_and_the_files_it_imports_are_named(tmp_path):
    pytest.importorskip("torch")
    (tmp_path / "helper.py").write_text("import pathlib\npathlib.Path(__file__).with_name('helper-ran').touch()\n")
    main = tmp_path / "main.py"
    main.write_text(_HELPER_MODEL)
    np.save(tmp_path / "x.npy", np.ones((3, 2, 2), dtype=np.float32))
    sha = hashlib.sha256(main.read_bytes()).hexdigest()
    res = sb("run", "--model", f"{main}:build", "--sha256", sha, "--data", tmp_path / "x.npy", "-o",
             tmp_path / "f.csv", "--device", "cpu", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    helper_sha = hashlib.sha256((tmp_path / "helper.py").read_bytes()).hexdigest()
    assert "the pin covers this file only" in res.stderr
    assert f"imports {tmp_path / 'helper.py'}, which no pin covers (sha256 {helper_sha})" in res.stderr
    # a leaderboard spec's pinned model is named on stderr as well
    body = (f'\n[[sources]]\nname = "feat"\npath = "x.npy"\nmodel = "main.py:build"\nsha256 = "{sha}"\n'
            'system = "real"\n[[evaluate]]\nsource = "feat"\nkind = "features"\nmetrics = ["fid"]\n')
    _binary_csv(tmp_path / "preds.csv")
    spec = _spec(tmp_path, body)
    res = sb("leaderboard", "build", spec, "--out", tmp_path / "o", cwd=tmp_path)
    assert "running model code from" in res.stderr and "helper.py" in res.stderr, res.stderr


# --- round two: forged or ambiguous output ------------------------------------------------


def _ranking_scores(qids, tag="r") -> pd.DataFrame:
    n = len(qids)
    rows = [{"system": tag, "qid": q, "metric": "map", "value": 0.5, "n": 1} for q in qids]
    rows.append({"system": tag, "qid": "all", "metric": "map", "value": 0.5, "n": n})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("qids, tag, words", [
    (["1", "2\nmap                   \tall\t0.9999"], "r", "query id"),
    (["1", "a\tb"], "r", "query id"),
    (["1", ""], "r", "query id"),
    (["1", "2"], "run\tx", "run tag"),
    (["1", "2"], "run\nmap all 0.9", "run tag"),
    (["1", "all"], "r", "named 'all'"),
])
def test_trec_eval_output_refuses_ids_it_cannot_write_unambiguously(qids, tag, words):
    from scorebench.io.trec_eval_output import format_trec_eval

    with pytest.raises(InputError, match=words):
        format_trec_eval(_ranking_scores(qids, tag))


def test_a_query_named_all_is_refused_in_per_unit_output(tmp_path):
    run = tmp_path / "run.txt"
    run.write_text("all Q0 d1 1 1.0 r\nall Q0 d2 2 0.5 r\nq2 Q0 d1 1 1.0 r\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("all 0 d1 1\nq2 0 d1 1\n")
    for fmt in ("trec_eval", "csv"):
        one_line_error(sb("evaluate", run, "--qrels", qrels, "-m", "map", "--bootstrap", "0", "--per-query",
                          "--format", fmt), "named 'all'")
    ok = sb("evaluate", run, "--qrels", qrels, "-m", "map", "--bootstrap", "0", "--format", "trec_eval")
    assert ok.returncode == 0 and ok.stdout.count("\tall\t") == 3, ok.stdout  # runid, num_q, map


def test_two_specs_with_one_board_name_are_refused(tmp_path):
    _binary_csv(tmp_path / "preds.csv")
    (tmp_path / "two").mkdir()
    _binary_csv(tmp_path / "two" / "preds.csv")
    first, second = _spec(tmp_path, name="b"), _spec(tmp_path / "two", name="b")
    one_line_error(sb("leaderboard", "build", first, second, "--out", tmp_path / "o"), "both name the board 'b'")
    assert not (tmp_path / "o").exists()


# --- round two: durability ------------------------------------------------------------------


_KILL_BETWEEN_RENAMES = """
import os, signal, sys
from pathlib import Path
from scorebench.leaderboard import output
real = os.replace
def replace(src, dst):
    if str(src).endswith(output._TMP_TAG) and not str(src).endswith(".old" + output._TMP_TAG):
        os.kill(os.getpid(), signal.SIGKILL)   # the old board is aside, the new one not yet in place
    return real(src, dst)
output.os.replace = replace
output.write_board_files({"README.md": b"new"}, Path(sys.argv[1]))
"""


@pytest.mark.parametrize("recover", ["write", "check"])
def test_kill_9_between_the_swap_renames_loses_no_board(tmp_path, recover):
    out = tmp_path / "board"
    write_board_files({"README.md": b"old", "board.csv": b"a\n"}, out)
    (out / "notes.txt").write_text("the user's own file")  # not the builder's: carried over by every write
    res = subprocess.run([sys.executable, "-c", _KILL_BETWEEN_RENAMES, str(out)], capture_output=True, timeout=120)
    assert res.returncode == -signal.SIGKILL
    assert not out.exists() and any(p.name.endswith(".old.scorebench.tmp") for p in tmp_path.iterdir())
    if recover == "write":
        write_board_files({"README.md": b"newer"}, out)
        assert (out / "README.md").read_bytes() == b"newer" and not (out / "board.csv").exists()
    else:
        from scorebench.leaderboard.output import recover_board

        assert recover_board(out)
        assert (out / "README.md").read_bytes() == b"old" and (out / "board.csv").read_bytes() == b"a\n"
    assert (out / "notes.txt").read_text() == "the user's own file"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["board"]  # the litter is gone


def test_check_restores_a_board_moved_aside_by_a_killed_build(tmp_path):
    _binary_csv(tmp_path / "preds.csv")
    spec = _spec(tmp_path)
    assert sb("leaderboard", "build", spec).returncode == 0
    subprocess.run([sys.executable, "-c", _KILL_BETWEEN_RENAMES, str(tmp_path / "b")], timeout=120)
    assert not (tmp_path / "b").exists()
    res = sb("leaderboard", "build", "--check", spec)
    assert res.returncode == 0, res.stderr  # restored, and it is up to date
    assert (tmp_path / "b" / "README.md").is_file()


def test_a_folder_scorebench_did_not_make_is_not_written_unless_asked(tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "README.md").write_text("my own notes")
    with pytest.raises(InputError, match="was not written by scorebench"):
        write_board_files({"README.md": b"board"}, out)
    assert (out / "README.md").read_text() == "my own notes"
    _binary_csv(tmp_path / "preds.csv")
    spec = _spec(tmp_path, name="mine")
    one_line_error(sb("leaderboard", "build", spec), "was not written by scorebench", "--overwrite-foreign")
    assert (out / "README.md").read_text() == "my own notes"
    res = sb("leaderboard", "build", spec, "--overwrite-foreign")
    assert res.returncode == 0, res.stderr
    assert (out / MANIFEST).is_file() and (out / "README.md").read_text() != "my own notes"
    (tmp_path / "empty").mkdir()
    write_board_files({"README.md": b"x"}, tmp_path / "empty")  # an empty folder is fine


# --- round two: tracebacks and silent answers -------------------------------------------------


def _mteb_folder(root: Path, score: str) -> Path:
    rev = root / "results" / "org__m" / "rev"
    rev.mkdir(parents=True)
    (rev / "BIOSSES.json").write_text(_mteb_result(score=score))
    return root / "results"


def _lm_eval_folder(root: Path, value: str = "0.5", sample: bytes | None = None) -> Path:
    root.mkdir(parents=True)
    (root / "results_2024.json").write_text('{"results": {"t": {"acc,none": %s}}, "task_hashes": {"t": "h"}, '
                                            '"model_name": "m", "lm_eval_version": "0.4.3"}' % value)
    (root / "samples_t_2024.jsonl").write_bytes(sample if sample is not None else
                                                b'{"doc_id": 0, "doc_hash": "a", "filter": "none", '
                                                b'"metrics": ["acc"], "acc": 1.0}\n')
    return root


def _rewardbench_file(path: Path, chosen: str = "2.0", rejected: str = "1.0", result: int = 1) -> Path:
    path.write_text('[{"id": 1, "subset": "hep-go", "results": %d, "scores_chosen": %s, "scores_rejected": %s}]'
                    % (result, chosen, rejected))
    return path


_BIG = {"400": "9" * 400, "5000": "9" * 5000}


@pytest.mark.parametrize("digits", sorted(_BIG))
def test_huge_integers_in_result_files_are_one_line_naming_the_field(tmp_path, digits):
    big = _BIG[digits]
    cases = [(_mteb_folder(tmp_path / "mteb", big), {}, "main_score"),
             (_lm_eval_folder(tmp_path / "lm", big), {"level": "results"}, "acc,none"),
             (_rewardbench_file(tmp_path / "rb.json", chosen=big), {}, "scores_chosen")]
    arena = tmp_path / "clean_battle_x.json"
    arena.write_text('[{"model_a": "a", "model_b": "b", "winner": "tie", "tstamp": %s}]' % big)
    cases.append((arena, {}, "tstamp"))
    for path, options, field in cases:
        with pytest.raises(InputError, match=f"{field}.*{digits} digits"):
            read_results(path, **options)
    one_line_error(sb("import", tmp_path / "mteb"), "main_score", f"{digits} digits")
    one_line_error(sb("import", arena), "tstamp", "out of range")


def test_float_literals_beyond_float64_are_refused_but_nan_constants_kept(tmp_path):
    with pytest.raises(InputError, match=r"scores_rejected.*1e400 is out of range"):
        read_results(_rewardbench_file(tmp_path / "rb.json", rejected="1e400", result=0))
    lm = _lm_eval_folder(tmp_path / "lm", sample=b'{"doc_id": 0, "doc_hash": "a", "filter": "none", '
                                                 b'"metrics": ["acc"], "acc": -2e999}\n')
    one_line_error(sb("import", lm, "--from", "lm_eval"), "line 1.acc", "out of range")
    folder = _mteb_folder(tmp_path / "m", "NaN")  # an undefined score stays a missing cell (the reader's rule)
    with pytest.raises(InputError, match="no \\(model, task\\) score"):
        read_results(folder)


def test_invalid_utf8_in_jsonl_is_one_line(tmp_path):
    lm = _lm_eval_folder(tmp_path / "lm", sample=b'{"doc_id": 0, "doc_hash": "\xff\xfe", "filter": "none"}\n')
    one_line_error(sb("import", lm, "--from", "lm_eval"), "line 1", "not UTF-8")
    rb = tmp_path / "rb"
    rb.mkdir()
    (rb / "out.jsonl").write_bytes(b'{"id": 1, "subset": "hep-go", "results": 1, "scores_chosen": 2.0, '
                                   b'"scores_rejected": 1.0, "prompt": "\xc3("}\n')
    one_line_error(sb("import", rb, "--from", "rewardbench"), "not UTF-8")


def test_unknown_or_mistyped_reader_options_are_one_line(tmp_path):
    folder = _mteb_folder(tmp_path / "m", "0.5")
    with pytest.raises(InputError, match="unknown option 'bogus'; accepted: benchmark, metrics"):
        read_results(folder, bogus=1)
    one_line_error(sb("import", folder, "--from-option", "bogus=1"), "unknown option 'bogus'")
    arena = tmp_path / "clean_battle_x.json"
    arena.write_text('[{"model_a": "a", "model_b": "b", "winner": "tie", "language": "English"}]')
    one_line_error(sb("import", arena, "--from-option", "language=1"), "no battle left")  # the text "1"
    with pytest.raises(InputError, match="language.*expected text"):
        read_results(arena, language=1)
    assert len(read_results(arena, language=["English"], anony="no")) == 1  # no "anony": not anonymous
    with pytest.raises(InputError, match="anony.*expected true or false"):
        read_results(arena, anony="anonymous")
    spec_dir = tmp_path / "s"
    spec_dir.mkdir()
    (spec_dir / "results").symlink_to(folder, target_is_directory=True)
    spec = _mteb_spec(spec_dir)
    spec.write_text(spec.read_text().replace('from = "mteb"\n', 'from = "mteb"\nbogus = 1\n'))
    one_line_error(sb("leaderboard", "build", spec, "--out", tmp_path / "o", "--allow-outside"),
                   "unknown option 'bogus'")


def test_fifos_in_a_results_folder_are_skipped_and_never_opened(tmp_path):
    folder = _mteb_folder(tmp_path / "m", "0.5")
    os.mkfifo(folder / "org__m" / "rev" / "STS12.json")
    os.mkfifo(folder / "org__m" / "rev" / "model_meta.json")
    res = sb("import", tmp_path / "m", timeout=120)  # a FIFO opened for reading would block forever
    assert res.returncode == 0, res.stderr
    assert "BIOSSES" in res.stdout
    lm = _lm_eval_folder(tmp_path / "lm")
    os.mkfifo(lm / "results_2025.json")
    assert sb("import", lm, "--from", "lm_eval", timeout=120).returncode == 0
    from scorebench.io.readers._common import read_bytes

    with pytest.raises(InputError, match="not a regular file"):
        read_bytes(lm / "results_2025.json")
    one_line_error(sb("evaluate", lm / "results_2025.json", "-m", "brier_score", timeout=120), "not a regular file")


def test_duplicate_json_keys_are_refused(tmp_path):
    rev = tmp_path / "results" / "org__m" / "rev"
    rev.mkdir(parents=True)
    (rev / "BIOSSES.json").write_text(_mteb_result(score="0.9, \"main_score\": 0.1"))
    with pytest.raises(InputError, match="'main_score': appears twice"):
        read_results(tmp_path / "results")
    one_line_error(sb("import", tmp_path / "results"), "main_score", "twice")
    lm = _lm_eval_folder(tmp_path / "lm", sample=b'{"doc_id": 0, "doc_hash": "a", "doc_hash": "b", "filter": "none",'
                                                 b' "metrics": []}\n')
    with pytest.raises(InputError, match="line 1.doc_hash"):
        read_results(lm, format="lm_eval")


def test_rewardbench_results_must_agree_with_the_scores(tmp_path):
    with pytest.raises(InputError, match=r"\[0\].results.*contradicts the scores"):
        read_results(_rewardbench_file(tmp_path / "a.json", chosen="0.1", rejected="0.9", result=1))
    with pytest.raises(InputError, match="contradicts"):
        read_results(_rewardbench_file(tmp_path / "b.json", chosen="0.5", rejected="0.5", result=1))  # ties are 0
    tie = read_results(_rewardbench_file(tmp_path / "c.json", chosen="0.5", rejected="0.5", result=0))
    assert tie["correct"][0] == 0


def test_parquet_glob_with_a_missing_column_names_the_file(tmp_path):
    pytest.importorskip("dask.dataframe")
    pd.DataFrame({"system": ["a", "b"], "y": [0, 1], "p": [0.2, 0.7]}).to_parquet(tmp_path / "a.parquet")
    pd.DataFrame({"system": ["a", "b"], "y": [0, 1]}).to_parquet(tmp_path / "b.parquet")
    one_line_error(sb("evaluate", str(tmp_path / "*.parquet"), "-m", "brier_score", "--engine", "dask",
                      "--bootstrap", "0"), "b.parquet", "missing ['p']")


def test_zero_permutations_beyond_exact_enumeration_is_refused(tmp_path):
    rng = np.random.default_rng(0)
    for n in (60, 10):
        frame = pd.concat([pd.DataFrame({"system": s, "id": np.arange(n), "y": rng.normal(size=n),
                                         "mu": rng.normal(size=n), "sigma": 1.0}) for s in ("a", "b")])
        frame.to_csv(tmp_path / f"n{n}.csv", index=False)
    one_line_error(sb("compare", tmp_path / "n60.csv", "-m", "crps_normal", "--test", "permutation",
                      "--permutations", "0"), "60 paired rows", "--permutations")
    ok = sb("compare", tmp_path / "n10.csv", "-m", "crps_normal", "--test", "permutation", "--permutations", "0")
    assert ok.returncode == 0 and "exact, 1024 sign patterns" in ok.stdout, ok.stdout + ok.stderr
    from scorebench.core.stats import paired_permutation

    with pytest.raises(InputError, match="at least 1 random sign flip"):
        paired_permutation(rng.normal(size=40), 0, rng)


def test_quantile_levels_outside_the_unit_interval_are_refused(tmp_path):
    import scorebench

    frame = pd.DataFrame({"y": [1.0, 2.0, 3.0], "q0.5": [1.0, 2.0, 3.0], "q1.5": [2.0, 3.0, 4.0]})
    with pytest.raises(InputError, match=r"\['q1.5'\]"):
        scorebench.evaluate(frame, "quantile_score", n_boot=0)
    frame.rename(columns={"q1.5": "q-0.1"}).to_csv(tmp_path / "q.csv", index=False)
    one_line_error(sb("evaluate", tmp_path / "q.csv", "-m", "quantile_score", "--bootstrap", "0"), "q-0.1", "(0, 1)")


def test_aggregate_irt_reads_the_wide_layout_of_irt_fit(tmp_path):
    import scorebench

    rng = np.random.default_rng(0)
    ability = np.linspace(-1.5, 1.5, 6)
    wide = pd.DataFrame((rng.normal(size=(6, 30)) < ability[:, None]).astype(int),
                        index=pd.Index([f"s{i}" for i in range(6)], name="system"),
                        columns=[f"i{j}" for j in range(30)])
    wide.to_csv(tmp_path / "wide.csv")
    res = sb("aggregate", tmp_path / "wide.csv", "-m", "irt", "--bootstrap", "0", "-o", tmp_path / "r.csv")
    assert res.returncode == 0, res.stderr
    ranked = pd.read_csv(tmp_path / "r.csv", comment="#")
    fitted = scorebench.irt.fit(wide).abilities["theta"].sort_values(ascending=False)
    assert list(ranked["system"]) == list(fitted.index)
