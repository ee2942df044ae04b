"""The declaration vocabulary of table kinds: :class:`Column` and :class:`Option`.

Every table kind (:func:`scorebench.core.tables.register_kind`) declares the columns it reads and
the options it accepts. From that one declaration come

* validation at the boundary: :meth:`Column.find` / :func:`check_declared_columns` (unique
  column names, every required column present, value types and constraints with one message
  template: ``column 'p': value 1.5 outside [0, 1] in data row 3; expected probabilities in [0, 1]``) and
  :meth:`Option.coerce` (an option's type and choices);
* the command line: ``scorebench evaluate`` grows one flag per option declared with
  ``flag=True`` and parses ``-O key=value`` with the option's declared type;
* documentation: ``scorebench kinds``, the ``--help`` epilog and the README's table
  reference are rendered from the declarations (:func:`describe_columns`).

Examples
--------
>>> import pandas as pd
>>> cols = (Column("y", "binary", "the outcome"), Column("p", "probability", "P(y = 1)"))
>>> describe_columns(cols)
'y (0 or 1): the outcome; p (probability in [0, 1]): P(y = 1)'
>>> check_declared_columns(pd.DataFrame({"y": [1]}), cols, "binary")
Traceback (most recent call last):
...
scorebench.core.errors.InputError: kind 'binary': missing column(s) ['p']; the table has: y
>>> Option("atol", float, 1e-6, "tolerance").coerce("1e-3", "multiclass")
0.001
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.core.validation import check_binary, check_in_range, describe_rows, parse_bool, show_value

__all__ = ["Column", "Option", "COLUMN_TYPES", "OPTION_TYPES", "check_unique_columns", "check_declared_columns",
           "check_declared_values", "describe_columns", "describe_options"]

# type -> how it reads in documentation and error messages
COLUMN_TYPES = {
    "number": "number",
    "binary": "0 or 1",
    "probability": "probability in [0, 1]",
    "count": "integer >= 0",
    "label": "label",
    "vector": "list of numbers",
    "any": "any",
}
# option type -> (name in messages, converter from command-line text)
OPTION_TYPES: dict[Any, str] = {float: "a number", int: "an integer", bool: "true or false", str: "text",
                                "table": "a table (DataFrame or file path)", "any": "a value"}


@dataclass(frozen=True)
class Column:
    """One column (or family of columns) of a table kind.

    Parameters
    ----------
    name : str
        The column name, or how a family of columns is written in documentation (``m<j>``).
    type : str
        One of :data:`COLUMN_TYPES`: ``number`` (finite float), ``binary`` (0/1),
        ``probability`` ([0, 1]), ``count`` (integer >= 0), ``label`` (text or integer),
        ``vector`` (a list of numbers per cell) or ``any``.
    doc : str
        What the column means.
    required : bool
        Whether every table of the kind has it. Columns of an alternative layout (a long
        ensemble's ``member``/``value``) are declared optional and the kind's extractor
        says which layout it found.
    aliases : tuple of str
        Other accepted names (``model_a`` for ``a``).
    pattern : str, optional
        A regular expression matched in full against column names, for a family of columns
        (``m\\d+``); a required family needs at least one match.
    """

    name: str
    type: str = "number"
    doc: str = ""
    required: bool = True
    aliases: tuple[str, ...] = ()
    pattern: str | None = None

    def __post_init__(self) -> None:
        if self.type not in COLUMN_TYPES:
            raise ValueError(f"column {self.name!r}: unknown type {self.type!r}; expected one of {list(COLUMN_TYPES)}")

    @property
    def placeholder(self) -> bool:
        """A name in angle brackets without a pattern (``<task>``) stands for columns the
        kind recognises itself; it is documented, not looked up."""
        return self.pattern is None and self.name.startswith("<")

    def find(self, columns: Sequence[Any]) -> list[str]:
        """The table columns this declaration names: every match of a pattern, or the first
        of ``name`` and ``aliases`` present."""
        if self.pattern is not None:
            return [c for c in columns if isinstance(c, str) and re.fullmatch(self.pattern, c)]
        return [n for n in (self.name, *self.aliases) if n in columns][:1]

    def describe(self) -> str:
        """``name (type): doc`` as documentation shows it."""
        names = " or ".join((self.name, *self.aliases))
        note = COLUMN_TYPES[self.type] + ("" if self.required else ", optional")
        return f"{names} ({note})" + (f": {self.doc}" if self.doc else "")


@dataclass(frozen=True)
class Option:
    """One keyword option of a table kind (``evaluate(..., qrels=...)``, ``-O atol=1e-3``).

    Parameters
    ----------
    name : str
        The keyword.
    type : {float, int, bool, str, "table", "any"}
        What the value is; a ``"table"`` is a DataFrame (on the command line a file path).
    default : any
        The value when the option is not given (``None``: the kind decides).
    doc : str
        One line of help, shown by ``scorebench evaluate --help`` and ``scorebench kinds``.
    choices : tuple, optional
        The accepted values, when they are few.
    flag : bool
        Whether ``scorebench evaluate`` has a flag ``--<name>`` for it (otherwise ``-O``).
    formats : tuple of str
        For a ``"table"`` option: the file formats (names in :mod:`scorebench.io.formats`, or
        ``"table"`` for any table file) a path given for it may hold, in order of preference.
        The evaluation layer reads such a path before the kind runs (the first format whose
        detector recognises the file's content, else the first that claims its suffix, else
        the first; see :func:`scorebench.io.option_files.read_option_file`), so the kind's
        extractor receives a DataFrame and checks its columns, never a file.
    """

    name: str
    type: Any = float
    default: Any = None
    doc: str = ""
    choices: tuple[Any, ...] = ()
    flag: bool = False
    formats: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.type not in OPTION_TYPES:
            raise ValueError(f"option {self.name!r}: unknown type {self.type!r}")
        if self.formats and self.type != "table":
            raise ValueError(f"option {self.name!r}: formats= applies to options of type 'table'")

    @property
    def cli_name(self) -> str:
        return "--" + self.name.replace("_", "-")

    def coerce(self, value: Any, kind: str, *, owner: str = "kind", noun: str = "option") -> Any:
        """``value`` checked against the declaration; command-line text is converted.

        Errors follow one template naming the owner (``kind 'x'``, or ``metric 'ece'`` with
        ``owner="metric", noun="parameter"``), the option, what it expects and the value.
        """
        if value is None or self.type in ("any", "table"):
            return value
        converted = _convert(value, self.type)
        if converted is _INVALID:
            raise InputError(f"{owner} {kind!r}: {noun} {self.name!r} expects {OPTION_TYPES[self.type]}, "
                             f"got {value!r}")
        if self.choices and converted not in self.choices:
            raise InputError(f"{owner} {kind!r}: {noun} {self.name!r} expects one of "
                             f"{', '.join(map(repr, self.choices))}, got {value!r}")
        return converted

    def describe(self) -> str:
        choices = f" {{{', '.join(map(str, self.choices))}}}" if self.choices else ""
        default = "" if self.default is None else f", default {self.default!r}"
        return f"{self.name} ({OPTION_TYPES[self.type]}{choices}{default})" + (f": {self.doc}" if self.doc else "")


_INVALID = object()


def _convert(value: Any, to: Any) -> Any:
    if to is bool:
        try:
            return parse_bool(value, "option")
        except InputError:
            return _INVALID
    if isinstance(value, str):
        text = value.strip()
        try:
            number = float(text) if to is not str else text
        except ValueError:
            return _INVALID
        value = number
    if to is str:
        return value if isinstance(value, str) else _INVALID
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        return _INVALID
    if to is int:
        return int(value) if float(value).is_integer() else _INVALID
    return float(value)


def check_unique_columns(columns: Sequence[Any], where: str = "") -> None:
    """Raise naming repeated column names (the one duplicate-column check of the package).

    Examples
    --------
    >>> check_unique_columns(["y", "p", "y"])
    Traceback (most recent call last):
    ...
    scorebench.core.errors.InputError: duplicate column name(s) ['y']; expected unique column names
    """
    index = pd.Index(columns)
    if index.duplicated().any():
        dups = sorted({str(c) for c in index[index.duplicated()]})
        prefix = f"{where}: " if where else ""
        raise InputError(f"{prefix}duplicate column name(s) {dups}; expected unique column names")


def check_declared_columns(df: Any, columns: Sequence[Column], kind: str) -> dict[str, list[str]]:
    """Check a table against a kind's declared columns; the table columns each declaration names.

    Refuses a non-DataFrame, repeated column names and missing required columns (naming them
    and the columns the table has).
    """
    if not isinstance(df, pd.DataFrame):
        raise InputError(f"kind {kind!r}: expected a pandas DataFrame, got {type(df).__name__}")
    check_unique_columns(df.columns)
    found = {c.name: c.find(df.columns) for c in columns}
    missing = [c.name for c in columns if c.required and not c.placeholder and not found[c.name]]
    if missing:
        present = ", ".join(map(str, df.columns[:12])) + (" ..." if df.shape[1] > 12 else "")
        raise InputError(f"kind {kind!r}: missing column(s) {missing}; the table has: {present}")
    return found


def check_declared_values(column: Column, name: str, values: np.ndarray, rows: Sequence[Any] | None = None) -> None:
    """Check numeric ``values`` of column ``name`` against its declared type (NaN passes)."""
    where = f"column {name!r}"
    if column.type == "binary":
        check_binary(values, where, labels=rows, what="binary outcomes 0 or 1" + (f" ({column.doc})" if column.doc else ""))
    elif column.type == "probability":
        check_in_range(values, where, 0.0, 1.0, labels=rows, what="probabilities in [0, 1]")
    elif column.type == "count":
        bad = ((values < 0) | (values != np.round(values))) & ~np.isnan(values)
        if bad.any():
            raise InputError(f"{where}: value {show_value(values[bad][0])} in {describe_rows(bad, rows)}; "
                             "expected integers >= 0")


def describe_columns(columns: Sequence[Column]) -> str:
    """The declared columns as one line of documentation."""
    return "; ".join(c.describe() for c in columns)


def describe_options(options: Sequence[Option]) -> str:
    """The declared options as one line of documentation."""
    return "; ".join(o.describe() for o in options)

