"""Readers of the result files that evaluation harnesses write, one module per format.

:func:`read_results` turns a harness's files (or a folder of them) into a scorebench table
of a registered kind, with provenance (format, tool version, files read, SHA-256) in
``attrs``. Each format module defines ``detect(path) -> bool`` (a cheap look at names and
the first bytes) and ``read(path, **options) -> DataFrame``; add a line to ``_MODULES`` to
plug a new one in.

===============  ===============================================  ====================================
format           input                                            table
===============  ===============================================  ====================================
``mteb``         ``results/<org>__<model>/<revision>/*.json``     ``scores`` (system, task,
                                                                  task_type, metric, value)
``lm_eval``      ``results_<ts>.json`` + ``samples_<task>_<ts>``  ``samples`` (system, task, id =
                 ``.jsonl`` (lm-evaluation-harness)               doc_hash, ``metric,filter``...)
``arena``        FastChat ``clean_battle_<date>.json``            ``battles`` (a, b, winner, style
                                                                  covariates)
``rewardbench``  per-prompt outputs (+ summary)                   ``samples`` (task = subset, correct,
                                                                  margin) or section ``scores``
``helm``         run folders: ``run_spec.json``,                  ``samples`` (id = instance_id, one
                 ``per_instance_stats.json``, ``stats.json``      column per stat)
``openood``      ``scores/<postprocessor>.pkl`` (restricted       ``ood`` (score = -conf, is_ood),
                 unpickler: NumPy arrays only)                    one task per OOD dataset
===============  ===============================================  ====================================
"""

from __future__ import annotations

import os
from importlib import import_module
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import InputError

__all__ = ["read_results", "FORMATS", "detect_results_format"]

_MODULES = {
    "mteb": "scorebench.readers.mteb",
    "lm_eval": "scorebench.readers.lm_eval",
    "arena": "scorebench.readers.arena",
    "rewardbench": "scorebench.readers.rewardbench",
    "helm": "scorebench.readers.helm",
    "openood": "scorebench.readers.openood",
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
    return _module(format).read(path, **options)
