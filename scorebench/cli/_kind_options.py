"""Command-line flags for table-kind options, generated from the kinds' declarations.

Every :class:`~scorebench.core.table_schema.Option` declared with ``flag=True`` (``--qrels``,
``--relevance-level``, ``--atol``, ...) becomes one flag of the commands that score result
tables; the others are given as ``-O key=value`` and converted to their declared type. The
``--help`` epilog lists every kind with its columns and options, from the same declarations.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from scorebench.core.errors import InputError
from scorebench.core.tables import all_kinds

__all__ = ["kind_option_flags", "given_kind_options", "kinds_epilog", "read_table_option"]


def _flagged() -> dict[str, tuple[Any, list[str], list[str]]]:
    """name -> (the first declaration, the kinds declaring it, their distinct help texts)."""
    out: dict[str, tuple[Any, list[str], list[str]]] = {}
    for kind in all_kinds("evaluate"):
        for option in kind.options:
            if option.flag:
                first, kinds, docs = out.setdefault(option.name, (option, [], []))
                kinds.append(kind.name)
                if option.doc not in docs:
                    docs.append(option.doc)
    return out


def _click_option(option: Any, kinds: list[str], docs: list[str]) -> Callable:
    # several kinds with their own help: the first clause of each, the rest in `scorebench kinds`
    doc = docs[0] if len(docs) == 1 else "; ".join(d.split(":")[0] for d in docs) + " (see `scorebench kinds`)"
    text = f"[{', '.join(kinds)}] {doc}"
    if option.type is bool:
        return click.option(option.cli_name, option.name, is_flag=True, default=None, help=text)
    if option.type == "table":
        return click.option(option.cli_name, option.name, type=click.Path(path_type=Path), default=None,
                            help=text + " (a file: TREC, CSV, Parquet, JSON Lines; with --engine dask also a glob)")
    kind = click.Choice(list(option.choices)) if option.choices else {float: float, int: int}.get(option.type, str)
    return click.option(option.cli_name, option.name, type=kind, default=None, help=text)


def kind_option_flags(command: Callable) -> Callable:
    """Decorator adding one flag per declared ``flag=True`` kind option (value None when absent)."""
    for name, (option, kinds, docs) in sorted(_flagged().items(), reverse=True):
        command = _click_option(option, kinds, docs)(command)
    return command


def given_kind_options(flags: dict[str, Any], engine: str = "pandas") -> dict[str, Any]:
    """The kind options given as flags (absent ones dropped; table options read from their files)."""
    declared = _flagged()
    out = {}
    for name, value in flags.items():
        if value is None:
            continue
        option = declared[name][0]
        out[name] = read_table_option(option.cli_name, value, engine) if option.type == "table" else value
    return out


def read_table_option(flag: str, path: Path, engine: str) -> Any:
    """A table option's file in memory, or (Dask engine, a glob or folder) a lazily read Dask
    table; TREC qrels and prefs files are passed as paths, which the evaluation plan reads in the
    formats the kind's option declares (:attr:`~scorebench.core.table_schema.Option.formats`)."""
    from scorebench.evaluation.dask_engine import read_dask
    from scorebench.io.tables import read_table

    if engine == "dask" and (any(c in str(path) for c in "*?[") or path.is_dir()):
        return read_dask(str(path))
    if not path.is_file():
        raise InputError(f"{flag}: file not found: {path}")
    from scorebench.io.formats import detect_formats, format_names

    among = format_names(family=("table", "trec", "judgments"), role="read")
    if engine == "pandas" and {"trec_qrels", "trec_prefs"} & set(detect_formats(path, among)):
        return str(path)  # read by the plan in the kind's declared formats: diversity and prefs keep their fields
    return read_table(path)


def kinds_epilog() -> str:
    """Every result-table kind with its declared columns and options, for ``--help``."""
    lines = ["\b", "Table kinds (--kind; default: the kind the metrics read):"]
    for kind in all_kinds("evaluate"):
        lines.append(f"  {kind.name}: {', '.join(c.name + ('' if c.required else '?') for c in kind.columns)}"
                     + (f"  [options: {', '.join(kind.option_names)}]" if kind.options else ""))
    lines.append("(? = optional column; `scorebench kinds` describes each column and option)")
    return "\n".join(lines)
