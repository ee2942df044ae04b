"""One reduction of a Dask DataFrame's partitions: a partial per partition, merged in a tree.

Every Dask path that sums per-partition statistics (compare's paired sums, battle cells,
item-level Poisson sums) merges them here, so that no worker ever receives more than
``fan_in`` partials at once, however many partitions the table has.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["tree_reduce"]


def tree_reduce(ddf: Any, partial: Callable[..., Any], merge: Callable[[list[Any]], Any], *args: Any,
                fan_in: int) -> Any:
    """``partial(part, *args)`` of every partition of ``ddf``, merged by ``merge(partials)``
    ``fan_in`` at a time level by level, computed.

    The tree's shape depends only on the number of partitions and ``fan_in``, so a caller that
    keeps ``fan_in`` fixed gets the same floating-point sums on every run.

    Examples
    --------
    >>> import pandas as pd
    >>> import dask.dataframe as dd
    >>> ddf = dd.from_pandas(pd.DataFrame({"x": range(10)}), npartitions=5)
    >>> tree_reduce(ddf, lambda part: int(part["x"].sum()), sum, fan_in=2)
    45
    """
    from dask import compute, delayed

    level = [delayed(partial)(p, *args) for p in ddf.to_delayed()]
    while len(level) > 1:
        level = [delayed(merge)(level[i:i + fan_in]) for i in range(0, len(level), fan_in)]
    (total,) = compute(level[0])
    return total
