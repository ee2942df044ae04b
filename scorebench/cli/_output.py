"""Shared output handling of the commands: a readable table, or an atomic file."""

from __future__ import annotations

from pathlib import Path

import click
import pandas as pd

from ..io import WRITE_FORMATS, detect_format, format_value, write_table
from ..registry import parse_value

FORMAT_OPTION = click.option("--format", "fmt", type=click.Choice(WRITE_FORMATS), default=None,
                             help="Output format (default: from the --output suffix).")
OUTPUT_OPTION = click.option("--output", "-o", "output", type=click.Path(dir_okay=False, path_type=Path),
                             default=None, help="Write the result here (atomically) instead of printing.")


def emit(table: pd.DataFrame, output: Path | None, fmt: str | None) -> None:
    """Print ``table`` readably, or write it to ``output`` in ``fmt``."""
    if output is not None:
        detect_format(output, fmt, allowed=WRITE_FORMATS)
        write_table(table, output, format=fmt)
        click.echo(f"wrote {len(table)} rows to {output}", err=True)
        return
    if fmt is not None and fmt != "markdown":
        raise click.UsageError("--format without --output only supports markdown; use --output FILE")
    if fmt == "markdown":
        from ..io import render_markdown

        click.echo(render_markdown(table, meta=_plain(table.attrs)))
        return
    shown = table.copy()
    for col in shown.columns:
        if pd.api.types.is_float_dtype(shown[col]):
            shown[col] = [format_value(v) for v in shown[col]]
    click.echo(shown.to_string(index=False))
    meta = _plain(table.attrs)
    if meta:
        click.echo("# " + "; ".join(f"{k}: {v}" for k, v in meta.items()))


def _plain(attrs: dict) -> dict:
    return {k: v for k, v in sorted(attrs.items()) if isinstance(v, (str, int, float, bool))}


def parse_options(pairs: tuple[str, ...]) -> dict[str, object]:
    """``key=value`` strings to a dict, values parsed as int/float/bool where they look so."""
    from ..errors import InputError

    out: dict[str, object] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise InputError(f"option {pair!r}: expected key=value")
        out[key.strip()] = parse_value(value.strip())
    return out
