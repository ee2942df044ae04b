"""One generic registry of named records: metrics, table kinds, aggregation methods and board
sections are each a :class:`Registry`.

A registry maps names to frozen records. Adding a name twice raises, unless the record comes
from the same definition (its module imported a second time, e.g. by a doctest runner: the
newer record replaces the older one) or ``replace=True`` is given; lookups suggest close
names. The built-in records are loaded by :mod:`scorebench.core.builtins`.

Examples
--------
>>> r = Registry("colour", site=lambda record: record)
>>> r.add("red", "a.py:red")
'a.py:red'
>>> r.suggest("rde")
"; did you mean 'red'?"
>>> r.add("red", "b.py:red")
Traceback (most recent call last):
...
ValueError: colour 'red' is already registered (by a.py:red)
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Generic, TypeVar

__all__ = ["Registry"]

T = TypeVar("T")


class Registry(Mapping[str, T], Generic[T]):
    """Named records of one sort (``what``), in registration order.

    ``site(record)`` names where a record was defined (see
    :func:`scorebench.core.registry.definition_site`); without it every repeated name is refused.
    """

    def __init__(self, what: str, site: Callable[[T], str] | None = None) -> None:
        self.what = what
        self._site = site
        self._records: dict[str, T] = {}

    def add(self, name: str, record: T, *, replace: bool = False) -> T:
        """Register ``record`` as ``name``; returns it."""
        old = self._records.get(name)
        if old is not None and not replace:
            if self._site is None or self._site(old) != self._site(record):
                by = f" (by {self._site(old)})" if self._site is not None else ""
                raise ValueError(f"{self.what} {name!r} is already registered{by}")
        self._records[name] = record
        return record

    def suggest(self, name: object, n: int = 3, also: Iterable[str] = ()) -> str:
        """``"; did you mean 'a', 'b'?"`` for the names (and the other spellings ``also``) close
        to ``name``, else ``""``."""
        close = difflib.get_close_matches(str(name), [*self._records, *also], n=n, cutoff=0.6)
        return f"; did you mean {', '.join(map(repr, close))}?" if close else ""

    def __getitem__(self, name: str) -> T:
        return self._records[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._records)

    def __len__(self) -> int:
        return len(self._records)

    def __repr__(self) -> str:
        return f"Registry({self.what!r}, {len(self)} records)"
