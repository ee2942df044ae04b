"""Exception types raised for bad input.

Every error that a user can cause derives from :class:`ScorebenchError`, so the CLI can
turn it into one readable line instead of a traceback.
"""

from __future__ import annotations


class ScorebenchError(Exception):
    """Base class of the errors scorebench raises for user-caused problems."""


class InputError(ScorebenchError, ValueError):
    """Input data does not have the expected columns, shape, type or values."""


class UnknownMetricError(ScorebenchError, KeyError):
    """A metric name is not in the registry."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class ConvergenceError(ScorebenchError, RuntimeError):
    """An iterative estimator did not converge."""


def warn_user(message: str, category: type[Warning] = UserWarning) -> None:
    """Issue a warning attributed to the first caller outside the scorebench package.

    A fixed ``stacklevel`` names whichever scorebench frame happens to sit that many calls up
    (``scorebench/evaluation/evaluate.py:247``); this walks the stack to the user's own line (a script,
    a notebook cell, a test), so ``python -W error`` and the warning's location point there.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_user("look here")
    >>> caught[0].filename.endswith("errors.py")
    False
    """
    import os
    import sys
    import warnings

    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # scorebench/, not core/
    frame = sys._getframe(1)
    level = 2  # stacklevel=1 is this function, 2 its caller
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)
