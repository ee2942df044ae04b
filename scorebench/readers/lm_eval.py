"""lm-evaluation-harness output -> a per-sample ``samples`` table (or a ``scores`` table).

A run (``lm_eval ... --output_path OUT --log_samples``) writes ``results_<timestamp>.json``
(``results``: task -> ``"metric,filter"`` values such as ``"acc,none"``; ``task_hashes``,
``higher_is_better``, ``n-samples``, ``config``, ``model_name``, ``lm_eval_version``) and one
``samples_<task>_<timestamp>.jsonl`` per task: one line per (document, filter) with
``doc_id``, ``doc_hash``, ``filter``, ``metrics`` and one value per metric. Tasks with
several filters (gsm8k's ``strict-match`` and ``flexible-extract``) repeat every document
once per filter (lm-eval issue #1687); the reader puts them side by side.

``level="samples"`` (default) gives one row per (system, task, document): ``id`` is the
``doc_hash`` (so two runs are paired on the same document, whatever its position), and one
column per ``"metric,filter"`` — the per-sample mean of a column is the results file's
value for a mean-aggregated metric (``sample_mean@acc,none``). Per-sample values that are
not numbers (BLEU's reference/prediction pairs, aggregated at corpus level) are left out
and named in ``attrs["not_per_sample"]``. ``level="results"`` gives the results files'
numbers as a ``scores`` table (``system``, ``task``, ``metric``, ``value``; stderr keys and
groups left out).

Runs are refused when they evaluated the same task on different data or prompts: their
``task_hashes`` differ (the paired comparison would compare different items).
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import InputError
from ._common import (Provenance, field_error, head_bytes, is_regular_file, jsonl_records, load_json, regular_files,
                      require)

__all__ = ["read", "detect"]

_RESULTS = re.compile(r"^results_(.+)\.json$")
_KNOWN_MAJOR_MINOR = (0, 4)  # lm_eval_version of the files this reader knows


def detect(path: Path) -> bool:
    """True for a results/samples file of the harness, or a folder holding results files."""
    if path.is_file():
        return bool(_RESULTS.match(path.name)) and b'"task_hashes"' in head_bytes(path, 1 << 20) or \
            (path.name.startswith("samples_") and path.suffix == ".jsonl")
    return any(_RESULTS.match(p.name) and is_regular_file(p) for depth in ("*", "*/*") for p in path.glob(depth))


def read(path: Path, *, level: str = "samples", system: str | None = None,
         tasks: str | list[str] | None = None) -> pd.DataFrame:
    """Read lm-evaluation-harness runs under ``path`` (a run folder, a folder of runs, or a results file).

    Parameters
    ----------
    level : {"samples", "results"}
        Per-document rows (needs ``--log_samples`` files) or the results files' numbers.
    system : str, optional
        Name of the system when ``path`` holds one run (default: the results file's
        ``model_name``, or ``config.model``); ``"folder"`` names each run by its folder.
    tasks : str or list of str, optional
        Only these tasks.
    """
    if level not in ("samples", "results"):
        raise InputError(f"level={level!r}: expected 'samples' or 'results'")
    wanted = {tasks} if isinstance(tasks, str) else (set(tasks) if tasks is not None else None)
    root = path.parent if path.is_file() else path
    runs = [path] if path.is_file() and _RESULTS.match(path.name) else \
        sorted(p for p in regular_files(root.rglob("results_*.json")) if _RESULTS.match(p.name))
    if not runs:
        raise InputError(f"{path}: no lm-evaluation-harness results_<timestamp>.json found")
    if system is not None and system != "folder" and len(runs) > 1:
        raise InputError(f"system={system!r} names one run, but {path} holds {len(runs)} results files")
    prov = Provenance("lm_eval", root)
    found = _Found(prov, level, wanted)
    for run in runs:
        found.add_run(run, root, system)
    if not found.frames:
        raise InputError(f"{path}: no task results{' for tasks ' + str(sorted(wanted)) if wanted else ''}")
    table = pd.concat(found.frames, ignore_index=True)
    return prov.stamp(table, found.versions, level=level, task_hashes={k: v[0] for k, v in found.hashes.items()},
                      higher_is_better=found.directions, not_per_sample=sorted(found.not_per_sample),
                      n_systems=int(table["system"].nunique()))


class _Found:
    """What the results files read so far hold, checked for consistency as each is added."""

    def __init__(self, prov: Provenance, level: str, wanted: set[str] | None) -> None:
        self.prov, self.level, self.wanted = prov, level, wanted
        self.frames: list[pd.DataFrame] = []
        self.hashes: dict[str, tuple[str, Path]] = {}  # task -> (task hash, first run with it)
        self.seen: dict[tuple[str, str], Path] = {}  # (system, task) -> run
        self.versions: set[str] = set()
        self.not_per_sample: set[str] = set()
        self.directions: dict[str, Any] = {}

    def add_run(self, run: Path, root: Path, system: str | None) -> None:
        obj = load_json(run, self.prov.read(run))
        results = require(obj, "results", dict, run)
        self.versions.add(_version(obj, run))
        name = _system_name(obj, run, root, system)
        for task, values in results.items():
            if self.wanted is not None and task not in self.wanted or task in (obj.get("groups") or {}):
                continue
            if not isinstance(values, dict):
                raise field_error(run, f"results.{task}", f"expected an object, got {type(values).__name__}")
            self._check(run, name, task, (obj.get("task_hashes") or {}).get(task))
            self.directions[task] = (obj.get("higher_is_better") or {}).get(task, {})
            if self.level == "results":
                self.frames.append(_results_rows(values, run, name, task))
            else:
                frame, dropped = _samples_rows(_samples_file(run, task), self.prov, name, task)
                self.not_per_sample |= {f"{task}:{m}" for m in dropped}
                self.frames.append(frame)

    def _check(self, run: Path, name: str, task: str, digest: str | None) -> None:
        """Runs of one task must share its data hash, and each (system, task) come once."""
        if digest is not None:
            first = self.hashes.setdefault(task, (digest, run))
            if first[0] != digest:
                raise field_error(run, f"task_hashes.{task}", f"{digest[:12]}... differs from {first[0][:12]}... "
                                  f"in {first[1]}: the runs evaluated different data or prompts; not comparable")
        if (name, task) in self.seen:
            raise field_error(run, "model_name", f"duplicate (model, task) ({name!r}, {task!r}) also in "
                                                 f"{self.seen[name, task]}; pass system='folder' to name runs by folder")
        self.seen[name, task] = run


def _version(obj: dict, run: Path) -> str:
    version = obj.get("lm_eval_version")
    if version is None:
        return "unknown"
    match = re.match(r"^\s*(\d+)\.(\d+)", str(version))
    if match is None or (int(match.group(1)), int(match.group(2))) > _KNOWN_MAJOR_MINOR:
        raise field_error(run, "lm_eval_version", f"unknown version {version!r}; this reader knows 0.4.x files")
    return str(version)


def _system_name(obj: dict, run: Path, root: Path, system: str | None) -> str:
    if system == "folder":
        rel = run.parent.relative_to(root) if run.parent != root else Path(run.parent.name)
        return rel.as_posix()
    if system is not None:
        return system
    name = obj.get("model_name") or (obj.get("config") or {}).get("model")
    if not isinstance(name, str) or not name:
        raise field_error(run, "model_name", "missing (and no config.model); pass system=")
    return name


def _results_rows(values: dict, run: Path, system: str, task: str) -> pd.DataFrame:
    rows = []
    for key, value in values.items():
        metric, sep, _ = key.partition(",")
        if not sep or metric.endswith("_stderr") or isinstance(value, str):
            continue  # alias, name, sample_len; stderr; "N/A"
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise field_error(run, f"results.{task}.{key}", f"expected a finite number, got {value!r}")
        rows.append({"system": system, "task": task, "metric": key, "value": float(value)})
    return pd.DataFrame(rows, columns=["system", "task", "metric", "value"])


def _samples_file(run: Path, task: str) -> Path:
    stamp = _RESULTS.match(run.name).group(1)
    path = run.parent / f"samples_{task}_{stamp}.jsonl"
    if not path.is_file():
        raise InputError(f"{run}: no per-sample file {path.name} for task {task!r}; run lm_eval with "
                         "--log_samples, or read with level='results'")
    return path


def _samples_rows(path: Path, prov: Provenance, system: str, task: str) -> tuple[pd.DataFrame, set[str]]:
    data = prov.read(path)
    docs: dict[str, dict[str, Any]] = {}
    doc_of: dict[str, Any] = {}
    dropped: set[str] = set()
    for number, row in jsonl_records(path, data):
        where = f"line {number}"
        doc_hash = require(row, "doc_hash", str, path, f"{where}.doc_hash")
        filt = require(row, "filter", str, path, f"{where}.filter")
        metrics = require(row, "metrics", list, path, f"{where}.metrics")
        doc_id = row.get("doc_id")
        if doc_of.setdefault(doc_hash, doc_id) != doc_id:
            raise field_error(path, f"{where}.doc_hash", f"documents {doc_of[doc_hash]} and {doc_id} have the same "
                                                         "doc_hash; they cannot be told apart for pairing")
        entry = docs.setdefault(doc_hash, {"system": system, "task": task, "id": doc_hash, "doc_id": str(doc_id)})
        for metric in metrics:
            column = f"{metric},{filt}"
            if metric not in row:
                raise field_error(path, f"{where}.{metric}", "missing (listed in 'metrics')")
            value = row[metric]
            if isinstance(value, bool):
                value = float(value)
            if not isinstance(value, (int, float)):
                dropped.add(column)
                continue
            if column in entry:
                raise field_error(path, f"{where}.filter", f"document {doc_id} has {column!r} twice")
            entry[column] = float(value)
    if not docs:
        raise InputError(f"{path}: no samples")
    frame = pd.DataFrame(list(docs.values()))
    frame = frame.drop(columns=[c for c in dropped if c in frame.columns])
    return frame, dropped
