"""The plan of an evaluation: what to score, how to group, how to resample — resolved once.

The first step of the pipeline (plan -> reduce -> score -> api, see
:mod:`scorebench.evaluation.pipeline`). :func:`make_plan` checks every option at the boundary
and resolves the metric records and the table kind into one frozen :class:`Plan`, which every
engine and :func:`scorebench.compare` read; :func:`prepare` turns a table into the kind's units
with each unit's group (:class:`Units`), the whole table as one partition.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from scorebench.analysis.stats_tests import PROPORTION_INTERVALS
from scorebench.core.errors import InputError
from scorebench.core.groups import group_codes
from scorebench.core.registry import Metric, metric as lookup_metric
from scorebench.core.stats import check_resampling
from scorebench.core.tables import NAN_POLICIES, Inputs, Kind, get_kind, infer_kind, label_text
from scorebench.core.validation import check_choice, describe_rows
from scorebench.io.option_files import read_options

__all__ = ["BOOTSTRAPS", "Plan", "make_plan", "Units", "prepare", "load_table",
           "cluster_labels", "resolve_metrics", "resolve_kind", "parse_by", "by_columns"]

#: Resampling schemes of :func:`scorebench.evaluate`: multinomial (exact or stratified), or
#: Poisson weights from the units' content hashes (partition-independent).
BOOTSTRAPS = ("auto", "poisson")


def resolve_metrics(metrics: str | Metric | Iterable[str | Metric]) -> list[Metric]:
    """Metric records for names (``"ndcg@10"``) or records, refusing duplicates.

    Examples
    --------
    >>> [m.name for m in resolve_metrics("brier_score")]
    ['brier_score']
    """
    if isinstance(metrics, (str, Metric)):
        metrics = [metrics]
    records = [m if isinstance(m, Metric) else lookup_metric(m) for m in metrics]
    if not records:
        raise InputError("no metrics given; name at least one (see `scorebench metrics`)")
    names = [m.name for m in records]
    dups = sorted({n for n in names if names.count(n) > 1})
    if dups:
        raise InputError(f"metric(s) {dups} requested more than once")
    return records


def resolve_kind(records: Sequence[Metric], kind: str | None,
                 kind_options: Mapping[str, Any]) -> tuple[Kind, dict[str, Any]]:
    """The table kind the metrics read (or ``kind``) and the options checked against its
    declaration (an option it does not declare is refused; text is converted to its type).

    A path given for an option that declares file ``formats`` (``qrels``) is read here, once,
    through the format registry (:func:`scorebench.io.option_files.read_options`): the kind
    receives a table."""
    spec = get_kind(infer_kind({m.kind for m in records}, kind))
    return spec, read_options(spec.options, spec.check_options(kind_options))


def parse_by(by: str | Sequence[str] | None) -> list[str] | None:
    """``by`` as a list of column names (text is separated by commas); ``None`` stays ``None``.

    Examples
    --------
    >>> parse_by("system, task")
    ['system', 'task']
    """
    if by is None:
        return None
    return [c.strip() for c in by.split(",")] if isinstance(by, str) else list(by)


def by_columns(by: str | Sequence[str] | None, columns: Sequence[Any]) -> list[str]:
    """The grouping columns: ``by`` (a list, or text separated by commas), else ``system``
    and ``task`` where the table has them; a named column must exist."""
    by_cols = parse_by(by)
    if by_cols is None:
        return [c for c in ("system", "task") if c in columns]
    missing = [c for c in by_cols if c not in columns]
    if missing:
        raise InputError(f"by: column(s) {missing} not found; label columns available for grouping: "
                         f"{[str(c) for c in columns] or 'none'}")
    return by_cols


@dataclass(frozen=True)
class Plan:
    """Everything one evaluation does, resolved and checked once (read by every engine).

    Attributes
    ----------
    records : tuple of Metric
        The metrics, in the order asked.
    kind : Kind
        The table kind they read.
    options : dict
        The kind's options, checked against its declaration.
    by : list of str or None
        The grouping columns as given (``None``: ``system`` and ``task`` where present).
    nan_policy : {"raise", "omit", "propagate"}
    ci, n_boot, seed :
        Interval level, bootstrap rounds (0: no intervals), seed.
    bootstrap : {"auto", "poisson"}
        Multinomial resampling, or Poisson weights from the units' content hashes.
    proportion_interval : {"wilson", "jeffreys", "bootstrap"}
        The interval of proportions.
    cluster : str or None
        Column of the units' clusters (cluster bootstrap of per-row metrics).
    per_unit : bool
        Also return one row per unit.
    """

    records: tuple[Metric, ...]
    kind: Kind
    options: dict[str, Any] = field(default_factory=dict)
    by: list[str] | None = None
    nan_policy: str = "raise"
    ci: float = 0.95
    n_boot: int = 1000
    seed: int = 0
    bootstrap: str = "auto"
    proportion_interval: str = "wilson"
    cluster: str | None = None
    per_unit: bool = False

    @property
    def mergeable(self) -> list[Metric]:
        """The metrics that reduce to partial sums (per-row, or set-level with sufficient statistics)."""
        return [m for m in self.records if m.mergeable]

    @property
    def collected(self) -> list[Metric]:
        """The set-level metrics without sufficient statistics: scored on a whole group in memory."""
        return [m for m in self.records if not m.mergeable]

    def groups(self, columns: Sequence[Any]) -> list[str]:
        """The grouping columns of a table with ``columns`` (checked)."""
        return by_columns(self.by, columns)


def make_plan(metrics: str | Metric | Iterable[str | Metric], *, kind: str | None = None,
              by: str | Sequence[str] | None = None, ci: float = 0.95, n_boot: int = 1000, seed: int = 0,
              nan_policy: str = "raise", bootstrap: str = "auto", proportion_interval: str = "wilson",
              cluster: str | None = None, per_unit: bool = False,
              kind_options: Mapping[str, Any] | None = None) -> Plan:
    """Check the options of an evaluation and resolve its metrics and kind into a :class:`Plan`.

    The arguments are those of :func:`scorebench.evaluate`. Raises :class:`InputError` naming
    the first option that does not apply.

    Examples
    --------
    >>> plan = make_plan("brier_score", n_boot=200)
    >>> plan.kind.name, [m.name for m in plan.records], plan.n_boot
    ('binary', ['brier_score'], 200)
    """
    check_resampling(ci=ci, n_boot=n_boot)
    check_choice(bootstrap, "bootstrap", BOOTSTRAPS)
    check_choice(proportion_interval, "proportion_interval", PROPORTION_INTERVALS)
    records = resolve_metrics(metrics)
    if cluster is not None:
        if bootstrap == "poisson":
            raise InputError("cluster= uses the cluster bootstrap; it cannot be combined with bootstrap='poisson'")
        set_level = [m.name for m in records if not m.per_row]
        if set_level:
            raise InputError(f"cluster= applies to per-row metrics; {set_level} are set-level")
    check_choice(nan_policy, "nan_policy", NAN_POLICIES)
    spec, options = resolve_kind(records, kind, dict(kind_options or {}))
    return Plan(tuple(records), spec, options, parse_by(by), nan_policy, ci, n_boot, seed, bootstrap,
                proportion_interval, cluster, per_unit)


def load_table(table: Any) -> pd.DataFrame:
    """A pandas table, or the table read from a path (any format :func:`scorebench.io.tables.read_table` reads).

    Examples
    --------
    >>> load_table(pd.DataFrame({"y": [1]})).shape
    (1, 1)
    """
    if isinstance(table, pd.DataFrame):
        return table
    if isinstance(table, (str, bytes)) or hasattr(table, "__fspath__"):
        from scorebench.io.tables import read_table

        return read_table(table)
    raise InputError(f"expected a pandas DataFrame or a path to a table, got {type(table).__name__}")


def cluster_labels(table: pd.DataFrame, cluster: str) -> pd.DataFrame:
    """A copy of ``table`` with the cluster column as text labels (kinds keep label columns)."""
    if cluster not in table.columns:
        raise InputError(f"cluster: column {cluster!r} not found; the table has {[str(c) for c in table.columns]}")
    missing = table[cluster].isna().to_numpy()
    if missing.any():
        raise InputError(f"column {cluster!r}: missing cluster labels in {describe_rows(missing, table.index)}; "
                         "every row needs a cluster")
    return table.assign(**{cluster: label_text(table[cluster]).astype(str)})


@dataclass(frozen=True)
class Units:
    """A table's units as the plan's kind extracts them, with each unit's group.

    Attributes
    ----------
    kind : str
        The kind's name.
    inputs : Inputs
        The units (per-unit arrays, constants, frame of labels).
    by : list of str
        The grouping columns.
    keys : DataFrame
        One row per group (columns ``by``), sorted.
    codes : (n,) int array
        The group of each unit (a row of ``keys``).
    """

    kind: str
    inputs: Inputs
    by: list[str]
    keys: pd.DataFrame
    codes: np.ndarray

    def label(self, g: int) -> tuple:
        """The ``by`` values of group ``g``."""
        return tuple(self.keys.iloc[g].tolist()) if self.keys.shape[1] else ()

    @property
    def unit_key(self) -> str:
        """The column naming each unit in per-unit output: the kind's key (``id``, ``qid``), or
        ``row`` (the unit's position among the evaluated units) for a table without one."""
        return self.inputs.key if self.inputs.key is not None else "row"


def prepare(table: Any, plan: Plan) -> Units:
    """The whole table as one partition: the kind's units and each unit's group.

    ``table`` is a DataFrame or a path; with ``plan.cluster`` its cluster column becomes text
    labels first (checked: present, no missing label).
    """
    frame = load_table(table)
    if plan.cluster is not None:
        frame = cluster_labels(frame, plan.cluster)
    inputs = plan.kind.extract(frame, nan_policy=plan.nan_policy, **plan.options)
    by_cols = plan.groups(inputs.frame.columns)
    codes, keys = group_codes(inputs.frame, by_cols)
    return Units(plan.kind.name, inputs, by_cols, keys, codes)
