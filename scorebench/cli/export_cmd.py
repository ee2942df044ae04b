"""``scorebench export``: write a scores table in another tool's result format (Every Eval Ever, ...)."""

from __future__ import annotations

from pathlib import Path

import click

from scorebench.cli._input import FROM_OPTION, FROM_OPTIONS_OPTION, load_table
from scorebench.core.errors import InputError
from scorebench.io.formats import all_formats, get_format

#: The harness formats scorebench writes (from the format registry).
EXPORT_FORMATS = tuple(f.name for f in all_formats(family="harness", role="write"))


@click.command("export")
@click.argument("table", type=click.Path(exists=True, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(EXPORT_FORMATS), required=True,
              help="; ".join(f"{f.name}: {f.doc}" for f in all_formats(family="harness", role="write")) + ".")
@click.option("--output", "-o", "output", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Folder to write into (created if needed).")
@click.option("--items", "items_path", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="eee: a per-item table (system, task, id and --item-score) written as instance sidecars.")
@click.option("--item-score", default="correct", show_default=True, help="eee: the per-item score column of --items.")
@click.option("--benchmark", default=None, help="Evaluation name (default: the table's benchmark or single task).")
@click.option("--timestamp", default=None,
              help="Unix epoch seconds of the record (default: $SOURCE_DATE_EPOCH, else now); fixes the file names.")
@click.option("--higher-is-better", "higher", multiple=True,
              help="A metric the registry does not know that is better high (repeatable; '*' for all of them).")
@click.option("--lower-is-better", "lower", multiple=True,
              help="A metric the registry does not know that is better low (repeatable; '*' for all of them).")
@click.option("--organization", default="unknown", show_default=True, help="Who publishes the records.")
@click.option("--relationship", type=click.Choice(["first_party", "third_party", "collaborative", "other"]),
              default="other", show_default=True, help="The evaluator's relationship to the models.")
@click.option("--dataset", "datasets", multiple=True,
              help="hf: the Hub dataset id of every task, or TASK=ID (repeatable); default: the task names.")
@click.option("--metric", default=None, help="hf: the metric to publish when a task has several.")
@click.option("--scale", default=1.0, show_default=True, type=float, help="hf: multiply values and bounds (100: %).")
@click.option("--revision", default=None, help="hf: dataset revision.")
@click.option("--date", default=None, help="hf: ISO-8601 date of the results.")
@click.option("--source-url", default=None, help="hf: URL of the evaluation's source (logs, paper).")
@click.option("--source-name", default=None, help="hf: display name of the source.")
@FROM_OPTION
@FROM_OPTIONS_OPTION
def command(table, fmt, output, items_path, item_score, benchmark, timestamp, higher, lower, organization,
            relationship, datasets, metric, scale, revision, date, source_url, source_name, source_format,
            source_options) -> None:
    """Write the scores in TABLE (a scores table from `scorebench evaluate`, or a harness's results)
    as --format records under --output.

    Each value keeps its interval (bounds, level, the interval rule's name), n and the
    bootstrap rounds; the metric's direction and bounds come from the registry.
    """
    from scorebench.io.tables import read_meta, read_table

    scores = load_table(table, source_format, source_options)
    if not scores.attrs and table.is_file():
        try:
            scores.attrs.update(read_meta(table))
        except InputError:
            pass  # a format without stored metadata
    if fmt == "hf":
        paths = get_format("hf").write(scores, output, dataset=_datasets(datasets), metric=metric, scale=scale,
                                       revision=revision, date=date, source_url=source_url, source_name=source_name)
        click.echo(f"wrote {len(paths)} .eval_results file(s) under {output}", err=True)
        return
    direction = {**{m: True for m in higher}, **{m: False for m in lower}}
    both = set(higher) & set(lower)
    if both:
        raise click.UsageError(f"{sorted(both)} given as both --higher-is-better and --lower-is-better")
    items = read_table(items_path) if items_path is not None else None
    paths = get_format("eee").write(scores, output, items=items, item_score=item_score, benchmark=benchmark,
                                    timestamp=timestamp, higher_is_better=direction or None,
                                    organization=organization, relationship=relationship)
    click.echo(f"wrote {len(paths)} EEE record(s) under {output}", err=True)


def _datasets(given: tuple[str, ...]) -> str | dict[str, str] | None:
    """``--dataset`` values: one dataset id for all tasks, or TASK=ID pairs."""
    if not given:
        return None
    pairs = [g.partition("=") for g in given]
    if len(given) == 1 and not pairs[0][1]:
        return given[0]
    if any(not sep or not task or not ident for task, sep, ident in pairs):
        raise click.UsageError("--dataset: give one dataset id, or TASK=ID for each task")
    return {task: ident for task, _, ident in pairs}
