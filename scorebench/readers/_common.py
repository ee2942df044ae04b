"""What every result-file reader shares: strict JSON loading, one-line errors, provenance.

Result files come from other tools and are untrusted. A reader never uses half a file:
malformed or truncated JSON, a missing field or a value of the wrong type raises an
:class:`~scorebench.errors.InputError` naming the file and the field.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import InputError

__all__ = ["load_json", "jsonl_records", "field_error", "Provenance", "require", "as_number", "gunzip",
           "plain_name"]


def field_error(path: str | os.PathLike, field: str, problem: str) -> InputError:
    """``InputError("<path>: field '<field>': <problem>")``, the readers' one error shape."""
    return InputError(f"{path}: field {field!r}: {problem}")


def load_json(path: Path, data: bytes | None = None) -> Any:
    """Parse a JSON file (``data`` when its bytes were already read); one-line error if not JSON.

    ``NaN``/``Infinity`` are accepted (the tools write them for undefined scores); readers
    decide per field whether a non-finite value is a missing cell or an error.
    """
    if data is None:
        data = path.read_bytes()
    if not data.strip():
        raise InputError(f"{path}: the file is empty; expected JSON")
    try:
        return json.loads(data)
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
    out = []
    lines = data.decode("utf-8", errors="strict").splitlines()
    last = max((i for i, line in enumerate(lines, start=1) if line.strip()), default=0)
    for number, line in enumerate(lines, start=1):
        if line.strip():
            try:
                out.append((number, json.loads(line)))
            except json.JSONDecodeError as exc:
                at_end = number == last and (exc.pos >= len(line.rstrip()) - 1
                                             or exc.msg.startswith("Unterminated string"))
                hint = "; truncated file?" if at_end else ""
                raise InputError(f"{path}: line {number}: invalid JSON ({exc.msg.removesuffix(' at')} at "
                                 f"column {exc.colno}{hint})") from None
    return out


def plain_name(path: Path) -> str:
    """The file name without a trailing ``.gz`` (``results.json.gz`` -> ``results.json``)."""
    return path.name[:-3] if path.name.endswith(".gz") else path.name


def gunzip(path: Path, data: bytes) -> bytes:
    """``data`` decompressed when ``path`` ends in ``.gz``, else unchanged.

    The decompressed size is bounded like a plain file read into memory
    (:func:`scorebench.resources.check_allocation`), checked chunk by chunk, so a small
    compressed bomb is refused before it is inflated; a truncated or corrupt stream is an
    :class:`InputError` naming the file.
    """
    if not path.name.endswith(".gz"):
        return data
    import zlib

    from ..resources import available_memory, format_bytes

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
        data = path.read_bytes()
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
