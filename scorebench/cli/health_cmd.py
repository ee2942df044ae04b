"""``scorebench health ITEMS``: the item health report (broken items, with the evidence for each)."""

from __future__ import annotations

from pathlib import Path

import click
import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.cli._input import FROM_OPTION, FROM_OPTIONS_OPTION, load_table
from scorebench.cli._output import FORMAT_OPTION, OUTPUT_OPTION, emit

_MODELS = ["1pl", "rasch", "2pl", "3pl", "4pl"]


def item_answers(table: pd.DataFrame, correct: str | None, system_column: str | None,
                 transpose: bool) -> pd.DataFrame:
    """A long ``system, item, correct`` table or a wide systems x items matrix from what was read.

    * a long table (``system``, ``item``, ``correct``) passes through;
    * a harness's ``samples`` table (``system``, ``id``, optional ``task``) becomes long, with
      item = ``task/id`` and the 0/1 column ``correct`` (``--correct``, or the only 0/1 column);
    * anything else is a wide matrix (first column: the names when it is not numeric).
    """
    cols = set(table.columns)
    if {"system", "item", "correct"} <= cols:
        return table
    if {"system", "id"} <= cols:
        if correct is None:
            binary = [c for c in table.columns if c not in ("system", "task", "id")
                      and pd.api.types.is_numeric_dtype(table[c]) and table[c].dropna().isin([0, 1]).all()]
            if len(binary) != 1:
                raise InputError(f"samples table: name the 0/1 column with --correct (candidates: {binary or 'none'})")
            correct = binary[0]
        if correct not in cols:
            raise InputError(f"--correct {correct!r} is not a column; got {sorted(map(str, cols))}")
        item = (table["task"].astype(str) + "/" + table["id"].astype(str)) if "task" in cols else table["id"]
        return pd.DataFrame({"system": table["system"], "item": item, "correct": table[correct]})
    column = system_column
    if column is None and len(table.columns) and not pd.api.types.is_numeric_dtype(table[table.columns[0]]):
        column = table.columns[0]
    if column is None and len(table.columns) and str(table.columns[0]).startswith("Unnamed"):
        column = table.columns[0]
    if column is not None:
        if column not in table.columns:
            raise InputError(f"--system-column {column!r} is not a column")
        table = table.set_index(column)
    table.index = table.index.map(str)
    table.columns = [str(c) for c in table.columns]
    wide = table.T if transpose else table
    values = wide.apply(pd.to_numeric, errors="coerce").astype(np.float64)
    bad = values.isna().to_numpy() & wide.notna().to_numpy()
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise InputError(f"answers must be 0 or 1: system {wide.index[r]!r}, item {wide.columns[c]!r} holds "
                         f"{wide.iat[r, c]!r}")
    return values


@click.command("health")
@click.argument("items", type=click.Path(path_type=Path))
@FROM_OPTION
@FROM_OPTIONS_OPTION
@click.option("--correct", default=None, help="Samples tables: the 0/1 column that says an answer was right.")
@click.option("--system-column", default=None, help="Wide tables: the column with system names "
              "(default: the first column when it is not numeric or unnamed).")
@click.option("--transpose", is_flag=True, help="Wide tables stored items x systems.")
@click.option("--model", type=click.Choice(_MODELS), default="2pl", show_default=True)
@click.option("--alpha", type=float, default=0.05, show_default=True, help="False discovery rate (BH).")
@click.option("--min-discrimination", type=float, default=0.1, show_default=True,
              help="Rest-score correlations below this are flagged low.")
@click.option("--mislabel-gap", type=float, default=0.2, show_default=True,
              help="Strong-minus-weak accuracy at or below minus this (with a < 0) flags a likely mislabel.")
@click.option("--a-prior", default=None, help="Normal prior on the slopes, MEAN,SD (helps with few systems).")
@click.option("--flagged-only", is_flag=True, help="Only the items with at least one flag.")
@OUTPUT_OPTION
@FORMAT_OPTION
def command(items, source_format, source_options, correct, system_column, transpose, model, alpha,
            min_discrimination, mislabel_gap, a_prior, flagged_only, output, fmt) -> None:
    """Item health report of the answers in ITEMS: one row per item, evidence columns and flags
    (saturated, negative/low discrimination, misfit, likely mislabelled, duplicate)."""
    from scorebench.health import health_summary, item_health

    prior = None
    if a_prior:
        try:
            prior = tuple(float(v) for v in a_prior.split(","))
        except ValueError:
            raise InputError(f"--a-prior {a_prior!r}: expected MEAN,SD") from None
        if len(prior) != 2 or not prior[1] > 0:
            raise InputError(f"--a-prior {a_prior!r}: expected MEAN,SD with SD > 0")
    answers = item_answers(load_table(items, source_format, source_options), correct, system_column, transpose)
    report = item_health(answers, model=model, alpha=alpha, min_discrimination=min_discrimination,
                         mislabel_gap=mislabel_gap, a_prior=prior)
    summary = health_summary(report)
    click.echo("# " + "; ".join(f"{r.flag}: {r.items}" for r in summary.itertuples())
               + f" (of {len(report)} items, {report.attrs['n_systems']} systems)", err=True)
    table = report[report["issues"] != ""] if flagged_only else report
    emit(table.reset_index(), output, fmt)
