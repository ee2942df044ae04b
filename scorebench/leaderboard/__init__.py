"""Leaderboards: TOML specs -> evaluate / aggregate -> Markdown, HTML, CSV, JSON and SVG plots.

``scorebench leaderboard build`` regenerates every board in ``leaderboards/``;
``--check`` verifies that the committed outputs say the same as a fresh build (text exact,
numbers within the tolerance of :mod:`scorebench.leaderboard.check`).

>>> from scorebench.leaderboard import load_spec, build_board, write_board  # doctest: +SKIP
"""

from __future__ import annotations

from scorebench.leaderboard.board import Board, Figure, Section
from scorebench.leaderboard.build import build_board
from scorebench.leaderboard.check import ATOL, RTOL, BoardDiff, diff_board, diff_files
from scorebench.leaderboard.render import board_files, render_csv, render_html, render_json, render_markdown_board, write_board
from scorebench.leaderboard.spec import BoardSpec, load_spec

__all__ = ["BoardSpec", "load_spec", "Board", "Section", "Figure", "build_board", "write_board",
           "board_files", "render_markdown_board", "render_html", "render_csv", "render_json",
           "BoardDiff", "diff_board", "diff_files", "RTOL", "ATOL", "find_specs"]


def find_specs(root="leaderboards"):
    """The ``*.toml`` specs in ``root``, sorted by name."""
    from pathlib import Path

    return sorted(Path(root).glob("*.toml"))
