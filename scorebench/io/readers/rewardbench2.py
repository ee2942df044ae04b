r"""RewardBench 2 per-prompt scores -> a per-prompt ``samples`` table, or its subset scores.

RewardBench 2 (Malik et al., 2025) scores every completion of a prompt (``scripts/run_v2.py``
of allenai/reward-bench) and saves them column-wise (``eval-set-scores/<model>.json``): lists
``id``, ``subset``, ``scores`` (one list per prompt, the ``num_correct`` correct completions
first), ``num_correct`` and ``results``, plus ``model``. Its scoring, reproduced here:

* a prompt of the subsets Factuality, Precise IF, Math, Safety and Focus counts
  :math:`1/t` when its first completion has the highest score, shared with :math:`t - 1`
  others (:math:`t` = the number of completions at the maximum), else 0; the subset score is
  the mean;
* **Ties** (ids ``ref:<k>`` with one correct answer and ``tied:<k>`` with several) is the
  composite of reward-bench's ``process_single_model``. Per prompt, with :math:`C` the
  correct and :math:`W` the wrong completions' scores: accurate when
  :math:`\min C > \max W`; :math:`d = \max C - \min C` (tied prompts);
  :math:`m = \min C - \max W`. Over the :math:`k` present as both ``ref`` and ``tied``:

  .. math::

      \text{Ties} = 0.3\,\overline{\text{acc}}_\text{tied} + 0.3\,\overline{\text{acc}}_\text{ref}
      + 0.2\,\overline{[m_\text{tied} > d]} + 0.2\,\overline{[\min(m_\text{ref}, m_\text{tied}) > d]}
      + 0.01\,\overline{\tanh(\min(m_\text{ref}, m_\text{tied}) / d - 1)}

  (the last term 0 where it is undefined, as reward-bench's ``nan_to_num``);

* the leaderboard's overall score is the unweighted mean of the six subset scores.

``level="samples"`` (default): one row per prompt: ``system``, ``task`` (the subset), ``id``,
``correct`` (the prompt's credit above; for Ties the prompt's accuracy), ``margin`` (first
completion minus the best other), ``n_completions``, ``num_correct``. ``level="subsets"``: a
``scores`` table with one row per subset (``metric`` = ``accuracy``, or ``ties_score``) and the
``overall`` row. A summary file beside the scores (``eval-set/<model>.json``: subset ->
score) is checked against the recomputed scores.

Reference: Malik et al. (2025), RewardBench 2: Advancing Reward Model Evaluation,
arXiv:2506.01937; allenai/reward-bench ``rewardbench/utils.py`` (``reroll_and_score_dataset``,
``process_single_model``).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.io.readers._common import Provenance, as_number, check_runs, field_error, head_bytes, load_json, require

__all__ = ["read", "detect", "SUBSETS", "ties_score"]

SUBSETS = ("Factuality", "Precise IF", "Math", "Safety", "Focus", "Ties")
_COLUMNS = ("id", "subset", "scores", "num_correct")


def _looks_like(path: Path) -> bool:
    head = head_bytes(path, 1 << 16) if path.suffix == ".json" else b""
    return bool(head) and all(f'"{k}"'.encode() in head for k in ("num_correct", "subset", "scores")) and head.lstrip()[:1] == b"{"


def detect(path: Path) -> bool:
    """True for a RewardBench 2 scores file (column-wise ``scores``/``num_correct``/``subset``) or a folder of them."""
    if path.is_file():
        return _looks_like(path)
    if path.is_dir():
        return any(_looks_like(p) for p in sorted(path.glob("*.json"))[:20]) or \
            any(_looks_like(p) for p in sorted(path.glob("eval-set-scores/**/*.json"))[:20])
    return False


def _first_credit(scores: np.ndarray) -> float:
    """reward-bench's per-prompt result: 1/t when the first completion ties t-way for the maximum, else 0."""
    top = scores.max()
    return float(1.0 / np.sum(scores == top)) if scores[0] == top else 0.0


def _prompt_stats(scores: np.ndarray, num_correct: int) -> tuple[bool, float, float]:
    correct, wrong = scores[:num_correct], scores[num_correct:]
    spread = float(correct.max() - correct.min()) if num_correct > 1 else math.nan
    gap = float(correct.min() - wrong.max())
    return gap > 0, spread, gap


def ties_score(ids: list[str], scores: list[np.ndarray], num_correct: list[int]) -> tuple[float, list[float]]:
    """The Ties composite (see the module docstring) and each prompt's accuracy (0/1).

    Examples
    --------
    >>> s, acc = ties_score(["ref:1", "tied:1"], [np.array([2.0, 0.0]), np.array([2.0, 1.0, 0.5])], [1, 2])
    >>> round(s, 6), acc  # 0.3 + 0.3 + 0.2 * 0 + 0.2 * 0 + 0.01 * tanh(0.5 / 1.0 - 1)
    (0.595379, [1.0, 1.0])
    """
    stats: dict[str, dict[int, tuple[bool, float, float]]] = {"ref": {}, "tied": {}}
    accuracy = []
    for ident, values, k in zip(ids, scores, num_correct):
        kind, _, number = ident.partition(":")
        stat = _prompt_stats(values, k)
        stats[kind][int(number)] = stat
        accuracy.append(float(stat[0]))
    ref, tied = stats["ref"], stats["tied"]
    ref_acc = float(np.mean([s[0] for s in ref.values()])) if ref else 0.0
    tied_acc = float(np.mean([s[0] for s in tied.values()])) if tied else 0.0
    both = sorted(set(ref) & set(tied))
    spread = np.array([tied[k][1] for k in both], dtype=float)
    gap_tied = np.array([tied[k][2] for k in both], dtype=float)
    gap_ref = np.array([ref[k][2] for k in both], dtype=float)
    hard = np.minimum(gap_ref, gap_tied)
    with np.errstate(divide="ignore", invalid="ignore"):
        preferred = float(np.mean(gap_tied > spread)) if both else math.nan
        preferred_hard = float(np.mean(hard > spread)) if both else math.nan
        margins = np.nan_to_num(np.tanh(hard / spread - 1), nan=0.0)
    margin = float(np.mean(margins)) if both else math.nan
    total = 0.30 * tied_acc + 0.30 * ref_acc + 0.20 * preferred + 0.20 * preferred_hard + 0.01 * margin
    return float(total), accuracy


def read(path: Path, *, level: str = "samples", system: str | None = None) -> pd.DataFrame:
    """Read RewardBench 2 scores files under ``path`` (options as in the module docstring)."""
    if level not in ("samples", "subsets"):
        raise InputError(f"level={level!r}: expected 'samples' or 'subsets'")
    root = path.parent if path.is_file() else path
    files = [path] if path.is_file() else sorted(p for p in root.rglob("*.json") if not p.is_symlink() and _looks_like(p))
    check_runs(path, files, system, missing="no RewardBench 2 scores file (column-wise id/subset/scores/num_correct) "
               "found", unit="model", units="scores files")
    prov = Provenance("rewardbench2", root)
    frames: list[pd.DataFrame] = []
    seen: dict[Any, Any] = {}
    for file in files:
        obj = load_json(file, prov.read(file))
        if not isinstance(obj, dict):
            raise InputError(f"{file}: expected a JSON object of columns")
        name = system or obj.get("model")
        if not isinstance(name, str) or not name:
            raise field_error(file, "model", "missing; pass system=")
        if name in seen:
            raise field_error(file, "model", f"{name!r} also in {prov.relative(seen[name])}")
        seen[name] = file
        samples, subsets = _model_rows(obj, file, name)
        _check_summary(file, name, subsets, prov)
        frames.append(samples if level == "samples" else subsets)
    table = pd.concat(frames, ignore_index=True)
    return prov.stamp(table, [], level=level, n_systems=int(table["system"].nunique()))


def _model_rows(obj: dict, file: Path, system: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    columns = {k: require(obj, k, list, file) for k in _COLUMNS}
    n = len(columns["id"])
    if any(len(v) != n for v in columns.values()):
        raise field_error(file, "scores", f"columns of different lengths {({k: len(v) for k, v in columns.items()})}")
    reported = obj.get("results") if isinstance(obj.get("results"), list) and len(obj["results"]) == n else None
    rows: list[dict[str, Any]] = []
    by_subset: dict[Any, Any] = {}
    for i in range(n):
        where = f"[{i}]"
        ident, subset = columns["id"][i], columns["subset"][i]
        if not isinstance(subset, str):
            raise field_error(file, f"subset{where}", "expected a string")
        ident = str(ident)
        raw = columns["scores"][i]
        if not isinstance(raw, list) or len(raw) < 2:
            raise field_error(file, f"scores{where}", "expected a list of two or more completion scores")
        values = np.array([as_number(v[0] if isinstance(v, list) and v else v, file, f"scores{where}") for v in raw])
        if not np.isfinite(values).all():
            raise field_error(file, f"scores{where}", "scores must be finite")
        k = columns["num_correct"][i]
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k < len(values):
            raise field_error(file, f"num_correct{where}", f"expected 1 .. {len(values) - 1}, got {k!r}")
        by_subset.setdefault(subset, []).append((ident, values, k, len(rows)))
        credit = _first_credit(values) if subset.lower() != "ties" else math.nan
        if reported is not None and subset.lower() != "ties" and reported[i] is not None:
            if not math.isclose(float(reported[i]), credit, rel_tol=0, abs_tol=1e-12):
                raise field_error(file, f"results{where}", f"{reported[i]} but the scores give {credit}; "
                                                           "the files do not belong together")
        rows.append({"system": system, "task": subset, "id": ident, "correct": credit,
                     "margin": float(values[0] - values[1:].max()), "n_completions": len(values), "num_correct": k})
    scores_rows = []
    for subset, items in by_subset.items():
        if subset.lower() == "ties":
            for ident, *_ in items:
                kind, sep, number = ident.partition(":")
                if not sep or kind not in ("ref", "tied") or not number.lstrip("-").isdigit():
                    raise field_error(file, "id", f"Ties id {ident!r}: expected ref:<k> or tied:<k>")
            value, accuracy = ties_score([t[0] for t in items], [t[1] for t in items], [t[2] for t in items])
            for (_, _, _, row), acc in zip(items, accuracy):
                rows[row]["correct"] = acc
            metric = "ties_score"
        else:
            value, metric = float(np.mean([rows[t[3]]["correct"] for t in items])), "accuracy"
        scores_rows.append({"system": system, "task": subset, "metric": metric, "value": value, "n": len(items)})
    subsets = pd.DataFrame(scores_rows)
    overall = float(subsets["value"].mean())
    subsets = pd.concat([subsets, pd.DataFrame([{"system": system, "task": "overall", "metric": "score",
                                                 "value": overall, "n": n}])], ignore_index=True)
    return pd.DataFrame(rows), subsets


def _check_summary(file: Path, system: str, subsets: pd.DataFrame, prov: Provenance) -> None:
    """A summary (``eval-set/<model>.json``) beside ``eval-set-scores/`` must give the same subset scores."""
    if file.parent.name != "eval-set-scores" and "eval-set-scores" not in file.parts:
        return
    parts = list(file.parts)
    at = len(parts) - 1 - parts[::-1].index("eval-set-scores")
    summary = Path(*parts[:at], "eval-set", *parts[at + 1:])
    if not summary.is_file():
        return
    doc = load_json(summary, prov.read(summary))
    mine = dict(zip(subsets["task"], subsets["value"]))
    for subset, value in (doc.items() if isinstance(doc, dict) else []):
        if subset in mine and isinstance(value, (int, float)) and not isinstance(value, bool):
            if not math.isclose(float(value), mine[subset], rel_tol=0, abs_tol=1e-9):
                raise field_error(summary, subset, f"{value} but the scores file gives {mine[subset]}")
