"""The evaluation pipeline shared by every engine.

``kind.extract(table) -> units`` (an :class:`~scorebench.core.tables.Inputs`), then
``metric.compute(units)`` (per-unit contributions, or one value of a set), then, for a
partitioned engine, :func:`unit_partials` reduces the units of a partition to a mergeable
:class:`~scorebench.evaluation.partial.Partial` and :func:`finish` turns merged entries into a
value and its bootstrap replicates. The pandas engine (:func:`scorebench.evaluate`) runs
the same resolution (:func:`resolve_metrics`, :func:`resolve_kind`, :func:`by_columns`,
:func:`group_codes`), contributions (:func:`contributions`) and output attrs
(:func:`score_attrs`) on the whole table as one partition.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from scorebench._version import __version__
from scorebench.core.errors import InputError
from scorebench.core.registry import Metric, metric as lookup_metric
from scorebench.core.stats import HALF_SAMPLING_RULES, poisson_weights
from scorebench.core.tables import Inputs, Kind, get_kind, infer_kind
from scorebench.core.validation import describe_rows
from scorebench.evaluation.partial import Partial, RowSums, SetStats

__all__ = ["SCORE_COLUMNS", "resolve_metrics", "resolve_kind", "parse_by", "by_columns", "group_codes",
           "group_labels", "Overflow", "contributions", "unit_partials", "finish", "interval_attr", "score_attrs"]

SCORE_COLUMNS = ("metric", "value", "ci_low", "ci_high", "n")
_WEIGHT_BUDGET = 8_388_608  # float64 cells per weight block (64 MB)


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


def resolve_kind(records: Sequence[Metric], kind: str | None,
                 kind_options: dict[str, Any]) -> tuple[Kind, dict[str, Any]]:
    """The table kind the metrics read (or ``kind``) and the options checked against its
    declaration (an option it does not declare is refused; text is converted to its type)."""
    spec = get_kind(infer_kind({m.kind for m in records}, kind))
    return spec, spec.check_options(kind_options)


def parse_by(by: str | Sequence[str] | None) -> list[str] | None:
    """``by`` as a list of column names (text is separated by commas); ``None`` stays ``None``."""
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


def group_codes(frame: pd.DataFrame, by_cols: Sequence[str]) -> tuple[np.ndarray, pd.DataFrame]:
    """The group index of each unit and one row of ``by`` values per group (sorted)."""
    if not by_cols:
        return np.zeros(len(frame), dtype=np.int64), pd.DataFrame(index=[0])
    grouped = frame.groupby(list(by_cols), sort=True, dropna=False, observed=True)
    keys = grouped.size().index.to_frame(index=False)[list(by_cols)]
    return grouped.ngroup().to_numpy(), keys.reset_index(drop=True)


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


def group_labels(frame: pd.DataFrame, by_cols: Sequence[str]) -> tuple[np.ndarray, list[tuple]]:
    """The group index of each unit and each group's ``by`` values as the partials key them
    (labels as text, numbers as numbers, so partitions read from different files agree)."""
    codes, keys = group_codes(frame, by_cols)
    if not by_cols:
        return codes, [()]
    return codes, [tuple(x if isinstance(x, (int, float)) else str(x) for x in row)
                   for row in keys.itertuples(index=False, name=None)]


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
            if r.per_row:
                values, keep = self.kept[r.name]
                entry.sums += w @ values[at]
                entry.totals += w.sum(axis=1) if keep is None else w @ keep[at]
            else:
                entry.boot = entry.boot + np.asarray(r.partial_stats(self.inputs.take(rows), w), dtype=np.float64)


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
    for g, label in enumerate(labels):
        idx = np.flatnonzero(codes == g)
        group = _Group(records, inputs, idx, {n: _kept_values(v[idx], nan_policy) for n, v in contribs.items()},
                       n_boot)
        # One weight block serves every metric: the Poisson draws are the costly part.
        for start in range(0, idx.size if n_boot else 0, _block_rows(n_boot)):
            rows = idx[start:start + weights.shape[1]]
            w = poisson_weights(hashes[rows], seed, n_boot, out=weights[:, :rows.size])
            group.add_block(w, rows, slice(start, start + rows.size))
        out.entries.update({(label, name): entry for name, entry in group.entries.items()})
    if collect_units and inputs.key is not None:
        units = inputs.frame[inputs.key].astype(str).to_numpy()
        out.units = {label: set(units[codes == g]) for g, label in enumerate(labels)}
    return out


def finish(record: Metric, entry: RowSums | SetStats, n_boot: int) -> tuple[float, np.ndarray]:
    """The value and the finite bootstrap replicates from a merged entry."""
    if isinstance(entry, RowSums):
        return entry.value(), entry.replicates() if n_boot else np.empty(0)
    value = float(record.finalize_stats(entry.stats))
    replicates = np.asarray(record.finalize_stats(entry.boot), dtype=np.float64) if n_boot else np.empty(0)
    return value, replicates[np.isfinite(replicates)]


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
