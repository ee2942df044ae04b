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
    """List registered metrics with direction, bounds, kind and citation."""
    echo_listing(list_metrics(family), fmt, _shown)


def _shown(table):
    shown = table[["name", "family", "kind", "higher_is_better", "lower_bound", "upper_bound",
                   "proper", "citation"]].copy()
    shown["direction"] = shown.pop("higher_is_better").map({True: "higher", False: "lower"}).fillna("none")
    shown["citation"] = shown["citation"].str.slice(0, 60)
    return shown
