"""``scorebench import``: convert a harness's result files into a scorebench table."""

from __future__ import annotations

from pathlib import Path

import click

from scorebench.cli._input import FROM_OPTIONS_OPTION, from_option, load_table
from scorebench.cli._output import FORMAT_OPTION, OUTPUT_OPTION, emit
from scorebench.io.formats import all_formats


def formats_epilog() -> str:
    """The harness formats of the registry, one line each, for ``--help``."""
    lines = ["\b", "Formats (--from; auto: detected, except those marked 'named'):"]
    for f in all_formats(family="harness", role="read"):
        lines.append(f"  {f.name}: {f.doc} -> {f.yields}{'' if f.auto else ' [named]'}")
    return "\n".join(lines)


@click.command("import", epilog=formats_epilog())
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@from_option("auto", help="The harness that wrote PATH.", show_default=True)
@FROM_OPTIONS_OPTION
@OUTPUT_OPTION
@FORMAT_OPTION
def command(path, source_format, source_options, output, fmt) -> None:
    """Read PATH into a table; -o table.parquet writes it.

    PATH is a result file or folder written by one of the harnesses listed below. Provenance
    (format, tool version, number of files, SHA-256 of the input) goes with the table: in
    Parquet's schema metadata, in the 'meta' object of JSON, and beside a CSV in a
    TABLE.csv.meta.json sidecar (read back with scorebench.io.tables.read_meta). --skipped FILE
    lists the cells the reader skipped.
    """
    emit(load_table(path, source_format, source_options), output, fmt)
