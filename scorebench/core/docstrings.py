"""Shared docstring sections: one text for a parameter block that several functions share.

Functions of one family often take the same arguments (an ensemble and its observation, a
weight window, outcomes and probabilities). Writing that block once keeps the descriptions
from drifting apart. A docstring marks where a shared section goes with a line holding only
``%(name)s`` (indented like the docstring), or ``%(name1, name2)s`` for several sections in
a row; :func:`fill_doc` replaces it after the function is defined, so ``help()``, the
documentation and the doctests see the complete text.

Markers are replaced literally (no ``%`` formatting), so braces and percent signs elsewhere
in a docstring (LaTeX, format examples) need no escaping.

Examples
--------
>>> OBS = '''obs : array_like
...     Observations.'''
>>> def f(obs):
...     '''Example.
...
...     Parameters
...     ----------
...     %(obs, k)s
...     '''
>>> _ = fill_doc(f, obs=OBS, k="k : int")
>>> for line in f.__doc__.splitlines()[4:7]:
...     print(line.strip())
obs : array_like
Observations.
k : int
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeVar

__all__ = ["fill_doc"]

F = TypeVar("F", bound=Callable)


def fill_doc(*functions: F, **sections: str) -> F:
    """Replace each ``%(name)s`` marker line in the docstrings of ``functions`` by
    ``sections[name]`` (``%(name1, name2)s``: those sections one after the other),
    re-indented to the marker's indentation.

    Parameters
    ----------
    *functions : callable
        Functions (or classes) whose ``__doc__`` is filled in place.
    **sections : str
        The shared texts, written without leading indentation (continuation lines indented
        relative to the first line, as in a numpydoc block).

    Returns
    -------
    callable
        The first function, so ``fill_doc`` also works as ``f = fill_doc(f, ...)``.

    Raises
    ------
    KeyError
        A marker names a section that was not given (a typo would otherwise leave the raw
        marker in the documentation).
    """
    marker = re.compile(r"^([ \t]*)%\(([\w, ]+)\)s[ \t]*$", re.M)

    def replace(match: re.Match) -> str:
        indent, lines = match.group(1), []
        for name in (part.strip() for part in match.group(2).split(",")):
            if name not in sections:
                raise KeyError(f"fill_doc: no section {name!r} given for a %({name})s marker")
            lines += sections[name].strip("\n").splitlines()
        return "\n".join(indent + line if line else line for line in lines)

    for fn in functions:
        if fn.__doc__:
            fn.__doc__ = marker.sub(replace, fn.__doc__)
    return functions[0]
