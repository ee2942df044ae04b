"""``scorebench metrics``: list the registry."""

from __future__ import annotations

import math

import click

from scorebench.core.registry import list_metrics
from scorebench.cli._output import echo_listing

#: Citations are shortened to about this many characters in the plain-text listing (at a
#: word boundary, marked with "..."); ``--format csv`` / ``json`` give them whole.
CITATION_CHARS = 60


@click.command("metrics")
@click.option("--family", default=None, help="Only this family (e.g. scoring_rules, ranking).")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json", "markdown"]), default="table",
              show_default=True, help="table: a summary (citations shortened, what each interval covers "
                                      "in short); csv / json: every field in full; markdown: a catalogue "
                                      "table with typed parameters and what each metric is tested against.")
def command(family: str | None, fmt: str) -> None:
    """List registered metrics with their aliases (other spellings that resolve to the same
    metric, e.g. "also: map@k"), direction, bounds, kind, interval rule, what the interval covers,
    typed parameters, what each is tested against (reference and tolerance) and citation.

    The interval column names the rule that puts the bootstrap interval on the metric (the
    same in every engine and on the boards); interval_covers says whether that interval covers
    the population value or only a biased plug-in estimator's mean at this sample size (csv /
    json give the full sentence).
    """
    table = list_metrics(family)
    if fmt == "markdown":
        click.echo(markdown_catalogue(table))
    else:
        echo_listing(table, fmt, _shown)


#: Columns of ``scorebench metrics --format markdown`` (the catalogue view).
MARKDOWN_COLUMNS = ("name", "aliases", "family", "kind", "direction", "param_types", "interval", "tested_against",
                    "citation")


def markdown_catalogue(table) -> str:
    """The registry listing as a Markdown table: typed parameters and reference with tolerance.

    Examples
    --------
    >>> from scorebench.core.registry import list_metrics
    >>> print(markdown_catalogue(list_metrics()[lambda t: t["name"] == "ece"]).splitlines()[2])  # doctest: +ELLIPSIS
    | ece | - | calibration | binary | lower | n_bins (an integer, default 15); binning (text {uniform, ...
    """
    shown = table.assign(direction=table["higher_is_better"].map({True: "higher", False: "lower"}).fillna("none"))
    header = "| " + " | ".join(MARKDOWN_COLUMNS) + " |"
    rule = "|" + "|".join("---" for _ in MARKDOWN_COLUMNS) + "|"
    rows = ["| " + " | ".join(_cell(row[c]) for c in MARKDOWN_COLUMNS) + " |" for _, row in shown.iterrows()]
    return "\n".join([header, rule, *rows])


def _cell(value) -> str:
    text = "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)
    return " ".join(text.split()).replace("|", "\\|") or "-"


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


def _short_covers() -> dict[str, str]:
    from scorebench.core.registry import COVERS_TEXT

    return {COVERS_TEXT["population"]: "population value", COVERS_TEXT["estimator_mean"]: "estimator mean at this n"}


_COVERS_SHORT = _short_covers()


def _shown(table):
    shown = table[["name", "aliases", "family", "kind", "higher_is_better", "lower_bound", "upper_bound",
                   "proper", "interval", "interval_covers", "param_types", "citation"]].copy()
    shown["direction"] = shown.pop("higher_is_better").map({True: "higher", False: "lower"}).fillna("none")
    shown["interval_covers"] = shown["interval_covers"].map(_COVERS_SHORT)
    shown["citation"] = [shorten(c) if isinstance(c, str) else "" for c in shown["citation"]]
    shown["param_types"] = [shorten(c) if c else "-" for c in shown["param_types"]]
    shown["aliases"] = [f"also: {c}" if c else "" for c in shown["aliases"]]
    return shown
