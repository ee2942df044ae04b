r"""lm-evaluation-harness multiple-choice samples -> a ``multiclass`` table (calibration from a run).

For a ``multiple_choice`` task, ``lm_eval --log_samples`` writes, per document, the
log-likelihood :math:`\ell_k` of each answer choice: ``filtered_resps`` is
``[[ll_k, is_greedy_k], ...]`` (``resps`` the same, one list deeper), the numbers often as
text; ``arguments.gen_args_k.arg_1`` is the continuation scored (the target delimiter, ``" "``
by default, then the choice) and ``target`` the gold choice (its index, or its text). The harness
scores ``acc`` as :math:`\arg\max_k \ell_k = \text{gold}` and ``acc_norm`` as
:math:`\arg\max_k \ell_k / L_k = \text{gold}` with :math:`L_k` the length of choice *k* in
characters (``acc_bytes``: in UTF-8 bytes), ties to the first choice.

This reader turns each document into a probability vector over its choices with the matching
softmax, so proper scoring rules and calibration error apply to a harness run directly:

.. math::

    p_k = \frac{\exp(z_k)}{\sum_j \exp(z_j)}, \qquad
    z_k = \ell_k \ (\text{convention}=\texttt{acc}), \quad \ell_k / L_k \ (\texttt{acc\_norm}),
    \quad \ell_k / B_k \ (\texttt{acc\_bytes}).

The argmax of :math:`p` is the harness's prediction under that convention, so
``argmax_accuracy`` on the table equals the run's ``acc`` / ``acc_norm`` (checked against every
sample's own value: a document whose recomputed correctness differs is an error). The table:
``system``, ``task``, ``id`` (``doc_hash``, so two runs pair on the same documents), ``doc_id``,
``y`` (the gold choice index), ``p_0`` ... ``p_{K-1}`` (``K`` the largest number of choices;
missing choices of shorter documents get probability 0) and ``n_choices``. Renormalising
length-normalised scores is a convention (the harness reports no probabilities): it gives
the distribution whose mode is ``acc_norm``'s choice. Then::

    scorebench evaluate RUNS --from lm_eval_mc -m ece_top_label -m brier_score_multiclass \
        -m log_score_multiclass

This format is named explicitly (``--from lm_eval_mc``): auto-detection reads the same folders
as ``lm_eval`` per-sample tables.

Reference: Gao et al., *A framework for few-shot language model evaluation* (lm-evaluation-harness),
``api/task.py`` ``ConfigurableTask.process_results`` (multiple_choice).
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.io.readers._common import Provenance, check_runs, field_error, jsonl_records, load_json, require
from scorebench.io.readers.lm_eval import system_name

__all__ = ["read", "detect", "CONVENTIONS", "choice_probabilities"]

CONVENTIONS = ("acc", "acc_norm", "acc_bytes")
_RESULTS = re.compile(r"^results_(.+)\.json$")


def detect(path: Path) -> bool:
    """Never: the files are lm-eval's; name this format explicitly (``--from lm_eval_mc``)."""
    return False


def choice_probabilities(loglik: np.ndarray, lengths: np.ndarray | None = None) -> np.ndarray:
    r"""Softmax of per-choice log-likelihoods, each divided by its length when ``lengths`` is given.

    Examples
    --------
    >>> p = choice_probabilities(np.log([0.2, 0.6]))
    >>> [round(float(v), 12) for v in p]
    [0.25, 0.75]
    """
    z = np.asarray(loglik, dtype=np.float64)
    if lengths is not None:
        z = z / np.asarray(lengths, dtype=np.float64)
    top = np.max(z)
    if not np.isfinite(top):
        raise InputError("every choice has log-likelihood -inf (or NaN); no probabilities")
    e = np.exp(z - top)
    return e / e.sum()


def read(path: Path, *, convention: str = "acc", system: str | None = None,
         tasks: str | list[str] | None = None, resps: str = "filtered") -> pd.DataFrame:
    """Read the multiple-choice tasks of lm-eval runs under ``path`` into a ``multiclass`` table.

    Parameters
    ----------
    convention : {"acc", "acc_norm", "acc_bytes"}
        Which of the harness's predictions the probabilities follow (see the module docstring).
    system : str, optional
        Name of the system when ``path`` holds one run (default: the results file's
        ``model_name``); ``"folder"`` names each run by its folder.
    tasks : str or list of str, optional
        Only these tasks (default: every task whose config says ``output_type: multiple_choice``).
    resps : {"filtered", "raw"}
        Read ``filtered_resps`` (what the metrics used) or ``resps``.
    """
    if convention not in CONVENTIONS:
        raise InputError(f"convention={convention!r}: expected one of {', '.join(CONVENTIONS)}")
    if resps not in ("filtered", "raw"):
        raise InputError(f"resps={resps!r}: expected 'filtered' or 'raw'")
    wanted = {tasks} if isinstance(tasks, str) else (set(tasks) if tasks is not None else None)
    root = path.parent if path.is_file() else path
    runs = [path] if path.is_file() and _RESULTS.match(path.name) else \
        sorted(p for p in root.rglob("results_*.json") if _RESULTS.match(p.name) and p.is_file() and not p.is_symlink())
    check_runs(path, runs, system, missing="no lm-evaluation-harness results_<timestamp>.json found", unit="run",
               units="results files", by="folder")
    prov = Provenance("lm_eval_mc", root)
    frames: list[pd.DataFrame] = []
    versions: set[str] = set()
    seen: dict[Any, Any] = {}
    for run in runs:
        obj = load_json(run, prov.read(run))
        configs = require(obj, "configs", dict, run)
        versions.add(str(obj.get("lm_eval_version", "unknown")))
        name = system_name(obj, run, root, system)
        stamp = cast(re.Match[str], _RESULTS.match(run.name)).group(1)  # runs are results_<stamp>.json
        for task, config in sorted(configs.items()):
            if not isinstance(config, dict) or config.get("output_type") != "multiple_choice":
                continue
            if wanted is not None and task not in wanted:
                continue
            if (name, task) in seen:
                raise field_error(run, "model_name", f"duplicate (model, task) ({name!r}, {task!r}) also in "
                                                     f"{seen[name, task]}; pass system='folder'")
            seen[name, task] = run
            samples = run.parent / f"samples_{task}_{stamp}.jsonl"
            if not samples.is_file():
                raise InputError(f"{run}: no per-sample file {samples.name} for task {task!r}; run lm_eval with "
                                 "--log_samples")
            delimiter = config.get("target_delimiter", " ")
            frames.append(_task_rows(samples, prov, name, task, convention, resps,
                                     delimiter if isinstance(delimiter, str) else " "))
    if not frames:
        raise InputError(f"{path}: no multiple_choice task{' among ' + str(sorted(wanted)) if wanted else ''} "
                         "in the results files' configs")
    width = max(int(f["n_choices"].max()) for f in frames)
    cols = [f"p_{k}" for k in range(width)]
    table = pd.concat(frames, ignore_index=True)
    table[cols] = table.reindex(columns=cols).fillna(0.0)
    table = table[["system", "task", "id", "doc_id", "y", *cols, "n_choices"]]
    return prov.stamp(table, versions, convention=convention, resps=resps, kind="multiclass",
                      n_systems=int(table["system"].nunique()))


def _number(value: Any, path: Path, field: str) -> float:
    if isinstance(value, bool):
        raise field_error(path, field, "expected a log-likelihood, got true/false")
    try:
        out = float(value)
    except (TypeError, ValueError, OverflowError):
        raise field_error(path, field, f"expected a log-likelihood, got {str(value)[:40]!r}") from None
    if math.isnan(out) or out == math.inf:
        raise field_error(path, field, f"log-likelihood {value!r} is not a number <= 0 or -inf")
    return out


def _logliks(row: dict, path: Path, where: str, resps: str) -> list[float]:
    key = "filtered_resps" if resps == "filtered" else "resps"
    items = require(row, key, list, path, f"{where}.{key}")
    out = []
    for k, item in enumerate(items):
        if resps == "raw":  # one list deeper: [[ll, greedy]] per choice
            if not isinstance(item, list) or len(item) != 1:
                raise field_error(path, f"{where}.resps[{k}]", "expected [[log-likelihood, is_greedy]]")
            item = item[0]
        if not isinstance(item, list) or len(item) != 2:
            raise field_error(path, f"{where}.{key}[{k}]", "expected [log-likelihood, is_greedy] "
                                                          "(a multiple_choice task's response)")
        out.append(_number(item[0], path, f"{where}.{key}[{k}][0]"))
    if len(out) < 2:
        raise field_error(path, f"{where}.{key}", f"{len(out)} choice(s); a multiple-choice document needs two or more")
    return out


def _choices(row: dict, path: Path, where: str, n: int, delimiter: str) -> list[str]:
    args = require(row, "arguments", dict, path, f"{where}.arguments")
    out = []
    for k in range(n):
        arg = args.get(f"gen_args_{k}")
        if not isinstance(arg, dict) or not isinstance(arg.get("arg_1"), str):
            raise field_error(path, f"{where}.arguments.gen_args_{k}.arg_1", "missing (the continuation of choice "
                                                                            f"{k}); {n} choices were scored")
        text = arg["arg_1"]
        out.append(text[len(delimiter):] if delimiter and text.startswith(delimiter) else text)
    return out


def _gold(row: dict, path: Path, where: str, choices: list[str]) -> int:
    target = row.get("target")
    if isinstance(target, bool) or target is None:
        raise field_error(path, f"{where}.target", f"expected the gold choice's index or text, got {target!r}")
    if isinstance(target, list):
        raise field_error(path, f"{where}.target", "several gold choices; this reader takes one per document")
    texts = [c.strip() for c in choices]
    if isinstance(target, (int, float)) or (isinstance(target, str) and re.fullmatch(r"\s*\d+\s*", target)):
        index = int(float(target))  # the log writes an integer target as text ("0")
        if 0 <= index < len(choices):
            return index
        if isinstance(target, str) and target.strip() in texts:
            return texts.index(target.strip())
        raise field_error(path, f"{where}.target", f"index {index} outside the {len(choices)} choices "
                                                   "(and not a choice's text)")
    if isinstance(target, str) and target.strip() in texts:
        return texts.index(target.strip())
    raise field_error(path, f"{where}.target", f"{str(target)[:40]!r} is neither a choice index nor a choice")


def _task_rows(path: Path, prov: Provenance, system: str, task: str, convention: str, resps: str,
               delimiter: str) -> pd.DataFrame:
    rows: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for number, row in jsonl_records(path, prov.read(path)):
        where = f"line {number}"
        if not isinstance(row, dict):
            raise field_error(path, where, f"expected an object, got {type(row).__name__}")
        doc_hash = require(row, "doc_hash", str, path, f"{where}.doc_hash")
        if doc_hash in seen:
            raise field_error(path, f"{where}.doc_hash", f"document repeated (first at line {seen[doc_hash]}); "
                                                         "a multiple-choice task has one filter")
        seen[doc_hash] = number
        ll = np.array(_logliks(row, path, where, resps))
        choices = _choices(row, path, where, len(ll), delimiter)
        gold = _gold(row, path, where, choices)
        lengths = None
        if convention != "acc":
            lengths = np.array([len(c.encode("utf-8")) if convention == "acc_bytes" else len(c) for c in choices],
                               dtype=np.float64)
            if (lengths == 0).any():
                raise field_error(path, f"{where}.arguments", "an empty choice; its length normalisation is undefined")
        try:
            p = choice_probabilities(ll, lengths)
        except InputError as exc:
            raise field_error(path, where, str(exc)) from None
        reported = row.get(convention)
        if isinstance(reported, (int, float)) and not isinstance(reported, bool):
            z = ll if lengths is None else ll / lengths
            if float(int(np.argmax(z)) == gold) != float(reported):
                raise field_error(path, f"{where}.{convention}", f"the harness scored {reported} but the argmax of "
                                                                 "the log-likelihoods disagrees; not this convention's file")
        entry = {"system": system, "task": task, "id": doc_hash, "doc_id": str(row.get("doc_id")), "y": str(gold),
                 "n_choices": len(ll)}
        entry.update({f"p_{k}": float(v) for k, v in enumerate(p)})
        rows.append(entry)
    if not rows:
        raise InputError(f"{path}: no samples")
    return pd.DataFrame(rows)
