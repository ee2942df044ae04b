"""Reading result tables and writing outputs, safely.

Result tables come from other people's systems and are untrusted: every reader turns
malformed input (bad encoding, ragged rows, duplicate columns, empty files, invalid JSON)
into an :class:`~scorebench.core.errors.InputError` naming the file and the problem. Every
writer is atomic: it writes a temporary file beside the target and renames it, so a
failure never leaves half a file.
"""

from __future__ import annotations

import csv
import html
import io
import json
import os
import re
import warnings
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.core.table_schema import check_unique_columns
from scorebench.io.atomic import atomic_write, check_writable, write_text_file
from scorebench.io.formats import detect_format as detect_by_registry, format_names

__all__ = ["read_table", "read_results", "write_table", "read_meta", "atomic_write", "check_writable",
           "render_markdown", "escape_markdown", "detect_format", "safe_cell", "safe_csv_table", "mark_bidi",
           "READ_FORMATS", "WRITE_FORMATS", "format_value", "format_column"]

#: The formats :func:`read_table` reads and :func:`write_table` writes (from the format
#: registry, :mod:`scorebench.io.formats`).
READ_FORMATS = format_names(family=("table", "trec"), role="read")
WRITE_FORMATS = format_names(family="table", role="write")


def detect_format(path: str | os.PathLike, fmt: str | None = None, *, allowed: Sequence[str] = READ_FORMATS) -> str:
    """The format named by ``fmt``, or the one of ``allowed`` that the format registry detects
    for ``path`` (its suffix; TREC files by their layout, :func:`scorebench.io.formats.detect_format`).

    Examples
    --------
    >>> detect_format("scores.pq"), detect_format("out.md", allowed=WRITE_FORMATS)
    ('parquet', 'markdown')
    """
    if fmt is None:
        return detect_by_registry(path, allowed, what="table file")
    if fmt not in allowed:
        raise InputError(f"{path}: unsupported format {fmt!r}; expected one of {', '.join(allowed)}")
    return fmt


def read_table(path: str | os.PathLike, *, format: str | None = None, encoding: str = "utf-8") -> pd.DataFrame:
    """Read a result table from CSV/TSV, Parquet, JSON Lines, JSON records or TREC files.

    Leading lines starting with ``#`` in CSV files (scorebench's own metadata header) are
    skipped. Column names must be unique.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = path.write_text("system,y,p\\na,1,0.9\\n")
    >>> read_table(path).shape
    (1, 3)
    """
    path = Path(path)
    fmt = detect_format(path, format)
    if not path.exists():
        raise FileNotFoundError(2, "no such file", str(path))
    if path.is_dir():
        raise InputError(f"{path}: is a directory; expected a file")
    if not path.is_file():  # a FIFO would block the reader forever; devices and sockets are no tables
        raise InputError(f"{path}: not a regular file (a FIFO, device or socket); expected a table file")
    if path.stat().st_size == 0:
        raise InputError(f"{path}: the file is empty; expected a header row and data")
    reader = _READERS[fmt]
    try:
        table = reader(path, encoding)
    except InputError:
        raise
    except RecursionError:
        raise InputError(f"{path}: the {fmt} is nested too deeply to read") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not valid {encoding} text at byte {exc.start}; "
                         "re-encode the file or pass its encoding") from None
    except (pd.errors.ParserError, csv.Error) as exc:
        raise InputError(f"{path}: malformed {fmt}: {' '.join(str(exc).split())}") from None
    except pd.errors.EmptyDataError:
        raise InputError(f"{path}: no columns found; expected a header row") from None
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise InputError(f"{path}: could not read as {fmt}: {' '.join(str(exc).split())[:300]}") from None
    check_unique_columns(table.columns, str(path))
    return table


def _metadata_lines(path: Path, encoding: str) -> int:
    count = 0
    with open(path, encoding=encoding, newline="") as handle:
        for line in handle:
            if not line.startswith("#"):
                break
            count += 1
    return count


def _read_delimited(sep: str) -> Callable[[Path, str], pd.DataFrame]:
    def read(path: Path, encoding: str) -> pd.DataFrame:
        skip = _metadata_lines(path, encoding)
        with open(path, encoding=encoding, newline="") as handle:
            for _ in range(skip):
                handle.readline()
            header = next(csv.reader([handle.readline()], delimiter=sep), [])
        if not header or all(not h.strip() for h in header):
            raise InputError(f"{path}: no header row found")
        dups = sorted({h for h, count in Counter(header).items() if count > 1})
        if dups:
            raise InputError(f"{path}: duplicate column name(s) {dups}; expected unique column names")
        with warnings.catch_warnings():
            # Rows longer than the header would otherwise become an index or be cut silently.
            warnings.simplefilter("error", pd.errors.ParserWarning)
            try:
                return pd.read_csv(path, sep=sep, skiprows=skip, encoding=encoding, engine="c",
                                   on_bad_lines="error", low_memory=False, index_col=False)
            except pd.errors.ParserWarning as exc:
                raise InputError(f"{path}: malformed rows: {exc} (some rows have more fields than "
                                 f"the header's {len(header)})") from None
    return read


def _read_parquet(path: Path, encoding: str) -> pd.DataFrame:
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    names = table.column_names
    if len(set(names)) != len(names):
        dups = sorted({n for n in names if names.count(n) > 1})
        raise InputError(f"{path}: duplicate column name(s) {dups}; expected unique column names")
    return table.to_pandas()


def _read_jsonl(path: Path, encoding: str) -> pd.DataFrame:
    records = []
    with open(path, encoding=encoding) as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            records.append(_json_object(line, path, number))
    if not records:
        raise InputError(f"{path}: no JSON records found")
    return pd.DataFrame.from_records(records)


def _json_object(text: str, path: Path, number: int) -> dict:
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: line {number}: invalid JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(value, dict):
        raise InputError(f"{path}: line {number}: expected a JSON object per line, got {type(value).__name__}")
    return value


def _reject_constant(name: str) -> float:
    # NaN/Infinity are not JSON; accepting them would smuggle non-finite values in silently.
    raise InputError(f"invalid JSON constant {name!r}; expected finite numbers or null")


def _read_json(path: Path, encoding: str) -> pd.DataFrame:
    with open(path, encoding=encoding) as handle:
        try:
            value = json.load(handle, parse_constant=_reject_constant)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}: invalid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    if isinstance(value, dict) and "scores" in value:  # scorebench's own JSON output
        value = value["scores"]
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise InputError(f"{path}: expected a JSON array of objects (records)")
    if not value:
        raise InputError(f"{path}: the JSON array is empty")
    return pd.DataFrame.from_records(value)


def _read_trec(which: str) -> Callable[[Path, str], pd.DataFrame]:
    def read(path: Path, encoding: str) -> pd.DataFrame:
        from scorebench.io import trec as io_trec

        return getattr(io_trec, f"read_trec_{which}")(path)
    return read


_READERS: dict[str, Callable[[Path, str], pd.DataFrame]] = {
    "csv": _read_delimited(","), "tsv": _read_delimited("\t"), "parquet": _read_parquet,
    "jsonl": _read_jsonl, "json": _read_json, "trec_run": _read_trec("run"),
    "trec_qrels": _read_trec("qrels"),
}


# --- writing ---------------------------------------------------------------------------


def format_value(value: Any, digits: int = 4) -> str:
    """Deterministic text for a cell: fixed decimals for floats, plain text otherwise."""
    if isinstance(value, (float, np.floating)):
        if np.isnan(value):
            return ""
        if np.isinf(value):
            return "inf" if value > 0 else "-inf"
        text = f"{value:.{digits}f}"
        return text[1:] if text.startswith("-") and not text.strip("-0.") else text  # no "-0.0000"
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ""
    return str(value)


def format_column(values: Any, digits: int = 4) -> list[str]:
    """Text for a column of numbers, keeping counts as counts.

    A column whose finite values are all whole numbers (Borda points, Copeland counts, ranks,
    sample sizes) prints as integers; one whose values are all multiples of 1/2, some beyond
    1 in size (Borda points with averaged ties), with one decimal; any other column with
    ``digits`` fixed decimals (:func:`format_value`). NaN prints as an empty cell.

    Examples
    --------
    >>> format_column([1381.0, 1203.0, float("nan")]), format_column([28.5, 24.0])
    (['1381', '1203', ''], ['28.5', '24.0'])
    >>> format_column([0.5, 1.0]), format_column([0.8129, -0.00001])
    (['0.5000', '1.0000'], ['0.8129', '0.0000'])
    """
    arr = np.asarray(values, dtype=np.float64).ravel()
    finite = arr[np.isfinite(arr)]
    if finite.size and np.abs(finite).max() < 2.0**53:
        if np.array_equal(finite, np.round(finite)):
            return [format_value(v, 0) if np.isfinite(v) else format_value(v) for v in arr]
        if np.array_equal(2 * finite, np.round(2 * finite)) and np.abs(finite).max() > 1:
            return [format_value(v, 1) if np.isfinite(v) else format_value(v) for v in arr]
    return [format_value(v, digits) for v in arr]


#: Unicode bidirectional controls: they can make a name display as a different one
#: (``U+202E`` reverses the text after it); rendered names show them as ``[U+202E]``.
BIDI_CONTROLS = frozenset("\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_BIDI_TABLE = {ord(c): f"[U+{ord(c):04X}]" for c in BIDI_CONTROLS}


def mark_bidi(text: str) -> str:
    """Replace bidirectional control characters with a visible ``[U+hhhh]`` mark.

    Examples
    --------
    >>> mark_bidi("abc\u202edef")
    'abc[U+202E]def'
    """
    return str(text).translate(_BIDI_TABLE)


_MD_ACTIVE = re.compile(r"\]\(|\]\[|\]:|!\[|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])|[*`~]|://|(?i:www)\.")


def _md_inert(match: re.Match) -> str:
    token = match.group(0)
    if token in ("](", "][", "]:"):
        return token[0] + "\\" + token[1]  # a backslash before ( or [ ends link syntax
    if token == "![":
        return "!\\["
    if token == "://":
        return "&#58;//"  # not a bare URL, so no autolink
    if token.lower() == "www.":
        return token[:3] + "&#46;"
    return "\\" + token


def escape_markdown(text: str) -> str:
    """Escape text for a Markdown table cell: inert and on one line.

    HTML is escaped (no raw tags, entities or ``<url>`` autolinks); pipes are escaped;
    link and image syntax (``](``, ``![``), emphasis and code markers (``*``, `````, ``~``,
    word-boundary ``_``) are backslash-escaped; bare URLs (``https://``, ``www.``) are
    broken with an entity so they are not autolinked; bidirectional controls are marked
    (:func:`mark_bidi`). The text renders as the characters it contains.

    Examples
    --------
    >>> escape_markdown("[Official](https://evil.example)")
    '[Official]\\\\(https&#58;//evil.example)'
    >>> escape_markdown("log_score")
    'log_score'
    """
    text = html.escape(mark_bidi(text), quote=False)
    text = text.replace("\\", "\\\\").replace("|", "\\|")
    text = _MD_ACTIVE.sub(_md_inert, text)
    return " ".join(text.splitlines()) if "\n" in text or "\r" in text else text


#: First characters that make a spreadsheet treat a text cell as a formula.
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: Any) -> Any:
    """A text cell made inert for spreadsheets: ``'`` before a leading ``= + - @``, tab or CR.

    Numbers (including negative ones) and missing values are returned unchanged; only text
    is touched. See OWASP, "CSV Injection".

    Examples
    --------
    >>> safe_cell("=cmd|' /C calc'!A0"), safe_cell(-1.5), safe_cell("-1.5"), safe_cell("ok")
    ("'=cmd|' /C calc'!A0", -1.5, "'-1.5", 'ok')
    """
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        return "'" + value
    return value


def safe_csv_table(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` for spreadsheets: every text cell (and column name) through :func:`safe_cell`,
    with bidirectional controls marked (:func:`mark_bidi`)."""
    def fix(value: Any) -> Any:
        return safe_cell(mark_bidi(value)) if isinstance(value, str) else value

    out = table.copy()
    for col in out.columns:
        if out[col].dtype == object or pd.api.types.is_string_dtype(out[col]):
            out[col] = out[col].map(fix)
    out.columns = [fix(c) for c in out.columns]
    return out


def render_markdown(table: pd.DataFrame, *, digits: int = 4, meta: Mapping[str, Any] | None = None) -> str:
    """Render a DataFrame as a GitHub Markdown table with escaped cells.

    Examples
    --------
    >>> import pandas as pd
    >>> print(render_markdown(pd.DataFrame({"system": ["a|b"], "value": [0.5]})))
    | system | value |
    | --- | --- |
    | a\\|b | 0.5000 |
    """
    header = "| " + " | ".join(escape_markdown(c) for c in table.columns) + " |"
    rule = "| " + " | ".join("---" for _ in table.columns) + " |"
    body = ["| " + " | ".join(escape_markdown(format_value(v, digits)) for v in row) + " |"
            for row in table.itertuples(index=False, name=None)]
    lines = [header, rule, *body]
    if meta:
        lines += ["", escape_markdown("; ".join(f"{k}: {v}" for k, v in meta.items()))]
    return "\n".join(lines)


def _meta(table: pd.DataFrame, meta: Mapping[str, Any] | None) -> dict[str, Any]:
    merged = {**{k: v for k, v in table.attrs.items() if _is_plain(v)}, **(meta or {})}
    return {k: merged[k] for k in sorted(merged)}


def _is_plain(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool)) or value is None


def _write_csv(table: pd.DataFrame, handle: io.TextIOBase, meta: dict[str, Any]) -> None:
    # Plain CSV (header first) so that pandas, DuckDB, R and spreadsheets read it as it is;
    # the metadata goes to the sidecar file written beside it (see write_table).
    table.to_csv(handle, index=False, lineterminator="\n")


def _write_json(table: pd.DataFrame, handle: io.TextIOBase, meta: dict[str, Any]) -> None:
    records = json.loads(table.to_json(orient="records", double_precision=15))
    json.dump({"meta": meta, "scores": records}, handle, indent=1, sort_keys=False, allow_nan=False)
    handle.write("\n")


def _write_markdown(table: pd.DataFrame, handle: io.TextIOBase, meta: dict[str, Any]) -> None:
    handle.write(render_markdown(table, meta=meta) + "\n")


META_SUFFIX = ".meta.json"  # CSV metadata sidecar: ``scores.csv`` -> ``scores.csv.meta.json``


def write_table(table: pd.DataFrame, path: str | os.PathLike, *, format: str | None = None,
                meta: Mapping[str, Any] | None = None, safe_csv: bool = False) -> Path:
    """Write ``table`` atomically as CSV, Parquet, JSON or Markdown; return the path.

    A CSV keeps text cells as they are unless ``safe_csv=True``: then a text cell starting
    with ``= + - @`` (or a tab/CR) gets a leading ``'`` (:func:`safe_cell`), so a spreadsheet
    does not run it as a formula. Use it for files meant for spreadsheets.

    Plain values in ``table.attrs`` (seed, bootstrap method, ...) and ``meta`` are written
    with the data: a JSON sidecar ``<path>.meta.json`` beside a CSV (the CSV itself stays
    plain, header first, so every CSV reader takes it), Parquet schema metadata, a ``meta``
    object in JSON, a footer line in Markdown. :func:`read_meta` reads them back.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "scores.csv"
    >>> t = pd.DataFrame({"system": ["a"], "value": [0.5]})
    >>> _ = write_table(t, out, meta={"seed": 3})
    >>> pd.read_csv(out).shape, read_meta(out)
    ((1, 2), {'seed': 3})
    """
    path = Path(path)
    fmt = detect_format(path, format, allowed=WRITE_FORMATS)
    info = _meta(table, meta)
    check_writable(path)
    if safe_csv and fmt == "csv":
        table = safe_csv_table(table)
    files: dict[Path, Callable[[Path], None]] = {}
    if fmt == "parquet":
        files[path] = lambda tmp: _write_parquet(table, tmp, info)
    else:
        writer = {"csv": _write_csv, "json": _write_json, "markdown": _write_markdown}[fmt]
        files[path] = lambda tmp: write_text_file(tmp, lambda handle: writer(table, handle, info))
        if fmt == "csv":
            sidecar = path.with_name(path.name + META_SUFFIX)
            text = json.dumps(info, indent=1, default=str, allow_nan=False) + "\n"
            files[sidecar] = lambda tmp: write_text_file(tmp, lambda handle: handle.write(text))
    atomic_write(files)
    return path


def _write_parquet(table: pd.DataFrame, tmp: Path, info: dict[str, Any]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    arrow = pa.Table.from_pandas(table, preserve_index=False)
    arrow = arrow.replace_schema_metadata({**(arrow.schema.metadata or {}),
                                           b"scorebench": json.dumps(info, default=str).encode()})
    pq.write_table(arrow, tmp)


def read_meta(path: str | os.PathLike) -> dict[str, Any]:
    """The metadata that :func:`write_table` stored with a table (``{}`` when there is none).

    CSV: the ``<path>.meta.json`` sidecar, or the ``# key: value`` lines that scorebench
    wrote before its CSV header until version 0.1 (values as text). Parquet: the schema
    metadata. JSON: the ``meta`` object.
    """
    path = Path(path)
    fmt = detect_format(path, None, allowed=WRITE_FORMATS)
    if fmt == "csv":
        sidecar = path.with_name(path.name + META_SUFFIX)
        if sidecar.is_file():
            return json.loads(sidecar.read_text(encoding="utf-8"))
        out = {}
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                if not line.startswith("#"):
                    break
                key, _, value = line[1:].strip().partition(": ")
                out[key] = value
        return out
    if fmt == "parquet":
        import pyarrow.parquet as pq

        raw = (pq.read_schema(path).metadata or {}).get(b"scorebench")
        return json.loads(raw) if raw else {}
    if fmt == "json":
        doc = json.loads(path.read_text(encoding="utf-8"))
        return dict(doc.get("meta", {})) if isinstance(doc, dict) else {}
    return {}


def read_results(path: str | os.PathLike, format: str = "auto", **options: Any) -> pd.DataFrame:
    """Read a harness's result file or folder (MTEB, ...) into a scorebench table.

    See :func:`scorebench.io.readers.read_results` (the readers live in :mod:`scorebench.io.readers`,
    one module per format).

    Examples
    --------
    >>> read_results("no/such/folder")
    Traceback (most recent call last):
    ...
    FileNotFoundError: [Errno 2] no such file or folder: 'no/such/folder'
    """
    from scorebench.io.readers import read_results as read_harness_results

    return read_harness_results(path, format=format, **options)
