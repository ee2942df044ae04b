"""``scorebench anytime``: confidence sequences that may be checked after every batch."""

from __future__ import annotations

from pathlib import Path

import click

from scorebench.analysis.confseq import confidence_sequence
from scorebench.cli._input import FROM_OPTION, FROM_OPTIONS_OPTION, load_table
from scorebench.cli._output import FORMAT_OPTION, OUTPUT_OPTION, emit


@click.command("anytime")
@click.argument("table", type=click.Path(path_type=Path))
@click.option("--metric", "-m", required=True, help="A per-row metric with values in [0, 1] (e.g. accuracy).")
@click.option("--baseline", default=None, help="Sequences of the difference system - baseline per unit.")
@click.option("--alpha", default=0.05, show_default=True, type=float,
              help="Probability that the sequence ever misses, however often it is looked at.")
@click.option("--bounds", nargs=2, type=float, default=None,
              help="Known bounds of the per-unit values (default 0 1; -1 1 for differences).")
@click.option("--grid", default=1000, show_default=True, type=int, help="Candidate means tried.")
@click.option("--path", "full_path", is_flag=True, help="One row per unit seen (default: the latest only).")
@FROM_OPTION
@FROM_OPTIONS_OPTION
@OUTPUT_OPTION
@FORMAT_OPTION
def command(table, metric, baseline, alpha, bounds, grid, full_path, source_format, source_options, output,
            fmt) -> None:
    """Anytime-valid confidence sequence of each system's mean (units in table order).

    Valid at every number of units at once (betting CS, Waudby-Smith & Ramdas 2023), so an
    evaluation may be stopped as soon as the interval excludes the value of interest.
    """
    result = confidence_sequence(load_table(table, source_format, source_options), metric, baseline=baseline,
                                 alpha=alpha, bounds=bounds, grid=grid, path=full_path)
    emit(result, output, fmt)
