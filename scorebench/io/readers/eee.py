r"""Every Eval Ever (EEE, schema v0.3.0) records -> a ``scores`` table or per-item ``samples``.

EEE (evaleval/every_eval_ever) stores one aggregate JSON file per (evaluation, model):
``model_info.id``, ``eval_library``, ``source_metadata`` and ``evaluation_results[]``, each with
``evaluation_name``, ``metric_config`` (``lower_is_better``, ``min_score``/``max_score``,
``metric_id``) and ``score_details`` (``score`` and an ``uncertainty`` object:
``confidence_interval{lower, upper, confidence_level, method}``, ``standard_error{value}``,
``num_samples``, ``num_bootstrap_samples``). Per-item results live in a sidecar
``{uuid}_samples.jsonl`` (``instance_level_eval.schema.json``): one line per (sample, result)
with ``sample_id``, ``sample_hash`` and ``evaluation{score, is_correct}``.

``level="scores"`` (default) reads every aggregate file under ``path`` (a file, or a folder of
files from any number of sources, e.g. EEE's ``data/`` tree) into one long table:
``system`` (``model_info.id``), ``task`` (``evaluation_name``), ``metric`` (``metric_id``,
else ``metric_name``, else the task; the ``evaluation_result_id`` when one record has several
results of that task and metric, e.g. one per Inspect scorer), ``value``, ``ci_low``/``ci_high`` (missing when the
record has no interval), ``n`` (``num_samples``), ``stderr``, ``ci_level``,
``interval_method``, ``n_boot``, ``lower_is_better`` and ``source`` (``eval_library.name``);
columns that scorebench wrote as ``score_details.details`` come back with their types. The
direction of each metric goes to ``attrs["higher_is_better"]``; the interval level and rules
to ``attrs["ci"]``/``attrs["interval_methods"]`` when all records agree, so the table feeds
``scorebench aggregate`` and leaderboards as a scorebench scores table does.

``level="samples"`` reads the instance sidecars: one row per (system, task, item) with
``id`` = ``sample_hash`` (``sample_id`` when a record has none), ``sample_id``, ``score``
and ``correct`` (``is_correct`` as 0/1), so ``scorebench compare`` pairs the same items
across systems. When one evaluation name carries several results per item (several
``evaluation_result_id``, as every-eval-ever's lm-eval converter writes one per metric),
``task`` is ``<evaluation_name>/<evaluation_result_id>``. EEE has no epoch field: an item that
comes back for the same system and result (Inspect's epochs, as every-eval-ever's Inspect
converter writes them) gets a ``repeat`` column: the record's ``metadata.epoch`` when it has one, else its
position among the item's records in file order (``--repeats repeat``); ``attrs["n_repeated"]`` counts them.

Two records for the same (system, task, metric) are refused with both files named: a folder
must not mix two runs of one model on one task.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.io.readers._common import Provenance, as_number, field_error, jsonl_records, load_json, require

__all__ = ["read", "detect"]

_SNIFF = 1 << 16
_MAX_FILES_SNIFFED = 20
_MAX_FILES_LISTED = 2000
_SCORE_COLUMNS = ["system", "task", "metric", "value", "ci_low", "ci_high", "n", "stderr", "ci_level",
                  "interval_method", "n_boot", "lower_is_better", "source"]


def _is_aggregate(path: Path) -> bool:
    try:
        with open(path, "rb") as handle:
            head = handle.read(_SNIFF)
    except OSError:
        return False
    return b'"schema_version"' in head and b'"evaluation_id"' in head and \
        (b'"evaluation_results"' in head or b'"model_info"' in head)


def _is_instance(path: Path) -> bool:
    if not path.name.endswith("_samples.jsonl"):
        return False
    try:
        with open(path, "rb") as handle:
            head = handle.readline(_SNIFF)
    except OSError:
        return False
    return b'"sample_id"' in head and b'"evaluation_id"' in head


def detect(path: Path) -> bool:
    """True for an EEE aggregate file or instance sidecar, or a folder holding them."""
    if path.is_file():
        return (path.suffix == ".json" and _is_aggregate(path)) or _is_instance(path)
    if not path.is_dir():
        return False
    sniffed = 0
    for count, file in enumerate(_files(path, "*")):
        if count >= _MAX_FILES_LISTED or sniffed >= _MAX_FILES_SNIFFED:
            return False
        if file.suffix == ".json" or file.name.endswith("_samples.jsonl"):
            sniffed += 1
            if _is_aggregate(file) if file.suffix == ".json" else _is_instance(file):
                return True
    return False


def _files(root: Path, pattern: str) -> Iterator[Path]:
    """Regular files under ``root`` matching ``pattern``, in sorted order (links not followed)."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            file = Path(dirpath) / name
            if file.match(pattern) and file.is_file() and not file.is_symlink():
                yield file


def read(path: Path, *, level: str = "scores") -> pd.DataFrame:
    """Read EEE records under ``path`` (an aggregate ``.json`` file, a ``_samples.jsonl`` file, or a folder).

    Parameters
    ----------
    level : {"scores", "samples"}
        The aggregate results (one row per system, task and metric) or the instance-level
        sidecars (one row per system, task and item).
    """
    if level not in ("scores", "samples"):
        raise InputError(f"level={level!r}: expected 'scores' or 'samples'")
    root = path.parent if path.is_file() else path
    prov = Provenance("eee", root)
    if level == "scores":
        files = [path] if path.is_file() else [f for f in _files(path, "*.json") if _is_aggregate(f)]
        if not files:
            raise InputError(f"{path}: no Every Eval Ever aggregate record (.json with schema_version, "
                             "evaluation_id, evaluation_results) found")
        return _read_scores(files, prov)
    files = [path] if path.is_file() else list(_files(path, "*_samples.jsonl"))
    if not files:
        raise InputError(f"{path}: no Every Eval Ever instance file ({{uuid}}_samples.jsonl) found")
    return _read_samples(files, prov)


def _read_scores(files: list[Path], prov: Provenance) -> pd.DataFrame:
    rows: list[dict[str, Any]] = []
    seen: dict[tuple[str, str, str], Path] = {}
    versions: set[str] = set()
    directions: dict[str, bool] = {}
    extra_types: dict[str, str] = {}
    details_meta: list[dict[str, str]] = []
    for file in files:
        obj = load_json(file, prov.read(file))
        if not isinstance(obj, dict):
            raise InputError(f"{file}: expected a JSON object (an EEE aggregate record), got {type(obj).__name__}")
        versions.add(str(require(obj, "schema_version", str, file)))
        model = require(obj, "model_info", dict, file)
        system = require(model, "id", str, file, "model_info.id")
        raw_library = obj.get("eval_library")
        library = raw_library if isinstance(raw_library, dict) else {}
        source = str(library.get("name", "unknown"))
        meta = (obj.get("source_metadata") or {}).get("additional_details") or {}
        if isinstance(meta, dict):
            details_meta.append(meta)
            types = _column_types(meta.get("scorebench.columns"), file)
            extra_types.update(types)
        results = require(obj, "evaluation_results", list, file)
        found = [(f"evaluation_results[{i}]", _result_row(result, file, f"evaluation_results[{i}]", system, source))
                 for i, result in enumerate(results)]
        _distinguish(found)
        for where, row in found:
            key = (row["system"], row["task"], row["metric"])
            if key in seen:
                raise field_error(file, where, f"(system, task, metric) {key} also in {prov.relative(seen[key])}; "
                                               "a folder must hold one result per model, task and metric")
            seen[key] = file
            previous = directions.setdefault(row["metric"], not row["lower_is_better"])
            if previous != (not row["lower_is_better"]):
                raise field_error(file, f"{where}.metric_config.lower_is_better",
                                  f"metric {row['metric']!r} is lower-is-better here but not in another file")
            rows.append(row)
    if not rows:
        raise InputError(f"{prov.root}: the EEE records hold no evaluation results")
    table = pd.DataFrame(rows)
    extras = [c for c in table.columns if c not in _SCORE_COLUMNS]
    table = table[_SCORE_COLUMNS + extras]
    for col, kind in extra_types.items():
        if col in table.columns:
            table[col] = _restore(table[col], kind)
    table["n"] = table["n"].astype("Int64")
    table["n_boot"] = table["n_boot"].astype("Int64")
    attrs = _shared_attrs(table, details_meta)
    return prov.stamp(table, versions, higher_is_better=directions, n_systems=int(table["system"].nunique()),
                      **attrs)


def _distinguish(found: list[tuple[str, dict[str, Any]]]) -> None:
    """Results of one record sharing (task, metric) but not ``evaluation_result_id`` (several
    scorers reporting ``accuracy``, as every-eval-ever's Inspect converter writes them) are
    named by their result id (``match:accuracy``)."""
    counts: dict[tuple[str, str], int] = {}
    for _, row in found:
        counts[row["task"], row["metric"]] = counts.get((row["task"], row["metric"]), 0) + 1
    for _, row in found:
        result_id = row.pop("_result_id")
        if counts[row["task"], row["metric"]] > 1 and isinstance(result_id, str) and result_id:
            row["metric"] = result_id


def _result_row(result: Any, file: Path, where: str, system: str, source: str) -> dict[str, Any]:
    if not isinstance(result, dict):
        raise field_error(file, where, f"expected an object, got {type(result).__name__}")
    task = require(result, "evaluation_name", str, file, f"{where}.evaluation_name")
    config = require(result, "metric_config", dict, file, f"{where}.metric_config")
    lower = require(config, "lower_is_better", bool, file, f"{where}.metric_config.lower_is_better")
    metric = config.get("metric_id") or config.get("metric_name") or task
    if not isinstance(metric, str):
        raise field_error(file, f"{where}.metric_config.metric_id", f"expected a string, got {type(metric).__name__}")
    details = require(result, "score_details", dict, file, f"{where}.score_details")
    value = _finite(require(details, "score", (int, float), file, f"{where}.score_details.score"), file,
                    f"{where}.score_details.score")
    row: dict[str, Any] = {"system": system, "task": task, "metric": metric, "value": value, "ci_low": math.nan,
                           "ci_high": math.nan, "n": None, "stderr": math.nan, "ci_level": math.nan,
                           "interval_method": None, "n_boot": None, "lower_is_better": lower, "source": source,
                           "_result_id": result.get("evaluation_result_id")}
    unc = details.get("uncertainty")
    if unc is not None:
        if not isinstance(unc, dict):
            raise field_error(file, f"{where}.score_details.uncertainty", "expected an object")
        _uncertainty(unc, row, file, f"{where}.score_details.uncertainty")
    extra = details.get("details")
    if isinstance(extra, dict):
        for key, text in extra.items():
            if key in row:
                continue  # a detail never overrides a typed field
            row[key] = text
    return row


def _uncertainty(unc: dict, row: dict, file: Path, where: str) -> None:
    interval = unc.get("confidence_interval")
    if interval is not None:
        if not isinstance(interval, dict):
            raise field_error(file, f"{where}.confidence_interval", "expected an object")
        low = _finite(require(interval, "lower", (int, float), file, f"{where}.confidence_interval.lower"),
                      file, f"{where}.confidence_interval.lower")
        high = _finite(require(interval, "upper", (int, float), file, f"{where}.confidence_interval.upper"),
                       file, f"{where}.confidence_interval.upper")
        if low > high:
            raise field_error(file, f"{where}.confidence_interval", f"lower {low} is above upper {high}")
        row.update(ci_low=low, ci_high=high)
        if "confidence_level" in interval:
            level = as_number(interval["confidence_level"], file, f"{where}.confidence_interval.confidence_level")
            if not 0 <= level <= 1:
                raise field_error(file, f"{where}.confidence_interval.confidence_level", f"{level} is not in [0, 1]")
            row["ci_level"] = level
        if isinstance(interval.get("method"), str):
            row["interval_method"] = interval["method"]
    se = unc.get("standard_error")
    if isinstance(se, dict) and "value" in se:
        row["stderr"] = _finite(se["value"], file, f"{where}.standard_error.value")
    for key, column in (("num_samples", "n"), ("num_bootstrap_samples", "n_boot")):
        if key in unc:
            count = unc[key]
            if isinstance(count, bool) or not isinstance(count, int) or count < 0:
                raise field_error(file, f"{where}.{key}", f"expected a non-negative integer, got {count!r}")
            row[column] = count


def _finite(value: Any, file: Path, field: str) -> float:
    """A finite JSON number (NaN and Infinity, which Python's JSON accepts, are refused)."""
    out = as_number(value, file, field)
    if not math.isfinite(out):
        raise field_error(file, field, f"expected a finite number, got {value!r}")
    return out


def _column_types(text: Any, file: Path) -> dict[str, str]:
    if text is None:
        return {}
    try:
        types = json.loads(text) if isinstance(text, str) else None
    except json.JSONDecodeError:
        types = None
    if not isinstance(types, dict) or not all(v in ("bool", "int", "float", "str") for v in types.values()):
        raise field_error(file, "source_metadata.additional_details.scorebench.columns",
                          "expected a JSON object of column -> bool/int/float/str")
    return types


def _restore(column: pd.Series, kind: str) -> pd.Series:
    """Text details back to the dtype scorebench recorded (missing cells stay missing)."""
    if kind == "float":
        return pd.to_numeric(column, errors="coerce").astype(float)
    if kind == "int":
        values = pd.to_numeric(column, errors="coerce")
        return values.astype("Int64") if values.isna().any() else values.astype("int64")
    if kind == "bool":
        return column.map({"True": True, "False": False})
    return column


def _shared_attrs(table: pd.DataFrame, metas: list[dict[str, str]]) -> dict[str, Any]:
    """attrs that every record agrees on: ci level, interval rules, and scorebench's provenance."""
    out: dict[str, Any] = {}
    levels = table["ci_level"].dropna().unique()
    if len(levels) == 1:
        out["ci"] = float(levels[0])
    methods = table.dropna(subset=["interval_method"]).groupby("metric")["interval_method"].unique()
    if len(methods) and all(len(v) == 1 for v in methods):
        out["interval_methods"] = {str(m): str(v[0]) for m, v in methods.items()}
    boots = table["n_boot"].dropna().unique()
    if len(boots) == 1:
        out["n_boot"] = int(boots[0])
    for key in ("seed", "aggregate_defaults", "benchmark", "kind"):
        found = {m.get(f"scorebench.{key}") for m in metas if f"scorebench.{key}" in m}
        if len(found) == 1:
            value = found.pop()
            if key == "seed" and isinstance(value, str) and value.lstrip("-").isdigit():
                out[key] = int(value)
            elif key == "aggregate_defaults":
                try:
                    out[key] = json.loads(cast(str, value))
                except json.JSONDecodeError:
                    pass
            else:
                out[key] = value
    return out


def _read_samples(files: list[Path], prov: Provenance) -> pd.DataFrame:
    rows: list[dict[str, Any]] = []
    seen: dict[tuple[str, str, str, str], int] = {}
    versions: set[str] = set()
    for file in files:
        for number, rec in jsonl_records(file, prov.read(file)):
            where = f"line {number}"
            if not isinstance(rec, dict):
                raise field_error(file, where, f"expected an object, got {type(rec).__name__}")
            versions.add(str(require(rec, "schema_version", str, file, f"{where}.schema_version")))
            system = require(rec, "model_id", str, file, f"{where}.model_id")
            task = require(rec, "evaluation_name", str, file, f"{where}.evaluation_name")
            sample_id = require(rec, "sample_id", str, file, f"{where}.sample_id")
            sample_hash = rec.get("sample_hash")
            if sample_hash is not None and not isinstance(sample_hash, str):
                raise field_error(file, f"{where}.sample_hash", "expected a string or null")
            result_id = rec.get("evaluation_result_id")
            result_id = result_id if isinstance(result_id, str) else ""
            evaluation = require(rec, "evaluation", dict, file, f"{where}.evaluation")
            score = as_number(require(evaluation, "score", (int, float), file, f"{where}.evaluation.score"), file,
                              f"{where}.evaluation.score")
            correct = require(evaluation, "is_correct", bool, file, f"{where}.evaluation.is_correct")
            item = sample_hash or sample_id
            key = (system, task, result_id, item)
            seen[key] = seen.get(key, 0) + 1  # a repeated item: another epoch or sample of it
            epoch = (rec.get("metadata") or {}).get("epoch") if isinstance(rec.get("metadata"), dict) else None
            repeat = int(epoch) if isinstance(epoch, str) and epoch.isdigit() else seen[key]
            rows.append({"system": system, "task": task, "result_id": result_id, "id": item,
                         "sample_id": sample_id, "repeat": repeat, "score": score, "correct": float(correct)})
    if not rows:
        raise InputError(f"{prov.root}: the EEE instance files hold no records")
    table = pd.DataFrame(rows)
    several = table.groupby("task")["result_id"].nunique()
    split = set(several[several > 1].index)
    if split:
        mask = table["task"].isin(split).to_numpy()
        names, ids = table.loc[mask, "task"], table.loc[mask, "result_id"]
        table.loc[mask, "task"] = [i if i.startswith(f"{n}/") else f"{n}/{i}" for n, i in zip(names, ids)]
    table = table.drop(columns="result_id")
    repeated = int(table.duplicated(["system", "task", "id"]).sum())
    if table.duplicated(["system", "task", "id", "repeat"]).any():
        first = table[table.duplicated(["system", "task", "id", "repeat"], keep=False)].iloc[0]
        raise InputError(f"{prov.root}: item {first['id']!r} of {first['system']!r} on {first['task']!r} appears "
                         f"twice as repeat (epoch) {first['repeat']}")
    if not repeated:
        table = table.drop(columns="repeat")
    table["correct"] = table["correct"].astype(np.float64)
    return prov.stamp(table, versions, level="samples", n_systems=int(table["system"].nunique()),
                      n_repeated=repeated)
