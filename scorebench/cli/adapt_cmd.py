"""``scorebench irt adapt``: offline replay of adaptive testing against static and random subsets."""

from __future__ import annotations

from pathlib import Path

import click

from scorebench.core.errors import InputError
from scorebench.io.tables import read_table
from scorebench.cli._output import FORMAT_OPTION, OUTPUT_OPTION, emit

_MODELS = ["1pl", "rasch", "2pl", "3pl", "4pl"]


@click.command("adapt")
@click.argument("responses", type=click.Path(path_type=Path))
@click.option("--budgets", default="10,25,50", show_default=True, help="Numbers of items, comma-separated.")
@click.option("--model", type=click.Choice(_MODELS), default="2pl", show_default=True)
@click.option("--test-size", default=0.2, show_default=True, type=float, help="Share of systems held out.")
@click.option("--random", "n_random", default=50, show_default=True, type=int, help="Random subsets per budget.")
@click.option("--n-boot", default=200, show_default=True, type=int, help="Resamples of the held-out systems.")
@click.option("--ci", default=0.95, show_default=True, type=float)
@click.option("--se-target", default=None, type=float, help="Also stop a test once SE(theta) reaches this.")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--system-column", default=None, help="Wide tables: the column with system names "
              "(default: the first column when it is not numeric).")
@click.option("--transpose", is_flag=True, help="Wide tables stored items x systems.")
@OUTPUT_OPTION
@FORMAT_OPTION
def command(responses, budgets, model, test_size, n_random, n_boot, ci, se_target, seed, system_column, transpose,
            output, fmt) -> None:
    """Replay computerized adaptive testing on RESPONSES: per budget, the RMSE of the predicted full-benchmark
    accuracy of held-out systems for adaptive, static IRT-selected and random items."""
    from scorebench.irt.adaptive import adaptive_replay
    from scorebench.cli.health_cmd import item_answers

    try:
        parsed = [int(s) for s in budgets.split(",")]
    except ValueError:
        raise InputError(f"--budgets {budgets!r}: expected integers separated by commas") from None
    table = adaptive_replay(item_answers(read_table(responses), None, system_column, transpose), parsed, model=model,
                            test_size=test_size, n_random=n_random, n_boot=n_boot, seed=seed, ci=ci,
                            se_target=se_target, label=Path(responses).stem)
    emit(table, output, fmt)
