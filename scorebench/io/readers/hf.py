r"""Hugging Face Hub evaluation results -> a ``scores`` table.

Two places on the Hub hold a model's evaluation results, and both are read:

* the legacy ``model-index`` block in the YAML front matter of a model card (``README.md``)::

      model-index:
      - name: org/model
        results:
        - task: {type: text-classification}
          dataset: {type: glue, name: GLUE, config: sst2, split: validation}
          metrics:
          - {type: accuracy, value: 0.91, name: Accuracy, verified: false}

  one row per metric: ``system`` (the entry's ``name``), ``task`` (``dataset.type``, with
  ``:config`` and ``@split`` when given), ``metric`` (``metrics[].type``), ``value``, and
  ``dataset``, ``config``, ``split``, ``task_type``, ``verified`` columns;

* ``.eval_results/*.yaml`` files (the Hub's *Evaluation Results*, see
  :mod:`scorebench.io.hf`): one row per entry, ``system`` from the folders above
  ``.eval_results`` (``org/name``) unless ``system=`` is given, ``task`` = ``dataset.id``
  (with ``:task_id`` unless it is ``default``), ``metric`` and the interval (``ci_low``,
  ``ci_high``, ``ci_level``, ``interval_method``, ``n``) parsed from the ``notes`` text that
  scorebench writes (``"accuracy; 95% CI [0.61, 0.86] (wilson score interval); n = 40"``);
  ``metric`` is ``value`` for notes in another form.

Values that are not numbers (``"-"``, ``"N/A"``) are skipped and listed in
``attrs["skipped"]`` with a warning; text that reads as a number (``"85.3"``) is taken.
YAML is parsed with PyYAML's safe loader (no object construction), aliases refused.
"""

from __future__ import annotations

import math
import os
import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from scorebench.core.errors import InputError
from scorebench.io.readers._common import Provenance, field_error

__all__ = ["read", "detect"]

_FRONT = re.compile(rb"\A(?:\xef\xbb\xbf)?---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(\r?\n|\Z)", re.S)
_NOTE = re.compile(r"^(?P<metric>[^;]+?)(?:; (?:(?P<level>[0-9.]+)% )?CI \[(?P<low>[^,\]]+), (?P<high>[^\]]+)\]"
                   r"(?: \((?P<method>[^)]*)\))?)?(?:; n = (?P<n>\d+))?(?:;.*)?$")
_MAX_BYTES = 16 << 20
_MAX_LISTED = 2000


def _front_matter(path: Path, data: bytes) -> Any:
    match = _FRONT.match(data)
    if match is None:
        return None
    return _yaml(path, match.group(1))


def _yaml(path: Path, data: bytes) -> Any:
    import yaml

    class NoAliases(yaml.SafeLoader):
        """``yaml.SafeLoader`` that refuses aliases (``*name``): a few bytes of them can stand for
        an exponential number of results (the "billion laughs")."""

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                mark = self.peek_event().start_mark
                raise InputError(f"{path}: YAML alias at line {mark.line + 1}, column {mark.column + 1}: aliases "
                                 "(*name) are refused in result files")
            return super().compose_node(parent, index)

    try:
        return yaml.load(data.decode("utf-8"), Loader=NoAliases)  # a SafeLoader: no object construction
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text at byte {exc.start}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise InputError(f"{path}: invalid YAML{where}: {problem}") from None


def _head(path: Path, size: int = 1 << 16) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read(size)
    except OSError:
        return b""


def _is_card(path: Path) -> bool:
    if path.suffix.lower() != ".md":
        return False
    head = _head(path)
    return _FRONT.match(head) is not None and b"model-index:" in head or \
        (head.startswith(b"---") and b"\nmodel-index:" in head)


def _is_eval_results(path: Path) -> bool:
    return path.suffix in (".yaml", ".yml") and path.parent.name == ".eval_results"


def _files(root: Path, limit: int | None = None) -> Iterator[Path]:
    """README.md files and .eval_results YAML files under ``root`` (sorted; links not followed),
    looking at no more than ``limit`` file names when given."""
    count = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            count += 1
            if limit is not None and count > limit:
                return
            file = Path(dirpath) / name
            if (_is_eval_results(file) or name.lower() == "readme.md") and file.is_file() and not file.is_symlink():
                yield file


def detect(path: Path) -> bool:
    """True for a model card with a ``model-index`` block, an ``.eval_results`` YAML file, or a folder of them."""
    if path.is_file():
        return _is_card(path) or _is_eval_results(path)
    if not path.is_dir():
        return False
    for count, file in enumerate(_files(path, _MAX_LISTED)):
        if count >= 20:
            return False
        if _is_eval_results(file) or _is_card(file):
            return True
    return False


def read(path: Path, *, system: str | None = None) -> pd.DataFrame:
    """Read model cards (``model-index``) and ``.eval_results/*.yaml`` files under ``path``.

    Parameters
    ----------
    system : str, optional
        The model's name for ``.eval_results`` files and cards whose ``model-index`` entry has
        no ``name`` (default: the folders above ``.eval_results``, or the card's folder).
    """
    root = path.parent if path.is_file() else path
    files = [path] if path.is_file() else [f for f in _files(path) if _is_eval_results(f) or _is_card(f)]
    if not files:
        raise InputError(f"{path}: no model card with a model-index block and no .eval_results/*.yaml file found")
    prov = Provenance("hf", root)
    rows: list[dict[str, Any]] = []
    skipped: list[str] = []
    for file in files:
        if file.stat().st_size > _MAX_BYTES:
            raise InputError(f"{file}: {file.stat().st_size} bytes; a model card or eval-results file over "
                             f"{_MAX_BYTES >> 20} MiB is refused")
        data = prov.read(file)
        if _is_eval_results(file):
            rows += _eval_results_rows(file, _yaml(file, data), _system_of(file, root, system), skipped, prov)
        else:
            doc = _front_matter(file, data)
            if doc is None:
                raise InputError(f"{file}: no YAML front matter (--- ... ---) at the top of the model card")
            rows += _model_index_rows(file, doc, system or _card_system(file, root), skipped, prov)
    if not rows:
        raise InputError(f"{path}: no numeric evaluation result found ({len(skipped)} skipped)")
    table = pd.DataFrame(rows)
    key = ["system", "task", "metric"]
    dup = table.duplicated(key, keep=False)
    if dup.any():
        first = table.loc[dup].iloc[0]
        raise InputError(f"{first['file']}: (system, task, metric) ({first['system']!r}, {first['task']!r}, "
                         f"{first['metric']!r}) is reported more than once")
    if skipped:
        warnings.warn(f"hf: {len(skipped)} result(s) without a numeric value skipped, e.g. {skipped[0]} "
                      "(see attrs['skipped'])", stacklevel=3)
    order = ["system", "task", "metric", "value", "ci_low", "ci_high", "n", "ci_level", "interval_method"]
    table = table[[c for c in order if c in table.columns] + [c for c in table.columns if c not in order]]
    if "n" in table.columns:
        table["n"] = table["n"].astype("Int64")
    return prov.stamp(table, [], skipped=skipped, n_skipped=len(skipped), n_systems=int(table["system"].nunique()))


def _system_of(file: Path, root: Path, system: str | None) -> str:
    if system is not None:
        return system
    folder = file.parent.parent
    try:
        rel = folder.relative_to(root)
    except ValueError:
        rel = Path(folder.name)
    name = rel.as_posix()
    if name in ("", "."):
        name = folder.resolve().name
    return name


def _card_system(file: Path, root: Path) -> str | None:
    try:
        rel = file.parent.relative_to(root).as_posix()
    except ValueError:
        rel = file.parent.name
    return None if rel in ("", ".") else rel


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        if isinstance(value, (int, float)):
            out = float(value)
        elif isinstance(value, str):
            out = float(value.strip().rstrip("%"))
        else:
            return None
    except (ValueError, OverflowError):
        return None
    return out if math.isfinite(out) else None


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _mappings(file: Path, value: Any, field: str, prefix: str) -> list[tuple[str, dict]]:
    """``(field path, entry)`` of each entry of the list ``value``; an error unless it is a list of mappings."""
    if not isinstance(value, list):
        raise field_error(file, field, f"expected a list, got {type(value).__name__}")
    out = []
    for i, entry in enumerate(value):
        if not isinstance(entry, dict):
            raise field_error(file, f"{prefix}[{i}]", "expected a mapping")
        out.append((f"{prefix}[{i}]", entry))
    return out


def _model_index_rows(file: Path, doc: Any, default: str | None, skipped: list[str],
                      prov: Provenance) -> list[dict[str, Any]]:
    if not isinstance(doc, dict) or "model-index" not in doc:
        raise field_error(file, "model-index", "missing from the front matter")
    rows = []
    for where, entry in _mappings(file, doc["model-index"], "model-index", "model-index"):
        name = entry.get("name")
        system = str(name) if isinstance(name, (str, int, float)) and str(name) else default
        if system is None:
            raise field_error(file, f"{where}.name", "missing; pass system=")
        for at, result in _mappings(file, entry.get("results") or [], f"{where}.results", f"{where}.results"):
            dataset = result.get("dataset") or {}
            task = result.get("task") or {}
            if not isinstance(dataset, dict) or not isinstance(task, dict):
                raise field_error(file, at, "task and dataset must be mappings")
            dtype = dataset.get("type") or dataset.get("name")
            if dtype is None:
                raise field_error(file, f"{at}.dataset.type", "missing")
            config, split = _text(dataset.get("config")), _text(dataset.get("split"))
            label = str(dtype) + (f":{config}" if config else "") + (f"@{split}" if split else "")
            for mat, m in _mappings(file, result.get("metrics") or [], f"{at}.metrics", f"{at}.metrics"):
                metric = m.get("type") or m.get("name")
                if metric is None:
                    raise field_error(file, f"{mat}.type", "missing")
                value = _number(m.get("value"))
                if value is None:
                    skipped.append(f"{prov.relative(file)}: {mat} value {m.get('value')!r}")
                    continue
                rows.append({"system": system, "task": label, "metric": str(metric), "value": value,
                             "dataset": str(dtype), "config": config, "split": split,
                             "task_type": _text(task.get("type")), "verified": bool(m.get("verified", False)),
                             "file": prov.relative(file)})
    return rows


def _eval_results_rows(file: Path, doc: Any, system: str, skipped: list[str], prov: Provenance) -> list[dict]:
    if doc is None:
        return []
    rows = []
    for where, entry in _mappings(file, doc, "(top level)", ""):
        dataset = entry.get("dataset")
        if not isinstance(dataset, dict) or not isinstance(dataset.get("id"), str):
            raise field_error(file, f"{where}.dataset.id", "missing (a Hub dataset id is required)")
        if "value" not in entry:
            raise field_error(file, f"{where}.value", "missing")
        value = _number(entry["value"])
        if value is None:
            skipped.append(f"{prov.relative(file)}: {where} value {entry['value']!r}")
            continue
        task_id = _text(dataset.get("task_id"))
        task = dataset["id"] + (f":{task_id}" if task_id and task_id != "default" else "")
        row: dict[str, Any] = {"system": system, "task": task, "metric": "value", "value": value,
                               "ci_low": math.nan, "ci_high": math.nan, "n": None, "ci_level": math.nan,
                               "interval_method": None, "dataset": dataset["id"], "task_id": task_id,
                               "revision": _text(dataset.get("revision")), "date": _text(entry.get("date")),
                               "notes": _text(entry.get("notes")), "file": prov.relative(file)}
        notes = entry.get("notes")
        match = _NOTE.match(notes) if isinstance(notes, str) else None
        if match is not None and (match.group("low") is not None or match.group("n") is not None):
            row["metric"] = match.group("metric").strip()
            low, high = _number(match.group("low")), _number(match.group("high"))
            if low is not None and high is not None:
                row.update(ci_low=low, ci_high=high)
            if match.group("level"):
                row["ci_level"] = float(match.group("level")) / 100
            row["interval_method"] = match.group("method")
            if match.group("n"):
                row["n"] = int(match.group("n"))
        rows.append(row)
    return rows
