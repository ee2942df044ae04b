"""The guard rails are wired (issue 30): CI and the contributors' pre-commit hooks run the same
ruff, mypy, layer and complexity gates, each as its own step, with the versions the ``test``
extra pins.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

# the repository root, wherever under tests/ this file is moved
ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
GATES = ("ruff check .", "mypy",
         "python -m pytest -q -p no:cacheprovider tests/project/test_complexity.py tests/project/test_layers.py")


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_ci_runs_each_gate_as_its_own_step_after_installing_the_test_extra():
    lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert "set -euo pipefail" in lines
    install = lines.index('pip install -e ".[test]"')
    for gate in GATES:
        assert gate in lines, f".ci/run: no line `{gate}`"
        assert lines.index(gate) > install, f".ci/run: `{gate}` runs before the test extra is installed"
    assert not any("&&" in line and any(g in line for g in GATES) for line in lines)


def test_pre_commit_runs_the_ci_gates():
    yaml = pytest.importorskip("yaml")
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    hooks = {h["id"]: h for repo in config["repos"] for h in repo["hooks"]}
    assert hooks["ruff"]["entry"].startswith("ruff check")
    assert hooks["mypy"]["entry"] == "mypy" and hooks["mypy"]["pass_filenames"] is False
    assert hooks["layers-and-complexity"]["entry"] == GATES[2]
    assert all(h["language"] == "system" for h in hooks.values())  # the pinned tools of the test extra


def test_gate_tools_are_pinned_in_the_test_extra():
    test = _pyproject()["project"]["optional-dependencies"]["test"]
    pins = dict(m.groups() for d in test if (m := re.fullmatch(r"([A-Za-z0-9_.-]+)==(\S+)", d)))
    for tool in ("ruff", "mypy", "radon"):
        assert tool in pins, f"{tool} is not pinned with == in the test extra"


def test_mypy_and_ruff_configuration_points_at_real_files():
    tool = _pyproject()["tool"]
    for path in tool["mypy"]["files"]:
        assert (ROOT / path).exists(), f"[tool.mypy] files: {path} does not exist"
    assert tool["mypy"]["disallow_untyped_defs"] is True and tool["mypy"]["follow_imports"] == "silent"
    assert tool["ruff"]["line-length"] == 120
    assert {"E", "W", "F", "I", "B", "UP"} <= set(tool["ruff"]["lint"]["select"])
