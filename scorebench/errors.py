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
