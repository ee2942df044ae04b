"""Paired comparison of systems scored on the same units, with multiple-testing correction.

Each pair of systems (or each system against a baseline) is compared on the mean
difference of per-unit contributions, ``mean(S_a - S_b)``, within each task. The unit of
resampling follows the design of the evaluation:

* independent items (default): paired bootstrap, sign-flip permutation, paired t,
  Diebold–Mariano for time-ordered forecasts, McNemar for right/wrong outcomes;
* ``cluster=COL`` (items in groups, e.g. several questions per passage): the cluster is
  the unit — cluster bootstrap, cluster sign flips, cluster-robust (CR1) t with G - 1 df;
* ``repeats=COL`` (several samples per item): per-item means are compared; the bootstrap
  is two-level (items, then samples within items).

On independent units every pair of a task comes from one units × systems matrix
(:mod:`scorebench.evaluation.pairwise`: McNemar and t from its Gram matrix, the bootstrap and the sign
flips from one draw of unit weights and signs shared by all pairs, derived from the hash of
each unit's key), so all 79,800 pairs of 400 systems cost a few matrix products; a Dask table
goes to :func:`scorebench.evaluation.dask_compare.compare_dask`, which adds the same sums partition by
partition.

``better`` names a system only when the Holm-corrected p-value of that test is below
``alpha``; ``mde`` is the minimum detectable effect of the comparison at ``alpha`` and
``power`` (see :func:`scorebench.analysis.stats_tests.minimum_detectable_effect`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from scorebench._version import __version__
from scorebench.evaluation.engines import engine_for
from scorebench.core.errors import InputError
from scorebench.evaluation.plan import Units, cluster_labels, load_table, make_plan, prepare, resolve_metrics
from scorebench.evaluation.reduce import contributions
from scorebench.evaluation.pairwise import PAIRWISE_TESTS, pair_sums, pair_tests, permutation_rounds
from scorebench.core.registry import Metric
from scorebench.core.stats import (P_CORRECTIONS, PairedTest, check_resampling, check_sign_flips, diebold_mariano,
                    paired_permutation, paired_t, percentile_interval, rng_for)
from scorebench.analysis.stats_tests import (cluster_bootstrap_means, cluster_robust_se, cluster_sign_flip, cluster_t, mcnemar,
                          minimum_detectable_effect, two_level_bootstrap)
from scorebench.core.tables import hash_labels, label_text
from scorebench.core.validation import check_choice, check_level

__all__ = ["compare", "COMPARE_TESTS"]

COMPARE_TESTS = ("bootstrap", "permutation", "t", "diebold_mariano", "mcnemar")
_ITEM = "__item__"  # column holding the item of a row when repeats= is given


def compare(table: Any, metric: str | Metric, *, baseline: str | None = None, kind: str | None = None,
            tests: Sequence[str] | None = None, ci: float = 0.95, n_boot: int = 1000, n_perm: int = 10000,
            seed: int = 0, horizon: int = 1, nan_policy: str = "raise", alpha: float = 0.05,
            power: float = 0.8, cluster: str | None = None, repeats: str | None = None,
            **kind_options: Any) -> pd.DataFrame:
    """Paired comparison of systems scored on the same units, with multiple-testing correction.

    Parameters
    ----------
    table : DataFrame, path or dask DataFrame
        A result table of the metric's kind; units are matched by the kind's key (``id``,
        ``qid``) or, without one, by position. A Dask table (keyed by ``id``) is compared by
        partial sums on the workers, with the same numbers.
    metric : str or Metric
        A per-row metric (one contribution per row or query).
    baseline : str, optional
        Compare every system against this one (default: all pairs).
    tests : list of str, optional
        ``bootstrap`` (Poisson bootstrap: each unit's weight per round is a function of the
        seed and the hash of its key, shared by all pairs), ``permutation`` (sign flips drawn
        the same way; exact enumeration up to 16 units), ``t``, ``diebold_mariano`` (scoring rules; rows in time
        order; HAC variance with ``horizon - 1`` lags, ``horizon`` < n), ``mcnemar`` (0/1
        contributions such as ``accuracy``; exact binomial below 25 discordant pairs,
        continuity-corrected chi-square above). Default: all that apply.
    alpha : float
        Significance level for ``better`` (Holm-corrected p-value below ``alpha``) and ``mde``.
    power : float
        Power at which ``mde`` (minimum detectable effect) is computed.
    cluster : str, optional
        Column with the cluster (group) of each unit; tests and intervals then treat whole
        clusters as the sampling unit (cluster bootstrap, cluster sign flips, CR1 t with
        G - 1 df). McNemar and Diebold–Mariano do not apply.
    repeats : str, optional
        Column numbering several samples of the same ``id``; per-item means are compared and
        the bootstrap resamples items, then samples within items.

    Returns
    -------
    DataFrame
        ``[task,] system_a, system_b, metric, n, mean_diff, ci_low, ci_high, mde, better, test,
        statistic, p_value, detail, p_holm, p_bh`` (``n``: items, or clusters with ``cluster=``
        in ``n_clusters``). Within each test, p-values are adjusted across all comparisons by
        Holm (``p_holm``) and Benjamini–Hochberg (``p_bh``).

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
    engine = engine_for(table, "compare")
    if engine is not None:
        if cluster is not None or repeats is not None:
            raise InputError("cluster= and repeats= need the units of a cluster or item together; run compare on "
                             "a pandas table (e.g. ddf.compute())")
        return engine(table, metric, baseline=baseline, kind=kind, tests=tests, ci=ci, n_boot=n_boot, n_perm=n_perm,
                      seed=seed, nan_policy=nan_policy, alpha=alpha, power=power, **kind_options)
    check_resampling(ci=ci, n_boot=n_boot, seed=seed)
    check_level(alpha, "alpha")
    check_level(power, "power")
    record = resolve_metrics(metric)[0]
    if not record.per_row:
        raise InputError(f"metric {record.name!r} is set-level; paired comparison needs a per-row "
                         "metric (one contribution per row or query)")
    prep, contrib = _prepare_units(table, record, kind, nan_policy, cluster, repeats, kind_options)
    binary = bool(np.isin(contrib[~np.isnan(contrib)], (0.0, 1.0)).all())
    tests = choose_tests(record, tests, binary, cluster, repeats)
    frames = []
    tasks = prep.keys["task"].unique().tolist() if "task" in prep.by else [None]
    for task in tasks:
        if cluster is None and repeats is None:
            um = unit_matrix(prep.inputs.frame, contrib, prep.inputs.key, task)
            frames.append(_all_pairs(record, task, um, baseline, tests, ci, n_boot, n_perm, seed, horizon, alpha,
                                     power))
            continue
        design = _design(prep, contrib, task, cluster, repeats)
        rows = []
        for a, b in _pairs(design.systems, baseline):
            rng = rng_for(seed, record.canonical_name, task, a, b)
            rows.extend(_pair_rows(record, task, a, b, design, tests, ci, n_boot, n_perm, rng, horizon,
                                   alpha, power))
        frames.append(pd.DataFrame(rows))
    design = "clusters of " + cluster if cluster else "repeats " + repeats if repeats else "independent units"
    return finish_pairs(frames, tests, tasks == [None], seed=seed, ci=ci, n_boot=n_boot, n_perm=n_perm, alpha=alpha,
                        power=power, design=design)


def finish_pairs(frames: list[pd.DataFrame], tests: list[str], single_task: bool, *, seed: int, ci: float,
                 n_boot: int, n_perm: int, alpha: float, power: float, design: str) -> pd.DataFrame:
    """compare's output from the per-task frames: corrected p-values, ``better`` and attrs (every engine)."""
    out = corrected(pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0], tests, alpha)
    if single_task:
        out = out.drop(columns="task")
    out.attrs.update({"scorebench_version": __version__, "seed": seed, "ci": ci, "n_boot": n_boot,
                      "n_perm": n_perm, "alpha": alpha, "power": power,
                      "correction": "Holm and Benjamini-Hochberg within each test",
                      "better": f"the better system when the Holm-corrected p-value is below {alpha:g}, else empty",
                      "design": design})
    return out


def _prepare_units(table: Any, record: Metric, kind: str | None, nan_policy: str, cluster: str | None,
                   repeats: str | None, kind_options: dict[str, Any]) -> tuple[Units, np.ndarray]:
    """The table's units grouped by system (and task), and the metric's contribution per unit."""
    if cluster is not None and repeats is not None:
        raise InputError("cluster= and repeats= cannot be combined; pass one of them")
    frame = load_table(table)
    design_cols = [c for c in (cluster, repeats) if c is not None]
    missing = [c for c in design_cols if c not in frame.columns]
    if missing:
        raise InputError(f"column(s) {missing} not found (cluster/repeats); the table has {list(frame.columns)}")
    if design_cols:
        frame = _with_design_columns(frame, cluster, repeats)
    by = ["system"] + (["task"] if "task" in frame.columns else [])
    prep = prepare(frame, make_plan([record], kind=kind, by=by, nan_policy=nan_policy, n_boot=0,
                                    kind_options=kind_options))
    if design_cols and prep.inputs.key != "id":
        raise InputError(f"cluster=/repeats= need a table keyed by 'id' (kind {prep.kind!r} has key "
                         f"{prep.inputs.key!r})")
    return prep, contributions(record, prep.inputs, nan_policy)


def _pairs(systems: list[str], baseline: str | None) -> list[tuple[str, str]]:
    """Every system against the baseline, or all pairs."""
    if baseline is not None and baseline not in systems:
        raise InputError(f"baseline {baseline!r} is not among the systems {systems}")
    pairs = ([(s, baseline) for s in systems if s != baseline] if baseline is not None
             else [(a, b) for i, a in enumerate(systems) for b in systems[i + 1:]])
    if not pairs:
        raise InputError("compare needs at least two systems")
    return pairs


def corrected(out: pd.DataFrame, tests: list[str], alpha: float) -> pd.DataFrame:
    """Each registered correction's p-values (``p_holm``, ``p_bh``: ``P_CORRECTIONS``) within each
    test; ``better`` only where Holm-significant."""
    for test in tests:
        mask = out["test"] == test
        for name, adjust in P_CORRECTIONS.items():
            out.loc[mask, f"p_{name}"] = adjust(out.loc[mask, "p_value"].to_numpy())
    significant = out["p_holm"] < alpha
    out["better"] = np.where(significant, out["better"], "")
    return out


def _with_design_columns(frame: pd.DataFrame, cluster: str | None, repeats: str | None) -> pd.DataFrame:
    """Cluster labels as text (so the kind keeps them as labels); repeats folded into the id."""
    frame = frame.copy() if cluster is None else cluster_labels(frame, cluster)
    if repeats is not None:
        if "id" not in frame.columns:
            raise InputError("repeats= needs an 'id' column naming the item each sample belongs to")
        frame[_ITEM] = frame["id"].astype(str)
        frame["id"] = frame[_ITEM] + "\x1f" + frame[repeats].astype(str)
    return frame


def choose_tests(record: Metric, tests: Sequence[str] | None, binary: bool, cluster: str | None,
                  repeats: str | None) -> list[str]:
    plain = cluster is None and repeats is None
    if tests is None:
        return [t for t in COMPARE_TESTS
                if (t != "diebold_mariano" or (record.proper is not None and plain))
                and (t != "mcnemar" or (binary and plain))]
    tests = list(tests)
    for t in tests:
        check_choice(t, "tests", COMPARE_TESTS)
    if "mcnemar" in tests and not binary:
        raise InputError(f"test 'mcnemar' needs right/wrong (0/1) contributions; metric {record.name!r} gives "
                         "other values (use accuracy on a 'correct' table, or argmax_accuracy)")
    for t in ("mcnemar", "diebold_mariano"):
        if t in tests and not plain:
            raise InputError(f"test {t!r} assumes one independent row per unit; with cluster=/repeats= use "
                             "bootstrap, permutation or t")
    return tests


class UnitMatrix(NamedTuple):
    """One task's per-unit values: units (sorted by key) × systems (sorted), and the unit labels."""

    matrix: np.ndarray
    systems: list[str]
    units: np.ndarray


def unit_matrix(frame: pd.DataFrame, contrib: np.ndarray, key: str | None, task: Any,
                systems: Sequence[str] | None = None) -> UnitMatrix:
    """The units × systems matrix of one task, by factorising keys and systems (no pivot).

    ``frame`` holds the kind's units (``system``, ``task``, the ``key``), ``contrib`` the
    metric's contribution of each; ``systems`` fixes the columns (default: the task's
    systems, sorted). Raises when a unit lacks a system or appears twice for one.

    Memory: at 40 M rows no per-row object array is made; a categorical ``system`` is read by
    its codes, the keys are factorised unsorted and their codes remapped through the rank of
    the (few) unique keys, and the cell index reuses the key codes' buffer, so the rows cost
    one int64 and one bool per row next to the ``n × k`` float64 matrix.
    """
    mask = None if task is None else task_mask(frame["task"], task)
    scode, slabels = sorted_codes(frame["system"], mask, systems)
    values = contrib if mask is None else contrib[mask]
    if key is not None:
        cell, ulabels = sorted_codes(frame[key], mask)
    else:
        cell = pd.Series(scode).groupby(scode, sort=False).cumcount().to_numpy()
        ulabels = np.arange(int(cell.max()) + 1 if cell.size else 0)
    n, k = len(ulabels), len(slabels)
    cell = np.require(cell, np.int64, ["W"])
    cell *= k  # the key's codes become the flat cell index in place
    cell += scode
    del scode
    filled = np.zeros(n * k, dtype=bool)
    filled[cell] = True
    n_filled = int(np.count_nonzero(filled))
    if n_filled < cell.size:  # the kinds reject duplicate keys; this guards kinds without a key check
        counts = np.bincount(cell, minlength=n * k)
        bad = np.unique(cell[counts[cell] > 1] // k)[:5]
        raise InputError(f"units {np.asarray(ulabels)[bad].tolist()} appear more than once for a system; "
                         "paired comparison needs one row per unit and system")
    matrix = np.full(n * k, np.nan)
    matrix[cell] = values
    del cell
    matrix = matrix.reshape(n, k)
    if n_filled < n * k and not np.isnan(values).any():
        rows = np.flatnonzero(~filled.reshape(n, k).all(axis=1))[:5]
        raise InputError(f"systems are not scored on the same units: {key or 'row position'} "
                         f"{np.asarray(ulabels)[rows].tolist()} missing for some systems; paired comparison needs "
                         "every unit for every system")
    return UnitMatrix(matrix, [str(x) for x in slabels], np.asarray(ulabels))


def task_mask(column: pd.Series, task: Any) -> np.ndarray:
    """Rows of one task, by the category codes when the column is categorical (no per-row labels)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        at = column.cat.categories.get_indexer([task])[0]
        return column.cat.codes.to_numpy() == at if at >= 0 else np.zeros(len(column), dtype=bool)
    return (column == task).to_numpy()


def sorted_codes(column: pd.Series, mask: np.ndarray | None,
                 labels: Sequence[str] | None = None) -> tuple[np.ndarray, Any]:
    """Each row's code in the sorted unique values of ``column`` (``labels`` fixes them), as int64.

    The same codes and labels as ``pd.factorize(column.to_numpy(), sort=True)`` without the
    per-row object array: a categorical column is read by its codes, remapped to the sorted
    categories present; any other column is factorised unsorted (hash table only) and its codes
    remapped through the rank of its uniques. Missing values are refused (one line).
    """
    if labels is not None:
        codes = pd.Categorical(pd.Series(column.to_numpy() if mask is None else column.to_numpy()[mask]).astype(str),
                               categories=list(labels)).codes.astype(np.int64)
        uniques: Any = list(labels)
    elif isinstance(column.dtype, pd.CategoricalDtype):
        raw = column.cat.codes.to_numpy()
        raw = raw if mask is None else raw[mask]
        present = np.flatnonzero(np.bincount(raw[raw >= 0].astype(np.intp), minlength=len(column.cat.categories)))
        rank, uniques = pd.factorize(np.asarray(column.cat.categories[present]), sort=True)
        remap = np.full(len(column.cat.categories) + 1, -1, dtype=np.int64)
        remap[present] = rank
        codes = remap[raw]  # code -1 (missing) reads the last slot, -1
    else:
        values = column.array if isinstance(column.dtype, pd.api.extensions.ExtensionDtype) else column.to_numpy()
        codes, unsorted = pd.factorize(values if mask is None else values[mask])
        codes = codes.astype(np.int64, copy=False)
        rank, uniques = pd.factorize(unsorted, sort=True)
        remap = np.append(rank.astype(np.int64), -1)
        np.take(remap, codes, out=codes)  # the rank of each row's unique, in place; -1 (missing) stays -1
    _refuse_missing(column, codes)
    return codes, uniques


def _refuse_missing(column: pd.Series, codes: np.ndarray) -> None:
    if codes.size and codes.min() < 0:
        raise InputError(f"column {column.name!r}: missing or unknown values in {int((codes < 0).sum())} row(s); "
                         "paired comparison needs every unit labelled")


def unit_hashes(units: Any) -> np.ndarray:
    """64-bit hashes of unit labels (by their text, so ``7``, ``7.0`` and ``"7"`` agree): the
    bootstrap weights and sign flips of a unit derive from its hash, whichever engine holds it."""
    return hash_labels(label_text(pd.Series(np.asarray(units))).astype(str))


def _all_pairs(record: Metric, task: Any, um: UnitMatrix, baseline: str | None, tests: list[str], ci: float,
               n_boot: int, n_perm: int, seed: int, horizon: int, alpha: float, power: float) -> pd.DataFrame:
    """Every pair of one task on independent units, from the matrix engine (:mod:`scorebench.evaluation.pairwise`)."""
    pairs, ia, ib = pair_positions(um.systems, baseline)
    check_finite(um.matrix)
    n = um.matrix.shape[0]
    if n < 2:
        raise InputError(f"a paired test needs at least 2 paired rows, got {n}")
    draws = max(n_boot, 1) if "bootstrap" in tests else n_boot
    if "permutation" in tests and n > 16:
        check_sign_flips(n_perm, n, "paired rows")  # 0 draws cannot stand in for an enumeration
    flips = permutation_rounds(n, n_perm) if "permutation" in tests and n > 16 else 0
    sums = pair_sums(um.matrix, unit_hashes(um.units), seed=seed, n_boot=draws, n_perm=flips)
    res = pair_tests(sums, ia, ib, [t for t in tests if t in PAIRWISE_TESTS], ci=ci, alpha=alpha, power=power,
                     matrix=um.matrix, n_boot=n_boot)
    if "diebold_mariano" in tests:
        dm = [diebold_mariano(um.matrix[:, i] - um.matrix[:, j], horizon=horizon) for i, j in zip(ia, ib)]
        res["diebold_mariano"] = (np.array([r.statistic for r in dm]), np.array([r.p_value for r in dm]),
                                  np.array([r.detail for r in dm], dtype=object))
    return pair_frame(record, task, pairs, res, tests)


def check_finite(matrix: np.ndarray) -> None:
    """Paired tests need finite contributions for every unit and system."""
    if not np.isfinite(matrix).all():
        raise InputError("paired differences contain NaN or infinite values")


def pair_positions(systems: list[str], baseline: str | None) -> tuple[list[tuple[str, str]], np.ndarray, np.ndarray]:
    """The pairs (all, or each against ``baseline``) and their systems' column positions."""
    pairs = _pairs(systems, baseline)
    position = {s: i for i, s in enumerate(systems)}
    return (pairs, np.array([position[a] for a, _ in pairs], dtype=np.intp),
            np.array([position[b] for _, b in pairs], dtype=np.intp))


def pair_frame(record: Metric, task: Any, pairs: list[tuple[str, str]], res: dict[str, Any],
               tests: list[str]) -> pd.DataFrame:
    """compare's rows (pair-major, tests in order) from the engine's per-pair arrays."""
    n_pairs, n_tests = len(pairs), len(tests)
    mean = res["mean_diff"]
    a = np.array([p[0] for p in pairs], dtype=object)
    b = np.array([p[1] for p in pairs], dtype=object)
    if record.higher_is_better is None:
        better = np.full(n_pairs, "", dtype=object)
    else:
        better = np.where(mean == 0, "", np.where((mean > 0) == record.higher_is_better, a, b)).astype(object)

    def rep(values: Any) -> np.ndarray:
        return np.repeat(np.asarray(values), n_tests)

    def per_test(part: int) -> np.ndarray:
        return np.stack([np.asarray(res[t][part]) for t in tests], axis=1).ravel()

    return pd.DataFrame({"task": [task] * (n_pairs * n_tests), "system_a": rep(a), "system_b": rep(b),
                         "metric": record.name, "n": np.full(n_pairs * n_tests, res["n"], dtype=np.int64),
                         "mean_diff": rep(mean), "ci_low": rep(res["ci_low"]), "ci_high": rep(res["ci_high"]),
                         "mde": rep(res["mde"]), "better": rep(better), "test": np.tile(np.array(tests, dtype=object),
                                                                                         n_pairs),
                         "statistic": per_test(0).astype(np.float64), "p_value": per_test(1).astype(np.float64),
                         "detail": per_test(2)})


class _Design:
    """Per-unit values of each system for one task, with the clusters or items of the units."""

    def __init__(self, matrix: np.ndarray, systems: list[str], clusters: np.ndarray | None = None,
                 samples: dict[str, tuple[np.ndarray, np.ndarray]] | None = None) -> None:
        self.matrix = matrix  # units x systems (item means with repeats)
        self.systems = systems
        self.clusters = clusters
        self.samples = samples  # system -> (values, item code) with repeats

    def column(self, system: str) -> np.ndarray:
        return self.matrix[:, self.systems.index(system)]


def _design(prep: Units, contrib: np.ndarray, task: Any, cluster: str | None, repeats: str | None) -> _Design:
    frame = prep.inputs.frame
    mask = np.ones(len(frame), dtype=bool) if task is None else (frame["task"] == task).to_numpy()
    key = prep.inputs.key
    sub = pd.DataFrame({"system": frame["system"].to_numpy()[mask], "value": contrib[mask]})
    if key is not None:
        sub["unit"] = frame[_ITEM if repeats else key].to_numpy()[mask]
    else:
        sub["unit"] = sub.groupby("system", sort=False).cumcount()
    if repeats is not None:
        if np.isnan(sub["value"]).any():
            raise InputError("repeats=: undefined contributions; drop them first (nan_policy='omit')")
        wide = sub.groupby(["unit", "system"], sort=True)["value"].mean().unstack("system")
    else:
        wide = sub.pivot(index="unit", columns="system", values="value")
    missing = wide.isna().any(axis=1) & ~np.isnan(contrib[mask]).any()
    if missing.any():
        units = wide.index[missing.to_numpy()][:5].tolist()
        raise InputError(f"systems are not scored on the same units: {key or 'row position'} {units} "
                         "missing for some systems; paired comparison needs every unit for every system")
    systems = [str(s) for s in wide.columns]
    wide.columns = systems
    clusters: np.ndarray | None = None
    samples: dict[str, tuple[np.ndarray, np.ndarray]] | None = None
    if cluster is not None:
        labels = pd.DataFrame({"unit": sub["unit"], "cluster": frame[cluster].to_numpy()[mask]})
        per_unit = labels.groupby("unit", sort=True)["cluster"].nunique(dropna=False)
        if (per_unit > 1).any():
            bad = per_unit.index[(per_unit > 1).to_numpy()][:5].tolist()
            raise InputError(f"column {cluster!r}: unit(s) {bad} carry different clusters in different systems; "
                             "expected one cluster per unit")
        first = labels.drop_duplicates("unit").set_index("unit")["cluster"].reindex(wide.index)
        if first.isna().any():
            raise InputError(f"column {cluster!r}: missing cluster labels; every unit needs a cluster")
        clusters = first.to_numpy()
    if repeats is not None:
        items = {u: i for i, u in enumerate(wide.index)}
        codes = sub["unit"].map(items).to_numpy()
        samples = {}
        for s in systems:
            own = (sub["system"].astype(str) == s).to_numpy()
            samples[s] = (sub["value"].to_numpy()[own], codes[own])
    return _Design(wide.to_numpy(), systems, clusters, samples)


def _pair_rows(record: Metric, task: Any, a: str, b: str, design: _Design, tests: Sequence[str], ci: float,
               n_boot: int, n_perm: int, rng: np.random.Generator, horizon: int, alpha: float,
               power: float) -> list[dict[str, Any]]:
    d = design.column(a) - design.column(b)
    mean = float(d.mean())
    clusters = design.clusters
    if clusters is not None:
        se, n_clusters = cluster_robust_se(d, clusters)
        replicates = cluster_bootstrap_means(d, clusters, max(n_boot, 1), rng)
        observed = float(d.mean())
        extreme = np.count_nonzero(np.abs(replicates - observed) >= abs(observed))
        boot = PairedTest("bootstrap", observed, float((1 + extreme) / (replicates.size + 1)), "cluster bootstrap")
        mde = minimum_detectable_effect(se, alpha=alpha, power=power, df=n_clusters - 1)
    else:  # repeats: the plain design goes through the matrix engine (_all_pairs)
        if design.samples is None:
            raise ValueError("a pair design has either clusters or repeated samples")  # internal invariant
        arms = [design.samples[a], design.samples[b]]
        replicates = two_level_bootstrap(arms, d.size, max(n_boot, 1), rng, signs=(1.0, -1.0))
        extreme = np.count_nonzero(np.abs(replicates - mean) >= abs(mean))
        boot = PairedTest("bootstrap", mean, float((1 + extreme) / (replicates.size + 1)),
                          "two-level bootstrap (items, then samples within items)")
        mde = minimum_detectable_effect(float(d.std(ddof=1) / np.sqrt(d.size)), alpha=alpha, power=power,
                                        df=d.size - 1)
    low, high = percentile_interval(replicates, ci) if n_boot else (np.nan, np.nan)
    if record.higher_is_better is None or mean == 0:
        better = ""
    else:
        better = a if (mean > 0) == record.higher_is_better else b
    run = {
        "bootstrap": lambda: boot,
        "permutation": lambda: (_cluster_permutation(d, clusters, n_perm, rng) if clusters is not None
                                else paired_permutation(d, n_perm, rng)),
        "t": lambda: _cluster_t_test(d, clusters) if clusters is not None else paired_t(d),
        "diebold_mariano": lambda: diebold_mariano(d, horizon=horizon),
        "mcnemar": lambda: _mcnemar_test(design.column(a), design.column(b)),
    }
    base = {"task": task, "system_a": a, "system_b": b, "metric": record.name, "n": d.size,
            **({"n_clusters": int(len(set(clusters.tolist())))} if clusters is not None else {}),
            "mean_diff": mean, "ci_low": low, "ci_high": high, "mde": mde, "better": better}
    return [{**base, "test": t, "statistic": r.statistic, "p_value": r.p_value, "detail": r.detail}
            for t in tests for r in [run[t]()]]


def _mcnemar_test(a: np.ndarray, b: np.ndarray) -> PairedTest:
    r = mcnemar(a, b)
    return PairedTest("mcnemar", r.statistic, r.p_value, f"{r.method}; discordant {r.b} vs {r.c}")


def _cluster_t_test(d: np.ndarray, clusters: np.ndarray) -> PairedTest:
    t, p, se, g = cluster_t(d, clusters)
    return PairedTest("t", t, p, f"cluster-robust CR1 SE {se:.4g}, df={g - 1}")


def _cluster_permutation(d: np.ndarray, clusters: np.ndarray, n_perm: int, rng: np.random.Generator) -> PairedTest:
    p, detail = cluster_sign_flip(d, clusters, n_perm, rng)
    return PairedTest("permutation", float(d.mean()), p, detail)
