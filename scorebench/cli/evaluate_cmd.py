"""``scorebench evaluate``: score a result table with registered metrics."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path

import click

from scorebench.evaluation.dask_engine import connect, read_dask
from scorebench.core.errors import InputError
from scorebench.evaluation.evaluate import evaluate
from scorebench.core.tables import get_kind
from scorebench.cli._input import FROM_OPTION, FROM_OPTIONS_OPTION, load_table
from scorebench.cli._kind_options import given_kind_options, kind_option_flags, kinds_epilog
from scorebench.cli._output import OUTPUT_OPTION, format_option, emit, parse_options
from scorebench.cli.run_cmd import SHA256_OPTION, TRUST_OPTION, announce_models


@click.command("evaluate", epilog=kinds_epilog())
@click.argument("table", type=click.Path(path_type=Path), required=False)
@click.option("--metric", "-m", "metrics", multiple=True, required=True,
              help="Metric name (repeatable), e.g. crps_normal, ndcg@10.")
@click.option("--kind", default=None, help="Table kind (default: inferred from the metrics).")
@click.option("--by", default=None, help="Comma-separated grouping columns (default: system,task).")
@click.option("--ci", default=0.95, show_default=True, type=float, help="Confidence level.")
@click.option("--bootstrap", "n_boot", default=1000, show_default=True, type=int,
              help="Bootstrap rounds (0: no intervals).")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--nan-policy", type=click.Choice(["raise", "omit", "propagate"]), default="raise",
              show_default=True)
@click.option("--per-query", "per_unit", is_flag=True, default=False,
              help="Also output one row per query (or row) for per-row metrics.")
@kind_option_flags
@click.option("--option", "-O", "options", multiple=True,
              help="Other kind option as key=value, converted to its declared type (see `scorebench kinds`).")
@click.option("--engine", type=click.Choice(["pandas", "dask"]), default="pandas", show_default=True)
@click.option("--scheduler", default=None, help="Dask scheduler address (with --engine dask).")
@click.option("--progress/--no-progress", default=None, help="Progress bar (default: on a terminal).")
@click.option("--model", "model_spec", default=None,
              help="Run this model (TorchScript file or module:callable) to make a features table.")
@click.option("--data", "data_paths", multiple=True, type=click.Path(exists=True, path_type=Path),
              help="With --model: samples of a system (repeatable; the system is named after the file).")
@click.option("--reference", type=click.Path(exists=True, path_type=Path), default=None,
              help="With --model: the reference (real) samples.")
@click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto", show_default=True)
@SHA256_OPTION
@TRUST_OPTION
@FROM_OPTION
@FROM_OPTIONS_OPTION
@click.option("--cluster", default=None, help="Column of item clusters: per-row metrics get a cluster bootstrap.")
@click.option("--proportion-interval", type=click.Choice(["wilson", "jeffreys", "bootstrap"]), default="wilson",
              show_default=True, help="Interval of proportions such as accuracy.")
@OUTPUT_OPTION
@format_option("trec_eval", help="Output format (default: from the --output suffix); trec_eval: the text of "
                                "trec_eval -q.")
def command(table, metrics, kind, by, ci, n_boot, seed, nan_policy, per_unit, options, engine, scheduler, progress,
            model_spec, data_paths, reference, device, sha256, trust_model, cluster, proportion_interval,
            source_format, source_options, output, fmt, **kind_flags) -> None:
    """Score TABLE (CSV, Parquet, JSON Lines, TREC run) with each --metric, per system.

    Or, with --model, run a feature extractor over --reference and each --data set and
    score the generated sets against the reference (fid, kid, precision, ...). A model is
    code: a model file runs only with --sha256 HEX or --trust-model.
    """
    if (table is None) == (model_spec is None):
        raise click.UsageError("give either TABLE or --model with --data and --reference")
    if scheduler is not None and engine != "dask":
        raise click.UsageError("--scheduler applies to --engine dask")
    kind_options = parse_options(options)
    with connect(scheduler) if engine == "dask" else nullcontext():
        kind_options.update(given_kind_options(kind_flags, engine))
        if model_spec is not None:
            data = _model_features(model_spec, data_paths, reference, device, sha256, trust_model)
            kind = kind or "features"
        elif engine == "dask":
            if source_format is not None:
                raise click.UsageError("--from reads result files in memory; use --engine pandas")
            data = read_dask(str(table))
        else:
            data = load_table(table, source_format, source_options)
        if kind is not None:
            get_kind(kind)
        show = progress if progress is not None else (click.get_text_stream("stderr").isatty() and n_boot > 0)
        scores = evaluate(data, list(metrics), kind=kind, by=by, ci=ci, n_boot=n_boot, seed=seed,
                          nan_policy=nan_policy, per_unit=per_unit, progress=_ProgressBar() if show else None,
                          cluster=cluster, proportion_interval=proportion_interval, **kind_options)
    if fmt == "trec_eval":
        _emit_trec_eval(scores, output)
    else:
        emit(scores, output, fmt)


def _emit_trec_eval(scores, output: Path | None) -> None:
    from scorebench.io.formats import get_format
    from scorebench.io.trec_eval_output import format_trec_eval

    if output is None:
        click.echo(format_trec_eval(scores), nl=False)
        return
    text = get_format("trec_eval").write(scores, output)
    click.echo(f"wrote {text.count(chr(10))} lines to {output}", err=True)


class _ProgressBar:
    """``progress(done, total)`` drawing a click progress bar on standard error."""

    def __init__(self) -> None:
        self.bar = None

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            self.bar = click.progressbar(length=total, label="evaluating", file=click.get_text_stream("stderr"))
            self.bar.__enter__()
        self.bar.update(done - self.bar.pos)
        if done == total:
            self.bar.__exit__(None, None, None)


def _model_features(model_spec: str, data_paths: tuple[Path, ...], reference: Path | None, device: str,
                    sha256: str | None = None, trust: bool = False):
    """One ``features`` table: the reference as system ``real``, each data set by file stem."""
    import pandas as pd

    from scorebench.models import features_table, load_extractor

    if reference is None or not data_paths:
        raise InputError("--model needs --reference (the real samples) and at least one --data set")
    names = [p.stem for p in data_paths]
    if len(set(names)) != len(names) or "real" in names:
        raise InputError(f"--data files must have distinct stems other than 'real', got {names}")
    announce_models()
    extractor = load_extractor(model_spec, expected_sha256=sha256, trust=trust)  # loaded (and run) once
    tables = [features_table(extractor, reference, device=device, system="real")]
    tables += [features_table(extractor, path, device=device, system=name) for path, name in zip(data_paths, names)]
    return pd.concat(tables, ignore_index=True)
