"""The documentation site (issue 38): every registered name has a generated catalogue entry,
and the CI files (workflow, pre-commit hook) parse and name commands and options that exist.

The site itself is built by ``python docs/build.py`` in ``.ci/run`` (warnings are errors and
the tutorials run there); these tests need neither Sphinx nor a build.
"""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import click
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "docs" / "_ext"))

import sb_catalogue  # noqa: E402

from scorebench.aggregate.registry import all_methods  # noqa: E402
from scorebench.cli import cli  # noqa: E402
from scorebench.leaderboard.sections import section_kinds  # noqa: E402
from scorebench.io.readers import FORMATS  # noqa: E402
from scorebench.core.registry import all_metrics  # noqa: E402
from scorebench.core.tables import all_kinds  # noqa: E402


@pytest.fixture(scope="module")
def pages() -> dict[str, str]:
    return sb_catalogue.pages(ROOT)


def _labels(pages: dict[str, str]) -> set[str]:
    return {m for text in pages.values() for m in re.findall(r"^\.\. _([a-z0-9-]+):$", text, re.M)}


def test_every_registered_name_has_an_entry(pages):
    labels = _labels(pages)
    wanted = {
        "metric": {m.base_name for m in all_metrics()},
        "kind": {k.name for k in all_kinds()},
        "method": {m.name for m in all_methods()},
        "reader": set(FORMATS),
        "section": {k.block for k in section_kinds()},
    }
    for prefix, names in wanted.items():
        assert names, prefix
        missing = sorted(n for n in names if sb_catalogue.anchor(prefix, n) not in labels)
        assert not missing, f"{prefix}s without a generated entry: {missing}"
    # anchors are unique: two names never collapse onto one label
    for prefix, names in wanted.items():
        assert len({sb_catalogue.anchor(prefix, n) for n in names}) == len(names), prefix


def test_every_command_has_an_entry(pages):
    labels = _labels(pages)

    def walk(cmd: click.Command, path: str):
        yield path
        if isinstance(cmd, click.Group):
            for name, sub in cmd.commands.items():
                yield from walk(sub, f"{path} {name}")

    missing = [p for p in walk(cli, "scorebench") if p != "scorebench" and sb_catalogue.anchor("cli", p) not in labels]
    assert not missing, missing


def test_metric_entry_carries_the_record():
    m = next(m for m in all_metrics() if m.base_name == "brier_score")
    text = sb_catalogue.metric_entry(m)
    for needle in ("lower is better", "strictly proper", "[0, 1]", "Brier (1950)", "percentile",
                   "population", ":ref:`binary <kind-binary>`", "autofunction:: scorebench."):
        assert needle in text, needle


def test_a_metric_registered_later_gets_an_entry(monkeypatch):
    """Generated, not hand-listed: a record the registry returns appears in the catalogue."""
    import dataclasses

    import scorebench.core.registry as registry

    probe = dataclasses.replace(registry.metric("brier_score"), name="docs_probe_metric", family="docs_probe")
    real = registry.all_metrics
    monkeypatch.setattr(registry, "all_metrics", lambda: [*real(), probe])
    pages = sb_catalogue.metrics_pages()
    assert ".. _metric-docs-probe-metric:" in pages["metrics/docs_probe.rst"]
    assert "metrics/docs_probe" in pages["metrics.rst"]


def test_index_lists_every_tutorial():
    index = (ROOT / "docs" / "index.rst").read_text()
    for page in sorted((ROOT / "docs" / "tutorials").glob("*.rst")):
        assert f"tutorials/{page.stem}" in index, page.name
        assert ".. runcode::" in page.read_text() or page.stem == "host_leaderboard", page.name


# --- CI files -------------------------------------------------------------------------------

def _scorebench_commands(script: str) -> list[list[str]]:
    out = []
    for line in script.replace("\\\n", " ").splitlines():
        line = line.strip()
        for part in re.split(r"\s*(?:&&|\|\||;)\s*", line):
            part = part.lstrip("( ")
            if not part.startswith("scorebench "):
                continue
            words = shlex.split(part, comments=True)
            if words[0] == "scorebench":
                out.append([w for w in words[1:] if w not in (">", "2>&1") and not w.startswith(">")])
    return out


def _check_command(args: list[str]) -> None:
    """The command path exists and every option it passes is one of that command's options."""
    cmd: click.Command = cli
    i = 0
    while isinstance(cmd, click.Group) and i < len(args) and not args[i].startswith("-"):
        assert args[i] in cmd.commands, f"scorebench {' '.join(args[:i + 1])}: no such command"
        cmd = cmd.commands[args[i]]
        i += 1
    assert not isinstance(cmd, click.Group), f"scorebench {' '.join(args)}: names a group, not a command"
    known = {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)}
    for word in args[i:]:
        if word.startswith("-"):
            assert word.split("=", 1)[0] in known, f"scorebench {' '.join(args)}: unknown option {word}"


def test_workflow_parses_and_runs_real_commands():
    yaml = pytest.importorskip("yaml")
    flow = yaml.safe_load((ROOT / ".github" / "workflows" / "leaderboards.yml").read_text())
    triggers = flow.get("on", flow.get(True))
    assert {"push", "pull_request"} <= set(triggers)
    for event in ("push", "pull_request"):
        assert any(p.startswith("leaderboards/") for p in triggers[event]["paths"])
    commands = []
    for job in flow["jobs"].values():
        for step in job["steps"]:
            if "run" in step:
                commands += _scorebench_commands(step["run"])
    assert ["leaderboard", "build", "--check"] in commands
    assert any(c[:2] == ["leaderboard", "diff"] for c in commands)
    assert ["leaderboard", "build"] in commands
    for args in commands:
        _check_command(args)
    summary = " ".join(s.get("run", "") for s in flow["jobs"]["check"]["steps"])
    assert "GITHUB_STEP_SUMMARY" in summary


def test_pre_commit_hook_runs_the_check():
    yaml = pytest.importorskip("yaml")
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    hook = next(h for h in hooks if h["id"] == "scorebench-leaderboard-check")
    args = _scorebench_commands(hook["entry"])
    assert args == [["leaderboard", "build", "--check"]]
    _check_command(args[0])
    assert hook["pass_filenames"] is False and hook["language"] == "python"


def test_ci_runs_the_docs_build_and_the_workflow_commands():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "docs/build.py" in ci
    readme = (ROOT / "README.md").read_text()
    assert "python docs/build.py" in readme
    for args in _scorebench_commands(ci):
        _check_command(args)


def test_checker_refuses_unknown_commands_and_options():
    with pytest.raises(AssertionError):
        _check_command(["leaderboard", "build", "--no-such-flag"])
    with pytest.raises(AssertionError):
        _check_command(["leaderbored", "build"])
