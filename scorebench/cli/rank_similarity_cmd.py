"""``scorebench rank-similarity``: RBO and Kendall's tau between two runs, per query."""

from __future__ import annotations

from pathlib import Path

import click

from scorebench.metrics.ranking.similarity import compare_runs
from scorebench.cli._input import load_table
from scorebench.cli._output import FORMAT_OPTION, OUTPUT_OPTION, emit


@click.command("rank-similarity")
@click.argument("run_a", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("run_b", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--p", "p", default=0.9, show_default=True, type=float, help="RBO persistence in (0, 1).")
@click.option("--depth", default=None, type=int, help="Compare only the top DEPTH documents of each run.")
@OUTPUT_OPTION
@FORMAT_OPTION
def command(run_a, run_b, p, depth, output, fmt) -> None:
    """Rank-biased overlap (ext, min, residual) and Kendall's tau of RUN_A and RUN_B per query
    (TREC runs or tables with qid, docid, score)."""
    table = compare_runs(load_table(run_a, None, ()), load_table(run_b, None, ()), p=p, depth=depth)
    emit(table, output, fmt)
