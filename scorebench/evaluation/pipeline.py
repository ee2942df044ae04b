"""The evaluation pipeline every engine runs: plan -> reduce -> score -> api.

1. **plan** (:mod:`scorebench.evaluation.plan`): the metrics, the kind and its options, the
   groups and the resampling settings, checked and resolved once into a frozen ``Plan``;
   ``prepare`` extracts the kind's units with each unit's group.
2. **reduce** (:mod:`scorebench.evaluation.reduce`): the units of each (group, metric) to an
   entry of a :class:`~scorebench.evaluation.partial.Partial` — partial sums that merge across
   partitions (:func:`unit_partials`), or, with the whole table in memory, replicates drawn
   by the group's :class:`~scorebench.evaluation.resample.Resampler`.
3. **score** (:mod:`scorebench.evaluation.score`): ``score_entry`` makes each entry's value and
   interval by every interval rule.
4. **api**: :func:`evaluate_frame` runs the steps on one in-memory table (the pandas engine:
   one partition); :func:`scorebench.evaluate` hands other tables to their engine
   (:mod:`scorebench.evaluation.engines`; the Dask engine partitions, reduces each partition
   with :func:`unit_partials`, merges and scores the same way). No step imports an engine.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np
import pandas as pd

from scorebench._version import __version__
from scorebench.analysis.small_sample import clt_flags
from scorebench.core.errors import InputError, warn_user
from scorebench.core.groups import group_codes, group_labels
from scorebench.core.registry import Metric
from scorebench.core.stats import HALF_SAMPLING_RULES
from scorebench.evaluation.partial import Entry, Partial
from scorebench.evaluation.plan import Plan, Units, by_columns, parse_by, prepare, resolve_kind, resolve_metrics
from scorebench.evaluation.reduce import Overflow, contributions, group_entry, unit_partials
from scorebench.evaluation.score import interval_rule, score_entry, settle

__all__ = ["SCORE_COLUMNS", "evaluate_frame", "resolve_metrics", "resolve_kind", "parse_by", "by_columns",
           "group_codes", "group_labels", "Overflow", "contributions", "unit_partials", "finish", "interval_attr",
           "score_attrs"]

SCORE_COLUMNS = ("metric", "value", "ci_low", "ci_high", "n")
Progress = Callable[[int, int], None]


def finish(record: Metric, entry: Entry, n_boot: int) -> tuple[float, np.ndarray]:
    """The value and the finite bootstrap replicates from a merged entry (empty: none drawn);
    see :func:`scorebench.evaluation.score.settle`."""
    value, replicates = settle(record, entry, n_boot)
    return value, np.empty(0) if replicates is None else replicates


def interval_attr(intervals: dict[str, str], n_boot: int) -> str:
    """The ``interval`` attr: one phrase when every metric used the percentile bootstrap, else
    each metric's rule."""
    kinds = set(intervals.values()) - {"none"}
    if not n_boot or not kinds:
        return "none"
    if kinds == {"percentile"}:
        return "percentile bootstrap"
    bootstrap_rules = {"percentile", "centered_percentile", *HALF_SAMPLING_RULES}
    return "; ".join(f"{k}: {v} bootstrap" if v in bootstrap_rules else f"{k}: {v}" for k, v in intervals.items())


def score_attrs(kind: str, seed: int, ci: float, n_boot: int, nan_policy: str, intervals: dict[str, str],
                bootstrap: str) -> dict[str, Any]:
    """The attrs every engine writes on its scores table."""
    return {"scorebench_version": __version__, "kind": kind, "seed": seed, "ci": ci, "n_boot": n_boot,
            "interval": interval_attr(intervals, n_boot), "nan_policy": nan_policy,
            "interval_methods": {m: rule if n_boot else "none" for m, rule in intervals.items()},
            "bootstrap": bootstrap}


def evaluate_frame(table: Any, plan: Plan, progress: Progress | None = None) -> pd.DataFrame:
    """The scores of an in-memory table (DataFrame or path) under ``plan``: the pipeline on one
    partition holding every unit (the pandas engine behind :func:`scorebench.evaluate`).

    ``progress(done, total)`` is called after each (metric, group) is reduced.

    Examples
    --------
    >>> from scorebench.evaluation.plan import make_plan
    >>> t = pd.DataFrame({"y": [1, 0, 1, 0], "p": [0.9, 0.1, 0.8, 0.3]})
    >>> out = evaluate_frame(t, make_plan("brier_score", n_boot=0))
    >>> out.loc[0, "metric"], round(float(out.loc[0, "value"]), 4), int(out.loc[0, "n"])
    ('brier_score', 0.0375, 4)
    """
    units = prepare(table, plan)
    labels = [units.label(g) for g in range(len(units.keys))]
    reduced, unit_rows, counts = _reduce_groups(units, labels, plan, progress)
    rows, methods, intervals = _score_groups(units, labels, plan, reduced)
    scores = _scores_frame(units, rows, unit_rows, plan.per_unit)
    _finish_attrs(scores, units, plan, methods, intervals, counts)
    return scores


def _reduce_groups(units: Units, labels: list[tuple], plan: Plan, progress: Progress | None
                   ) -> tuple[Partial, list[pd.DataFrame], dict[str, dict[str, float]]]:
    """Reduce: every (metric, group) to an entry of one partial (plus per-unit rows and note counts)."""
    hashes = units.inputs.unit_hashes() if plan.bootstrap == "poisson" and plan.n_boot else None
    clusters = None if plan.cluster is None else units.inputs.frame[plan.cluster].to_numpy()
    reduced, unit_rows = Partial(), []
    counts: dict[str, dict[str, float]] = {}
    total = len(plan.records) * len(labels)
    for record in plan.records:
        contrib = contributions(record, units.inputs, plan.nan_policy) if record.per_row else None
        for g, label in enumerate(labels):
            reduced.entries[(label, record.name)] = group_entry(record, units, g, label, contrib, plan, hashes,
                                                                clusters)
            if contrib is not None and plan.per_unit:
                unit_rows.append(_unit_frame(units, record, np.flatnonzero(units.codes == g), contrib))
            if record.note is not None:
                _record_note(record, units.inputs.take(np.flatnonzero(units.codes == g)), label, counts)
            if progress is not None:
                progress(len(reduced.entries), total)
    return reduced, unit_rows, counts


def _score_groups(units: Units, labels: list[tuple], plan: Plan, reduced: Partial
                  ) -> tuple[list[dict[str, Any]], dict[str, str], dict[str, str]]:
    """Score: group-major, metrics in the order asked; the interval method and rule of each metric."""
    rows, methods, intervals = [], {}, {}
    for label in labels:
        for record in plan.records:
            score = score_entry(record, reduced.entries[(label, record.name)], plan)
            methods[record.name] = score.method
            intervals[record.name] = interval_rule(score.method, record.interval_method)
            rows.append({**dict(zip(units.by, label)), "metric": record.name, "value": score.value,
                         "ci_low": score.low, "ci_high": score.high, "n": score.n})
    return rows, methods, intervals


def _finish_attrs(scores: pd.DataFrame, units: Units, plan: Plan, methods: dict[str, str],
                  intervals: dict[str, str], counts: dict[str, dict[str, float]]) -> None:
    """The scores table's provenance: resampling settings, interval rules, note counts, small-sample flags."""
    scores.attrs.update({
        **score_attrs(units.kind, plan.seed, plan.ci, plan.n_boot, plan.nan_policy,
                      {m.name: intervals[m.name] for m in plan.records},
                      "; ".join(f"{k}: {v}" for k, v in methods.items())),
        **counts,
        **{f"kind_{k}": v for k, v in units.inputs.consts.items()
           if isinstance(v, (str, bool, int)) and not k.startswith("_")},
    })
    summary = scores[scores[units.unit_key] == "all"] if plan.per_unit and units.unit_key in scores else scores
    flags = clt_flags(summary, {m.name: m.proportion for m in plan.records}, methods, units.by)
    if flags:  # CLT-like intervals where n is small or the value near 0/1 (Bowyer et al. 2025)
        scores.attrs["small_sample"] = flags
    if plan.per_unit:  # the key that pairs units across systems; None when units are named by position
        scores.attrs["unit_key"] = units.inputs.key


def _scores_frame(units: Units, rows: list[dict[str, Any]], unit_rows: list[pd.DataFrame],
                  per_unit: bool) -> pd.DataFrame:
    scores = pd.DataFrame(rows, columns=[*units.by, *SCORE_COLUMNS])
    if per_unit and unit_rows:
        frame = pd.concat(unit_rows, ignore_index=True)
        key = units.unit_key
        if (frame[key] == "all").any():  # the summary rows' name: two "map all" lines would be ambiguous
            raise InputError(f"per-unit output: column {key!r} has a unit named 'all', the name that the "
                             "summary rows carry; rename that unit (e.g. 'all_') to get per-unit rows")
        scores.insert(len(units.by), key, "all")
        scores = pd.concat([frame, scores], ignore_index=True)
    scores["n"] = scores["n"].astype(np.int64)
    return scores


def _record_note(record: Metric, arrays: dict[str, Any], label: tuple, counts: dict[str, dict[str, float]]) -> None:
    """Add a metric's counts (e.g. clipped rows) to the attrs and warn with its message."""
    note_of = cast(Callable[..., Any], record.note)  # called only for a metric with a note hook
    note = dict(note_of(arrays, **record._call_params()) or {})
    message = note.pop("message", None)
    for key, count in note.items():
        per_metric = counts.setdefault(key, {})
        per_metric[record.name] = per_metric.get(record.name, 0) + count
    if message:
        where = f" ({', '.join(map(str, label))})" if label else ""
        warn_user(f"{record.name}{where}: {message}", UserWarning)


def _unit_frame(units: Units, record: Metric, idx: np.ndarray, contrib: np.ndarray) -> pd.DataFrame:
    """One row per unit of a group: the metric's contribution of each unit."""
    key = units.inputs.key
    cols = [*units.by, key] if key is not None else list(units.by)
    out = units.inputs.frame.iloc[idx][cols].reset_index(drop=True) if cols else pd.DataFrame(index=range(idx.size))
    out[units.unit_key] = out[key].astype(str) if key is not None else idx.astype(str)
    out["metric"] = record.name
    out["value"] = contrib[idx]
    out["ci_low"] = np.nan
    out["ci_high"] = np.nan
    out["n"] = 1
    return out
