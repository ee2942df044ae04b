"""The metric registry: one frozen record per metric, looked up by name.

A metric is registered by one call, :func:`register`, naming its public numpy function as
``core`` (or, the same call, as a decorator on that function)::

    register("brier_score", core=brier_score, family="scoring_rules", kind="binary", inputs=("y", "p"),
             higher_is_better=False, bounds=(0.0, 1.0), proper="strict", per_row=True,
             params={}, tested_against=("scikit-learn brier_score_loss", 1e-12),
             citation="Brier (1950), Monthly Weather Review 78(1)")

Family helpers (the ranking ``measure``, the parametric ``register_dist``) only build that
call. The registry name is the public function's name: ``fn.__name__``, or ``X@param`` for a
function ``X`` or ``X_at_param`` (``ndcg@k`` for ``ndcg``, ``pass@k`` for ``pass_at_k``);
:func:`canonical_name_matches` states the rule and the contract test holds every metric to it.

A metric may also have **aliases**, other spellings of the same record that resolve exactly
like its name (the field's short names: ``p@k``, ``map@k``, ``mrr``, ``11pt_avg``)::

    register("average_precision@k", core=average_precision, aliases=("map@k",), ...)

``metric("map@10")`` is ``metric("average_precision@10")`` named ``map@10``: a lookup keeps the
spelling it was given, so output columns read as the user asked. An alias may not collide with
any registered name or other alias; :func:`register` refuses it with one error.

Parameters are declared like kind options, as :class:`~scorebench.core.table_schema.Option`
(type, choices, default, doc); a plain default declares an option whose type is the
function's annotation of that keyword (``int``, ``float``, ``bool``, ``str``, optionally
``| None``), else that of the default. A lookup with a bad parameter fails with one template::

    metric 'ece': parameter 'n_bins' expects an integer, got 'ten'

Parameterised names resolve by their ``@`` parameter: a metric registered as ``ndcg@k``
with ``params={"k": None}`` is found by ``metric("ndcg@10")`` with ``k=10`` bound.
Third-party packages add metrics through the entry-point group ``scorebench.metrics``;
each entry point names a module (or a callable) whose import registers its metrics.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, cast

from scorebench.core.builtins import load_builtins
from scorebench.core.records import Registry
from scorebench.core.errors import InputError, UnknownMetricError
from scorebench.core.table_schema import Option

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Metric", "register", "metric", "list_metrics", "all_metrics", "ENTRY_POINT_GROUP", "COVERS", "COVERS_TEXT",
           "NO_EXTERNAL_REFERENCE", "describe_tested_against", "metric_aliases", "canonical_name_matches"]

ENTRY_POINT_GROUP = "scorebench.metrics"
_PROPER = (None, "proper", "strict")
#: What a metric's interval covers (``Metric.covers``); None = derived from ``per_row``.
COVERS = (None, "population", "estimator_mean")
COVERS_TEXT = {"population": "the population value (unbiased or bias-corrected estimator)",
               "estimator_mean": "the estimator's mean at this n (biased plug-in; not the population value)"}
#: ``tested_against`` of a metric the test suite compares with no external implementation or
#: published number: only hand-computed examples and the registry-wide contract properties.
NO_EXTERNAL_REFERENCE = ("no external reference: hand-computed examples and contract properties only", None)


@dataclass(frozen=True)
class Metric:
    """Everything scorebench knows about one metric.

    Attributes
    ----------
    name : str
        Registered name (``"crps_normal"``), or the resolved name of a parameterised
        metric (``"ndcg@10"``).
    family : str
        Metric family (``"scoring_rules"``, ``"calibration"``, ``"ranking"``, ...).
    kind : str
        Input table kind the metric reads (see :mod:`scorebench.core.tables`).
    fn : callable
        The public function (numpy, or a lazy torch wrapper).
    inputs : tuple of str
        Names of the kind's arrays passed positionally to ``fn`` when evaluating a table.
    higher_is_better : bool or None
        Direction; ``None`` means the values have no order (e.g. a signed bias).
    bounds : (float, float)
        Range of attainable values.
    proper : {"strict", "proper", None}
        Propriety of a scoring rule; ``None`` for metrics that are not scoring rules.
    per_row : bool
        True when the metric is the mean of per-row (or per-query) contributions, which
        ``fn`` returns; the table value is then their mean and the bootstrap resamples
        contributions. False for set-level metrics whose ``fn`` returns one number.
    params : mapping
        Keyword parameters and their current values (defaults, or bound by the name).
    at_param : str or None
        The parameter spelled after ``@`` in the name (``k`` in ``ndcg@10``).
    needs_torch : bool
        Whether ``fn`` needs torch.
    differentiable : bool
        Whether the metric is a differentiable (training) objective.
    citation : str
        Where the definition comes from.
    table_fn : callable
        ``table_fn(arrays, **params)``: how every engine applies the metric to a kind's
        arrays. Given for metrics that cannot be called as ``fn(*arrays)`` (ranking metrics
        over queries); otherwise derived from ``fn`` and ``inputs`` (:class:`Positional`).
    partial, finalize : callable or None
        For set-level metrics that reduce by sums (binned calibration errors, FID's
        moments): ``partial(arrays, weights, **params)`` returns sufficient statistics
        that add across partitions — shape ``(S,)``, or ``(B, S)`` with a ``(B, n)``
        weight matrix — and ``finalize(stats, **params)`` turns (batched) statistics into
        values. The Dask engine uses them instead of collecting rows.
    proportion : bool
        True when the per-row contributions are right/wrong (0/1) outcomes, so the value is
        a proportion: :func:`scorebench.evaluate` then gives a Wilson (or Jeffreys) interval
        instead of a percentile bootstrap, and McNemar's test applies.
    interval : str or None
        The interval rule (a name in :data:`scorebench.core.stats.INTERVAL_METHODS`) that every
        engine applies to this metric's bootstrap replicates; ``None`` means the default
        of :attr:`interval_method`.
    bootstrap_stats : callable or None
        Optional fast multinomial bootstrap of the sufficient statistics for large tables,
        ``bootstrap_stats(arrays, n_boot, rng, **params)`` -> ``(n_boot, S)`` (binned
        calibration errors: exact cell counts, normal sums within cells).
    note : callable or None
        Optional ``note(arrays, **params)`` -> dict of counts to record in the output's
        attrs (e.g. ``{"clipped_rows": 2}``) plus an optional ``"message"`` to warn with.
    options : tuple of Option
        The typed declaration of every parameter (type, choices, default, doc), in the
        order of ``params``; :meth:`with_params` checks values against it.
    tested_against : tuple of (str, float or None)
        What the test suite compares the metric with, and at which tolerance: a reference
        library (``("scoringrules 0.7", 1e-10)``), a published source or a closed form;
        :data:`NO_EXTERNAL_REFERENCE` when there is none.
    covers : {"population", "estimator_mean"} or None
        What the metric's interval covers (:attr:`interval_covers`): ``"population"`` when the
        estimator is unbiased (or bias-corrected) for the population value, so its interval
        is an interval for that value; ``"estimator_mean"`` when it is a plug-in estimator
        biased at finite n, so its interval covers the estimator's expectation at this
        sample size, not the population value. ``None``: ``"population"`` for means of
        per-row contributions, ``"estimator_mean"`` for set-level metrics.
    distribution : mapping or None
        For rules of a parametric forecast distribution: ``{"parameters": {name: (support,
        default)}, "support": <support of the outcome>}`` (default ``None`` = required), the
        columns a ``parametric`` table provides.
    aliases : tuple of str
        Other registered spellings of this metric (``("p@k",)``), each resolving to this
        record; a lookup by an alias names the result as spelled (``p@10``).
    """

    name: str
    family: str
    kind: str
    fn: Callable[..., Any] = field(repr=False, compare=False)
    inputs: tuple[str, ...] = ()
    higher_is_better: bool | None = None
    bounds: tuple[float, float] = (-math.inf, math.inf)
    proper: str | None = None
    per_row: bool = True
    params: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    at_param: str | None = None
    needs_torch: bool = False
    differentiable: bool = False
    citation: str = ""
    table_fn: Callable[..., Any] | None = field(default=None, repr=False, compare=False)
    partial: Callable[..., Any] | None = field(default=None, repr=False, compare=False)
    finalize: Callable[..., Any] | None = field(default=None, repr=False, compare=False)
    proportion: bool = False
    interval: str | None = None
    bootstrap_stats: Callable[..., Any] | None = field(default=None, repr=False, compare=False)
    note: Callable[..., Any] | None = field(default=None, repr=False, compare=False)
    distribution: Mapping[str, Any] | None = field(default=None, repr=False, compare=False)
    covers: str | None = None
    options: tuple[Option, ...] = field(default=(), compare=False)
    tested_against: tuple[tuple[str, float | None], ...] = ()
    aliases: tuple[str, ...] = field(default=(), compare=False)

    @property
    def interval_covers(self) -> str:
        """What the interval covers: ``"population"`` (the population value) or
        ``"estimator_mean"`` (the estimator's mean at this n; see :attr:`covers`)."""
        if self.covers is not None:
            return self.covers
        return "population" if self.per_row else "estimator_mean"

    @property
    def interval_method(self) -> str:
        """The interval rule: declared, else ``percentile`` for means of per-row
        contributions and ``centered_percentile`` for set-level metrics (a plug-in
        set-level estimator is in general biased at finite n, and a percentile bootstrap
        adds that bias a second time)."""
        if self.interval is not None:
            return self.interval
        return "percentile" if self.per_row else "centered_percentile"

    @property
    def mergeable(self) -> bool:
        """Whether the value reduces by adding per-partition statistics."""
        return self.per_row or (self.partial is not None and self.finalize is not None)

    def partial_stats(self, arrays: Mapping[str, Any], weights: Any = None) -> Any:
        """Sufficient statistics of a set-level mergeable metric (see ``partial``)."""
        return self._mergeable_part(self.partial, "partial")(arrays, weights, **self._call_params())

    def finalize_stats(self, stats: Any) -> Any:
        """Values from (batched) sufficient statistics (see ``finalize``)."""
        return self._mergeable_part(self.finalize, "finalize")(stats, **self._call_params())

    def _mergeable_part(self, fn: Callable[..., Any] | None, what: str) -> Callable[..., Any]:
        # An engine asks only mergeable metrics; a None here is a caller's bug, named plainly.
        if fn is None:
            raise TypeError(f"metric {self.name!r} has no {what}: it is not mergeable (see Metric.mergeable)")
        return fn

    @property
    def base_name(self) -> str:
        """The registered name, with ``@param`` in place of a bound value."""
        return self.name.split("@", 1)[0] + (f"@{self.at_param}" if self.at_param else "")

    @property
    def canonical_name(self) -> str:
        """The name with an alias's spelling replaced by the registered one (``map@10`` ->
        ``average_precision@10``): the key of the metric's random streams, so an alias gives the
        same intervals as the name it stands for."""
        base, sep, rest = self.name.partition("@")
        head, paren, tail = base.partition("(")
        return _ALIASES.get(head, head) + paren + tail + sep + rest

    @property
    def description(self) -> str:
        """First line of the function's docstring."""
        doc = inspect.getdoc(self.fn) or ""
        return doc.strip().splitlines()[0] if doc.strip() else ""

    def with_params(self, **params: Any) -> Metric:
        """Return a copy with parameters overridden (unknown names raise).

        The copy's name spells the bound ``@`` value and every parameter that differs
        from the registered default, e.g. ``crps_ensemble(estimator=fair)``, so variants
        of one metric can be evaluated side by side and parsed back by :func:`metric`.
        """
        merged = {**self.params, **self._coerce_params(params)}
        name = self._variant_name(merged)
        return replace(self, name=name, params=MappingProxyType(merged))

    def _coerce_params(self, params: dict[str, Any]) -> dict[str, Any]:
        """Check ``params`` names and convert their values by the declared option types."""
        unknown = set(params) - set(self.params)
        if unknown:
            raise InputError(
                f"metric {self.base_name!r}: unknown parameter(s) {sorted(unknown)}; "
                f"accepted: {describe_params(self) or 'none'}"
            )
        declared = {o.name: o for o in self.options}
        # "none" on the command line spells None (e.g. log_score(clip=none)); the declared type converts the rest
        params = {k: None if isinstance(v, str) and v.strip().lower() == "none" else v for k, v in params.items()}
        return {k: declared[k].coerce(v, self.base_name, owner="metric", noun="parameter") if k in declared else v
                for k, v in params.items()}

    def _variant_name(self, merged: dict[str, Any]) -> str:
        """The name of the variant with parameters ``merged``: ``base@at(changed=...)``."""
        base = self.name.split("@", 1)[0].split("(", 1)[0]
        registered = _lookup(base)
        defaults = registered.params if registered is not None else self.params
        name = base
        if self.at_param and merged.get(self.at_param) is not None:
            name += f"@{_format_param(merged[self.at_param])}"
        changed = [f"{k}={_format_param(v)}" for k, v in merged.items()
                   if k != self.at_param and k in defaults and v != defaults[k]]
        if changed:
            name += f"({','.join(changed)})"
        return name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the function with the bound parameters (overridable by keyword)."""
        return self.fn(*args, **{**self._call_params(), **kwargs})

    def _call_params(self) -> dict[str, Any]:
        return {k: v for k, v in self.params.items() if v is not None or k != self.at_param}

    def __post_init__(self) -> None:
        # One way to run a metric on a table: a record without its own table function
        # gets the one that passes its ``inputs`` to ``fn`` positionally.
        if self.table_fn is None:
            object.__setattr__(self, "table_fn", Positional(self.fn, self.inputs))

    def compute(self, arrays: Mapping[str, Any]) -> Any:
        """Apply the metric to a kind's arrays: per-row contributions or one value."""
        table_fn = cast(Callable[..., Any], self.table_fn)  # never None after __post_init__
        try:
            return table_fn(arrays, **self._call_params())
        except MissingInputs as exc:
            raise InputError(f"metric {self.name!r} needs input(s) {exc.names} that the table does not "
                             "provide") from None


class MissingInputs(Exception):
    """Raised by :class:`Positional` when the arrays lack some of the inputs."""

    def __init__(self, names: list[str]) -> None:
        super().__init__(names)
        self.names = names


@dataclass(frozen=True)
class Positional:
    """The table function of an array function: ``fn(*(arrays[i] for i in inputs), **params)``.

    Examples
    --------
    >>> Positional(lambda y, p: y - p, ("y", "p"))({"y": 3.0, "p": 1.0})
    2.0
    """

    fn: Callable[..., Any]
    inputs: tuple[str, ...]

    def __call__(self, arrays: Mapping[str, Any], **params: Any) -> Any:
        missing = [name for name in self.inputs if name not in arrays]
        if missing:
            raise MissingInputs(missing)
        return self.fn(*(arrays[name] for name in self.inputs), **params)


_REGISTRY: Registry[Metric] = Registry("metric", site=lambda m: definition_site(m.fn))
#: Alias base name -> registered base name (``"map"`` -> ``"average_precision"``).
_ALIASES: dict[str, str] = {}
_entry_points_loaded = False


def _lookup(base: str) -> Metric | None:
    """The record registered as ``base`` or under the alias ``base``, else None."""
    return _REGISTRY.get(_ALIASES.get(base, base))


def canonical_name_matches(name: str, fn_name: str) -> bool:
    """Whether registry ``name`` follows the naming rule for a function called ``fn_name``.

    The rule: the name is the function's name, or ``X@param`` for a function ``X`` or
    ``X_at_param`` (``ndcg@k`` for ``ndcg``, ``pass@k`` for ``pass_at_k``).

    Examples
    --------
    >>> canonical_name_matches("ndcg@k", "ndcg"), canonical_name_matches("pass@k", "pass_at_k")
    (True, True)
    >>> canonical_name_matches("p@k", "precision")
    False
    """
    base, _, at = name.partition("@")
    return fn_name == name or fn_name == base or (bool(at) and fn_name == f"{base}_at_{at}")


def _check_aliases(name: str, aliases: tuple[str, ...]) -> None:
    """Refuse aliases that are malformed or taken (one error naming the clash)."""
    base, _, at_param = name.partition("@")
    if _ALIASES.get(base, base) != base:
        raise ValueError(f"metric {name!r}: the name is already an alias of metric {_ALIASES[base]!r}")
    for alias in aliases:
        if not isinstance(alias, str) or not alias or alias != alias.strip() or "(" in alias:
            raise ValueError(f"metric {name!r}: alias must be a plain name, got {alias!r}")
        alias_base, _, alias_at = alias.partition("@")
        if alias_at != at_param:
            expected = f"'<name>@{at_param}'" if at_param else "no '@' part"
            raise ValueError(f"metric {name!r}: alias {alias!r} must spell the same parameter ({expected})")
        owner = _ALIASES.get(alias_base)
        if alias_base == base or alias_base in _REGISTRY or (owner is not None and owner != base):
            taken = "its own name" if alias_base == base else (
                f"an alias of metric {owner!r}" if owner is not None else f"the metric {alias_base!r}")
            raise ValueError(f"metric {name!r}: alias {alias!r} collides with {taken}")


def metric_aliases() -> dict[str, str]:
    """Every alias and the registered name it resolves to (``{"map@k": "average_precision@k"}``).

    Examples
    --------
    >>> import scorebench
    >>> scorebench.metric("map@k").fn is scorebench.metric("average_precision@k").fn
    True
    """
    _ensure_loaded()
    return {alias: m.name for m in _REGISTRY.values() for alias in m.aliases}


def _format_param(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def parse_value(text: str) -> Any:
    """Text from a metric name or the command line, kept as text (stripped).

    A parameter's declared :class:`Option` type converts it (``"10"`` -> ``10`` for an
    integer ``k``); nothing is guessed from how the text looks.
    """
    return text.strip()


def describe_params(m: Metric) -> str:
    """The metric's parameters as one line: ``name (type {choices}, default d)``.

    Examples
    --------
    >>> import scorebench
    >>> describe_params(scorebench.metric("ece")).split("; ")[0]
    'n_bins (an integer, default 15)'
    >>> describe_params(scorebench.metric("ndcg@10")).split("; ")[0]
    'k (an integer)'
    """
    return "; ".join(o.describe() for o in m.options)


def describe_tested_against(m: Metric) -> str:
    """What the tests compare the metric with, as one line (``scoringrules (tol 1e-10)``)."""
    return "; ".join(ref if tol is None else f"{ref} (tol {tol:g})" for ref, tol in m.tested_against)


_ANNOTATION_TYPES = {"int": int, "float": float, "bool": bool, "str": str}


def _declare(name: str, fn: Callable, params: Mapping[str, Any]) -> tuple[dict[str, Any], tuple[Option, ...]]:
    """Defaults and typed :class:`Option` declarations from ``params`` (Options or defaults)."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        signature = None
    defaults, options = {}, []
    for key, spec in params.items():
        if isinstance(spec, Option):
            if spec.name != key:
                raise ValueError(f"metric {name!r}: parameter {key!r} declared as Option {spec.name!r}")
            option = spec
        else:
            option = Option(key, _declared_type(fn, signature, key, spec), spec)
        defaults[key] = option.default
        options.append(option)
    return defaults, tuple(options)


def _declared_type(fn: Callable, signature: inspect.Signature | None, key: str, default: Any) -> Any:
    parameter = signature.parameters.get(key) if signature is not None else None
    annotation = parameter.annotation if parameter is not None else inspect.Parameter.empty
    if annotation is inspect.Parameter.empty:
        annotation = None
    elif isinstance(annotation, type):
        annotation = annotation.__name__
    elif not isinstance(annotation, str):
        annotation = str(annotation)
    if isinstance(annotation, str):
        parts = {part.strip() for part in annotation.split("|")} - {"None"}
        if len(parts) == 1 and (only := parts.pop()) in _ANNOTATION_TYPES:
            return _ANNOTATION_TYPES[only]
        return "any"  # declared, but not one scalar type (Any, a mapping, an array)
    if isinstance(default, bool):
        return bool
    if isinstance(default, (int, float, str)):
        return type(default)
    return "any"


def _tested_against(name: str, value: Any) -> tuple[tuple[str, float | None], ...]:
    pairs = (value,) if value and isinstance(value[0], str) else tuple(value or ())
    for pair in pairs:
        if len(pair) != 2 or not isinstance(pair[0], str) or not pair[0] or \
                not (pair[1] is None or isinstance(pair[1], (int, float))):
            raise ValueError(f"metric {name!r}: tested_against takes (reference, tolerance) pairs, got {pair!r}")
    return tuple((ref, None if tol is None else float(tol)) for ref, tol in pairs)


def register(name: str, *, core: Callable | None = None, family: str, kind: str, inputs: tuple[str, ...] = (),
             higher_is_better: bool | None, bounds: tuple[float, float] = (-math.inf, math.inf),
             proper: str | None = None, per_row: bool = True, params: Mapping[str, Any] | None = None,
             needs_torch: bool = False, differentiable: bool = False, citation: str = "",
             table_fn: Callable[..., Any] | None = None, partial: Callable[..., Any] | None = None,
             finalize: Callable[..., Any] | None = None,
             proportion: bool = False, interval: str | None = None,
             bootstrap_stats: Callable[..., Any] | None = None,
             note: Callable[..., Any] | None = None,
             distribution: Mapping[str, Any] | None = None,
             covers: str | None = None,
             tested_against: Any = (),
             aliases: tuple[str, ...] | str = ()) -> Any:
    """Register ``core`` (the metric's public function) as metric ``name``; returns ``core``.

    The one way to define a metric. Without ``core`` it is the same call as a decorator:
    ``@register(name, ...)`` on the function.

    ``name`` is the function's name (``core.__name__``), optionally followed by ``@param``
    (``"ndcg@k"``): ``param`` must then be in ``params``. ``params`` maps each keyword to its
    :class:`~scorebench.core.table_schema.Option` declaration, or to a plain default (typed by
    the function's annotation of that keyword, else by the default). ``tested_against`` is a
    ``(reference, tolerance)`` pair, or several, naming what the test suite compares the
    metric with (:data:`NO_EXTERNAL_REFERENCE` when nothing external). ``aliases`` are other
    spellings that resolve to this metric (``("map@k",)``; each spells the same ``@param``).
    Registering a name twice, or an alias that is taken (a name or another metric's alias), raises,
    so two plugins cannot silently shadow each other.
    """
    if proper not in _PROPER:
        raise ValueError(f"proper must be one of {_PROPER}, got {proper!r}")
    from scorebench.core.stats import INTERVAL_METHODS

    if interval is not None and interval not in INTERVAL_METHODS:
        raise ValueError(f"interval must be one of {sorted(INTERVAL_METHODS)}, got {interval!r}")
    if covers not in COVERS:
        raise ValueError(f"covers must be one of {COVERS}, got {covers!r}")
    base, _, at_param = name.partition("@")
    at_param = at_param or None
    params = dict(params or {})
    if at_param is not None and at_param not in params:
        raise ValueError(f"metric {name!r}: parameter {at_param!r} must be listed in params")
    if len(bounds) != 2:
        raise ValueError(f"metric {name!r}: bounds must be (lower, upper), got {bounds!r}")
    tested = _tested_against(name, tested_against)
    aliases = (aliases,) if isinstance(aliases, str) else tuple(aliases)

    def decorate(fn: Callable) -> Callable:
        defaults, options = _declare(name, fn, params)
        _check_aliases(name, aliases)
        # The same function registering again is its module being imported a second
        # time (e.g. by a doctest runner); the newer definition replaces the older one.
        _REGISTRY.add(base, Metric(
            name=name, family=family, kind=kind, fn=fn, inputs=tuple(inputs),
            higher_is_better=higher_is_better, bounds=(float(bounds[0]), float(bounds[1])),
            proper=proper, per_row=per_row, params=MappingProxyType(defaults), at_param=at_param,
            needs_torch=needs_torch, differentiable=differentiable, citation=citation,
            table_fn=table_fn, partial=partial, finalize=finalize, proportion=proportion, interval=interval,
            bootstrap_stats=bootstrap_stats, note=note, distribution=distribution, covers=covers,
            options=options, tested_against=tested, aliases=aliases,
        ))
        _ALIASES.update((alias.partition("@")[0], base) for alias in aliases)
        return fn

    return decorate if core is None else decorate(core)


def definition_site(fn: Callable) -> str:
    """Where a function was defined: its source file and qualified name (not its module
    name, which differs when a test runner imports the same file under another name)."""
    code = getattr(fn, "__code__", None)
    return f"{code.co_filename if code else getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', repr(fn))}"


def _load_entry_points() -> None:
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        loaded = ep.load()
        if callable(loaded) and not inspect.ismodule(loaded):
            loaded()


def _ensure_loaded() -> None:
    # The built-in families register on import (one start-up module); plugins come on first use.
    load_builtins()
    _load_entry_points()


def metric(name: str, **params: Any) -> Metric:
    """Look a metric up by name, e.g. ``metric("crps_normal")`` or ``metric("ndcg@10")``.

    Parameters can also be spelled in the name, ``"crps_ensemble(estimator=fair)"`` or
    ``"ndcg@10(gain=exponential)"`` (handy on the command line). Keyword arguments override parameters. An unknown name raises
    :class:`~scorebench.core.errors.UnknownMetricError` listing close matches (aliases included).
    An alias resolves like the registered name and keeps its spelling: ``metric("map@10")`` is
    average precision cut at 10, named ``map@10``.

    Examples
    --------
    >>> import scorebench
    >>> m = scorebench.metric("brier_score")
    >>> m.higher_is_better, m.per_row
    (False, True)
    >>> float(m.fn([1, 0], [0.8, 0.4]).mean())
    0.1
    >>> scorebench.metric("crps_ensemble", estimator="fair").name
    'crps_ensemble(estimator=fair)'
    >>> m = scorebench.metric("map@10")
    >>> m.name, m.fn.__name__, dict(m.params)
    ('map@10', 'average_precision', {'k': 10})
    """
    if not isinstance(name, str) or not name.strip():
        raise UnknownMetricError(f"metric name must be a non-empty string, got {name!r}")
    _ensure_loaded()
    name = name.strip()
    head, paren, tail = name.partition("(")
    if paren:
        if not tail.endswith(")"):
            raise UnknownMetricError(f"metric {name!r}: expected name(param=value, ...)")
        params = {**_parse_call_params(name, tail[:-1]), **params}
    base, sep, value = head.strip().partition("@")
    record = _lookup(base)
    if record is None:
        hint = _REGISTRY.suggest(base, n=4, also=_ALIASES)
        raise UnknownMetricError(f"unknown metric {name!r}{hint} (see `scorebench metrics`)")
    if base in _ALIASES:  # another spelling of the record: keep it, so output reads as asked
        record = replace(record, name=base + record.name[len(record.name.split("@", 1)[0]):])
    if sep:
        if record.at_param is None:
            raise UnknownMetricError(f"metric {base!r} takes no '@' parameter (got {name!r})")
        if not value:
            raise UnknownMetricError(f"metric {name!r}: missing value after '@'")
        if value != record.at_param:  # "ndcg@k", the listed name itself, keeps the default
            params = {record.at_param: parse_value(value), **params}
    elif record.at_param is not None:
        # Without a value ("map" for "map@k") the metric runs uncut and is named plainly.
        record = replace(record, name=base)
    return record.with_params(**params) if params else record


def _parse_call_params(name: str, text: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise UnknownMetricError(f"metric {name!r}: expected param=value, got {item!r}")
        out[key.strip()] = parse_value(value.strip())
    return out


def all_metrics() -> list[Metric]:
    """Every registered metric record, sorted by family then name."""
    _ensure_loaded()
    return sorted(_REGISTRY.values(), key=lambda m: (m.family, m.name))


def list_metrics(family: str | None = None) -> pd.DataFrame:
    """The registry as a DataFrame: one row per metric with its metadata (``aliases``: the
    other spellings that resolve to it, comma-separated).

    Examples
    --------
    >>> import scorebench
    >>> table = scorebench.list_metrics(family="scoring_rules")
    >>> "crps_normal" in set(table["name"])
    True
    >>> scorebench.list_metrics(family="ranking").set_index("name").loc["reciprocal_rank", "aliases"]
    'mrr'
    """
    import pandas as pd

    rows = [
        {
            "name": m.name, "aliases": ", ".join(m.aliases), "family": m.family, "kind": m.kind,
            "higher_is_better": m.higher_is_better, "lower_bound": m.bounds[0],
            "upper_bound": m.bounds[1], "proper": m.proper, "per_row": m.per_row,
            "interval": "wilson" if m.proportion else m.interval_method, "interval_covers": COVERS_TEXT[m.interval_covers],
            "params": ", ".join(f"{k}={v!r}" for k, v in m.params.items()),
            "param_types": describe_params(m), "tested_against": describe_tested_against(m),
            "needs_torch": m.needs_torch, "differentiable": m.differentiable,
            "description": m.description, "citation": m.citation,
        }
        for m in all_metrics()
        if family is None or m.family == family
    ]
    if family is not None and not rows:
        families = sorted({m.family for m in all_metrics()})
        raise UnknownMetricError(f"unknown family {family!r}; known families: {', '.join(families)}")
    columns = ["name", "aliases", "family", "kind", "higher_is_better", "lower_bound", "upper_bound", "proper",
               "per_row", "interval", "interval_covers", "params", "param_types", "tested_against", "needs_torch", "differentiable", "description", "citation"]
    return pd.DataFrame(rows, columns=columns)
