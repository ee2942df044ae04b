"""Shared output handling of the commands: a readable table, or an atomic file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click
import numpy as np
import pandas as pd

from scorebench.io.tables import WRITE_FORMATS, check_writable, detect_format, format_column, format_value, write_table
from scorebench.core.registry import parse_value
from scorebench.io.formats import get_format


def _check_output(ctx: click.Context, param: click.Parameter, value):
    """Check the ``-o`` path (writable, known format) before any work is done.

    The output and format options each store their value; whichever is processed second
    runs the check, so a bad path fails in milliseconds, not after the computation.
    """
    ctx.meta[f"scorebench.{param.name}"] = value
    if {"scorebench.output", "scorebench.fmt"} <= set(ctx.meta):
        output, fmt = ctx.meta["scorebench.output"], ctx.meta["scorebench.fmt"]
        if output is not None:
            if fmt is None or fmt in WRITE_FORMATS:  # other formats are written by their command
                detect_format(output, fmt, allowed=WRITE_FORMATS)
            check_writable(output)
    return value


def _safe_csv(ctx: click.Context, param: click.Parameter, value):
    ctx.meta["scorebench.safe_csv"] = bool(value)
    return value


def format_option(*extra: str, help: str = "Output format (default: from the --output suffix)."):
    """The ``--format`` option: the table formats of the registry, and ``extra`` writable formats
    of it that the command writes itself (``trec_eval``)."""
    for name in extra:
        if not get_format(name).writable:
            raise ValueError(f"--format {name}: the format registry has no writer for it")
    return click.option("--format", "fmt", type=click.Choice([*WRITE_FORMATS, *extra]), default=None,
                        callback=_check_output, help=help)


FORMAT_OPTION = format_option()
_SAFE_CSV = click.option("--safe-csv", is_flag=True, expose_value=False, callback=_safe_csv,
                         help="CSV output for spreadsheets: prefix text cells that start with = + - @ "
                              "(or a tab/CR) with ' so they are not run as formulas.")


def output_option(*, required: bool = False, help: str = "Write the result here (atomically) instead of printing."):
    """``--output/-o`` (checked before any work) together with ``--safe-csv``."""
    option = click.option("--output", "-o", "output", type=click.Path(dir_okay=False, path_type=Path),
                          default=None, required=required, callback=_check_output, help=help)
    return lambda f: option(_SAFE_CSV(f))


OUTPUT_OPTION = output_option()


def emit(table: pd.DataFrame, output: Path | None, fmt: str | None, group: str | None = None) -> None:
    """Print ``table`` readably, or write it to ``output`` in ``fmt``.

    Printed numbers have 4 decimals; with ``group`` (e.g. ``"method"`` in ``aggregate``) they
    go through :func:`~scorebench.io.tables.format_column` per group of rows instead, so counts (a
    Borda score, a Copeland count) print as integers next to mean scores with decimals in the
    same column. Files written with ``-o`` keep the full values.
    """
    if output is not None:
        detect_format(output, fmt, allowed=WRITE_FORMATS)
        ctx = click.get_current_context(silent=True)
        safe = bool(ctx is not None and ctx.meta.get("scorebench.safe_csv"))
        write_table(table, output, format=fmt, safe_csv=safe)
        click.echo(f"wrote {len(table)} rows to {output}", err=True)
        return
    if fmt is not None and fmt != "markdown":
        raise click.UsageError("--format without --output only supports markdown; use --output FILE")
    if fmt == "markdown":
        from scorebench.io.tables import render_markdown

        click.echo(render_markdown(table, meta=_plain(table.attrs)))
        return
    shown = table.copy()
    keys = (table[group].astype(str).to_numpy() if group is not None and group in table.columns
            else None)
    for col in shown.columns:
        if pd.api.types.is_float_dtype(shown[col]) and keys is None:
            shown[col] = [format_value(v) for v in shown[col]]
        elif pd.api.types.is_float_dtype(shown[col]):
            text = np.empty(len(table), dtype=object)
            values = table[col].to_numpy(dtype=np.float64)
            for key in pd.unique(keys):
                rows = keys == key
                text[rows] = format_column(values[rows])
            shown[col] = list(text)
    click.echo(shown.to_string(index=False))
    meta = _plain(table.attrs)
    if meta:
        click.echo("# " + "; ".join(f"{k}: {v}" for k, v in meta.items()))


def echo_listing(table: pd.DataFrame, fmt: str, shown: Callable[[pd.DataFrame], pd.DataFrame]) -> None:
    """A registry listing (``scorebench metrics``, ``kinds``) as CSV, JSON records, or the
    ``shown(table)`` columns as plain text."""
    if fmt == "csv":
        click.echo(table.to_csv(index=False), nl=False)
    elif fmt == "json":
        click.echo(table.to_json(orient="records", indent=1))
    else:
        click.echo(shown(table).to_string(index=False) if len(table) else "none registered")


def _plain(attrs: dict) -> dict:
    return {k: v for k, v in sorted(attrs.items()) if isinstance(v, (str, int, float, bool))}


def parse_options(pairs: tuple[str, ...], *, undeclared: bool = False) -> dict[str, object]:
    """``key=value`` strings to a dict of text values.

    The declaration of each option (a kind's :class:`~scorebench.core.table_schema.Option`, a
    metric's typed parameters) converts the text; nothing is guessed here. ``undeclared=True``
    is for parameters that have no typed declaration yet (aggregation methods' ``--param``):
    their values are read as true/false, integers or numbers where they spell one.
    """
    from scorebench.core.errors import InputError

    out: dict[str, object] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise InputError(f"option {pair!r}: expected key=value")
        out[key.strip()] = _untyped_value(value.strip()) if undeclared else parse_value(value.strip())
    return out


def _untyped_value(text: str) -> object:
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return text
