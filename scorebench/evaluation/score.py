"""Score step of the pipeline: a reduced entry of one (metric, group) to its value and interval.

:func:`score_entry` is the one place that applies the interval rules, whatever engine reduced
the entry (partial sums merged across partitions, or replicates drawn in memory):

1. no rounds (``n_boot=0``), an undefined per-row mean, or a set-level metric whose rows are
   not a sample (rule ``none``): no interval;
2. an infinite per-row mean (a forecast of probability 0 that happened): the interval is the
   value itself;
3. a proportion of 0/1 outcomes (``Metric.proportion``): the Wilson or Jeffreys interval
   (:func:`scorebench.analysis.stats_tests.proportion_interval`) unless the plan asks for the
   bootstrap or resamples clusters;
4. otherwise the metric's declared rule on the replicates
   (:func:`scorebench.core.stats.interval_bounds`: percentile, centred percentile, half-sampling
   forms), clipped to the metric's bounds.
"""

from __future__ import annotations

from typing import NamedTuple, cast

import numpy as np

from scorebench.analysis.stats_tests import INTERVAL_NAMES, proportion_interval as proportion_interval_of
from scorebench.core.registry import Metric
from scorebench.core.stats import interval_bounds
from scorebench.evaluation.partial import Entry, Replicates, RowSums, SetStats
from scorebench.evaluation.plan import Plan

__all__ = ["Score", "settle", "score_entry", "interval_rule", "proportion_rule"]


class Score(NamedTuple):
    """The value of one (metric, group), its interval, its units and how the interval was made."""

    value: float
    low: float
    high: float
    n: int
    method: str


def settle(record: Metric, entry: Entry, n_boot: int) -> tuple[float, np.ndarray | None]:
    """The value and the bootstrap replicates of a reduced entry (``None``: none drawn).

    Partial sums are finished here (a Poisson round of total weight 0 is dropped, as are
    undefined replicates of sufficient statistics); in-memory replicates pass as they are.
    """
    if isinstance(entry, Replicates):
        return entry.value, entry.replicates
    if isinstance(entry, RowSums):
        return entry.value(), entry.replicates() if n_boot else None
    if not isinstance(entry, SetStats):
        raise TypeError(f"not an entry of the pipeline: {type(entry).__name__}")
    value = float(record.finalize_stats(entry.stats))
    if not n_boot:
        return value, None
    replicates = np.asarray(record.finalize_stats(entry.boot), dtype=np.float64)
    return value, replicates[np.isfinite(replicates)]


def _successes(entry: Entry) -> float:
    return float(entry.total) if isinstance(entry, RowSums) else float(cast(Replicates, entry).successes)


def score_entry(record: Metric, entry: Entry, plan: Plan) -> Score:
    """The value and interval of ``record`` on one group from its reduced ``entry``, by the
    rules of the module docstring, at the plan's level and proportion interval.

    Examples
    --------
    >>> from scorebench.core.registry import metric
    >>> from scorebench.evaluation.plan import make_plan
    >>> entry = RowSums(3.0, 4, np.array([2.0, 3.0]), np.array([4.0, 4.0]))
    >>> score_entry(metric("accuracy"), entry, make_plan("accuracy")).method
    'wilson score interval'
    """
    value, replicates = settle(record, entry, plan.n_boot)
    method = entry.method if isinstance(entry, Replicates) else "poisson"
    n = int(entry.n)
    if not plan.n_boot or (record.per_row and np.isnan(value)) or \
            (not record.per_row and record.interval_method == "none"):
        return Score(value, np.nan, np.nan, n, "none")
    if record.per_row and np.isinf(value):
        return Score(value, value, value, n, "none (infinite mean)")
    how = proportion_rule(record, plan)
    if how is not None:
        low, high = proportion_interval_of(_successes(entry), n, plan.ci, how)
        return Score(value, low, high, n, INTERVAL_NAMES[how])
    if replicates is None or replicates.size == 0:
        return Score(value, np.nan, np.nan, n, method)
    rule = entry.rule if isinstance(entry, Replicates) and entry.rule is not None else record.interval_method
    low, high = interval_bounds(value, replicates, plan.ci, rule, record.bounds)
    return Score(value, low, high, n, method)


def interval_rule(method: str, rule: str) -> str:
    """The rule a metric's interval came from, as the output's attrs name it: a proportion
    interval, the cluster bootstrap, or the metric's declared bootstrap rule
    (``stats.INTERVAL_METHODS``).

    Examples
    --------
    >>> interval_rule("cluster bootstrap (3 clusters)", "percentile")
    'cluster bootstrap percentile'
    """
    if method in INTERVAL_NAMES.values() or method == "none":
        return method
    return "cluster bootstrap percentile" if method.startswith("cluster") else rule


def proportion_rule(record: Metric, plan: Plan) -> str | None:
    """The proportion interval that replaces the bootstrap for ``record`` under ``plan``
    (``wilson``, ``jeffreys``), or ``None`` when the replicates decide (rule 3 above).

    Examples
    --------
    >>> from scorebench.core.registry import metric
    >>> from scorebench.evaluation.plan import make_plan
    >>> proportion_rule(metric("accuracy"), make_plan("accuracy", proportion_interval="jeffreys"))
    'jeffreys'
    """
    how = plan.proportion_interval
    return how if record.per_row and record.proportion and how in INTERVAL_NAMES and plan.cluster is None else None
