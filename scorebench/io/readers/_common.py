"""What every result-file reader shares: strict JSON loading, one-line errors, provenance.

Result files come from other tools and are untrusted. A reader never uses half a file:
malformed or truncated JSON, a missing field or a value of the wrong type raises an
:class:`~scorebench.core.errors.InputError` naming the file and the field.

Every byte a reader uses goes through :func:`read_bytes` (or :func:`head_bytes` for a
format sniff), which

* reads only regular files (a FIFO, a device or a socket in a results folder is refused
  when named and skipped when listed, never opened: opening a FIFO would block forever);
* inside :func:`confine_reads` (a board spec's build), checks the *resolved* path (after
  following every symbolic link) against the allowed folders, so a link in a confined
  results folder cannot read outside it.

:func:`load_json` and :func:`jsonl_records` refuse duplicate object keys (the last would
silently win) and numbers too large for a float64 (a 400-digit ``main_score`` would raise
``OverflowError`` later, a 5000-digit one Python's int-string limit, ``1e400`` would become
infinity), naming the field. The constants ``NaN``/``Infinity`` are kept: the tools write
them for undefined scores, and each reader decides per field.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import stat
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import pandas as pd

from scorebench.core.errors import InputError

__all__ = ["load_json", "jsonl_records", "field_error", "Provenance", "require", "as_number", "read_bytes",
           "head_bytes", "regular_files", "is_regular_file", "confine_reads", "check_confined", "gunzip",
           "plain_name", "check_runs"]

# Folders reads are confined to (resolved paths), or None when reads are not confined.
_CONFINED: ContextVar[tuple[Path, ...] | None] = ContextVar("scorebench_confined_reads", default=None)
# The most digits an integer in a result file may have: 10**308 is the largest power of ten
# below the float64 maximum (~1.8e308); longer integers cannot be a score.
_MAX_INT_DIGITS = 308


@contextlib.contextmanager
def confine_reads(roots: Iterable[str | os.PathLike] | None) -> Iterator[None]:
    """Within the block, readers may read only files whose resolved path lies under ``roots``.

    ``None`` lifts the confinement (``--allow-outside``). The leaderboard builder wraps each
    spec's sources in this, so a symbolic link inside a confined results folder (a result
    file or ``model_meta.json`` pointing at ``/etc/...``) is refused rather than followed.

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> with confine_reads([folder]):
    ...     read_bytes(Path("/etc/hostname"))
    Traceback (most recent call last):
    ...
    scorebench.core.errors.InputError: /etc/hostname: resolves outside the folders this spec may read; refused
    """
    token = _CONFINED.set(None if roots is None else tuple(Path(os.path.realpath(r)) for r in roots))
    try:
        yield
    finally:
        _CONFINED.reset(token)


def check_confined(path: str | os.PathLike) -> None:
    """Raise unless ``path``'s resolved form lies under the folders of :func:`confine_reads` (if active)."""
    roots = _CONFINED.get()
    if roots is None:
        return
    real = Path(os.path.realpath(path))
    if not any(real == root or root in real.parents for root in roots):
        raise InputError(f"{path}: resolves outside the folders this spec may read; refused")


def is_regular_file(path: str | os.PathLike) -> bool:
    """True when ``path`` (links followed) is a regular file: not a folder, FIFO, device or socket."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def regular_files(paths: Iterable[Path]) -> list[Path]:
    """The regular files among ``paths`` (what a reader lists; FIFOs and the like are skipped)."""
    return [p for p in paths if is_regular_file(p)]


def _open_regular(path: Path) -> int:
    """A descriptor of ``path`` opened without blocking, after checking it is a regular file."""
    check_confined(path)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise InputError(f"{path}: not a regular file (a folder, FIFO, device or socket); refused")
    return fd


def read_bytes(path: Path) -> bytes:
    """The bytes of the regular file ``path`` (confinement and file type checked; see the module)."""
    with os.fdopen(_open_regular(Path(path)), "rb") as fh:
        return fh.read()


def head_bytes(path: Path, size: int = 4096) -> bytes:
    """The first ``size`` bytes of ``path`` (of its decompressed content when it ends in ``.gz``),
    or ``b""`` when it is not a readable regular file or stream (format sniffing)."""
    import gzip

    try:
        with os.fdopen(_open_regular(Path(path)), "rb") as fh:
            if Path(path).name.endswith(".gz"):
                with gzip.GzipFile(fileobj=fh, mode="rb") as inflated:
                    return inflated.read(size)
            return fh.read(size)
    except (OSError, EOFError, InputError):
        return b""


class _DuplicateKey(ValueError):
    """An object with one key twice (raised inside the JSON parser, turned into a field error)."""


class _TooLong:
    """Placeholder of a number a float64 cannot hold (found and reported after parsing)."""

    def __init__(self, problem: str) -> None:
        self.problem = problem


def _pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in items:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def _loads(text: str | bytes, path: Path, where: str = "") -> Any:
    """``json.loads`` with the duplicate-key and big-integer guards; ``where`` prefixes field names."""
    too_long: list[_TooLong] = []

    def parse_int(digits: str) -> Any:
        n = len(digits.lstrip("-"))
        if n > _MAX_INT_DIGITS:
            too_long.append(_TooLong(f"an integer of {n} digits is out of range for a number"))
            return too_long[-1]
        return int(digits)

    def parse_float(literal: str) -> Any:
        number = float(literal)
        if math.isinf(number):  # a finite literal such as 1e400 (Infinity itself is a constant, kept)
            too_long.append(_TooLong(f"the number {literal[:40]} is out of range for a float64"))
            return too_long[-1]
        return number

    try:
        value = json.loads(text, parse_int=parse_int, parse_float=parse_float, object_pairs_hook=_pairs)
    except _DuplicateKey as exc:
        raise field_error(path, where + str(exc.args[0]), "appears twice in one object; refusing to guess "
                          "which value counts") from None
    if too_long:
        found = _find(value, too_long[0])
        raise field_error(path, where + (found or "(a number)"), too_long[0].problem)
    return value


def _find(value: Any, target: object, prefix: str = "") -> str | None:
    """The dotted path of ``target`` inside a parsed JSON value."""
    stack = [(value, prefix)]
    while stack:
        node, name = stack.pop()
        if node is target:
            return name or "(top level)"
        if isinstance(node, dict):
            stack.extend((v, f"{name}.{k}" if name else str(k)) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, f"{name}[{i}]") for i, v in enumerate(node))
    return None


def field_error(path: str | os.PathLike, field: str, problem: str) -> InputError:
    """``InputError("<path>: field '<field>': <problem>")``, the readers' one error shape."""
    return InputError(f"{path}: field {field!r}: {problem}")


def load_json(path: Path, data: bytes | None = None) -> Any:
    """Parse a JSON file (``data`` when its bytes were already read); one-line error if not JSON.

    ``NaN``/``Infinity`` are accepted (the tools write them for undefined scores); readers
    decide per field whether a non-finite value is a missing cell or an error.
    """
    if data is None:
        data = read_bytes(path)
    if not data.strip():
        raise InputError(f"{path}: the file is empty; expected JSON")
    try:
        return _loads(data, path)
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text at byte {exc.start}") from None
    except json.JSONDecodeError as exc:
        at_end = exc.pos >= len(exc.doc.rstrip()) - 1 or exc.msg.startswith("Unterminated string")
        hint = " (the file looks truncated)" if at_end else ""
        raise InputError(f"{path}: invalid JSON: {_where(exc)}{hint}") from None


def _where(exc: json.JSONDecodeError) -> str:
    """``"<problem> at line L, column C"`` without doubling the ``at`` some messages end with."""
    msg = exc.msg[:-3] if exc.msg.endswith(" at") else exc.msg
    return f"{msg} at line {exc.lineno}, column {exc.colno}"


def jsonl_records(path: Path, data: bytes) -> list[tuple[int, Any]]:
    """``(line number, value)`` of each non-blank line of a JSON Lines file; one-line error otherwise."""
    try:
        text = data.decode("utf-8", errors="strict")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(f"{path}: line {line}: not UTF-8 text (byte {exc.start})") from None
    out = []
    lines = text.split("\n")  # not splitlines(): U+2028 may sit in a string
    last = max((i for i, line in enumerate(lines, start=1) if line.strip()), default=0)
    for number, line in enumerate(lines, start=1):
        if line.strip():
            try:
                out.append((number, _loads(line, path, f"line {number}.")))
            except json.JSONDecodeError as exc:
                at_end = number == last and (exc.pos >= len(line.rstrip()) - 1
                                             or exc.msg.startswith("Unterminated string"))
                hint = "; truncated file?" if at_end else ""
                raise InputError(f"{path}: line {number}: invalid JSON ({exc.msg.removesuffix(' at')} at "
                                 f"column {exc.colno}{hint})") from None
    return out


def check_runs(path: Path, runs: list[Path], system: str | None, *, missing: str, unit: str, units: str,
               by: str | None = None) -> None:
    """Refuse an empty list of ``runs`` found under ``path`` (``missing`` says what was looked for), and a
    ``system`` name given for several runs (``by``: the option value that names each run instead).

    Examples
    --------
    >>> check_runs(Path("out"), [Path("a"), Path("b")], "m", missing="no log found", unit="log", units="logs",
    ...            by="file")
    Traceback (most recent call last):
    ...
    scorebench.core.errors.InputError: system='m' names one log, but out holds 2 logs; use system='file'
    """
    if not runs:
        raise InputError(f"{path}: {missing}")
    if system is not None and system != by and len(runs) > 1:
        hint = f"; use system={by!r}" if by is not None else ""
        raise InputError(f"system={system!r} names one {unit}, but {path} holds {len(runs)} {units}{hint}")


def plain_name(path: Path) -> str:
    """The file name without a trailing ``.gz`` (``results.json.gz`` -> ``results.json``)."""
    return path.name[:-3] if path.name.endswith(".gz") else path.name


def gunzip(path: Path, data: bytes) -> bytes:
    """``data`` decompressed when ``path`` ends in ``.gz``, else unchanged.

    The decompressed size is bounded like a plain file read into memory
    (:func:`scorebench.core.resources.check_allocation`), checked chunk by chunk, so a small
    compressed bomb is refused before it is inflated; a truncated or corrupt stream is an
    :class:`InputError` naming the file.
    """
    if not path.name.endswith(".gz"):
        return data
    import zlib

    from scorebench.core.resources import available_memory, format_bytes

    limit = int(0.5 * available_memory())
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    out, size, rest = [], 0, data
    try:
        while rest:
            chunk = inflater.decompress(rest, 1 << 24)
            size += len(chunk)
            if size > limit:
                raise InputError(f"{path}: decompresses to more than {format_bytes(limit)}, over half the "
                                 "available memory; refusing to inflate it")
            out.append(chunk)
            rest = inflater.unconsumed_tail
            if inflater.eof:
                break
        if not inflater.eof:
            raise InputError(f"{path}: the gzip stream ends early (truncated file?)")
    except zlib.error as exc:
        raise InputError(f"{path}: not a readable gzip file ({exc})") from None
    return b"".join(out)


def require(obj: Any, key: str, types: type | tuple[type, ...], path: Path, field: str | None = None) -> Any:
    """``obj[key]``, checked to be of ``types``; an error naming ``path`` and ``field`` otherwise."""
    name = field or key
    if not isinstance(obj, dict) or key not in obj:
        raise field_error(path, name, "missing")
    value = obj[key]
    if not isinstance(value, types) or isinstance(value, bool) and bool not in _tuple(types):
        raise field_error(path, name, f"expected {_names(types)}, got {type(value).__name__}")
    return value


def as_number(value: Any, path: Path, field: str) -> float:
    """A JSON number as float (booleans and text refused)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise field_error(path, field, f"expected a number, got {type(value).__name__} {str(value)[:40]!r}")
    return float(value)


def _tuple(types: type | tuple[type, ...]) -> tuple[type, ...]:
    return types if isinstance(types, tuple) else (types,)


def _names(types: type | tuple[type, ...]) -> str:
    names = {"dict": "an object", "list": "an array", "str": "a string", "int": "a number",
             "float": "a number", "bool": "true/false"}
    return " or ".join(dict.fromkeys(names.get(t.__name__, t.__name__) for t in _tuple(types)))


class Provenance:
    """Collects the files a reader used and stamps them onto the table's ``attrs``.

    ``attrs`` gets ``source_format``, ``source_path``, ``tool_version``, ``files_read``
    (count), ``files`` (paths relative to ``source_path``), ``sha256`` (over the sorted
    ``(relative path, file SHA-256)`` pairs, so it identifies the exact input) and any
    reader-specific extras.
    """

    def __init__(self, fmt: str, root: Path) -> None:
        self.fmt = fmt
        self.root = root
        self.files: dict[str, str] = {}

    def add(self, path: Path, data: bytes) -> None:
        self.files[self.relative(path)] = hashlib.sha256(data).hexdigest()

    def read(self, path: Path) -> bytes:
        """The bytes of ``path`` (decompressed when it ends in ``.gz``), recorded."""
        data = read_bytes(path)
        self.add(path, data)
        return gunzip(path, data)

    def relative(self, path: Path) -> str:
        try:
            rel = path.relative_to(self.root)
        except ValueError:
            return str(path)
        return str(rel) if str(rel) != "." else path.name

    def stamp(self, table: pd.DataFrame, versions: Iterable[str | None], **extra: Any) -> pd.DataFrame:
        digest = hashlib.sha256()
        for rel in sorted(self.files):
            digest.update(f"{rel}\0{self.files[rel]}\n".encode())
        found = sorted({str(v) for v in versions if v is not None})
        table.attrs.update(source_format=self.fmt, source_path=str(self.root),
                           tool_version=", ".join(found) if found else "unknown",
                           files_read=len(self.files), files=sorted(self.files), sha256=digest.hexdigest(),
                           **extra)
        return table
