"""``scorebench gstudy``: variance components of a crossed design and the D-study standard errors."""

from __future__ import annotations

from pathlib import Path

import click

from scorebench.core.errors import InputError
from scorebench.analysis.gtheory import g_study
from scorebench.cli._input import load_table
from scorebench.cli._output import FORMAT_OPTION, OUTPUT_OPTION, emit


def _sizes(pairs: tuple[str, ...]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for pair in pairs:
        facet, sep, values = pair.partition("=")
        try:
            out[facet.strip()] = [int(v) for v in values.split(",")]
        except ValueError:
            sep = ""
        if not sep or not facet.strip():
            raise InputError(f"--project {pair!r}: expected FACET=N[,N...] (e.g. prompt=1,3,9)")
    return out


@click.command("gstudy")
@click.argument("table", type=click.Path(path_type=Path))
@click.option("--facet", "facets", multiple=True, required=True,
              help="A facet column, items first (repeatable: --facet id --facet seed --facet prompt).")
@click.option("--score", required=True, help="The numeric score column (e.g. correct).")
@click.option("--by", default="system", show_default=True, help="One G-study per value of this column.")
@click.option("--ci", default=0.95, show_default=True, type=float)
@click.option("--project", "projections", multiple=True,
              help="D-study: FACET=N[,N...] levels to project the standard error to (repeatable); "
                   "prints the projected SEs instead of the components.")
@OUTPUT_OPTION
@FORMAT_OPTION
def command(table, facets, score, by, ci, projections, output, fmt) -> None:
    """Variance components (G-study) of a fully crossed design in TABLE, or projected SEs (D-study)."""
    study = g_study(load_table(table, None), list(facets), score, by=by, ci=ci)
    if projections:
        emit(study.project(**_sizes(projections)), output, fmt)
    else:
        emit(study.components, output, fmt)
