"""``scorebench report``: one page that compares two or more runs (HTML, Markdown or LaTeX)."""

from __future__ import annotations

from pathlib import Path

import click

from scorebench.analysis.gates import GATES
from scorebench.io.tables import check_writable
from scorebench.report import CORRECTIONS, REPORT_TESTS, comparison_report, write_report
from scorebench.report.render import report_format
from scorebench.cli._input import from_option
from scorebench.cli._output import parse_options


def _check_report_path(ctx: click.Context, param: click.Parameter, value: Path) -> Path:
    report_format(value)  # a wrong suffix fails before any work
    check_writable(value)
    return value


@click.command("report")
@click.argument("runs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--output", "-o", required=True, type=click.Path(dir_okay=False, path_type=Path),
              callback=_check_report_path, help="Report file: .html (self-contained page), .md or .tex (booktabs).")
@click.option("--metric", "-m", default=None,
              help="A per-row metric (default: accuracy for a 'correct' column, or sample_mean@COL for one score "
                   "column), e.g. sample_mean@acc,none.")
@from_option(help="Read the RUNS as a harness's result files or folders (default: detected).")
@click.option("--from-option", "source_options", multiple=True, help="Reader option as KEY=VALUE.")
@click.option("--baseline", default=None, help="Compare every system against this one (default: all pairs).")
@click.option("--test", type=click.Choice(REPORT_TESTS), default="auto", show_default=True,
              help="auto: McNemar for 0/1, cluster-robust t with --cluster, permutation otherwise.")
@click.option("--correction", type=click.Choice(tuple(CORRECTIONS)), default="holm", show_default=True,
              help="Multiple-testing adjustment: Holm (FWER) or Benjamini-Hochberg (FDR).")
@click.option("--cluster", default=None, help="Column of item clusters (design effect, cluster-robust tests).")
@click.option("--alpha", default=0.05, show_default=True, type=float)
@click.option("--ci", default=0.95, show_default=True, type=float)
@click.option("--power", "power_", default=0.8, show_default=True, type=float, help="Planned power.")
@click.option("--delta", "deltas", multiple=True, type=float,
              help="A difference to plan for (repeatable; default 0.01, 0.02, 0.05 for 0/1 metrics).")
@click.option("--bootstrap", "n_boot", default=1000, show_default=True, type=int)
@click.option("--permutations", "n_perm", default=10000, show_default=True, type=int)
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--gate", "gate_name", type=click.Choice(GATES), default=None,
              help="Also decide a gate against --baseline; the exit status is then 0 (holds) or 1 (does not).")
@click.option("--margin", default=0.0, show_default=True, type=float, help="Gate margin in the metric's units.")
@click.option("--direction", type=click.Choice(["higher", "lower"]), default=None,
              help="Whether higher values are better, for a metric that declares no direction (sample_mean@COL).")
@click.option("--title", default=None, help="Title of the report.")
def command(runs, output, metric, source_format, source_options, baseline, test, correction, cluster, alpha, ci,
            power_, deltas, n_boot, n_perm, seed, gate_name, margin, direction, title) -> None:
    """Compare the systems in RUNS (tables or harness result files) and write one report.

    Scores with intervals, every pair's paired difference and test with adjusted p-values,
    tie bands, a per-task breakdown, the flipped items and a power / sample-size plan.
    """
    rep = comparison_report(list(runs), metric, from_format=source_format, baseline=baseline, test=test,
                            correction=correction, cluster=cluster, alpha=alpha, ci=ci, power=power_,
                            deltas=list(deltas) or None, n_boot=n_boot, n_perm=n_perm, seed=seed, gate=gate_name,
                            margin=margin, reader_options=parse_options(source_options),
                            higher_is_better=None if direction is None else direction == "higher")
    write_report(rep, output, title=title)
    n_systems = len(rep.scores)
    click.echo(f"wrote {output}: {n_systems} systems, {len(rep.pairs)} pairs, {len(rep.flips)} flipped items",
               err=True)
    if rep.gates is not None:
        click.echo(rep.gates.attrs["verdict"], err=True)
        raise SystemExit(0 if rep.gates.attrs["holds"] else 1)
