"""``--check``: rebuild boards into a temporary folder and diff them against the committed files.

A board passes when the set of output files and every file's bytes are identical. The
summary names missing, extra and changed files and shows the first differing lines of
each changed text file.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

import tempfile

from .build import Board
from .render import write_board

__all__ = ["BoardDiff", "diff_board"]

_MAX_LINES = 12


@dataclass(frozen=True)
class BoardDiff:
    """Differences between a fresh build and the committed outputs of one board."""

    name: str
    out_dir: Path
    missing: tuple[str, ...]
    extra: tuple[str, ...]
    changed: tuple[str, ...]
    details: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not (self.missing or self.extra or self.changed)

    def summary(self) -> str:
        if self.ok:
            return f"{self.name}: up to date ({self.out_dir})"
        lines = [f"{self.name}: committed outputs in {self.out_dir} differ from a fresh build"]
        lines += [f"  missing: {p}" for p in self.missing]
        lines += [f"  not produced by the build: {p}" for p in self.extra]
        lines += [f"  changed: {p}" for p in self.changed]
        lines += [f"    {d}" for d in self.details]
        return "\n".join(lines)


def _committed(out_dir: Path) -> dict[str, bytes]:
    if not out_dir.is_dir():
        return {}
    files = {}
    for path in sorted(out_dir.rglob("*")):
        if path.is_file() and not path.name.startswith("."):
            files[path.relative_to(out_dir).as_posix()] = path.read_bytes()
    return files


def diff_board(board: Board, out_dir: Path) -> BoardDiff:
    """Write ``board`` into a temporary folder and compare it with the files under ``out_dir``."""
    with tempfile.TemporaryDirectory(prefix="scorebench-check-") as tmp:
        write_board(board, Path(tmp))
        fresh = _committed(Path(tmp))
    old = _committed(out_dir)
    missing = tuple(sorted(set(fresh) - set(old)))
    extra = tuple(sorted(set(old) - set(fresh)))
    changed = tuple(sorted(p for p in set(fresh) & set(old) if fresh[p] != old[p]))
    details: list[str] = []
    for path in changed:
        if path.endswith(".svg"):
            details.append(f"{path}: plot differs ({len(old[path])} -> {len(fresh[path])} bytes)")
            continue
        a = old[path].decode("utf-8", "replace").splitlines()
        b = fresh[path].decode("utf-8", "replace").splitlines()
        diff = [line for line in difflib.unified_diff(a, b, f"committed/{path}", f"rebuilt/{path}", n=0, lineterm="")]
        shown = [line[:200] for line in diff[:_MAX_LINES]]
        if len(diff) > _MAX_LINES:
            shown.append(f"... {len(diff) - _MAX_LINES} more diff lines")
        details += shown
    return BoardDiff(board.spec.name, out_dir, missing, extra, changed, tuple(details))
