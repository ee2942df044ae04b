"""Build a leaderboard: sources -> evaluate / compare / aggregate -> board data.

The board is plain data (:class:`Board`: sections of formatted cells plus their numbers,
figures as SVG text, provenance); :mod:`scorebench.leaderboard.render` turns it into
Markdown, HTML, CSV and JSON. Every number comes from :func:`scorebench.evaluate`,
:func:`scorebench.compare` and :func:`scorebench.aggregate`; this module only decides what
goes on the board.

Ranks within a task
-------------------
Systems are ordered by the spec's ``rank_by`` metric. For a per-row metric the rank
interval is a *paired* bootstrap over units: the per-unit contributions form a systems x
units matrix and :func:`scorebench.aggregate` with ``method="mean"`` resamples its
columns (units) jointly for all systems, re-ranking each round. For a set-level metric
(ECE, AUROC) the interval is the conservative CI-overlap range: a system cannot rank above
``1 + #{b: lo_b > hi_a}`` (systems clearly better) or below ``k - #{b: hi_b < lo_a}``.

Tie bands are read off the rank intervals printed beside them, one procedure per section
(:func:`scorebench.aggregate.rank_bands.interval_bands`): walking down the ranking, a system
joins the current band when its rank interval reaches the rank of the band's top, otherwise it
opens the next band. (Bands from Holm-corrected paired tests beside bootstrap rank intervals
told two stories: a system "worse than the top" whose interval reached rank 1.) These statistics live in
:mod:`scorebench.aggregate.rank_bands`; the other blocks of a spec (``[aggregate]``,
``[incomplete]``, ``[arena]``, ...) are section kinds of :mod:`scorebench.leaderboard.sections`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from scorebench._version import __version__
from scorebench.aggregate.rank_bands import (INTERVAL_BAND_RULE, interval_bands, overlap_rank_intervals, paired_rank_intervals,
                                    tie_bands)
from scorebench.core.errors import InputError, UnknownMetricError
from scorebench.io.tables import format_value, read_results, read_table
from scorebench.io.readers import check_confined, confine_reads, regular_files
from scorebench.core.registry import metric as lookup_metric
from scorebench.leaderboard.board import SIGNIFICANT_DIGITS, Board, Figure, Section, digits_for, pin
from scorebench.leaderboard.board import cell, slug, split_tasks
from scorebench.leaderboard.spec import BoardSpec, CompareSpec, EvaluateSpec

__all__ = ["Board", "Section", "Figure", "build_board", "tie_bands", "overlap_rank_intervals",
           "SIGNIFICANT_DIGITS", "pin"]


def _arrow(name: str) -> str:
    try:
        hib = lookup_metric(name).higher_is_better
    except (UnknownMetricError, InputError, TypeError, ValueError):  # not a registered metric (external columns)
        return name
    return f"{name} {'↑' if hib else '↓'}" if hib is not None else name


def _sha256(path: Path) -> str:
    if path.is_dir():  # a folder of result files (a source with ``from``): the sorted (file, sha256) pairs
        # regular files only, each confined by its resolved path (no hash of a linked file outside)
        files = regular_files(path.rglob("*"))
        for p in files:
            check_confined(p)
        pairs = sorted((p.relative_to(path).as_posix(), _sha256(p)) for p in files)
        return hashlib.sha256("".join(f"{rel}\0{sha}\n" for rel, sha in pairs).encode()).hexdigest()
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# --- the build -------------------------------------------------------------------------


class _Context:
    """Sources read once, with their checksums."""

    def __init__(self, spec: BoardSpec) -> None:
        self.spec = spec
        self.tables: dict[str, pd.DataFrame] = {}
        self.scores = pd.DataFrame(columns=["system", "task", "metric", "value"])  # evaluated values, for [aggregate]
        self.bootstrap_notes: dict[str, str] = {}
        # metric entry of a block (``ece``) -> the names evaluate reports for it (``ece(n_bins=10)``)
        self.evaluated_names: dict[str, set[str]] = {}
        for block in spec.evaluate:
            for entry, record in zip(block.metrics, _records(block)):
                self.evaluated_names.setdefault(entry, set()).add(record.name)

    def table(self, name: str) -> pd.DataFrame:
        if name not in self.tables:
            source = self.spec.source(name)
            if source.model is not None:  # pinned: load_extractor refuses a file with another SHA-256
                from scorebench.models import features_table

                self.tables[name] = features_table(source.model, source.path, device="cpu", output=source.model_output,
                                                   system=source.model_system, expected_sha256=source.model_sha256)
            elif source.source_format is None:
                self.tables[name] = read_table(source.path, format=source.format)
            else:  # every file the reader opens is checked at its resolved path
                with confine_reads(self.spec.read_roots):
                    self.tables[name] = read_results(source.path, format=source.source_format,
                                                     **dict(source.read_options))
        return self.tables[name]


def _filter(table: pd.DataFrame, where: Sequence[tuple[str, Any]]) -> pd.DataFrame:
    for column, value in where:
        if column not in table.columns:
            raise InputError(f"where: column {column!r} not in the table (columns: {list(table.columns)})")
        table = table[table[column] == value]
    if table.empty:
        raise InputError(f"where {dict(where)}: no rows left")
    return table


def _records(block: EvaluateSpec) -> list:
    """Metric records of a block with its parameter overrides bound, in the block's order.

    A record's ``name`` carries its parameters (``kid(n_subsets=10,subset_size=300)``): that
    is the name ``evaluate`` reports, so every lookup of a block's results goes through it.
    """
    params = dict(block.params)
    return [lookup_metric(m, **dict(params.get(m, ()))) for m in block.metrics]


def _rank_record(block: EvaluateSpec, records: list) -> Any:
    """The bound record the block ranks by (``rank_by`` names a metric entry or its full name)."""
    if block.rank_by is None:
        return records[0]
    for entry, record in zip(block.metrics, records):
        if block.rank_by in (entry, record.name):
            return record
    raise InputError(f"rank_by {block.rank_by!r} names none of the evaluated metrics "
                     f"{[r.name for r in records]}")


def _evaluate_task(block: EvaluateSpec, sub: pd.DataFrame, records: list, record: Any,
                   spec: BoardSpec) -> tuple[pd.DataFrame, pd.DataFrame | None, str | None]:
    """Scores of one task (``all`` rows) and, for a per-row rank metric with intervals, its
    per-unit values and unit key, from one :func:`scorebench.evaluate` call."""
    import scorebench

    per_unit = bool(record.per_row and spec.n_boot)
    scores = scorebench.evaluate(sub, records, kind=block.kind, by="system", ci=spec.ci, n_boot=spec.n_boot,
                                 seed=spec.seed, per_unit=per_unit, **dict(block.options))
    key = [c for c in scores.columns if c not in ("system", "metric", "value", "ci_low", "ci_high", "n")]
    if not per_unit or not key:
        return scores, None, None
    attrs = dict(scores.attrs)
    summary = (scores[key[0]] == "all").to_numpy()
    units = scores[~summary & (scores["metric"] == record.name).to_numpy()]
    scores = scores[summary].drop(columns=key[0]).reset_index(drop=True)
    scores.attrs = attrs
    if attrs.get("unit_key") is None:  # units named by position: nothing pairs them across systems
        return scores, None, None
    return scores, units, key[0]


def _task_ranks(main: pd.DataFrame, units: pd.DataFrame | None, unit: str | None, record: Any,
                spec: BoardSpec) -> dict[str, Any]:
    """Rank, rank interval, ranking order and bands of one task's systems (see the module docstring)."""
    from scorebench.aggregate import competition_ranks

    hib = record.higher_is_better if record.higher_is_better is not None else True
    systems = main.index.tolist()
    v = main["value"].to_numpy()
    out: dict[str, Any] = {"systems": systems}
    if units is not None:
        paired, _ = paired_rank_intervals(units, unit, name=record.name, n_boot=spec.n_boot,
                                                   higher_is_better=record.higher_is_better, seed=spec.seed,
                                                   ci=spec.ci)
        ranks = paired.reindex(systems)
        out.update(rank=ranks["rank"].to_numpy(), low=ranks["rank_low"].to_numpy(),
                   high=ranks["rank_high"].to_numpy(), how="paired bootstrap over units")
    elif spec.n_boot:
        low, high = overlap_rank_intervals(v, main["ci_low"].to_numpy(), main["ci_high"].to_numpy(), hib)
        out.update(rank=competition_ranks(v if hib else -v), low=low, high=high, how="confidence-interval overlap")
    else:
        rank = competition_ranks(v if hib else -v)
        out.update(rank=rank, low=rank, high=rank, how="none (n_boot = 0)")
    order = np.lexsort((np.array(systems, dtype=object).astype(str), out["rank"]))
    out["order"] = order
    # One procedure per section: the bands are read off the rank intervals printed beside them.
    out["bands"] = interval_bands(np.asarray(out["rank"])[order], np.asarray(out["low"])[order])
    out["band_rule"] = INTERVAL_BAND_RULE
    return out


def _task_rows(wide: dict[str, pd.DataFrame], ranks: dict[str, Any], record: Any, task: Any,
               spec: BoardSpec) -> tuple[list[tuple[str, ...]], list[dict[str, Any]]]:
    """Display rows and number records of one task's section, in ranking order."""
    intervals = bool(spec.n_boot)
    rank, low, high, bands = ranks["rank"], ranks["low"], ranks["high"], ranks["bands"]
    rows, records = [], []
    for pos, i in enumerate(ranks["order"]):
        system = ranks["systems"][i]
        cells = ([str(bands[pos]), f"{int(rank[i])} ({int(low[i])}–{int(high[i])})"] if intervals
                 else [str(int(rank[i]))]) + [str(system)]
        for m, frame in wide.items():
            r = frame.loc[system]
            ranked = m == record.name
            cells.append(cell(r["value"], r["ci_low"], r["ci_high"], spec.digits))
            records.append({"section": "", "task": task, "system": system, "metric": m, "value": r["value"],
                            "ci_low": r["ci_low"], "ci_high": r["ci_high"], "n": int(r["n"]),
                            "rank": int(rank[i]) if ranked else None,
                            "rank_low": int(low[i]) if ranked and intervals else None,
                            "rank_high": int(high[i]) if ranked and intervals else None,
                            "band": int(bands[pos]) if ranked and intervals else None})
        cells.append(str(int(wide[record.name].loc[system, "n"])))
        rows.append(tuple(cells))
    return rows, records


def _task_section(ctx: _Context, block: EvaluateSpec, task: Any, sub: pd.DataFrame, index: int) -> Section:
    spec = ctx.spec
    if block.n_boot is not None:
        from dataclasses import replace

        spec = replace(spec, n_boot=block.n_boot)
    records = _records(block)
    record = _rank_record(block, records)
    scores, units, unit = _evaluate_task(block, sub, records, record, spec)
    ctx.bootstrap_notes[str(scores.attrs.get("kind"))] = str(scores.attrs.get("bootstrap", ""))
    names = [r.name for r in records]
    wide = {m: scores[scores["metric"] == m].set_index("system") for m in names}
    absent = [m for m, frame in wide.items() if frame.empty]
    if absent:
        raise InputError(f"evaluate block {block.title or index}: no results for {absent} (evaluated: "
                         f"{sorted(set(scores['metric']))})")
    ranks = _task_ranks(wide[record.name], units, unit, record, spec)
    # Without intervals there is no evidence of separation: no rank interval, no bands.
    intervals = bool(spec.n_boot)
    columns = (*(("band",) if intervals else ()), "rank", "system", *(_arrow(m) for m in names), "n")
    rows, numbers = _task_rows(wide, ranks, record, task, spec)
    key = f"eval{index}-{slug(task) if task is not None else 'all'}"
    title = (block.title or "Scores") + (f": {task}" if task is not None else "")
    hib = record.higher_is_better if record.higher_is_better is not None else True
    cells = (f"value [{spec.ci:.0%} interval: {_interval_text(scores.attrs.get('interval_methods', {}))}; "
             f"{spec.n_boot} rounds]" if spec.n_boot else "value (no bootstrap interval: n_boot = 0)")
    covers = f" {_covers_text(records)}" if spec.n_boot else ""
    note = (f"Ranked by {record.name} ({'higher' if hib else 'lower'} is better). Cells: {cells}.{covers} "
            + (f"Rank: competition rank (rank interval: {ranks['how']}). The {ranks['band_rule']}." if intervals
               else "Rank: competition rank of the point values; without intervals no difference is shown to be "
               "significant."))
    data = pd.DataFrame.from_records(numbers)
    data["section"] = key
    return Section(key, title, note, columns, tuple(rows), data)


_RULE_TEXT = {
    "percentile": "percentile bootstrap",
    "centered_percentile": "bootstrap spread centred on the estimate",
    "half_sampling": "half-sampling spread (no point repeated) centred on the estimate",
    "half_sampling_symmetric": "half-sampling spread (no point repeated), symmetric about the estimate",
    "half_sampling_normal": "half-sampling standard deviation (no point repeated), normal interval",
}


def _covers_text(records: Sequence[Any]) -> str:
    """What the section's value intervals cover, metric by metric (the registry's ``interval_covers``)."""
    from scorebench.core.registry import COVERS_TEXT

    by: dict[str, list[str]] = {}
    for r in records:
        by.setdefault(r.interval_covers, []).append(r.name)
    parts = [f"{COVERS_TEXT[c]} for {', '.join(names)}" for c, names in by.items()]
    return "What the intervals cover: " + "; ".join(parts) + "."


def _interval_text(rules: dict[str, str]) -> str:
    """How a section's intervals were made, metric by metric where the rules differ."""
    texts = {name: _RULE_TEXT.get(rule, rule) for name, rule in rules.items()}
    if len(set(texts.values())) <= 1:
        return next(iter(texts.values()), "percentile bootstrap")
    by_rule: dict[str, list[str]] = {}
    for name, text in texts.items():
        by_rule.setdefault(text, []).append(name)
    return "; ".join(f"{text} ({', '.join(names)})" for text, names in by_rule.items())


def _values_only(block: EvaluateSpec, task: Any, sub: pd.DataFrame) -> pd.DataFrame:
    """Point values of a hidden block (they feed the aggregation only)."""
    import scorebench

    scores = scorebench.evaluate(sub, _records(block), kind=block.kind, by="system", n_boot=0,
                                 **dict(block.options))
    return scores.assign(task=task)


def _compare_sections(ctx: _Context, block: CompareSpec, index: int) -> list[Section]:
    import scorebench

    spec = ctx.spec
    table = _filter(ctx.table(block.source), block.where)
    record = lookup_metric(block.metric)
    hib = record.higher_is_better
    out = []
    for task, sub in split_tasks(table):
        means = scorebench.evaluate(sub, [block.metric], kind=block.kind, by="system", n_boot=0)
        values = means.set_index("system")["value"]
        best = str(values.idxmax() if hib else values.idxmin())
        res = scorebench.compare(sub, block.metric, baseline=best, kind=block.kind, tests=[block.test],
                                 ci=spec.ci, n_boot=spec.n_boot, seed=spec.seed, horizon=block.horizon)
        res = res.sort_values(["p_value", "system_a"], kind="stable").reset_index(drop=True)
        columns = ("system", f"mean difference vs {best}", "statistic", "p", "p (Holm)", "better")
        rows = [(str(r.system_a), cell(r.mean_diff, r.ci_low, r.ci_high, spec.digits),
                 format_value(float(r.statistic), 3), _p(r.p_value), _p(r.p_holm), str(r.better))
                for r in res.itertuples()]
        key = f"compare{index}-{slug(task) if task is not None else 'all'}"
        filt = ", ".join(f"{k} = {v}" for k, v in block.where)
        note = (f"Paired {block.test.replace('_', '-')} test of mean({record.name}(system) − "
                f"{record.name}({best})) per unit{f' ({filt})' if filt else ''}"
                f"{f', horizon {block.horizon}' if block.test == 'diebold_mariano' else ''}; "
                "p-values Holm-adjusted across systems. Interval: paired bootstrap.")
        data = res.rename(columns={"system_a": "system", "system_b": "baseline"})
        data = data[["system", "baseline", "metric", "n", "mean_diff", "ci_low", "ci_high", "test", "statistic",
                     "p_value", "p_holm", "better"]].assign(section=key, task=task)
        title = f"Against the best system ({best}) on {record.name}" + (f": {task}" if task is not None else "")
        out.append(Section(key, title, note, columns, tuple(rows), data))
    return out


def _p(p: float) -> str:
    return "< 1e-4" if p < 1e-4 else f"{p:.4f}"


def _p_equals(p: float) -> str:
    """``p = 0.0123`` or ``p < 1e-4`` (never ``p = < 1e-4``) for captions."""
    text = _p(p)
    return f"p {text}" if text.startswith("<") else f"p = {text}"


def _aggregate_input(ctx: _Context, scores: pd.DataFrame, agg: Any) -> tuple[Any, str]:
    """The table handed to aggregate (long scores or a wide external table) and a note."""
    from scorebench.aggregate import as_matrix

    if agg.source is not None:
        source = ctx.spec.source(agg.source)
        matrix = as_matrix(ctx.table(agg.source), system_column=source.system_column, exclude=source.exclude,
                           duplicates="suffix", higher_is_better=source.higher_is_better,
                           convention=source.convention)
        note = ""
        if source.convention is not None:
            from scorebench.aggregate import get_convention

            conv = get_convention(source.convention)
            note = f" Task units: the {conv.name!r} convention ({conv.description}; {conv.citation})."
        if source.complete_only and matrix.has_missing:
            complete = matrix.complete_systems()
            dropped = [s for s in matrix.systems if s not in complete.systems]
            note += f" Left out for missing scores: {', '.join(dropped)}."
            matrix = complete
        return matrix, note
    names = {m: ctx.evaluated_names.get(m) or {lookup_metric(m).name} for m in agg.metrics}
    wanted = set().union(*names.values())
    items = _item_scores(ctx, wanted)
    if items is not None:
        return items, ""
    long = scores[scores["metric"].isin(wanted)][["system", "task", "metric", "value"]]
    absent = sorted(m for m, found in names.items() if not found & set(long["metric"]))
    if absent:
        raise InputError(f"aggregate: metric(s) {absent} were not evaluated by any [[evaluate]] block "
                         f"(evaluated: {sorted(set(scores['metric']))})")
    if long["task"].isna().all():
        raise InputError("aggregate: the evaluated scores have no task column; aggregation ranks across tasks")
    return as_matrix(long.reset_index(drop=True)), ""


def _item_scores(ctx: _Context, names: set[str]) -> pd.DataFrame | None:
    """Per-item contributions of the aggregated metrics (``evaluate(..., per_unit=True)``), so rank
    intervals resample items within tasks; None when a metric is set-level or has no unit key."""
    import scorebench

    frames = []
    for block in ctx.spec.evaluate:
        records = [r for r in _records(block) if r.name in names]
        if not records:
            continue
        if not all(r.per_row for r in records):
            return None
        for task, sub in split_tasks(_filter(ctx.table(block.source), block.where)):
            units = scorebench.evaluate(sub, records, kind=block.kind, by="system", n_boot=0, per_unit=True,
                                        **dict(block.options))
            if units.attrs.get("unit_key") is None:  # unpaired units (no key column)
                return None
            frames.append(units.assign(task=task))
    if not frames:
        return None
    table = pd.concat(frames, ignore_index=True)
    from scorebench.aggregate.items import is_item_table

    return table if table["task"].notna().all() and is_item_table(table) else None


def _aggregate_rows(rankings: dict[str, Any], digits: int) -> tuple[list[tuple[str, ...]], list[dict[str, Any]]]:
    """One row per system (in the first method's order): each method's score [interval] and rank (interval)."""
    rows, records = [], []
    shown = {m: digits_for([r.scores, *(x for x in (r.ci_low, r.ci_high) if x is not None)], digits)
             for m, r in rankings.items()}  # counts (Borda, Copeland) without decimals
    for system in next(iter(rankings.values())).order:
        cells = [str(system)]
        for m, r in rankings.items():
            i = r.systems.index(system)
            lo = r.ci_low[i] if r.ci_low is not None else np.nan
            hi = r.ci_high[i] if r.ci_high is not None else np.nan
            cells.append(cell(r.scores[i], lo, hi, shown[m]))
            rank_text = str(int(r.ranks[i]))
            if r.rank_low is not None:
                rank_text += f" ({int(r.rank_low[i])}–{int(r.rank_high[i])})"
            cells.append(rank_text)
            records.append({"section": "aggregate", "task": None, "system": system, "metric": m,
                            "value": r.scores[i], "ci_low": lo, "ci_high": hi, "n": None, "rank": int(r.ranks[i]),
                            "rank_low": None if r.rank_low is None else float(r.rank_low[i]),
                            "rank_high": None if r.rank_high is None else float(r.rank_high[i]), "band": None})
        rows.append(tuple(cells))
    return rows, records


def _agreement_section(table: Any, methods: Sequence[str]) -> Section:
    """Kendall tau-b between the rankings of several aggregation methods."""
    from scorebench.aggregate import method_agreement

    tau = method_agreement(table, list(methods))
    disagree = bool((tau.to_numpy() < 1 - 1e-12).any())
    t_rows = tuple((str(a), *(format_value(float(tau.loc[a, b]), 3) for b in tau.columns)) for a in tau.index)
    t_note = ("Kendall tau-b between the methods' rankings; the methods disagree where tau < 1."
              if disagree else "All methods give the same ranking (Kendall tau = 1 for every pair).")
    t_data = tau.reset_index(names="method").melt(id_vars="method", var_name="other", value_name="value")
    t_data = t_data.assign(section="agreement")
    return Section("agreement", "Agreement between aggregation methods", t_note, ("method", *map(str, tau.columns)),
                   t_rows, t_data)


def aggregate_sections(ctx: _Context, agg: Any) -> list[Section]:
    """Sections of the board's ``[aggregate]`` block ``agg`` (over ``ctx.scores``, the evaluated values)."""
    import scorebench
    from scorebench.aggregate import get_method, read_input

    spec = ctx.spec
    table, dropped = _aggregate_input(ctx, ctx.scores, agg)
    n_boot = spec.n_boot if agg.n_boot is None else agg.n_boot
    rankings = {m: scorebench.aggregate(table, m, n_boot=n_boot, seed=spec.seed, ci=spec.ci)
                for m in agg.methods}
    first = rankings[agg.methods[0]]
    columns = ["system"] + [f"{m} {what}" for m in agg.methods for what in ("score", "rank")]
    rows, records = _aggregate_rows(rankings, spec.digits)
    matrix = table if not isinstance(table, pd.DataFrame) else read_input(table)
    what = f"{matrix.n_systems} systems on {matrix.n_columns} columns: {', '.join(matrix.columns)}"
    cites = "; ".join(f"{m}: {get_method(m).citation}" for m in agg.methods)
    resampled = {"tasks": "column resamples", "items": "resamples of the items within each task",
                 "tasks+items": "two-level resamples (tasks, then items within each task)"}
    intervals = (f"{spec.ci:.0%} bootstrap intervals and rank intervals from {n_boot} "
                 f"{resampled.get(first.resample, 'resamples')}" if first.rank_low is not None else "no intervals")
    warned = "".join(f" Warning: {w}." for w in dict.fromkeys(r.warning for r in rankings.values() if r.warning))
    covers = (" What the intervals cover: how each method's score and rank vary when the benchmark's tasks are "
              "redrawn (a population of similar tasks), not the measurement error of each cell."
              if first.rank_low is not None and first.resample == "tasks" else
              " What the intervals cover: how each score and rank vary when the items behind each task are "
              "redrawn (a population of similar items)." if first.rank_low is not None else "")
    note = (f"Aggregated over tasks ({what}), sorted by {agg.methods[0]}. Scores are each method's own "
            f"(higher is better) with {intervals}.{covers} Methods: {cites}.{dropped}{warned}")
    figures = [f for f in (_plot_for(ctx, "rank_intervals", rankings=rankings),
                           _plot_for(ctx, "critical_difference", matrix=matrix)) if f is not None]
    sections = [Section("aggregate", "Aggregated ranking across tasks", note, tuple(columns), tuple(rows),
                        pd.DataFrame.from_records(records), tuple(figures))]
    if len(agg.methods) > 1:
        sections.append(_agreement_section(table, agg.methods))
    return sections


def _plot_for(ctx: _Context, kind: str, **data: Any) -> Figure | None:
    """Render a plot the spec asks for (``plots`` entries of this type), else None."""
    from scorebench.leaderboard import plots

    wanted = [p for p in ctx.spec.plots if p.type == kind]
    if not wanted:
        return None
    p = wanted[0]
    if kind == "rank_intervals":
        svg = plots.rank_interval_chart(data["rankings"])
        return Figure("rank-intervals", p.title or "Rank of each system under each method (bootstrap rank "
                      "interval as a bar, point = rank)", svg)
    if kind == "critical_difference":
        from scorebench.leaderboard.friedman import friedman_nemenyi

        m = data["matrix"]
        res = friedman_nemenyi(m.oriented, m.systems)
        svg = plots.critical_difference_diagram(res)
        return Figure("critical-difference", p.title or (
            f"Critical-difference diagram: average rank over {res.n_tasks} tasks; Friedman chi2 = "
            f"{res.statistic:.2f}, {_p_equals(res.p_value)}; systems joined by a bar are not significantly "
            f"different (Nemenyi, alpha = {res.alpha}, CD = {res.critical_difference:.3f})"), svg)
    raise InputError(f"unknown plot type {kind!r}")


def _source_figures(ctx: _Context) -> list[Figure]:
    """Plots drawn from a source table (reliability, ROC, PR), one per task."""
    from scorebench.leaderboard import plots

    out = []
    for p in ctx.spec.plots:
        if p.type not in ("reliability", "roc", "pr"):
            continue
        table = ctx.table(p.source)
        for task, sub in split_tasks(table):
            if p.task is not None and str(task) != p.task:
                continue
            label = f" — {task}" if task is not None else ""
            if p.type == "reliability":
                svg = plots.reliability_grid(sub)
                caption = (p.title or "Top-label reliability diagrams (10 equal-width bins; bar = Wilson 95% "
                           "interval of the accuracy in the bin; diagonal = perfect calibration)") + label
            else:
                svg = plots.ood_curves(sub, curve=p.type)
                caption = (p.title or f"{p.type.upper()} curves") + label
            out.append(Figure(f"{p.type}-{slug(task) if task is not None else 'all'}", caption, svg))
    return out


def _evaluate_sections(ctx: _Context) -> list[Section]:
    """The per-task sections of the ``[[evaluate]]`` blocks; every block's values (shown or not)
    are kept in ``ctx.scores`` for ``[aggregate]``."""
    sections: list[Section] = []
    evaluated: list[pd.DataFrame] = []
    for i, block in enumerate(ctx.spec.evaluate):
        table = _filter(ctx.table(block.source), block.where)
        for task, sub in split_tasks(table):
            if block.show:
                section = _task_section(ctx, block, task, sub, i)
                sections.append(section)
                evaluated.append(section.data)
            else:
                evaluated.append(_values_only(block, task, sub))
    ctx.scores = pd.concat(evaluated, ignore_index=True) if evaluated else pd.DataFrame(
        columns=["system", "task", "metric", "value"])
    return sections


def build_board(spec: BoardSpec) -> Board:
    """Compute a board from its spec (no files written)."""
    from scorebench.leaderboard.sections import section_kinds

    missing = [s.path for s in spec.sources if not s.path.exists()]
    if missing:
        raise InputError(f"{spec.path}: source file(s) not found: {[str(m) for m in missing]}"
                         + (f"; make them with `python {spec.script}`" if spec.script else ""))
    ctx = _Context(spec)
    sections = _evaluate_sections(ctx)
    figures = _source_figures(ctx)
    if figures:
        sections.append(Section("figures", "Calibration and detection plots", "", (), (), pd.DataFrame(),
                                tuple(figures)))
    for i, block in enumerate(spec.compare):
        sections.extend(_compare_sections(ctx, block, i))
    for kind in section_kinds():  # [aggregate], [incomplete], [items], [compression], [irt], [arena]
        block = getattr(spec, kind.block)
        if block is not None:
            sections.extend(kind.build(ctx, block))
    sections = _distinct_names([_mark_bidi(s) for s in sections])
    empty = [s.title or s.key for s in sections if s.columns and not s.rows]
    if empty:
        raise InputError(f"{spec.path}: board section(s) {empty} have no rows; a published table must not be empty")
    return Board(spec, tuple(sections), _provenance(spec, ctx))


def _mark_bidi(section: Section) -> Section:
    """Display strings with bidirectional controls made visible (a name cannot pose as another)."""
    from dataclasses import replace

    from scorebench.io.tables import BIDI_CONTROLS, mark_bidi

    def has(text: str) -> bool:
        return any(c in BIDI_CONTROLS for c in text)

    texts = [section.title, section.note, *section.columns, *(c for r in section.rows for c in r),
             *(t for f in section.figures for t in (f.caption, f.svg))]
    if not any(has(str(t)) for t in texts):
        return section
    return replace(section, title=mark_bidi(section.title), note=mark_bidi(section.note),
                   columns=tuple(mark_bidi(c) for c in section.columns),
                   rows=tuple(tuple(mark_bidi(c) for c in r) for r in section.rows),
                   figures=tuple(replace(f, caption=mark_bidi(f.caption), svg=mark_bidi(f.svg))
                                 for f in section.figures))


def _distinct_names(sections: list[Section]) -> list[Section]:
    """Section keys and figure file names made unique: task names such as ``A b`` and ``a-b``
    share a slug, so colliding ones get a short hash of their title (caption) appended."""
    from dataclasses import replace

    def unique(names: list[str], labels: list[str]) -> list[str]:
        counts = {n: names.count(n) for n in names}
        out, seen = [], set()
        for name, label in zip(names, labels):
            new = name if counts[name] == 1 else f"{name}-{hashlib.sha256(label.encode()).hexdigest()[:8]}"
            while new in seen:  # identical labels too: number them in board order
                new += "-x"
            seen.add(new)
            out.append(new)
        return out

    keys = unique([s.key for s in sections], [s.title for s in sections])
    figures = [f for s in sections for f in s.figures]
    names = iter(unique([f.name for f in figures], [f.caption for f in figures]))
    out = []
    for section, key in zip(sections, keys):
        figs = tuple(replace(f, name=next(names)) for f in section.figures)
        data = section.data
        if key != section.key and "section" in data.columns:
            data = data.assign(section=key)
        out.append(replace(section, key=key, figures=figs, data=data))
    return out


def _provenance(spec: BoardSpec, ctx: _Context) -> tuple[tuple[str, str], ...]:
    root = spec.path.parent
    items = [("scorebench", __version__), ("seed", str(spec.seed)), ("confidence level", f"{spec.ci:g}"),
             ("bootstrap rounds", str(spec.n_boot)), ("spec", f"{spec.path.name} sha256 {_sha256(spec.path)}")]
    if spec.script:
        items.append(("data script", spec.script))
    for s in spec.sources:
        rel = _relative(s.path, root)
        with confine_reads(spec.read_roots):
            digest = _sha256(s.path)
        items.append((f"source {s.name}", f"{rel} sha256 {digest} ({len(ctx.table(s.name))} rows)"
                      if s.name in ctx.tables else f"{rel} sha256 {digest}"))
    for kind, note in sorted(ctx.bootstrap_notes.items()):
        items.append((f"bootstrap ({kind})", note))
    return tuple(items)


def _relative(path: Path, root: Path) -> str:
    import os

    # abspath, not resolve: a symlinked checkout or reference folder must not change the text.
    return os.path.relpath(os.path.abspath(path), os.path.abspath(root)).replace(os.sep, "/")
