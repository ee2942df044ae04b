"""Readers of the result files that evaluation harnesses write, one module per format.

:func:`read_results` turns a harness's files (or a folder of them) into a scorebench table
of a registered kind, with provenance (format, tool version, files read, SHA-256) in
``attrs``. Each format module defines ``detect(path) -> bool`` (a cheap look at names and
the first bytes) and ``read(path, **options) -> DataFrame``; one
:class:`~scorebench.io.formats.Format` record below plugs it into the format registry
(:mod:`scorebench.io.formats`), which detects, lists and reads it.

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

import os
from pathlib import Path
from typing import Any

import pandas as pd

from scorebench.io.formats import (
    Format,
    all_formats,
    check_options,
    detect_formats,
    format_error,
    get_format,
)
from scorebench.io.readers._common import check_confined, confine_reads, regular_files

__all__ = ["read_results", "FORMATS", "FORMAT_RECORDS", "harness_formats", "detect_results_format",
           "check_options", "confine_reads",
           "check_confined", "regular_files"]

_HOW = "format= (CLI: --from)"


def _harness(name: str, module: str, files: str, yields: str, doc: str, *, writer: str | None = None,
             auto: bool = True) -> Format:
    return Format(name=name, family="harness", files=files, yields=yields, doc=doc,
                           reader=f"scorebench.io.readers.{module}:read",
                           detector=f"scorebench.io.readers.{module}:detect", writer=writer, content_first=True,
                           auto=auto)


#: The harness formats (registered by :func:`scorebench.io.formats.load_formats`).
FORMAT_RECORDS = (
    _harness("mteb", "mteb", "``results/<org>__<model>/<revision>/*.json``", "scores (system, task, task_type, metric, "
             "value)", "MTEB result files"),
    # before lm_eval: lighteval results files also hold "versions"
    _harness("lighteval", "lighteval", "``results/<model>/results_<date>.json`` + ``details/<model>/<date>/*.parquet``",
             "samples (id = doc.id, one column per metric) or results scores (value, stderr) or multiclass "
             "(softmax of per-choice logprobs)", "lighteval results and per-example details"),
    _harness("lm_eval", "lm_eval", "``results_<ts>.json`` + ``samples_<task>_<ts>.jsonl``", "samples (system, task, "
             "id = doc_hash, metric,filter...)", "lm-evaluation-harness results and per-sample logs"),
    _harness("arena", "arena", "FastChat ``clean_battle_<date>.json`` or ``*.battle.jsonl``", "battles (a, b, winner, "
             "style covariates)", "Chatbot Arena battles"),
    _harness("rewardbench", "rewardbench", "per-prompt outputs (+ summary)", "samples (task = subset, correct, margin) "
             "or section scores", "RewardBench outputs"),
    _harness("helm", "helm", "run folders: ``run_spec.json``, ``per_instance_stats.json``, ``stats.json``",
             "samples (id = instance_id, one column per stat)", "HELM run folders"),
    _harness("openood", "openood", "``scores/<postprocessor>.pkl`` (restricted unpickler: NumPy arrays only)",
             "ood (score = -conf, is_ood), one task per OOD dataset", "OpenOOD score pickles"),
    _harness("eee", "eee", "Every Eval Ever v0.3.0 aggregate ``.json`` files (a folder of them) or "
             "``{uuid}_samples.jsonl``", "scores (system, task, metric, value, ci_low, ci_high, n) or samples "
             "(id = sample_hash)", "Every Eval Ever records (read, and written by scorebench export)",
             writer="scorebench.io.eee:write_eee"),
    _harness("hf", "hf", "model cards (``model-index`` front matter) and ``.eval_results/*.yaml``", "scores (system, "
             "task, metric, value; interval from notes)", "Hugging Face Hub eval results (read, and written by "
             "scorebench export)", writer="scorebench.io.hf:write_hf_eval_results"),
    _harness("lm_eval_mc", "lm_eval_mc", "lm-eval ``multiple_choice`` samples (per-choice log-likelihoods)",
             "multiclass (y, p_0..p_K)", "lm-eval multiple-choice samples as class probabilities", auto=False),
    _harness("inspect", "inspect_logs", "Inspect AI ``.eval`` (zip, streamed) and ``.json`` logs, or a folder of them",
             "samples (id, epoch, one column per scorer)", "Inspect AI evaluation logs"),
    _harness("rewardbench2", "rewardbench2", "RewardBench 2 ``eval-set-scores`` files", "samples (credit per prompt) "
             "or subset scores with the Ties composite", "RewardBench 2 scores files"),
)


def harness_formats() -> tuple[str, ...]:
    """The names of the registered harness formats (the CLI's ``--from`` choices)."""
    return tuple(f.name for f in all_formats(family="harness", role="read"))


#: The harness formats registered here, in order (:func:`harness_formats` also has later ones).
FORMATS = harness_formats()


def detect_results_format(path: str | os.PathLike) -> str | None:
    """The result-file format of ``path`` (a file or folder), or None when none matches.

    Several matching formats are an error (:func:`scorebench.io.formats.format_error`).
    """
    names = [f.name for f in all_formats(family="harness", role="read", auto=True)]
    found = detect_formats(path, names)
    if len(found) > 1:
        raise format_error(path, found, names, what="result file or folder", how=_HOW)
    return found[0] if found else None


def read_results(path: str | os.PathLike, format: str = "auto", **options: Any) -> pd.DataFrame:
    """Read a harness's result file or folder into a scorebench table.

    Parameters
    ----------
    path : path-like
        A result file or a folder of them.
    format : str
        ``"auto"`` (detected from names and content) or one of :func:`harness_formats`.
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
    names = harness_formats()
    if format == "auto":
        found = detect_results_format(path)
        if found is None:
            raise format_error(path, [], [f for f in names if get_format(f).auto], what="result file or folder",
                               how=_HOW)
        format = found
    return get_format(format, among=names, what="result format").read(path, **options)
