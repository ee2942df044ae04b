"""``scorebench leaderboard build``: regenerate leaderboards from their specs, or check them."""

from __future__ import annotations

import time
from pathlib import Path

import click

from ..errors import InputError


@click.group("leaderboard")
def command() -> None:
    """Build leaderboards from TOML specs (Markdown, HTML, CSV, JSON, SVG plots)."""


@command.command("build")
@click.argument("specs", nargs=-1, type=click.Path(path_type=Path))
@click.option("--check", is_flag=True,
              help="Rebuild into a temporary folder and fail if the committed outputs differ.")
@click.option("--out", "out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write (or, with --check, compare) each board under OUT/<name> instead of beside its spec.")
def build(specs: tuple[Path, ...], check: bool, out: Path | None) -> None:
    """Build SPEC files (default: every leaderboards/*.toml)."""
    from ..leaderboard import build_board, diff_board, find_specs, load_spec, write_board

    paths = list(specs) or find_specs(Path("leaderboards"))
    if not paths:
        raise InputError("no leaderboard specs given and none found in ./leaderboards/*.toml")
    failed = []
    for path in paths:
        spec = load_spec(path)
        missing = spec.missing_requirements
        if missing:
            click.echo(f"{spec.name}: skipped (needs {', '.join(str(m) for m in missing)})", err=True)
            continue
        start = time.perf_counter()
        board = build_board(spec)
        target = (out / spec.name) if out is not None else spec.out_dir
        took = time.perf_counter() - start
        if check:
            diff = diff_board(board, target)
            click.echo(diff.summary(), err=not diff.ok)
            if not diff.ok:
                failed.append(spec.name)
        else:
            write_board(board, target)
            click.echo(f"{spec.name}: wrote {target} ({len(board.sections)} sections, "
                       f"{len(board.figures)} plots, {took:.1f} s)")
    if failed:
        click.echo(f"error: {len(failed)} board(s) out of date: {', '.join(failed)}; "
                   "run `scorebench leaderboard build` and commit the outputs", err=True)
        raise SystemExit(1)
