"""Apply registered metrics to a result table, grouped by system (and task).

One engine serves every family. A table *kind* extracts per-unit arrays once; each
metric then either returns per-unit contributions (``per_row`` metrics: the value of a
group is their mean, so it reduces by sums and counts, and its bootstrap resamples the
contributions without calling the metric again) or one number for a set of units
(set-level metrics such as ECE or AUROC: the bootstrap resamples units and calls the
metric once per round).

The resolution, contributions and attrs are the core pipeline's
(:mod:`scorebench.evaluation.pipeline`, shared with the Dask engine); tables of other libraries
go to the engine registered for them (:mod:`scorebench.evaluation.engines`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.source_conventions import with_source_defaults
from scorebench.evaluation.engines import engine_for
from scorebench.evaluation.pipeline import SCORE_COLUMNS, Overflow, by_columns, contributions, group_codes, resolve_kind, \
    resolve_metrics, score_attrs
from scorebench.core.errors import InputError, warn_user
from scorebench.core.registry import Metric
from scorebench.analysis.small_sample import clt_flags
from scorebench.core.stats import (EXACT_BOOTSTRAP_LIMIT, bootstrap_means, check_resampling, half_sample, half_sample_masks,
                    HALF_SAMPLING_RULES, interval_bounds, percentile_interval, PoissonRounds, rng_for,
                    two_level_draws)
from scorebench.analysis.stats_tests import INTERVAL_NAMES, PROPORTION_INTERVALS, cluster_bootstrap_means
from scorebench.analysis.stats_tests import proportion_interval as proportion_interval_of
from scorebench.core.tables import NAN_POLICIES, Inputs, label_text
from scorebench.core.validation import check_choice, describe_rows

__all__ = ["evaluate", "resolve_metrics", "SCORE_COLUMNS"]

BOOTSTRAPS = ("auto", "poisson")
Progress = Callable[[int, int], None]
_contributions = contributions


def _check_options(ci: float, n_boot: int) -> None:
    check_resampling(ci=ci, n_boot=n_boot)


def _load(table: Any) -> pd.DataFrame:
    if isinstance(table, pd.DataFrame):
        return table
    if isinstance(table, (str, bytes)) or hasattr(table, "__fspath__"):
        from scorebench.io.tables import read_table

        return read_table(table)
    raise InputError(f"expected a pandas DataFrame or a path to a table, got {type(table).__name__}")


@dataclass(frozen=True)
class _Prepared:
    kind: str
    inputs: Inputs
    by: list[str]
    keys: pd.DataFrame  # one row per group, columns = by
    codes: np.ndarray  # group index of each unit


def _prepare(table: Any, records: Sequence[Metric], kind: str | None, by: str | Sequence[str] | None,
             nan_policy: str, kind_options: dict[str, Any]) -> _Prepared:
    """The whole table as one partition: the kind's units and each unit's group."""
    check_choice(nan_policy, "nan_policy", NAN_POLICIES)
    spec, kind_options = resolve_kind(records, kind, kind_options)
    inputs = spec.extract(_load(table), nan_policy=nan_policy, **kind_options)
    by_cols = by_columns(by, inputs.frame.columns)
    codes, keys = group_codes(inputs.frame, by_cols)
    return _Prepared(spec.name, inputs, by_cols, keys, codes)


def _group_label(keys: pd.DataFrame, g: int) -> tuple:
    return tuple(keys.iloc[g].tolist()) if keys.shape[1] else ()


@dataclass(frozen=True)
class _Settings:
    """The options of one evaluation that every (metric, group) score uses."""

    ci: float
    n_boot: int
    seed: int
    nan_policy: str
    proportion_interval: str
    per_unit: bool
    clusters: np.ndarray | None
    hashes: np.ndarray | None  # the units' content hashes: the Poisson (partition-independent) scheme


@dataclass
class _Collector:
    """Rows and attrs gathered while scoring each (metric, group)."""

    rows: list[dict[str, Any]]
    unit_rows: list[pd.DataFrame]
    methods: dict[str, str]
    intervals: dict[str, str]
    counts: dict[str, dict[str, float]]


def _refuse_engine_options(per_unit: bool, cluster: str | None) -> None:
    if per_unit:
        raise InputError("per_unit=True is not available with the Dask engine (one row per unit of a table "
                         "larger than memory); evaluate a subset with the pandas engine for per-unit values")
    if cluster is not None:
        raise InputError("cluster= is not available with the Dask engine; evaluate with the pandas engine")


def _with_clusters(table: Any, cluster: str | None, bootstrap: str, records: Sequence[Metric]) -> Any:
    """The table with its cluster column as labels, after checking cluster= applies."""
    if cluster is None:
        return table
    table = cluster_labels(_load(table), cluster)
    if bootstrap == "poisson":
        raise InputError("cluster= uses the cluster bootstrap; it cannot be combined with bootstrap='poisson'")
    set_level = [m.name for m in records if not m.per_row]
    if set_level:
        raise InputError(f"cluster= applies to per-row metrics; {set_level} are set-level")
    return table


def _score_group(record: Metric, prep: _Prepared, contrib: np.ndarray | None, g: int, settings: _Settings,
                 out: _Collector) -> None:
    """Score one (metric, group) into ``out``."""
    s = settings
    idx = np.flatnonzero(prep.codes == g)
    label = _group_label(prep.keys, g)
    rng = rng_for(s.seed, record.name, label)
    if contrib is not None:
        weights = None if s.hashes is None else PoissonRounds(s.hashes[idx], s.seed, s.n_boot)
        how = s.proportion_interval if record.proportion and s.clusters is None else None
        nested = weights is None and how is None and s.clusters is None and "_nested" in prep.inputs.consts
        value, low, high, n, method = _per_row_score(contrib[idx], 0 if nested else s.n_boot, s.ci, rng,
                                                     s.nan_policy, weights, how,
                                                     None if s.clusters is None else s.clusters[idx],
                                                     record.interval_method, record.bounds)
        if nested and s.n_boot and np.isfinite(value):
            low, high, method = _two_level_interval(record, prep.inputs, idx, value, s, rng)
        if s.per_unit:
            out.unit_rows.append(_unit_frame(prep, record, idx, contrib[idx]))
    else:
        value, low, high, n, method = _set_score(record, prep.inputs, idx, s.n_boot, s.ci, rng,
                                                 None if s.hashes is None else s.hashes[idx], s.seed)
    if record.note is not None:
        _record_note(record, prep.inputs.take(idx), label, out.counts)
    out.methods[record.name] = method
    out.intervals[record.name] = _interval_rule(method, record.interval_method)
    out.rows.append({**dict(zip(prep.by, label)), "metric": record.name, "value": value,
                     "ci_low": low, "ci_high": high, "n": n, "_order": (g, len(out.rows))})


def _scores_frame(prep: _Prepared, out: _Collector, per_unit: bool) -> pd.DataFrame:
    out.rows.sort(key=lambda row: row.pop("_order"))  # group-major, metrics in the order asked
    scores = pd.DataFrame(out.rows, columns=[*prep.by, *SCORE_COLUMNS])
    if per_unit and out.unit_rows:
        units = pd.concat(out.unit_rows, ignore_index=True)
        key = _unit_key(prep)
        if (units[key] == "all").any():  # the summary rows' name: two "map all" lines would be ambiguous
            raise InputError(f"per-unit output: column {key!r} has a unit named 'all', the name that the "
                             "summary rows carry; rename that unit (e.g. 'all_') to get per-unit rows")
        scores.insert(len(prep.by), key, "all")
        scores = pd.concat([units, scores], ignore_index=True)
    scores["n"] = scores["n"].astype(np.int64)
    return scores


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
        _refuse_engine_options(per_unit, cluster)
        return engine(table, metrics, kind=kind, by=by, ci=ci, n_boot=n_boot, seed=seed, nan_policy=nan_policy,
                      progress=progress, proportion_interval=proportion_interval, **kind_options)
    _check_options(ci, n_boot)
    check_choice(bootstrap, "bootstrap", BOOTSTRAPS)
    check_choice(proportion_interval, "proportion_interval", PROPORTION_INTERVALS)
    records = resolve_metrics(with_source_defaults(table, metrics))
    prep = _prepare(_with_clusters(table, cluster, bootstrap, records), records, kind, by, nan_policy, kind_options)
    settings = _Settings(ci, n_boot, seed, nan_policy, proportion_interval, per_unit,
                         None if cluster is None else prep.inputs.frame[cluster].to_numpy(),
                         prep.inputs.unit_hashes() if bootstrap == "poisson" and n_boot else None)
    out = _Collector([], [], {}, {}, {})
    total = len(records) * len(prep.keys)
    for record in records:
        contrib = contributions(record, prep.inputs, nan_policy) if record.per_row else None
        for g in range(len(prep.keys)):
            _score_group(record, prep, contrib, g, settings, out)
            if progress is not None:
                progress(len(out.rows), total)
    scores = _scores_frame(prep, out, per_unit)
    scores.attrs.update({
        **score_attrs(prep.kind, seed, ci, n_boot, nan_policy, {m.name: out.intervals[m.name] for m in records},
                      "; ".join(f"{k}: {v}" for k, v in out.methods.items())),
        **out.counts,
        **{f"kind_{k}": v for k, v in prep.inputs.consts.items() if isinstance(v, (str, bool, int)) and not k.startswith("_")},
    })
    flags = clt_flags(scores[scores[_unit_key(prep)] == "all"] if per_unit and _unit_key(prep) in scores else scores,
                      {m.name: m.proportion for m in records},
                      out.methods, prep.by)
    if flags:  # CLT-like intervals where n is small or the value near 0/1 (Bowyer et al. 2025)
        scores.attrs["small_sample"] = flags
    if per_unit:  # the key that pairs units across systems; None when units are named by position
        scores.attrs["unit_key"] = prep.inputs.key
    return scores


def cluster_labels(table: pd.DataFrame, cluster: str) -> pd.DataFrame:
    """A copy of ``table`` with the cluster column as text labels (kinds keep label columns)."""
    if cluster not in table.columns:
        raise InputError(f"cluster: column {cluster!r} not found; the table has {[str(c) for c in table.columns]}")
    missing = table[cluster].isna().to_numpy()
    if missing.any():
        raise InputError(f"column {cluster!r}: missing cluster labels in {describe_rows(missing, table.index)}; "
                         "every row needs a cluster")
    return table.assign(**{cluster: label_text(table[cluster]).astype(str)})


def _interval_rule(method: str, rule: str) -> str:
    """The rule a metric's interval came from: a proportion interval, the cluster bootstrap,
    or the metric's declared bootstrap rule (``stats.INTERVAL_METHODS``)."""
    if method in INTERVAL_NAMES.values() or method == "none":
        return method
    return "cluster bootstrap percentile" if method.startswith("cluster") else rule


def _record_note(record: Metric, arrays: dict[str, Any], label: tuple, counts: dict[str, dict[str, float]]) -> None:
    """Add a metric's counts (e.g. clipped rows) to the attrs and warn with its message."""
    note = dict(record.note(arrays, **record._call_params()) or {})
    message = note.pop("message", None)
    for key, count in note.items():
        per_metric = counts.setdefault(key, {})
        per_metric[record.name] = per_metric.get(record.name, 0) + count
    if message:
        where = f" ({', '.join(map(str, label))})" if label else ""
        warn_user(f"{record.name}{where}: {message}", UserWarning)


def _per_row_score(values: np.ndarray, n_boot: int, ci: float, rng: np.random.Generator,
                   nan_policy: str, weights: PoissonRounds | None, proportion: str | None = None,
                   clusters: np.ndarray | None = None,
                   rule: str = "percentile",
                   bounds: tuple[float, float] = (-np.inf, np.inf)) -> tuple[float, float, float, int, str]:
    if nan_policy == "omit":
        keep = ~np.isnan(values)
        values = values[keep]
        weights = None if weights is None else weights.subset(keep)
        clusters = None if clusters is None else clusters[keep]
    if values.size == 0:
        raise InputError("a group has no rows left to evaluate")
    with np.errstate(over="ignore", invalid="ignore"):
        value = float(values.mean())
    if np.isinf(value) and np.isfinite(values).all():
        raise InputError("the mean of the per-row scores overflows float64 (their sum is beyond ~1.8e308); "
                         "rescale the inputs")
    if n_boot == 0 or np.isnan(value):
        return value, np.nan, np.nan, values.size, "none"
    if np.isinf(value):  # e.g. log_score(clip=none) with a forecast of probability 0 that happened
        return value, value, value, values.size, "none (infinite mean)"
    if proportion in INTERVAL_NAMES:
        low, high = proportion_interval_of(float(values.sum()), values.size, ci, proportion)
        return value, low, high, values.size, INTERVAL_NAMES[proportion]
    if clusters is not None:
        means = cluster_bootstrap_means(values, clusters, n_boot, rng)
        low, high = percentile_interval(means, ci)
        return value, low, high, values.size, f"cluster bootstrap ({len(set(clusters.tolist()))} clusters)"
    if weights is not None:
        means, method = poisson_means(*weights.weighted_sums(values)), "poisson"
    else:
        boot = bootstrap_means(values, n_boot, rng)
        means, method = boot.means, boot.method
    low, high = interval_bounds(value, means, ci, rule, bounds)
    return value, low, high, values.size, method


def _two_level_interval(record: Metric, inputs: Inputs, idx: np.ndarray, value: float, s: _Settings,
                        rng: np.random.Generator) -> tuple[float, float, str]:
    """The interval of a per-row metric on units that hold repeated attempts (the kind lists
    them in ``consts["_nested"]``): items resampled, then attempts within each drawn item
    (:func:`scorebench.core.stats.two_level_draws`), the contributions recomputed every round."""
    arrays = inputs.take(idx)
    nested = [name for name in inputs.consts["_nested"] if name in arrays]
    sizes = np.asarray(arrays[inputs.consts["_nested_sizes"]], dtype=np.int64)
    width = arrays[nested[0]].shape[1]
    means = np.empty(s.n_boot)
    done = 0
    for units, attempts in two_level_draws(sizes, s.n_boot, rng, width):
        r, m = units.shape
        drawn = {name: arrays[name][units.ravel()] for name in inputs.arrays}
        for name in nested:
            drawn[name] = np.take_along_axis(drawn[name], attempts.reshape(r * m, width), axis=1)
        values = np.asarray(record.compute({**arrays, **drawn}), dtype=np.float64).reshape(r, m)
        means[done:done + r] = np.nanmean(values, axis=1) if s.nan_policy == "omit" else values.mean(axis=1)
        done += r
    low, high = interval_bounds(value, means, s.ci, record.interval_method, record.bounds)
    return low, high, "two-level bootstrap (items, then attempts within items)"


def poisson_means(sums: np.ndarray, totals: np.ndarray) -> np.ndarray:
    """Replicate means from Poisson-weighted sums (a round with total weight 0 is dropped)."""
    ok = totals > 0
    return sums[ok] / totals[ok]


def _set_score(record: Metric, inputs: Inputs, idx: np.ndarray, n_boot: int, ci: float,
               rng: np.random.Generator, hashes: np.ndarray | None,
               seed: int) -> tuple[float, float, float, int, str]:
    """Value and interval of a set-level metric, by the metric's declared interval rule.

    ``hashes`` (the units' content hashes) selects the partition-independent scheme of the
    Dask engine: Poisson weights, or half-samples drawn from the hashes.
    """
    with Overflow() as overflow:
        value = float(record.compute(inputs.take(idx)))
    overflow.check(record.name, np.array([value]))
    rule = record.interval_method
    if n_boot == 0 or rule == "none":  # "none": the rows are not a sample (e.g. the cells of an MDP)
        return value, np.nan, np.nan, idx.size, "none"
    if rule in HALF_SAMPLING_RULES:
        masks = None if hashes is None else half_sample_masks(hashes, seed, n_boot)
        samples = (idx[m] for m in masks) if masks is not None else \
            (idx[half_sample(idx.size, rng)] for _ in range(n_boot))
        replicates = _replicates(record, inputs, samples, n_boot, rng, halve_consts=True)
        method = "half-sampling" + (" (hash-based)" if hashes is not None else "")
    elif record.partial is not None and record.finalize is not None:
        weights = None if hashes is None else PoissonRounds(hashes, seed, n_boot)
        replicates, method = _weighted_replicates(record, inputs, idx, n_boot, rng, weights)
    else:
        weights = None if hashes is None else PoissonRounds(hashes, seed, n_boot)
        replicates = _replicates(record, inputs, _resamples(idx, n_boot, rng, weights), n_boot, rng)
        method = "row resampling" if weights is None else "poisson row weights"
    finite = replicates[np.isfinite(replicates)]
    if finite.size < n_boot:
        raise InputError(f"metric {record.name!r}: {n_boot - finite.size} of {n_boot} bootstrap resamples "
                         "were undefined (e.g. a resample with a single class); the group is too small "
                         "for a bootstrap interval — pass n_boot=0")
    low, high = interval_bounds(value, replicates, ci, rule, record.bounds)
    return value, low, high, idx.size, method


def _replicates(record: Metric, inputs: Inputs, samples: Iterable[np.ndarray], n_boot: int,
                rng: np.random.Generator, halve_consts: bool = False) -> np.ndarray:
    """The metric on each resample of rows (NaN where a resample leaves it undefined).

    With ``halve_consts``, sample sets held as constants of the kind (the reference rows of
    generative metrics, listed in ``consts["_sample_sets"]``) are half-sampled as well, so
    the interval reflects both samples' variability.
    """
    replicates = np.empty(n_boot)
    sets = inputs.consts.get("_sample_sets", ()) if halve_consts else ()
    for b, sample in enumerate(samples):
        arrays = inputs.take(sample)
        if sets:
            arrays["_stats_cache"] = {}
            # one reference set per task; only the evaluated rows' task is used and halved
            tasks = set(np.unique(arrays["_task"]).tolist()) if "_task" in arrays else None
            for name in sets:
                if arrays.get(name) is not None:
                    arrays[name] = [x[half_sample(len(x), rng)] if tasks is None or i in tasks else x
                                    for i, x in enumerate(arrays[name])]
        try:
            replicates[b] = record.compute(arrays)
        except InputError:  # e.g. a resample without any positive: undefined, counted by the caller
            replicates[b] = np.nan
    return replicates


def _weighted_replicates(record: Metric, inputs: Inputs, idx: np.ndarray, n_boot: int,
                         rng: np.random.Generator, weights: PoissonRounds | None) -> tuple[np.ndarray, str]:
    """Bootstrap a set-level metric through its sufficient statistics, rounds in blocks.

    A multinomial resample is the weight vector of how often each row was drawn, so the
    metric's ``partial(arrays, weights)`` gives every round's statistics in one pass. Above
    ``EXACT_BOOTSTRAP_LIMIT`` draws a metric's ``bootstrap_stats`` (when it has one) draws
    the statistics without a weight per row, as the stratified bootstrap of means does.
    """
    arrays = inputs.take(idx)
    if weights is None and record.bootstrap_stats is not None and idx.size * n_boot > EXACT_BOOTSTRAP_LIMIT:
        stats = record.bootstrap_stats(arrays, n_boot, rng, **record._call_params())
        return np.asarray(record.finalize_stats(stats), dtype=np.float64), "stratified cells (sufficient statistics)"
    out = np.empty(n_boot)
    for start, block in (_multinomial_blocks(idx.size, n_boot, rng) if weights is None else weights.blocks()):
        out[start:start + block.shape[0]] = record.finalize_stats(record.partial_stats(arrays, block))
    return out, ("row resampling (sufficient statistics)" if weights is None else "poisson row weights")


def _multinomial_blocks(n: int, n_boot: int, rng: np.random.Generator):
    """``(first_round, counts)``: how often each of ``n`` rows is drawn, a block of rounds at a time."""
    rounds = max(1, min(n_boot, 4_000_000 // max(n, 1)))
    for start in range(0, n_boot, rounds):
        block = np.empty((min(n_boot, start + rounds) - start, n))
        for r in range(block.shape[0]):
            block[r] = np.bincount(rng.integers(0, n, n), minlength=n)
        yield start, block


def _resamples(idx: np.ndarray, n_boot: int, rng: np.random.Generator, weights: PoissonRounds | None):
    """The rows of each bootstrap resample: drawn with replacement, or repeated by their Poisson weight."""
    if weights is None:
        for _ in range(n_boot):
            yield idx[rng.integers(0, idx.size, idx.size)]
        return
    for _, block in weights.blocks():
        for w in block:
            yield np.repeat(idx, w.astype(np.int64))


def _unit_key(prep: _Prepared) -> str:
    """The column naming each unit in per-unit output: the kind's key (``id``, ``qid``), or
    ``row`` (the unit's position among the evaluated units) for a table without one."""
    return prep.inputs.key if prep.inputs.key is not None else "row"


def _unit_frame(prep: _Prepared, record: Metric, idx: np.ndarray, values: np.ndarray) -> pd.DataFrame:
    key = prep.inputs.key
    cols = [*prep.by, key] if key is not None else list(prep.by)
    out = prep.inputs.frame.iloc[idx][cols].reset_index(drop=True) if cols else pd.DataFrame(index=range(idx.size))
    out[_unit_key(prep)] = out[key].astype(str) if key is not None else idx.astype(str)
    out["metric"] = record.name
    out["value"] = values
    out["ci_low"] = np.nan
    out["ci_high"] = np.nan
    out["n"] = 1
    return out
