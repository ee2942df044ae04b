"""``scorebench compare``: paired significance tests between systems."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path

import click

from scorebench.evaluation.comparison import COMPARE_TESTS, compare
from scorebench.evaluation.dask_engine import connect, read_dask
from scorebench.analysis.gates import GATES, gate
from scorebench.cli._input import FROM_OPTION, FROM_OPTIONS_OPTION, load_table
from scorebench.cli._kind_options import given_kind_options, kind_option_flags, kinds_epilog
from scorebench.cli._output import FORMAT_OPTION, OUTPUT_OPTION, emit, parse_options


@click.command("compare", epilog=kinds_epilog())
@click.argument("table", type=click.Path(path_type=Path))
@click.option("--metric", "-m", required=True, help="A per-row metric, e.g. crps_normal, ndcg@10.")
@click.option("--baseline", default=None, help="Compare every system against this one (default: all pairs).")
@click.option("--kind", default=None)
@click.option("--test", "tests", multiple=True, type=click.Choice(COMPARE_TESTS),
              help="Tests to run (repeatable; default: all that apply).")
@click.option("--ci", default=0.95, show_default=True, type=float)
@click.option("--bootstrap", "n_boot", default=1000, show_default=True, type=int)
@click.option("--permutations", "n_perm", default=10000, show_default=True, type=int)
@click.option("--horizon", default=1, show_default=True, type=int, help="Forecast horizon (Diebold–Mariano lags = h-1).")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--alpha", default=0.05, show_default=True, type=float,
              help="Level for 'better' (Holm-corrected p below alpha) and the minimum detectable effect.")
@click.option("--power", "power_", default=0.8, show_default=True, type=float,
              help="Power at which the minimum detectable effect (column mde) is computed.")
@click.option("--cluster", default=None, help="Column of item clusters (cluster bootstrap, CR1 t, cluster sign flips).")
@click.option("--repeats", default=None, help="Column numbering several samples per id (two-level bootstrap).")
@click.option("--gate", "gate_name", type=click.Choice(GATES), default=None,
              help="Decide instead of test: each system against --baseline (paired t / TOST); exit 0 when the "
                   "decision holds for every system and task, 1 when not; one-line verdict on stderr.")
@click.option("--margin", default=0.0, show_default=True, type=float,
              help="Gate margin in the metric's units (0.01 = one point of accuracy).")
@click.option("--direction", type=click.Choice(["higher", "lower"]), default=None,
              help="With --gate: whether higher values are better, for a metric that declares no direction.")
@click.option("--engine", type=click.Choice(["pandas", "dask"]), default="pandas", show_default=True,
              help="dask: read TABLE (a file, glob or Parquet folder) lazily and reduce every pair by partial sums.")
@click.option("--scheduler", default=None, help="Dask scheduler address (with --engine dask).")
@kind_option_flags
@click.option("--option", "-O", "options", multiple=True,
              help="Other kind option as key=value, converted to its declared type (see `scorebench kinds`).")
@FROM_OPTION
@FROM_OPTIONS_OPTION
@OUTPUT_OPTION
@FORMAT_OPTION
def command(table, metric, baseline, kind, tests, ci, n_boot, n_perm, horizon, seed, alpha, power_, cluster,
            repeats, gate_name, margin, direction, engine, scheduler, options, source_format, source_options, output,
            fmt, **kind_flags) -> None:
    """Paired comparison of the systems in TABLE on --metric, Holm/BH-corrected.

    With --gate (superiority, non-inferiority, equivalence) and --baseline it is a decision
    for CI: the exit status is 0 when the gate holds, 1 when it does not.
    """
    kind_options = {**parse_options(options), **given_kind_options(kind_flags)}
    if gate_name is not None and engine == "dask":
        raise click.UsageError("--gate runs in memory; use --engine pandas")
    if gate_name is not None:
        if direction is not None:
            kind_options["higher_is_better"] = direction == "higher"
        _gate(table, metric, baseline, kind, gate_name, margin, alpha, cluster, repeats, source_format,
              source_options, output, fmt, kind_options)
        return
    if scheduler is not None and engine != "dask":
        raise click.UsageError("--scheduler applies to --engine dask")
    if engine == "dask" and source_format is not None:
        raise click.UsageError("--from reads result files in memory; use --engine pandas")
    with connect(scheduler) if engine == "dask" else nullcontext():
        data = read_dask(str(table)) if engine == "dask" else load_table(table, source_format, source_options)
        result = compare(data, metric, baseline=baseline, kind=kind, tests=list(tests) or None, ci=ci, n_boot=n_boot,
                         n_perm=n_perm, seed=seed, horizon=horizon, alpha=alpha, power=power_, cluster=cluster,
                         repeats=repeats, **kind_options)
    emit(result, output, fmt)


def _gate(table, metric, baseline, kind, gate_name, margin, alpha, cluster, repeats, source_format, source_options,
          output, fmt, kind_options) -> None:
    """Run the gate, emit its table, print the verdict and exit 0 (holds) or 1 (does not)."""
    if baseline is None:
        raise click.UsageError("--gate needs --baseline (the system the others are gated against)")
    if repeats is not None:
        raise click.UsageError("--gate does not take --repeats; average the samples per id first")
    result = gate(load_table(table, source_format, source_options), metric, baseline=baseline, gate=gate_name,
                  margin=margin, alpha=alpha, kind=kind, cluster=cluster, **kind_options)
    emit(result, output, fmt)
    click.echo(result.attrs["verdict"], err=True)
    raise SystemExit(0 if result.attrs["holds"] else 1)
