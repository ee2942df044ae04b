"""Apply registered metrics to a result table, grouped by system (and task).

One engine serves every family. A table *kind* extracts per-unit arrays once; each
metric then either returns per-unit contributions (``per_row`` metrics: the value of a
group is their mean, so it reduces by sums and counts, and its bootstrap resamples the
contributions without calling the metric again) or one number for a set of units
(set-level metrics such as ECE or AUROC: the bootstrap resamples units and calls the
metric once per round).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from . import __version__
from .errors import InputError
from .registry import Metric, metric as lookup_metric
from .stats import (EXACT_BOOTSTRAP_LIMIT, MIN_BOOT, benjamini_hochberg, bootstrap_means, diebold_mariano,
                    half_sample, half_sample_masks, HALF_SAMPLING_RULES, holm, interval_bounds, paired_bootstrap, paired_permutation,
                    paired_t, percentile_interval, PoissonRounds, rng_for)
from .stats_tests import INTERVAL_NAMES, PROPORTION_INTERVALS, cluster_bootstrap_means
from .stats_tests import proportion_interval as proportion_interval_of
from .tables import NAN_POLICIES, Inputs, get_kind, infer_kind, label_text
from .validation import check_choice, describe_rows

__all__ = ["evaluate", "resolve_metrics", "SCORE_COLUMNS"]

SCORE_COLUMNS = ("metric", "value", "ci_low", "ci_high", "n")
BOOTSTRAPS = ("auto", "poisson")
Progress = Callable[[int, int], None]


def resolve_metrics(metrics: str | Metric | Iterable[str | Metric]) -> list[Metric]:
    """Metric records for names (``"ndcg@10"``) or records, refusing duplicates."""
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


def _check_options(ci: float, n_boot: int) -> None:
    if not isinstance(n_boot, (int, np.integer)) or isinstance(n_boot, bool) or n_boot < 0:
        raise InputError(f"n_boot: expected a non-negative integer, got {n_boot!r}")
    from .validation import check_count

    check_count(n_boot, "n_boot", itemsize=16, minimum=0)  # the replicates of a group, plus scratch
    if 0 < n_boot < MIN_BOOT:
        raise InputError(f"n_boot: {n_boot} bootstrap rounds are too few for a percentile interval (the 2.5% and "
                         f"97.5% quantiles of so few replicates are the extremes); use at least {MIN_BOOT} "
                         "(1000 recommended), or 0 for no interval")
    if not isinstance(ci, (int, float)) or not 0.0 < ci < 1.0:
        raise InputError(f"ci: expected a confidence level strictly between 0 and 1, got {ci!r}")


def _is_dask(table: Any) -> bool:
    return type(table).__module__.split(".")[0] == "dask"


def _load(table: Any) -> pd.DataFrame:
    if isinstance(table, pd.DataFrame):
        return table
    if isinstance(table, (str, bytes)) or hasattr(table, "__fspath__"):
        from .io import read_table

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
    check_choice(nan_policy, "nan_policy", NAN_POLICIES)
    kind_name = infer_kind({m.kind for m in records}, kind)
    spec = get_kind(kind_name)
    unknown = sorted(set(kind_options) - set(spec.options))
    if unknown:
        accepted = ", ".join(spec.options) or "none"
        raise InputError(f"option(s) {unknown} do not apply to kind {kind_name!r} (accepted: {accepted})")
    inputs = spec.extract(_load(table), nan_policy=nan_policy, **kind_options)
    frame = inputs.frame
    if by is None:
        by_cols = [c for c in ("system", "task") if c in frame.columns]
    else:
        by_cols = [c.strip() for c in by.split(",")] if isinstance(by, str) else list(by)
        missing = [c for c in by_cols if c not in frame.columns]
        if missing:
            raise InputError(f"by: column(s) {missing} not found; label columns available for grouping: "
                             f"{[str(c) for c in frame.columns] or 'none'}")
    if by_cols:
        grouped = frame.groupby(by_cols, sort=True, dropna=False, observed=True)
        codes = grouped.ngroup().to_numpy()
        keys = grouped.size().index.to_frame(index=False)[by_cols]
    else:
        codes = np.zeros(inputs.n, dtype=np.int64)
        keys = pd.DataFrame(index=[0])
    return _Prepared(kind_name, inputs, by_cols, keys.reset_index(drop=True), codes)


class _Overflow:
    """Records floating-point overflow (instead of a RuntimeWarning on stderr) inside ``with``."""

    def __init__(self) -> None:
        self.seen = False

    def __call__(self, kind: str, flag: int) -> None:
        if "overflow" in kind:
            self.seen = True

    def __enter__(self) -> "_Overflow":
        self._state = np.errstate(over="call", invalid="call", divide="ignore", under="ignore", call=self)
        self._state.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._state.__exit__(*exc)

    def check(self, name: str, values: np.ndarray) -> None:
        """An overflow that left a non-finite value is an error (a finite input, no finite score)."""
        bad = ~np.isfinite(np.atleast_1d(values))
        if self.seen and bad.any():
            raise InputError(f"metric {name!r}: the computation overflows float64 for {describe_rows(bad)} (a value "
                             "beyond ~1.8e308); the inputs are too large in magnitude — rescale them")


def _contributions(record: Metric, inputs: Inputs, nan_policy: str) -> np.ndarray:
    with _Overflow() as overflow:
        values = np.asarray(record.compute(inputs.merged()), dtype=np.float64)
    overflow.check(record.name, values)
    if values.shape != (inputs.n,):
        raise InputError(f"metric {record.name!r} returned shape {values.shape}; expected one value per "
                         f"unit ({inputs.n},) — is it a set-level metric?")
    if nan_policy == "raise":
        bad = np.isnan(values)
        if bad.any():
            raise InputError(f"metric {record.name!r} is undefined (NaN) for {describe_rows(bad)} of the "
                             "extracted units; use nan_policy='omit' to drop them")
    return values


def _group_label(keys: pd.DataFrame, g: int) -> tuple:
    return tuple(keys.iloc[g].tolist()) if keys.shape[1] else ()


def evaluate(table: Any, metrics: str | Metric | Iterable[str | Metric], *, kind: str | None = None,
             by: str | Sequence[str] | None = None, ci: float = 0.95, n_boot: int = 1000, seed: int = 0,
             nan_policy: str = "raise", per_unit: bool = False, bootstrap: str = "auto",
             progress: Progress | None = None, proportion_interval: str = "wilson", cluster: str | None = None,
             **kind_options: Any) -> pd.DataFrame:
    """Score every group of a result table with each metric, with bootstrap intervals.

    Parameters
    ----------
    table : DataFrame or path
        A long result table of the metrics' kind (see :mod:`scorebench.tables`).
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
        column (e.g. ``qid``); the group averages then carry ``"all"`` in that column.
    bootstrap : {"auto", "poisson"}
        ``auto``: multinomial resampling (exact, or stratified for very large groups; see
        :mod:`scorebench.stats`). ``poisson``: Poisson(1) weights derived from each unit's
        content hash and the seed — the scheme of the Dask engine, which gives the same
        intervals however the table is partitioned.
    progress : callable, optional
        Called as ``progress(done, total)`` after each (metric, group); on the Dask engine,
        after each partition.
    proportion_interval : {"wilson", "jeffreys", "bootstrap"}
        Interval of metrics whose value is a proportion of 0/1 outcomes (``accuracy``,
        ``argmax_accuracy``, ...; ``Metric.proportion``): the Wilson score interval (default),
        the Jeffreys interval, or the percentile bootstrap (see :mod:`scorebench.stats_tests`).
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
    if _is_dask(table):
        from .dask_engine import evaluate_dask

        if per_unit:
            raise InputError("per_unit=True is not available with the Dask engine (one row per unit of a table "
                             "larger than memory); evaluate a subset with the pandas engine for per-unit values")
        if cluster is not None:
            raise InputError("cluster= is not available with the Dask engine; evaluate with the pandas engine")
        return evaluate_dask(table, metrics, kind=kind, by=by, ci=ci, n_boot=n_boot, seed=seed,
                             nan_policy=nan_policy, progress=progress, proportion_interval=proportion_interval,
                             **kind_options)
    _check_options(ci, n_boot)
    check_choice(bootstrap, "bootstrap", BOOTSTRAPS)
    check_choice(proportion_interval, "proportion_interval", PROPORTION_INTERVALS)
    records = resolve_metrics(metrics)
    if cluster is not None:
        table = cluster_labels(_load(table), cluster)
        if bootstrap == "poisson":
            raise InputError("cluster= uses the cluster bootstrap; it cannot be combined with bootstrap='poisson'")
        set_level = [m.name for m in records if not m.per_row]
        if set_level:
            raise InputError(f"cluster= applies to per-row metrics; {set_level} are set-level")
    prep = _prepare(table, records, kind, by, nan_policy, kind_options)
    clusters = None if cluster is None else prep.inputs.frame[cluster].to_numpy()
    groups = [np.flatnonzero(prep.codes == g) for g in range(len(prep.keys))]
    rows: list[dict[str, Any]] = []
    unit_rows: list[pd.DataFrame] = []
    methods: dict[str, str] = {}
    intervals: dict[str, str] = {}
    counts: dict[str, dict[str, float]] = {}
    total, done = len(records) * len(groups), 0
    hashes = prep.inputs.unit_hashes() if bootstrap == "poisson" and n_boot else None
    for record in records:
        contrib = _contributions(record, prep.inputs, nan_policy) if record.per_row else None
        for g, idx in enumerate(groups):
            label = _group_label(prep.keys, g)
            rng = rng_for(seed, record.name, label)
            weights = None if hashes is None else PoissonRounds(hashes[idx], seed, n_boot)
            if contrib is not None:
                how = proportion_interval if record.proportion and clusters is None else None
                value, low, high, n, method = _per_row_score(contrib[idx], n_boot, ci, rng, nan_policy, weights,
                                                             how, None if clusters is None else clusters[idx],
                                                             record.interval_method)
                if per_unit:
                    unit_rows.append(_unit_frame(prep, record, idx, contrib[idx]))
            else:
                value, low, high, n, method = _set_score(record, prep.inputs, idx, n_boot, ci, rng,
                                                         None if hashes is None else hashes[idx], seed)
            if record.note is not None:
                _record_note(record, prep.inputs.take(idx), label, counts)
            methods[record.name] = method
            intervals[record.name] = _interval_rule(method, record.interval_method)
            rows.append({**dict(zip(prep.by, label)), "metric": record.name, "value": value,
                         "ci_low": low, "ci_high": high, "n": n, "_order": (g, len(rows))})
            done += 1
            if progress is not None:
                progress(done, total)
    rows.sort(key=lambda row: row.pop("_order"))  # group-major, metrics in the order asked
    scores = pd.DataFrame(rows, columns=[*prep.by, *SCORE_COLUMNS])
    key = prep.inputs.key
    if per_unit and unit_rows and key is not None:
        scores.insert(len(prep.by), key, "all")
        scores = pd.concat([pd.concat(unit_rows, ignore_index=True), scores], ignore_index=True)
    scores["n"] = scores["n"].astype(np.int64)
    scores.attrs.update({
        "scorebench_version": __version__, "kind": prep.kind, "seed": seed, "ci": ci, "n_boot": n_boot,
        "interval": interval_attr(intervals, n_boot), "nan_policy": nan_policy,
        "interval_methods": {m.name: intervals[m.name] if n_boot else "none" for m in records},
        "bootstrap": "; ".join(f"{k}: {v}" for k, v in methods.items()), **counts,
        **{f"kind_{k}": v for k, v in prep.inputs.consts.items() if isinstance(v, (str, bool, int))},
    })
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


def _record_note(record: Metric, arrays: dict[str, Any], label: tuple, counts: dict[str, dict[str, float]]) -> None:
    """Add a metric's counts (e.g. clipped rows) to the attrs and warn with its message."""
    import warnings

    note = dict(record.note(arrays, **record._call_params()) or {})
    message = note.pop("message", None)
    for key, count in note.items():
        per_metric = counts.setdefault(key, {})
        per_metric[record.name] = per_metric.get(record.name, 0) + count
    if message:
        where = f" ({', '.join(map(str, label))})" if label else ""
        warnings.warn(f"{record.name}{where}: {message}", UserWarning, stacklevel=3)


def _per_row_score(values: np.ndarray, n_boot: int, ci: float, rng: np.random.Generator,
                   nan_policy: str, weights: PoissonRounds | None, proportion: str | None = None,
                   clusters: np.ndarray | None = None,
                   rule: str = "percentile") -> tuple[float, float, float, int, str]:
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
    low, high = interval_bounds(value, means, ci, rule)
    return value, low, high, values.size, method


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
    with _Overflow() as overflow:
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


def _unit_frame(prep: _Prepared, record: Metric, idx: np.ndarray, values: np.ndarray) -> pd.DataFrame:
    key = prep.inputs.key
    cols = [*prep.by, key] if key is not None else list(prep.by)
    out = prep.inputs.frame.iloc[idx][cols].reset_index(drop=True) if cols else pd.DataFrame(index=range(idx.size))
    if key is not None:
        out[key] = out[key].astype(str)
    out["metric"] = record.name
    out["value"] = values
    out["ci_low"] = np.nan
    out["ci_high"] = np.nan
    out["n"] = 1
    return out
