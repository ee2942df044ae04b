"""``scorebench import``: convert a harness's result files into a scorebench table."""

from __future__ import annotations

from pathlib import Path

import click

from scorebench.io.readers import FORMATS
from scorebench.cli._input import FROM_OPTIONS_OPTION, load_table
from scorebench.cli._output import FORMAT_OPTION, OUTPUT_OPTION, emit


@click.command("import")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--from", "source_format", type=click.Choice(["auto", *FORMATS]), default="auto", show_default=True,
              help="The harness that wrote PATH.")
@FROM_OPTIONS_OPTION
@OUTPUT_OPTION
@FORMAT_OPTION
def command(path, source_format, source_options, output, fmt) -> None:
    """Read PATH into a table; -o table.parquet writes it.

    PATH is a result file or folder written by MTEB, lm-evaluation-harness (lm_eval), HELM,
    Chatbot Arena (arena), RewardBench or OpenOOD. Provenance (format, tool version, number
    of files, SHA-256 of the input) goes with the table: in Parquet's schema metadata, in the
    'meta' object of JSON, and beside a CSV in a TABLE.csv.meta.json sidecar (read back with
    scorebench.io.tables.read_meta). --skipped FILE lists the cells the reader skipped.
    """
    emit(load_table(path, source_format, source_options), output, fmt)
