r"""Write scores (and per-item results) as Every Eval Ever (EEE) records, schema v0.3.0.

`Every Eval Ever <https://github.com/evaleval/every_eval_ever>`_ is a shared record format for
evaluation results: one aggregate JSON file per (evaluation, model) with a typed
``uncertainty`` object per result, and an optional instance-level ``{uuid}_samples.jsonl``
sidecar. :func:`to_eee` turns a scorebench scores table (the output of
:func:`scorebench.evaluate`, or a harness's results read by :func:`scorebench.read_results`)
into one aggregate record per system; :func:`write_eee` writes them (and, given a per-item
table, their instance sidecars) atomically in EEE's datastore layout
``data/<benchmark>/<developer>/<model>/<uuid>.json``.

What each scores-table cell becomes:

=======================  ===================================================================
scorebench               EEE ``evaluation_results[]``
=======================  ===================================================================
``task`` (or metric)     ``evaluation_name``; ``source_data = {dataset_name: task, source_type: other}``
``metric``               ``metric_config.metric_id`` / ``metric_name``; ``evaluation_result_id``
                         = ``"<task>/<metric>"``
registry record          ``metric_config.lower_is_better`` (from ``higher_is_better``),
                         ``min_score``/``max_score`` (its ``bounds``, ``"-Infinity"``/
                         ``"Infinity"`` when unbounded), ``score_type = "continuous"``,
                         ``metric_kind`` (its family), ``metric_parameters``
``value``                ``score_details.score``
``ci_low``/``ci_high``   ``uncertainty.confidence_interval.lower``/``upper``, with
                         ``confidence_level`` (``attrs["ci"]``) and ``method`` (the interval
                         rule: ``"percentile bootstrap"``, ``"wilson score interval"``, ...)
``n``                    ``uncertainty.num_samples``
``attrs["n_boot"]``      ``uncertainty.num_bootstrap_samples`` (bootstrap rules only)
``stderr`` (if present)  ``uncertainty.standard_error.value``
other columns            ``score_details.details`` (text; their dtypes are recorded so the
                         reader restores numbers as numbers)
=======================  ===================================================================

Provenance (scorebench version, seed, ci, n_boot, interval phrase, the source's format and
SHA-256) goes to ``source_metadata.additional_details``; a table read from a harness keeps
that harness as ``eval_library`` (``mteb`` and its versions), otherwise it is ``scorebench``.
Floats are written with Python's shortest round-trip representation, so reading the files
back (:mod:`scorebench.io.readers.eee`) gives the same values and intervals bit for bit.

The file names are UUIDs derived from the content's identity (benchmark, system, timestamp),
so writing the same table with the same ``timestamp`` twice gives identical files.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from scorebench._version import __version__
from scorebench.core.errors import InputError, UnknownMetricError
from scorebench.core.stats import HALF_SAMPLING_RULES
from scorebench.io.atomic import atomic_write, text_writer

__all__ = ["to_eee", "write_eee", "instance_records", "EEE_SCHEMA_VERSION", "interval_method_names"]

EEE_SCHEMA_VERSION = "0.3.0"
_BOOTSTRAP_RULES = frozenset({"percentile", "centered_percentile", "basic", "bca", *HALF_SAMPLING_RULES})
_CORE = ("system", "task", "metric", "value", "ci_low", "ci_high", "n", "stderr")
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")
_DEPLOYMENT = {"deployment_type": "unknown", "model_availability": "unknown"}


def interval_method_names(attrs: Mapping[str, Any], metrics: Sequence[str]) -> dict[str, str | None]:
    """The interval rule of each metric as EEE's ``confidence_interval.method`` text.

    From ``attrs["interval_methods"]`` (a scores table in memory) or the ``attrs["interval"]``
    phrase (a table read back from a file: ``"percentile bootstrap"`` for all metrics, or
    ``"brier_score: percentile bootstrap; accuracy: wilson score interval"``). Bootstrap rules
    are named ``"<rule> bootstrap"``; None when nothing is recorded.
    """
    methods: dict[str, str | None] = {m: None for m in metrics}
    per = attrs.get("interval_methods")
    if isinstance(per, Mapping):
        for m in metrics:
            rule = per.get(m)
            if isinstance(rule, str) and rule != "none":
                methods[m] = f"{rule} bootstrap" if rule in _BOOTSTRAP_RULES else rule
        return methods
    phrase = attrs.get("interval")
    if not isinstance(phrase, str) or phrase in ("", "none"):
        return methods
    parts = [p.strip() for p in phrase.split(";") if p.strip()]
    if len(parts) == 1 and ": " not in parts[0]:
        return {m: parts[0] for m in metrics}
    for part in parts:
        name, sep, rule = part.rpartition(": ")
        if sep and name in methods and rule != "none":
            methods[name] = rule
    return methods


def _is_bootstrap(method: str | None) -> bool:
    return method is not None and method.endswith(" bootstrap")


def _metric_record(name: str) -> Any:
    from scorebench.core.registry import metric

    try:
        return metric(name)
    except (UnknownMetricError, InputError, TypeError, ValueError):
        return None


def _bound(value: float | None, default: str) -> float | str | None:
    if value is None:
        return None
    value = float(value)
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if math.isnan(value):
        return default
    return value


def _number(value: Any) -> float | None:
    """A finite float, or None for a missing cell."""
    if value is None or value is pd.NA:
        return None
    try:
        out = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return out if math.isfinite(out) else None


def _text(value: Any) -> str:
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    if isinstance(value, (np.integer, np.bool_)):
        return str(value.item())
    return str(value)


def _direction(metric: str, record: Any, higher_is_better: Any) -> bool:
    """``higher_is_better`` of a metric: the caller's (bool or per-metric mapping), else the registry's."""
    if isinstance(higher_is_better, Mapping):
        if metric in higher_is_better:
            return bool(higher_is_better[metric])
        higher_is_better = higher_is_better.get("*")
    elif isinstance(higher_is_better, bool):
        return higher_is_better
    if record is not None and record.higher_is_better is not None:
        return bool(record.higher_is_better)
    if isinstance(higher_is_better, bool):
        return higher_is_better
    raise InputError(f"metric {metric!r}: not in the registry, so its direction is unknown; EEE needs "
                     "lower_is_better: pass higher_is_better (True/False, or a mapping metric -> bool; "
                     "CLI: --higher-is-better/--lower-is-better)")


def _reader_direction(attrs: Mapping[str, Any], metric: str) -> bool | None:
    """A reader's recorded direction of ``metric``: ``attrs["higher_is_better"]`` as a flat mapping
    (metric -> bool; the EEE reader) or per task (task -> {metric: bool}; lm-eval, whose metric
    names carry a filter: ``acc,none``)."""
    given = attrs.get("higher_is_better")
    if not isinstance(given, Mapping):
        return None
    if isinstance(given.get(metric), bool):
        return given[metric]
    base = metric.partition(",")[0]
    found = {v[base] for v in given.values() if isinstance(v, Mapping) and isinstance(v.get(base), bool)}
    return found.pop() if len(found) == 1 else None


def _metric_config(metric: str, higher_is_better: Any) -> dict[str, Any]:
    record = _metric_record(metric)
    config: dict[str, Any] = {"metric_id": metric, "metric_name": metric,
                              "lower_is_better": not _direction(metric, record, higher_is_better)}
    if record is not None:
        config["metric_kind"] = record.family
        params = {k: v for k, v in dict(record.params).items()
                  if v is None or isinstance(v, (str, bool, int, float)) and not (isinstance(v, float)
                                                                                  and not math.isfinite(v))}
        if params:
            config["metric_parameters"] = params
        if record.bounds is not None:
            low, high = record.bounds
            config.update(score_type="continuous", min_score=_bound(low, "-Infinity"),
                          max_score=_bound(high, "Infinity"))
    return config


def _column_types(table: pd.DataFrame, extras: list[str]) -> dict[str, str]:
    out = {}
    for col in extras:
        dtype = table[col].dtype
        if pd.api.types.is_bool_dtype(dtype):
            out[col] = "bool"
        elif pd.api.types.is_integer_dtype(dtype):
            out[col] = "int"
        elif pd.api.types.is_float_dtype(dtype):
            out[col] = "float"
        else:
            out[col] = "str"
    return out


def _check_scores(scores: pd.DataFrame) -> None:
    if not isinstance(scores, pd.DataFrame):
        raise InputError(f"expected a scores table (pandas DataFrame), got {type(scores).__name__}")
    missing = [c for c in ("system", "metric", "value") if c not in scores.columns]
    if missing:
        raise InputError(f"an EEE export needs a scores table with columns system, metric, value "
                         f"(and optionally task, ci_low, ci_high, n); missing {missing} (a per-item table: "
                         "score it with `scorebench evaluate` and export that output)")
    if scores.empty:
        raise InputError("the scores table has no rows; nothing to export")
    values = pd.to_numeric(scores["value"], errors="coerce")
    bad = np.flatnonzero(~np.isfinite(values.to_numpy(dtype=float)))
    if bad.size:
        from scorebench.core.validation import describe_rows

        raise InputError(f"column 'value': EEE scores must be finite numbers; {describe_rows(bad)} are missing, "
                         "not numbers or infinite (drop them first)")
    keys = [c for c in ("system", "task", "metric") if c in scores.columns]
    extra_keys = [c for c in scores.columns if c not in _CORE and c not in ("task_type",)
                  and scores[c].dtype == object]
    dup = scores.duplicated(keys, keep=False)
    if dup.any():
        first = scores.loc[dup, keys].iloc[0].tolist()
        raise InputError(f"rows {np.flatnonzero(dup.to_numpy())[:5].tolist()}: several values for {dict(zip(keys, first))}; "
                         f"EEE holds one result per (system, task, metric) (other key columns: {extra_keys}); "
                         "filter the table first")
    for col in ("ci_low", "ci_high", "n", "stderr"):
        if col in scores.columns and not pd.api.types.is_numeric_dtype(scores[col]):
            raise InputError(f"column {col!r}: expected numbers, got {scores[col].dtype}")


def _developer(system: str) -> str | None:
    head, sep, _ = system.partition("/")
    return head if sep and head else None


def _safe(part: str) -> str:
    out = _SAFE.sub("_", part).strip("._") or "unnamed"
    return out[:120]


def _uuid(*parts: str) -> str:
    digest = hashlib.sha256("\0".join(parts).encode()).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))


def _timestamp(timestamp: str | float | None) -> str:
    if timestamp is None:
        timestamp = os.environ.get("SOURCE_DATE_EPOCH") or time.time()
    if isinstance(timestamp, str):
        try:
            timestamp = float(timestamp)
        except ValueError:
            raise InputError(f"timestamp {timestamp!r}: expected Unix epoch seconds") from None
    if isinstance(timestamp, bool) or not isinstance(timestamp, (int, float)) or not math.isfinite(timestamp) \
            or timestamp < 0:
        raise InputError(f"timestamp {timestamp!r}: expected non-negative Unix epoch seconds")
    return repr(float(timestamp)) if float(timestamp) != int(timestamp) else str(int(timestamp))


def _provenance(attrs: Mapping[str, Any], column_types: dict[str, str]) -> dict[str, str]:
    keep = ("scorebench_version", "kind", "seed", "ci", "n_boot", "interval", "bootstrap", "nan_policy",
            "source_format", "source_path", "sha256", "tool_version", "benchmark", "level")
    out = {f"scorebench.{k}": _text(attrs[k]) for k in keep if k in attrs and attrs[k] is not None}
    out.setdefault("scorebench.scorebench_version", __version__)
    defaults = attrs.get("aggregate_defaults")
    if isinstance(defaults, Mapping) and defaults:
        out["scorebench.aggregate_defaults"] = json.dumps(defaults, sort_keys=True, default=str)
    if column_types:
        out["scorebench.columns"] = json.dumps(column_types)
    return out


def to_eee(scores: pd.DataFrame, *, benchmark: str | None = None, timestamp: str | float | None = None,
           higher_is_better: bool | Mapping[str, bool] | None = None, organization: str = "unknown",
           relationship: str = "other", source_type: str | None = None) -> list[dict[str, Any]]:
    r"""EEE v0.3.0 aggregate records (one per system) of a scores table.

    Parameters
    ----------
    scores : DataFrame
        ``system``, ``metric``, ``value`` and optionally ``task``, ``ci_low``, ``ci_high``,
        ``n``, ``stderr`` and other columns (kept as text details); ``attrs`` as
        :func:`scorebench.evaluate` writes them (``ci``, ``n_boot``, ``seed``, interval rules).
    benchmark : str, optional
        Name of the evaluation (``evaluation_id`` = ``benchmark/system/timestamp``); default
        ``attrs["benchmark"]``, the single task, or ``"scorebench"``.
    timestamp : str or float, optional
        ``retrieved_timestamp`` in Unix epoch seconds; default ``$SOURCE_DATE_EPOCH`` or now.
    higher_is_better : bool or mapping, optional
        Direction of metrics the registry does not know (a mapping may name ``"*"`` for the
        rest); registry metrics use their own direction unless the mapping names them. A
        reader's recorded direction (``attrs["higher_is_better"]``: lm-eval's per-task flags,
        the EEE reader's) is used for a metric the mapping does not name.
    organization, relationship : str
        ``source_metadata.source_organization_name`` and ``evaluator_relationship``
        (``first_party``, ``third_party``, ``collaborative`` or ``other``).
    source_type : {"evaluation_run", "documentation"}, optional
        Default: ``documentation`` for results read from a harness's reported numbers
        (``attrs["source_format"]``), ``evaluation_run`` for scorebench's own evaluation.

    Returns
    -------
    list of dict
        JSON-ready records that validate against EEE's ``eval.schema.json``.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"system": ["org/m"], "task": ["qa"], "metric": ["accuracy"],
    ...                   "value": [0.75], "ci_low": [0.6], "ci_high": [0.86], "n": [40]})
    >>> t.attrs.update(ci=0.95, n_boot=0, interval="wilson score interval", seed=0)
    >>> rec = to_eee(t, timestamp=0)[0]
    >>> result = rec["evaluation_results"][0]
    >>> result["metric_config"]["lower_is_better"], result["score_details"]["uncertainty"]["confidence_interval"]
    (False, {'lower': 0.6, 'upper': 0.86, 'confidence_level': 0.95, 'method': 'wilson score interval'})
    """
    _check_scores(scores)
    if relationship not in ("first_party", "third_party", "collaborative", "other"):
        raise InputError(f"relationship {relationship!r}: expected first_party, third_party, collaborative or other")
    attrs = dict(scores.attrs)
    scores = scores.copy(deep=False)
    scores.attrs = {}  # pandas deep-copies attrs on every operation; a reader's file list is large
    if source_type is None:
        source_type = "documentation" if attrs.get("source_format") not in (None, "eee") else "evaluation_run"
    if source_type not in ("evaluation_run", "documentation"):
        raise InputError(f"source_type {source_type!r}: expected evaluation_run or documentation")
    stamp = _timestamp(timestamp)
    has_task = "task" in scores.columns
    if benchmark is None:
        benchmark = attrs.get("benchmark") if isinstance(attrs.get("benchmark"), str) else None
    if benchmark is None:
        tasks = scores["task"].astype(str).unique() if has_task else []
        benchmark = str(tasks[0]) if len(tasks) == 1 else "scorebench"
    metrics = [str(m) for m in pd.unique(scores["metric"].astype(str))]
    methods = interval_method_names(attrs, metrics)
    configs = {}
    for m in metrics:
        direction = higher_is_better
        recorded = _reader_direction(attrs, m)
        if recorded is not None and not (isinstance(higher_is_better, Mapping) and m in higher_is_better):
            direction = {**(higher_is_better if isinstance(higher_is_better, Mapping) else
                            {} if higher_is_better is None else {"*": higher_is_better}), m: recorded}
        configs[m] = _metric_config(m, direction)
    extras = [c for c in scores.columns if c not in _CORE]
    column_types = _column_types(scores, extras)
    ci_level = _number(attrs.get("ci"))
    n_boot = attrs.get("n_boot")
    n_boot = int(n_boot) if isinstance(n_boot, (int, np.integer)) and not isinstance(n_boot, bool) else \
        (int(n_boot) if isinstance(n_boot, str) and n_boot.isdigit() else None)
    from_harness = attrs.get("source_format") not in (None, "eee")
    library: dict[str, Any] = {"name": str(attrs["source_format"]), "version": str(attrs.get("tool_version") or "unknown")} \
        if from_harness else {"name": "scorebench", "version": str(attrs.get("scorebench_version") or __version__)}
    library["additional_details"] = {"written_by": f"scorebench {__version__}"}
    records = []
    for system, rows in scores.groupby(scores["system"].astype(str), sort=True):
        results = []
        for row in rows.to_dict("records"):
            metric = str(row["metric"])
            task = str(row["task"]) if has_task else metric
            results.append(_result(row, task, metric, configs[metric], methods[metric], ci_level, n_boot, extras))
        record: dict[str, Any] = {
            "schema_version": EEE_SCHEMA_VERSION,
            "evaluation_id": f"{benchmark}/{system}/{stamp}",
            "retrieved_timestamp": stamp,
            "source_metadata": {"source_name": benchmark, "source_type": source_type,
                                "source_organization_name": organization, "evaluator_relationship": relationship,
                                "additional_details": _provenance(attrs, column_types)},
            "model_info": {"name": system, "id": system, "additional_details": dict(_DEPLOYMENT)},
            "eval_library": library,
            "evaluation_results": results,
        }
        developer = _developer(system)
        if developer:
            record["model_info"]["developer"] = developer
        records.append(record)
    return records


def _result(row: dict, task: str, metric: str, config: dict, method: str | None, ci_level: float | None,
            n_boot: int | None, extras: list[str]) -> dict[str, Any]:
    uncertainty: dict[str, Any] = {}
    low, high = _number(row.get("ci_low")), _number(row.get("ci_high"))
    if low is not None and high is not None:
        interval: dict[str, Any] = {"lower": low, "upper": high}
        if ci_level is not None and 0 <= ci_level <= 1:
            interval["confidence_level"] = ci_level
        if method is not None:
            interval["method"] = method
        uncertainty["confidence_interval"] = interval
    stderr = _number(row.get("stderr"))
    if stderr is not None:
        uncertainty["standard_error"] = {"value": stderr}
    n = _number(row.get("n"))
    if n is not None and float(n).is_integer():
        uncertainty["num_samples"] = int(n)
    if n_boot and _is_bootstrap(method) and "confidence_interval" in uncertainty:
        uncertainty["num_bootstrap_samples"] = n_boot
    details = {}
    for col in extras:
        value = row[col]
        if value is None or value is pd.NA or isinstance(value, float) and math.isnan(value):
            continue
        details[col] = _text(value)
    score: dict[str, Any] = {"score": float(row["value"])}
    if details:
        score["details"] = details
    if uncertainty:
        score["uncertainty"] = uncertainty
    return {"evaluation_result_id": f"{task}/{metric}", "evaluation_name": task,
            "source_data": {"dataset_name": task, "source_type": "other"},
            "metric_config": config, "score_details": score}


def instance_records(items: pd.DataFrame, record: Mapping[str, Any], *, score: str = "correct",
                     id_column: str = "id") -> list[dict[str, Any]]:
    """EEE instance-level records (``instance_level_eval.schema.json``) of one system's items.

    ``items`` has ``task``, ``id_column`` and ``score`` (0/1 or a score in [0, 1]; an item is
    ``is_correct`` when its score is 1) for the system of ``record`` (an aggregate record of
    :func:`to_eee`). ``sample_id`` is the item id and ``sample_hash`` the SHA-256 of
    ``task`` and id, so the same item pairs across systems; the raw input and output are not
    part of a scores table and are written empty.
    """
    for col in ("task", id_column, score):
        if col not in items.columns:
            raise InputError(f"instance records need columns task, {id_column}, {score}; missing {col!r}")
    values = pd.to_numeric(items[score], errors="coerce").to_numpy(dtype=float)
    if not np.isfinite(values).all():
        from scorebench.core.validation import describe_rows

        raise InputError(f"column {score!r}: {describe_rows(np.flatnonzero(~np.isfinite(values)))} are not finite numbers")
    ids = {r["evaluation_name"]: r.get("evaluation_result_id") for r in record["evaluation_results"]}
    out = []
    for (task, item), value in zip(zip(items["task"].astype(str), items[id_column].astype(str)), values):
        rec = {"schema_version": EEE_SCHEMA_VERSION, "evaluation_id": record["evaluation_id"],
               "model_id": record["model_info"]["id"], "evaluation_name": task, "sample_id": item,
               "sample_hash": hashlib.sha256(f"{task}\0{item}".encode()).hexdigest(),
               "interaction_type": "single_turn", "input": {"raw": "", "reference": []},
               "output": {"raw": []}, "messages": None, "answer_attribution": [],
               "evaluation": {"score": float(value), "is_correct": bool(value == 1.0)}}
        if ids.get(task):
            rec["evaluation_result_id"] = ids[task]
        out.append(rec)
    return out


def write_eee(scores: pd.DataFrame, out_dir: str | os.PathLike, *, items: pd.DataFrame | None = None,
              item_score: str = "correct", **options: Any) -> list[Path]:
    """Write the EEE records of ``scores`` under ``out_dir`` (atomically); return the paths.

    Layout: ``out_dir/data/<benchmark>/<developer>/<model>/<uuid>.json`` (EEE's datastore;
    ``developer`` is the part of the system name before ``/``, else ``unknown``). With
    ``items`` (a per-item table with ``system``, ``task``, ``id`` and ``item_score``), each
    system's items go to ``<uuid>_samples.jsonl`` beside its record, referenced by
    ``detailed_evaluation_results`` (with SHA-256 checksum and row count). ``options`` go to
    :func:`to_eee`.

    Examples
    --------
    >>> import pandas as pd, tempfile
    >>> t = pd.DataFrame({"system": ["a"], "metric": ["brier_score"], "value": [0.2]})
    >>> [p.name.endswith(".json") for p in write_eee(t, tempfile.mkdtemp(), timestamp=0)]
    [True]
    """
    records = to_eee(scores, **options)
    if items is not None:
        items = items.copy(deep=False)
        items.attrs = {}
    root = Path(out_dir)
    if root.exists() and not root.is_dir():
        raise InputError(f"{root}: exists and is not a folder; EEE output is a folder")
    if items is not None and "system" not in items.columns:
        raise InputError("the per-item table needs a 'system' column")
    files: dict[Path, Any] = {}
    paths = []
    for record in records:
        system = record["model_info"]["id"]
        name = _uuid(record["evaluation_id"])
        folder = Path("data", _safe(record["source_metadata"]["source_name"]),
                      _safe(_developer(system) or "unknown"), _safe(system.partition("/")[2] or system))
        if items is not None:
            mine = items[items["system"].astype(str) == system]
            if len(mine):
                lines = "".join(json.dumps(r, allow_nan=False) + "\n"
                                for r in instance_records(mine, record, score=item_score))
                rel = folder / f"{name}_samples.jsonl"
                record["detailed_evaluation_results"] = {
                    "format": "jsonl", "file_path": rel.as_posix(), "hash_algorithm": "sha256",
                    "checksum": hashlib.sha256(lines.encode()).hexdigest(), "total_rows": len(mine)}
                files[root / rel] = text_writer(lines)
        text = json.dumps(record, indent=2, allow_nan=False) + "\n"
        path = root / folder / f"{name}.json"
        files[path] = text_writer(text)
        paths.append(path)
    for path in files:
        path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(files)
    return paths
