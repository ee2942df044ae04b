"""NumPy implementations of the metric families; importing this registers them.

Each family lives in its own module and registers its metrics with
:func:`scorebench.core.registry.register`. The functions are public here for array use.
"""

from __future__ import annotations

from importlib import import_module

# One line per family module; each module registers its metrics on import.
_FAMILIES = (
    "scoring_rules",
    "ranking",
    "embedding_retrieval",
    "losses_registry",
    "calibration",
    "classification",
    "agreement",
    "ood",
    "generative",
    "irt_kind",
    "sample_scores",
    "reward",
    "sampling",
    "judged",
)

for _name in _FAMILIES:
    import_module(f"{__name__}.{_name}")
