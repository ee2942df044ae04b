"""Readers of the result files that evaluation harnesses write, one module per format.

:func:`read_results` turns a harness's files (or a folder of them) into a scorebench table
of a registered kind, with provenance (format, tool version, files read, SHA-256) in
``attrs``. Each format module defines ``detect(path) -> bool`` (a cheap look at names and
the first bytes) and ``read(path, **options) -> DataFrame``; add a line to ``_MODULES`` to
plug a new one in.

================  ==================================================  ============================================
format            input                                               table
================  ==================================================  ============================================
``mteb``          ``results/<org>__<model>/<revision>/*.json``        ``scores`` (system, task, task_type, metric,
                                                                      value)
``lm_eval``       ``results_<ts>.json`` +                             ``samples`` (system, task, id = doc_hash,
                  ``samples_<task>_<ts>.jsonl``                       ``metric,filter``...)
                  (lm-evaluation-harness)
``arena``         FastChat ``clean_battle_<date>.json`` or            ``battles`` (a, b, winner, style covariates)
                  ``*.battle.jsonl``
``rewardbench``   per-prompt outputs (+ summary)                      ``samples`` (task = subset, correct, margin)
                                                                      or section ``scores``
``helm``          run folders: ``run_spec.json``,                     ``samples`` (id = instance_id, one column
                  ``per_instance_stats.json``, ``stats.json``         per stat)
``openood``       ``scores/<postprocessor>.pkl`` (restricted          ``ood`` (score = -conf, is_ood), one task
                  unpickler: NumPy arrays only)                       per OOD dataset
``eee``           Every Eval Ever v0.3.0 aggregate ``.json`` files    ``scores`` (system, task, metric, value,
                  (a folder of them) or ``{uuid}_samples.jsonl``      ci_low, ci_high, n) or ``samples`` (id =
                                                                      sample_hash)
``hf``            model cards (``model-index`` front matter) and      ``scores`` (system, task, metric, value;
                  ``.eval_results/*.yaml`` (Hugging Face Hub)         interval from ``notes``)
``lm_eval_mc``    lm-eval ``multiple_choice`` samples (per-choice     ``multiclass`` (y, p_0..p_K: softmax under
                  log-likelihoods); named, never auto-detected        the acc/acc_norm convention)
``inspect``       Inspect AI ``.eval`` (zip, streamed) and ``.json``  ``samples`` (id, epoch, one column per
                  logs, or a folder of them                           scorer, metadata fields as columns)
``rewardbench2``  RewardBench 2 ``eval-set-scores`` files             ``samples`` (credit per prompt) or subset
                  (column-wise scores of every completion)            scores with the Ties composite
``lighteval``     ``results/<model>/results_<date>.json`` +           ``samples`` (id = ``doc.id``, one column per
                  ``details/<model>/<date>/details_<task>_<date>``    metric), ``scores`` (with stderr) or
                  ``.parquet`` (lighteval)                            ``multiclass`` (softmax of per-choice logprobs)
================  ==================================================  ============================================
"""

from __future__ import annotations

import inspect
import os
from importlib import import_module
from pathlib import Path
from typing import Any

import pandas as pd

from scorebench.core.errors import InputError
from scorebench.core.validation import parse_bool
from scorebench.io.readers._common import check_confined, confine_reads, regular_files

__all__ = ["read_results", "FORMATS", "detect_results_format", "check_options", "confine_reads", "check_confined",
           "regular_files"]

_MODULES = {
    "mteb": "scorebench.io.readers.mteb",
    "lighteval": "scorebench.io.readers.lighteval",  # before lm_eval: its results files also hold "versions"
    "lm_eval": "scorebench.io.readers.lm_eval",
    "arena": "scorebench.io.readers.arena",
    "rewardbench": "scorebench.io.readers.rewardbench",
    "helm": "scorebench.io.readers.helm",
    "openood": "scorebench.io.readers.openood",
    "eee": "scorebench.io.readers.eee",
    "hf": "scorebench.io.readers.hf",
    "lm_eval_mc": "scorebench.io.readers.lm_eval_mc",
    "inspect": "scorebench.io.readers.inspect_logs",
    "rewardbench2": "scorebench.io.readers.rewardbench2",
}
FORMATS = tuple(_MODULES)


def _module(fmt: str):
    return import_module(_MODULES[fmt])


def detect_results_format(path: str | os.PathLike) -> str | None:
    """The result-file format of ``path`` (a file or folder), or None when none matches."""
    path = Path(path)
    for fmt in FORMATS:
        if _module(fmt).detect(path):
            return fmt
    return None


def read_results(path: str | os.PathLike, format: str = "auto", **options: Any) -> pd.DataFrame:
    """Read a harness's result file or folder into a scorebench table.

    Parameters
    ----------
    path : path-like
        A result file or a folder of them.
    format : str
        ``"auto"`` (detected from names and content) or one of :data:`FORMATS`.
    **options
        Format options (e.g. ``benchmark="MTEB(eng, v2)"`` for MTEB); see each module.

    Returns
    -------
    DataFrame
        A table of the kind the format maps to, with provenance in ``attrs``.

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> root = pathlib.Path(tempfile.mkdtemp()) / "org__model" / "rev"
    >>> root.mkdir(parents=True)
    >>> entry = {"hf_subset": "default", "languages": ["eng-Latn"], "main_score": 0.5}
    >>> _ = (root / "BIOSSES.json").write_text(json.dumps({"task_name": "BIOSSES",
    ...     "mteb_version": "1.18.0", "scores": {"test": [entry]}}))
    >>> table = read_results(root.parent.parent)
    >>> table[["system", "task", "value"]].values.tolist(), table.attrs["source_format"]
    ([['org/model', 'BIOSSES', 0.5]], 'mteb')
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(2, "no such file or folder", str(path))
    if format == "auto":
        found = detect_results_format(path)
        if found is None:
            raise InputError(f"{path}: not a result file or folder of a known harness; "
                             f"name the format ({', '.join(FORMATS)})")
        format = found
    elif format not in _MODULES:
        raise InputError(f"unknown result format {format!r}; expected one of {', '.join(FORMATS)} or 'auto'")
    reader = _module(format).read
    return reader(path, **check_options(format, reader, options))


def check_options(fmt: str, reader: Any, options: dict[str, Any]) -> dict[str, Any]:
    """The reader options checked against ``reader``'s signature: the one gate for API, CLI and specs.

    Unknown names are refused (listing the accepted ones); an option annotated ``bool`` is
    parsed strictly by :func:`~scorebench.core.validation.parse_bool` (``"no"`` is false, ``"maybe"``
    an error); one annotated ``str`` must be text (a list of texts where the annotation allows
    one). Command-line values arrive as text and are converted here, so ``language=1`` is
    the language ``"1"``.
    """
    params = {name: p for name, p in inspect.signature(reader).parameters.items() if p.kind is p.KEYWORD_ONLY}
    out = {}
    for name, value in options.items():
        if name not in params:
            raise InputError(f"{fmt} reader: unknown option {name!r}; accepted: {', '.join(sorted(params)) or 'none'}")
        out[name] = _coerce(fmt, name, value, str(params[name].annotation))
    return out


def _coerce(fmt: str, name: str, value: Any, annotation: str) -> Any:
    kinds = {part.strip() for part in annotation.split("|")}
    if value is None and "None" in kinds:
        return None
    if "bool" in kinds:
        return parse_bool(value, f"{fmt} reader option {name!r}")
    if "str" in kinds:
        if isinstance(value, str):
            return value
        if "list[str]" in kinds and isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            return list(value)
        expected = "text or a list of texts" if "list[str]" in kinds else "text"
        raise InputError(f"{fmt} reader option {name!r}: expected {expected}, got {value!r}")
    return value
