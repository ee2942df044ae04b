"""``scorebench irt fit|score|select``: item response theory on right/wrong answer tables."""

from __future__ import annotations

from importlib import import_module
from pathlib import Path

import click
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.io.tables import read_table, write_table
from scorebench.cli._output import FORMAT_OPTION, OUTPUT_OPTION, emit

_MODELS = ["1pl", "rasch", "2pl", "3pl", "4pl"]
_FIT_MODELS = _MODELS + ["grm", "gpcm", "pcm", "rsm"]


def _responses(path: Path, system_column: str | None, transpose: bool) -> pd.DataFrame:
    """A long responses table as is, or a wide matrix with systems as the index."""
    table = read_table(path)
    if {"system", "item", "correct"} <= set(table.columns):
        return table
    column = system_column
    if column is None and len(table.columns) and not pd.api.types.is_numeric_dtype(table[table.columns[0]]):
        column = table.columns[0]  # the first column holds the names
    if column is not None:
        if column not in table.columns:
            raise InputError(f"--system-column {column!r} is not a column of {path}")
        table = table.set_index(column)
    table.columns = [str(c) for c in table.columns]
    return table.T if transpose else table


def _prior(pairs: tuple[str, ...]) -> dict | None:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        parts = value.split(",")
        if not sep or key.strip() not in ("a", "d", "c", "u") or len(parts) != 2:
            raise InputError(f"--prior {pair!r}: expected a=MEAN,SD, d=MEAN,SD, c=ALPHA,BETA or u=ALPHA,BETA")
        try:
            out[key.strip()] = (float(parts[0]), float(parts[1]))
        except ValueError:
            raise InputError(f"--prior {pair!r}: the values must be numbers") from None
    return out or None


_INPUT = [
    click.option("--system-column", default=None, help="Wide tables: the column with system names "
                 "(default: the first column when it is not numeric)."),
    click.option("--transpose", is_flag=True, help="Wide tables stored items x systems."),
]


def _input_options(fn):
    for option in reversed(_INPUT):
        fn = option(fn)
    return fn


@click.group("irt")
def command() -> None:
    """Item response theory: fit models, score new systems, compress benchmarks."""


@command.command("fit")
@click.argument("responses", type=click.Path(path_type=Path))
@click.option("--model", type=click.Choice(_FIT_MODELS), default="2pl", show_default=True,
              help="grm/gpcm/pcm/rsm: polytomous models for integer scores 0..K.")
@click.option("--method", type=click.Choice(["auto", "em", "jml"]), default="auto", show_default=True)
@click.option("--scoring", type=click.Choice(["eap", "map", "ml"]), default="eap", show_default=True)
@click.option("--prior", "priors", multiple=True, help="Item prior, e.g. a=1,1.5 (normal) or c=5,17 (beta).")
@click.option("--max-iter", default=500, show_default=True, type=int)
@click.option("--abilities-out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the abilities (theta, se) here.")
@click.option("--fit-stats", is_flag=True, help="Add S-X2 item fit columns; print M2, RMSEA and the "
              "marginal reliability (complete data only).")
@_input_options
@OUTPUT_OPTION
@FORMAT_OPTION
def fit_command(responses, model, method, scoring, priors, max_iter, abilities_out, fit_stats, system_column,
                transpose, output, fmt) -> None:
    """Fit an IRT model to RESPONSES (long: system, item, correct; or wide 0/1 or 0..K) and print the items."""
    from scorebench.irt import fit

    table = _responses(responses, system_column, transpose)
    result = fit(table, model, method=method, scoring=scoring, priors=_prior(priors), max_iter=max_iter, warn=False)
    summary = result.summary()
    click.echo("# " + "; ".join(f"{k}: {v:.6g}" if isinstance(v, float) else f"{k}: {v}"
                                for k, v in summary.items()), err=True)
    if not result.converged:
        click.echo(f"warning: {result.message}", err=True)
    if abilities_out is not None:
        write_table(result.abilities.reset_index(), abilities_out)
    items = result.items.reset_index()
    if fit_stats:
        from scorebench.irt import m2, marginal_reliability, s_x2

        sx2 = s_x2(result, table)
        items = items.join(sx2.rename(columns={"df": "S_X2_df", "RMSEA": "S_X2_RMSEA", "p": "S_X2_p"})
                           .reset_index(drop=True))
        try:
            m = m2(result, table)
            click.echo(f"# M2: {m['M2']:.6g}; df: {m['df']}; p: {m['p']:.4g}; RMSEA: {m['RMSEA']:.4g}", err=True)
        except InputError as exc:  # too few items for M2: say so, keep the item fit
            click.echo(f"# M2: not available ({exc})", err=True)
        click.echo(f"# marginal reliability: {marginal_reliability(result):.4f}", err=True)
    items.attrs.update({"model": result.model, "method": result.method, "loglik": result.loglik,
                        "converged": result.converged})
    emit(items, output, fmt)


@command.command("score")
@click.argument("items", type=click.Path(path_type=Path))
@click.argument("responses", type=click.Path(path_type=Path))
@click.option("--scoring", type=click.Choice(["eap", "map", "ml"]), default="eap", show_default=True,
              help="Polytomous items tables (grm/gpcm/pcm/rsm fits) take eap only.")
@click.option("--latent-mean", type=float, default=0.0, show_default=True, help="Mean of the ability prior.")
@click.option("--latent-sd", type=float, default=1.0, show_default=True,
              help="SD of the ability prior (a pcm/rsm fit's latent_sd).")
@_input_options
@OUTPUT_OPTION
@FORMAT_OPTION
def score_command(items, responses, scoring, latent_mean, latent_sd, system_column, transpose, output, fmt) -> None:
    """Score the systems in RESPONSES against fixed item parameters ITEMS (from `irt fit`, 0/1 or
    polytomous)."""
    from scorebench.irt import score

    table = score(_responses(responses, system_column, transpose), read_table(items), method=scoring,
                  mu=latent_mean, sigma=latent_sd)
    emit(table.reset_index(), output, fmt)


@command.command("select")
@click.argument("responses", type=click.Path(path_type=Path))
@click.option("--sizes", default=None, help="Candidate subset sizes, comma-separated (default: a ladder).")
@click.option("--model", type=click.Choice(_MODELS), default="2pl", show_default=True)
@click.option("--cv", default=5, show_default=True, type=int, help="Cross-validation folds for the size.")
@click.option("--test-size", default=0.2, show_default=True, type=float, help="Share of systems held out.")
@click.option("--seed", default=0, show_default=True, type=int)
@_input_options
@OUTPUT_OPTION
@FORMAT_OPTION
def select_command(responses, sizes, model, cv, test_size, seed, system_column, transpose, output, fmt) -> None:
    """Choose a small informative item subset of RESPONSES and report the held-out RMSE."""
    from scorebench.irt import select

    try:
        parsed = [int(s) for s in sizes.split(",")] if sizes else None
    except ValueError:
        raise InputError(f"--sizes {sizes!r}: expected integers separated by commas") from None
    sel = select(_responses(responses, system_column, transpose), parsed, model=model, cv=cv,
                 test_size=test_size, seed=seed)
    for row in sel.cv.itertuples(index=False):
        click.echo(f"# cv size {row.size}: rmse {row.rmse:.4f} (se {row.se:.4f})", err=True)
    click.echo(f"# selected {sel.size} items; held-out RMSE of the reconstructed score {sel.test_rmse:.4f}",
               err=True)
    table = pd.DataFrame({"item": list(sel.items)})
    table.attrs.update({"size": sel.size, "test_rmse": sel.test_rmse, "seed": seed})
    emit(table, output, fmt)


# ``irt adapt`` lives in its own module (adaptive testing replay).
command.add_command(import_module("scorebench.cli.adapt_cmd").command)
