"""What a reader records about its table in ``attrs``, and how the consumers honour it.

Readers (:mod:`scorebench.io.readers`) write these keys; evaluation, aggregation and the CLI
read them through the functions here, so no consumer imports the reading wing (this module
sits on the ground floor, :mod:`scorebench.core`, beside the table schema):

* ``attrs["metric_defaults"]``: the parameters under which a metric equals the tool's own
  number (OpenOOD's FPR@95 has OOD as the positive class and its AUPR is the trapezoid area,
  not average precision). :func:`with_source_defaults` rewrites each metric given by its bare
  name (``"fpr_at_95_tpr"``) to carry those parameters (``"fpr_at_95_tpr(convention=openood)"``),
  so the result rows say which convention was used; a metric given with explicit parameters is
  left as asked.
* ``attrs["higher_is_better"]``: each metric's direction in a long scores table
  (:func:`source_directions`).
* ``attrs["mixed_metrics"]``: the table holds stats of different meaning, which must not be
  ranked together (:func:`refuse_mixed_metrics`).

(A leaderboard's conventions for turning its wide table into task columns, GLUE's or
Vote'n'Rank's, are another thing: :mod:`scorebench.aggregate.conventions`.)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["with_source_defaults", "refuse_mixed_metrics", "source_directions"]


def source_directions(table: Any) -> dict[str, bool] | None:
    """The direction of each metric a reader recorded for a long scores table (``attrs["higher_is_better"]``,
    ``{metric: bool}``, e.g. HELM's ``lower_is_better`` stats), or None.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"system": ["a"], "task": ["t"], "metric": ["num_output_tokens"], "value": [2.0]})
    >>> t.attrs["higher_is_better"] = {"num_output_tokens": False}
    >>> source_directions(t)
    {'num_output_tokens': False}
    """
    attrs = getattr(table, "attrs", None) if hasattr(table, "columns") else None
    found = (attrs or {}).get("higher_is_better")
    if "metric" not in getattr(table, "columns", ()) or not isinstance(found, dict) or not found:
        return None
    if not all(isinstance(k, str) and isinstance(v, bool) for k, v in found.items()):
        return None  # another shape (lm-eval's per-task mapping): not a per-metric direction
    return dict(found)


def refuse_mixed_metrics(table: Any) -> None:
    """Raise when a reader marked its table as holding stats of different meaning (``attrs["mixed_metrics"]``,
    e.g. HELM's accuracy beside token counts and runtimes): ranking over them would mix scales and directions.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"system": ["a"], "metric": ["exact_match"], "value": [0.5]})
    >>> refuse_mixed_metrics(t)  # nothing marked: fine
    """
    from scorebench.core.errors import InputError

    mixed = getattr(table, "attrs", {}).get("mixed_metrics") if hasattr(table, "attrs") else None
    if mixed:
        fmt = table.attrs.get("source_format", "the reader")
        raise InputError(f"{fmt}: the table holds stats of different meaning ({', '.join(map(str, mixed[:8]))}"
                         f"{' ...' if len(mixed) > 8 else ''}); aggregating would rank over all of them as if "
                         "they were one score. Pick one with the reader's metric= option (CLI: --from-option "
                         "metric=NAME), or give HELM's schema.json (schema=PATH) for each scenario's main metric")


def with_source_defaults(table: Any, metrics: Any) -> Any:
    """``metrics`` with the table's ``attrs["metric_defaults"]`` applied to bare metric names.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"score": [0.1], "is_ood": [1]})
    >>> t.attrs["metric_defaults"] = {"aupr": {"method": "trapezoid"}}
    >>> with_source_defaults(t, ["aupr", "auroc", "aupr(method=average_precision)"])
    ['aupr(method=trapezoid)', 'auroc', 'aupr(method=average_precision)']
    """
    defaults = getattr(table, "attrs", {}).get("metric_defaults") if hasattr(table, "attrs") else None
    if not isinstance(defaults, dict) or not defaults:
        return metrics
    single = isinstance(metrics, str) or not isinstance(metrics, Iterable)
    out = [_with(m, defaults) for m in ([metrics] if single else list(metrics))]
    return out[0] if single else out


def _with(metric: Any, defaults: dict[str, dict[str, Any]]) -> Any:
    if not isinstance(metric, str) or metric not in defaults:
        return metric
    params = ",".join(f"{k}={v}" for k, v in defaults[metric].items())
    return f"{metric}({params})"
