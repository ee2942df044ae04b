r"""Inspect AI eval logs (``.eval`` and ``.json``) -> a per-sample ``samples`` table (or ``scores``).

An ``.eval`` log is a zip archive: ``header.json`` (the eval spec: ``eval.task``,
``eval.model``, ``eval.config.epochs``; ``results.scores[]`` with each scorer's reported
metrics such as ``accuracy`` and ``stderr``), one ``samples/<id>_epoch_<n>.json`` member per
(sample, epoch) with its ``scores`` (scorer name -> ``{value, answer, explanation}``) and
``metadata``, plus ``summaries.json`` and ``reductions.json``. A ``.json`` log holds the same
in one object (``samples`` and ``reductions`` lists).

``level="samples"`` (default) gives one row per (system, task, sample, epoch): ``system``
(``eval.model``, or the file name with ``system="file"``), ``task``, ``id`` (the sample id as
text: the same id pairs across runs), ``epoch`` (use it as ``--repeats epoch``: two-level
resampling of samples and epochs), one float column per scorer (a scorer whose value is a
mapping gives ``<scorer>/<key>`` columns), and one column per scalar sample-metadata field
(``--cluster <field>``; prefixed ``metadata_`` when the name is taken). Score values are mapped
to numbers as Inspect's ``value_to_float`` does: ``"C"`` 1, ``"P"`` 0.5, ``"I"`` and ``"N"``
0, numbers and booleans as themselves, ``"yes"``/``"true"`` 1, ``"no"``/``"false"`` 0, a
numeric string its value; any other value is an error (Inspect logs a warning and uses 0).
The mean of a scorer's column over epochs and then samples is Inspect's ``accuracy`` under its
default ``mean`` epoch reducer. ``level="results"`` gives the header's reported metrics as a
``scores`` table (``system``, ``task``, ``metric`` = ``<scorer>/<metric>``, ``value``).

``.eval`` archives are streamed member by member (one sample is parsed at a time, the header
and sample members only; events, messages and attachments are never kept), so memory does not
grow with the log; ``.json`` logs are parsed whole. Members are read with size limits (a zip
bomb is refused) and logs that did not finish (``status`` other than ``success``) are refused
unless ``allow_incomplete=True``.

Reference: Inspect AI (UK AI Security Institute), ``inspect_ai.log`` (log file format) and
``inspect_ai.scorer.value_to_float``.
"""

from __future__ import annotations

import io
import math
import re
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from scorebench.core.errors import InputError
from scorebench.io.readers._common import Provenance, check_runs, field_error, head_bytes, load_json, require

__all__ = ["read", "detect", "value_to_float"]

_SAMPLE = re.compile(r"^samples/(.+)_epoch_(\d+)\.json$")
_MAX_MEMBER = 1 << 30  # bytes of one uncompressed member
_MAX_RATIO = 1000  # uncompressed / compressed size of a member
_VALUES = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}
_WORDS = {"yes": 1.0, "true": 1.0, "no": 0.0, "false": 0.0}


def value_to_float(value: Any) -> float | None:
    """A score value as Inspect's default ``value_to_float`` maps it; None when it cannot.

    The sentinels ``"C"``, ``"P"``, ``"I"``, ``"N"`` are compared first (as Inspect does, with
    ``==``), then numbers and booleans are cast, then text: ``yes``/``true`` 1, ``no``/``false``
    0 (any case), text that parses as a finite number its value. Inspect logs a warning and
    uses 0 for anything else; this returns None so the reader can say so.

    Examples
    --------
    >>> [value_to_float(v) for v in ["C", "I", "P", "N", True, 3, "Yes", "1e-2", "maybe", "c"]]
    [1.0, 0.0, 0.5, 0.0, 1.0, 3.0, 1.0, 0.01, None, None]
    """
    if isinstance(value, str) and value in _VALUES:
        return _VALUES[value]
    if isinstance(value, (bool, int, float)):
        try:
            return float(value)
        except OverflowError:  # an integer beyond float range
            return None
    if isinstance(value, str):
        lowered = value.lower()
        if lowered in _WORDS:
            return _WORDS[lowered]
        try:
            number = float(lowered)
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


def _is_eval_zip(path: Path) -> bool:
    if path.suffix != ".eval" or not path.is_file():
        return False
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist()[:4096])
    except (zipfile.BadZipFile, OSError):
        return False
    return "header.json" in names or any(n.startswith("_journal/") for n in names)


def _is_json_log(path: Path) -> bool:
    head = head_bytes(path, 1 << 14) if path.suffix == ".json" else b""
    return b'"eval"' in head and b'"task"' in head and (b'"version"' in head) and b'"plan"' in head or \
        b'"eval"' in head and b'"task_id"' in head and b'"model"' in head and b'"status"' in head


def detect(path: Path) -> bool:
    """True for an Inspect ``.eval`` archive or ``.json`` log, or a folder holding ``.eval`` logs."""
    if path.is_file():
        return _is_eval_zip(path) or _is_json_log(path)
    if path.is_dir():
        return any(_is_eval_zip(p) for p in sorted(path.glob("*.eval"))[:5])
    return False


def read(path: Path, *, level: str = "samples", system: str | None = None,
         allow_incomplete: bool = False, epochs: str = "keep") -> pd.DataFrame:
    """Read Inspect logs under ``path`` (an ``.eval`` or ``.json`` log, or a folder of them).

    Parameters
    ----------
    level : {"samples", "results"}
        Per-(sample, epoch) rows, or the logs' reported metrics.
    system : str, optional
        Name of the system when ``path`` is one log (default: ``eval.model``); ``"file"`` names
        each log by its file name (two runs of the same model).
    allow_incomplete : bool
        Read logs whose ``status`` is not ``success`` (cancelled or failed runs).
    epochs : {"keep", "mean"}
        One row per (sample, epoch) (``--repeats epoch``), or per sample with each score
        averaged over its epochs (Inspect's default ``mean`` reducer; then ``--cluster`` applies).
    """
    if level not in ("samples", "results"):
        raise InputError(f"level={level!r}: expected 'samples' or 'results'")
    if epochs not in ("keep", "mean"):
        raise InputError(f"epochs={epochs!r}: expected 'keep' or 'mean'")
    if path.is_file():
        logs, root = [path], path.parent
    else:
        root = path
        logs = sorted(p for p in path.iterdir() if p.is_file() and not p.is_symlink()
                      and (p.suffix == ".eval" or (p.suffix == ".json" and _is_json_log(p))))
    check_runs(path, logs, system, missing="no Inspect log (.eval or .json) found", unit="log", units="logs", by="file")
    prov = Provenance("inspect", root)
    frames: list[pd.DataFrame] = []
    versions: set[str] = set()
    seen: dict[Any, Any] = {}
    for log in logs:
        reader = _EvalZip(log, prov) if log.suffix == ".eval" else _JsonLog(log, prov)
        header = reader.header()
        status = header.get("status")
        if status != "success" and not allow_incomplete:
            raise field_error(log, "status", f"{status!r}: the run did not finish; pass allow_incomplete=True "
                                             "to read its samples")
        spec = require(header, "eval", dict, log)
        task = str(require(spec, "task", str, log, "eval.task"))
        name = log.name if system == "file" else (system or str(require(spec, "model", str, log, "eval.model")))
        versions.add(str(header.get("version", "unknown")))
        if (name, task) in seen:
            raise field_error(log, "eval.model", f"({name!r}, {task!r}) also in {prov.relative(seen[name, task])}; "
                                                 "pass system='file' to name runs by file")
        seen[name, task] = log
        if level == "results":
            frames.append(_results_rows(header, log, name, task))
        else:
            frame = _sample_rows(reader.samples(), log, name, task)
            frames.append(_mean_over_epochs(frame) if epochs == "mean" else frame)
    table = pd.concat(frames, ignore_index=True)
    return prov.stamp(table, versions, level=level, n_systems=int(table["system"].nunique()))


class _EvalZip:
    """An ``.eval`` archive, read member by member."""

    def __init__(self, path: Path, prov: Provenance) -> None:
        self.path, self.prov = path, prov
        try:
            self.archive = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError) as exc:
            raise InputError(f"{path}: not a readable .eval archive ({exc})") from None
        prov.add(path, _file_digest_bytes(path))

    def _member(self, name: str) -> Any:
        try:
            info = self.archive.getinfo(name)
        except KeyError:
            raise InputError(f"{self.path}: member {name!r} missing from the .eval archive") from None
        if info.file_size > _MAX_MEMBER or info.file_size > _MAX_RATIO * max(info.compress_size, 1) + (1 << 20):
            raise InputError(f"{self.path}: member {name!r} expands to {info.file_size} bytes from "
                             f"{info.compress_size}; refused (limit {_MAX_MEMBER} bytes, ratio {_MAX_RATIO})")
        data = _member_bytes(self.path, self.archive, info)
        return load_json(Path(f"{self.path}!{name}"), data)

    def header(self) -> dict:
        names = set(self.archive.namelist())
        if "header.json" not in names:
            raise InputError(f"{self.path}: no header.json: the run did not finish writing its log; "
                             "read it after the run completes")
        header = self._member("header.json")
        if not isinstance(header, dict):
            raise field_error(self.path, "header.json", "expected an object")
        return header

    def samples(self) -> Iterator[tuple[str, dict]]:
        members = []
        for name in self.archive.namelist():
            match = _SAMPLE.match(name)
            if match:
                members.append((match.group(1), int(match.group(2)), name))
        for sample_id, epoch, name in sorted(members, key=lambda m: (m[1], m[0])):
            sample = self._member(name)
            if not isinstance(sample, dict):
                raise field_error(self.path, name, "expected an object")
            yield name, sample


_ZIP_ZSTANDARD = 93  # the compression method of current Inspect logs


def _member_bytes(path: Path, archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """The uncompressed bytes of a member: stdlib methods through ``zipfile``; Zstandard (method
    93, which Inspect writes) from the raw member, decompressed with at most its declared size
    and checked against its CRC-32."""
    if info.compress_type != _ZIP_ZSTANDARD:
        try:
            return archive.read(info)
        except (zipfile.BadZipFile, OSError, RuntimeError, NotImplementedError, EOFError) as exc:
            raise InputError(f"{path}: member {info.filename!r} cannot be read ({exc})") from None
    reader = _zstd_reader()
    with open(path, "rb") as handle:
        handle.seek(info.header_offset)
        local = handle.read(30)
        if len(local) != 30 or local[:4] != b"PK\x03\x04":
            raise InputError(f"{path}: member {info.filename!r}: bad local header; the archive is damaged")
        skip = int.from_bytes(local[26:28], "little") + int.from_bytes(local[28:30], "little")
        handle.seek(info.header_offset + 30 + skip)
        raw = handle.read(info.compress_size)
    if len(raw) != info.compress_size:
        raise InputError(f"{path}: member {info.filename!r} is truncated")
    try:
        data = reader(raw, info.file_size + 1)
    except Exception as exc:  # the codec's own error types
        raise InputError(f"{path}: member {info.filename!r}: invalid Zstandard data ({exc})") from None
    if len(data) != info.file_size or zlib.crc32(data) != info.CRC:
        raise InputError(f"{path}: member {info.filename!r}: size or CRC-32 does not match the archive's "
                         "directory; the archive is damaged")
    return data


def _zstd_reader() -> Callable[[bytes, int], bytes]:
    """``read(raw, limit)``: Zstandard decompression with bounded output (Python 3.14's
    ``compression.zstd``, else the ``zstandard`` package)."""
    zstandard: Any
    try:
        import zstandard
    except ImportError:
        zstandard = None
    if zstandard is not None:
        def read(raw: bytes, limit: int) -> bytes:
            with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw)) as stream:
                return stream.read(limit)
        return read
    try:
        from compression import zstd  # Python >= 3.14
    except ImportError:
        raise InputError("this .eval log is Zstandard-compressed (current Inspect): install the zstandard "
                         "package (pip install 'scorebench[inspect]') to read it") from None

    def read_stdlib(raw: bytes, limit: int) -> bytes:
        with zstd.ZstdFile(io.BytesIO(raw)) as stream:
            return stream.read(limit)
    return read_stdlib


def _file_digest_bytes(path: Path) -> bytes:
    # Provenance hashes the bytes it is given; a large log is hashed through a digest of its content.
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest().encode()


class _JsonLog:
    """A ``.json`` log, parsed whole."""

    def __init__(self, path: Path, prov: Provenance) -> None:
        self.path = path
        self.doc = load_json(path, prov.read(path))
        if not isinstance(self.doc, dict):
            raise InputError(f"{path}: expected a JSON object (an Inspect log)")

    def header(self) -> dict:
        return self.doc

    def samples(self) -> Iterator[tuple[str, dict]]:
        samples = self.doc.get("samples") or []
        if not isinstance(samples, list):
            raise field_error(self.path, "samples", "expected a list")
        for i, sample in enumerate(samples):
            if not isinstance(sample, dict):
                raise field_error(self.path, f"samples[{i}]", "expected an object")
            yield f"samples[{i}]", sample


def _results_rows(header: dict, log: Path, system: str, task: str) -> pd.DataFrame:
    results = header.get("results") or {}
    scores = results.get("scores") if isinstance(results, dict) else None
    if not isinstance(scores, list):
        raise field_error(log, "results.scores", "missing (the log has no reported metrics)")
    rows = []
    for i, score in enumerate(scores):
        if not isinstance(score, dict):
            raise field_error(log, f"results.scores[{i}]", "expected an object")
        scorer = str(score.get("name", score.get("scorer", f"scorer{i}")))
        metrics = score.get("metrics") or {}
        stderr = metrics.get("stderr", {}).get("value") if isinstance(metrics.get("stderr"), dict) else None
        for key, metric in metrics.items():
            if key == "stderr" or not isinstance(metric, dict):
                continue
            value = metric.get("value")
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                continue
            rows.append({"system": system, "task": task, "metric": f"{scorer}/{key}", "value": float(value),
                         "stderr": float(stderr) if key == "accuracy" and isinstance(stderr, (int, float))
                         else math.nan, "n": results.get("completed_samples", results.get("total_samples"))})
    return pd.DataFrame(rows, columns=["system", "task", "metric", "value", "stderr", "n"])


_RESERVED = {"system", "task", "id", "epoch"}


def _sample_rows(samples: Iterable[tuple[str, dict]], log: Path, system: str, task: str) -> pd.DataFrame:
    rows: list[dict[str, Any]] = []
    seen: set[tuple[str, int]] = set()
    score_cols: set[str] = set()
    for where, sample in samples:
        sample_id = sample.get("id")
        if isinstance(sample_id, bool) or not isinstance(sample_id, (str, int)):
            raise field_error(log, f"{where}.id", f"expected a string or integer id, got {sample_id!r}")
        epoch = sample.get("epoch", 1)
        if isinstance(epoch, bool) or not isinstance(epoch, int):
            raise field_error(log, f"{where}.epoch", f"expected an integer, got {epoch!r}")
        key = (str(sample_id), epoch)
        if key in seen:
            raise field_error(log, where, f"sample {sample_id!r} epoch {epoch} appears twice")
        seen.add(key)
        row: dict[str, Any] = {"system": system, "task": task, "id": str(sample_id), "epoch": epoch}
        scores = sample.get("scores") or {}
        if not isinstance(scores, dict):
            raise field_error(log, f"{where}.scores", "expected an object (scorer -> score)")
        for scorer, score in scores.items():
            value = score.get("value") if isinstance(score, dict) else None
            if isinstance(value, dict):
                for sub, v in value.items():
                    row[f"{scorer}/{sub}"] = _score(v, log, f"{where}.scores.{scorer}.value.{sub}")
                    score_cols.add(f"{scorer}/{sub}")
            else:
                row[str(scorer)] = _score(value, log, f"{where}.scores.{scorer}.value")
                score_cols.add(str(scorer))
        metadata = sample.get("metadata") or {}
        if isinstance(metadata, dict):
            for field, v in metadata.items():
                if isinstance(v, (str, int, float, bool)) and not (isinstance(v, float) and not math.isfinite(v)):
                    row[f"meta:{field}"] = v
        rows.append(row)
    if not rows:
        raise InputError(f"{log}: the log holds no samples (was it written with --no-log-samples?)")
    table = pd.DataFrame(rows)
    names = {}
    for col in table.columns:
        if col.startswith("meta:"):
            field = col[5:]
            names[col] = f"metadata_{field}" if field in _RESERVED or field in score_cols else field
    table = table.rename(columns=names)
    return table


def _mean_over_epochs(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per sample: score columns averaged over epochs, the rest (metadata) from the first."""
    keys = ["system", "task", "id"]
    numeric = [c for c in frame.columns if c not in keys and c != "epoch" and frame[c].dtype == float]
    first = frame.drop(columns=["epoch", *numeric]).groupby(keys, sort=False).first()
    means = frame.groupby(keys, sort=False)[numeric].mean()
    out = first.join(means).reset_index()
    out.insert(3, "n_epochs", frame.groupby(keys, sort=False).size().to_numpy())
    return out


def _score(value: Any, log: Path, field: str) -> float:
    out = value_to_float(value)
    if out is None:
        raise field_error(log, field, f"score value {str(value)[:40]!r} is not C/I/P/N, a number, yes/no or "
                                      "true/false (Inspect would count it as 0 with a warning)")
    if not math.isfinite(out):
        return math.nan
    return out
