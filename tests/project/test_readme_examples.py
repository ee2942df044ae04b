"""Every code block of README.md runs, so that an example cannot rot.

The rule, for whoever adds a README section:

- a ```` ```python ```` block runs as a script in a fresh interpreter (the repository root is
  the working directory, so ``data/examples/...`` paths resolve) and must exit cleanly;
- a ```` ```bash ```` / ```` ```sh ```` / ```` ```shell ```` block runs line by line: each
  command (``\\``-continued lines joined, ``# comments`` dropped) must be a ``scorebench ...``
  command, run in-process through the click group in a temporary folder that sees the
  repository's ``data/``, ``tests/`` and ``leaderboards/`` and a ``../shared`` beside it; every
  command must exit with status 0 (outputs such as ``-o scores.csv`` land in the temporary
  folder);
- a block that cannot run here (it installs packages, rebuilds every board, names files the
  reader supplies) is preceded by ``<!-- readme-test: skip: REASON -->`` on the line just above
  its opening fence; the reason is required and is shown as the skip reason;
- other languages (``toml``, ``text``, ...) are illustrations and are not run.

A block naming ``../shared`` skips with a message where the reference data is absent.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
SHARED = ROOT.parent / "shared"
SKIP_MARKER = re.compile(r"<!--\s*readme-test:\s*skip:\s*(?P<reason>.*?)\s*-->")
SHELL_LANGUAGES = {"bash", "sh", "shell", "console"}
SHELL_OPERATORS = ("|", "&&", "||", ";", ">", "<", "$(", "`")


@dataclass(frozen=True)
class Block:
    """One fenced code block of the README."""

    language: str
    code: str
    line: int  # 1-based line of the opening fence
    skip_reason: str | None

    @property
    def ident(self) -> str:
        return f"README.md:{self.line}:{self.language}"


def readme_blocks(text: str) -> list[Block]:
    """The fenced blocks of a Markdown text, with the skip marker above each (if any)."""
    lines = text.splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        opening = re.match(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)", lines[i])
        if not opening:
            i += 1
            continue
        fence, language = opening.group(2), opening.group(3).lower()
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append(lines[i])
            i += 1
        if i == len(lines):
            raise ValueError(f"README.md line {start + 1}: code block is never closed")
        previous = lines[start - 1] if start > 0 else ""
        marker = SKIP_MARKER.search(previous)
        if previous.strip().startswith("<!--") and "readme-test" in previous and not marker:
            raise ValueError(
                f"README.md line {start}: malformed marker {previous.strip()!r}; "
                "expected '<!-- readme-test: skip: REASON -->'"
            )
        reason = marker.group("reason") if marker else None
        if marker and not reason:
            raise ValueError(f"README.md line {start}: the skip marker needs a reason")
        blocks.append(Block(language, "\n".join(body) + "\n", start + 1, reason))
        i += 1
    return blocks


def shell_commands(code: str) -> list[str]:
    """The commands of a shell block: continuations joined, comments and blank lines dropped."""
    commands: list[str] = []
    pending = ""
    for raw in code.splitlines():
        line = raw.rstrip()
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line = pending + line
        pending = ""
        tokens = shlex.split(line, comments=True)
        if tokens:
            commands.append(shlex.join(tokens))
    if pending.strip():
        commands.append(pending.strip())
    return commands


BLOCKS = readme_blocks(README.read_text(encoding="utf-8"))
RUNNABLE = [b for b in BLOCKS if b.language == "python" or b.language in SHELL_LANGUAGES]


def test_the_readme_has_runnable_blocks():
    """Guards the parser: the README's examples are found and most of them run."""
    assert sum(b.language == "python" and b.skip_reason is None for b in BLOCKS) >= 2
    assert sum(b.language in SHELL_LANGUAGES and b.skip_reason is None for b in BLOCKS) >= 2


def test_parser_reads_markers_and_continuations():
    text = (
        "intro\n<!-- readme-test: skip: needs the network -->\n```bash\npip install x\n```\n"
        "```python\nprint(1)\n```\n"
    )
    first, second = readme_blocks(text)
    assert (first.language, first.skip_reason, first.line) == ("bash", "needs the network", 3)
    assert (second.language, second.skip_reason) == ("python", None)
    assert shell_commands("scorebench a \\\n  --b 1   # note\n# only a comment\n\nscorebench c\n") == [
        "scorebench a --b 1",
        "scorebench c",
    ]
    with pytest.raises(ValueError, match="needs a reason"):
        readme_blocks("<!-- readme-test: skip: -->\n```bash\nx\n```\n")


def _skip_if_needed(block: Block) -> None:
    if block.skip_reason is not None:
        pytest.skip(f"{block.ident} not run: {block.skip_reason}")
    if "../shared" in block.code and not SHARED.is_dir():
        pytest.skip(f"{block.ident} reads ../shared, which is not beside this checkout")


@pytest.mark.parametrize("block", RUNNABLE, ids=[b.ident for b in RUNNABLE])
def test_readme_block_runs(block: Block, tmp_path: Path):
    _skip_if_needed(block)
    if block.language == "python":
        _run_python(block)
    else:
        _run_shell(block, tmp_path)


def _run_python(block: Block) -> None:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    env["MPLBACKEND"] = "Agg"
    done = subprocess.run(
        [sys.executable, "-c", block.code], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=300,
    )
    assert done.returncode == 0, (
        f"{block.ident} failed (exit {done.returncode}):\n{done.stderr[-3000:]}"
    )


def _run_shell(block: Block, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from scorebench.cli import cli

    work = tmp_path / "repo"
    work.mkdir()
    for name in ("data", "tests", "leaderboards"):
        (work / name).symlink_to(ROOT / name, target_is_directory=True)
    if SHARED.is_dir():
        (tmp_path / "shared").symlink_to(SHARED, target_is_directory=True)
    commands = shell_commands(block.code)
    assert commands, f"{block.ident} has no command"
    runner = CliRunner()
    old = Path.cwd()
    os.chdir(work)
    try:
        for command in commands:
            tokens = shlex.split(command)
            bad = [t for t in tokens if t in SHELL_OPERATORS or t.startswith(("$(", "`"))]
            assert tokens[0] == "scorebench" and not bad, (
                f"{block.ident}: {command!r} is not a plain scorebench command; run only "
                "scorebench commands in README shell blocks, or put "
                "'<!-- readme-test: skip: REASON -->' above the block"
            )
            result = runner.invoke(cli, tokens[1:], prog_name="scorebench", catch_exceptions=False)
            assert result.exit_code == 0, (
                f"{block.ident}: {command!r} exited {result.exit_code}:\n{result.output[-3000:]}"
            )
    finally:
        os.chdir(old)
