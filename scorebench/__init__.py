"""scorebench: evaluate systems that rank and score.

One flow: result table -> :func:`evaluate` -> scores table -> :func:`aggregate` ->
ranking -> leaderboard. Heavy optional dependencies (torch, Dask, matplotlib) load lazily;
so do the larger sub-packages (``scorebench.irt``, ``scorebench.losses``, ...).
"""

from __future__ import annotations

from scorebench._version import __version__

from importlib import import_module
from typing import Any

from scorebench import accessor as _accessor  # noqa: F401  (registers DataFrame.scorebench)
from scorebench import metrics  # noqa: F401  (registers the built-in metric families)
from scorebench.core.errors import InputError, ScorebenchError, UnknownMetricError
from scorebench.evaluation.comparison import compare
from scorebench.evaluation.evaluate import evaluate
from scorebench.io.tables import read_results, read_table, write_table
from scorebench.core.registry import Metric, list_metrics, metric, register

# ``scorebench.aggregate`` is a callable package (scorebench.aggregate(table, "borda"));
# ``power`` shares its name with its module, so it is bound eagerly: a lazy binding would
# be replaced by the submodule as soon as anything imported it.
from scorebench import aggregate  # noqa: E402
from scorebench.analysis.power import power  # noqa: E402

__all__ = [
    "__version__", "Metric", "metric", "list_metrics", "register", "evaluate", "compare",
    "read_table", "read_results", "write_table", "aggregate", "power", "irt", "losses", "models",
    "InputError", "ScorebenchError", "UnknownMetricError",
]

# name -> (module, attribute or None for the module itself), loaded on first access
_LAZY = {
    "irt": ("scorebench.irt", None),
    "losses": ("scorebench.losses", None),
    "models": ("scorebench.models", None),
    # comparison report, decision gates, confidence sequences, G-theory (issue 32)
    "comparison_report": ("scorebench.report", "comparison_report"),
    "write_report": ("scorebench.report", "write_report"),
    "gate": ("scorebench.analysis.gates", "gate"),
    "confidence_sequence": ("scorebench.analysis.confseq", "confidence_sequence"),
    "g_study": ("scorebench.analysis.gtheory", "g_study"),
}
__all__ += ["comparison_report", "write_report", "gate", "confidence_sequence", "g_study"]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'scorebench' has no attribute {name!r}")
    module_name, attribute = _LAZY[name]
    module = import_module(module_name)
    value = module if attribute is None else getattr(module, attribute)
    # Importing a submodule binds it on the package; rebind the public object instead.
    globals()[name] = value
    return value
