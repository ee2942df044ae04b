r"""The comparison report's numbers: from two or more runs to scores, paired tests, flips and a plan.

:func:`comparison_report` reads runs (tables, CSV files, or harness result files through
:func:`scorebench.io.tables.read_results`), pools them into one table and computes

* per system: the score with the metric's own interval (Wilson for accuracy, percentile
  bootstrap for means; cluster bootstrap with ``cluster=``) and its tie band;
* per pair: the paired mean difference with a paired-bootstrap interval, one test chosen
  by the data (``test="auto"``: McNemar for right/wrong outcomes, exact binomial below 25
  discordant items and continuity-corrected chi-square above; the cluster-robust CR1 t when
  items are grouped, with the design effect; the sign-flip permutation test otherwise), and
  its Holm or Benjamini–Hochberg adjusted p-value over all pairs;
* per task: the same two tables within each task (adjusted over tasks and pairs);
* the items that flipped between each pair (right/wrong metrics): ``regression`` where the
  reference system was right and the other wrong, ``fix`` the other way round, with ids;
* the plan: the minimum detectable effect at the observed size, the power against each
  planned difference and the items (and clusters) needed for ``power``, from the observed
  discordance and intra-cluster correlation (:mod:`scorebench.analysis.planner`; Miller 2024).

Tie bands: systems are walked in score order; a system joins the current band when its
adjusted p-value against the band's leader is at least ``alpha`` (not significantly
different), otherwise it opens the next band.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from scorebench._version import __version__
from scorebench.analysis.gates import GATES, gate as run_gate
from scorebench.analysis.planner import design_effect, icc as estimate_icc, items_needed, paired_power
from scorebench.analysis.stats_tests import cluster_robust_se
from scorebench.core.errors import InputError
from scorebench.core.stats import P_CORRECTIONS
from scorebench.core.validation import check_choice, check_level
from scorebench.evaluation.comparison import compare
from scorebench.evaluation.evaluate import evaluate, resolve_metrics
from scorebench.evaluation.paired_units import paired_units, usable_rows

__all__ = ["ComparisonReport", "comparison_report", "read_runs", "REPORT_TESTS", "CORRECTIONS"]

REPORT_TESTS = ("auto", "mcnemar", "bootstrap", "permutation", "t")
#: Each registered p-value correction (``scorebench.core.stats.P_CORRECTIONS``) -> its column in ``compare``.
CORRECTIONS = {name: f"p_{name}" for name in P_CORRECTIONS}
_SEP = " | "  # joins task and id into the pooled table's unit key
_NOT_SCORES = {"system", "task", "id", "doc_id", "row", "qid"}


@dataclass(frozen=True)
class ComparisonReport:
    """Every table of a comparison report (see :func:`comparison_report`)."""

    metric: str
    higher_is_better: bool | None
    binary: bool
    scores: pd.DataFrame
    pairs: pd.DataFrame
    task_scores: pd.DataFrame | None
    task_pairs: pd.DataFrame | None
    flips: pd.DataFrame
    planner: pd.DataFrame
    gates: pd.DataFrame | None
    settings: dict[str, Any] = field(default_factory=dict)
    sources: tuple[tuple[str, str], ...] = ()

    def tables(self) -> dict[str, pd.DataFrame]:
        """The report's tables by name (those present)."""
        out = {"scores": self.scores, "pairs": self.pairs, "task_scores": self.task_scores,
               "task_pairs": self.task_pairs, "flips": self.flips, "planner": self.planner, "gates": self.gates}
        return {k: v for k, v in out.items() if v is not None}


def _read_one(run: Any, from_format: str | None, options: dict[str, Any]) -> pd.DataFrame:
    from scorebench.io.readers import detect_results_format
    from scorebench.io.tables import read_results, read_table

    if isinstance(run, pd.DataFrame):
        return run
    if not isinstance(run, (str, os.PathLike)):
        raise InputError(f"a run must be a DataFrame or a path, got {type(run).__name__}")
    path = Path(run)
    if not path.exists():
        raise FileNotFoundError(2, "no such file or folder", str(path))
    fmt = from_format
    if fmt is None and (path.is_dir() or detect_results_format(path) is not None):
        fmt = "auto"
    if fmt is None:
        return read_table(path)
    return read_results(path, format=fmt, **options)


def read_runs(runs: Any, from_format: str | None = None, **options: Any) -> tuple[pd.DataFrame, list[tuple[str, str]]]:
    """Read and stack one or more runs; the second item describes each source.

    A run is a DataFrame, a table file (CSV, Parquet, JSON Lines), or a harness's result file
    or folder (``from_format``, or detected). Two runs may not hold the same system on the
    same unit twice.
    """
    items = [runs] if isinstance(runs, (pd.DataFrame, str, os.PathLike)) else list(runs)
    if not items:
        raise InputError("no runs given; pass at least one table or result file")
    frames, sources = [], []
    for i, run in enumerate(items):
        table = _read_one(run, from_format, options)
        if "system" not in table.columns:
            raise InputError(f"run {i + 1}: no 'system' column; expected a result table with systems")
        frames.append(table)
        label = str(run) if not isinstance(run, pd.DataFrame) else f"table {i + 1}"
        attrs = table.attrs
        what = f"{attrs.get('source_format', 'table')}, {len(table)} rows"
        if attrs.get("sha256"):
            what += f", sha256 {attrs['sha256']}"
        sources.append((label, what))
    table = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0].copy()
    if "task" in table.columns:
        missing = table["task"].isna()
        if missing.all():
            table = table.drop(columns="task")
        elif missing.any():
            rows = np.flatnonzero(missing.to_numpy())[:5].tolist()
            raise InputError(f"column 'task': missing in rows {rows}; every row needs its task (or none has one)")
    key = [c for c in ("system", "task", "id") if c in table.columns]
    if "id" in key:
        dup = table.duplicated(key, keep=False)
        if dup.any():
            first = table.loc[dup, key].iloc[0].tolist()
            raise InputError(f"the runs hold the same system and unit twice ({', '.join(key)} = {first}); "
                             "rename a system or drop the repeated run")
    return table, sources


def _default_metric(table: pd.DataFrame) -> str:
    if "correct" in table.columns:
        return "accuracy"
    numeric = [c for c in table.columns if c not in _NOT_SCORES and pd.api.types.is_numeric_dtype(table[c])]
    if len(numeric) == 1:
        return f"sample_mean@{numeric[0]}"
    raise InputError("name the metric (metric=, --metric): the table has no 'correct' column and "
                     f"{len(numeric)} score columns {numeric[:8]} (use sample_mean@COLUMN)")


def _pooled(table: pd.DataFrame, cluster: str | None) -> tuple[pd.DataFrame, dict[str, tuple[Any, str]]]:
    """All tasks as one table: the unit key becomes ``task | id``; the map gives (task, id) back."""
    if "task" not in table.columns:
        ids = table["id"].astype(str) if "id" in table.columns else None
        return table, ({} if ids is None else {u: (None, u) for u in ids.unique()})
    if "id" not in table.columns:
        raise InputError("a table with tasks needs an 'id' column to pair items across systems")
    out = table.copy()
    task, ident = out["task"].astype(str), out["id"].astype(str)
    out["id"] = task + _SEP + ident
    if cluster is not None and cluster in out.columns:
        out[cluster] = task + _SEP + out[cluster].astype(str)
    mapping = dict(zip(out["id"], zip(out["task"], ident)))
    return out.drop(columns="task"), mapping


def _primary_test(test: str, binary: bool, cluster: str | None) -> str:
    if test != "auto":
        if test == "mcnemar" and cluster is not None:
            raise InputError("test 'mcnemar' assumes independent items; with cluster= use t, bootstrap or permutation")
        return test
    if cluster is not None:
        return "t"
    return "mcnemar" if binary else "permutation"


def _pairs_table(table: pd.DataFrame, record: Any, test: str, baseline: str | None, correction: str,
                 settings: dict[str, Any], cluster: str | None) -> pd.DataFrame:
    out = compare(table, record, baseline=baseline, tests=[test], ci=settings["ci"], n_boot=settings["n_boot"],
                  n_perm=settings["n_perm"], seed=settings["seed"], alpha=settings["alpha"],
                  power=settings["power"], cluster=cluster, kind=settings["kind"], **settings["kind_options"])
    out = out.rename(columns={CORRECTIONS[correction]: "p_adj"})
    out = out.drop(columns=[c for c in ("p_holm", "p_bh", "better") if c in out.columns])
    alpha = settings["alpha"]
    hib = record.higher_is_better
    better = []
    for a, b, diff, p in zip(out["system_a"], out["system_b"], out["mean_diff"], out["p_adj"]):
        if hib is None or diff == 0 or not p < alpha:
            better.append("")
        else:
            better.append(a if (diff > 0) == hib else b)
    out["significant"] = out["p_adj"] < alpha
    out["better"] = better
    return out


def _bands(scores: pd.DataFrame, pairs: pd.DataFrame, alpha: float, hib: bool | None) -> pd.DataFrame:
    """Rank and tie band of each system (see the module docstring); scores sorted best first."""
    p = {}
    for a, b, padj in zip(pairs["system_a"], pairs["system_b"], pairs["p_adj"]):
        p[(a, b)] = p[(b, a)] = padj
    order = scores.sort_values("value", ascending=not (hib is None or hib), kind="stable").reset_index(drop=True)
    band, leader, bands = 0, None, []
    for system in order["system"]:
        if leader is None or p.get((leader, system), 1.0) < alpha:
            band += 1
            leader = system
        bands.append(band)
    order["rank"] = np.arange(1, len(order) + 1)
    order["band"] = bands
    return order


def _flips(groups: list, pairs: pd.DataFrame, mapping: dict[str, tuple[Any, str]]) -> pd.DataFrame:
    rows = []
    units = groups[0]
    ids = np.asarray(units.units, dtype=object)
    for a, b in pairs[["system_a", "system_b"]].drop_duplicates().itertuples(index=False):
        x, ref = units.column(a), units.column(b)
        for change, mask in (("regression", (ref == 1) & (x == 0)), ("fix", (ref == 0) & (x == 1))):
            for u in ids[mask]:
                task, ident = mapping.get(u, (None, u))
                rows.append({"system": a, "reference": b, "task": task, "id": ident, "change": change})
    out = pd.DataFrame(rows, columns=["system", "reference", "task", "id", "change"])
    if out["task"].isna().all():
        out = out.drop(columns="task")
    return out


def _planner(groups: list, pairs: pd.DataFrame, binary: bool, deltas: Sequence[float] | None,
             settings: dict[str, Any]) -> pd.DataFrame:
    units = groups[0]
    alpha, power = settings["alpha"], settings["power"]
    rows = []
    for a, b, mde in pairs[["system_a", "system_b", "mde"]].drop_duplicates(["system_a", "system_b"]).itertuples(
            index=False):
        d = units.column(a) - units.column(b)
        n = d.size
        sd = float(d.std(ddof=1))
        q = float(np.mean(d != 0)) if binary else math.nan
        rho, m, deff_observed, g = 0.0, 1.0, 1.0, n
        if units.clusters is not None:
            rho = estimate_icc(d, units.clusters)
            g = len(pd.unique(units.clusters))
            m = n / g
            se_c, _ = cluster_robust_se(d, units.clusters)
            naive = sd / math.sqrt(n)
            deff_observed = (se_c / naive) ** 2 if naive > 0 else math.nan
        deff = design_effect(rho, m)
        planned = list(deltas) if deltas is not None else (
            [0.01, 0.02, 0.05] if binary else [round(f * sd, 6) for f in (0.1, 0.2, 0.5)] if sd > 0 else [])
        for delta in planned:
            need = power_now = math.nan
            try:
                if binary and q > 0:
                    need = items_needed(delta, discordance=q, alpha=alpha, power=power, icc=rho, cluster_size=m)
                    power_now = paired_power(delta, n, discordance=q, alpha=alpha, icc=rho, cluster_size=m)
                elif sd > 0:
                    need = items_needed(delta, sd_diff=sd, alpha=alpha, power=power, icc=rho, cluster_size=m)
                    power_now = paired_power(delta, n, sd_diff=sd, alpha=alpha, icc=rho, cluster_size=m)
            except InputError:
                pass  # a difference larger than the discordance allows: no plan
            rows.append({"system_a": a, "system_b": b, "n": n, "n_clusters": g, "discordance": q, "sd_diff": sd,
                         "icc": rho, "design_effect": deff, "design_effect_observed": deff_observed, "mde": mde,
                         "delta": float(delta), "power_at_n": power_now, "items_needed": need,
                         "clusters_needed": (math.ceil(need / m) if np.isfinite(need) else math.nan)})
    return pd.DataFrame(rows)


def comparison_report(runs: Any, metric: str | None = None, *, from_format: str | None = None,
                      baseline: str | None = None, test: str = "auto", correction: str = "holm",
                      cluster: str | None = None, alpha: float = 0.05, ci: float = 0.95, power: float = 0.8,
                      deltas: Sequence[float] | None = None, n_boot: int = 1000, n_perm: int = 10000, seed: int = 0,
                      gate: str | None = None, margin: float = 0.0, higher_is_better: bool | None = None,
                      kind: str | None = None,
                      reader_options: dict[str, Any] | None = None, **kind_options: Any) -> ComparisonReport:
    """Compare two or more runs: scores, paired tests, per-task breakdown, flipped items and a plan.

    Parameters
    ----------
    runs : DataFrame, path, or a list of them
        Result tables (``system``, ``id`` and the metric's columns, optionally ``task``) or
        harness result files/folders (lm-eval, HELM, ...; see :func:`scorebench.io.tables.read_results`).
    metric : str, optional
        A per-row metric; default ``accuracy`` for a table with a ``correct`` column, or
        ``sample_mean@COL`` when the table has exactly one score column.
    from_format : str, optional
        Reader of the result files (default: detected).
    baseline : str, optional
        Compare every system against this one (default: all pairs).
    test : {"auto", "mcnemar", "bootstrap", "permutation", "t"}
        The test of each pair (``auto``: see :mod:`scorebench.report.build`).
    correction : {"holm", "bh"}
        Holm (family-wise error) or Benjamini–Hochberg (false discovery rate) adjustment.
    cluster : str, optional
        Column of item clusters: cluster bootstrap intervals, CR1 t, design effect.
    alpha, ci, power : float
        Significance level, interval level, planned power.
    deltas : list of float, optional
        Differences to plan for (default 0.01, 0.02, 0.05 for right/wrong metrics; 0.1, 0.2,
        0.5 standard deviations of the differences otherwise).
    gate, margin : optional
        Also decide a gate (:func:`scorebench.analysis.gates.gate`) of every system against ``baseline``.
    higher_is_better : bool, optional
        Direction of a metric that declares none (``sample_mean@COL``): names the better system
        and orients the gate.

    Returns
    -------
    ComparisonReport

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> a = (rng.random(300) < 0.7).astype(int); b = np.where(rng.random(300) < 0.1, 1 - a, a)
    >>> t = pd.DataFrame({"system": ["a"] * 300 + ["b"] * 300, "id": list(range(300)) * 2, "correct": np.r_[a, b]})
    >>> rep = comparison_report(t, n_boot=200, n_perm=200)
    >>> rep.pairs[["system_a", "system_b", "test", "n"]].values.tolist()
    [['a', 'b', 'mcnemar', 300]]
    >>> sorted(rep.flips["change"].unique().tolist())
    ['fix', 'regression']
    """
    check_level(alpha, "alpha")
    check_level(power, "power")
    check_choice(test, "test", REPORT_TESTS)
    check_choice(correction, "correction", tuple(CORRECTIONS))
    if deltas is not None:
        deltas = list(deltas)
        bad = [d for d in deltas if isinstance(d, bool) or not isinstance(d, (int, float, np.integer, np.floating))
               or not math.isfinite(d) or d == 0]
        if bad or not deltas:
            raise InputError(f"deltas: expected non-zero finite differences to plan for, got {bad or deltas!r}")
    if gate is not None:
        check_choice(gate, "gate", GATES)
        if baseline is None:
            raise InputError("gate= needs baseline= (the system the others are gated against)")
    table, sources = read_runs(runs, from_format, **(reader_options or {}))
    record = resolve_metrics(metric if metric is not None else _default_metric(table))[0]
    if record.higher_is_better is None and higher_is_better is not None:
        from dataclasses import replace

        record = replace(record, higher_is_better=bool(higher_is_better))
    table = usable_rows(table, record)
    pooled, mapping = _pooled(table, cluster)
    settings = {"alpha": alpha, "ci": ci, "power": power, "n_boot": n_boot, "n_perm": n_perm, "seed": seed,
                "kind": kind, "kind_options": kind_options}
    _, groups = paired_units(pooled, record, kind=kind, cluster=cluster, **kind_options)
    matrix = groups[0].matrix
    binary = bool(np.isin(matrix, (0.0, 1.0)).all())
    primary = _primary_test(test, binary, cluster)
    if primary == "mcnemar" and not binary:
        raise InputError(f"test 'mcnemar' needs right/wrong (0/1) values; metric {record.name!r} gives others")
    scores = evaluate(pooled, [record], kind=kind, ci=ci, n_boot=n_boot, seed=seed, cluster=cluster, **kind_options)
    scores = scores.drop(columns=[c for c in ("metric",) if c in scores.columns])
    all_pairs = _pairs_table(pooled, record, primary, None, correction, settings, cluster)
    pairs = all_pairs if baseline is None else _pairs_table(pooled, record, primary, baseline, correction, settings,
                                                            cluster)
    scores = _bands(scores, all_pairs, alpha, record.higher_is_better)
    task_scores = task_pairs = None
    if "task" in table.columns and table["task"].nunique() > 1:
        task_scores = evaluate(table, [record], kind=kind, ci=ci, n_boot=n_boot, seed=seed, cluster=cluster,
                               **kind_options).drop(columns="metric")
        task_pairs = _pairs_table(table, record, primary, baseline, correction, settings, cluster)
    flips = _flips(groups, pairs, mapping) if binary else pd.DataFrame(
        columns=["system", "reference", "task", "id", "change"])
    planner = _planner(groups, pairs, binary, deltas, settings)
    if cluster is not None:  # variance inflation of the clustered design, (SE_cluster / SE_naive)^2
        deff = planner.drop_duplicates(["system_a", "system_b"]).set_index(["system_a", "system_b"])
        pairs = pairs.assign(design_effect=[deff["design_effect_observed"].get((a, b), math.nan)
                                            for a, b in zip(pairs["system_a"], pairs["system_b"])])
    gates = None
    if gate is not None:
        gates = run_gate(pooled, record, baseline=baseline, gate=gate, margin=margin, alpha=alpha, kind=kind,
                         cluster=cluster, higher_is_better=higher_is_better, **kind_options)
    settings_out = {"metric": record.name, "test": primary, "correction": correction, "alpha": alpha, "ci": ci,
                    "power": power, "n_boot": n_boot, "n_perm": n_perm, "seed": seed, "baseline": baseline,
                    "cluster": cluster, "scorebench_version": __version__}
    return ComparisonReport(record.name, record.higher_is_better, binary, scores, pairs, task_scores, task_pairs,
                            flips, planner, gates, settings_out, tuple(sources))
