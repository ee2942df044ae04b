"""Reduce step of the in-memory engine: one partition holding every unit -> a :class:`Partial`.

A partitioned engine reduces each partition to partial sums
(:func:`scorebench.evaluation.pipeline.unit_partials`); in memory, where a group's units are all
at hand, the reduce step also draws what needs them together, as a
:class:`~scorebench.evaluation.partial.Replicates` entry: multinomial (exact or stratified),
cluster and two-level bootstraps of per-row contributions, and set-level metrics recomputed on
resamples, half-samples or sufficient-statistics weights. The Poisson-hash scheme of per-row
metrics reduces to the same :class:`~scorebench.evaluation.partial.RowSums` as a Dask partition.
The draws come from the group's :class:`~scorebench.evaluation.resample.Resampler`; the
intervals are made by :func:`scorebench.evaluation.score.score_entry`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, cast

import numpy as np

from scorebench.core.errors import InputError
from scorebench.core.groups import group_labels
from scorebench.core.registry import Metric
from scorebench.core.stats import EXACT_BOOTSTRAP_LIMIT, HALF_SAMPLING_RULES, poisson_weights, rng_for
from scorebench.core.tables import Inputs, NestedUnits
from scorebench.core.validation import describe_rows
from scorebench.evaluation.partial import Entry, Partial, Replicates, RowSums, SetStats
from scorebench.evaluation.plan import Plan, Units
from scorebench.evaluation.resample import Resampler
from scorebench.evaluation.score import proportion_rule

__all__ = ["Overflow", "contributions", "unit_partials", "group_resampler", "row_entry", "set_entry", "group_entry"]

TWO_LEVEL = "two-level bootstrap (items, then attempts within items)"
_WEIGHT_BUDGET = 8_388_608  # float64 cells per weight block (64 MB)


class Overflow:
    """Records floating-point overflow (instead of a RuntimeWarning on stderr) inside ``with``."""

    def __init__(self) -> None:
        self.seen = False

    def __call__(self, kind: str, flag: int) -> None:
        if "overflow" in kind:
            self.seen = True

    def __enter__(self) -> Overflow:
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


def contributions(record: Metric, inputs: Inputs, nan_policy: str) -> np.ndarray:
    """A per-row metric's contribution of each unit (checked for shape, overflow and NaN)."""
    with Overflow() as overflow:
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


def _block_rows(n_boot: int) -> int:
    """Rows per weight block: the (n_boot, rows) float64 block stays near 64 MB."""
    return max(1024, min(65_536, _WEIGHT_BUDGET // max(n_boot, 1)))


def _kept_values(v: np.ndarray, nan_policy: str) -> tuple[np.ndarray, np.ndarray | None]:
    """Values with omitted NaNs as 0, and the 0/1 weights of kept rows (None: all kept)."""
    if nan_policy != "omit":
        return v, None
    keep = ~np.isnan(v)
    return np.where(keep, v, 0.0), keep.astype(np.float64)


class _Group:
    """One group's entries while its units are added in weight blocks."""

    def __init__(self, records: Sequence[Metric], inputs: Inputs, idx: np.ndarray,
                 kept: dict[str, tuple[np.ndarray, np.ndarray | None]], n_boot: int) -> None:
        self.records, self.inputs, self.kept = records, inputs, kept
        self.entries: dict[str, RowSums | SetStats] = {}
        for r in records:
            if r.per_row:
                values, keep = kept[r.name]
                self.entries[r.name] = RowSums(float(values.sum()), int(values.size if keep is None else keep.sum()),
                                               np.zeros(n_boot), np.zeros(n_boot))
            else:
                self.entries[r.name] = SetStats(np.asarray(r.partial_stats(inputs.take(idx)), dtype=np.float64),
                                                idx.size, np.zeros(0) if not n_boot else 0.0)

    def add_block(self, w: np.ndarray, rows: np.ndarray, at: slice) -> None:
        """Add one block of Poisson weights ``w`` (rounds x units) for units ``rows``."""
        for r in self.records:
            entry = self.entries[r.name]
            if r.per_row:  # a per-row metric's entry holds row sums, a set-level one's statistics
                sums = cast(RowSums, entry)
                values, keep = self.kept[r.name]
                sums.sums += w @ values[at]
                sums.totals += w.sum(axis=1) if keep is None else w @ keep[at]
            else:
                stats = cast(SetStats, entry)
                stats.boot = stats.boot + np.asarray(r.partial_stats(self.inputs.take(rows), w), dtype=np.float64)


def unit_partials(inputs: Inputs, records: Sequence[Metric], by_cols: Sequence[str], nan_policy: str,
                  n_boot: int, seed: int, collect_units: bool = False) -> Partial:
    """The mergeable partial of some units for mergeable ``records`` (the core of a partition).

    Per-row metrics add their contributions and count, and per bootstrap round the
    Poisson-weighted sums and total weights (each unit's weights derive from its content
    hash and the seed, :func:`scorebench.core.stats.poisson_weights`, so they do not depend on
    the partitioning); set-level metrics add their sufficient statistics. With
    ``collect_units``, the unit keys of each group are kept too.
    """
    codes, labels = group_labels(inputs.frame, by_cols)
    hashes = inputs.unit_hashes() if n_boot else None
    contribs = {r.name: contributions(r, inputs, nan_policy) for r in records if r.per_row}
    out = Partial()
    weights = np.empty((n_boot, _block_rows(n_boot))) if n_boot else None  # reused: see stats._splitmix64_inplace
    # both are arrays whenever n_boot > 0, the only case the weight blocks below run
    blocks, unit_hashes = cast(np.ndarray, weights), cast(np.ndarray, hashes)
    for g, label in enumerate(labels):
        idx = np.flatnonzero(codes == g)
        group = _Group(records, inputs, idx, {n: _kept_values(v[idx], nan_policy) for n, v in contribs.items()},
                       n_boot)
        # One weight block serves every metric: the Poisson draws are the costly part.
        for start in range(0, idx.size if n_boot else 0, _block_rows(n_boot)):
            rows = idx[start:start + blocks.shape[1]]
            w = poisson_weights(unit_hashes[rows], seed, n_boot, out=blocks[:, :rows.size])
            group.add_block(w, rows, slice(start, start + rows.size))
        out.entries.update({(label, name): entry for name, entry in group.entries.items()})
    if collect_units and inputs.key is not None:
        units = inputs.frame[inputs.key].astype(str).to_numpy()
        out.units = {label: set(units[codes == g]) for g, label in enumerate(labels)}
    return out


def group_resampler(plan: Plan, record: Metric, label: tuple, idx: np.ndarray, hashes: np.ndarray | None,
                    clusters: np.ndarray | None) -> Resampler:
    """The resampler of one (metric, group): its own stream of the seed (so adding a metric
    or group never moves another's interval), and the group's hashes or clusters."""
    return Resampler(plan.n_boot, rng_for(plan.seed, record.canonical_name, label), plan.seed,
                     None if hashes is None else hashes[idx], None if clusters is None else clusters[idx])


def row_entry(record: Metric, values: np.ndarray, resampler: Resampler, plan: Plan, draw: bool = True) -> Entry:
    """One group's per-row ``values`` reduced: their mean with replicates (in memory) or
    Poisson-weighted sums. Nothing is drawn for an interval that needs no replicates (no
    rounds, an undefined or infinite mean, a proportion interval) or when ``draw`` is false."""
    if plan.nan_policy == "omit":
        keep = ~np.isnan(values)
        values = values[keep]
        resampler = resampler.subset(keep)
    if values.size == 0:
        raise InputError("a group has no rows left to evaluate")
    with np.errstate(over="ignore", invalid="ignore"):
        value = float(values.mean())
        total = float(values.sum())
    if np.isinf(value) and np.isfinite(values).all():
        raise InputError("the mean of the per-row scores overflows float64 (their sum is beyond ~1.8e308); "
                         "rescale the inputs")
    if not (draw and plan.n_boot and np.isfinite(value)) or proportion_rule(record, plan) is not None:
        return Replicates(value, values.size, None, "none", successes=total)
    if resampler.scheme == "poisson":
        return RowSums(total, values.size, *resampler.weighted_sums(values))
    means, method = resampler.means(values)
    return Replicates(value, values.size, means, method, "percentile" if resampler.scheme == "cluster" else None)


def _two_level(record: Metric, inputs: Inputs, idx: np.ndarray, entry: Entry, resampler: Resampler,
               plan: Plan, declared: NestedUnits) -> Entry:
    """The replicates of a per-row metric on units that hold repeated attempts (the kind's
    ``nested`` hook, ``declared``, names them): items resampled, then attempts within each
    drawn item (:func:`scorebench.core.stats.two_level_draws`), the contributions recomputed
    every round."""
    if not (plan.n_boot and isinstance(entry, Replicates) and np.isfinite(entry.value)):
        return entry
    arrays = inputs.take(idx)
    nested = declared.present(arrays)
    sizes = np.asarray(arrays[declared.sizes], dtype=np.int64)
    width = arrays[nested[0]].shape[1]
    means = np.empty(plan.n_boot)
    done = 0
    for units, attempts in resampler.two_level(sizes, width):
        r, m = units.shape
        drawn = {name: arrays[name][units.ravel()] for name in inputs.arrays}
        for name in nested:
            drawn[name] = np.take_along_axis(drawn[name], attempts.reshape(r * m, width), axis=1)
        values = np.asarray(record.compute({**arrays, **drawn}), dtype=np.float64).reshape(r, m)
        means[done:done + r] = np.nanmean(values, axis=1) if plan.nan_policy == "omit" else values.mean(axis=1)
        done += r
    return Replicates(entry.value, entry.n, means, TWO_LEVEL, successes=entry.successes)


def set_entry(record: Metric, units: Units, idx: np.ndarray, resampler: Resampler, plan: Plan) -> Replicates:
    """A set-level metric's value on one group and its replicates by the metric's declared rule.

    Half-sampling rules recompute the metric on half-samples (the kind's ``side_data`` hook
    halves constant side data such as reference samples with them); metrics with sufficient
    statistics go through weight blocks; others are recomputed on each resample.
    """
    inputs = units.inputs
    with Overflow() as overflow:
        value = float(record.compute(inputs.take(idx)))
    overflow.check(record.name, np.array([value]))
    rule = record.interval_method
    if not plan.n_boot or rule == "none":  # "none": the rows are not a sample (e.g. the cells of an MDP)
        return Replicates(value, idx.size, None, "none")
    hashed = resampler.scheme == "poisson"
    if rule in HALF_SAMPLING_RULES:
        replicates = _recomputed(record, inputs, resampler.half_samples(idx), resampler, plan.kind.side_data)
        method = "half-sampling" + (" (hash-based)" if hashed else "")
    elif record.partial is not None and record.finalize is not None:
        replicates, method = _weighted_replicates(record, inputs, idx, resampler)
    else:
        replicates = _recomputed(record, inputs, resampler.resamples(idx), resampler, None)
        method = "poisson row weights" if hashed else "row resampling"
    finite = replicates[np.isfinite(replicates)]
    if finite.size < plan.n_boot:
        raise InputError(f"metric {record.name!r}: {plan.n_boot - finite.size} of {plan.n_boot} bootstrap "
                         "resamples were undefined (e.g. a resample with a single class); the group is too small "
                         "for a bootstrap interval — pass n_boot=0")
    return Replicates(value, idx.size, replicates, method)


def _recomputed(record: Metric, inputs: Inputs, samples: Iterable[np.ndarray], resampler: Resampler,
                side_data: Callable[..., dict[str, Any]] | None) -> np.ndarray:
    """The metric on each resample of rows (NaN where a resample leaves it undefined), with
    the kind's side data resampled alongside when ``side_data`` is given."""
    replicates = np.empty(resampler.n_boot)
    for b, sample in enumerate(samples):
        arrays = inputs.take(sample)
        if side_data is not None:
            arrays = side_data(arrays, resampler.half)
        try:
            replicates[b] = record.compute(arrays)
        except InputError:  # e.g. a resample without any positive: undefined, counted by the caller
            replicates[b] = np.nan
    return replicates


def _weighted_replicates(record: Metric, inputs: Inputs, idx: np.ndarray,
                         resampler: Resampler) -> tuple[np.ndarray, str]:
    """Bootstrap a set-level metric through its sufficient statistics, rounds in weight blocks.

    A multinomial resample is the weight vector of how often each row was drawn, so the
    metric's ``partial(arrays, weights)`` gives every round's statistics in one pass. Above
    ``EXACT_BOOTSTRAP_LIMIT`` draws a metric's ``bootstrap_stats`` (when it has one) draws
    the statistics without a weight per row, as the stratified bootstrap of means does.
    """
    arrays = inputs.take(idx)
    n_boot = resampler.n_boot
    multinomial = resampler.scheme != "poisson"
    if multinomial and record.bootstrap_stats is not None and idx.size * n_boot > EXACT_BOOTSTRAP_LIMIT:
        stats = record.bootstrap_stats(arrays, n_boot, resampler.rng, **record._call_params())
        return np.asarray(record.finalize_stats(stats), dtype=np.float64), "stratified cells (sufficient statistics)"
    out = np.empty(n_boot)
    for start, block in resampler.weight_blocks(idx.size):
        out[start:start + block.shape[0]] = record.finalize_stats(record.partial_stats(arrays, block))
    return out, ("row resampling (sufficient statistics)" if multinomial else "poisson row weights")


def group_entry(record: Metric, units: Units, g: int, label: tuple, contrib: np.ndarray | None, plan: Plan,
                hashes: np.ndarray | None, clusters: np.ndarray | None) -> Entry:
    """Reduce group ``g`` (``by`` values ``label``) of ``units`` for ``record``; ``contrib`` holds
    a per-row metric's contribution of every unit (``None`` for a set-level metric)."""
    idx = np.flatnonzero(units.codes == g)
    resampler = group_resampler(plan, record, label, idx, hashes, clusters)
    if contrib is None:
        return set_entry(record, units, idx, resampler, plan)
    declared = plan.kind.nested
    if declared is None or resampler.scheme != "multinomial" or proportion_rule(record, plan) is not None:
        return row_entry(record, contrib[idx], resampler, plan)
    entry = row_entry(record, contrib[idx], resampler, plan, draw=False)
    return _two_level(record, units.inputs, idx, entry, resampler, plan, declared)
