"""``scorebench aggregate``: rank systems across tasks (social choice, pairwise ratings, means)."""

from __future__ import annotations

import textwrap
import warnings
from pathlib import Path
from typing import Any

import click
import pandas as pd

from scorebench.core.source_conventions import refuse_mixed_metrics, source_directions
from scorebench.core.errors import InputError
from scorebench.cli._input import FROM_OPTION, FROM_OPTIONS_OPTION, load_table
from scorebench.cli._output import FORMAT_OPTION, OUTPUT_OPTION, emit, parse_options


def _weights(pairs: tuple[str, ...]) -> dict[str, float] | None:
    if not pairs:
        return None
    out: dict[str, float] = {}
    for chunk in pairs:
        for pair in chunk.split(","):
            key, sep, value = pair.partition("=")
            if not sep or not key.strip():
                raise InputError(f"--weights {pair!r}: expected COLUMN=WEIGHT")
            try:
                out[key.strip()] = float(value)
            except ValueError:
                raise InputError(f"--weights {pair!r}: weight {value!r} is not a number") from None
    return out


def _style_coefficients(table: pd.DataFrame, names: list[str], options: dict, n_boot: int, seed: int,
                        ci: float) -> pd.DataFrame:
    """``--coefficients``: style control's covariates with bootstrap intervals (not a ranking)."""
    if names != ["bradley_terry_style"]:
        raise InputError(f"--coefficients applies to --method bradley_terry_style alone, got {', '.join(names)}")
    from scorebench.aggregate.style_control import style_control

    return style_control(table, n_boot=n_boot, seed=seed, ci=ci, **options).coefficients_frame()


@click.command("aggregate")
@click.argument("scores", type=click.Path(path_type=Path), required=False)
@click.option("--method", "-m", "methods", multiple=True,
              help="Aggregation method (repeatable; default borda). See --list-methods.")
@click.option("--weights", "-w", multiple=True, help="Column weights as COLUMN=W (repeatable or comma-separated).")
@click.option("--lower-is-better", "lower", multiple=True, help="A column (or task/metric) where lower is better.")
@click.option("--bootstrap", "n_boot", default=0, show_default=True, type=int,
              help="Bootstrap rounds for score and rank intervals (tasks or battles resampled).")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--ci", default=0.95, show_default=True, type=float)
@click.option("--intervals", type=click.Choice(["sandwich", "bootstrap", "poisson"]), default=None,
              help="Score intervals (with --bootstrap N > 0): sandwich (robust covariance; the default of the "
                   "Bradley-Terry family, as arena-rank) or bootstrap (the default of every other method); "
                   "poisson: per-item scores resampled by Poisson item weights from hashes (the estimator of "
                   "--engine dask, in memory).")
@click.option("--param", "-p", "params", multiple=True,
              help="Method parameter as key=value (e.g. ties=min); passed to the methods that accept it.")
@click.option("--system-column", default=None, help="Wide tables: the column holding system names.")
@click.option("--exclude", multiple=True, help="Wide tables: a column that is not a score (repeatable).")
@click.option("--duplicates", type=click.Choice(["raise", "suffix", "first"]), default="raise", show_default=True,
              help="Repeated system names in a wide table.")
@click.option("--convention", default=None,
              help="Wide tables: a leaderboard's task units, e.g. 'glue' (GLUE's published Score: 9 tasks, pairs "
                   "and MNLI m/mm averaged) or 'votenrank' (pairs split, 10 GLUE units). See "
                   "scorebench.aggregate.list_conventions().")
@click.option("--list-methods", "show_methods", is_flag=True, help="List the registered methods and exit.")
@click.option("--coefficients", "coefficients", is_flag=True,
              help="With --method bradley_terry_style: write its style coefficients (log-odds per sd of each "
                   "feature) with --bootstrap percentile intervals (battles resampled) instead of the ratings.")
@click.option("--predict", "predict", is_flag=True,
              help="Battles only: instead of ratings, write the held-out log loss and Brier of Elo (several K), "
                   "Bradley-Terry, BT with Davidson / Rao-Kupper ties and Glicko-2 on a time-ordered split "
                   "(-p train_fraction=0.8, -p order=tstamp, -p elo_k=16, -p glicko_periods=20).")
@click.option("--engine", type=click.Choice(["pandas", "dask"]), default="pandas", show_default=True,
              help="dask: SCORES is a Parquet/CSV glob of battles, reduced to battle counts partition by partition "
                   "(methods with a counts record, e.g. bradley_terry), or of per-item scores (system, task, one "
                   "item column, value), reduced to column sums with Poisson item weights from hashes (score-table "
                   "methods, e.g. borda, mean, win_rate).")
@click.option("--scheduler", default=None, help="Dask scheduler address (with --engine dask).")
@FROM_OPTION
@FROM_OPTIONS_OPTION
@OUTPUT_OPTION
@FORMAT_OPTION
def command(scores, methods, weights, lower, n_boot, seed, ci, intervals, params, system_column, exclude, duplicates,
            convention, show_methods, coefficients, predict, engine, scheduler, source_format, source_options, output,
            fmt) -> None:
    """Rank the systems in SCORES (scores, wide systems x tasks, or battles table).

    SCORES may also be a harness's result files (e.g. an MTEB results folder, --from mteb);
    the format's leaderboard conventions (e.g. MTEB's Borda with missing tasks worth 0
    points, and its Mean (Task) blank for a model without every task: listed last with no
    score or rank and a note; the params column shows them) apply unless --param overrides
    them (--param missing=available: the mean over the tasks a model has), and a coverage
    column gives the fraction of columns each system is scored on. A ranking whose systems
    ran different tasks gets a warning (how many, coverage range); --list-methods describes
    each method.
    """
    from scorebench.aggregate import get_method, list_methods

    if show_methods:
        return _show_methods(list_methods, output, fmt)
    if scores is None:
        raise click.UsageError("missing argument SCORES (or pass --list-methods)")
    if scheduler is not None and engine != "dask":
        raise click.UsageError("--scheduler applies to --engine dask")
    if engine == "dask":
        _refuse_pandas_flags({"--from": source_format, "--predict": predict, "--coefficients": coefficients,
                              "--weights": weights, "--lower-is-better": lower, "--system-column": system_column,
                              "--exclude": exclude, "--convention": convention})
        resampling = {"n_boot": n_boot, "seed": seed, "ci": ci, "intervals": intervals}
        return emit(_dask_rankings(scores, list(methods), parse_options(params), scheduler, resampling),
                    output, fmt, group="method")
    table = load_table(scores, source_format, source_options)
    refuse_mixed_metrics(table)
    options = parse_options(params, undeclared=True)  # method parameters are not typed yet
    names = list(methods) or ["borda"]
    if predict:
        from scorebench.aggregate.prediction import predict_battles, prediction_options

        return emit(predict_battles(table, **prediction_options(options)), output, fmt)
    if coefficients:
        return emit(_style_coefficients(table, names, options, n_boot, seed, ci), output, fmt)
    records = [get_method(n) for n in names]
    _refuse_unused(options, records, names)
    how = {"weights": _weights(weights), "higher_is_better": {c: False for c in lower} or source_directions(table),
           "system_column": system_column, "exclude": tuple(exclude), "duplicates": duplicates,
           "convention": convention}
    data = _shared_input(table, records, how)
    resampling = {"n_boot": n_boot, "seed": seed, "ci": ci}
    if intervals is not None:
        resampling["intervals"] = intervals
    out = pd.concat(_method_frames(records, table, data, how, options, resampling), ignore_index=True)
    out.attrs.update(seed=seed, n_boot=n_boot, methods=",".join(names))
    emit(out, output, fmt, group="method")


def _show_methods(list_methods: Any, output: Any, fmt: Any) -> None:
    """``--list-methods``: the registered methods as a table (with --output/--format) or as text."""
    table = list_methods()[["name", "family", "accepts", "params", "missing"]]
    if output is not None or fmt is not None:
        emit(table, output, fmt)
    else:
        click.echo(method_listing(table))


def _refuse_pandas_flags(given: dict[str, Any]) -> None:
    """``--engine dask``: the flags that need the table in pandas are refused."""
    wrong = [flag for flag, value in given.items() if value]
    if wrong:
        raise click.UsageError(f"{', '.join(wrong)}: not with --engine dask (battles counted on Dask); "
                               "use --engine pandas")


def _refuse_unused(options: dict[str, Any], records: list, names: list[str]) -> None:
    """Every --param must be a parameter of at least one of the methods."""
    unused = [k for k in options if not any(k in r.params for r in records)]
    if unused:
        raise InputError(f"--param {unused}: not a parameter of {', '.join(names)}")


def _method_frames(records: list, table: pd.DataFrame, data: Any, how: dict[str, Any], options: dict[str, Any],
                   resampling: dict[str, Any]) -> list[pd.DataFrame]:
    """Each method's rows (the format's conventions under --param), its warnings said on stderr."""
    conventions = table.attrs.get("aggregate_defaults", {})
    frames = []
    said: set[str] = set()
    for record in records:
        mine = {**conventions.get(record.name, {}), **{k: v for k, v in options.items() if k in record.params}}
        ranking = _rank(record, table, data, how, mine, **resampling)
        _say_warnings(ranking, record.name, said)
        frames.append(_method_frame(ranking, record.name, mine, data, conventions))
    return frames


def _say_warnings(ranking: Any, name: str, said: set[str]) -> None:
    """A ranking's warnings on stderr; a coverage warning once for all methods that rank the same systems."""
    coverage = ranking.details.get("coverage_warning")
    if coverage and coverage not in said:  # once for all methods that rank the same systems
        said.add(coverage)
        click.echo(f"warning: {coverage}", err=True)
    rest = (ranking.warning or "").replace(coverage or "\0", "").replace("; ; ", "; ").strip("; ")
    if rest:
        click.echo(f"warning: {name}: {rest}", err=True)


def _method_frame(ranking: Any, name: str, mine: dict[str, Any], data: Any, conventions: dict) -> pd.DataFrame:
    """One method's rows of the output: method, (params), the ranking and (coverage)."""
    frame = ranking.to_frame()
    frame.insert(0, "method", name)
    if conventions:  # say which parameters the format's conventions set
        frame.insert(1, "params", ", ".join(f"{k}={v}" for k, v in mine.items()))
    if hasattr(data, "coverage"):
        frame["coverage"] = frame["system"].map(dict(zip(data.systems, data.coverage)))
    return frame


def _dask_rankings(pattern: Path, names: list[str], options: dict[str, Any], scheduler: str | None,
                   resampling: dict[str, Any]) -> pd.DataFrame:
    """``--engine dask``: each method's ranking of the battles or per-item scores in the glob ``pattern``
    (default method: ``borda`` for per-item scores, ``bradley_terry`` for battles)."""
    from scorebench.aggregate import aggregate, get_method
    from scorebench.aggregate.poisson_items import is_dask_item_table
    from scorebench.evaluation.dask_engine import connect, read_dask

    frames = []
    with connect(scheduler):
        table = read_dask(str(pattern))
        names = names or (["borda"] if is_dask_item_table(table) else ["bradley_terry"])
        records = [get_method(n) for n in names]
        _refuse_unused(options, records, names)
        for record in records:
            mine = {k: v for k, v in options.items() if k in record.params}
            frame = aggregate(table, record.name, **resampling, **mine).to_frame()
            frame.insert(0, "method", record.name)
            frames.append(frame)
    out = pd.concat(frames, ignore_index=True)
    out.attrs.update(seed=resampling["seed"], n_boot=resampling["n_boot"], methods=",".join(names))
    return out


def method_listing(table: pd.DataFrame, width: int = 100) -> str:
    """``--list-methods`` as text: one block per method, lines wrapped at ``width``.

    Examples
    --------
    >>> t = pd.DataFrame({"name": ["borda"], "family": ["positional"], "accepts": ["matrix"],
    ...                   "params": ["ties='average'"], "missing": ["raises " * 30]})
    >>> text = method_listing(t, width=60)
    >>> text.splitlines()[0], max(map(len, text.splitlines())) <= 60
    ('borda (positional; reads: matrix)', True)
    """
    blocks = []
    for row in table.itertuples(index=False):
        lines = [f"{row.name} ({row.family}; reads: {row.accepts})"]
        for label, text in (("params", row.params), ("missing", row.missing)):
            if isinstance(text, str) and text.strip():
                lines.append(textwrap.fill(" ".join(text.split()), width=width, initial_indent=f"    {label}: ",
                                           subsequent_indent=" " * (6 + len(label))))
        blocks.append("\n".join(lines))
    return "\n".join(blocks)


def _shared_input(table: pd.DataFrame, records: list, how: dict[str, Any]) -> Any:
    """The table read once as a score matrix or battles for the methods that share it, or None
    (per-item tables stay whole: their rank intervals resample items)."""
    from scorebench.aggregate import read_input
    from scorebench.aggregate.items import is_item_table

    if any(r.accepts != ("table",) for r in records) and not is_item_table(table):
        return read_input(table, **how)
    return None


def _rank(record: Any, table: pd.DataFrame, data: Any, how: dict[str, Any], params: dict[str, Any],
          **resampling: Any) -> Any:
    """One method's ranking (a mixed-scale warning is said once, as one line, by the caller)."""
    from scorebench.aggregate import MixedCoverageWarning, MixedScaleWarning, aggregate

    with warnings.catch_warnings():  # the caller says them, once, as one line
        warnings.simplefilter("ignore", MixedScaleWarning)
        warnings.simplefilter("ignore", MixedCoverageWarning)
        if record.accepts == ("table",):
            return aggregate(table, record.name, **how, **resampling, **params)
        if data is not None:
            return aggregate(data, record.name, **resampling, **params)
        return aggregate(table, record.name, weights=how["weights"], higher_is_better=how["higher_is_better"],
                         **resampling, **params)
