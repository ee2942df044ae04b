"""Apply registered metrics to a result table, grouped by system (and task): the public API.

One pipeline serves every family and engine (:mod:`scorebench.evaluation.pipeline`: plan ->
reduce -> score). A table *kind* extracts per-unit arrays once; each metric then either
returns per-unit contributions (``per_row`` metrics: the value of a group is their mean, so
it reduces by sums and counts, and its bootstrap resamples the contributions without calling
the metric again) or one number for a set of units (set-level metrics such as ECE or AUROC:
the bootstrap resamples units and calls the metric once per round).

A pandas table (or a path) is the pipeline's single partition
(:func:`scorebench.evaluation.pipeline.evaluate_frame`); tables of other libraries go to the
engine registered for them (:mod:`scorebench.evaluation.engines`), which runs the same plan.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd

from scorebench.core.errors import InputError
from scorebench.core.registry import Metric
from scorebench.evaluation.engines import engine_for
from scorebench.evaluation.pipeline import SCORE_COLUMNS, Progress, evaluate_frame
from scorebench.evaluation.plan import BOOTSTRAPS, cluster_labels, make_plan, resolve_metrics
from scorebench.core.source_conventions import with_source_defaults

__all__ = ["evaluate", "resolve_metrics", "cluster_labels", "SCORE_COLUMNS", "BOOTSTRAPS"]


def evaluate(table: Any, metrics: str | Metric | Iterable[str | Metric], *, kind: str | None = None,
             by: str | Sequence[str] | None = None, ci: float = 0.95, n_boot: int = 1000, seed: int = 0,
             nan_policy: str = "raise", per_unit: bool = False, bootstrap: str = "auto",
             progress: Progress | None = None, proportion_interval: str = "wilson", cluster: str | None = None,
             **kind_options: Any) -> pd.DataFrame:
    """Score every group of a result table with each metric, with bootstrap intervals.

    Parameters
    ----------
    table : DataFrame or path
        A long result table of the metrics' kind (see :mod:`scorebench.core.tables`).
    metrics : str, Metric or list of them
        Registered names such as ``"crps_normal"`` or ``"ndcg@10"``.
    kind : str, optional
        Table kind; inferred from the metrics when they all read the same kind.
    by : str or list of str, optional
        Grouping columns; default ``system`` and ``task`` where present.
    ci : float
        Confidence level of the percentile bootstrap interval.
    n_boot : int
        Bootstrap rounds; 0 skips intervals (``ci_low``/``ci_high`` are then NaN).
    seed : int
        Seed; each (metric, group) draws from its own stream derived from it.
    nan_policy : {"raise", "omit", "propagate"}
        Missing values in the inputs (and undefined contributions): raise an error, drop
        those rows, or let them make the value NaN.
    per_unit : bool
        Also return one row per unit (row or query) for per-row metrics, with the unit key
        column (e.g. ``qid``; ``row``, the unit's 0-based position among the evaluated units,
        when the table has no key column); the group averages then carry ``"all"`` in that
        column. ``attrs["unit_key"]`` names the key column, or is None when units are named by
        position (and so are not paired across systems).
    bootstrap : {"auto", "poisson"}
        ``auto``: multinomial resampling (exact, or stratified for very large groups; see
        :mod:`scorebench.core.stats`). ``poisson``: Poisson(1) weights derived from each unit's
        content hash and the seed — the scheme of the Dask engine, which gives the same
        intervals however the table is partitioned.
    progress : callable, optional
        Called as ``progress(done, total)`` after each (metric, group); on the Dask engine,
        after each partition.
    proportion_interval : {"wilson", "jeffreys", "bootstrap"}
        Interval of metrics whose value is a proportion of 0/1 outcomes (``accuracy``,
        ``argmax_accuracy``, ...; ``Metric.proportion``): the Wilson score interval (default),
        the Jeffreys interval, or the percentile bootstrap (see :mod:`scorebench.analysis.stats_tests`).
    cluster : str, optional
        Column with the cluster (group) of each row, for items that come in groups (several
        questions per passage): per-row metrics then resample whole clusters (cluster
        bootstrap), and proportions get that interval instead of Wilson's.
    **kind_options
        Options of the table kind (e.g. ``qrels=`` for ranking tables, ``atol=``).

    Returns
    -------
    DataFrame
        Columns ``by..., metric, value, ci_low, ci_high, n``; ``.attrs`` records the seed,
        interval method, bootstrap rounds and scorebench version.

    Examples
    --------
    >>> import pandas as pd, scorebench
    >>> t = pd.DataFrame({"system": ["a"] * 4 + ["b"] * 4, "y": [1, 0, 1, 0] * 2,
    ...                   "p": [0.9, 0.1, 0.8, 0.3, 0.5, 0.5, 0.5, 0.5]})
    >>> scores = scorebench.evaluate(t, "brier_score", n_boot=200, seed=0)
    >>> scores[["system", "metric", "value", "n"]].round(4).to_string(index=False)
    'system      metric  value  n\\n     a brier_score 0.0375  4\\n     b brier_score 0.2500  4'
    """
    engine = engine_for(table)
    if engine is not None:
        if per_unit:
            raise InputError("per_unit=True is not available with the Dask engine (one row per unit of a table "
                             "larger than memory); evaluate a subset with the pandas engine for per-unit values")
        if cluster is not None:
            raise InputError("cluster= is not available with the Dask engine; evaluate with the pandas engine")
        return engine(table, metrics, kind=kind, by=by, ci=ci, n_boot=n_boot, seed=seed, nan_policy=nan_policy,
                      progress=progress, proportion_interval=proportion_interval, **kind_options)
    plan = make_plan(with_source_defaults(table, metrics), kind=kind, by=by, ci=ci, n_boot=n_boot, seed=seed,
                     nan_policy=nan_policy, bootstrap=bootstrap, proportion_interval=proportion_interval,
                     cluster=cluster, per_unit=per_unit, kind_options=kind_options)
    return evaluate_frame(table, plan, progress)
