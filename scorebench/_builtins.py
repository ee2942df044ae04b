"""The one start-up place that loads the built-in registrations.

Metrics, table kinds and aggregation methods register themselves when their modules are
imported. The registries (:mod:`scorebench.core.registry`, :mod:`scorebench.core.tables`) call
:func:`load_builtins` before a lookup; it imports the registering packages *by name*, so no
registry module imports the families that register into it (nothing imports upward), and a
lookup made before ``import scorebench`` finished still sees every built-in entry. Plugins
declared as ``scorebench.metrics`` entry points are loaded by :mod:`scorebench.core.registry` on
first use.
"""

from __future__ import annotations

from importlib import import_module

__all__ = ["BUILTIN_PACKAGES", "load_builtins"]

# the packages whose import registers the built-in metrics, table kinds and aggregation methods
BUILTIN_PACKAGES = ("scorebench.metrics", "scorebench.aggregate")


def load_builtins() -> None:
    """Import every package of :data:`BUILTIN_PACKAGES` (cheap once they are imported)."""
    for name in BUILTIN_PACKAGES:
        import_module(name)
