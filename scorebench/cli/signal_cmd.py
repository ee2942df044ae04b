"""``scorebench signal SCORES``: signal, noise, SNR, monotonicity and decision accuracy of benchmarks."""

from __future__ import annotations

from pathlib import Path

import click

from scorebench.io.tables import read_table
from scorebench.cli._output import FORMAT_OPTION, OUTPUT_OPTION, emit


@click.command("signal")
@click.argument("scores", type=click.Path(path_type=Path))
@click.option("--over", default="step", show_default=True,
              help="Column of the checkpoint step (or seed); 'none' for one score per system.")
@click.option("--last", type=int, default=5, show_default=True, help="Final checkpoints in the noise.")
@click.option("--seeds", is_flag=True, help="--over holds seeds, not training steps.")
@click.option("--task", default=None, help="Column of the benchmark / sub-task (adds noisy sub-task flags).")
@click.option("--scale", default=None, help="Column of the model scale (decision accuracy vs the largest).")
@OUTPUT_OPTION
@FORMAT_OPTION
def command(scores, over, last, seeds, task, scale, output, fmt) -> None:
    """Signal, noise, SNR (Heineman et al., 2025), monotonicity and decision accuracy of the scores in SCORES
    (columns system, value, and the step/seed, task and scale columns named)."""
    from scorebench.health import signal_noise

    table = signal_noise(read_table(scores), over=None if over.lower() == "none" else over, last=last, seeds=seeds,
                         task=task, scale=scale)
    emit(table, output, fmt)
