"""``scorebench metrics``: list the registry."""

from __future__ import annotations

import click

from ..registry import list_metrics
from ._output import echo_listing


@click.command("metrics")
@click.option("--family", default=None, help="Only this family (e.g. scoring_rules, ranking).")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table",
              show_default=True)
def command(family: str | None, fmt: str) -> None:
    """List registered metrics with direction, bounds, kind, interval rule, what the interval covers
    (the population value, or a biased plug-in estimator's mean at this n) and citation."""
    echo_listing(list_metrics(family), fmt, _shown)


def _short_covers() -> dict[str, str]:
    from ..registry import COVERS_TEXT

    return {COVERS_TEXT["population"]: "population value", COVERS_TEXT["estimator_mean"]: "estimator mean at this n"}


_COVERS_SHORT = _short_covers()


def _shown(table):
    shown = table[["name", "family", "kind", "higher_is_better", "lower_bound", "upper_bound",
                   "proper", "interval", "interval_covers", "citation"]].copy()
    shown["direction"] = shown.pop("higher_is_better").map({True: "higher", False: "lower"}).fillna("none")
    shown["interval_covers"] = shown["interval_covers"].map(_COVERS_SHORT)
    shown["citation"] = shown["citation"].str.slice(0, 60)
    return shown
