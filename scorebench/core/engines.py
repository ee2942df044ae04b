"""Engines for table types other than pandas, found by the table's top-level package.

:func:`scorebench.evaluate` handles pandas DataFrames and paths itself (the whole table as
one partition) and hands any other table to the engine registered for its package. An
engine is named as ``"module:function"`` and imported on first use, so importing
scorebench imports no engine, and no module below the engines imports one.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

__all__ = ["register_engine", "engine_for"]

_ENGINES: dict[str, str] = {"dask": "scorebench.evaluation.dask_engine:evaluate_dask"}
#: Engines of the later stages, by (stage, package): :func:`scorebench.compare` hands a Dask
#: table to the all-pairs reduction by partial sums.
_STAGE_ENGINES: dict[tuple[str, str], str] = {("compare", "dask"): "scorebench.evaluation.dask_compare:compare_dask"}


def register_engine(package: str, target: str) -> None:
    """Evaluate tables whose type comes from ``package`` with ``target`` (``"module:function"``).

    The function is called as ``fn(table, metrics, **options)`` with the options of
    :func:`scorebench.evaluate` that the pandas engine alone supports left out.
    """
    if ":" not in target:
        raise ValueError(f"engine target must be 'module:function', got {target!r}")
    _ENGINES[package] = target


def engine_for(table: Any, stage: str = "evaluate") -> Callable[..., Any] | None:
    """The engine for ``table``'s type at ``stage`` (``evaluate``, ``compare``), or ``None`` for pandas.

    Examples
    --------
    >>> import pandas as pd
    >>> engine_for(pd.DataFrame()) is None
    True
    """
    package = type(table).__module__.split(".")[0]
    target = _ENGINES.get(package) if stage == "evaluate" else _STAGE_ENGINES.get((stage, package))
    if target is None:
        return None
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)
