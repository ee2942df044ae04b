"""Named conventions for reading a published leaderboard's wide table into task columns.

A leaderboard's headline number depends on how its columns become tasks: GLUE's ``Score``
averages nine tasks, each task's score being the mean of its reported metrics (``"F1/acc"``
cells averaged, MNLI matched and mismatched averaged into one task); Vote'n'Rank (Rofin et
al., 2023) instead keeps MNLI-m and MNLI-mm as two tasks and splits every ``"x/y"`` cell into
two half-weight columns (ten task units for GLUE). Both are records here, so a board or a
caller names the one it means (``convention="glue"``) instead of getting one silently.

Each :class:`Convention` says what happens to ``"x/y"`` pair cells (``pairs="split"``: two
columns ``<col>-a``/``<col>-b`` of weight 1/2 each; ``pairs="average"``: one column, the mean
of the two) and which columns merge into one task (their mean; missing if any part is
missing). The arithmetic mean of the resulting columns (with their weights) is then the
leaderboard's own average.

Examples
--------
>>> import pandas as pd
>>> from scorebench.aggregate import as_matrix
>>> t = pd.DataFrame({"CoLA": [60.0, 50.0], "MRPC": ["90.0/88.0", "80.0/70.0"],
...                   "MNLI-m": [86.0, 80.0], "MNLI-mm": [85.0, 79.0]}, index=["x", "y"])
>>> m = as_matrix(t, convention="glue")
>>> m.columns, m.values[0].tolist()
(('CoLA', 'MRPC', 'MNLI'), [60.0, 89.0, 85.5])
>>> as_matrix(t, convention="votenrank").columns
('CoLA', 'MRPC-a', 'MRPC-b', 'MNLI-m', 'MNLI-mm')
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from scorebench.core.errors import InputError
from scorebench.core.validation import check_choice

__all__ = ["Convention", "register_convention", "get_convention", "list_conventions", "PAIR_POLICIES"]

PAIR_POLICIES = ("split", "average")


@dataclass(frozen=True)
class Convention:
    """How a leaderboard's wide table becomes task columns.

    Attributes
    ----------
    name : str
        The convention's name (``convention=`` of :func:`~scorebench.aggregate.as_matrix`).
    pairs : {"split", "average"}
        ``"x/y"`` cells: two half-weight columns, or one column holding their mean.
    merge : tuple of (str, tuple of str)
        Tasks made of several columns: ``(task, (column, ...))``; the task's value is the
        mean of its columns (after ``pairs``), missing when any of them is missing.
    description : str
        One line on what the convention reproduces.
    citation : str
        Where the convention comes from.
    """

    name: str
    pairs: str
    merge: tuple[tuple[str, tuple[str, ...]], ...]
    description: str
    citation: str


_CONVENTIONS: dict[str, Convention] = {}


def register_convention(convention: Convention) -> Convention:
    """Add a convention record (its name must be new)."""
    check_choice(convention.pairs, "pairs", PAIR_POLICIES)
    if convention.name in _CONVENTIONS:
        raise InputError(f"convention {convention.name!r} is already registered")
    _CONVENTIONS[convention.name] = convention
    return convention


def get_convention(name: str) -> Convention:
    """The convention record called ``name`` (an :class:`InputError` lists the known ones)."""
    try:
        return _CONVENTIONS[name]
    except (KeyError, TypeError):
        raise InputError(f"unknown convention {name!r}; expected one of {sorted(_CONVENTIONS)}") from None


def list_conventions() -> pd.DataFrame:
    """The registered conventions as a table (name, pairs, merge, description, citation)."""
    return pd.DataFrame([{"name": c.name, "pairs": c.pairs,
                          "merge": "; ".join(f"{t} = mean({', '.join(cols)})" for t, cols in c.merge),
                          "description": c.description, "citation": c.citation}
                         for c in _CONVENTIONS.values()])


register_convention(Convention(
    "votenrank", pairs="split", merge=(),
    description="every column a task; 'x/y' cells split into two half-weight columns (GLUE: 10 task units, "
                "MNLI-m and MNLI-mm counted as two tasks)",
    citation="Rofin et al. (2023), Vote'n'Rank, EACL (PragmaticsLab/vote_and_rank preprocessing)"))
register_convention(Convention(
    "glue", pairs="average", merge=(("MNLI", ("MNLI-m", "MNLI-mm")),),
    description="GLUE's published Score: 9 tasks, each 'x/y' pair averaged, MNLI matched/mismatched averaged",
    citation="Wang et al. (2019), GLUE, ICLR; gluebenchmark.com/leaderboard"))
register_convention(Convention(
    "superglue", pairs="average", merge=(),
    description="SuperGLUE's published Score: each 'x/y' pair averaged into its task, tasks weighted equally",
    citation="Wang et al. (2019), SuperGLUE, NeurIPS; super.gluebenchmark.com/leaderboard"))
