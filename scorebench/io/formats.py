"""One registry of the file formats scorebench reads and writes.

Every format is a :class:`Format` record in :data:`FORMATS`: table files (CSV, TSV, Parquet,
JSON lines, JSON, Markdown), TREC runs, qrels and preference files, trec_eval's text output,
and the result files of evaluation harnesses (MTEB, lm-evaluation-harness, HELM, ...; some of
them, Every Eval Ever and Hugging Face, also written). A record names its reader, writer and
detector as ``"module:function"`` text, imported on first use, so listing the formats (the
CLI's ``--from`` and ``--format`` choices, ``scorebench import --help``, the docs' catalogue)
imports no reader. :func:`read_table <scorebench.io.tables.read_table>`,
:func:`read_results <scorebench.io.readers.read_results>` and the CLI all ask
:func:`detect_format` which format a path holds; none looks at a file itself.

Detection goes in four passes; the first that finds a match decides, and two or more
matches in it are an error (:func:`format_error`, one template naming the file and the
candidates):

1. formats recognised by content before their name (``content_first``: the harness formats,
   whose files are ``.json``/``.jsonl`` or folders);
2. formats claiming the file's suffix (``suffixes``: ``.csv``, ``.parquet``, ``.run``, ...);
3. formats recognised by content when no format claims the suffix (TREC files named
   ``qrels.test`` or ``*.txt``);
4. formats taking a generic suffix when nothing else did (``fallback_suffixes``: a ``.txt``
   file is CSV).

A format with ``auto=False`` (lm-eval multiple-choice, qrels with judgment groups) is never
detected, only named. The built-in formats are the ``FORMAT_RECORDS`` of
:mod:`scorebench.io.builtin_formats` and :mod:`scorebench.io.readers`, which :func:`load_formats`
registers before a lookup (as :mod:`scorebench.core.builtins` loads metrics); a plugin calls
:func:`register_format`.

Examples
--------
>>> [f.name for f in all_formats(family="table")]
['csv', 'tsv', 'parquet', 'jsonl', 'json', 'markdown']
>>> get_format("trec_run").yields
'ranking (run)'
>>> import pathlib, tempfile
>>> path = pathlib.Path(tempfile.mkdtemp()) / "qrels.test"
>>> _ = path.write_text("301 0 d1 1\\n")
>>> detect_format(path)
'trec_qrels'
>>> read(path).values.tolist()
[['301', 'd1', 1]]
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import Any

from scorebench.core.errors import InputError
from scorebench.core.records import Registry
from scorebench.core.validation import parse_bool

__all__ = ["Format", "FORMATS", "FAMILIES", "register_format", "get_format", "all_formats", "format_names",
           "detect_formats", "detect_format", "detect_source", "format_error", "read", "SOURCE_FAMILIES",
           "check_options", "load_formats",
           "FORMAT_PACKAGES"]

#: What a format is about: ``table`` (a scorebench table file), ``trec`` (TREC runs and qrels,
#: read as tables), ``judgments`` (trec_eval's other judgment files), ``trec_eval`` (its text
#: output), ``harness`` (an evaluation harness's result files).
FAMILIES = ("table", "trec", "judgments", "trec_eval", "harness")

#: The modules whose import registers the built-in formats (see :func:`load_formats`).
FORMAT_PACKAGES = ("scorebench.io.builtin_formats", "scorebench.io.readers")


@dataclass(frozen=True)
class Format:
    """A file format: how to recognise it, read it and (where scorebench does) write it.

    Attributes
    ----------
    name : str
        The name given as ``format=`` (API) and ``--from``/``--format`` (CLI).
    family : str
        One of :data:`FAMILIES`.
    files : str
        The files it covers (names, layout, the tool that writes them).
    yields : str
        The table (kind) a read gives; ``""`` for a format scorebench only writes.
    doc : str
        One line on the format.
    reader, writer, detector : str or None
        ``"module:function"`` of ``reader(path, **options) -> DataFrame``,
        ``writer(table, path, **options)`` and ``detector(path) -> bool``.
    suffixes : tuple of str
        File suffixes (lower case, with the dot) that name the format.
    fallback_suffixes : tuple of str
        Suffixes it takes only when no other format recognises the file (``.txt``).
    content_first : bool
        The detector runs before any suffix is looked at (harness results are ``.json``).
    auto : bool
        Whether detection considers it (False: the format must be named).
    bound : tuple of (str, object)
        Keyword arguments the reader always gets (``format="csv"`` for
        :func:`~scorebench.io.tables.read_table`).
    """

    name: str
    family: str
    files: str
    yields: str
    doc: str
    reader: str | None = None
    writer: str | None = None
    detector: str | None = None
    suffixes: tuple[str, ...] = ()
    fallback_suffixes: tuple[str, ...] = ()
    content_first: bool = False
    auto: bool = True
    bound: tuple[tuple[str, Any], ...] = ()

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValueError(f"format {self.name!r}: family {self.family!r} is not one of {', '.join(FAMILIES)}")
        if self.reader is None and self.writer is None:
            raise ValueError(f"format {self.name!r}: neither a reader nor a writer")
        for target in (self.reader, self.writer, self.detector):
            if target is not None and target.count(":") != 1:
                raise ValueError(f"format {self.name!r}: {target!r} is not 'module:function'")

    @property
    def readable(self) -> bool:
        """Whether scorebench reads the format."""
        return self.reader is not None

    @property
    def writable(self) -> bool:
        """Whether scorebench writes the format."""
        return self.writer is not None

    @property
    def module(self) -> str:
        """The module that reads the format (else the one that writes it)."""
        return (self.reader or self.writer or "").partition(":")[0]

    def function(self, role: str) -> Callable[..., Any]:
        """The ``"reader"``, ``"writer"`` or ``"detector"`` function, imported now."""
        target = getattr(self, role)
        if target is None:
            raise InputError(f"format {self.name!r} has no {role}; "
                             f"{'it is only written' if role == 'reader' else 'it is only read'}")
        module, _, attr = target.partition(":")
        return getattr(import_module(module), attr)

    def claims_suffix(self, path: str | os.PathLike, *, fallback: bool = False) -> bool:
        """Whether the name of ``path`` ends in one of the format's (fallback) suffixes."""
        suffix = Path(path).suffix.lower()
        return bool(suffix) and suffix in (self.fallback_suffixes if fallback else self.suffixes)

    def detect(self, path: str | os.PathLike) -> bool:
        """Whether this format recognises ``path`` (by its suffix, or its detector's look at it)."""
        if self.claims_suffix(path) or self.claims_suffix(path, fallback=True):
            return True
        return self.detector is not None and bool(self.function("detector")(Path(path)))

    def read(self, path: str | os.PathLike, **options: Any) -> Any:
        """Read ``path``; ``options`` are checked against the reader (:func:`check_options`)."""
        reader = self.function("reader")
        bound = dict(self.bound)
        given = check_options(self.name, reader, options, exclude=bound)
        return reader(Path(path), **bound, **given)

    def write(self, table: Any, path: str | os.PathLike, **options: Any) -> Any:
        """Write ``table`` to ``path`` (a file or folder, as the format has it); returns the writer's result."""
        writer = self.function("writer")
        return writer(table, path, **dict(self.bound), **options)


def _site(record: Format) -> str:
    return f"{record.name}:{record.reader or record.writer}"


#: Every registered format, in registration order.
FORMATS: Registry[Format] = Registry("format", site=_site)


def register_format(record: Format, *, replace: bool = False) -> Format:
    """Add ``record`` to :data:`FORMATS` (a new name, or the same definition again)."""
    return FORMATS.add(record.name, record, replace=replace)


def load_formats() -> None:
    """Register the ``FORMAT_RECORDS`` of the modules of :data:`FORMAT_PACKAGES` (imported by
    name, so this module imports no reader; cheap once done): every built-in format."""
    for name in FORMAT_PACKAGES:
        for record in getattr(import_module(name), "FORMAT_RECORDS", ()):
            if record.name not in FORMATS:
                register_format(record)


def all_formats(*, family: str | Iterable[str] | None = None, role: str | None = None,
                auto: bool | None = None) -> list[Format]:
    """The registered formats, optionally of some ``family``, that can be ``role``
    (``"read"``/``"write"``), and that detection considers (``auto``)."""
    load_formats()
    families = None if family is None else ({family} if isinstance(family, str) else set(family))
    out = []
    for record in FORMATS.values():
        if families is not None and record.family not in families:
            continue
        if (role == "read" and not record.readable) or (role == "write" and not record.writable):
            continue
        if auto is not None and record.auto != auto:
            continue
        out.append(record)
    return sorted(out, key=lambda f: FAMILIES.index(f.family))  # stable: registration order within a family


def format_names(**selection: Any) -> tuple[str, ...]:
    """The names of :func:`all_formats` ``(**selection)``."""
    return tuple(f.name for f in all_formats(**selection))


def get_format(name: str, *, among: Iterable[str] | None = None, what: str = "format") -> Format:
    """The format called ``name`` (one of ``among`` when given), or an error listing the choices."""
    load_formats()
    choices = tuple(FORMATS) if among is None else tuple(among)
    if name not in choices:
        raise InputError(f"unknown {what} {name!r}{FORMATS.suggest(name) if name not in FORMATS else ''}; "
                         f"expected one of {', '.join(choices)}")
    return FORMATS[name]


def _looked(record: Format, path: Path) -> bool:
    return record.detector is not None and bool(record.function("detector")(path))


def _detection_passes(path: Path) -> list[Callable[[Format], bool]]:
    """The four detection passes of the module docstring, in order."""
    passes: list[Callable[[Format], bool]] = [lambda f: f.content_first and _looked(f, path),
                                              lambda f: f.claims_suffix(path)]
    # a suffix some format owns (.json, .md) is not read by its content
    if path.is_file() and not any(f.claims_suffix(path) for f in all_formats()):
        passes.append(lambda f: not f.content_first and _looked(f, path))
    passes.append(lambda f: f.claims_suffix(path, fallback=True))
    return passes


def detect_formats(path: str | os.PathLike, among: Iterable[str] | None = None) -> list[str]:
    """The formats that recognise ``path`` in the first detection pass that finds any (see the
    module docstring); ``[]`` when none does. ``among``: the names to consider (default: every
    format detection considers)."""
    path = Path(path)
    names = None if among is None else set(among)
    candidates = [f for f in all_formats(auto=True) if names is None or f.name in names]
    for test in _detection_passes(path):
        found = [f.name for f in candidates if test(f)]
        if found:
            return found
    return []


def format_error(path: str | os.PathLike, matched: Iterable[str], considered: Iterable[str],
                 *, what: str = "file", how: str = "format=") -> InputError:
    """The one error for a path whose format cannot be told: no format or several match.

    Examples
    --------
    >>> print(format_error("x.dat", [], ["csv", "parquet"]))
    x.dat: cannot tell the format: not a file that any of the formats csv, parquet recognises; name it with format=
    >>> print(format_error("r", ["mteb", "eee"], ["mteb", "eee", "helm"], what="result file or folder"))
    r: cannot tell the format: it matches several formats (mteb, eee); name one of them with format=
    """
    matched, considered = list(matched), list(considered)
    if matched:
        reason = f"it matches several formats ({', '.join(matched)}); name one of them with {how}"
    else:
        reason = f"not a {what} that any of the formats {', '.join(considered)} recognises; name it with {how}"
    return InputError(f"{path}: cannot tell the format: {reason}")


def detect_format(path: str | os.PathLike, among: Iterable[str] | None = None, *, what: str = "file",
                  how: str = "format=") -> str:
    """The one format that recognises ``path`` (among ``among``), else :func:`format_error`.

    Examples
    --------
    >>> detect_format("scores.parquet"), detect_format("scores.txt", among=["csv", "trec_run"])
    ('parquet', 'csv')
    """
    considered = [f.name for f in all_formats(auto=True) if among is None or f.name in set(among)]
    found = detect_formats(path, considered)
    if len(found) != 1:
        raise format_error(path, found, considered, what=what, how=how)
    return found[0]


#: The families a command's input may be in: a harness's results or a table file.
SOURCE_FAMILIES = ("harness", "table", "trec")


def detect_source(path: str | os.PathLike, *, how: str = "format=") -> str | None:
    """The one readable format of :data:`SOURCE_FAMILIES` that recognises ``path`` (a harness's
    results before a table file, as the detection passes go), None for a folder no format
    recognises, else :func:`format_error`.

    Examples
    --------
    >>> detect_source("scores.parquet")
    'parquet'
    """
    considered = format_names(family=SOURCE_FAMILIES, role="read", auto=True)
    found = detect_formats(path, considered)
    if len(found) == 1:
        return found[0]
    if not found and Path(path).is_dir():
        return None
    raise format_error(path, found, considered, how=how)


def read(path: str | os.PathLike, format: str = "auto", **options: Any) -> Any:
    """Read ``path`` in the named ``format``, or in the one format detected (``"auto"``).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "run.txt").write_text("1 Q0 d1 1 2.5 bm25\\n")
    >>> read(folder / "run.txt")[["qid", "docid", "system"]].values.tolist()
    [['1', 'd1', 'bm25']]
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(2, "no such file or folder", str(path))
    readable = format_names(role="read")
    name = detect_format(path, readable) if format == "auto" else get_format(format, among=readable).name
    return FORMATS[name].read(path, **options)


def check_options(fmt: str, reader: Any, options: dict[str, Any], *, exclude: Iterable[str] = ()) -> dict[str, Any]:
    """The reader options checked against ``reader``'s signature: the one gate for API, CLI and specs.

    Unknown names (and those in ``exclude``, which the format fixes) are refused, listing the
    accepted ones; an option annotated ``bool`` is parsed strictly by
    :func:`~scorebench.core.validation.parse_bool` (``"no"`` is false, ``"maybe"`` an error);
    one annotated ``str`` must be text (a list of texts where the annotation allows one).
    Command-line values arrive as text and are converted here, so ``language=1`` is the
    language ``"1"``.

    Examples
    --------
    >>> def reader(path, *, dedup: bool = False, language: str | None = None): ...
    >>> check_options("arena", reader, {"dedup": "yes", "language": "1"})
    {'dedup': True, 'language': '1'}
    """
    fixed = set(exclude)
    params = {name: p for name, p in inspect.signature(reader).parameters.items()
              if p.kind is p.KEYWORD_ONLY and name not in fixed}
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
