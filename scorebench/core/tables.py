"""Table kinds: the column conventions a metric reads, validated once at the boundary.

A *kind* turns a long result table into the arrays its metrics take. Each kind is a
function registered with :func:`register_kind`; it validates the columns it needs and
returns :class:`Inputs`: one *unit* per row (or per query for ranking tables), the
grouping columns for each unit, per-unit arrays and shared constants.

Each kind *declares* its columns and options (:class:`~scorebench.core.table_schema.Column`,
:class:`~scorebench.core.table_schema.Option`); ``system`` and ``task`` are optional grouping
columns of every kind, ``id`` an optional item key that pairs rows across systems. The
declarations drive validation (:func:`start_table`, :meth:`Kind.check_options`), the command
line's flags, ``scorebench kinds`` and the README's table reference
(:mod:`scorebench.core.kinds_reference`). Kinds of stage ``"aggregate"`` (``scores``, ``wide``,
``battles``, ``items``) are the inputs of :func:`scorebench.aggregate`, recognised from their
declared columns by :func:`detect_kind`.

The forecast kinds live here: ``binary`` (y, p), ``multiclass`` (y, p_<class>),
``ensemble`` (y, m0, m1, ... or long), ``quantile`` (y, q<level>), ``parametric`` (y and
the distribution's parameters), ``interval`` (y, lower, upper) and ``multivariate``
(y.<d>, m<j>.<d>); the other families register theirs next to their metrics.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import pandas as pd

from scorebench.core.builtins import load_builtins
from scorebench.core.records import Registry
from scorebench.core.errors import InputError
from scorebench.core.registry import definition_site
from scorebench.core.table_schema import (Column, Option, check_declared_columns, check_declared_values, describe_columns,
                           describe_options)
from scorebench.core.validation import check_choice, describe_rows, show_value

__all__ = ["Inputs", "Kind", "NestedUnits", "Column", "Option", "register_kind", "get_kind", "all_kinds", "infer_kind", "detect_kind",
           "kinds_table",
           "GROUP_COLUMNS", "NAN_POLICIES", "numeric_column", "require_columns", "start_table",
           "unit_frame", "drop_nan_rows", "multivariate_columns", "declared_column", "check_long_members"]

GROUP_COLUMNS = ("system", "task")
NAN_POLICIES = ("raise", "omit", "propagate")


@dataclass(frozen=True)
class Inputs:
    """What a kind extracts from a table.

    Attributes
    ----------
    frame : DataFrame
        One row per unit with the grouping columns (and ``key`` when present), in unit order.
    arrays : dict
        Per-unit arrays; axis 0 has one entry per unit.
    consts : dict
        Values shared by all units (quantile levels, class labels, ...).
    key : str or None
        Column of ``frame`` that identifies the same unit across systems (``id``, ``qid``).
    content : dict or None
        Per-unit arrays that identify a unit's content for :meth:`unit_hashes` when there is
        no key; by default the ``arrays`` themselves. A kind whose arrays hold row *positions*
        (the embeddings kind) gives the units' values here, so the hashes, and the Poisson
        bootstrap weights drawn from them, do not depend on how the table is partitioned.
    """

    frame: pd.DataFrame
    arrays: dict[str, np.ndarray]
    consts: dict[str, Any] = field(default_factory=dict)
    key: str | None = None
    content: dict[str, np.ndarray] | None = None

    @property
    def n(self) -> int:
        return len(self.frame)

    def merged(self) -> dict[str, Any]:
        """Per-unit arrays and constants in one mapping, as metrics receive them."""
        return {**self.consts, **self.arrays}

    def take(self, index: np.ndarray) -> dict[str, Any]:
        """The merged mapping restricted to (or resampled at) positions ``index``."""
        return {**self.consts, **{k: v[index] for k, v in self.arrays.items()}}

    def unit_hashes(self) -> np.ndarray:
        """A 64-bit hash per unit that depends only on the unit's content, not its position.

        With a key column the hash covers the grouping labels and the key; without one it
        covers every label and array value of the unit. The Poisson bootstrap derives its
        weights from these, so they are the same however the table is partitioned.
        """
        # sorted: a table read back from hive-partitioned Parquet has its columns in another order
        columns = sorted(self.frame.columns, key=str) if self.key is None else \
            sorted((c for c in self.frame.columns if c in GROUP_COLUMNS or c == self.key), key=str)
        h = np.zeros(self.n, dtype=np.uint64)
        parts = [hash_labels(self.frame[c]) for c in columns]
        if self.key is None:
            content = self.arrays if self.content is None else self.content
            for name in sorted(content):
                values = np.ascontiguousarray(content[name], dtype=np.float64).reshape(self.n, -1)
                parts.extend(pd.util.hash_array(values[:, j]) for j in range(values.shape[1]))
        for part in parts:
            with np.errstate(over="ignore"):
                h = (h ^ part) * np.uint64(0x100000001B3) + np.uint64(0x9E3779B97F4A7C15)
        return h


def label_text(values: pd.Series) -> pd.Series:
    """Labels as text, integers (and integral floats) printed as integers.

    So ids read as ``7``, ``7.0`` or ``"7"`` from different files name the same unit.

    Examples
    --------
    >>> label_text(pd.Series([7.0, 12.0])).tolist()
    ['7', '12']
    """
    if values.dtype.kind in "iub":
        return values.astype(str)
    if values.dtype.kind == "f":
        arr = values.to_numpy()
        return (values.astype(np.int64) if np.all(arr == np.round(arr)) else values).astype(str)
    return values


def hash_labels(column: pd.Series) -> np.ndarray:
    """A 64-bit hash per label: numbers by value, other labels by their text.

    So ``1`` and ``1.0`` agree, and object, str and Arrow string columns agree; a number
    and its text (``7`` and ``"7"``) do not — pass :func:`label_text` first for that.

    Examples
    --------
    >>> import pandas as pd
    >>> bool((hash_labels(pd.Series(["q1", "q2"])) == hash_labels(pd.Series(["q1", "q2"], dtype=object))).all())
    True
    """
    if pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column):
        return pd.util.hash_array(column.to_numpy(dtype=np.float64))
    return pd.util.hash_array(np.asarray(column.astype(str), dtype=object))


STAGES = ("evaluate", "aggregate")


@dataclass(frozen=True)
class NestedUnits:
    """Which per-unit arrays of a kind hold repeated draws within each unit (a kind's ``nested`` hook).

    A unit of such a kind (an item answered several times) is itself a sample: the pandas
    engine's default bootstrap resamples units and then, within each drawn unit, its draws
    (:func:`scorebench.core.stats.two_level_draws`).

    Attributes
    ----------
    arrays : tuple of str
        The ``(units, width)`` arrays whose second axis holds a unit's draws, left-packed; an
        array a table does not produce (an optional column's) is skipped.
    sizes : str
        The ``(units,)`` integer array giving each unit's number of draws.

    Examples
    --------
    >>> NestedUnits(("outcomes", "answers"), "n_attempts").present({"outcomes": 1, "n_attempts": 2})
    ['outcomes']
    """

    arrays: tuple[str, ...]
    sizes: str

    def present(self, arrays: Mapping[str, Any]) -> list[str]:
        """The nested arrays that ``arrays`` holds, in declaration order."""
        return [name for name in self.arrays if name in arrays]


@dataclass(frozen=True)
class Kind:
    """A registered table kind: its declared columns and options, and its extractor.

    ``stage`` says what the kind feeds: ``"evaluate"`` kinds are result tables that
    :func:`scorebench.evaluate` turns into :class:`Inputs`; ``"aggregate"`` kinds (``scores``,
    ``wide``, ``battles``, ``items``) are what :func:`scorebench.aggregate` reads.
    """

    name: str
    extract: Callable[..., Any] = field(repr=False)
    columns: tuple[Column, ...] = ()
    description: str = ""
    options: tuple[Option, ...] = ()
    unit_column: str | Callable[[Sequence[str]], str | None] | None = None
    whole_groups: bool = False
    global_options: Callable[[Mapping[str, Any]], dict[str, Any]] | None = field(default=None, repr=False)
    # complete_units(options) -> None, or (partition options, fn(units seen per group, by, nan_policy) -> Inputs
    # of the units each group lacks): a partitioned engine scores those after merging (ranking's complete=True)
    complete_units: Callable[..., Any] | None = field(default=None, repr=False)
    stage: str = "evaluate"
    # detect(table) -> bool: whether a table has this kind's shape, when the declared required
    # columns alone cannot tell (per-item scores carry "all" rows); used by :func:`detect_kind`
    detect: Callable[[Any], bool] | None = field(default=None, repr=False)
    # side_data(arrays, half) -> arrays: constant side data that a fresh draw would change too
    # (generative metrics' reference samples), resampled with the rows by half-sampling rules;
    # ``half(n)`` gives the positions of a half-sample of n (the engine's draw). See register_kind.
    side_data: Callable[[dict[str, Any], Callable[[int], np.ndarray]], dict[str, Any]] | None = \
        field(default=None, repr=False)
    # nested: the per-unit arrays holding repeated draws within a unit (attempts of an item), which
    # the pandas engine's default bootstrap resamples within each drawn unit; None: units are atoms
    nested: NestedUnits | None = None

    @property
    def option_names(self) -> tuple[str, ...]:
        return tuple(o.name for o in self.options)

    @property
    def column_text(self) -> str:
        """The declared columns as one line of documentation."""
        return describe_columns(self.columns)

    def check_options(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """The options checked against the declaration (unknown ones refused, text converted)."""
        declared = {o.name: o for o in self.options}
        unknown = sorted(set(given) - set(declared))
        if unknown:
            accepted = ", ".join(declared) or "none"
            raise InputError(f"option(s) {unknown} do not apply to kind {self.name!r} (accepted: {accepted})")
        return {k: declared[k].coerce(v, self.name) for k, v in given.items()}

    def fits(self, table: Any) -> bool:
        """Whether ``table`` has this kind's shape: its ``detect`` hook, else every declared
        required column present."""
        if self.detect is not None:
            return bool(self.detect(table))
        columns = list(getattr(table, "columns", []))
        return all(c.find(columns) for c in self.columns if c.required and not c.placeholder)

    def partition_columns(self, columns: Sequence[str], groups: Sequence[str]) -> list[str] | None:
        """Columns whose equal values must share a partition, or None when rows are independent.

        A partitioned engine scores each partition on its own, so a unit spread over
        several rows (a query of a ranking run, an id of a long ensemble) must arrive whole,
        and so must a group whose metrics compare its rows with each other (retrieval over
        a gallery of embeddings).
        """
        if self.whole_groups:
            return list(groups)
        unit = self.unit_column(list(columns)) if callable(self.unit_column) else self.unit_column
        return [unit] if unit is not None and unit in columns else None


_KINDS: Registry[Kind] = Registry("kind", site=lambda k: definition_site(cast(Any, k.extract).__wrapped__))


def register_kind(name: str, *, columns: Sequence[Column], options: Sequence[Option] = (),
                  unit_column: str | Callable[[Sequence[str]], str | None] | None = None,
                  whole_groups: bool = False,
                  global_options: Callable[[Mapping[str, Any]], dict[str, Any]] | None = None,
                  complete_units: Callable[..., Any] | None = None, stage: str = "evaluate",
                  detect: Callable[[Any], bool] | None = None,
                  side_data: Callable[[dict[str, Any], Callable[[int], np.ndarray]], dict[str, Any]] | None = None,
                  nested: NestedUnits | None = None) -> Callable:
    """Decorator registering ``extract(df, *, nan_policy, **options) -> Inputs`` as a kind.

    ``columns`` declares the table's columns (:class:`~scorebench.core.table_schema.Column`) and
    ``options`` the extra keyword options the extractor accepts
    (:class:`~scorebench.core.table_schema.Option`, e.g. ``qrels``); validation, the command
    line's flags and the documentation come from them.
    ``unit_column`` names the column whose rows together form one unit (``qid`` for
    ranking tables), or is a function of the table's columns giving it (long ensembles);
    ``whole_groups`` says that metrics compare the rows of a group with each other. A
    partitioned engine keeps such rows in one partition (:meth:`Kind.partition_columns`).
    ``global_options(options) -> dict`` returns options that are properties of the whole
    input (the top grade of the qrels): a partitioned engine computes them once, before it
    splits the tables, and passes them to every partition, so no default depends on the
    partitioning. ``stage="aggregate"`` registers an input of :func:`scorebench.aggregate`
    (its extractor returns a score matrix or battles). ``side_data(arrays, half) -> arrays``
    resamples constants of the extracted units that are samples themselves (a generative
    kind's reference features): the half-sampling interval rules call it on each replicate's
    arrays with ``half(n)``, the positions of a half-sample of ``n`` drawn by the engine, so
    no engine names a kind's constants. ``nested`` (:class:`NestedUnits`) declares the arrays
    that hold repeated draws within each unit (a repeated-sampling kind's attempts): the
    pandas engine's default bootstrap then resamples units and the draws within each.
    """
    check_choice(stage, "stage", STAGES)
    columns, options = tuple(columns), tuple(options)
    if not all(isinstance(c, Column) for c in columns) or not all(isinstance(o, Option) for o in options):
        raise TypeError(f"kind {name!r}: declare columns as Column(...) and options as Option(...)")

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        doc = (fn.__doc__ or "").strip().splitlines()
        _KINDS.add(name, Kind(name=name, extract=_declared_first(fn, name, columns), columns=columns, description=doc[0] if doc else "",
                            options=options, unit_column=unit_column, whole_groups=whole_groups,
                            global_options=global_options, complete_units=complete_units, stage=stage,
                            detect=detect, side_data=side_data, nested=nested))
        return fn

    return decorate


def _declared_first(fn: Callable[..., Any], name: str, columns: tuple[Column, ...]) -> Callable[..., Any]:
    """``fn`` behind the declaration's checks: a DataFrame, unique column names and every
    required named column, before the extractor looks for its column families (m0, m1, ...)."""
    named = tuple(c for c in columns if c.pattern is None and not c.placeholder)

    @functools.wraps(fn)
    def extract(table: Any, **options: Any) -> Any:
        check_declared_columns(table, named, name)
        return fn(table, **options)

    return extract


def get_kind(name: str, stage: str | None = "evaluate") -> Kind:
    """Look a kind up by name (of ``stage``, or of any stage with ``stage=None``)."""
    load_builtins()
    if name not in _KINDS or (stage is not None and _KINDS[name].stage != stage):
        known = sorted(k for k, v in _KINDS.items() if stage is None or v.stage == stage)
        other = f" ({name!r} is an input of {_KINDS[name].stage})" if name in _KINDS else ""
        raise InputError(f"unknown table kind {name!r}{other}; known kinds: {', '.join(known)}")
    return _KINDS[name]


def all_kinds(stage: str | None = None) -> list[Kind]:
    """The registered kinds (of one ``stage``), sorted by name."""
    load_builtins()
    return [_KINDS[k] for k in sorted(_KINDS) if stage is None or _KINDS[k].stage == stage]


def detect_kind(table: Any, stage: str) -> Kind:
    """The most specific kind of ``stage`` that ``table`` fits (:meth:`Kind.fits`): a kind
    with a ``detect`` hook first, then the one with most required columns.

    Examples
    --------
    >>> import pandas as pd
    >>> detect_kind(pd.DataFrame({"a": ["x"], "b": ["y"], "winner": ["a"]}), "aggregate").name
    'battles'
    >>> detect_kind(pd.DataFrame({"acc": [0.5]}, index=["x"]), "aggregate").name
    'wide'
    """
    fitting = [k for k in all_kinds(stage) if k.fits(table)]
    if not fitting:
        names = ", ".join(k.name for k in all_kinds(stage))
        raise InputError(f"the table fits no {stage} table kind ({names}); its columns: "
                         f"{[str(c) for c in getattr(table, 'columns', [])][:12]}")
    return max(fitting, key=lambda k: (k.detect is not None, sum(c.required for c in k.columns)))


def infer_kind(metric_kinds: set[str], kind: str | None) -> str:
    """Resolve the table kind from the metrics' kinds and an optional explicit choice."""
    if kind is not None:
        get_kind(kind)
        wrong = sorted(k for k in metric_kinds if k != kind)
        if wrong:
            raise InputError(f"kind {kind!r} was given, but some metrics read kind(s) {wrong}")
        return kind
    if len(metric_kinds) != 1:
        raise InputError(f"the metrics read different table kinds {sorted(metric_kinds)}; "
                         "evaluate them on separate tables")
    return next(iter(metric_kinds))


# --- helpers shared by the extractors --------------------------------------------------


def require_columns(df: pd.DataFrame, columns: list[str] | tuple[str, ...], kind: str) -> None:
    """Raise naming every missing column and what the kind expects."""
    missing = [c for c in columns if c not in df.columns]
    if missing:
        present = ", ".join(map(str, df.columns[:12])) + (" ..." if df.shape[1] > 12 else "")
        raise InputError(f"kind {kind!r}: missing column(s) {missing}; the table has: {present}")


def numeric_column(df: pd.DataFrame, column: str, *, nan_ok: bool = False) -> np.ndarray:
    """A column as float64, refusing text, booleans-as-strings and infinities.

    Integer columns convert exactly (no truncation ever happens, since the target is
    float64 and the source integers are checked to be exactly representable).
    """
    series = df[column]
    if isinstance(series, pd.DataFrame):
        raise InputError(f"column {column!r} appears more than once; expected unique column names")
    values = series.to_numpy()
    if values.dtype.kind in "iu":
        if values.size and (values.max() > 2**53 or values.min() < -2**53):  # no |values| copy
            raise InputError(f"column {column!r}: integers larger than 2**53 cannot be represented exactly")
        return values.astype(np.float64)
    if values.dtype.kind == "b":
        return values.astype(np.float64)
    if values.dtype.kind != "f":
        converted = pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        bad = np.isnan(converted) & series.notna().to_numpy()
        if bad.any():
            first = series[bad].iloc[0]
            raise InputError(f"column {column!r}: expected numbers, got {show_value(first)} in "
                             f"{describe_rows(bad, df.index)}")
        values = converted
    values = values.astype(np.float64, copy=False)
    inf = np.isinf(values)
    if inf.any():
        raise InputError(f"column {column!r}: infinite values in {describe_rows(inf, df.index)}; "
                         "expected finite numbers")
    if not nan_ok:
        nan = np.isnan(values)
        if nan.any():
            raise InputError(f"column {column!r}: NaN (missing values) in {describe_rows(nan, df.index)}; "
                             "expected numbers (use nan_policy='omit' to drop such rows)")
    return values


def declared_column(df: pd.DataFrame, kind: str, column: str, nan_policy: str) -> np.ndarray:
    """A numeric column as float64, checked against the type ``kind`` declares for it
    (``binary``, ``probability``, ``count``): one message template for every kind."""
    values = numeric_column(df, column, nan_ok=nan_policy == "propagate")
    declared = next(c for c in _KINDS[kind].columns if column in (c.name, *c.aliases))
    check_declared_values(declared, column, values, df.index)
    return values


def drop_nan_rows(df: pd.DataFrame, columns: list[str], nan_policy: str) -> pd.DataFrame:
    """Apply ``nan_policy`` to missing values in ``columns`` (raise happens later, per column)."""
    check_choice(nan_policy, "nan_policy", NAN_POLICIES)
    if nan_policy != "omit" or not columns:
        return df
    keep = df[columns].notna().all(axis=1)
    return df.loc[keep]


def unit_frame(df: pd.DataFrame, key: str | None) -> pd.DataFrame:
    # Grouping columns, the unit key, and any other label (non-numeric) column, so that
    # evaluate(..., by="dataset") can group by a label the table carries.
    keep = [c for c in df.columns
            if c in GROUP_COLUMNS or c == key or not pd.api.types.is_numeric_dtype(df[c])]
    return df[keep].reset_index(drop=True)


def _id_key(df: pd.DataFrame) -> str | None:
    return "id" if "id" in df.columns else None


def _check_unique_ids(df: pd.DataFrame, key: str | None) -> None:
    if key is None:
        return
    cols = [c for c in GROUP_COLUMNS if c in df.columns] + [key]
    dup = df.duplicated(subset=cols, keep=False).to_numpy()
    if dup.any():
        raise InputError(f"column {key!r}: duplicate ids within a system in {describe_rows(dup, df.index)}; "
                         f"expected each ({', '.join(cols)}) once")


def _values(df: pd.DataFrame, columns: list[str], nan_policy: str) -> np.ndarray:
    nan_ok = nan_policy == "propagate"
    return np.column_stack([numeric_column(df, c, nan_ok=nan_ok) for c in columns]) if columns \
        else np.empty((len(df), 0))


def start_table(df: pd.DataFrame, kind: str, needed: list[str], nan_policy: str) -> tuple[pd.DataFrame, str | None]:
    """The common start of an extractor: a DataFrame with unique columns, the kind's declared
    required columns and ``needed`` (the columns found from patterns), ``nan_policy`` applied to
    ``needed``, at least one row, unique ids; returns it and the id key."""
    declared = _KINDS[kind].columns if kind in _KINDS else ()
    check_declared_columns(df, declared, kind)
    require_columns(df, needed, kind)
    df = drop_nan_rows(df, needed, nan_policy)
    if len(df) == 0:
        raise InputError(f"kind {kind!r}: the table has no rows to evaluate")
    key = _id_key(df)
    _check_unique_ids(df, key)
    return df, key


# --- built-in kinds for forecasts ------------------------------------------------------


@register_kind("binary", columns=(Column("y", "binary", "the outcome"),
                                  Column("p", "probability", "predicted probability that y = 1")))
def extract_binary(df: pd.DataFrame, *, nan_policy: str = "raise") -> Inputs:
    """Binary outcomes with a predicted probability of the positive class."""
    df, key = start_table(df, "binary", ["y", "p"], nan_policy)
    arrays = {c: declared_column(df, "binary", c, nan_policy) for c in ("y", "p")}
    return Inputs(unit_frame(df, key), arrays, key=key)


_CLASS_COL = re.compile(r"^p_(.+)$")


@register_kind("multiclass", columns=(Column("y", "label", "the observed class"),
                                      Column("p_<class>", "probability", "probability of each class (two or more)",
                                             pattern=r"p_.+")),
               options=(Option("atol", float, 1e-6, "tolerance for rows summing to 1", flag=True),
                        Option("renormalize", bool, False, "rescale each row to sum to 1", flag=True)))
def extract_multiclass(df: pd.DataFrame, *, nan_policy: str = "raise", atol: float = 1e-6,
                       renormalize: bool = False) -> Inputs:
    """Categorical outcomes with one probability column per class (rows sum to 1)."""
    prob_cols = [c for c in df.columns if isinstance(c, str) and _CLASS_COL.match(c)]
    if len(prob_cols) < 2:
        raise InputError("kind 'multiclass': expected at least two probability columns named "
                         f"p_<class> (e.g. p_cat, p_dog); found {prob_cols or 'none'}")
    df, key = start_table(df, "multiclass", ["y", *prob_cols], nan_policy)
    classes = [cast(re.Match[str], _CLASS_COL.match(c)).group(1) for c in prob_cols]  # matched above
    probs = _values(df, prob_cols, nan_policy)
    bad = cast(np.ndarray, ((probs < 0) | (probs > 1)).any(axis=1))
    if bad.any():
        raise InputError(f"probability columns: values outside [0, 1] in {describe_rows(bad, df.index)}; "
                         "expected probabilities")
    sums = probs.sum(axis=1)
    if renormalize:
        zero = sums <= 0
        if zero.any():
            raise InputError(f"probability columns sum to 0 in {describe_rows(zero, df.index)}; cannot renormalize")
    else:
        off = np.abs(sums - 1.0) > atol
        if off.any():
            raise InputError(
                f"probability columns {prob_cols}: rows sum to {show_value(sums[off][0])} in "
                f"{describe_rows(off, df.index)}; expected 1 within {atol:g} "
                "(use a larger tolerance, or renormalize)")
    # Rows accepted (within atol, or any positive sum with renormalize) are rescaled to sum
    # exactly 1, so every metric sees proper probability vectors.
    probs = probs / sums[:, None]
    labels = df["y"].astype(str).str.removesuffix(".0") if df["y"].dtype.kind == "f" else df["y"].astype(str)
    lookup = {c: i for i, c in enumerate(classes)}
    y = labels.map(lookup).to_numpy(dtype=np.float64, na_value=np.nan)
    unknown = np.isnan(y)
    if unknown.any():
        first = df["y"].to_numpy()[unknown][0]
        raise InputError(f"column 'y': label {show_value(first)} in {describe_rows(unknown, df.index)} is not among "
                         f"the classes {classes} (from the p_<class> columns)")
    return Inputs(unit_frame(df, key), {"y": y.astype(np.int64), "P": probs}, {"classes": classes}, key=key)


_MEMBER_COL = re.compile(r"^(?:m|member|ens|ens_|member_)(\d+)$")


def _long_ensemble_unit(columns: Sequence[str]) -> str | None:
    return "id" if "member" in columns and "value" in columns else None


@register_kind("ensemble", columns=(Column("y", "number", "the outcome"),
                                    Column("m<j>", "number", "ensemble member j (also member<j>, ens<j>)",
                                           required=False, pattern=_MEMBER_COL.pattern[1:-1]),
                                    Column("member", "label", "long layout: the member of each row (with id, value)",
                                           required=False),
                                    Column("value", "number", "long layout: the member's value", required=False)),
               unit_column=_long_ensemble_unit)
def extract_ensemble(df: pd.DataFrame, *, nan_policy: str = "raise") -> Inputs:
    """Real-valued outcomes with an ensemble (sample) forecast per row."""
    if "member" in df.columns and "value" in df.columns:
        df = _ensemble_long_to_wide(df)
    members = sorted((c for c in df.columns if isinstance(c, str) and _MEMBER_COL.match(c)),
                     key=lambda c: int(cast(re.Match[str], _MEMBER_COL.match(c)).group(1)))
    if not members:
        raise InputError("kind 'ensemble': expected member columns named m0, m1, ... "
                         "(or a long table with id, member, value columns); found none")
    df, key = start_table(df, "ensemble", ["y", *members], nan_policy)
    y = numeric_column(df, "y", nan_ok=nan_policy == "propagate")
    return Inputs(unit_frame(df, key), {"y": y, "ens": _values(df, members, nan_policy)}, key=key)


def check_long_members(df: pd.DataFrame, columns: list[str], kind: str, what: str) -> tuple[list[str], Any]:
    """Check a long ensemble table (one row per ``id`` and ``member``, the outcome ``y``
    repeated on each member row) and return its unit index columns and its ``y`` grouped by unit.

    ``columns`` are the required columns (checked for ``kind``); ``what`` names the table in
    the errors (``"long ensemble table"``). Raises :class:`InputError` on a duplicate
    ``(id, member)`` or an ``id`` whose rows disagree on ``y``.
    """
    require_columns(df, columns, kind)
    index = [c for c in GROUP_COLUMNS if c in df.columns] + ["id"]
    dup = df.duplicated(subset=[*index, "member"], keep=False).to_numpy()
    if dup.any():
        raise InputError(f"{what}: duplicate (id, member) in {describe_rows(dup, df.index)}")
    y = df.groupby(index, sort=False)["y"]
    if (y.nunique(dropna=False) > 1).any():
        raise InputError(f"{what}: column 'y' differs between members of the same id")
    return index, y


def _ensemble_long_to_wide(df: pd.DataFrame) -> pd.DataFrame:
    index, y = check_long_members(df, ["id", "member", "value", "y"], "ensemble", "long ensemble table")
    wide = df.pivot(index=index, columns="member", values="value")
    if wide.isna().any().any():
        raise InputError("long ensemble table: ids have different members; expected the same member set per id")
    wide.columns = [f"m{i}" for i in range(wide.shape[1])]
    return wide.join(y.first()).reset_index()


# Every column that reads as q<decimal number> is a quantile column, so that a level outside
# (0, 1) (q1.5, q-0.1) is refused by name rather than silently ignored as an extra column.
_QUANTILE_COL = re.compile(r"^q[-+]?(\d*\.\d+|\d+\.\d*|0|1)$")


@register_kind("quantile", columns=(Column("y", "number", "the outcome"),
                                    Column("q<level>", "number", "the predicted quantile at each level in (0, 1): "
                                           "q0.1, q0.5, q0.9", pattern=_QUANTILE_COL.pattern[1:-1])))
def extract_quantile(df: pd.DataFrame, *, nan_policy: str = "raise") -> Inputs:
    """Real-valued outcomes with predicted quantiles at fixed levels."""
    cols = [c for c in df.columns if isinstance(c, str) and _QUANTILE_COL.match(c)]
    if not cols:
        raise InputError("kind 'quantile': expected columns named q<level> with levels in (0, 1), "
                         "e.g. q0.1, q0.5, q0.9; found none")
    levels = np.array([float(c[1:]) for c in cols])
    if np.any((levels <= 0) | (levels >= 1)):
        bad = [c for c, level in zip(cols, levels) if not 0 < level < 1]
        raise InputError(f"kind 'quantile': quantile levels must lie in (0, 1); column(s) {bad} name levels "
                         f"outside it (all levels: {levels.tolist()})")
    if len(set(levels)) != len(levels):
        raise InputError(f"kind 'quantile': duplicate quantile levels {levels.tolist()}")
    order = np.argsort(levels)  # column order is not meaningful; levels are
    cols = [cols[i] for i in order]
    df, key = start_table(df, "quantile", ["y", *cols], nan_policy)
    y = numeric_column(df, "y", nan_ok=nan_policy == "propagate")
    return Inputs(unit_frame(df, key), {"y": y, "q": _values(df, cols, nan_policy)},
                  {"levels": levels[order]}, key=key)


@register_kind("parametric", columns=(Column("y", "number", "the outcome"),
                                      Column("<parameter>", "number", "the distribution's parameters the metric "
                                             "names (mu, sigma, ...; see `scorebench metrics`)", required=False)))
def extract_parametric(df: pd.DataFrame, *, nan_policy: str = "raise") -> Inputs:
    """Real-valued outcomes with a parametric forecast distribution per row."""
    skip = set(GROUP_COLUMNS) | {"id", "y"}
    params = [c for c in df.columns if c not in skip]
    df, key = start_table(df, "parametric", ["y"], nan_policy)
    # Only numeric parameter columns can be distribution parameters; others are labels.
    numeric = [c for c in params if pd.api.types.is_numeric_dtype(df[c])]
    df = drop_nan_rows(df, numeric, nan_policy)
    nan_ok = nan_policy == "propagate"
    arrays = {"y": numeric_column(df, "y", nan_ok=nan_ok)}
    arrays.update({str(c): numeric_column(df, c, nan_ok=nan_ok) for c in numeric})
    return Inputs(unit_frame(df, key), arrays, key=key)


@register_kind("interval", columns=(Column("y", "number", "the outcome"),
                                    Column("lower", "number", "lower end of the central interval"),
                                    Column("upper", "number", "upper end (>= lower)"),
                                    Column("alpha", "probability", "miss rate of the interval, per row",
                                           required=False)))
def extract_interval(df: pd.DataFrame, *, nan_policy: str = "raise") -> Inputs:
    """Real-valued outcomes with a central prediction interval per row."""
    needed = ["y", "lower", "upper"] + (["alpha"] if "alpha" in df.columns else [])
    df, key = start_table(df, "interval", needed, nan_policy)
    nan_ok = nan_policy == "propagate"
    arrays = {c: numeric_column(df, c, nan_ok=nan_ok) for c in needed}
    crossed = arrays["lower"] > arrays["upper"]
    if crossed.any():
        raise InputError(f"columns 'lower'/'upper': lower > upper in {describe_rows(crossed, df.index)}; "
                         "expected lower <= upper")
    return Inputs(unit_frame(df, key), arrays, key=key)


_MV_OBS = re.compile(r"^y\.(.+)$")
_MV_MEMBER = re.compile(r"^m(\d+)\.(.+)$")


def multivariate_columns(df: pd.DataFrame, kind: str) -> tuple[list[str], list[int], list[str]]:
    """The dimensions, member numbers and the y/member columns a multivariate table needs.

    The dimensions are those named by the observation columns ``y.<d>`` *or* by any member
    column ``m<j>.<d>``, so a table that lacks ``y.1`` is refused (naming it) rather than
    scored as one-dimensional.
    """
    columns = [c for c in getattr(df, "columns", []) if isinstance(c, str)]
    obs = [m.group(1) for c in columns if (m := _MV_OBS.match(c))]
    matches = [m for c in columns if (m := _MV_MEMBER.match(c))]
    members = sorted({int(m.group(1)) for m in matches})
    if not obs or not members:
        raise InputError(f"kind '{kind}': expected observation columns y.<dim> and member columns "
                         "m<j>.<dim> (e.g. y.0, y.1, m0.0, m0.1, m1.0, m1.1)")
    dims = obs + sorted({m.group(2) for m in matches} - set(obs))
    return dims, members, [f"y.{d}" for d in dims] + [f"m{j}.{d}" for j in members for d in dims]


@register_kind("multivariate", columns=(Column("y.<d>", "number", "the outcome in dimension d", pattern=_MV_OBS.pattern[1:-1]),
                                        Column("m<j>.<d>", "number", "member j in dimension d",
                                               pattern=_MV_MEMBER.pattern[1:-1])))
def extract_multivariate(df: pd.DataFrame, *, nan_policy: str = "raise") -> Inputs:
    """Vector-valued outcomes with an ensemble forecast of the vector per row."""
    dims, members, needed = multivariate_columns(df, "multivariate")
    df, key = start_table(df, "multivariate", needed, nan_policy)
    y = _values(df, [f"y.{d}" for d in dims], nan_policy)
    ens = _values(df, [f"m{j}.{d}" for j in members for d in dims], nan_policy)
    return Inputs(unit_frame(df, key), {"y": y, "ens": ens.reshape(len(df), len(members), len(dims))},
                  {"dims": dims}, key=key)


def kinds_table(stage: str | None = None) -> pd.DataFrame:
    """The registered kinds with their declared columns and options (``scorebench kinds``).

    Examples
    --------
    >>> kinds_table("aggregate")["kind"].tolist()
    ['battles', 'items', 'scores', 'wide']
    """
    return pd.DataFrame([{"kind": k.name, "stage": k.stage, "description": k.description,
                          "columns": k.column_text, "options": describe_options(k.options)}
                         for k in all_kinds(stage)])


