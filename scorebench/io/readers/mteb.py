r"""MTEB result files -> a long ``scores`` table under a benchmark's subset/split rule.

The ``mteb`` package writes one JSON file per (model, task):
``results/<org>__<model>/<revision>/<Task>.json``, optionally with a ``model_meta.json``
beside it whose ``name`` is the model id (otherwise the folder name, ``__`` read as ``/``).

Two layouts exist and both are read:

* mteb >= 1.11: ``task_name``, ``mteb_version``, ``scores: {split: [{hf_subset, languages,
  main_score, <metric>...}]}``;
* older files: ``mteb_dataset_name`` and ``split -> {metric: value}`` or
  ``split -> {subset: {metric: value}}``, similarity metrics nested by function
  (``cos_sim: {spearman}`` -> ``cosine_spearman``, ``max: {ap}`` -> ``max_ap``, as mteb
  renames them) and no ``main_score`` (then the task's main metric is it, when present).

The benchmark (a JSON file in ``readers/benchmarks/``, data rather than code) lists its
tasks with type, splits, subsets and main metric. A (model, task) score is the mean of
``main_score`` over the listed subsets of the listed splits, as the MTEB leaderboard
computes it; when a listed subset or split is absent or has no main score the cell is
missing (recorded in ``attrs["skipped"]``), never half-averaged. Files of tasks outside the
benchmark are ignored (counted in ``attrs["ignored_files"]``).

Aggregation conventions of the leaderboard, recorded in ``attrs["aggregate_defaults"]``
and applied by ``scorebench aggregate`` unless overridden: Borda with ``missing="zero"``
(a model earns :math:`n - \bar r` points per task it ran, :math:`\bar r` its average rank
among the models that ran it, and 0 for a task it did not run) and the leaderboard's
*Mean (Task)*: the mean over the tasks for models with every task, blank for the others
(``missing="blank"``: they are listed last with no score and rank and a ``note``). The mean over
the tasks a model has is one option away (``--param missing=available``); it is not MTEB's
number, and the coverage column says how many tasks it averages.

Reference: Muennighoff et al. (2023), MTEB: Massive Text Embedding Benchmark, EACL;
Enevoldsen et al. (2025), MMTEB, ICLR.
"""

from __future__ import annotations

import json
import math
import os
import re
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, cast

import pandas as pd

from scorebench.core.errors import InputError, warn_user
from scorebench.io.readers._common import Provenance, field_error, head_bytes, is_regular_file, load_json, regular_files, require
from scorebench.io.readers._mteb_revisions import Candidate, Revisions, choose, parse_revisions

__all__ = ["read", "detect", "benchmark", "BENCHMARK_NAMES", "DEFAULT_BENCHMARK"]

DEFAULT_BENCHMARK = "MTEB(eng, v2)"
_BENCHMARK_FILES = {"MTEB(eng, v2)": "mteb_eng_v2.json"}
BENCHMARK_NAMES = tuple(_BENCHMARK_FILES)
_KNOWN_MAJOR = 2  # newest mteb major version whose files this reader knows
_VERSION = re.compile(r"^\s*(\d+)\.(\d+)")
_META_KEYS = {"dataset_revision", "mteb_dataset_name", "mteb_version", "task_name", "evaluation_time",
              "kg_co2_emissions", "date", "evaluation_phases"}
# Old files nest similarity metrics by function; mteb flattens them under these names.
_LEGACY_GROUPS = {"cos_sim": "cosine", "manhattan": "manhattan", "euclidean": "euclidean", "dot": "dot",
                  "max": "max", "similarity": "similarity"}
_NOT_SUBSETS = {"v_measures", *_LEGACY_GROUPS}
_AGGREGATE_DEFAULTS = {"borda": {"missing": "zero"}, "mean": {"missing": "blank"}}


@lru_cache(maxsize=None)
def benchmark(name: str = DEFAULT_BENCHMARK) -> dict[str, Any]:
    """The definition of benchmark ``name`` (or an alias): tasks with type, splits, subsets, main metric.

    Examples
    --------
    >>> b = benchmark("MTEB(eng, v2)")
    >>> len(b["tasks"]), b["tasks"]["STS17"]["subsets"]
    (41, ['en-en'])
    """
    for key, file in _BENCHMARK_FILES.items():
        data = json.loads(resources.files(__package__).joinpath("benchmarks", file).read_text(encoding="utf-8"))
        if name == key or name in data.get("aliases", ()):
            tasks = {t["name"]: t for t in data["tasks"]}
            return {**data, "tasks": tasks, "lower": {k.lower(): k for k in tasks}}
    raise InputError(f"unknown MTEB benchmark {name!r}; known: {', '.join(BENCHMARK_NAMES)}")


def detect(path: Path) -> bool:
    """True for an MTEB result file, or a folder whose JSON files (up to 3 levels down) are."""
    if path.is_file():
        return path.suffix == ".json" and _looks_like_result(path)
    if (path / "results").is_dir():
        path = path / "results"
    file = _first_json(path, depth=3)
    return file is not None and _looks_like_result(file)


def _first_json(folder: Path, depth: int) -> Path | None:
    """The first result-like ``*.json`` (by name) at most ``depth`` levels down, folders after files."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return None
    for entry in entries:
        if entry.name.endswith(".json") and entry.name != "model_meta.json" and is_regular_file(entry.path):
            return Path(entry.path)
    for entry in entries[:3] if depth > 1 else ():
        if entry.is_dir():
            found = _first_json(Path(entry.path), depth - 1)
            if found is not None:
                return found
    return None


def _result_files(root: Path) -> list[Path]:
    """Every ``*.json`` under ``root`` except ``model_meta.json``, in path order.

    A revision folder's ``experiments/`` (mteb >= 2: the model run with other settings, one folder
    per setting) is not read, as mteb's ``load_results`` leaves it out unless asked for it.
    """
    found: list[str] = []
    for folder, dirs, names in os.walk(root):
        dirs.sort()
        if "experiments" in dirs and any(n.endswith((".json", ".json.gz")) for n in names):
            dirs.remove("experiments")
        found.extend(os.path.join(folder, n) for n in sorted(names)
                     if n.endswith((".json", ".json.gz")) and n != "model_meta.json")
    return regular_files(Path(f) for f in found)


def _looks_like_result(path: Path) -> bool:
    head = head_bytes(path)
    return b'"mteb_version"' in head or b'"mteb_dataset_name"' in head or \
        (b'"task_name"' in head and b'"hf_subset"' in head)


def read(path: Path, *, benchmark: str = DEFAULT_BENCHMARK, metrics: str = "main",
         revisions: Revisions = "latest") -> pd.DataFrame:
    """Read MTEB result files under ``path`` (a results folder, a model or revision folder, or a file).

    Parameters
    ----------
    path : Path
        ``results/`` (or the folder holding it), one model's folder, one revision folder or one file.
    benchmark : str
        Benchmark whose tasks, splits and subsets count (default ``"MTEB(eng, v2)"``).
    metrics : {"main", "all"}
        ``"main"``: one row per (model, task), ``metric = "main_score"`` and the task's main
        metric's name in ``main_metric``; ``"all"``: also every other numeric metric found
        in all the selected subset entries (averaged the same way).
    revisions : {"latest", "all"}, a revision name or a mapping {model: revision}
        Which revision folder of a model counts when it has several
        (:mod:`scorebench.io.readers._mteb_revisions`): ``"latest"`` is mteb's own rule per
        (model, task) (newest ``mteb_version``, real revisions before ``no_revision_available``);
        ``"all"`` keeps each revision as the system ``"<model>@<revision>"``; a mapping pins
        those models (the others by ``"latest"``); a revision name pins every model. CLI:
        ``--from-option revisions=all`` or ``revisions=org/model=abc123,org/other=def456``.

    Returns
    -------
    DataFrame
        ``system``, ``task``, ``task_type``, ``metric``, ``value``, ``main_metric``,
        ``revision``, ``mteb_version``; provenance, the skipped cells and the revision policy
        (``revisions``, ``n_results_not_kept``) in ``attrs``.

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> for revision, version, score in [("aaa111", "1.12.0", 0.5), ("bbb222", "2.3.0", 0.6)]:
    ...     folder = root / "org__model" / revision
    ...     folder.mkdir(parents=True)
    ...     entry = {"hf_subset": "default", "languages": ["eng-Latn"], "main_score": score}
    ...     _ = (folder / "BIOSSES.json").write_text(json.dumps({"task_name": "BIOSSES",
    ...         "mteb_version": version, "scores": {"test": [entry]}}))
    >>> read(root)[["system", "revision", "value"]].values.tolist()
    [['org/model', 'bbb222', 0.6]]
    >>> read(root, revisions="all")["system"].tolist()
    ['org/model@aaa111', 'org/model@bbb222']
    """
    if metrics not in ("main", "all"):
        raise InputError(f"metrics={metrics!r}: expected 'main' or 'all'")
    policy = parse_revisions(revisions)
    bench = globals()["benchmark"](benchmark)
    root = path / "results" if path.is_dir() and (path / "results").is_dir() else path
    files = [root] if root.is_file() else _result_files(root)
    if not files:
        raise InputError(f"{path}: no MTEB result files (*.json) found")
    prov = Provenance("mteb", root)
    candidates, ignored = _candidates(files, bench, prov, metrics)
    kept = choose(policy, candidates)
    rows: list[dict[str, Any]] = []
    skipped: list[str] = []
    versions: set[str] = set()
    for system, task, found in kept:
        values, reason = found.payload
        if reason is not None:
            skipped.append(f"{prov.relative(found.file)}: {reason}")
            continue
        versions.add(found.version or "unknown")
        spec = bench["tasks"][task]
        rows.extend({"system": system, "task": task, "task_type": spec["type"], "metric": metric, "value": value,
                     "main_metric": spec["main_score"], "revision": found.revision,
                     "mteb_version": found.version or ""} for metric, value in values.items())
    if not rows:
        raise InputError(f"{path}: no (model, task) score of benchmark {bench['name']!r} found "
                         f"({len(skipped)} skipped, {ignored} files of other tasks)")
    if skipped:
        warn_user(f"mteb: {len(skipped)} (model, task) cell(s) have no score under the {bench['name']} "
                      f"rule (missing subset, split or main score), e.g. {skipped[0]}; they are left missing "
                      "(see attrs['skipped'])")
    table = pd.DataFrame(rows, columns=["system", "task", "task_type", "metric", "value", "main_metric",
                                        "revision", "mteb_version"])
    return prov.stamp(table, versions, benchmark=bench["name"], n_systems=int(table["system"].nunique()),
                      n_tasks=len(bench["tasks"]), skipped=skipped, n_skipped=len(skipped), ignored_files=ignored,
                      aggregate_defaults=_AGGREGATE_DEFAULTS, revisions=policy.text,
                      n_results_not_kept=sum(map(len, candidates.values())) - len(kept))


def _candidates(files: list[Path], bench: dict, prov: Provenance, metrics: str
                ) -> tuple[dict[tuple[str, str], list[Candidate]], int]:
    """Every benchmark task's result per (model, task), in path order, with its values under the
    benchmark rule (or the reason it has none); and the number of files of other tasks."""
    found: dict[tuple[str, str], list[Candidate]] = {}
    names: dict[Path, tuple[str, str]] = {}
    ignored = 0
    for order, file in enumerate(files):
        try:
            obj = load_json(file, prov.read(file))
            if not isinstance(obj, dict):
                raise field_error(file, "(top level)", f"expected a JSON object, got {type(obj).__name__}")
        except InputError:
            if _outside(file, bench):  # a broken file of a task the benchmark does not use
                ignored += 1
                continue
            raise
        task = _task_name(obj, file, bench)
        if task is None:
            ignored += 1
            continue
        version = _version(obj, file)
        system, revision = _identity(file.parent, prov, names)
        same = found.setdefault((system, task), [])
        twin = next((c.file for c in same if c.revision == revision), None)
        if twin is not None:
            raise field_error(file, "task_name", f"duplicate result of model {system!r} on task {task!r} in "
                                                 f"revision {revision!r} (also in {twin})")
        spec = bench["tasks"][task]
        splits = _splits(obj, file, spec["main_score"])
        same.append(Candidate(order, file, revision, version, bool(splits), _select(splits, spec, metrics)))
    return found, ignored


def _task_name(obj: dict, file: Path, bench: dict) -> str | None:
    name = obj.get("task_name", obj.get("mteb_dataset_name"))
    if name is None:
        raise field_error(file, "task_name", "missing (and no mteb_dataset_name); not an MTEB result file?")
    if not isinstance(name, str):
        raise field_error(file, "task_name", f"expected a string, got {type(name).__name__}")
    if name in bench["tasks"]:
        return name
    return bench["lower"].get(name.lower())


_NAME_IN_HEAD = re.compile(rb'"(?:task_name|mteb_dataset_name)"\s*:\s*"([^"\\]{1,200})"')


def _outside(file: Path, bench: dict) -> bool:
    """True when neither the file name (mteb writes ``<task_name>.json``) nor a task name in its
    first bytes is a task of the benchmark: an unreadable file that the read can skip."""
    with open(file, "rb") as fh:
        head = fh.read(4096)
    names = [file.name.removesuffix(".gz").removesuffix(".json"), *(m.decode("utf-8", "replace")
                                                                    for m in _NAME_IN_HEAD.findall(head))]
    return not any(n in bench["tasks"] or n.lower() in bench["lower"] for n in names)


def _version(obj: dict, file: Path) -> str | None:
    version = obj.get("mteb_version")
    if version is None:
        return None
    match = _VERSION.match(str(version))
    if match is None or int(match.group(1)) > _KNOWN_MAJOR:
        raise field_error(file, "mteb_version", f"unknown version {version!r}; this reader knows mteb 0.x-"
                                                f"{_KNOWN_MAJOR}.x files")
    return str(version)


def _revision_of(folder: Path, system: str) -> str:
    """The revision folder's name, or ``""`` in the flat legacy layout (the folder is the model's)."""
    return "" if folder.name.replace("__", "/") == system or system.endswith("/" + folder.name) else folder.name


_REVISION = re.compile(r"^(?:[0-9a-f]{7,64}|no_revision_available|external|main)$")


def _identity(folder: Path, prov: Provenance, names: dict[Path, tuple[str, str]]) -> tuple[str, str]:
    """``(model id, revision)`` of a result file's folder.

    The model id is ``name`` in the folder's ``model_meta.json``, else taken from the folders
    (``__`` = ``/``): mteb >= 1.11 writes ``<org>__<model>/<revision>/<Task>.json``; older
    versions wrote the flat ``<model>/<Task>.json``. The file's folder is a revision when it sits
    two levels (or more) below the results root, or when its name looks like one (a commit
    hash, ``no_revision_available``, ``external``, ``main``); otherwise it is the model's own
    folder. The revision is ``model_meta.json``'s ``revision`` (as mteb reads it), else the
    revision folder's name (``""`` in the flat layout).
    """
    if folder not in names:
        meta = folder / "model_meta.json"
        if meta.is_file():
            data = load_json(meta, prov.read(meta))
            system = require(data, "name", str, meta)
            revision = data.get("revision")
            names[folder] = system, revision if isinstance(revision, str) else _revision_of(folder, system)
        else:
            try:
                depth = len(folder.relative_to(prov.root).parts)
            except ValueError:
                depth = -1
            is_revision = depth >= 2 or bool(_REVISION.match(folder.name))
            system = (folder.parent if is_revision else folder).name.replace("__", "/")
            names[folder] = system, _revision_of(folder, system)
    return names[folder]


def _splits(obj: dict, file: Path, main: str) -> dict[str, list[dict]]:
    """``{split: [subset entry, ...]}`` in the mteb >= 1.11 shape, from either layout."""
    scores = obj.get("scores")
    if isinstance(scores, dict) and all(isinstance(v, list) for v in scores.values()):
        for split, entries in scores.items():
            for i, entry in enumerate(entries):
                where = f"scores.{split}[{i}]"
                if not isinstance(entry, dict):
                    raise field_error(file, where, f"expected an object, got {type(entry).__name__}")
                require(entry, "hf_subset", str, file, f"{where}.hf_subset")
                if "main_score" not in entry:
                    raise field_error(file, f"{where}.main_score", "missing")
        return scores
    if "scores" in obj:
        raise field_error(file, "scores", "expected {split: [subset entries]}")
    return _legacy_splits(obj, file, main)


def _legacy_splits(obj: dict, file: Path, main: str) -> dict[str, list[dict]]:
    splits = {}
    for split, block in obj.items():
        if split in _META_KEYS:
            continue
        if not isinstance(block, dict):
            raise field_error(file, split, f"expected an object of scores, got {type(block).__name__}")
        splits[split] = {k: v for k, v in block.items() if k != "evaluation_time"}
    nested = any(isinstance(v, dict) and k not in _NOT_SUBSETS for block in splits.values() for k, v in block.items())
    out: dict[str, list[dict]] = {}
    for split, block in splits.items():
        subsets = block if nested else {"default": block}
        out[split] = []
        for subset, metrics in subsets.items():
            if not isinstance(metrics, dict):
                raise field_error(file, f"{split}.{subset}", f"expected an object of metrics, got "
                                                             f"{type(metrics).__name__}")
            entry = {k: v for k, v in metrics.items() if k not in _LEGACY_GROUPS}
            for old, new in _LEGACY_GROUPS.items():
                group = metrics.get(old)
                if isinstance(group, dict):
                    entry.update({f"{new}_{k}": v for k, v in group.items()})
            entry.setdefault("main_score", entry.get(main))
            entry["hf_subset"] = subset
            out[split].append(entry)
    return out


def _select(splits: dict[str, list[dict]], spec: dict, metrics: str) -> tuple[dict[str, float], str | None]:
    """The task's values under the benchmark rule, or a reason why the cell is missing."""
    entries, missing = _entries(splits, spec)
    if missing is not None:
        return {}, missing
    main = [e.get("main_score") for e in entries]
    if not all(_finite_number(v) for v in main):
        return {}, f"no main score ({spec['main_score']}) in the selected subsets"
    values = {"main_score": sum(cast(list[float], main)) / len(main)}  # every one a finite number
    if metrics == "all":
        flat = [_flatten(e) for e in entries]
        for name in flat[0]:
            column = [f.get(name) for f in flat]
            if all(_finite_number(v) for v in column):
                values.setdefault(name, sum(cast(list[float], column)) / len(column))
    return values, None


def _entries(splits: dict[str, list[dict]], spec: dict) -> tuple[list[dict], str | None]:
    """The result entries of the benchmark's splits and subsets, or a reason one is missing."""
    entries = []
    for split in spec["splits"]:
        if split not in splits:
            return [], f"split {split!r} missing"
        for subset in spec["subsets"]:
            found = [e for e in splits[split] if e["hf_subset"] == subset]
            if not found:
                return [], f"subset {subset!r} of split {split!r} missing"
            entries.extend(found)
    return entries, None


def _finite_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _flatten(entry: dict) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in entry.items():
        if key in ("main_score", "hf_subset", "languages", "evaluation_time", "mteb_version"):
            continue
        if isinstance(value, dict):
            out.update({f"{key}_{k}": v for k, v in value.items()})
        else:
            out[key] = value
    return out

