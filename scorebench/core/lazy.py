"""Deferred imports of heavy dependencies (SciPy submodules), so that ``import scorebench``
and ``scorebench --help`` stay fast: the module is imported on first use, not at import.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["lazy_module", "lazy_attr"]


class _LazyModule:
    """Stands for a module; the first attribute access imports it."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self._name), attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}>"


def lazy_module(name: str) -> Any:
    """A stand-in for ``import name`` that imports on first attribute access.

    Examples
    --------
    >>> special = lazy_module("math")
    >>> special.sqrt(4.0)
    2.0
    """
    return _LazyModule(name)


def lazy_attr(module: str, name: str) -> Any:
    """A callable stand-in for ``from module import name`` (for functions and classes that are
    only called), importing ``module`` on the first call.

    Examples
    --------
    >>> hypot = lazy_attr("math", "hypot")
    >>> hypot(3.0, 4.0)
    5.0
    """

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(module), name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"Deferred ``{module}.{name}`` (imported on first call)."
    return call
