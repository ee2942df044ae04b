"""The aggregation-method registry: one frozen record per method, looked up by name.

Methods register with :func:`register_method`; registration stays open after import, so
other modules (for example an IRT model living elsewhere in scorebench) can add methods
later with the same decorator::

    from scorebench.aggregate import register_method, MethodResult

    @register_method("irt", family="latent", accepts=("table",), missing="items a system "
                     "did not answer are skipped", citation="...")
    def irt(table, **params) -> MethodResult: ...

A method receives, according to ``accepts``:

* ``"matrix"``: a :class:`~scorebench.aggregate.input.ScoreMatrix`;
* ``"battles"``: a :class:`~scorebench.aggregate.input.Battles` (a score matrix is turned
  into battles with :func:`~scorebench.aggregate.input.battles_from_matrix` when the method
  accepts only battles);
* ``"table"``: the caller's DataFrame, untouched (for methods that read item-level data).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.core.records import Registry
from scorebench.core.registry import definition_site

__all__ = ["Method", "MethodResult", "register_method", "register_bootstrap", "register_intervals", "get_method",
           "all_methods", "list_methods", "ACCEPTS"]

ACCEPTS = ("matrix", "battles", "table")


@dataclass(frozen=True)
class MethodResult:
    """What a method function returns: one score per system (higher is better) and extras."""

    scores: np.ndarray
    details: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Method:
    """Everything known about one aggregation method.

    Attributes
    ----------
    name : str
        Registered name (``"borda"``).
    fn : callable
        ``fn(data, **params) -> MethodResult``.
    family : str
        ``"baseline"``, ``"positional"``, ``"condorcet"``, ``"pairwise"``, ...
    accepts : tuple of str
        Input containers the function takes (see module docstring), preferred first.
    missing : str
        What the method does with missing scores.
    citation : str
        Where the definition comes from.
    params : mapping
        Keyword parameters and their defaults (from the function signature).
    column_parts : callable or None
        For a method whose score is a ratio of weighted column sums,
        ``s_a = sum_j w_j N_aj / sum_j w_j D_aj`` with ``N``, ``D`` fixed per column (Borda, win
        rate): ``column_parts(matrix, **params) -> (N, D or None)`` (``None``: denominator 1).
        Resampling tasks then needs no re-run of the method: every replicate is one matrix
        product with the drawn column counts (see :func:`register_column_parts`).
    bootstrap : callable or None
        Optional fast path ``bootstrap(battles, n_boot, rng, **params) -> (n_boot, n) scores``
        used when battles are resampled (see :func:`register_bootstrap`).
    intervals : callable or None
        Optional model-based intervals ``intervals(battles, **params) -> (n,) scores, (n, n)
        covariance`` on the score scale (see :func:`register_intervals`); when present they are
        the method's default intervals (``aggregate(..., intervals="sandwich")``).
    """

    name: str
    fn: Callable[..., MethodResult] = field(repr=False, compare=False)
    family: str = ""
    accepts: tuple[str, ...] = ("matrix",)
    missing: str = ""
    citation: str = ""
    params: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    column_parts: Callable[..., tuple[np.ndarray, np.ndarray | None]] | None = field(default=None, repr=False,
                                                                                       compare=False)
    bootstrap: Callable[..., np.ndarray] | None = field(default=None, repr=False, compare=False)
    intervals: Callable[..., tuple[np.ndarray, np.ndarray]] | None = field(default=None, repr=False, compare=False)

    @property
    def description(self) -> str:
        doc = inspect.getdoc(self.fn) or ""
        return doc.strip().splitlines()[0] if doc.strip() else ""

    def check_params(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """``params`` checked: unknown names refused; on/off parameters parsed strictly
        (:func:`~scorebench.core.validation.parse_bool`: ``all_optimal="no"`` is false)."""
        from scorebench.core.validation import parse_bool

        unknown = sorted(set(params) - set(self.params))
        if unknown:
            raise InputError(f"method {self.name!r}: unknown parameter(s) {unknown}; "
                             f"accepted: {sorted(self.params) or 'none'}")
        return {k: parse_bool(v, f"method {self.name!r}: parameter {k!r}") if isinstance(self.params[k], bool) else v
                for k, v in params.items()}


_METHODS: Registry[Method] = Registry("aggregation method", site=lambda m: definition_site(m.fn))

# Methods registered by modules outside this package, imported on first use so that
# ``import scorebench`` stays light: name -> module whose import registers it.
_PROVIDERS = {"irt": "scorebench.irt.aggregate_method"}


def register_method(name: str, *, family: str, missing: str, citation: str,
                    accepts: tuple[str, ...] = ("matrix",), replace: bool = False) -> Callable:
    """Decorator registering ``fn(data, **params) -> MethodResult`` as method ``name``.

    Registering an existing name raises unless ``replace=True``.
    """
    bad = [a for a in accepts if a not in ACCEPTS]
    if bad or not accepts:
        raise ValueError(f"accepts must be a non-empty subset of {ACCEPTS}, got {accepts}")

    def decorate(fn: Callable[..., MethodResult]) -> Callable[..., MethodResult]:
        sig = inspect.signature(fn)
        params = {p.name: p.default for p in list(sig.parameters.values())[1:]
                  if p.kind is inspect.Parameter.KEYWORD_ONLY}
        _METHODS.add(name, Method(name=name, fn=fn, family=family, accepts=tuple(accepts), missing=missing,
                                  citation=citation, params=MappingProxyType(params)), replace=replace)
        return fn

    return decorate


def register_bootstrap(name: str) -> Callable:
    """Attach a fast battle-bootstrap function to the registered method ``name``."""

    def decorate(fn: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
        _METHODS.add(name, replace(get_method(name), bootstrap=fn), replace=True)
        return fn

    return decorate


def register_intervals(name: str) -> Callable:
    """Attach a covariance function ``fn(data, **params) -> (scores, cov)`` to method ``name``.

    The covariance (on the score scale) gives Wald intervals and, by drawing from the normal
    it defines, rank intervals; ``aggregate`` uses it by default for that method.
    """

    def decorate(fn: Callable[..., tuple[np.ndarray, np.ndarray]]) -> Callable[..., tuple[np.ndarray, np.ndarray]]:
        _METHODS.add(name, replace(get_method(name), intervals=fn), replace=True)
        return fn

    return decorate


def get_method(name: str) -> Method:
    """Look a method up by name; unknown names raise with close matches."""
    if isinstance(name, str) and name not in _METHODS and name in _PROVIDERS:
        import importlib

        importlib.import_module(_PROVIDERS[name])
    if not isinstance(name, str) or name not in _METHODS:
        raise InputError(f"unknown aggregation method {name!r}{_METHODS.suggest(name)} "
                         f"(known: {', '.join(sorted(_METHODS))})")
    return _METHODS[name]


def all_methods() -> list[Method]:
    """Every registered method (providers of late-registered methods are imported first)."""
    import importlib

    for name, module in _PROVIDERS.items():
        if name not in _METHODS:
            try:
                importlib.import_module(module)
            except ImportError:  # an optional provider that is not installed
                pass
    return [_METHODS[k] for k in sorted(_METHODS)]


def list_methods() -> pd.DataFrame:
    """The registered methods with family, accepted inputs, missing-value policy and citation."""
    return pd.DataFrame([{"name": m.name, "family": m.family, "accepts": ", ".join(m.accepts),
                          "params": ", ".join(f"{k}={v!r}" for k, v in m.params.items()),
                          "missing": m.missing, "description": m.description, "citation": m.citation}
                         for m in all_methods()])


def register_column_parts(name: str) -> Callable:
    """Attach the per-column parts of a column-additive method (see :attr:`Method.column_parts`)."""

    def decorate(fn: Callable[..., tuple[np.ndarray, np.ndarray | None]]) -> Callable:
        _METHODS.add(name, replace(get_method(name), column_parts=fn), replace=True)
        return fn

    return decorate
