"""``scorebench bayes``: small-sample Bayesian inference for accuracies (Beta posteriors, ranks, pairs)."""

from __future__ import annotations

from pathlib import Path

import click

from scorebench.io.tables import read_table
from scorebench.analysis.small_sample import paired_table, posterior_table
from scorebench.cli._output import FORMAT_OPTION, OUTPUT_OPTION, emit


@click.command("bayes")
@click.argument("table", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--ci", type=float, default=0.95, show_default=True, help="Credible level.")
@click.option("--paired", is_flag=True, help="Every pair of systems on their shared ids: posterior of the accuracy "
              "difference and P(A beats B).")
@click.option("--draws", type=int, default=20_000, show_default=True, help="Monte Carlo draws (rank and pair intervals).")
@click.option("--seed", type=int, default=0, show_default=True)
@OUTPUT_OPTION
@FORMAT_OPTION
def command(table, ci, paired, draws, seed, output, fmt) -> None:
    """Beta-binomial posteriors of each system's accuracy with credible rank intervals.

    TABLE has columns system, correct (0/1) and, for --paired, id. Meant for small test
    sets (n below a few hundred), where CLT intervals undercover (Bowyer et al. 2025).
    """
    frame = read_table(table)
    result = (paired_table if paired else posterior_table)(frame, ci=ci, n_draws=draws, seed=seed)
    emit(result, output, fmt)
