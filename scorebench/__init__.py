"""scorebench: evaluate systems that rank and score.

One flow: result table -> :func:`evaluate` -> scores table -> aggregate -> ranking ->
leaderboard. Heavy optional dependencies (torch, Dask, matplotlib) load lazily.
"""

from __future__ import annotations

__version__ = "0.1.0"

from . import metrics  # noqa: F401  (registers the built-in metric families)
from .errors import InputError, ScorebenchError, UnknownMetricError
from .registry import Metric, list_metrics, metric, register

__all__ = [
    "__version__", "Metric", "metric", "list_metrics", "register",
    "InputError", "ScorebenchError", "UnknownMetricError",
]
