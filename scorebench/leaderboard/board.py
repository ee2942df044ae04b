"""The board as plain data: sections of formatted cells plus their numbers, figures, provenance.

:mod:`scorebench.leaderboard.build` fills these from a spec; the section builders
(:mod:`scorebench.leaderboard.sections`) and the renderers (:mod:`scorebench.leaderboard.render`)
import them from here, so no section module imports the builder.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from scorebench.io.tables import format_value
from scorebench.leaderboard.spec import BoardSpec

__all__ = ["Board", "Section", "Figure", "pin", "cell", "slug", "split_tasks", "SIGNIFICANT_DIGITS"]

SIGNIFICANT_DIGITS = 10  # numbers in CSV/JSON are rounded to this many significant digits


@dataclass(frozen=True)
class Figure:
    """One plot: a file stem, a caption and the SVG text."""

    name: str
    caption: str
    svg: str


@dataclass(frozen=True)
class Section:
    """A titled table: display strings for Markdown/HTML and the numbers for CSV/JSON."""

    key: str
    title: str
    note: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    data: pd.DataFrame = field(repr=False)
    figures: tuple[Figure, ...] = ()
    groups: tuple[tuple[str, str], ...] = ()  # column -> group shown/hidden together on the page
    filters: tuple[tuple[str, str], ...] = ()  # column -> "cat" | "num": a filter on the page
    collapsed: tuple[str, ...] = ()  # column groups hidden until their toggle is ticked


@dataclass(frozen=True)
class Board:
    """Everything a renderer needs."""

    spec: BoardSpec
    sections: tuple[Section, ...]
    provenance: tuple[tuple[str, str], ...]

    @property
    def figures(self) -> tuple[Figure, ...]:
        return tuple(f for s in self.sections for f in s.figures)


def pin(value: Any) -> Any:
    """Round floats to :data:`SIGNIFICANT_DIGITS` so files do not depend on the last bits.

    Examples
    --------
    >>> pin(0.1 + 0.2), pin(np.int64(3)), pin(float("nan"))
    (0.3, 3, None)
    """
    if isinstance(value, (float, np.floating)):
        if not np.isfinite(value):
            return None if np.isnan(value) else float(value)
        return float(f"{float(value):.{SIGNIFICANT_DIGITS}g}")
    if isinstance(value, np.integer):
        return int(value)
    return value


def cell(value: float, low: float, high: float, digits: int) -> str:
    """``value [low, high]`` (the interval left out when it is not finite).

    Examples
    --------
    >>> cell(0.5, 0.25, 0.75, 3), cell(0.5, float("nan"), float("nan"), 3)
    ('0.500 [0.250, 0.750]', '0.500')
    """
    text = format_value(float(value), digits)
    if np.isfinite(low) and np.isfinite(high):
        text += f" [{format_value(float(low), digits)}, {format_value(float(high), digits)}]"
    return text


def digits_for(values: Any, digits: int) -> int:
    """Decimals for a column of numbers: 0 for counts, 1 for half-counts, else ``digits``.

    A statistic whose every value (estimates and interval ends) is a whole number (Copeland
    counts, Borda points) prints without decimals, one whose values are multiples of 1/2 and
    exceed 1 (Borda points with averaged ties) with one, so a reader never sees
    ``28.5000 [24.0000, 31.0000]``.

    Examples
    --------
    >>> digits_for([28.5, 24.0, 31.0], 4), digits_for([3.0, 1.0, float("nan")], 4), digits_for([0.5, 0.25], 4)
    (1, 0, 4)
    """
    arr = np.asarray(values, dtype=np.float64).ravel()
    arr = arr[np.isfinite(arr)]
    if not arr.size or np.abs(arr).max() >= 2.0**53:
        return digits
    if np.array_equal(arr, np.round(arr)):
        return 0
    if np.array_equal(2 * arr, np.round(2 * arr)) and np.abs(arr).max() > 1:
        return min(1, digits)
    return digits


def slug(text: str) -> str:
    """A file- and anchor-safe key from a label.

    Examples
    --------
    >>> slug("Chat Hard: v2")
    'chat-hard-v2'
    """
    out = "".join(c if c.isalnum() else "-" for c in str(text).lower())
    return "-".join(p for p in out.split("-") if p) or "x"


def split_tasks(table: pd.DataFrame) -> list[tuple[Any, pd.DataFrame]]:
    """(task, rows) pairs in task order (``[(None, table)]`` without a ``task`` column).

    Examples
    --------
    >>> t = pd.DataFrame({"task": ["b", "a", "b"], "x": [1, 2, 3]})
    >>> [(task, len(rows)) for task, rows in split_tasks(t)]
    [('a', 1), ('b', 2)]
    """
    if "task" not in table.columns:
        return [(None, table)]
    out = []
    for task in sorted(table["task"].dropna().unique().tolist(), key=str):
        sub = table[table["task"] == task]
        out.append((task, sub.dropna(axis=1, how="all").drop(columns="task")))
    return out
