"""``scorebench metrics``: list the registry."""

from __future__ import annotations

import textwrap

import click

from ..registry import list_metrics
from ._output import echo_listing

#: Citations are shortened to about this many characters in the plain-text listing (at a
#: word boundary, marked with "..."); ``--format csv`` / ``json`` give them whole.
CITATION_CHARS = 60


@click.command("metrics")
@click.option("--family", default=None, help="Only this family (e.g. scoring_rules, ranking).")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table",
              show_default=True, help="table: a summary (citations shortened, the interval rules explained "
                                      "below it); csv / json: every field in full.")
def command(family: str | None, fmt: str) -> None:
    """List registered metrics with direction, bounds, kind, interval rule and citation.

    The interval column names the rule that puts the bootstrap interval on the metric (the
    same in every engine and on the boards); the lines under the table say what each rule's
    interval covers (the population value, or the estimator's expectation at the sample size
    used).
    """
    table = list_metrics(family)
    echo_listing(table, fmt, _shown)
    if fmt == "table" and len(table):
        rules = table.drop_duplicates("interval").sort_values("interval")
        click.echo("\nintervals cover:")
        for rule, covers in zip(rules["interval"], rules["interval_covers"]):
            click.echo(textwrap.fill(f"{rule}: {covers}", width=100, initial_indent="  ",
                                     subsequent_indent="      "))


def shorten(text: str, limit: int = CITATION_CHARS) -> str:
    """``text`` cut at a word boundary to at most ``limit`` characters, marked with "...".

    Examples
    --------
    >>> shorten("Savage (1971), JASA 66(336):783-801; Gneiting & Raftery (2007), JASA", 40)
    'Savage (1971), JASA 66(336):783-801; ...'
    >>> shorten("Brier (1950)", 40)
    'Brier (1950)'
    """
    text = " ".join(str(text).split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 3].rsplit(" ", 1)[0]
    return cut + " ..."


def _shown(table):
    shown = table[["name", "family", "kind", "higher_is_better", "lower_bound", "upper_bound",
                   "proper", "interval", "citation"]].copy()
    shown["direction"] = shown.pop("higher_is_better").map({True: "higher", False: "lower"}).fillna("none")
    shown["citation"] = [shorten(c) if isinstance(c, str) else "" for c in shown["citation"]]
    return shown
