"""Release hygiene (issue 38): the version in one place, the data files in the wheel, and the
wheel installed in a fresh virtual environment, away from the checkout, runs the CLI.

The wheel test builds with ``python -m build --no-isolation`` (no download) and installs with
``--no-deps`` into a venv made with ``--system-site-packages``, so numpy, pandas and the other
dependencies come from the current environment and nothing is fetched.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from scorebench._version import __version__

ROOT = Path(__file__).resolve().parents[2]


def test_version_in_one_place():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "version" not in project and "version" in project["dynamic"]
    dynamic = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["dynamic"]
    assert dynamic["version"] == {"attr": "scorebench._version.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+(\.dev\d+|rc\d+)?", __version__)
    assert (ROOT / "CHANGELOG.md").is_file()
    assert (ROOT / "scorebench" / "py.typed").is_file()


def _data_files() -> list[str]:
    """Every tracked non-Python file under scorebench/ (what the wheel must carry)."""
    out = subprocess.run(["git", "ls-files", "scorebench"], cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        pytest.skip("not a git checkout")
    files = [f for f in out.stdout.split() if not f.endswith(".py")]
    files += [str(p.relative_to(ROOT)) for p in (ROOT / "scorebench").rglob("*")
              if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts]
    return sorted(set(files))


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    pytest.importorskip("build")
    out = tmp_path_factory.mktemp("dist")
    run = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)],
                         capture_output=True, text=True, cwd=out)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return out


@pytest.mark.slow
def test_wheel_and_sdist_carry_the_data_files(dist):
    wheel = next(dist.glob("scorebench-*.whl"))
    assert wheel.name.startswith(f"scorebench-{__version__}-")
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = [f for f in _data_files() if f not in names]
    assert not missing, f"data files missing from the wheel: {missing}"
    assert "scorebench/py.typed" in names
    import tarfile

    sdist = next(dist.glob("scorebench-*.tar.gz"))
    with tarfile.open(sdist) as tar:
        members = {m.split("/", 1)[1] for m in tar.getnames() if "/" in m}
    assert "CHANGELOG.md" in members
    assert not [f for f in _data_files() if f not in members]


@pytest.mark.slow
def test_twine_check(dist):
    pytest.importorskip("twine")
    run = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *map(str, dist.iterdir())],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.slow
def test_wheel_runs_in_a_fresh_venv(dist, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    py = venv / "bin" / "python"
    wheel = next(dist.glob("scorebench-*.whl"))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["PIP_NO_INDEX"] = "1"
    # the shared environment may hold an editable install of a checkout: the venv's own copy wins
    install = subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--ignore-installed",
                              str(wheel)], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert install.returncode == 0, install.stdout + install.stderr
    cli = venv / "bin" / "scorebench"

    def run(*args: str) -> str:
        out = subprocess.run([str(cli), *args], capture_output=True, text=True, env=env, cwd=tmp_path)
        assert out.returncode == 0, f"scorebench {' '.join(args)}: {out.stderr}"
        return out.stdout

    where = subprocess.run([str(py), "-c", "import scorebench, sys; print(scorebench.__file__)"],
                           capture_output=True, text=True, env=env, cwd=tmp_path).stdout.strip()
    assert where.startswith(str(venv)), f"imported {where}, not the installed wheel"
    assert __version__ in run("--version")
    assert "brier_score" in run("metrics")
    csv = tmp_path / "tiny.csv"
    csv.write_text("y,p\n1,0.9\n0,0.2\n1,0.6\n0,0.4\n1,0.7\n0,0.1\n")
    table = run("evaluate", str(csv), "-m", "brier_score", "--bootstrap", "200", "--seed", "1")
    # brier = mean((p - y)^2) = (0.01 + 0.04 + 0.16 + 0.16 + 0.09 + 0.01) / 6 = 0.078333...
    assert "brier_score" in table and "0.0783" in table
    # the reader's benchmark definition is package data: it must load from the installed wheel
    check = subprocess.run([str(py), "-c", "from importlib.resources import files; "
                            "print(files('scorebench.io.readers').joinpath('benchmarks/mteb_eng_v2.json').is_file())"],
                           capture_output=True, text=True, env=env, cwd=tmp_path)
    assert check.stdout.strip() == "True"
