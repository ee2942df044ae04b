"""HELM run folders -> a per-instance ``samples`` table (or the run's ``stats.json`` numbers).

A HELM run folder (``benchmark_output/runs/<suite>/<run name>/``) holds ``run_spec.json``
(``name``, ``adapter_spec.model``), ``stats.json`` (a list of stats
``{name: {name, split, sub_split, perturbation}, count, sum, sum_squared, min, max, mean,
variance, stddev}``) and ``per_instance_stats.json`` (a list of ``{instance_id,
train_trial_index, perturbation, stats: [...]}``).

``level="samples"`` (default): one row per instance (``id`` = ``instance_id``, with
``#<trial>`` appended for train trials after the first), ``system`` = the model, ``task`` =
the run name without its ``model=`` argument, one column per stat (its per-instance
``mean``); only the ``split`` asked for (default ``test``) and the unperturbed instances,
or those of ``perturbation`` (a perturbation ``name``). ``level="stats"``: ``stats.json``
as a ``scores`` table (same split and perturbation selection).

With one train trial and one count per instance, HELM's ``stats.json`` mean of a stat is
the mean of its per-instance values (``sample_mean@<stat>``).

Reference: Liang et al. (2023), Holistic Evaluation of Language Models, TMLR.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import InputError
from ._common import Provenance, as_number, field_error, load_json, require

__all__ = ["read", "detect"]


def detect(path: Path) -> bool:
    """True for a HELM run folder (or a folder of them, two levels down) or one of its stats files."""
    if path.is_file():
        return path.name in ("per_instance_stats.json", "stats.json") and (path.parent / "run_spec.json").is_file()
    return any(True for pattern in ("per_instance_stats.json", "*/per_instance_stats.json",
                                    "*/*/per_instance_stats.json", "*/*/*/per_instance_stats.json")
               for _ in path.glob(pattern))


def read(path: Path, *, level: str | None = None, split: str = "test", perturbation: str | None = None,
         system: str | None = None) -> pd.DataFrame:
    """Read HELM run folders under ``path`` (options as in the module docstring).

    ``path`` may be ``benchmark_output`` (helm-run's default root, runs three levels down),
    ``runs/<suite>``, one run folder, or one of its files: ``stats.json`` reads that file
    (``level="stats"``), ``per_instance_stats.json`` the instances. ``level`` defaults to
    ``"stats"`` for a ``stats.json`` path and ``"samples"`` otherwise.
    """
    if level is None:
        level = "stats" if path.is_file() and path.name == "stats.json" else "samples"
    if level not in ("samples", "stats"):
        raise InputError(f"level={level!r}: expected 'samples' or 'stats'")
    root = path.parent if path.is_file() else path
    runs = [root] if (root / "per_instance_stats.json").is_file() else \
        sorted(p.parent for p in root.rglob("per_instance_stats.json"))
    if not runs:
        raise InputError(f"{path}: no HELM run folder (per_instance_stats.json) found")
    prov = Provenance("helm", root)
    frames, seen = [], {}
    for run in runs:
        model, task = _names(run, prov, system)
        if (model, task) in seen:
            raise field_error(run / "run_spec.json", "name", f"duplicate (model, task) ({model!r}, {task!r}) also in "
                                                             f"{seen[model, task]}")
        seen[model, task] = run
        frame = _stats_rows(run, prov, model, task, split, perturbation) if level == "stats" else \
            _instance_rows(run, prov, model, task, split, perturbation)
        frames.append(frame)
    table = pd.concat(frames, ignore_index=True)
    return prov.stamp(table, [], level=level, split=split, perturbation=str(perturbation),
                      n_systems=int(table["system"].nunique()))


def _names(run: Path, prov: Provenance, system: str | None) -> tuple[str, str]:
    spec_path = run / "run_spec.json"
    if not spec_path.is_file():
        if system is None:
            raise InputError(f"{run}: no run_spec.json to name the model; pass system=")
        return system, run.name
    spec = load_json(spec_path, prov.read(spec_path))
    name = require(spec, "name", str, spec_path)
    model = system or require(require(spec, "adapter_spec", dict, spec_path), "model", str, spec_path,
                              "adapter_spec.model")
    head, _, args = name.partition(":")
    kept = [a for a in args.split(",") if a and not a.startswith("model=")]
    return model, head + (":" + ",".join(kept) if kept else "")


def _selected(stat_name: Any, where: str, file: Path, split: str, perturbation: str | None) -> str | None:
    """The stat's name when it belongs to ``split`` and the perturbation selection, else None."""
    if not isinstance(stat_name, dict):
        raise field_error(file, f"{where}.name", "expected an object {name, split, ...}")
    name = require(stat_name, "name", str, file, f"{where}.name.name")
    pert = stat_name.get("perturbation")
    pert_name = pert.get("name") if isinstance(pert, dict) else None
    if stat_name.get("split") != split or stat_name.get("sub_split") is not None or pert_name != perturbation:
        return None
    return name


def _load_list(file: Path, prov: Provenance) -> list:
    value = load_json(file, prov.read(file))
    if not isinstance(value, list):
        raise field_error(file, "(top level)", f"expected a list, got {type(value).__name__}")
    return value


def _instance_rows(run: Path, prov: Provenance, model: str, task: str, split: str,
                   perturbation: str | None) -> pd.DataFrame:
    file = run / "per_instance_stats.json"
    instances = _load_list(file, prov)
    rows: dict[str, dict[str, Any]] = {}
    for i, inst in enumerate(instances):
        where = f"[{i}]"
        instance_id = require(inst, "instance_id", str, file, f"{where}.instance_id")
        trial = inst.get("train_trial_index", 0)
        pert = inst.get("perturbation")
        if (pert.get("name") if isinstance(pert, dict) else None) != perturbation:
            continue
        key = instance_id if not trial else f"{instance_id}#{trial}"
        for j, stat in enumerate(require(inst, "stats", list, file, f"{where}.stats")):
            name = _selected(stat.get("name") if isinstance(stat, dict) else None, f"{where}.stats[{j}]", file,
                             split, perturbation)
            if name is None or not stat.get("count"):
                continue
            row = rows.setdefault(key, {"system": model, "task": task, "id": key})
            if name in row:
                raise field_error(file, f"{where}.stats[{j}].name", f"stat {name!r} twice for instance {key!r}")
            row[name] = as_number(stat.get("mean"), file, f"{where}.stats[{j}].mean")
    if not rows:
        raise InputError(f"{file}: no instance of split {split!r} (perturbation {perturbation!r})")
    return pd.DataFrame(list(rows.values()))


def _stats_rows(run: Path, prov: Provenance, model: str, task: str, split: str,
                perturbation: str | None) -> pd.DataFrame:
    file = run / "stats.json"
    stats = _load_list(file, prov)
    rows = []
    for i, stat in enumerate(stats):
        name = _selected(stat.get("name") if isinstance(stat, dict) else None, f"[{i}]", file, split, perturbation)
        if name is not None and stat.get("count"):
            rows.append({"system": model, "task": task, "metric": name,
                         "value": as_number(stat.get("mean"), file, f"[{i}].mean")})
    if not rows:
        raise InputError(f"{file}: no stat of split {split!r} (perturbation {perturbation!r})")
    return pd.DataFrame(rows)
