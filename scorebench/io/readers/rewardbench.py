r"""RewardBench outputs -> a per-prompt ``samples`` table, or its section scores.

RewardBench (Lambert et al., 2024) writes per-prompt outputs and a summary, in three layouts,
all read (plain or gzipped, ``.json.gz`` / ``.jsonl.gz``):

* the ``rewardbench`` CLI: ``results/<org>/<model>_outputs.jsonl`` (records: ``id``,
  ``prompt``, ``results`` = 1 when the chosen response outscores the rejected one,
  ``scores_chosen``, ``scores_rejected``, ``subset``) and ``results/<org>/<model>.json``
  (``model``, ``ref_model``, ``accuracy``, ``num_prompts``, ``extra_results``: subset ->
  accuracy, or ``null`` when the dataset was a local copy);
* ``scripts/run_rm.py`` and the public ``reward-bench-results`` repository:
  ``eval-set-scores/<org>/<model>.json``, the column-oriented ``Dataset.to_dict()``
  (``{"chosen": [...], "id": [...], "results": [...], "scores_chosen": [...], ...}``,
  ``subset`` or ``subsets``), and the summary ``eval-set/<org>/<model>.json`` (``model``,
  ``model_type``, ``chat_template`` and one accuracy per subset);
* a JSON array of the records.

Each record's ``results`` must agree with its scores (1 exactly when ``scores_chosen >
scores_rejected``, RewardBench's rule, ties counting as 0); a contradiction is an error.

A folder is searched recursively and may hold several reward models (one output file
each; the summary beside it, or under ``eval-set/`` with the same ``<org>/<model>``).

``level="samples"`` (default): one row per prompt, ``system``, ``task = "rewardbench"``
(one benchmark: a score spanning subsets, such as ``rewardbench_score``, groups by
``system, task`` by default), ``subset``, ``section``, ``id``, ``correct`` (``results``),
``margin`` = chosen minus rejected score, and ``weight`` = :math:`n_s / m_s`, the official
example count of the prompt's subset over the prompts of it in the file, so that the
weighted mean of ``correct`` over a section is RewardBench's section score (math-prm's 447
prompts carry the weight of 984). ``level="sections"``: a ``scores`` table of the four
section scores (metric ``accuracy``), each the prompt-count-weighted mean of its subsets'
accuracies with RewardBench's counts,

.. math:: S_k = \frac{\sum_{s \in k} n_s\, \mathrm{acc}_s}{\sum_{s \in k} n_s},

where ``math-prm`` counts 984 prompts (its 447 up-weighted to equal the six ``hep-*`` code
subsets, 164 each) so that math and code weigh equally in Reasoning; a section with no
subset in the file scores 0, as RewardBench's ``calculate_scores_per_section`` gives it.
The leaderboard's score is the mean of the four sections. ``results`` is RewardBench's own
strict ``chosen > rejected``: a tie is a loss. A summary file beside the outputs is
checked: its per-subset accuracies must equal the outputs' (else the files do not belong
together).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from scorebench.core.errors import InputError
from scorebench.core.rewardbench_subsets import EXAMPLE_COUNTS, SECTIONS
from scorebench.io.readers._common import Provenance, as_number, field_error, head_bytes, jsonl_records, load_json, plain_name, require

__all__ = ["read", "detect", "SECTIONS", "EXAMPLE_COUNTS", "section_scores"]

_SECTION_OF = {subset: section for section, subsets in SECTIONS.items() for subset in subsets}


_SUFFIXES = (".json", ".jsonl", ".json.gz", ".jsonl.gz")
_SCORE_DIRS = ("eval-set-scores", "pref-sets-scores")
_SUMMARY_DIRS = ("eval-set", "pref-sets")


def _candidates(path: Path) -> list[Path]:
    """``path`` itself, or every JSON / JSON Lines file under it (recursively, in path order)."""
    if path.is_file():
        return [path]
    return sorted(p for p in path.rglob("*") if p.is_file() and p.name.endswith(_SUFFIXES))


def detect(path: Path) -> bool:
    """True for a per-prompt output file, a RewardBench summary, or a folder holding one.

    The column-oriented ``eval-set-scores`` files start with the long ``chosen`` texts, so
    the key names are looked for in the first 4 KB *and* the last 4 KB of the file.
    """
    for file in _candidates(path)[:20]:
        if file.name.endswith(".gz"):
            if _looks_like_rewardbench(head_bytes(file, 1 << 16)):
                return True
            continue
        with open(file, "rb") as fh:
            head = fh.read(4096)
            fh.seek(0, 2)
            fh.seek(max(0, fh.tell() - 4096))
            tail = fh.read()
        if _looks_like_rewardbench(head) or _looks_like_rewardbench(tail):
            return True
    return False


def _looks_like_rewardbench(chunk: bytes) -> bool:
    if b'"scores_chosen"' in chunk or b'"extra_results"' in chunk and b'"ref_model"' in chunk:
        return True
    # the eval-set summary: {"chat_template", "model", "model_type", "<subset>": accuracy, ...}
    return b'"model_type"' in chunk and any(f'"{s}"'.encode() in chunk for s in EXAMPLE_COUNTS)


def section_scores(subset_accuracy: dict[str, float]) -> dict[str, float]:
    """RewardBench's section scores from per-subset accuracies (prompt-count weighted).

    A section without any subset scores 0, as in RewardBench's ``calculate_scores_per_section``.

    Examples
    --------
    >>> acc = {s: 1.0 for s in EXAMPLE_COUNTS} | {"math-prm": 0.0}
    >>> section_scores(acc)["Reasoning"]      # math weighs as much as the six code subsets
    0.5
    """
    out = {}
    for section, subsets in SECTIONS.items():
        present = [s for s in subsets if s in subset_accuracy]
        total = sum(EXAMPLE_COUNTS[s] for s in present)
        out[section] = sum(EXAMPLE_COUNTS[s] * subset_accuracy[s] for s in present) / total if total else 0.0
    return out


def read(path: Path, *, level: str | None = None, system: str | None = None) -> pd.DataFrame:
    """Read RewardBench outputs: a file, or a folder (searched recursively) of one or more models.

    Parameters
    ----------
    level : {"samples", "sections"}, optional
        One row per prompt, or the four section scores of each model. Default: ``"samples"``,
        or ``"sections"`` when ``path`` holds only summaries (``eval-set/<org>/<model>.json``),
        whose per-subset accuracies give the section scores.
    system : str, optional
        Name of the reward model when ``path`` holds one (default: the summary's ``model``,
        else the file's path below the results folder, ``_outputs`` dropped).
    """
    if level not in (None, "samples", "sections"):
        raise InputError(f"level={level!r}: expected 'samples' or 'sections'")
    prov = Provenance("rewardbench", path if path.is_dir() else path.parent)
    models, summaries = _models(path, prov)
    if not models:
        if level == "samples":
            raise InputError(f"{path}: only RewardBench summaries, no per-prompt outputs; read level='sections'")
        return _summary_sections(summaries, prov, system)
    level = level or "samples"
    if system is not None and len(models) > 1:
        raise InputError(f"system={system!r} names one reward model, but {path} holds {len(models)}: "
                         f"{', '.join(sorted(models))}")
    frames: list[pd.DataFrame] = []
    extra_acc: dict[str, Any] = {}
    seen: dict[str, Path] = {}
    for key, (outputs, summary) in sorted(models.items()):
        file, records = outputs
        name = system or (_summary_model(summary)) or key
        if name in seen:
            raise InputError(f"{file}: reward model {name!r} also in {seen[name]}; keep one output file per model")
        seen[name] = file
        table = pd.DataFrame([_row(r, file, i, name) for i, r in enumerate(records)])
        dup = table.duplicated(["subset", "id"])
        if dup.any():
            raise field_error(file, f"[{int(dup.to_numpy().argmax())}].id", "duplicate prompt id within a subset")
        counts = table["subset"].value_counts()
        table["weight"] = table["subset"].map(lambda s: EXAMPLE_COUNTS[s] / counts[s])
        accuracy = table.groupby("subset")["correct"].mean().to_dict()
        if summary is not None:
            _check_summary(*summary, accuracy, len(table))
        extra_acc[name] = accuracy
        if level == "sections":
            scores = section_scores(accuracy)
            table = pd.DataFrame({"system": name, "task": list(scores), "metric": "accuracy",
                                  "value": list(scores.values())})
        frames.append(table)
    table = pd.concat(frames, ignore_index=True)
    only = next(iter(extra_acc)) if len(extra_acc) == 1 else None
    refs = {_summary_model(s) or k: str(s[1].get("ref_model")) if s else "unknown" for k, (_, s) in models.items()}
    extra = {"subset_accuracy": extra_acc[only] if only else extra_acc, "model": only or sorted(extra_acc),
             "ref_model": refs.get(only, "unknown") if only else refs, "n_systems": len(extra_acc)}
    return prov.stamp(table, [], level=level, **extra)


def _summary_model(summary: tuple[Path, dict] | None) -> str | None:
    model = summary[1].get("model") if summary else None
    return model if isinstance(model, str) and model else None


def _key(file: Path, root: Path) -> str:
    """The model a file belongs to, from its path: ``eval-set-scores/<org>/<model>.json`` and
    ``eval-set/<org>/<model>.json`` -> ``<org>/<model>``; ``<org>/<model>_outputs.jsonl`` -> ``<org>/<model>``."""
    try:
        parts = list(file.relative_to(root).parts)
    except ValueError:
        parts = [file.name]
    for i, part in enumerate(parts[:-1]):
        if part in _SCORE_DIRS + _SUMMARY_DIRS:
            parts = parts[i + 1:]
            break
    name = plain_name(Path(parts[-1]))
    for suffix in (".jsonl", ".json"):
        name = name.removesuffix(suffix)
    parts[-1] = name.removesuffix("_outputs")
    return "/".join(parts)


def _models(path: Path, prov: Provenance) -> tuple[dict[str, tuple[tuple[Path, list], tuple[Path, dict] | None]],
                                                   dict[str, tuple[Path, dict]]]:
    """``{model key: (per-prompt outputs, summary or None)}`` of the files under ``path``, and
    ``{model key: summary}`` of every summary found."""
    root = prov.root
    outputs: dict[str, tuple[Path, list]] = {}
    summaries: dict[str, tuple[Path, dict]] = {}
    for file in _candidates(path):
        value = _load(file, prov)
        key = _key(file, root)
        records = _records(value, file)
        if records is not None:
            if key in outputs:
                raise InputError(f"{path}: two per-prompt output files for {key!r} ({outputs[key][0]}, {file})")
            outputs[key] = (file, records)
        elif isinstance(value, dict) and ("extra_results" in value or _subset_keys(value)):
            summaries[key] = (file, value)
    if not outputs and not summaries:
        raise InputError(f"{path}: no RewardBench per-prompt outputs found (records, or columns, with "
                         "scores_chosen, scores_rejected, results and subset) and no summary")
    if len(outputs) == 1 and len(summaries) == 1 and next(iter(outputs)) not in summaries:
        summaries = {next(iter(outputs)): next(iter(summaries.values()))}  # one model, two names
    return {key: (found, summaries.get(key)) for key, found in outputs.items()}, summaries


def _summary_sections(summaries: dict[str, tuple[Path, dict]], prov: Provenance, system: str | None) -> pd.DataFrame:
    """Section scores from summaries alone (their per-subset accuracies)."""
    if system is not None and len(summaries) > 1:
        raise InputError(f"system={system!r} names one reward model, but there are {len(summaries)} summaries")
    frames, accuracies = [], {}
    for key, (file, summary) in sorted(summaries.items()):
        extra = summary.get("extra_results", {k: summary[k] for k in _subset_keys(summary)})
        if not isinstance(extra, dict) or not extra:
            raise field_error(file, "extra_results", "no per-subset accuracies (null: a local dataset copy); "
                                                     "section scores need them or the per-prompt outputs")
        acc = {}
        for subset, value in extra.items():
            if subset not in _SECTION_OF:
                raise field_error(file, subset, f"unknown subset {subset!r}; expected a RewardBench subset")
            acc[subset] = as_number(value, file, subset)
        name = system or _summary_model((file, summary)) or key
        scores = section_scores(acc)
        accuracies[name] = acc
        frames.append(pd.DataFrame({"system": name, "task": list(scores), "metric": "accuracy",
                                    "value": list(scores.values())}))
    table = pd.concat(frames, ignore_index=True)
    only = next(iter(accuracies)) if len(accuracies) == 1 else None
    return prov.stamp(table, [], level="sections", subset_accuracy=accuracies[only] if only else accuracies,
                      model=only or sorted(accuracies), n_systems=len(accuracies), from_summaries=True)


def _subset_keys(value: dict) -> list[str]:
    return [k for k in value if k in EXAMPLE_COUNTS]


def _records(value: Any, file: Path) -> list | None:
    """Per-prompt records of a file: a list of records, or the columns of ``Dataset.to_dict()``."""
    if isinstance(value, list) and value and isinstance(value[0], dict) and "scores_chosen" in value[0]:
        return value
    if isinstance(value, dict) and isinstance(value.get("scores_chosen"), list):
        columns = {k: v for k, v in value.items() if isinstance(v, list)}
        lengths = {k: len(v) for k, v in columns.items()}
        n = lengths["scores_chosen"]
        uneven = sorted(k for k, m in lengths.items() if m != n)
        if uneven:
            raise field_error(file, uneven[0], f"column of {lengths[uneven[0]]} values but scores_chosen has {n}; "
                                               "expected columns of one length (Dataset.to_dict())")
        if "subset" not in columns and "subsets" in columns:
            columns["subset"] = columns.pop("subsets")
        return [{k: v[i] for k, v in columns.items()} for i in range(n)]
    return None


def _load(file: Path, prov: Provenance) -> Any:
    data = prov.read(file)
    if plain_name(file).endswith(".jsonl"):
        return [value for _, value in jsonl_records(file, data)]
    return load_json(file, data)


def _row(record: Any, file: Path, i: int, system: str) -> dict[str, Any]:
    where = f"[{i}]"
    if not isinstance(record, dict):
        raise field_error(file, where, f"expected a record, got {type(record).__name__}")
    if "subset" not in record and "subsets" in record:
        record = {**record, "subset": record["subsets"]}
    subset = require(record, "subset", str, file, f"{where}.subset")
    if subset not in _SECTION_OF:
        raise field_error(file, f"{where}.subset", f"unknown subset {subset!r}; expected a RewardBench subset")
    chosen = _single(record.get("scores_chosen"), file, f"{where}.scores_chosen")
    rejected = _single(record.get("scores_rejected"), file, f"{where}.scores_rejected")
    result = record.get("results")
    if result not in (0, 1) or isinstance(result, float) and not math.isfinite(result):
        raise field_error(file, f"{where}.results", f"expected 0 or 1, got {result!r}")
    if bool(result) != (chosen > rejected):  # RewardBench's rule: 1 exactly when chosen outscores rejected
        raise field_error(file, f"{where}.results", f"{result!r} contradicts the scores (scores_chosen {chosen!r}, "
                                                    f"scores_rejected {rejected!r}): results is 1 exactly when "
                                                    "the chosen response scores higher")
    return {"system": system, "task": "rewardbench", "subset": subset, "section": _SECTION_OF[subset],
            "id": str(record.get("id", i)), "correct": float(result), "margin": chosen - rejected}


def _single(value: Any, file: Path, field: str) -> float:
    """A score, or the one-element list some reward models' outputs hold."""
    if isinstance(value, list):
        if len(value) != 1:
            raise field_error(file, field, f"expected one score, got a list of {len(value)}")
        value = value[0]
    if value is None:
        raise field_error(file, field, "missing")
    return as_number(value, file, field)


def _check_summary(file: Path, summary: dict, accuracy: dict[str, float], n: int) -> None:
    """The summary's per-subset accuracies (``extra_results``, or the eval-set summary's subset
    keys) must equal the outputs'; ``extra_results: null`` (a local dataset copy) checks nothing."""
    if "extra_results" in summary:
        extra = summary["extra_results"]
        if extra is None:
            extra = {}
        elif not isinstance(extra, dict):
            raise field_error(file, "extra_results", f"expected an object or null, got {type(extra).__name__}")
        where = "extra_results."
    else:
        extra, where = {k: summary[k] for k in _subset_keys(summary)}, ""
    for subset, value in extra.items():
        if subset in accuracy and abs(as_number(value, file, f"{where}{subset}") - accuracy[subset]) > 1e-9:
            raise field_error(file, f"{where}{subset}", f"{value} but the per-prompt outputs give "
                                                               f"{accuracy[subset]}; the files do not belong together")
    if "num_prompts" in summary and summary["num_prompts"] != n:
        raise field_error(file, "num_prompts", f"{summary['num_prompts']} but the outputs hold {n} prompts")
