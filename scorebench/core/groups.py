"""Groups of units: which group (``by`` values) each unit of a table belongs to.

The ground floor's one answer to "which system and task is this row", shared by the
evaluation pipeline (scores per group), its partials (keyed by the group's labels) and the
kinds that complete a group's units (ranking's ``complete=True``), so no kind has to reach
up into the evaluation wing for it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["group_codes", "group_labels"]


def group_codes(frame: pd.DataFrame, by_cols: Sequence[str]) -> tuple[np.ndarray, pd.DataFrame]:
    """The group index of each unit and one row of ``by`` values per group (sorted).

    Examples
    --------
    >>> codes, keys = group_codes(pd.DataFrame({"system": ["b", "a", "b"]}), ["system"])
    >>> codes.tolist(), keys["system"].tolist()
    ([1, 0, 1], ['a', 'b'])
    """
    if not by_cols:
        return np.zeros(len(frame), dtype=np.int64), pd.DataFrame(index=[0])
    grouped = frame.groupby(list(by_cols), sort=True, dropna=False, observed=True)
    keys = grouped.size().index.to_frame(index=False)[list(by_cols)]
    return grouped.ngroup().to_numpy(), keys.reset_index(drop=True)


def group_labels(frame: pd.DataFrame, by_cols: Sequence[str]) -> tuple[np.ndarray, list[tuple]]:
    """The group index of each unit and each group's ``by`` values as the partials key them
    (labels as text, numbers as numbers, so partitions read from different files agree).

    Examples
    --------
    >>> codes, labels = group_labels(pd.DataFrame({"system": ["b", "a"], "task": [1, 1]}), ["system", "task"])
    >>> codes.tolist(), labels
    ([1, 0], [('a', 1), ('b', 1)])
    """
    codes, keys = group_codes(frame, by_cols)
    if not by_cols:
        return codes, [()]
    return codes, [tuple(x if isinstance(x, (int, float)) else str(x) for x in row)
                   for row in keys.itertuples(index=False, name=None)]
