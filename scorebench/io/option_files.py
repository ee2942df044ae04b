"""Files given as a kind's table options (``qrels=``), read before the kind runs.

A table kind declares which file formats an option's path may hold
(:attr:`scorebench.core.table_schema.Option.formats`, e.g. ``("trec_qrels", "table")`` for the
ranking kind's qrels); the evaluation layer calls :func:`read_options` on the checked options,
so a kind's extractor receives DataFrames and never opens a file (``metrics/`` imports no
``io/``). Reading goes through the format registry (:mod:`scorebench.io.formats`).

Examples
--------
>>> import pathlib, tempfile
>>> path = pathlib.Path(tempfile.mkdtemp()) / "qrels.test"
>>> _ = path.write_text("301 0 d1 1\\n")
>>> choose_format(path, ("trec_qrels", "table"))
'trec_qrels'
>>> read_option_file(path, "qrels", ("trec_qrels", "table")).values.tolist()
[['301', 'd1', 1]]
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from scorebench.core.errors import InputError
from scorebench.core.table_schema import Option
from scorebench.io.formats import all_formats, get_format
from scorebench.io.tables import read_table

__all__ = ["TABLE_FILES", "choose_format", "read_option_file", "read_options"]

#: The name, among an option's formats, of any table file (CSV, TSV, Parquet, JSON lines,
#: JSON), read by :func:`scorebench.io.tables.read_table` with its own detection.
TABLE_FILES = "table"


def _claims_suffix(name: str, path: Path) -> bool:
    if name == TABLE_FILES:
        return any(f.claims_suffix(path) for f in all_formats(family="table", role="read"))
    return get_format(name).claims_suffix(path)


def _recognises_content(name: str, path: Path) -> bool:
    if name == TABLE_FILES:
        return False
    record = get_format(name)
    return record.detector is not None and bool(record.function("detector")(path))


def choose_format(path: str | os.PathLike, formats: Sequence[str]) -> str:
    """The one of ``formats`` to read ``path`` with: the first whose detector recognises the
    file's content, else the first that claims its suffix, else the first."""
    if not formats:
        raise ValueError("choose_format: no formats given")
    path = Path(path)
    for test in (_recognises_content, _claims_suffix):
        found = [name for name in formats if test(name, path)]
        if found:
            return found[0]
    return formats[0]


def read_option_file(path: str | os.PathLike, name: str, formats: Sequence[str]) -> pd.DataFrame:
    """Read the file given as option ``name`` in the format :func:`choose_format` picks.

    A missing file is one error naming the option and the path
    (``qrels: file not found: 'q.txt'``); a malformed file, the reader's error (path and line).
    """
    text = os.fspath(path)
    if not os.path.isfile(text):
        raise InputError(f"{name}: file not found: {text!r}")
    chosen = choose_format(text, formats)
    if chosen == TABLE_FILES:
        return read_table(text)
    return get_format(chosen).read(text)


def read_options(declared: Sequence[Option], options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` with every path given for an option that declares ``formats`` read into a
    DataFrame (other values unchanged)."""
    out = dict(options)
    for option in declared:
        value = out.get(option.name)
        if option.formats and isinstance(value, (str, os.PathLike)):
            out[option.name] = read_option_file(value, option.name, option.formats)
    return out
