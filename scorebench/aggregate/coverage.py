"""Say when the systems of one ranking were not all scored on the same tasks.

A ranking of systems that ran different subsets of the tasks compares unlike things: a
system scored on its 21 easiest tasks can top one scored on all 41, whatever the method
does with the gaps (a mean over available tasks, MTEB's Borda with a missing task worth 0,
a pairwise rule over shared tasks). :func:`coverage_warning` names how many of the ranked
systems are incomplete and the range of their coverage, so that no such ranking is
printed without a word; :class:`MixedCoverageWarning` is the warning category.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from scorebench.aggregate.input import ScoreMatrix

__all__ = ["MixedCoverageWarning", "coverage_warning"]


class MixedCoverageWarning(UserWarning):
    """The ranked systems were not all scored on the same task columns."""


def coverage_warning(data: ScoreMatrix, systems: Sequence[str] | None = None) -> str | None:
    """The warning text when the ``systems`` ranked (default: all) cover different columns.

    Parameters
    ----------
    data : ScoreMatrix
        The scores the ranking was computed from (NaN = the system has no score there).
    systems : sequence of str, optional
        The systems the ranking lists (a method may drop incomplete ones); default all.

    Returns
    -------
    str or None
        None when every ranked system has a score in the same columns.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from scorebench.aggregate.input import as_matrix
    >>> m = as_matrix(pd.DataFrame({"t1": [1.0, 2.0, 3.0], "t2": [1.0, np.nan, 2.0],
    ...                             "t3": [np.nan, np.nan, 1.0]}, index=["a", "b", "c"]))
    >>> coverage_warning(m)[:72]
    'systems ranked on different tasks: 2 of 3 systems lack scores (they ran '
    >>> coverage_warning(m, ["c"]) is None
    True
    """
    present = ~np.isnan(np.asarray(data.values, dtype=np.float64))
    if systems is not None:
        index = {s: i for i, s in enumerate(data.systems)}
        rows = [index[s] for s in systems if s in index]
        present = present[rows]
    if present.shape[0] < 2 or (present == present[0]).all():
        return None
    counts = present.sum(axis=1)
    m = data.n_columns
    incomplete = counts < m
    low, high = int(counts[incomplete].min()), int(counts[incomplete].max())
    span = f"{low}" if low == high else f"{low}–{high}"
    text = (f"systems ranked on different tasks: {int(incomplete.sum())} of {present.shape[0]} systems lack "
            f"scores (they ran {span} of the {m} task columns; coverage {low / m:.0%}–{high / m:.0%})")
    return text + "; their positions compare unlike sets of tasks"
