"""Shared input handling of the commands: a table file, or a harness's result files.

Every command that takes a table accepts a harness's result file or folder as well
(MTEB, ...): named with ``--from FORMAT`` or detected by the format registry
(:mod:`scorebench.io.formats`; the CLI never looks at a file itself); reader options go in
``--from-option KEY=VALUE``.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import click
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.io.formats import FORMATS, detect_source
from scorebench.io.readers import harness_formats
from scorebench.io.tables import read_results, read_table


def from_option(default: str | None = None, help: str = "Read TABLE as a harness's result file or folder "
                "(default: detected).", **extra):
    """The ``--from FORMAT`` option: ``auto`` or a harness format of the registry."""
    return click.option("--from", "source_format", type=click.Choice(["auto", *harness_formats()]),
                        default=default, help=help, **extra)


FROM_OPTION = from_option()
_FROM_OPTIONS = click.option("--from-option", "source_options", multiple=True,
                             help="Reader option as KEY=VALUE (e.g. benchmark='MTEB(eng, v2)').")


def _skipped_path(ctx: click.Context, param: click.Parameter, value):
    ctx.meta["scorebench.skipped"] = value
    return value


_SKIPPED = click.option("--skipped", "skipped", type=click.Path(dir_okay=False, path_type=Path), default=None,
                        expose_value=False, callback=_skipped_path,
                        help="With result files: write the cells the reader skipped (file, reason) to this "
                             "CSV file.")


def FROM_OPTIONS_OPTION(f):  # noqa: N802 (used like the other option constants)
    """``--from-option KEY=VALUE`` together with ``--skipped FILE``."""
    return _FROM_OPTIONS(_SKIPPED(f))


def load_table(path: Path, source_format: str | None, source_options: tuple[str, ...] = ()) -> pd.DataFrame:
    """``path`` read as a harness's results (``--from``, or detected) or as a plain table."""
    options = reader_options(source_options)
    if source_format is None and not options:
        found = detect_source(path, how="--from FORMAT (a harness's results) or a table file's suffix")
        if found is None or FORMATS[found].family == "harness":
            source_format = found or "auto"  # a folder no format recognises: read_results says so
    if source_format is None:
        if options:
            raise click.UsageError("--from-option needs --from")
        return read_table(path)
    with warnings.catch_warnings():  # the note below says it in one line
        warnings.simplefilter("ignore", UserWarning)
        table = read_results(path, format=source_format, **options)
    skipped = table.attrs.get("n_skipped", 0)
    ctx = click.get_current_context(silent=True)
    target = ctx.meta.get("scorebench.skipped") if ctx is not None else None
    if target is not None:
        write_skipped(table.attrs.get("skipped", []), target)
        note = f"; {skipped} cell(s) skipped, listed in {target}"
    else:
        note = f"; {skipped} cell(s) skipped (list them with --skipped FILE)" if skipped else ""
    if table.attrs.get("n_self_play_dropped"):
        note += f"; {table.attrs['n_self_play_dropped']} battle(s) of a model against itself dropped"
    click.echo(f"read {table.attrs['source_format']} results: {table.attrs['files_read']} files, "
               f"{len(table)} rows{note}", err=True)
    return table


def write_skipped(skipped: list, path: Path) -> None:
    """The reader's skipped cells (``"file: reason"`` texts) as a CSV of ``file, reason``."""
    from scorebench.io.tables import write_table

    rows = [str(s).partition(": ") for s in skipped]
    frame = pd.DataFrame({"file": [r[0] for r in rows], "reason": [r[2] for r in rows]})
    write_table(frame, path, format="csv")


def reader_options(pairs: tuple[str, ...]) -> dict[str, str]:
    """``--from-option KEY=VALUE`` pairs as text; the reader converts them by its signature
    (:func:`scorebench.io.readers.check_options`: ``trust_pickle=no`` is false, ``language=1`` the text "1")."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise InputError(f"--from-option {pair!r}: expected KEY=VALUE")
        if key.strip() in out:
            raise InputError(f"--from-option {key.strip()!r} given twice")
        out[key.strip()] = value.strip()
    return out
