"""``scorebench kinds``: the table kinds, their columns and options, from their declarations."""

from __future__ import annotations

import click

from scorebench.core.tables import STAGES, get_kind, kinds_table
from scorebench.cli._output import echo_listing


@click.command("kinds")
@click.argument("name", required=False)
@click.option("--stage", type=click.Choice(STAGES), default=None,
              help="Only the kinds evaluate reads (result tables) or those aggregate reads.")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json", "markdown"]), default="table",
              show_default=True)
def command(name: str | None, stage: str | None, fmt: str) -> None:
    """List the table kinds, or describe kind NAME column by column."""
    if name is not None:
        kind = get_kind(name, stage=None)
        click.echo(f"{kind.name} ({kind.stage}): {kind.description}")
        for column in kind.columns:
            click.echo(f"  column {column.describe()}")
        for option in kind.options:
            flag = f" [{option.cli_name}]" if option.flag else " [-O]"
            click.echo(f"  option {option.describe()}{flag}")
        return
    if fmt == "markdown":
        from scorebench.core.kinds_reference import kinds_markdown

        click.echo(kinds_markdown(stage), nl=False)
        return
    echo_listing(kinds_table(stage), fmt, lambda t: t[["kind", "stage", "description"]])
