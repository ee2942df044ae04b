"""Registration of scores of parametric forecast distributions with their parameter specs.

Each rule ``{rule}_{distribution}`` (``crps_tnormal``, ``log_score_gev``) is registered with
its distribution's parameters, their supports and defaults, and the support of the
outcome, in the registry record's ``distribution`` field. A ``parametric`` table supplies
the parameters as columns of the same names: required ones must be present (a missing
one is a one-line :class:`~scorebench.core.errors.InputError` naming it), optional ones
(``lower``, ``upper``, ``lmass``, ...) are read when present and take their default
otherwise, so a table with columns ``mu, sigma, lower, upper`` scored with
``crps_tnormal`` uses its truncation bounds, and one with ``mu, sigma`` the untruncated
normal.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from scorebench.core.errors import InputError
from scorebench.core.registry import register
from scorebench.core.validation import as_float_array, broadcast_arrays, describe_rows, show_value
from scorebench.metrics.scoring_rules._common import FAMILY

#: Supports understood by :func:`check_support`.
SUPPORTS = {
    "real": lambda x: np.ones(x.shape, dtype=bool),
    "positive": lambda x: x > 0,
    "nonnegative": lambda x: x >= 0,
    "[0, 1]": lambda x: (x >= 0) & (x <= 1),
    "(0, 1)": lambda x: (x > 0) & (x < 1),
    "(0, 1]": lambda x: (x > 0) & (x <= 1),
    "(1, inf)": lambda x: x > 1,
    "(-inf, 1)": lambda x: x < 1,
    "nonnegative integer": lambda x: (x >= 0) & (x == np.floor(x)),
    "positive integer": lambda x: (x > 0) & (x == np.floor(x)),
}


def check_support(x: np.ndarray, name: str, support: str) -> None:
    """Raise :class:`InputError` naming ``name`` and the first offending rows if ``x``
    (NaN allowed) leaves ``support``."""
    with np.errstate(invalid="ignore"):
        bad = ~SUPPORTS[support](x) & ~np.isnan(x)
    if bad.any():
        expected = {"positive": "> 0", "nonnegative": ">= 0"}.get(support, f"in {support}")
        raise InputError(f"{name}: expected values {expected}, got {show_value(x[bad].ravel()[0])} "
                         f"in {describe_rows(bad)}")


def prep(obs: Any, spec: Mapping[str, tuple[str, Any]], values: Mapping[str, Any],
         *, obs_inf: bool = False) -> list[np.ndarray]:
    """``obs`` and the parameters (in ``spec`` order) as broadcast float64 arrays, each
    checked against its support. ``-inf``/``+inf`` are accepted for parameters whose
    default is infinite (truncation bounds) and refused elsewhere; ``None`` for an
    optional parameter means its default."""
    arrays = {"obs": as_float_array(obs, "obs", check_inf=not obs_inf)}
    for name, (_, default) in spec.items():
        infinite_ok = isinstance(default, float) and math.isinf(default)
        value = default if values[name] is None and default is not None else values[name]
        arrays[name] = as_float_array(value, name, check_inf=not infinite_ok)
    arrays = dict(zip(arrays, broadcast_arrays(**arrays)))
    for name, (support, _) in spec.items():
        check_support(arrays[name], name, support)
    return list(arrays.values())


def _table_fn(fn: Callable[..., np.ndarray], name: str, spec: Mapping[str, tuple[str, Any]],
              fixed: Mapping[str, Any]) -> Callable[..., np.ndarray]:
    required = [p for p, (_, default) in spec.items() if default is None and p not in fixed]

    def table(arrays: Mapping[str, np.ndarray], **params: Any) -> np.ndarray:
        missing = [p for p in required if p not in arrays]
        if missing:
            raise InputError(f"{name}: the parametric table lacks parameter column(s) {missing}; "
                             f"expected columns y, {', '.join(required)} "
                             f"(optional: {', '.join(p for p in spec if p not in required) or 'none'})")
        kwargs = {p: arrays[p] for p in spec if p in arrays}
        # A registry parameter that is set (e.g. ``crps_beta(lower=-1)``) overrides the column.
        kwargs.update({p: v for p, v in params.items() if v is not None})
        return fn(arrays["y"], **kwargs)

    return table


def register_dist(name: str, spec: Mapping[str, tuple[str, Any]], support: str, citation: str, *,
                  log: bool = False, params: Mapping[str, Any] | None = None,
                  proper: str = "strict", tested_against: Any = ()) -> Callable[[Callable], Callable]:
    """Register a CRPS (``log=False``) or log score (``log=True``) of a parametric distribution.

    ``spec`` maps each parameter to ``(support, default)`` (``None`` = required); ``params``
    names optional parameters that can also be bound in the metric name with value ``None``
    meaning "from the column, else the default" (``crps_beta(lower=-1,upper=2)``).
    """
    params = dict(params or {})

    def decorate(fn: Callable) -> Callable:
        required = tuple(p for p, (_, d) in spec.items() if d is None)
        distribution = {"parameters": dict(spec), "support": support}
        return register(name, core=fn, family=FAMILY, kind="parametric", inputs=("y", *required),
                        higher_is_better=False,
                        bounds=(-math.inf, math.inf) if log else (0.0, math.inf),
                        proper=proper, per_row=True, params=params or None, citation=citation,
                        table_fn=_table_fn(fn, name, spec, params), distribution=distribution,
                        tested_against=tested_against)

    return decorate
