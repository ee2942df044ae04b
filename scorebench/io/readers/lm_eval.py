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

from scorebench.core.errors import InputError
from scorebench.io.readers._common import (Provenance, field_error, head_bytes, is_regular_file, jsonl_records, load_json, plain_name,
                      require)

__all__ = ["read", "detect", "system_name"]

_RESULTS = re.compile(r"^results_(.+)\.json$")  # matched against the name without .gz
_KNOWN_MAJOR_MINOR = (0, 4)  # lm_eval_version of the files this reader knows


_SAMPLES = re.compile(r"^samples_(.+)_(\d{4}-\d{2}-\d{2}T[\d.\-:]+)\.jsonl(?:\.gz)?$")
_HEAD_KEYS = (b'"task_hashes"', b'"versions"', b'"configs"')


def _is_results_file(path: Path, named: bool = False) -> bool:
    """A results file: ``results_<ts>.json`` (0.4.3+) or ``results.json`` (0.4.0-0.4.2) holding
    ``"results"`` and ``"versions"``/``"configs"``; with ``named`` any ``.json`` of that content."""
    name = plain_name(path)
    if not (named and name.endswith(".json") or _RESULTS.match(name) or name == "results.json"):
        return False
    head = head_bytes(path, 1 << 20)
    # lighteval's results files also hold "results" and "versions"; its "config_general" tells them apart
    return b'"results"' in head and any(k in head for k in _HEAD_KEYS) and b'"config_general"' not in head


def detect(path: Path) -> bool:
    """True for a results/samples file of the harness, or a folder holding results files."""
    if path.is_file():
        return _is_results_file(path, named=True) or bool(_SAMPLES.match(path.name))
    return any(_is_results_file(p) for depth in ("*", "*/*") for p in path.glob(depth)
               if is_regular_file(p) and (_RESULTS.match(plain_name(p)) or plain_name(p) == "results.json"))


def _find_runs(path: Path) -> tuple[list[Path], set[str] | None]:
    """The results files to read, and the tasks a samples file given as ``path`` restricts them to."""
    if path.is_file():
        match = _SAMPLES.match(path.name)
        if match:  # one task's samples: its run's results file, that task only
            task, stamp = match.groups()
            found = [p for p in path.parent.glob(f"results_{stamp}.json*") if _RESULTS.match(plain_name(p))]
            if not found:
                raise InputError(f"{path}: no results_{stamp}.json beside this samples file")
            return found[:1], {task}
        if not _is_results_file(path, named=True):
            raise InputError(f"{path}: not an lm-evaluation-harness results file (expected a JSON object with "
                             "'results' and 'versions' or 'configs')")
        return [path], None
    return sorted(p for p in path.rglob("*.json*") if is_regular_file(p) and _is_results_file(p)), None


def read(path: Path, *, level: str = "samples", system: str | None = None,
         tasks: str | list[str] | None = None, runs: str | None = None) -> pd.DataFrame:
    """Read lm-evaluation-harness runs under ``path`` (a run folder, a folder of runs, a results file
    of any name, or one ``samples_<task>_<ts>.jsonl``, which reads that task of its run).

    Parameters
    ----------
    level : {"samples", "results"}
        Per-document rows (needs ``--log_samples`` files) or the results files' numbers.
    system : str, optional
        Name of the system when ``path`` holds one run (default: the results file's
        ``model_name``, else ``pretrained=`` of ``config.model_args``, else ``config.model``);
        ``"folder"`` names each run by its folder.
    tasks : str or list of str, optional
        Only these tasks.
    runs : {None, "latest", "all"}
        Several runs of one (model, task) (re-runs in one folder, new timestamps): refused by
        default; ``"latest"`` keeps the newest (by the results file's timestamp); ``"all"``
        keeps every run as repeats, told apart by the ``run`` column (the timestamp).
    """
    if level not in ("samples", "results"):
        raise InputError(f"level={level!r}: expected 'samples' or 'results'")
    if runs not in (None, "latest", "all"):
        raise InputError(f"runs={runs!r}: expected 'latest' or 'all'")
    wanted = {tasks} if isinstance(tasks, str) else (set(tasks) if tasks is not None else None)
    root = path.parent if path.is_file() else path
    files, only = _find_runs(path)
    if only is not None:
        wanted = only if wanted is None else wanted & only
    if not files:
        raise InputError(f"{path}: no lm-evaluation-harness results_<timestamp>.json (or results.json) found")
    if system is not None and system != "folder" and len(files) > 1:
        raise InputError(f"system={system!r} names one run, but {path} holds {len(files)} results files")
    prov = Provenance("lm_eval", root)
    found = _Found(prov, level, wanted, runs)
    for run in sorted(files, key=_stamp, reverse=runs == "latest"):
        found.add_run(run, root, system)
    if not found.frames:
        raise InputError(f"{path}: no task results{' for tasks ' + str(sorted(wanted)) if wanted else ''}")
    table = pd.concat(found.frames, ignore_index=True)
    return prov.stamp(table, found.versions, level=level, task_hashes={k: v[0] for k, v in found.hashes.items()},
                      higher_is_better=found.directions, not_per_sample=sorted(found.not_per_sample),
                      n_systems=int(table["system"].nunique()), groups=found.groups, runs=str(runs))


def _stamp(run: Path) -> str:
    match = _RESULTS.match(plain_name(run))
    return match.group(1) if match else ""


class _Found:
    """What the results files read so far hold, checked for consistency as each is added."""

    def __init__(self, prov: Provenance, level: str, wanted: set[str] | None, runs: str | None = None) -> None:
        self.prov, self.level, self.wanted, self.runs = prov, level, wanted, runs
        self.groups: dict[str, list[str]] = {}
        self.frames: list[pd.DataFrame] = []
        self.hashes: dict[str, tuple[str, Path]] = {}  # task -> (task hash, first run with it)
        self.seen: dict[tuple[str, ...], Path] = {}  # (system, task[, stamp]) -> run
        self.versions: set[str] = set()
        self.not_per_sample: set[str] = set()
        self.directions: dict[str, Any] = {}

    def add_run(self, run: Path, root: Path, system: str | None) -> None:
        obj = load_json(run, self.prov.read(run))
        results = require(obj, "results", dict, run)
        self.versions.add(_version(obj, run))
        name = system_name(obj, run, root, system)
        groups = _group_members(obj)
        self.groups.update(groups)
        stamp = _stamp(run) or plain_name(run)
        leaf_frames: dict[str, pd.DataFrame] = {}
        for task, values in results.items():
            if task in groups:
                continue
            if self.wanted is not None and task not in self.wanted and not any(
                    task in groups[g] for g in self.wanted if g in groups):
                continue
            if not isinstance(values, dict):
                raise field_error(run, f"results.{task}", f"expected an object, got {type(values).__name__}")
            if not self._check(run, name, task, (obj.get("task_hashes") or {}).get(task), stamp):
                continue
            self.directions[task] = (obj.get("higher_is_better") or {}).get(task, {})
            if self.level == "results":
                frame = _results_rows(values, run, name, task)
            else:
                frame, dropped = _samples_rows(_samples_file(run, task, obj), self.prov, name, task, values)
                self.not_per_sample |= {f"{task}:{m}" for m in dropped}
            if self.runs == "all":
                frame.insert(1, "run", stamp)
            leaf_frames[task] = frame
            self.frames.append(frame)
        self._add_groups(run, obj, name, groups, leaf_frames, stamp)

    def _add_groups(self, run: Path, obj: dict, name: str, groups: dict[str, list[str]],
                    leaf_frames: dict[str, pd.DataFrame], stamp: str) -> None:
        """Group rows (MMLU's headline ``mmlu`` and its categories), marked ``is_group``.

        ``level="results"``: the results file's group numbers. ``level="samples"``: the
        documents of the group's tasks again under the group's name (``id`` prefixed by the
        task), so a per-sample mean over the group is the harness's sample-size-weighted
        group score (``weight_by_size``, the default of MMLU's group aggregation).
        """
        results = obj["results"]
        for group, members in groups.items():
            if self.wanted is not None and group not in self.wanted:
                continue
            if self.level == "results":
                values = results.get(group)
                if isinstance(values, dict):
                    frame = _results_rows(values, run, name, group)
                    self._group_frame(frame, stamp)
                continue
            parts = [leaf_frames[t].assign(id=lambda f, t=t: t + "/" + f["id"], task=group)
                     for t in members if t in leaf_frames]
            if parts:
                self._group_frame(pd.concat(parts, ignore_index=True), stamp)

    def _group_frame(self, frame: pd.DataFrame, stamp: str) -> None:
        if self.runs == "all" and "run" not in frame.columns:
            frame.insert(1, "run", stamp)
        frame["is_group"] = True
        self.frames.append(frame)

    def _check(self, run: Path, name: str, task: str, digest: str | None, stamp: str) -> bool:
        """Runs of one task must share its data hash, and each (system, task) come once (per run
        with ``runs="all"``); False when ``runs="latest"`` already has a newer run of it."""
        if digest is not None:
            first = self.hashes.setdefault(task, (digest, run))
            if first[0] != digest:
                raise field_error(run, f"task_hashes.{task}", f"{digest[:12]}... differs from {first[0][:12]}... "
                                  f"in {first[1]}: the runs evaluated different data or prompts; not comparable")
        key = (name, task, stamp) if self.runs == "all" else (name, task)
        if key in self.seen:
            if self.runs == "latest":
                return False
            raise field_error(run, "model_name", f"duplicate (model, task) ({name!r}, {task!r}) also in "
                                                 f"{self.seen[key]}; pass system='folder' to name runs by folder, "
                                                 "or runs='latest' / runs='all' for re-runs")
        self.seen[key] = run
        return True


def _version(obj: dict, run: Path) -> str:
    version = obj.get("lm_eval_version")
    if version is None:
        return "unknown"
    match = re.match(r"^\s*(\d+)\.(\d+)", str(version))
    if match is None or (int(match.group(1)), int(match.group(2))) > _KNOWN_MAJOR_MINOR:
        raise field_error(run, "lm_eval_version", f"unknown version {version!r}; this reader knows 0.4.x files")
    return str(version)


def system_name(obj: dict, run: Path, root: Path, system: str | None) -> str:
    """The system a results file ``run`` under ``root`` belongs to: ``system`` when given
    (``"folder"``: the run's folder relative to ``root``), else the file's ``model_name``,
    else ``pretrained=`` of ``config.model_args``, else ``config.model``."""
    if system == "folder":
        rel = run.parent.relative_to(root) if run.parent != root else Path(run.parent.name)
        return rel.as_posix()
    if system is not None:
        return system
    raw_config = obj.get("config")
    config = raw_config if isinstance(raw_config, dict) else {}
    name = obj.get("model_name") or _pretrained(config.get("model_args")) or config.get("model")
    if not isinstance(name, str) or not name:
        raise field_error(run, "model_name", "missing (and no config.model_args pretrained= or config.model); "
                                             "pass system=")
    return name


def _pretrained(model_args: Any) -> str | None:
    """``pretrained=`` (or ``model=``) of ``model_args``: ``"pretrained=org/m,dtype=float"`` or a dict."""
    if isinstance(model_args, dict):
        args = model_args
    elif isinstance(model_args, str):
        args = dict(part.split("=", 1) for part in model_args.split(",") if "=" in part)
    else:
        return None
    for key in ("pretrained", "model", "engine", "path"):
        value = args.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _group_members(obj: dict) -> dict[str, list[str]]:
    """``{group: leaf tasks}`` from ``group_subtasks`` (nested groups flattened) or 0.4.0-0.4.2's ``groups``."""
    tree = obj.get("group_subtasks")
    if not isinstance(tree, dict):
        tree = {}
    names = set(tree) | set(obj.get("groups") or {})
    out = {}
    for group in names:
        if not tree.get(group) and group in tree:
            continue  # a plain task listed with no subtasks
        leaves, stack, seen = [], list(tree.get(group) or []), set()
        while stack:
            task = stack.pop(0)
            if task in seen:
                continue
            seen.add(task)
            if tree.get(task):
                stack.extend(tree[task])
            else:
                leaves.append(task)
        out[group] = leaves
    return out


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


def _samples_file(run: Path, task: str, obj: dict) -> Path:
    """The task's per-sample file: ``samples_<task>_<ts>.jsonl`` (0.4.3+) or, from 0.4.0-0.4.2,
    ``<model_args with / and = as __>_<task>.jsonl`` beside ``results.json``."""
    stamp = _stamp(run)
    names = [f"samples_{task}_{stamp}.jsonl"] if stamp else []
    model_args = (obj.get("config") or {}).get("model_args") if isinstance(obj.get("config"), dict) else None
    if isinstance(model_args, str):
        names.append(f"{re.sub('/|=', '__', model_args)}_{task}.jsonl")
    for name in names:
        for candidate in (run.parent / name, run.parent / (name + ".gz")):
            if candidate.is_file():
                return candidate
    if not stamp:  # 0.4.0-0.4.2 with model_args unknown: the one file ending in _<task>.jsonl
        found = [p for p in run.parent.glob(f"*_{task}.jsonl*") if not p.name.startswith("samples_")]
        if len(found) == 1:
            return found[0]
    raise InputError(f"{run}: no per-sample file {names[0] if names else '*_' + task + '.jsonl'} for task "
                     f"{task!r}; run lm_eval with --log_samples, or read with level='results'")


_NOT_METRICS = {"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "doc_hash", "prompt_hash",
                "target_hash", "filter", "metrics"}


def _legacy_records(path: Path, data: bytes, values: dict) -> list[tuple[int, dict]]:
    """0.4.0-0.4.2 samples (a pretty-printed JSON array, bare metric names, no filter or hash):
    the records in the 0.4.3+ shape. The k-th record of a document is the k-th filter of the
    task's results keys (``"acc,none"``), as the harness wrote them, filter by filter."""
    records = load_json(path, data)
    if not isinstance(records, list):
        raise field_error(path, "(top level)", f"expected a JSON array of samples, got {type(records).__name__}")
    filters = list(dict.fromkeys(k.partition(",")[2] for k in values if "," in k and not
                                 k.partition(",")[0].endswith("_stderr"))) or ["none"]
    seen: dict[Any, int] = {}
    out = []
    for i, record in enumerate(records):
        if not isinstance(record, dict) or "doc_id" not in record:
            raise field_error(path, f"[{i}].doc_id", "missing (expected lm-eval sample records)")
        k = seen.get(record["doc_id"], 0)
        seen[record["doc_id"]] = k + 1
        if k >= len(filters):
            raise field_error(path, f"[{i}].doc_id", f"document {record['doc_id']} appears {k + 1} times but the "
                                                     f"results list {len(filters)} filter(s)")
        metrics = [key for key in record if key not in _NOT_METRICS]
        out.append((i, {**record, "doc_hash": f"doc{record['doc_id']}", "filter": filters[k], "metrics": metrics}))
    return out


def _samples_rows(path: Path, prov: Provenance, system: str, task: str,
                  values: dict | None = None) -> tuple[pd.DataFrame, set[str]]:
    data = prov.read(path)
    docs: dict[str, dict[str, Any]] = {}
    doc_of: dict[str, Any] = {}
    dropped: set[str] = set()
    legacy = data.lstrip()[:1] == b"["
    records = _legacy_records(path, data, values or {}) if legacy else jsonl_records(path, data)
    for number, row in records:
        where = f"[{number}]" if legacy else f"line {number}"
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
