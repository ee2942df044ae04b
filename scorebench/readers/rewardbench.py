r"""RewardBench outputs -> a per-prompt ``samples`` table, or its section scores.

RewardBench (Lambert et al., 2024) writes per-prompt outputs (a JSON array or JSON Lines:
``id``, ``prompt``, ``results`` = 1 when the chosen response outscores the rejected one,
``scores_chosen``, ``scores_rejected``, ``subset``) and a summary (``model``,
``ref_model``, ``accuracy``, ``num_prompts``, ``extra_results``: subset -> accuracy).

Each record's ``results`` must agree with its scores (1 exactly when ``scores_chosen >
scores_rejected``, RewardBench's rule, ties counting as 0); a contradiction is an error.

``level="samples"`` (default): one row per prompt, ``system``, ``task`` = subset,
``section``, ``id``, ``correct`` (``results``), ``margin`` = chosen minus rejected score.
``level="sections"``: a ``scores`` table of the four section scores (metric ``accuracy``),
each the prompt-count-weighted mean of its subsets' accuracies with RewardBench's counts,

.. math:: S_k = \frac{\sum_{s \in k} n_s\, \mathrm{acc}_s}{\sum_{s \in k} n_s},

where ``math-prm`` counts 984 prompts (its 447 up-weighted to equal the six ``hep-*`` code
subsets, 164 each) so that math and code weigh equally in Reasoning; the leaderboard's
score is the mean of the four sections. A summary file beside the outputs is checked: its
per-subset accuracies must equal the outputs' (else the files do not belong together).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import InputError
from ._common import Provenance, as_number, field_error, head_bytes, jsonl_records, load_json, regular_files, require

__all__ = ["read", "detect", "SECTIONS", "EXAMPLE_COUNTS", "section_scores"]

SECTIONS = {
    "Chat": ("alpacaeval-easy", "alpacaeval-length", "alpacaeval-hard", "mt-bench-easy", "mt-bench-med"),
    "Chat Hard": ("mt-bench-hard", "llmbar-natural", "llmbar-adver-neighbor", "llmbar-adver-GPTInst",
                  "llmbar-adver-GPTOut", "llmbar-adver-manual"),
    "Safety": ("refusals-dangerous", "refusals-offensive", "xstest-should-refuse", "xstest-should-respond",
               "donotanswer"),
    "Reasoning": ("math-prm", "hep-cpp", "hep-go", "hep-java", "hep-js", "hep-python", "hep-rust"),
}
EXAMPLE_COUNTS = {
    "alpacaeval-easy": 100, "alpacaeval-length": 95, "alpacaeval-hard": 95, "mt-bench-easy": 28, "mt-bench-med": 40,
    "mt-bench-hard": 37, "llmbar-natural": 100, "llmbar-adver-neighbor": 134, "llmbar-adver-GPTInst": 92,
    "llmbar-adver-GPTOut": 47, "llmbar-adver-manual": 46, "refusals-dangerous": 100, "refusals-offensive": 100,
    "xstest-should-refuse": 154, "xstest-should-respond": 250, "donotanswer": 136, "math-prm": 984,
    "hep-cpp": 164, "hep-go": 164, "hep-java": 164, "hep-js": 164, "hep-python": 164, "hep-rust": 164,
}
_SECTION_OF = {subset: section for section, subsets in SECTIONS.items() for subset in subsets}


def detect(path: Path) -> bool:
    """True for a per-prompt output file (``scores_chosen``) or a folder holding one."""
    files = [path] if path.is_file() else regular_files([*path.glob("*.json"), *path.glob("*.jsonl")])
    for file in files[:20]:
        head = head_bytes(file)
        if b'"scores_chosen"' in head or b'"extra_results"' in head and b'"ref_model"' in head:
            return True
    return False


def section_scores(subset_accuracy: dict[str, float]) -> dict[str, float]:
    """RewardBench's section scores from per-subset accuracies (prompt-count weighted).

    Examples
    --------
    >>> acc = {s: 1.0 for s in EXAMPLE_COUNTS} | {"math-prm": 0.0}
    >>> section_scores(acc)["Reasoning"]      # math weighs as much as the six code subsets
    0.5
    """
    out = {}
    for section, subsets in SECTIONS.items():
        present = [s for s in subsets if s in subset_accuracy]
        if present:
            total = sum(EXAMPLE_COUNTS[s] for s in present)
            out[section] = sum(EXAMPLE_COUNTS[s] * subset_accuracy[s] for s in present) / total
    return out


def read(path: Path, *, level: str = "samples", system: str | None = None) -> pd.DataFrame:
    """Read RewardBench outputs (a file, or a folder with the outputs and the summary)."""
    if level not in ("samples", "sections"):
        raise InputError(f"level={level!r}: expected 'samples' or 'sections'")
    prov = Provenance("rewardbench", path if path.is_dir() else path.parent)
    outputs, summary = _outputs_and_summary(path, prov)
    file, records = outputs
    name = system or (summary[1].get("model") if summary else None) or file.stem
    table = pd.DataFrame([_row(r, file, i, name) for i, r in enumerate(records)])
    dup = table.duplicated(["task", "id"])
    if dup.any():
        raise field_error(file, f"[{int(dup.to_numpy().argmax())}].id", "duplicate prompt id within a subset")
    accuracy = table.groupby("task")["correct"].mean().to_dict()
    if summary is not None:
        _check_summary(*summary, accuracy, len(table))
    extra = {"subset_accuracy": accuracy, "model": name,
             "ref_model": str(summary[1].get("ref_model")) if summary else "unknown"}
    if level == "sections":
        scores = section_scores(accuracy)
        table = pd.DataFrame({"system": name, "task": list(scores), "metric": "accuracy", "value": list(scores.values())})
    return prov.stamp(table, [], level=level, **extra)


def _outputs_and_summary(path: Path, prov: Provenance) -> tuple[tuple[Path, list], tuple[Path, dict] | None]:
    """The one per-prompt outputs file (records with ``scores_chosen``) and the summary, if any."""
    files = [path] if path.is_file() else sorted(regular_files([*path.glob("*.json"), *path.glob("*.jsonl")]))
    outputs, summary = None, None
    for file in files:
        value = _load(file, prov)
        if isinstance(value, dict) and "extra_results" in value:
            summary = (file, value)
        elif isinstance(value, list) and value and isinstance(value[0], dict) and "scores_chosen" in value[0]:
            if outputs is not None:
                raise InputError(f"{path}: two per-prompt output files ({outputs[0].name}, {file.name}); read one")
            outputs = (file, value)
    if outputs is None:
        raise InputError(f"{path}: no RewardBench per-prompt outputs (records with scores_chosen) found")
    return outputs, summary


def _load(file: Path, prov: Provenance) -> Any:
    data = prov.read(file)
    if file.suffix == ".jsonl":
        return [value for _, value in jsonl_records(file, data)]
    return load_json(file, data)


def _row(record: Any, file: Path, i: int, system: str) -> dict[str, Any]:
    where = f"[{i}]"
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
    return {"system": system, "task": subset, "section": _SECTION_OF[subset], "id": str(record.get("id", i)),
            "correct": float(result), "margin": chosen - rejected}


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
    extra = require(summary, "extra_results", dict, file)
    for subset, value in extra.items():
        if subset in accuracy and abs(as_number(value, file, f"extra_results.{subset}") - accuracy[subset]) > 1e-9:
            raise field_error(file, f"extra_results.{subset}", f"{value} but the per-prompt outputs give "
                                                               f"{accuracy[subset]}; the files do not belong together")
    if "num_prompts" in summary and summary["num_prompts"] != n:
        raise field_error(file, "num_prompts", f"{summary['num_prompts']} but the outputs hold {n} prompts")
