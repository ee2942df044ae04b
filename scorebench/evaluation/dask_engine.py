"""The Dask engine: the same registered metrics on tables larger than one machine.

An adapter, not a second implementation: each partition goes through the same table
kind and the same metric functions as :func:`scorebench.evaluate`, and reduces to
mergeable partial sums per (group, metric):

* the value's sum of contributions and count, and
* for each of ``n_boot`` Poisson-bootstrap rounds, the weighted sum and total weight,
  with each unit's Poisson(1) weight derived from its content hash and the seed
  (:func:`scorebench.core.stats.poisson_weights`);
* or, for set-level metrics with sufficient statistics (ECE, MCE, RMSE, ...), those
  statistics and their weighted versions per round.

Partials merge in a tree of tasks. So values equal the in-memory engine's to rounding
(sums added in another order), and the intervals equal
``scorebench.evaluate(..., bootstrap="poisson")`` on the whole table, whatever the
partitioning or the number of workers.

Rows that must be scored together share a partition first (:meth:`Kind.partition_columns`):
a ranking query and its qrels, a long ensemble's id, an embedding gallery's group. The run
and its table options are bucketed by a hash of those columns and moved with
``set_index`` on explicit divisions, so they pair partition by partition. Set-level
metrics without sufficient statistics (AUROC, FID, Kendall's tau, ...) are collected to the
client and evaluated in memory; the output's attrs name them and say how many rows and
bytes that was.

Intervals follow each metric's declared rule (``Metric.interval_method``, see
:data:`scorebench.core.stats.INTERVAL_METHODS`), as in memory: per-row means take the percentile
of the Poisson replicates; mergeable set-level metrics (binned calibration errors) the
re-centred percentile of theirs (Poisson(1) weights approximate the multinomial bootstrap,
so the rule stays valid); collected metrics go through the in-memory engine with the
hash-based schemes (half-samples from the unit hashes for ``half_sampling`` metrics).
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from scorebench._version import __version__
from scorebench.analysis.stats_tests import INTERVAL_NAMES
from scorebench.core.errors import InputError
from scorebench.core.registry import Metric
from scorebench.core.tables import get_kind, hash_labels, label_text
from scorebench.evaluation.partial import Partial, merge
from scorebench.evaluation.pipeline import SCORE_COLUMNS, evaluate_frame, score_attrs
from scorebench.evaluation.plan import Plan, by_columns, make_plan, resolve_metrics
from scorebench.evaluation.reduce import unit_partials
from scorebench.evaluation.score import score_entry
from scorebench.io.tables import read_table

__all__ = ["evaluate_dask", "read_dask", "connect", "partition_partials", "merge_partials", "co_partition"]

_BUCKET = "__scorebench_unit_bucket__"
_FAN_IN = 32  # partials merged per task


def read_dask(pattern: str, *, blocksize: str = "64MB") -> Any:
    """Read a Parquet or CSV glob (or a partitioned Parquet folder) lazily with Dask.

    Each partition is at most one Parquet row group / file or ``blocksize`` of CSV, which
    bounds a worker's memory. Paths with a URL scheme (``s3://...``) go to fsspec
    unchecked; local ones must match at least one file.
    """
    try:
        import dask.dataframe as dd
    except ImportError:  # pragma: no cover - depends on the optional extra
        raise InputError("the Dask engine needs the optional extra: pip install 'scorebench[dask]'") from None
    pattern = os.fspath(pattern)
    if "://" not in pattern and not os.path.isdir(pattern) and not glob.glob(pattern):
        raise InputError(f"no file matches {pattern!r}")
    lowered = pattern.lower().rstrip("/")
    if lowered.endswith((".csv", ".csv.gz", ".tsv")):
        # gzip cannot be split: one partition per file
        return dd.read_csv(pattern, sep="\t" if lowered.endswith(".tsv") else ",",
                           blocksize=None if lowered.endswith(".gz") else blocksize)
    if lowered.endswith((".parquet", ".pq")) or os.path.isdir(pattern) or "://" in pattern:
        if "://" not in pattern and not os.path.isdir(pattern):
            _check_parquet_columns(sorted(glob.glob(pattern)))
        return dd.read_parquet(pattern)
    raise InputError(f"{pattern!r}: the Dask engine reads Parquet (files, globs or folders) and CSV/TSV; "
                     "convert other formats, or use the pandas engine")


def _check_parquet_columns(files: Sequence[str]) -> None:
    """Every file of a Parquet glob must have the first file's columns (read from the footers only);
    otherwise Dask fails later with a bare ``KeyError``. One line names the file and the columns."""
    import pyarrow.parquet as pq

    first: list[str] | None = None
    for file in files:
        try:
            names = list(pq.read_schema(file).names)
        except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
            raise InputError(f"{file}: not a readable Parquet file ({exc})") from None
        names = [n for n in names if not n.startswith("__index_level_")]
        if first is None:
            first = names
        elif set(names) != set(first):
            missing, extra = sorted(set(first) - set(names)), sorted(set(names) - set(first))
            raise InputError(f"{file}: its columns differ from {files[0]}'s (missing {missing}, extra {extra}); "
                             "every file of a Parquet glob must have the same columns")


@contextmanager
def connect(scheduler: str | None) -> Iterator[Any]:
    """Use the ``distributed`` scheduler at ``scheduler`` (``tcp://host:8786``) inside the block.

    The client is the default for every computation in the block and is closed after it;
    ``None`` leaves the current scheduler (a client already made, or Dask's local one).
    """
    if not scheduler:
        yield None
        return
    try:
        from distributed import Client
    except ImportError:  # pragma: no cover - depends on the optional extra
        raise InputError("--scheduler needs the optional extra: pip install 'scorebench[dask]'") from None
    try:
        client = Client(scheduler, timeout="10s", set_as_default=True)
    except (OSError, TimeoutError) as exc:
        raise InputError(f"cannot reach the Dask scheduler at {scheduler!r}: {exc}") from None
    with client:
        yield client


def partition_partials(part: pd.DataFrame, names: Sequence[str | Metric], kind: str, by: Sequence[str] | None,
                       nan_policy: str, n_boot: int, seed: int, kind_options: dict[str, Any],
                       collect_keys: bool = False, partition: int | None = None) -> Partial:
    """The mergeable :class:`~scorebench.evaluation.partial.Partial` of one partition.

    The partition goes through the kind and :func:`scorebench.evaluation.pipeline.unit_partials`,
    as every engine's units do. Unit keys seen per group are kept when ``collect_keys`` (a
    kind's ``complete_units`` hook needs them: they cost memory). Input errors name the
    ``partition`` (row numbers in them are the partition's own).
    """
    if len(part) == 0:
        return Partial()
    try:
        inputs = get_kind(kind).extract(part, nan_policy=nan_policy, **kind_options)
        by_cols = by_columns(by, inputs.frame.columns)
        return unit_partials(inputs, resolve_metrics(names), by_cols, nan_policy, n_boot, seed, collect_keys)
    except InputError as exc:
        if partition is None:
            raise
        raise InputError(f"partition {partition} (rows numbered within it): {exc}") from None


def merge_partials(parts: Iterable[Partial]) -> Partial:
    """Add the partials of several partitions (associative and commutative)."""
    return merge(parts)


@dataclass(frozen=True)
class _Layout:
    """How one Dask evaluation's plan meets the partitions, resolved once on the client."""

    plan: Plan
    groups: list[str]  # the grouping columns
    options: dict[str, Any]  # kind options, table files read once, global options added
    part_options: dict[str, Any]  # the options each partition is extracted with
    missing_units: Any  # the kind's function giving the units groups lack (its complete_units hook), or None


def _layout(ddf: Any, plan: Plan) -> _Layout:
    spec, kind_options = plan.kind, plan.options
    groups = plan.by if plan.by is not None else [c for c in ("system", "task") if c in ddf.columns]
    if spec.partition_columns(list(ddf.columns), groups) is not None:
        kind_options = _read_table_options(kind_options)
    if spec.global_options is not None:  # e.g. the qrels' top grade: once, not per partition
        kind_options = {**kind_options, **spec.global_options(kind_options)}
    hook = spec.complete_units(kind_options) if spec.complete_units is not None else None
    part_options, missing_units = hook if hook is not None else (kind_options, None)
    return _Layout(plan, groups, kind_options, part_options, missing_units)


def evaluate_dask(ddf: Any, metrics: Any, *, kind: str | None = None, by: str | Sequence[str] | None = None,
                  ci: float = 0.95, n_boot: int = 1000, seed: int = 0, nan_policy: str = "raise",
                  progress: Any = None, proportion_interval: str = "wilson", **kind_options: Any) -> pd.DataFrame:
    """:func:`scorebench.evaluate` for a ``dask.dataframe.DataFrame`` (Poisson bootstrap).

    Returns the same pandas ``scores`` table. Mergeable metrics reduce by partials on the
    workers; other set-level metrics are collected to the client (reported in ``attrs``).
    """
    plan = make_plan(metrics, kind=kind, by=by, ci=ci, n_boot=n_boot, seed=seed, nan_policy=nan_policy,
                     bootstrap="poisson", proportion_interval=proportion_interval, kind_options=kind_options)
    layout = _layout(ddf, plan)
    attrs: dict[str, Any] = {}
    parts = [_merged_scores(ddf, layout, progress, attrs)] if plan.mergeable else []
    if plan.collected:
        parts.append(_collected_scores(ddf, layout, attrs))
    scores = parts[0] if len(parts) == 1 else pd.concat(parts, ignore_index=True)
    scores["n"] = scores["n"].astype(np.int64)
    rules = _interval_rules(plan.records, n_boot, proportion_interval)
    scores.attrs.update({"scorebench_version": __version__, "engine": "dask",
                         **score_attrs(plan.kind.name, seed, ci, n_boot, nan_policy, rules,
                                       "poisson (counter-based, partition-independent)"), **attrs})
    return scores


def _merged_scores(ddf: Any, layout: _Layout, progress: Any, attrs: dict[str, Any]) -> pd.DataFrame:
    """Scores of the mergeable metrics: partials per partition, merged in a tree, scored."""
    from dask import delayed

    plan = layout.plan
    together = plan.kind.partition_columns(list(ddf.columns), layout.groups)
    tables: dict[str, list] = {}
    if together is not None:
        ddf, tables = _co_partition(ddf, together, layout.part_options)
        attrs["partitioned_by"] = ",".join(together) or "(one group)"
    names = [m.name for m in plan.mergeable]
    # the resolved records travel, not their names: a parameter such as a callable cdf= survives
    tasks = [delayed(partition_partials)(p, plan.mergeable, plan.kind.name, plan.by, plan.nan_policy, plan.n_boot,
                                         plan.seed, {**layout.part_options, **{k: v[i] for k, v in tables.items()}},
                                         layout.missing_units is not None, i)
             for i, p in enumerate(ddf.to_delayed())]
    total = _compute_partials(tasks, progress)
    if not total:
        raise InputError("the table has no rows to evaluate")
    if layout.missing_units is not None:
        missing = layout.missing_units(total.units, layout.groups, plan.nan_policy)
        if missing is not None:
            total = total + unit_partials(missing, [m for m in plan.mergeable if m.per_row], layout.groups,
                                          plan.nan_policy, plan.n_boot, plan.seed)
    by_name = {m.name: m for m in plan.mergeable}
    rows = []
    for (key, name), entry in sorted(total.entries.items(), key=lambda kv: (kv[0][0], names.index(kv[0][1]))):
        score = score_entry(by_name[name], entry, plan)
        rows.append({**dict(zip(layout.groups, key)), "metric": name, "value": score.value, "ci_low": score.low,
                     "ci_high": score.high, "n": score.n})
    return pd.DataFrame(rows, columns=[*layout.groups, *SCORE_COLUMNS])


def _collected_scores(ddf: Any, layout: _Layout, attrs: dict[str, Any]) -> pd.DataFrame:
    """Scores of set-level metrics without partials: the table collected, evaluated in memory
    (the pipeline's in-memory run, with the hash-based schemes)."""
    import dask

    plan = layout.plan
    collected, collected_options = dask.compute(ddf, _computed_tables(layout.options))
    attrs["collected_metrics"] = ",".join(m.name for m in plan.collected)
    attrs["collected_rows"] = len(collected)
    attrs["collected_bytes"] = int(collected.memory_usage(deep=True).sum())
    in_memory = make_plan(plan.collected, kind=plan.kind.name, by=plan.by, ci=plan.ci, n_boot=plan.n_boot,
                          seed=plan.seed, nan_policy=plan.nan_policy, bootstrap="poisson",
                          proportion_interval=plan.proportion_interval, kind_options=collected_options)
    return evaluate_frame(collected, in_memory)


def _interval_rules(records: Sequence[Metric], n_boot: int, proportion_interval: str) -> dict[str, str]:
    """Each metric's interval rule, named as the pandas engine names it."""
    return {m.name: "none" if not n_boot else INTERVAL_NAMES[proportion_interval]
            if m.proportion and proportion_interval in INTERVAL_NAMES else m.interval_method for m in records}


def _compute_partials(tasks: list, progress: Any) -> Partial:
    """Run the partition tasks and merge their partials (in a tree of merge tasks).

    With ``progress``, it is called as ``progress(done, total)`` as partitions finish: on a
    ``distributed`` client through futures, otherwise through a local-scheduler callback.
    """
    import dask
    from dask import delayed

    if progress is not None:
        try:
            from distributed import as_completed, get_client

            client = get_client()
        except (ImportError, ValueError):
            client = None
        if client is not None:
            futures = client.compute(tasks)
            for done, _ in enumerate(as_completed(futures), 1):
                progress(done, len(futures))
            return merge_partials(client.gather(futures))
    partition_keys = {task.key for task in tasks}
    while len(tasks) > _FAN_IN:  # no task receives thousands of partials
        tasks = [delayed(merge_partials)(tasks[i:i + _FAN_IN]) for i in range(0, len(tasks), _FAN_IN)]
    final = delayed(merge_partials)(tasks)
    if progress is None:
        return dask.compute(final)[0]
    from dask.callbacks import Callback

    done = 0

    def finished(key: Any, *_: Any) -> None:
        nonlocal done
        if key in partition_keys:
            done += 1
            progress(done, len(partition_keys))

    with Callback(posttask=finished):
        return dask.compute(final)[0]


def _read_table_options(options: dict[str, Any]) -> dict[str, Any]:
    """Options naming a table file (e.g. a TREC qrels file) read once, not once per partition."""
    out = dict(options)
    for name, value in options.items():
        if isinstance(value, (str, os.PathLike)) and os.path.isfile(value):
            try:
                out[name] = read_table(value)
            except InputError:
                pass  # not a table: the kind reads it in each partition
    return out


def _is_dask_frame(value: Any) -> bool:
    return hasattr(value, "to_delayed") and hasattr(value, "npartitions")


def _computed_tables(options: dict[str, Any]) -> dict[str, Any]:
    """Kind options with Dask tables (e.g. qrels) brought into memory, for set-level metrics."""
    return {k: (v.compute() if _is_dask_frame(v) else v) for k, v in options.items()}


def _unit_bucket(frame: pd.DataFrame, columns: Sequence[str], buckets: int) -> pd.DataFrame:
    """Add each row's bucket: a stable hash of the label text of ``columns``, modulo ``buckets``."""
    h = np.zeros(len(frame), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for column in columns:
            h = (h ^ hash_labels(label_text(frame[column]).astype(str))) * np.uint64(0x100000001B3)
    return frame.assign(**{_BUCKET: (h % np.uint64(buckets)).astype(np.int64)})


def co_partition(ddf: Any, columns: Sequence[str]) -> Any:
    """``ddf`` with the rows that share ``columns`` values in one partition (hash of their label text).

    So each unit's rows (all systems) meet in one partition, as paired comparisons need.
    """
    return _co_partition(ddf, columns, {})[0]


def _co_partition(ddf: Any, columns: Sequence[str], options: dict[str, Any]) -> tuple[Any, dict[str, list]]:
    """Put the rows that share ``columns`` values, and their rows in table options, in one partition.

    Rows go to partition ``hash(values) % P`` (``P`` = the run's partition count; 1 when
    ``columns`` is empty, i.e. the whole table is one group) through ``set_index`` with
    explicit divisions, so the run and each table option carrying those columns (qrels, as
    a file, a pandas or a Dask DataFrame) share one partitioning by contract and are
    paired by position. The hash is of the label text (:func:`scorebench.core.tables.label_text`),
    so ``"7"``, ``7`` and ``7.0`` meet, as they do in the ranking kind. Returns the
    repartitioned table and, per table option, its delayed partitions.
    """
    import dask.dataframe as dd

    buckets = max(1, ddf.npartitions) if columns else 1
    divisions = list(range(buckets + 1))

    def partitioned(frame: Any) -> Any:
        meta = frame._meta.assign(**{_BUCKET: np.int64(0)})
        return frame.map_partitions(_unit_bucket, list(columns), buckets, meta=meta).set_index(
            _BUCKET, divisions=divisions)

    tables = {}
    for name, value in options.items():
        carries = columns and all(c in getattr(value, "columns", ()) for c in columns)
        if isinstance(value, pd.DataFrame) and carries:
            value = dd.from_pandas(value, npartitions=max(1, min(buckets, len(value) // 1_000_000 + 1)))
        if _is_dask_frame(value) and carries:
            tables[name] = partitioned(value).to_delayed()
    return partitioned(ddf), tables
