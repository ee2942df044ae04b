"""The ``irt`` aggregation method: rank systems by IRT ability (with standard errors).

Registered in :mod:`scorebench.aggregate` so that ``scorebench.aggregate(responses, "irt",
n_boot=0)`` ranks systems by their estimated ability; the standard errors, 95% intervals
and the item table travel in ``details``. Uncertainty comes from the model (ability SEs),
not from a bootstrap, so the method has no bootstrap (pass ``n_boot=0``).

Both layouts that ``scorebench irt fit`` reads are accepted: the long table (``system``,
``item``, ``correct``) and the wide 0/1 matrix, one row per system with its name in a
``system`` column (or the first, non-numeric column, or the index) and one column per item.
"""

from __future__ import annotations

from typing import Any

from scorebench.aggregate.registry import MethodResult, register_method

__all__ = ["irt_method"]


@register_method("irt", family="latent", accepts=("table",),
                 missing="items a system did not answer are skipped (not scored as wrong)",
                 citation="Birnbaum (1968); Bock & Aitkin (1981), Psychometrika 46")
def irt_method(table: Any, *, model: str = "2pl", scoring: str = "eap", method: str = "auto") -> MethodResult:
    """Ability of each system under a 2PL (or 1PL/3PL) IRT model fitted to its answers."""
    from scorebench.irt.api import fit

    result = fit(_responses(table), model, scoring=scoring, method=method)
    ab = result.abilities
    return MethodResult(ab["theta"].to_numpy(), {
        "systems": tuple(ab.index), "se": ab["se"].to_numpy(), "accuracy": ab["accuracy"].to_numpy(),
        "converged": result.converged, "items": result.items, "loglik": result.loglik})


def _responses(table: Any) -> Any:
    """The long table as is; a wide matrix with its system-name column moved to the index."""
    import pandas as pd

    if not isinstance(table, pd.DataFrame) or {"system", "item", "correct"} <= set(table.columns):
        return table
    if "system" in table.columns:
        return table.set_index("system")
    if len(table.columns) and not pd.api.types.is_numeric_dtype(table[table.columns[0]]):
        return table.set_index(table.columns[0])
    return table
