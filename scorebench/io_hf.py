r"""Write scores as Hugging Face Hub evaluation results (``.eval_results/*.yaml`` of a model repo).

The Hub's *Evaluation Results* feature reads YAML files in a model repository's
``.eval_results/`` folder: a list of entries

.. code-block:: yaml

    - dataset:
        id: cais/hle          # Hub dataset id of the benchmark (required)
        task_id: default      # the task, as named in the benchmark's eval.yaml
        revision: <hash>      # optional dataset revision
      value: 20.9             # required
      date: "2025-01-15"      # optional ISO-8601 date
      source:                 # optional attribution; url required when given
        url: https://...
        name: Eval traces
      notes: "..."            # optional free text about the setup

The format has no uncertainty fields, so :func:`to_hf_eval_results` puts the interval in
``notes``: ``"accuracy; 95% CI [0.61, 0.86] (wilson score interval); n = 40; scorebench
0.1.0, seed 0"`` — :mod:`scorebench.io.readers.hf` reads that text back. One file per (system,
dataset), under ``<out>/<system>/.eval_results/<dataset>.yaml`` (``<system>`` is the model id,
``org/name`` as two folders: the layout of a clone of each model repo).

The Hub's value is one number per (dataset, task): a table with several metrics per task
must be filtered to one (``metric=``). Reference: Hugging Face Hub documentation,
"Evaluation Results" (https://huggingface.co/docs/hub/eval-results).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from scorebench._version import __version__
from scorebench.core.errors import InputError
from scorebench.io.tables import atomic_write, text_writer
from scorebench.io.eee import interval_method_names

__all__ = ["to_hf_eval_results", "write_hf_eval_results", "interval_note"]

_DATASET_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?$")
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def interval_note(metric: str, low: float | None, high: float | None, level: float | None, method: str | None,
                  n: float | None, provenance: str) -> str:
    """The ``notes`` text carrying a value's interval (the Hub format has no field for it).

    Examples
    --------
    >>> interval_note("accuracy", 0.61, 0.86, 0.95, "wilson score interval", 40, "scorebench 0.1.0, seed 0")
    'accuracy; 95% CI [0.61, 0.86] (wilson score interval); n = 40; scorebench 0.1.0, seed 0'
    """
    parts = [metric]
    if low is not None and high is not None:
        label = f"{_percent(level)}% CI" if level is not None else "CI"
        parts.append(f"{label} [{low!r}, {high!r}]" + (f" ({method})" if method else ""))
    if n is not None:
        parts.append(f"n = {int(n)}")
    if provenance:
        parts.append(provenance)
    return "; ".join(parts)


def _percent(level: float) -> str:
    return f"{100 * level:.10g}"


def _finite(value: Any) -> float | None:
    try:
        out = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return out if math.isfinite(out) else None


def _dataset_of(task: str, dataset: str | Mapping[str, str] | None) -> tuple[str, str]:
    """(dataset id, task_id) of a task."""
    if isinstance(dataset, Mapping):
        if task not in dataset:
            raise InputError(f"task {task!r}: no Hub dataset id given for it (dataset= names {sorted(dataset)})")
        ident, task_id = dataset[task], task
    elif isinstance(dataset, str):
        ident, task_id = dataset, task
    else:
        ident, task_id = task, "default"
    if not isinstance(ident, str) or not _DATASET_ID.match(ident):
        raise InputError(f"task {task!r}: {ident!r} is not a Hub dataset id (org/name); pass dataset= "
                         "(a dataset id, or a mapping task -> dataset id)")
    return ident, task_id


def to_hf_eval_results(scores: pd.DataFrame, *, dataset: str | Mapping[str, str] | None = None,
                       metric: str | None = None, revision: str | None = None, date: str | None = None,
                       source_url: str | None = None, source_name: str | None = None, scale: float = 1.0,
                       ) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """Hub evaluation-result entries of a scores table, keyed by (system, dataset id).

    Parameters
    ----------
    scores : DataFrame
        ``system``, ``metric``, ``value`` and optionally ``task``, ``ci_low``, ``ci_high``,
        ``n`` (the output of :func:`scorebench.evaluate` or of a result reader).
    dataset : str or mapping, optional
        The Hub dataset id of every task (``task_id`` = the task), or a mapping task ->
        dataset id; default: each task is itself a dataset id (``task_id: default``).
    metric : str, optional
        The metric to publish, when the table has several per task.
    revision, date : str, optional
        ``dataset.revision`` and the ISO-8601 ``date`` of the results.
    source_url, source_name : str, optional
        ``source`` attribution (a URL is required by the Hub when a source is given).
    scale : float
        Multiplies values and interval bounds (100 for percentages).

    Examples
    --------
    >>> t = pd.DataFrame({"system": ["org/m"], "task": ["gpqa"], "metric": ["accuracy"], "value": [0.5],
    ...                   "ci_low": [0.4], "ci_high": [0.6], "n": [100]})
    >>> t.attrs.update(ci=0.95, interval="wilson score interval", seed=0)
    >>> entries = to_hf_eval_results(t, dataset="Idavidrein/gpqa", scale=100)
    >>> entries[("org/m", "Idavidrein/gpqa")][0]["value"], entries[("org/m", "Idavidrein/gpqa")][0]["notes"]
    (50.0, 'accuracy; 95% CI [40.0, 60.0] (wilson score interval); n = 100; scorebench 0.1.0, seed 0')
    """
    if not isinstance(scores, pd.DataFrame):
        raise InputError(f"expected a scores table (pandas DataFrame), got {type(scores).__name__}")
    attrs = dict(scores.attrs)
    scores = scores.copy(deep=False)
    scores.attrs = {}
    missing = [c for c in ("system", "metric", "value") if c not in scores.columns]
    if missing:
        raise InputError(f"Hub eval results need a scores table with columns system, metric, value (and "
                         f"optionally task, ci_low, ci_high, n); missing {missing}")
    if metric is not None:
        scores = scores[scores["metric"].astype(str) == metric]
        if scores.empty:
            raise InputError(f"metric {metric!r}: no rows of that metric in the table")
    if scores.empty:
        raise InputError("the scores table has no rows; nothing to export")
    if source_name is not None and source_url is None:
        raise InputError("source_name needs source_url (the Hub requires a URL for a source)")
    scale = _finite(scale)
    if scale is None or scale <= 0:
        raise InputError("scale must be a positive finite number")
    has_task = "task" in scores.columns
    task = scores["task"].astype(str) if has_task else scores["metric"].astype(str)
    counts = scores.assign(_task=task).groupby(["system", "_task"])["metric"].nunique()
    several = counts[counts > 1]
    if len(several):
        system, name = several.index[0]
        metrics = sorted(scores.loc[(scores["system"] == system) & (task == name), "metric"].astype(str))
        raise InputError(f"system {system!r}, task {name!r} has several metrics {metrics}; the Hub keeps one value "
                         "per (dataset, task): choose one with metric=")
    methods = interval_method_names(attrs, [str(m) for m in pd.unique(scores["metric"].astype(str))])
    level = _finite(attrs.get("ci"))
    seed = attrs.get("seed")
    provenance = f"scorebench {__version__}" + (f", seed {seed}" if seed is not None else "")
    out: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row, name in zip(scores.to_dict("records"), task):
        value = _finite(row["value"])
        if value is None:
            raise InputError(f"system {row['system']!r}, task {name!r}: value {row['value']!r} is not a finite "
                             "number; the Hub format has no missing values")
        ident, task_id = _dataset_of(name, dataset)
        low, high = _finite(row.get("ci_low")), _finite(row.get("ci_high"))
        if low is not None and high is not None:
            low, high = low * scale, high * scale
        else:
            low = high = None
        entry: dict[str, Any] = {"dataset": {"id": ident, "task_id": task_id}}
        if revision is not None:
            entry["dataset"]["revision"] = str(revision)
        entry["value"] = value * scale
        if date is not None:
            entry["date"] = str(date)
        if source_url is not None:
            entry["source"] = {"url": source_url, **({"name": source_name} if source_name else {})}
        n = _finite(row.get("n"))
        entry["notes"] = interval_note(str(row["metric"]), low, high, level, methods.get(str(row["metric"])),
                                       n if n is not None and float(n).is_integer() else None, provenance)
        out.setdefault((str(row["system"]), ident), []).append(entry)
    return out


def _safe(part: str) -> str:
    return (_SAFE.sub("_", part).strip("._") or "unnamed")[:120]


def write_hf_eval_results(scores: pd.DataFrame, out_dir: str | os.PathLike, **options: Any) -> list[Path]:
    """Write ``<out_dir>/<system>/.eval_results/<dataset>.yaml`` files (atomically); return the paths.

    ``options`` go to :func:`to_hf_eval_results`. A system ``org/name`` becomes the folders
    ``org/name`` (each part made safe for a file name).

    Examples
    --------
    >>> import tempfile
    >>> t = pd.DataFrame({"system": ["org/m"], "task": ["cais/hle"], "metric": ["accuracy"], "value": [0.2]})
    >>> [p.parts[-3:] for p in write_hf_eval_results(t, tempfile.mkdtemp())]
    [('m', '.eval_results', 'cais__hle.yaml')]
    """
    import yaml

    entries = to_hf_eval_results(scores, **options)
    root = Path(out_dir)
    if root.exists() and not root.is_dir():
        raise InputError(f"{root}: exists and is not a folder")
    files = {}
    for (system, ident), items in sorted(entries.items()):
        folder = root.joinpath(*[_safe(p) for p in system.split("/") if p]) / ".eval_results"
        path = folder / f"{_safe(ident.replace('/', '__'))}.yaml"
        text = yaml.safe_dump(items, sort_keys=False, allow_unicode=True, default_flow_style=False)
        files[path] = text_writer(text)
    for path in files:
        path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(files)
    return list(files)

