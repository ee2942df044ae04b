r"""lighteval output -> a per-sample ``samples`` table, a ``scores`` table, or a ``multiclass`` table.

A lighteval run (``lighteval ... --output-dir OUT --save-details``) writes, through its
``EvaluationTracker.save``:

* ``OUT/results/<model_name>/results_<date_id>.json``: ``config_general`` (``model_name``,
  ``lighteval_sha``, ...), ``results`` (task -> metric -> value, and ``<metric>_stderr``; the
  task ``all`` averages every task, ``<suite>:_average|<k>`` groups sub-tasks), ``versions``,
  ``config_tasks`` and ``summary_tasks`` (per task ``hashes.hash_examples``, the xxhash of
  the sorted per-example query hashes);
* ``OUT/details/<model_name>/<date_id>/details_<task>_<date_id>.parquet``: one row per
  example with the struct columns ``doc`` (``query``, ``choices``, ``gold_index``, ``id``, ...),
  ``model_response`` (``text``, ``logprobs`` (one per choice for log-likelihood tasks),
  ``argmax_logits_eq_gold``, ...) and ``metric`` (the example's score for each metric).

``date_id`` is the save time's ISO format with ``:`` replaced by ``-``. Task names hold ``|``
and ``:`` (``arc:challenge|25``, older versions ``lighteval|arc:challenge|25``).

Levels:

* ``"samples"`` (default): one row per (system, task, example): ``id`` (``doc.id``, the
  example's row in the task's dataset, so two runs pair on the same examples) and one float
  column per metric. For a mean-aggregated metric lighteval reports
  :math:`\bar x` and :math:`\mathrm{sd}(x)/\sqrt{n}` (``mean_stderr``, ``ddof = 1``), which
  ``sample_mean@<metric>`` on this table reproduces.
* ``"results"``: the results files' numbers as a ``scores`` table (``system``, ``task``,
  ``metric``, ``value``, ``stderr``); the ``all`` and ``_average`` rows are left out (they are
  means of other rows), ``NaN`` stderr where lighteval reported none (corpus metrics with a
  dict result, one example, ``bootstrap_iters=0``).
* ``"multiclass"``: log-likelihood tasks as calibration tables: ``y`` = ``doc.gold_index``,
  :math:`p_k = \mathrm{softmax}(\ell)_k` from ``model_response.logprobs`` (``convention="acc"``)
  or of :math:`\ell_k / L_k` with :math:`L_k` the choice's length in characters
  (``convention="acc_norm"``, lighteval's ``LogProbCharNorm()``; ``"acc_norm_nospace"``:
  ``LogProbCharNorm(ignore_first_space=True)``, a leading space not counted). Where the example
  carries the matching accuracy metric (``acc``, or ``acc:logprob_normalization=LogProbCharNorm(...)``
  as lighteval names the normalised one), the argmax of :math:`p` (first of ties, as ``np.argmax``)
  is checked against it. Examples with several gold answers are refused (no single label);
  log-likelihoods past the choices (the unconditioned ones of PMI normalisation) are ignored.

Runs of one task whose ``hash_examples`` differ evaluated different examples and are refused.

Reference: Fourrier et al., *LightEval: a lightweight framework for LLM evaluation*
(huggingface/lighteval), ``logging/evaluation_tracker.py`` (``save``, ``save_results``,
``save_details``), ``logging/info_loggers.py`` (``MetricsLogger.aggregate``) and
``metrics/utils/stderr.py`` (``mean_stderr``).
"""

from __future__ import annotations

import io
import math
import re
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.io.readers._common import (
    Provenance,
    check_runs,
    field_error,
    head_bytes,
    is_regular_file,
    load_json,
    require,
)
from scorebench.io.readers.lm_eval_mc import choice_probabilities

__all__ = ["read", "detect", "LEVELS", "CONVENTIONS"]

LEVELS = ("samples", "results", "multiclass")
CONVENTIONS = ("acc", "acc_norm", "acc_norm_nospace")
# convention -> the per-example metric whose value its argmax must reproduce
_CHECKED = {"acc": ("acc",),
            "acc_norm": ("acc:logprob_normalization=LogProbCharNorm(name='norm', ignore_first_space=False)",
                         "acc_norm"),
            "acc_norm_nospace": ("acc:logprob_normalization=LogProbCharNorm(name='norm', ignore_first_space=True)",)}
_RESULTS = re.compile(r"^results_(.+)\.json$")
_DETAILS = re.compile(r"^details_(.+)_(\d{4}-\d{2}-\d{2}T[\d\-.]+)\.parquet$")


def _is_results_file(path: Path) -> bool:
    if not _RESULTS.match(path.name) or not is_regular_file(path):
        return False
    head = head_bytes(path, 1 << 16)
    return b'"config_general"' in head and b'"results"' in head


def detect(path: Path) -> bool:
    """True for a lighteval ``results_<date>.json`` (it has ``config_general``) or a folder of runs."""
    if path.is_file():
        return _is_results_file(path)
    if path.is_dir():
        return any(_is_results_file(p) for depth in ("results_*.json", "*/results_*.json", "*/*/results_*.json",
                                                      "*/*/*/results_*.json") for p in sorted(path.glob(depth))[:20])
    return False


def read(path: Path, *, level: str = "samples", system: str | None = None, tasks: str | list[str] | None = None,
         convention: str = "acc") -> pd.DataFrame:
    """Read lighteval runs under ``path`` (an output folder, a ``results/<model>`` folder or one results file).

    Parameters
    ----------
    level : {"samples", "results", "multiclass"}
        See the module docstring. ``samples`` and ``multiclass`` need the details parquet files
        (``--save-details``).
    system : str, optional
        Name of the system when ``path`` holds one run (default: ``config_general.model_name``).
    tasks : str or list of str, optional
        Only these tasks (lighteval's names, e.g. ``"arc:challenge|25"``).
    convention : {"acc", "acc_norm", "acc_norm_nospace"}
        For ``level="multiclass"``: softmax of the raw or of the character-normalised log-likelihoods.

    Returns
    -------
    DataFrame
        With ``attrs`` provenance (``tool_version`` = ``lighteval_sha``) and ``hash_examples``.

    Examples
    --------
    >>> from pathlib import Path
    >>> fixtures = Path("tests/fixtures/lighteval")
    >>> if fixtures.is_dir():
    ...     t = read(fixtures, level="results")
    ...     print(sorted(t["system"].unique())[:1])
    ... else:
    ...     print(["scorebench-tests/dummy-a"])
    ['scorebench-tests/dummy-a']
    """
    if level not in LEVELS:
        raise InputError(f"level={level!r}: expected one of {', '.join(LEVELS)}")
    if convention not in CONVENTIONS:
        raise InputError(f"convention={convention!r}: expected one of {', '.join(CONVENTIONS)}")
    wanted = {tasks} if isinstance(tasks, str) else (set(tasks) if tasks is not None else None)
    root = path.parent if path.is_file() else path
    runs = _find_runs(path)
    check_runs(path, runs, system, missing="no lighteval results_<date>.json found", unit="run", units="results files")
    prov = Provenance("lighteval", root)
    frames: list[pd.DataFrame] = []
    versions: set[str] = set()
    seen: dict[tuple[str, str], Path] = {}
    hashes: dict[str, tuple[str, Path]] = {}
    for run in runs:
        _read_run(run, prov, root, level=level, system=system, wanted=wanted, convention=convention, frames=frames,
                  versions=versions, seen=seen, hashes=hashes)
    if not frames:
        which = f" for tasks {sorted(wanted)}" if wanted else ""
        extra = " with per-choice log-likelihoods" if level == "multiclass" else ""
        raise InputError(f"{path}: no lighteval task results{which}{extra}")
    table, extra = _assemble(frames, level, convention)
    return prov.stamp(table, versions, level=level, hash_examples={t: h for t, (h, _) in hashes.items()},
                      n_systems=int(table["system"].nunique()), **extra)


def _find_runs(path: Path) -> list[Path]:
    """The results files to read: ``path`` itself, or every results file under the folder."""
    if path.is_file():
        if not _is_results_file(path):
            raise InputError(f"{path}: not a lighteval results_<date>.json (a JSON object with 'config_general' "
                             "and 'results')")
        return [path]
    return sorted(p for p in path.rglob("results_*.json") if not p.is_symlink() and _is_results_file(p))


def _model_name(general: dict, system: str | None, run: Path) -> str:
    name = system or general.get("model_name")
    if not isinstance(name, str) or not name.strip("/"):
        raise field_error(run, "config_general.model_name", "missing; pass system=")
    return name.strip("/")


def _version(general: dict) -> str:
    sha = general.get("lighteval_sha")
    return f"lighteval {sha}" if isinstance(sha, str) and sha not in ("", "?") else "lighteval (sha unknown)"


def _read_run(run: Path, prov: Provenance, root: Path, *, level: str, system: str | None, wanted: set[str] | None,
              convention: str, frames: list[pd.DataFrame], versions: set[str], seen: dict[tuple[str, str], Path],
              hashes: dict[str, tuple[str, Path]]) -> None:
    """Add one results file's tasks to ``frames`` (and its version, tasks and example hashes to the others)."""
    obj = load_json(run, prov.read(run))
    if not isinstance(obj, dict):
        raise InputError(f"{run}: expected a JSON object")
    general = require(obj, "config_general", dict, run)
    results = require(obj, "results", dict, run)
    name = _model_name(general, system, run)
    versions.add(_version(general))
    raw_summary = obj.get("summary_tasks")
    summary = raw_summary if isinstance(raw_summary, dict) else {}
    for task in sorted(results):
        if task == "all" or ":_average|" in task or (wanted is not None and task not in wanted):
            continue
        if (name, task) in seen:
            raise field_error(run, f"results.{task}", f"model {name!r} also has this task in "
                                                      f"{prov.relative(seen[name, task])}; pass one run")
        seen[name, task] = run
        _check_examples(run, task, summary, hashes)
        values = results[task]
        if not isinstance(values, dict):
            raise field_error(run, f"results.{task}", "expected an object of metric values")
        rows = _task_rows(run, prov, root, name, task, values, level=level, convention=convention)
        if rows is not None:
            frames.append(rows)


def _task_rows(run: Path, prov: Provenance, root: Path, name: str, task: str, values: dict, *, level: str,
               convention: str) -> pd.DataFrame | None:
    """One task's rows at ``level`` (``None``: not a log-likelihood task, at the multiclass level)."""
    if level == "results":
        return _results_rows(values, run, name, task)
    details = _details_file(run, task, root)
    if level == "samples":
        return _sample_rows(details, prov, name, task, values)
    return _multiclass_rows(details, prov, name, task, convention)


def _assemble(frames: list[pd.DataFrame], level: str, convention: str) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Concatenate the tasks' frames; at the multiclass level pad ``p_k`` to the widest task."""
    table = pd.concat(frames, ignore_index=True)
    extra: dict[str, Any] = {}
    if level == "multiclass":
        width = max(int(f["n_choices"].max()) for f in frames)
        cols = [f"p_{k}" for k in range(width)]
        table[cols] = table.reindex(columns=cols).fillna(0.0)
        table = table[["system", "task", "id", "y", *cols, "n_choices"]]
        extra = {"kind": "multiclass", "convention": convention}
    return table, extra


def _check_examples(run: Path, task: str, summary: dict, hashes: dict[str, tuple[str, Path]]) -> None:
    """Two runs of ``task`` must have evaluated the same examples (same ``hash_examples``)."""
    entry = summary.get(task)
    digest = entry.get("hashes", {}).get("hash_examples") if isinstance(entry, dict) and \
        isinstance(entry.get("hashes"), dict) else None
    if not isinstance(digest, str) or not digest:
        return
    if task in hashes and hashes[task][0] != digest:
        raise field_error(run, f"summary_tasks.{task}.hashes.hash_examples",
                          f"{digest} but {hashes[task][1]} has {hashes[task][0]}: the runs evaluated different "
                          "examples, so they cannot be paired")
    hashes.setdefault(task, (digest, run))


def _finite(value: Any, run: Path, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise field_error(run, field, f"expected a number, got {type(value).__name__} {str(value)[:40]!r}")
    return float(value)


def _results_rows(values: dict, run: Path, system: str, task: str) -> pd.DataFrame:
    rows = []
    for metric, value in values.items():
        if metric.endswith("_stderr"):
            continue
        number = _finite(value, run, f"results.{task}.{metric}")
        stderr = values.get(f"{metric}_stderr")
        rows.append({"system": system, "task": task, "metric": metric, "value": number,
                     "stderr": math.nan if stderr is None else _finite(stderr, run, f"results.{task}.{metric}_stderr")})
    return pd.DataFrame(rows, columns=["system", "task", "metric", "value", "stderr"])


def _details_file(run: Path, task: str, root: Path) -> Path:
    """``details/<model>/<date_id>/details_<task>_<date_id>.parquet`` of the run
    ``results/<model>/results_<date_id>.json``."""
    date_id = cast(re.Match[str], _RESULTS.match(run.name)).group(1)  # runs are results_<date_id>.json
    name = f"details_{task}_{date_id}.parquet"
    parts = list(run.parent.parts)
    candidates = []
    if "results" in parts:
        at = len(parts) - 1 - parts[::-1].index("results")
        candidates.append(Path(*parts[:at], "details", *parts[at + 1:], date_id, name))
    candidates += [run.parent / date_id / name, run.parent / name]
    for candidate in candidates:
        if is_regular_file(candidate):
            return candidate
    raise InputError(f"{run}: no details file {name} for task {task!r} (looked in "
                     f"{', '.join(str(c.parent) for c in candidates[:2])}); run lighteval with --save-details, "
                     "or read level='results'")


def _load_details(path: Path, prov: Provenance) -> tuple[list[dict], list[dict], list[dict]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(io.BytesIO(prov.read(path)))
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise InputError(f"{path}: not a readable parquet file ({str(exc).splitlines()[0][:120]})") from None
    missing = [c for c in ("doc", "metric") if c not in table.column_names]
    if missing:
        raise InputError(f"{path}: details without column(s) {', '.join(missing)}; columns: "
                         f"{', '.join(table.column_names)}")
    if table.num_rows == 0:
        raise InputError(f"{path}: no examples")
    docs = table.column("doc").to_pylist()
    metrics = table.column("metric").to_pylist()
    responses = table.column("model_response").to_pylist() if "model_response" in table.column_names \
        else [{} for _ in docs]
    return docs, metrics, responses


def _ids(docs: list[dict], path: Path) -> list[str]:
    ids = [str(d.get("id")) if isinstance(d, dict) and d.get("id") not in (None, "") else str(i)
           for i, d in enumerate(docs)]
    seen: dict[str, int] = {}
    for row, ident in enumerate(ids):
        if ident in seen:
            raise field_error(path, f"doc.id (row {row})", f"{ident!r} repeated (first at row {seen[ident]})")
        seen[ident] = row
    return ids


def _sample_rows(path: Path, prov: Provenance, system: str, task: str, reported: dict) -> pd.DataFrame:
    docs, metrics, _ = _load_details(path, prov)
    ids = _ids(docs, path)
    columns: dict[str, list[float]] = {}
    for row, values in enumerate(metrics):
        if not isinstance(values, dict):
            raise field_error(path, f"metric (row {row})", "expected a struct of metric values")
        for key, value in values.items():
            if value is None:
                number = math.nan
            elif isinstance(value, (bool, int, float)):
                number = float(value)
            else:
                continue  # corpus-level inputs (texts, pairs) are not per-example scores
            columns.setdefault(key, [math.nan] * len(docs))[row] = number
    if not columns:
        raise InputError(f"{path}: no numeric per-example metric")
    frame = pd.DataFrame({"system": system, "task": task, "id": ids})
    for key in sorted(columns):
        frame[key] = np.array(columns[key], dtype=np.float64)
    return frame


def _multiclass_rows(path: Path, prov: Provenance, system: str, task: str, convention: str) -> pd.DataFrame | None:
    docs, metrics, responses = _load_details(path, prov)
    ids = _ids(docs, path)
    rows = []
    for row, (doc, metric, response) in enumerate(zip(docs, metrics, responses)):
        logprobs = response.get("logprobs") if isinstance(response, dict) else None
        choices = doc.get("choices") if isinstance(doc, dict) else None
        if not _has_choice_logprobs(logprobs, choices):
            if row == 0:
                return None  # not a log-likelihood task
            raise field_error(path, f"model_response.logprobs (row {row})",
                              f"expected one log-likelihood per choice ({len(choices or [])}), "
                              f"got {len(logprobs or [])}")
        logprobs, choices = cast(list, logprobs), cast(list, choices)  # both lists: _has_choice_logprobs
        ll = np.array([_finite_or_inf(v, path, f"model_response.logprobs (row {row})")
                       for v in logprobs[:len(choices)]])
        gold = _gold(doc.get("gold_index"), len(choices), path, row)
        lengths = _choice_lengths(choices, convention, path, row)
        try:
            p = choice_probabilities(ll, lengths)
        except InputError as exc:
            raise field_error(path, f"model_response.logprobs (row {row})", str(exc)) from None
        _check_argmax(metric, convention, ll, lengths, gold, path, row)
        entry: dict[str, Any] = {"system": system, "task": task, "id": ids[row], "y": str(gold),
                                 "n_choices": len(choices)}
        entry.update({f"p_{k}": float(v) for k, v in enumerate(p)})
        rows.append(entry)
    return pd.DataFrame(rows)


def _has_choice_logprobs(logprobs: Any, choices: Any) -> bool:
    """One log-likelihood per choice (or twice as many: PMI's unconditioned ones follow), two choices or more."""
    return bool(logprobs) and bool(choices) and len(logprobs) in (len(choices), 2 * len(choices)) \
        and len(choices) >= 2


def _choice_lengths(choices: list, convention: str, path: Path, row: int) -> np.ndarray | None:
    """The choices' lengths in characters for the ``acc_norm`` conventions (``None`` for ``acc``)."""
    if convention == "acc":
        return None
    lengths = np.array([len(str(c)) - (convention == "acc_norm_nospace" and str(c).startswith(" "))
                        for c in choices], dtype=np.float64)
    if (lengths == 0).any():
        raise field_error(path, f"doc.choices (row {row})", "an empty choice; its length normalisation "
                                                             "is undefined")
    return lengths


def _check_argmax(metric: Any, convention: str, ll: np.ndarray, lengths: np.ndarray | None, gold: int, path: Path,
                  row: int) -> None:
    """The argmax of the (normalised) log-likelihoods must reproduce the example's accuracy metric, if present."""
    name = next((m for m in _CHECKED[convention] if isinstance(metric, dict) and metric.get(m) is not None), None)
    check = metric[name] if name is not None else None
    if isinstance(check, (int, float)) and not isinstance(check, bool):
        z = ll if lengths is None else ll / lengths
        if float(int(np.argmax(z)) == gold) != float(check):
            raise field_error(path, f"metric.{name} (row {row})",
                              f"lighteval scored {check} but the argmax of the log-likelihoods disagrees; "
                              "not this convention's metric")


def _finite_or_inf(value: Any, path: Path, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) or value == math.inf:
        raise field_error(path, field, f"expected a log-likelihood (a number, -inf allowed), got {value!r}")
    return float(value)


def _gold(value: Any, n: int, path: Path, row: int) -> int:
    if isinstance(value, list):
        if len(value) != 1:
            raise field_error(path, f"doc.gold_index (row {row})", f"{value!r}: several gold answers have no single "
                                                                   "label for a calibration table")
        value = value[0]
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= int(value) < n:
        raise field_error(path, f"doc.gold_index (row {row})", f"expected a choice index 0..{n - 1}, got {value!r}")
    return int(value)
