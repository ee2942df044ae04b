"""The Dask engine: the same registered metrics on tables larger than one machine.

An adapter, not a second implementation: each partition goes through the same table
kind and the same metric functions as :func:`scorebench.evaluate`, and reduces to
mergeable partial sums per (group, metric):

* the value's sum of contributions and count, and
* for each of ``n_boot`` Poisson-bootstrap rounds, the weighted sum and total weight,
  with each unit's Poisson(1) weight derived from its content hash and the seed
  (:func:`scorebench.stats.poisson_weights`);
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
:data:`scorebench.stats.INTERVAL_METHODS`), as in memory: per-row means take the percentile
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
from typing import Any

import numpy as np
import pandas as pd

from . import __version__
from .io import read_table
from .errors import InputError
from .registry import Metric
from .stats import interval_bounds, poisson_weights
from .stats_tests import INTERVAL_NAMES, PROPORTION_INTERVALS
from .stats_tests import proportion_interval as proportion_interval_of
from .tables import NAN_POLICIES, Inputs, get_kind, hash_labels, infer_kind, label_text
from .validation import check_choice

__all__ = ["evaluate_dask", "read_dask", "connect", "partition_partials", "merge_partials"]

_WEIGHT_BUDGET = 8_388_608  # float64 cells per weight block (64 MB)
_BUCKET = "__scorebench_unit_bucket__"
_FAN_IN = 32  # partials merged per task
_PLACEHOLDER = "\x00scorebench-placeholder"  # a query id no qrels holds


def read_dask(pattern: str, *, blocksize: str = "64MB"):
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
        return dd.read_parquet(pattern)
    raise InputError(f"{pattern!r}: the Dask engine reads Parquet (files, globs or folders) and CSV/TSV; "
                     "convert other formats, or use the pandas engine")


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


def _resolve(records: Sequence[Metric], kind: str | None, kind_options: dict[str, Any]):
    kind_name = infer_kind({m.kind for m in records}, kind)
    spec = get_kind(kind_name)
    unknown = sorted(set(kind_options) - set(spec.options))
    if unknown:
        raise InputError(f"option(s) {unknown} do not apply to kind {kind_name!r} "
                         f"(accepted: {', '.join(spec.options) or 'none'})")
    return spec


def partition_partials(part: pd.DataFrame, names: Sequence[str], kind: str, by: Sequence[str] | None,
                       nan_policy: str, n_boot: int, seed: int, kind_options: dict[str, Any],
                       collect_keys: bool = False, partition: int | None = None) -> dict:
    """Partial sums of one partition: ``{(group, metric): {field: number or array}}``.

    Per-row metrics carry ``sum``, ``n`` and, per bootstrap round, ``sums`` and ``totals``;
    mergeable set-level metrics carry their sufficient statistics ``stats`` and ``boot``.
    ``group`` is the tuple of ``by`` values. Unit keys seen per group are kept under
    ``"__keys__"`` when ``collect_keys`` (only ``complete`` needs them: they cost memory).
    Input errors name the ``partition`` (row numbers in them are the partition's own).
    """
    try:
        return _partition_partials(part, names, kind, by, nan_policy, n_boot, seed, kind_options, collect_keys)
    except InputError as exc:
        if partition is None:
            raise
        raise InputError(f"partition {partition} (rows numbered within it): {exc}") from None


def _partition_partials(part: pd.DataFrame, names: Sequence[str], kind: str, by: Sequence[str] | None,
                        nan_policy: str, n_boot: int, seed: int, kind_options: dict[str, Any],
                        collect_keys: bool) -> dict:
    from .evaluate import resolve_metrics

    if len(part) == 0:
        return {}
    records = resolve_metrics(names)
    inputs = get_kind(kind).extract(part, nan_policy=nan_policy, **kind_options)
    codes, keys = _codes(inputs.frame, _by_columns(inputs, by))
    hashes = inputs.unit_hashes() if n_boot else None
    contribs = {r.name: _contributions(r, inputs, nan_policy) for r in records if r.per_row}
    out: dict = {}
    weights = np.empty((n_boot, _block_rows(n_boot))) if n_boot else None  # reused: see stats._splitmix64_inplace
    for g, key in enumerate(keys):
        idx = np.flatnonzero(codes == g)
        kept = {r.name: _kept_values(contribs[r.name][idx], nan_policy) for r in records if r.per_row}
        entries = {r.name: (_row_entry(kept[r.name], n_boot) if r.per_row else _set_entry(r, inputs, idx, n_boot))
                   for r in records}
        if n_boot:
            # One weight block serves every metric: the Poisson draws are the costly part.
            for start in range(0, idx.size, weights.shape[1]):
                block = idx[start:start + weights.shape[1]]
                w = poisson_weights(hashes[block], seed, n_boot, out=weights[:, :block.size])
                for record in records:
                    entry = entries[record.name]
                    if record.per_row:
                        values, keep = kept[record.name]
                        entry["sums"] += w @ values[start:start + block.size]
                        entry["totals"] += w.sum(axis=1) if keep is None else w @ keep[start:start + block.size]
                    else:
                        entry["boot"] = entry["boot"] + np.asarray(record.partial_stats(inputs.take(block), w),
                                                                   dtype=np.float64)
        out.update({(key, name): entry for name, entry in entries.items()})
    if inputs.key is not None and collect_keys:
        units = inputs.frame[inputs.key].astype(str).to_numpy()
        out["__keys__"] = {key: set(units[codes == g]) for g, key in enumerate(keys)}
    return out


def _contributions(record: Metric, inputs: Inputs, nan_policy: str) -> np.ndarray:
    values = np.asarray(record.compute(inputs.merged()), dtype=np.float64)
    if values.shape != (inputs.n,):
        raise InputError(f"metric {record.name!r} returned shape {values.shape}; expected ({inputs.n},)")
    if nan_policy == "raise" and np.isnan(values).any():
        raise InputError(f"metric {record.name!r} is undefined (NaN) for some units; "
                         "use nan_policy='omit' to drop them")
    return values


def _block_rows(n_boot: int) -> int:
    """Rows per weight block: the (n_boot, rows) float64 block stays near 64 MB."""
    return max(1024, min(65_536, _WEIGHT_BUDGET // max(n_boot, 1)))


def _kept_values(v: np.ndarray, nan_policy: str) -> tuple[np.ndarray, np.ndarray | None]:
    """Values with omitted NaNs as 0, and the 0/1 weights of kept rows (None: all kept)."""
    if nan_policy != "omit":
        return v, None
    keep = ~np.isnan(v)
    return np.where(keep, v, 0.0), keep.astype(np.float64)


def _row_entry(kept: tuple[np.ndarray, np.ndarray | None], n_boot: int) -> dict[str, Any]:
    values, keep = kept
    return {"sum": float(values.sum()), "n": int(values.size if keep is None else keep.sum()),
            "sums": np.zeros(n_boot), "totals": np.zeros(n_boot)}


def _set_entry(record: Metric, inputs: Inputs, idx: np.ndarray, n_boot: int) -> dict[str, Any]:
    return {"stats": np.asarray(record.partial_stats(inputs.take(idx)), dtype=np.float64), "n": idx.size,
            "boot": np.zeros(0) if not n_boot else 0.0}


def merge_partials(parts: Iterable[dict]) -> dict:
    """Add partial sums from several partitions (associative and commutative)."""
    total: dict = {}
    for part in parts:
        for k, entry in part.items():
            if k == "__keys__":
                seen = total.setdefault("__keys__", {})
                for g, units in entry.items():
                    seen.setdefault(g, set()).update(units)
            elif k in total:
                total[k] = {f: total[k][f] + entry[f] for f in entry}
            else:
                total[k] = dict(entry)
    return total


def _by_columns(inputs: Inputs, by: Sequence[str] | None) -> list[str]:
    if by is None:
        return [c for c in ("system", "task") if c in inputs.frame.columns]
    missing = [c for c in by if c not in inputs.frame.columns]
    if missing:
        raise InputError(f"by: column(s) {missing} not found among the table's label columns")
    return list(by)


def _codes(frame: pd.DataFrame, by_cols: list[str]) -> tuple[np.ndarray, list[tuple]]:
    if not by_cols:
        return np.zeros(len(frame), dtype=np.int64), [()]
    grouped = frame.groupby(by_cols, sort=True, dropna=False, observed=True)
    keys = [k if isinstance(k, tuple) else (k,) for k in grouped.size().index]
    return grouped.ngroup().to_numpy(), [tuple(str(x) if not isinstance(x, (int, float)) else x for x in k)
                                         for k in keys]


def evaluate_dask(ddf: Any, metrics: Any, *, kind: str | None = None, by: str | Sequence[str] | None = None,
                  ci: float = 0.95, n_boot: int = 1000, seed: int = 0, nan_policy: str = "raise",
                  progress: Any = None, proportion_interval: str = "wilson", **kind_options: Any) -> pd.DataFrame:
    """:func:`scorebench.evaluate` for a ``dask.dataframe.DataFrame`` (Poisson bootstrap).

    Returns the same pandas ``scores`` table. Per-row metrics reduce by partial sums on
    the workers; set-level metrics are collected to the client (reported in ``attrs``).
    """
    import dask
    from dask import delayed

    from .evaluate import SCORE_COLUMNS, _check_options, evaluate, interval_attr, resolve_metrics

    _check_options(ci, n_boot)
    check_choice(nan_policy, "nan_policy", NAN_POLICIES)
    check_choice(proportion_interval, "proportion_interval", PROPORTION_INTERVALS)
    records = resolve_metrics(metrics)
    spec = _resolve(records, kind, kind_options)
    by_list = None if by is None else ([c.strip() for c in by.split(",")] if isinstance(by, str) else list(by))
    per_row = [m for m in records if m.mergeable]
    set_level = [m for m in records if not m.mergeable]
    groups = by_list if by_list is not None else [c for c in ("system", "task") if c in ddf.columns]
    together = spec.partition_columns(list(ddf.columns), groups)
    if together is not None:
        kind_options = _read_table_options(kind_options)
    if spec.global_options is not None:  # e.g. the qrels' top grade: once, not per partition
        kind_options = {**kind_options, **spec.global_options(kind_options)}
    complete = bool(kind_options.get("complete"))
    part_options = {**kind_options, **({"complete": False} if complete else {})}
    tables: dict[str, list] = {}
    source = ddf  # set-level metrics collect the table as given
    attrs: dict[str, Any] = {}
    if together is not None and per_row:
        ddf, tables = _co_partition(ddf, together, part_options)
        attrs["partitioned_by"] = ",".join(together) or "(one group)"
    rows: list[dict[str, Any]] = []
    by_cols: list[str] = []
    if per_row:
        names = [m.name for m in per_row]
        tasks = [delayed(partition_partials)(p, names, spec.name, by_list, nan_policy, n_boot, seed,
                                             {**part_options, **{k: v[i] for k, v in tables.items()}}, complete, i)
                 for i, p in enumerate(ddf.to_delayed())]
        total = _compute_partials(tasks, progress)
        if not any(k != "__keys__" for k in total):
            raise InputError("the table has no rows to evaluate")
        by_cols = _infer_by(ddf, by_list, total)
        if complete:
            _add_missing_units(total, [m for m in per_row if m.per_row], by_cols, nan_policy, kind_options, n_boot,
                               seed)
        by_name = {m.name: m for m in per_row}
        for (key, name), entry in sorted(((k, v) for k, v in total.items() if k != "__keys__"),
                                         key=lambda kv: (kv[0][0], names.index(kv[0][1]))):
            value, replicates = _finish(by_name[name], entry, n_boot)
            record = by_name[name]
            low, high = (interval_bounds(value, replicates, ci, record.interval_method, record.bounds)
                         if replicates.size else (np.nan, np.nan))
            if by_name[name].proportion and proportion_interval != "bootstrap" and n_boot and np.isfinite(value):
                low, high = proportion_interval_of(round(value * entry["n"]), entry["n"], ci, proportion_interval)
            rows.append({**dict(zip(by_cols, key)), "metric": name, "value": value, "ci_low": low,
                         "ci_high": high, "n": entry["n"]})
    scores = pd.DataFrame(rows, columns=[*by_cols, *SCORE_COLUMNS]) if rows else None
    if set_level:
        collected, collected_options = dask.compute(source, _computed_tables(kind_options))
        attrs["collected_metrics"] = ",".join(m.name for m in set_level)
        attrs["collected_rows"] = len(collected)
        attrs["collected_bytes"] = int(collected.memory_usage(deep=True).sum())
        extra = evaluate(collected, set_level, kind=spec.name, by=by_list, ci=ci, n_boot=n_boot, seed=seed,
                         nan_policy=nan_policy, bootstrap="poisson", **collected_options)
        scores = extra if scores is None else pd.concat([scores, extra], ignore_index=True)
    scores["n"] = scores["n"].astype(np.int64)
    rules = _interval_rules(records, n_boot, proportion_interval)
    scores.attrs.update({"scorebench_version": __version__, "engine": "dask", "kind": spec.name, "seed": seed,
                         "ci": ci, "n_boot": n_boot, "nan_policy": nan_policy,
                         "interval": interval_attr(rules, n_boot), "interval_methods": rules,
                         "bootstrap": "poisson (counter-based, partition-independent)", **attrs})
    return scores


def _interval_rules(records: Sequence[Metric], n_boot: int, proportion_interval: str) -> dict[str, str]:
    """Each metric's interval rule, named as the pandas engine names it."""
    return {m.name: "none" if not n_boot else INTERVAL_NAMES[proportion_interval]
            if m.proportion and proportion_interval in INTERVAL_NAMES else m.interval_method for m in records}


def _compute_partials(tasks: list, progress: Any) -> dict:
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

    def finished(key, *_):
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


def _co_partition(ddf: Any, columns: Sequence[str], options: dict[str, Any]) -> tuple[Any, dict[str, list]]:
    """Put the rows that share ``columns`` values, and their rows in table options, in one partition.

    Rows go to partition ``hash(values) % P`` (``P`` = the run's partition count; 1 when
    ``columns`` is empty, i.e. the whole table is one group) through ``set_index`` with
    explicit divisions, so the run and each table option carrying those columns (qrels, as
    a file, a pandas or a Dask DataFrame) share one partitioning by contract and are
    paired by position. The hash is of the label text (:func:`scorebench.tables.label_text`),
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


def _finish(record: Metric, entry: dict[str, Any], n_boot: int) -> tuple[float, np.ndarray]:
    """The value and the bootstrap replicates from merged partial sums."""
    if record.per_row:
        value = entry["sum"] / entry["n"] if entry["n"] else np.nan
        ok = entry["totals"] > 0
        return value, (entry["sums"][ok] / entry["totals"][ok]) if n_boot else np.empty(0)
    value = float(record.finalize_stats(entry["stats"]))
    replicates = np.asarray(record.finalize_stats(entry["boot"]), dtype=np.float64) if n_boot else np.empty(0)
    return value, replicates[np.isfinite(replicates)]


def _infer_by(ddf: Any, by_list: list[str] | None, total: dict) -> list[str]:
    if by_list is not None:
        return by_list
    return [c for c in ("system", "task") if c in ddf.columns]


def _add_missing_units(total: dict, records: Sequence[Metric], by_cols: list[str], nan_policy: str,
                       kind_options: dict[str, Any], n_boot: int, seed: int) -> None:
    """``complete``: score the queries judged in the qrels but absent from a group's run.

    They are scored by the kind and the metrics themselves, as the in-memory engine scores
    them (nothing retrieved: most measures are 0, but ``num_rel`` is the query's count of
    relevant documents): the kind extracts, with ``complete=True``, a run holding one
    placeholder query per group against the qrels of the missing queries; the placeholder
    and the queries a group did retrieve are dropped, the rest added to the partial sums.
    """
    qrels, seen = kind_options.get("qrels"), total.get("__keys__")
    if qrels is None or seen is None:
        return
    qids = qrels["qid"].astype(str).unique()
    judged = set(qids.compute() if hasattr(qids, "compute") else qids)
    missing = {key: judged - units for key, units in seen.items()}
    wanted = sorted(set().union(*missing.values()))
    if not wanted:
        return
    rows = qrels[qrels["qid"].astype(str).isin(wanted)]
    rows = rows.compute() if hasattr(rows, "compute") else rows
    rows = rows[["qid", "docid", "relevance"]].assign(qid=lambda f: label_text(f["qid"]).astype(str))
    placeholder = pd.DataFrame({"qid": [_PLACEHOLDER], "docid": [_PLACEHOLDER], "relevance": [0]})
    run = pd.DataFrame([{**dict(zip(by_cols, key)), "qid": _PLACEHOLDER, "docid": _PLACEHOLDER, "score": 0.0}
                        for key in missing])
    options = {**kind_options, "qrels": pd.concat([rows, placeholder], ignore_index=True), "complete": True}
    inputs = get_kind("ranking").extract(run, nan_policy=nan_policy, **options)
    codes, keys = _codes(inputs.frame, by_cols)
    qid = inputs.frame["qid"].astype(str).to_numpy()
    kept = np.array([q in missing.get(keys[c], ()) for q, c in zip(qid, codes)], dtype=bool)
    hashes = inputs.unit_hashes()
    for g, key in enumerate(keys):
        idx = np.flatnonzero(kept & (codes == g))
        if idx.size == 0:
            continue
        w = poisson_weights(hashes[idx], seed, n_boot) if n_boot else None
        for record in records:
            values, keep = _kept_values(_contributions(record, inputs, nan_policy)[idx], nan_policy)
            entry = total[(key, record.name)]
            entry["sum"] += float(values.sum())
            entry["n"] += int(idx.size if keep is None else keep.sum())
            if w is not None:
                entry["sums"] = entry["sums"] + w @ values
                entry["totals"] = entry["totals"] + (w.sum(axis=1) if keep is None else w @ keep)
