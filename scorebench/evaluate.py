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
                    half_sample, half_sample_masks, holm, interval_bounds, paired_bootstrap, paired_permutation,
                    paired_t, percentile_interval, PoissonRounds, rng_for)
from .tables import NAN_POLICIES, Inputs, get_kind, infer_kind
from .validation import check_choice, describe_rows

__all__ = ["evaluate", "compare", "resolve_metrics", "SCORE_COLUMNS", "COMPARE_TESTS"]

SCORE_COLUMNS = ("metric", "value", "ci_low", "ci_high", "n")
COMPARE_TESTS = ("bootstrap", "permutation", "t", "diebold_mariano")
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


def _contributions(record: Metric, inputs: Inputs, nan_policy: str) -> np.ndarray:
    values = np.asarray(record.compute(inputs.merged()), dtype=np.float64)
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
             progress: Progress | None = None, **kind_options: Any) -> pd.DataFrame:
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
        return evaluate_dask(table, metrics, kind=kind, by=by, ci=ci, n_boot=n_boot, seed=seed,
                             nan_policy=nan_policy, progress=progress, **kind_options)
    _check_options(ci, n_boot)
    check_choice(bootstrap, "bootstrap", BOOTSTRAPS)
    records = resolve_metrics(metrics)
    prep = _prepare(table, records, kind, by, nan_policy, kind_options)
    groups = [np.flatnonzero(prep.codes == g) for g in range(len(prep.keys))]
    rows: list[dict[str, Any]] = []
    unit_rows: list[pd.DataFrame] = []
    methods: dict[str, str] = {}
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
                value, low, high, n, method = _per_row_score(contrib[idx], n_boot, ci, rng, nan_policy, weights,
                                                             record.interval_method)
                if per_unit:
                    unit_rows.append(_unit_frame(prep, record, idx, contrib[idx]))
            else:
                value, low, high, n, method = _set_score(record, prep.inputs, idx, n_boot, ci, rng,
                                                         None if hashes is None else hashes[idx], seed)
            if record.note is not None:
                _record_note(record, prep.inputs.take(idx), label, counts)
            methods[record.name] = method
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
        "interval": interval_attr(records, n_boot), "nan_policy": nan_policy,
        "interval_methods": {m.name: (m.interval_method if n_boot else "none") for m in records},
        "bootstrap": "; ".join(f"{k}: {v}" for k, v in methods.items()), **counts,
        **{f"kind_{k}": v for k, v in prep.inputs.consts.items() if isinstance(v, (str, bool, int))},
    })
    return scores


def interval_attr(records: Sequence[Metric], n_boot: int) -> str:
    """The ``interval`` attr: each metric's interval rule (see ``stats.INTERVAL_METHODS``)."""
    if not n_boot:
        return "none"
    return "; ".join(f"{m.name}: {m.interval_method} bootstrap" for m in records)


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
                   nan_policy: str, weights: PoissonRounds | None,
                   rule: str = "percentile") -> tuple[float, float, float, int, str]:
    if nan_policy == "omit":
        keep = ~np.isnan(values)
        values = values[keep]
        weights = None if weights is None else weights.subset(keep)
    if values.size == 0:
        raise InputError("a group has no rows left to evaluate")
    value = float(values.mean())
    if n_boot == 0 or np.isnan(value):
        return value, np.nan, np.nan, values.size, "none"
    if np.isinf(value):  # e.g. log_score(clip=none) with a forecast of probability 0 that happened
        return value, value, value, values.size, "none (infinite mean)"
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
    value = float(record.compute(inputs.take(idx)))
    if n_boot == 0:
        return value, np.nan, np.nan, idx.size, "none"
    rule = record.interval_method
    if rule == "half_sampling":
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
    low, high = interval_bounds(value, replicates, ci, rule)
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
            for name in sets:
                if arrays.get(name) is not None:
                    arrays[name] = [x[half_sample(len(x), rng)] for x in arrays[name]]
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


# --- paired comparison -----------------------------------------------------------------


def compare(table: Any, metric: str | Metric, *, baseline: str | None = None, kind: str | None = None,
            tests: Sequence[str] | None = None, ci: float = 0.95, n_boot: int = 1000, n_perm: int = 10000,
            seed: int = 0, horizon: int = 1, nan_policy: str = "raise", **kind_options: Any) -> pd.DataFrame:
    """Paired comparison of systems scored on the same units, with multiple-testing correction.

    Each pair of systems (or each system against ``baseline``) is compared on the mean
    difference of the per-unit contributions, ``mean(S_a - S_b)``, within each task.
    Units are matched by the kind's key (``id``, ``qid``) or, without one, by position.

    Tests: ``bootstrap`` (paired bootstrap), ``permutation`` (sign-flip randomisation),
    ``t`` (paired t), and ``diebold_mariano`` (for scoring rules: HAC variance with
    ``horizon - 1`` lags; rows must be in time order). Within each test, p-values are
    adjusted across all comparisons by Holm (``p_holm``) and Benjamini–Hochberg (``p_bh``).

    Returns a long DataFrame: ``[task,] system_a, system_b, metric, n, mean_diff, ci_low,
    ci_high, better, test, statistic, p_value, p_holm, p_bh``.

    Examples
    --------
    >>> import numpy as np, pandas as pd, scorebench
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 50)
    >>> t = pd.DataFrame({"system": ["good"] * 50 + ["coin"] * 50, "id": list(range(50)) * 2,
    ...                   "y": np.r_[y, y], "p": np.r_[np.where(y, 0.8, 0.2), np.full(50, 0.5)]})
    >>> out = scorebench.compare(t, "brier_score", baseline="coin", n_boot=200, n_perm=200)
    >>> out.loc[out.test == "permutation", ["system_a", "better", "p_value"]].to_string(index=False)
    'system_a better  p_value\\n    good   good 0.004975'
    """
    _check_options(ci, n_boot)
    record = resolve_metrics(metric)[0]
    if not record.per_row:
        raise InputError(f"metric {record.name!r} is set-level; paired comparison needs a per-row "
                         "metric (one contribution per row or query)")
    tests = list(tests) if tests is not None else [t for t in COMPARE_TESTS
                                                  if t != "diebold_mariano" or record.proper is not None]
    for t in tests:
        check_choice(t, "tests", COMPARE_TESTS)
    prep = _prepare(table, [record], kind, ["system"] + (["task"] if "task" in _columns(table) else []),
                    nan_policy, kind_options)
    contrib = _contributions(record, prep.inputs, nan_policy)
    rows = []
    tasks = prep.keys["task"].unique().tolist() if "task" in prep.by else [None]
    for task in tasks:
        matrix, systems = _paired_matrix(prep, contrib, task)
        if baseline is not None and baseline not in systems:
            raise InputError(f"baseline {baseline!r} is not among the systems {systems}")
        pairs = ([(s, baseline) for s in systems if s != baseline] if baseline is not None
                 else [(a, b) for i, a in enumerate(systems) for b in systems[i + 1:]])
        if not pairs:
            raise InputError("compare needs at least two systems")
        for a, b in pairs:
            d = matrix[:, systems.index(a)] - matrix[:, systems.index(b)]
            rows.extend(_pair_rows(record, task, a, b, d, tests, ci, n_boot, n_perm, seed, horizon))
    out = pd.DataFrame(rows)
    for test in tests:
        mask = out["test"] == test
        out.loc[mask, "p_holm"] = holm(out.loc[mask, "p_value"].to_numpy())
        out.loc[mask, "p_bh"] = benjamini_hochberg(out.loc[mask, "p_value"].to_numpy())
    if tasks == [None]:
        out = out.drop(columns="task")
    out.attrs.update({"scorebench_version": __version__, "seed": seed, "ci": ci, "n_boot": n_boot,
                      "n_perm": n_perm, "correction": "Holm and Benjamini-Hochberg within each test"})
    return out


def _columns(table: Any) -> list[str]:
    return list(table.columns) if hasattr(table, "columns") else list(_load(table).columns)


def _paired_matrix(prep: _Prepared, contrib: np.ndarray, task: Any) -> tuple[np.ndarray, list[str]]:
    frame = prep.inputs.frame
    mask = np.ones(len(frame), dtype=bool) if task is None else (frame["task"] == task).to_numpy()
    key = prep.inputs.key
    sub = pd.DataFrame({"system": frame["system"].to_numpy()[mask], "value": contrib[mask]})
    if key is not None:
        sub["unit"] = frame[key].to_numpy()[mask]
    else:
        sub["unit"] = sub.groupby("system", sort=False).cumcount()
    wide = sub.pivot(index="unit", columns="system", values="value")
    missing = wide.isna().any(axis=1) & ~np.isnan(contrib[mask]).any()
    if missing.any():
        units = wide.index[missing.to_numpy()][:5].tolist()
        raise InputError(f"systems are not scored on the same units: {key or 'row position'} {units} "
                         "missing for some systems; paired comparison needs every unit for every system")
    systems = [str(s) for s in wide.columns]
    wide.columns = systems
    return wide.to_numpy(), systems


def _pair_rows(record: Metric, task: Any, a: str, b: str, d: np.ndarray, tests: Sequence[str], ci: float,
               n_boot: int, n_perm: int, seed: int, horizon: int) -> list[dict[str, Any]]:
    rng = rng_for(seed, record.name, task, a, b)
    boot_test, replicates = paired_bootstrap(d, max(n_boot, 1), rng)
    low, high = percentile_interval(replicates, ci) if n_boot else (np.nan, np.nan)
    mean = float(d.mean())
    if record.higher_is_better is None or mean == 0:
        better = ""
    else:
        better = a if (mean > 0) == record.higher_is_better else b
    run = {
        "bootstrap": lambda: boot_test,
        "permutation": lambda: paired_permutation(d, n_perm, rng),
        "t": lambda: paired_t(d),
        "diebold_mariano": lambda: diebold_mariano(d, horizon=horizon),
    }
    base = {"task": task, "system_a": a, "system_b": b, "metric": record.name, "n": d.size,
            "mean_diff": mean, "ci_low": low, "ci_high": high, "better": better}
    return [{**base, "test": t, "statistic": r.statistic, "p_value": r.p_value, "detail": r.detail}
            for t in tests for r in [run[t]()]]
