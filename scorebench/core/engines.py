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

_ENGINES: dict[str, str] = {"dask": "scorebench.dask_engine:evaluate_dask"}


def register_engine(package: str, target: str) -> None:
    """Evaluate tables whose type comes from ``package`` with ``target`` (``"module:function"``).

    The function is called as ``fn(table, metrics, **options)`` with the options of
    :func:`scorebench.evaluate` that the pandas engine alone supports left out.
    """
    if ":" not in target:
        raise ValueError(f"engine target must be 'module:function', got {target!r}")
    _ENGINES[package] = target


def engine_for(table: Any) -> Callable[..., Any] | None:
    """The engine for ``table``'s type, or ``None`` for the pandas engine.

    Examples
    --------
    >>> import pandas as pd
    >>> engine_for(pd.DataFrame()) is None
    True
    """
    target = _ENGINES.get(type(table).__module__.split(".")[0])
    if target is None:
        return None
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)
