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

**Metric selection and direction.** A run records every stat it computed: accuracy next to
token counts and runtimes. ``metric=None`` (default) keeps the scenario group's *main*
metric, as ``helm-summarize`` ranks by it: ``environment.main_name`` of the run's
``groups`` in HELM's schema (the ``schema.json`` that ``helm-summarize`` writes into
``runs/<suite>/``, found beside the runs or given as ``schema=``); without a schema every
stat is kept. ``metric="exact_match"`` (or a list) keeps those stats, ``metric="all"``
every stat. Each kept stat's direction is in ``attrs["higher_is_better"]`` (the schema's
``lower_is_better``, else HELM's known cost stats such as ``num_output_tokens`` and
``inference_runtime`` as lower-is-better); when stats of different meaning remain,
``attrs["mixed_metrics"]`` lists them and ``aggregate`` refuses to rank over them.

Reference: Liang et al. (2023), Holistic Evaluation of Language Models, TMLR.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd

from scorebench.core.errors import InputError
from scorebench.io.readers._common import Provenance, as_number, field_error, load_json, regular_files, require

__all__ = ["read", "detect"]


def detect(path: Path) -> bool:
    """True for a HELM run folder (or a folder of them, two levels down) or one of its stats files."""
    if path.is_file():
        return path.name in ("per_instance_stats.json", "stats.json") and (path.parent / "run_spec.json").is_file()
    return any(True for pattern in ("per_instance_stats.json", "*/per_instance_stats.json",
                                    "*/*/per_instance_stats.json", "*/*/*/per_instance_stats.json")
               for _ in path.glob(pattern))


# Stats HELM reports as costs or counts (lower is better, or no "better" at all) when no schema says.
_LOWER = {"inference_runtime", "inference_denoised_runtime", "batch_size", "training_co2_cost",
          "training_energy_cost", "num_prompt_tokens", "num_output_tokens", "num_completion_tokens",
          "max_num_output_tokens", "num_train_instances", "num_train_trials", "prompt_truncated",
          "finish_reason_length", "finish_reason_unknown", "num_bytes", "ece_1_bin", "ece_10_bin", "num_references", "num_instances",
          "toxic_frac", "expected_max_toxicity", "max_toxicity_probability", "monte_carlo_entropy"}


def _find_schema(run: Path, root: Path, schema: str | os.PathLike | None) -> Path | None:
    if schema is not None:
        path = Path(schema)
        if not path.is_file():
            raise InputError(f"schema={str(schema)!r}: no such file (HELM's schema.json from helm-summarize)")
        return path
    top = [root.parent] if (root / "per_instance_stats.json").is_file() else []  # a run folder: its suite too
    for folder in (run, *run.parents):
        if (folder / "schema.json").is_file():
            return folder / "schema.json"
        if folder == root:
            break
    for folder in top:
        if (folder / "schema.json").is_file():
            return folder / "schema.json"
    return None


def _load_schema(file: Path, prov: Provenance) -> tuple[dict[str, str], dict[str, bool]]:
    """``({run group: main metric}, {metric: higher is better})`` from HELM's schema.json."""
    obj = load_json(file, prov.read(file))
    if not isinstance(obj, dict):
        raise field_error(file, "(top level)", "expected HELM's schema object (metrics, run_groups)")
    mains, directions = {}, {}
    for i, group in enumerate(obj.get("run_groups") or []):
        env = group.get("environment") if isinstance(group, dict) else None
        if isinstance(env, dict) and isinstance(env.get("main_name"), str) and isinstance(group.get("name"), str):
            mains[group["name"]] = env["main_name"]
    for metric in obj.get("metrics") or []:
        if isinstance(metric, dict) and isinstance(metric.get("name"), str):
            directions[metric["name"]] = not bool(metric.get("lower_is_better"))
    return mains, directions


def read(path: Path, *, level: str | None = None, split: str = "test", perturbation: str | None = None,
         system: str | None = None, metric: str | list[str] | None = None,
         schema: str | os.PathLike | None = None) -> pd.DataFrame:
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
        sorted(p.parent for p in regular_files(root.rglob("per_instance_stats.json")))
    if not runs:
        raise InputError(f"{path}: no HELM run folder (per_instance_stats.json) found")
    prov = Provenance("helm", root)
    schema_file = _find_schema(runs[0], root, schema)
    mains, directions = _load_schema(schema_file, prov) if schema_file is not None else ({}, {})
    asked = None if metric is None or metric == "all" else ({metric} if isinstance(metric, str) else set(metric))
    frames: list[pd.DataFrame] = []
    seen: dict[Any, Any] = {}
    kept: set[Any] = set()
    by_main = schema_file is not None and metric is None
    for run in runs:
        model, task, groups = _names(run, prov, system)
        if (model, task) in seen:
            raise field_error(run / "run_spec.json", "name", f"duplicate (model, task) ({model!r}, {task!r}) also in "
                                                             f"{seen[model, task]}")
        seen[model, task] = run
        frame = _stats_rows(run, prov, model, task, split, perturbation) if level == "stats" else \
            _instance_rows(run, prov, model, task, split, perturbation)
        wanted = asked
        if by_main:
            wanted = {mains[g] for g in groups if g in mains}
            if not wanted:
                raise InputError(f"{run}: none of the run's groups {groups} has a main metric in {schema_file}; "
                                 "name the stat with metric=NAME (or metric='all')")
        frame = _keep(frame, wanted, run, level)
        kept |= set(frame["metric"]) if level == "stats" else set(frame.columns) - {"system", "task", "id"}
        frames.append(frame)
    table = pd.concat(frames, ignore_index=True)
    higher = {m: directions.get(m, m not in _LOWER) for m in sorted(kept)}
    mixed = sorted(kept) if len(kept) > 1 else []
    return prov.stamp(table, [], level=level, split=split, perturbation=str(perturbation),
                      n_systems=int(table["system"].nunique()), higher_is_better=higher, mixed_metrics=mixed,
                      metric_selection="schema main metric" if by_main else (sorted(asked) if asked else "all"),
                      schema=str(schema_file) if schema_file is not None else "none")


def _keep(frame: pd.DataFrame, wanted: set[str] | None, run: Path, level: str) -> pd.DataFrame:
    """The rows (stats level) or columns (samples level) of the wanted stats."""
    if wanted is None:
        return frame
    have = set(frame["metric"]) if level == "stats" else set(frame.columns) - {"system", "task", "id"}
    missing = sorted(wanted - have)
    if missing:
        raise InputError(f"{run}: stat(s) {missing} not computed by this run (it has {sorted(have)})")
    if level == "stats":
        return frame[frame["metric"].isin(wanted)].reset_index(drop=True)
    return frame[["system", "task", "id", *sorted(wanted)]]


def _names(run: Path, prov: Provenance, system: str | None) -> tuple[str, str, list[str]]:
    spec_path = run / "run_spec.json"
    if not spec_path.is_file():
        if system is None:
            raise InputError(f"{run}: no run_spec.json to name the model; pass system=")
        return system, run.name, []
    spec = load_json(spec_path, prov.read(spec_path))
    name = require(spec, "name", str, spec_path)
    model = system or require(require(spec, "adapter_spec", dict, spec_path), "model", str, spec_path,
                              "adapter_spec.model")
    head, _, args = name.partition(":")
    kept = [a for a in args.split(",") if a and not a.startswith("model=")]
    groups = [g for g in (spec.get("groups") or []) if isinstance(g, str)]
    return model, head + (":" + ",".join(kept) if kept else ""), groups


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
