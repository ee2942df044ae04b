"""Shared input handling of the commands: a table file, or a harness's result files.

Every command that takes a table accepts a harness's result file or folder as well
(MTEB, ...): named with ``--from FORMAT`` or detected when the path is a folder or a file
that a reader recognises; reader options go in ``--from-option KEY=VALUE``.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import click
import pandas as pd

from ..io import read_results, read_table
from ..readers import FORMATS, detect_results_format
from ._output import parse_options

FROM_OPTION = click.option("--from", "source_format", type=click.Choice(["auto", *FORMATS]), default=None,
                           help="Read TABLE as a harness's result file or folder (default: detected).")
FROM_OPTIONS_OPTION = click.option("--from-option", "source_options", multiple=True,
                                   help="Reader option as KEY=VALUE (e.g. benchmark='MTEB(eng, v2)').")


def load_table(path: Path, source_format: str | None, source_options: tuple[str, ...] = ()) -> pd.DataFrame:
    """``path`` read as a harness's results (``--from``, or detected) or as a plain table."""
    options = parse_options(source_options)
    if source_format is None and not options:
        if path.is_dir() or (path.is_file() and detect_results_format(path) is not None):
            source_format = "auto"
    if source_format is None:
        if options:
            raise click.UsageError("--from-option needs --from")
        return read_table(path)
    with warnings.catch_warnings():  # the note below says it in one line
        warnings.simplefilter("ignore", UserWarning)
        table = read_results(path, format=source_format, **options)
    skipped = table.attrs.get("n_skipped", 0)
    note = f"; {skipped} cell(s) skipped (see the reader's attrs['skipped'])" if skipped else ""
    if table.attrs.get("n_self_play_dropped"):
        note += f"; {table.attrs['n_self_play_dropped']} battle(s) of a model against itself dropped"
    click.echo(f"read {table.attrs['source_format']} results: {table.attrs['files_read']} files, "
               f"{len(table)} rows{note}", err=True)
    return table
