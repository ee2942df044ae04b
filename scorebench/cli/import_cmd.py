"""``scorebench import``: convert a harness's result files into a scorebench table."""

from __future__ import annotations

from pathlib import Path

import click

from ..readers import FORMATS
from ._input import FROM_OPTIONS_OPTION, load_table
from ._output import FORMAT_OPTION, OUTPUT_OPTION, emit


@click.command("import")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--from", "source_format", type=click.Choice(["auto", *FORMATS]), default="auto", show_default=True,
              help="The harness that wrote PATH.")
@FROM_OPTIONS_OPTION
@OUTPUT_OPTION
@FORMAT_OPTION
def command(path, source_format, source_options, output, fmt) -> None:
    """Read PATH (a result file or folder of MTEB, ...) into a table; -o table.parquet writes it.

    Provenance (format, tool version, number of files, SHA-256 of the input) goes with the
    table: Parquet schema metadata, '# key: value' lines in CSV.
    """
    emit(load_table(path, source_format, source_options), output, fmt)
