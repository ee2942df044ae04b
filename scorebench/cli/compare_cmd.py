"""``scorebench compare``: paired significance tests between systems."""

from __future__ import annotations

from pathlib import Path

import click

from ..comparison import COMPARE_TESTS, compare
from ._input import FROM_OPTION, FROM_OPTIONS_OPTION, load_table
from ._kind_options import given_kind_options, kind_option_flags, kinds_epilog
from ._output import FORMAT_OPTION, OUTPUT_OPTION, emit, parse_options


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
@kind_option_flags
@click.option("--option", "-O", "options", multiple=True,
              help="Other kind option as key=value, converted to its declared type (see `scorebench kinds`).")
@FROM_OPTION
@FROM_OPTIONS_OPTION
@OUTPUT_OPTION
@FORMAT_OPTION
def command(table, metric, baseline, kind, tests, ci, n_boot, n_perm, horizon, seed, alpha, power_, cluster,
            repeats, options, source_format, source_options, output, fmt, **kind_flags) -> None:
    """Paired comparison of the systems in TABLE on --metric, Holm/BH-corrected."""
    kind_options = {**parse_options(options), **given_kind_options(kind_flags)}
    result = compare(load_table(table, source_format, source_options), metric, baseline=baseline, kind=kind,
                     tests=list(tests) or None, ci=ci, n_boot=n_boot, n_perm=n_perm, seed=seed, horizon=horizon,
                     alpha=alpha, power=power_, cluster=cluster, repeats=repeats, **kind_options)
    emit(result, output, fmt)
