"""``scorebench leaderboard build``: regenerate leaderboards from their specs, or check them."""

from __future__ import annotations

import time
from pathlib import Path

import click

from scorebench.core.errors import InputError
from scorebench.core.tolerance import ATOL, RTOL

_TOLERANCE = (f"Numbers in board.csv/board.json may differ by |new - old| <= {ATOL:g} + {RTOL:g} * max(|old|, |new|) "
              "(BLAS builds and thread counts change the last bits); printed numbers in README.md, index.html and "
              "plots by one unit of their last digit; text, ranks, bands, counts and order must match exactly.")


@click.group("leaderboard")
def command() -> None:
    """Build leaderboards from TOML specs (Markdown, HTML, CSV, JSON, SVG plots)."""


def _spec_path(path: Path) -> Path:
    """A spec path as given, or else under ./leaderboards/ (the boards' own regenerate hint)."""
    if not path.exists() and not path.is_absolute() and (Path("leaderboards") / path).is_file():
        return Path("leaderboards") / path
    return path


@command.command("build", epilog=f"--check tolerance: {_TOLERANCE}")
@click.argument("specs", nargs=-1, type=click.Path(path_type=Path))
@click.option("--check", is_flag=True,
              help="Rebuild in a temporary folder and fail if the committed outputs say something else "
                   "(text exactly; numbers within the tolerance below).")
@click.option("--out", "out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write (or, with --check, compare) each board under OUT/<name> instead of beside its spec.")
@click.option("--allow-outside", is_flag=True, default=False,
              help="Let specs read sources outside their folder and repository (specs are confined by default).")
@click.option("--trusted-path", "trusted_paths", multiple=True, type=click.Path(path_type=Path),
              help="Also let specs read under this folder (repeatable); a pyproject.toml beside a spec never does.")
@click.option("--overwrite-foreign", is_flag=True, default=False,
              help="Write a board into an existing non-empty folder that scorebench did not create "
                   "(no .scorebench-manifest.json); refused by default.")
def build(specs: tuple[Path, ...], check: bool, out: Path | None, allow_outside: bool,
          trusted_paths: tuple[Path, ...], overwrite_foreign: bool) -> None:
    """Build SPEC files (default: every leaderboards/*.toml).

    A board folder is written under a lock (a concurrent build of the same board fails), in
    a temporary folder swapped in whole, never through symbolic links.
    """
    from scorebench.leaderboard import build_board, diff_board, find_specs, load_spec, write_board
    from scorebench.cli.run_cmd import announce_models

    announce_models()  # a spec's pinned model is code: name it (and what it imports) on stderr

    paths = [_spec_path(p) for p in specs] or find_specs(Path("leaderboards"))
    if not paths:
        raise InputError("no leaderboard specs given and none found in ./leaderboards/*.toml")
    loaded = [load_spec(path, allow_outside=allow_outside, trusted_paths=trusted_paths) for path in paths]
    first: dict[str, Path] = {}
    for spec in loaded:  # one name, one board folder: a second spec would silently overwrite the first
        if spec.name in first:
            raise InputError(f"specs {first[spec.name]} and {spec.path} both name the board {spec.name!r}; "
                             "board names must be unique within one build")
        first[spec.name] = spec.path
    failed = []
    for spec in loaded:
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
            write_board(board, target, overwrite_foreign=overwrite_foreign)
            click.echo(f"{spec.name}: wrote {target} ({len(board.sections)} sections, "
                       f"{len(board.figures)} plots, {took:.1f} s)")
    if failed:
        click.echo(f"error: {len(failed)} board(s) out of date: {', '.join(failed)}; "
                   "run `scorebench leaderboard build` and commit the outputs", err=True)
        raise SystemExit(1)


@command.command("diff", epilog=f"Tolerance: {_TOLERANCE}")
@click.argument("committed", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("rebuilt", type=click.Path(exists=True, file_okay=False, path_type=Path))
def diff(committed: Path, rebuilt: Path) -> None:
    """Compare two folders of boards (one sub-folder per board) under the --check rules.

    For example, after `scorebench leaderboard build` on another machine, against the committed
    boards exported with `git archive HEAD leaderboards | tar -x -C /tmp/old`.
    """
    from scorebench.leaderboard.check import board_folder_files, diff_files

    names = sorted({p.name for root in (committed, rebuilt) for p in root.iterdir() if p.is_dir()})
    failed = []
    for name in names:
        result = diff_files(name, board_folder_files(committed / name), board_folder_files(rebuilt / name), rebuilt / name)
        click.echo(result.summary(), err=not result.ok)
        if not result.ok:
            failed.append(name)
    if failed:
        click.echo(f"error: {len(failed)} board(s) differ: {', '.join(failed)}", err=True)
        raise SystemExit(1)
