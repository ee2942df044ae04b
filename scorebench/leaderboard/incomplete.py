r"""Board sections for an incomplete systems x tasks benchmark (MTEB-style result files).

A real leaderboard has holes: on MTEB(eng, v2) 166 of 270 models miss some of the 41 tasks.
This module puts the leaderboard's own columns next to rankings that say how they treat the
holes, and shows how much the choice moves models:

* the leaderboard's columns, with its conventions (read from the ``mteb`` package's code):
  *Mean (Task)* and per-type means blank when a task is missing, *Mean (TaskType)* the mean
  of the type means (blank when one is), *Rank (Borda)* with ``missing="zero"`` (a missing
  task loses to every model);
* the coverage (tasks run / tasks in the benchmark) and the mean over the tasks a model ran;
* missing-aware rankings: Borda with the uniform completion of partial rankings (Himmi et
  al., 2023: the expected Borda count over every completion of each task's ranking),
  and pairwise methods that compare two models only on the tasks both ran (mean win rate,
  Copeland);
* rank intervals from a *stratified* task bootstrap: each round redraws, within each task
  type, as many tasks as the type has (with replacement), so every replicate keeps the
  benchmark's type mix; 95% percentile intervals of each model's rank;
* Kendall's tau-b between the methods, the models whose rank moves most between the
  leaderboard's Borda and the missing-aware methods, and a score-vs-size Pareto plot
  where a model counts as dominated only when a model no larger has a score interval
  entirely above its own.

References: Muennighoff et al. (2023), MTEB, EACL; Himmi, Irurozki, Noiry, Clémençon and
Colombo (2023), Towards More Robust NLP System Evaluation: Handling Missing Scores in
Benchmarks, arXiv:2305.10284; Liang et al. (2022), HELM (mean win rate).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.io.tables import format_value
from scorebench.core.stats import rng_for

__all__ = ["METHODS", "stratified_rank_intervals", "model_sizes", "pareto_dominated", "incomplete_sections"]


@dataclass(frozen=True)
class _Method:
    label: str
    method: str
    params: tuple[tuple[str, Any], ...]
    note: str


METHODS = (
    _Method("MTEB Borda", "borda", (("missing", "zero"),), "the leaderboard's Borda: a missing task scores 0 points"),
    _Method("Borda (completion)", "borda", (("missing", "complete"),),
            "expected Borda count over the uniform completions of each task's partial ranking (Himmi et al., 2023)"),
    _Method("win rate (shared)", "win_rate", (), "mean win rate: per task, only the models that ran it compete"),
    _Method("Copeland (shared)", "copeland", (), "pairwise majority over the tasks both models ran"),
    _Method("mean (available)", "mean", (("missing", "available"),), "mean over the tasks a model ran"),
)
PRIMARY = "Borda (completion)"


def stratified_rank_intervals(matrix: Any, types: list[str], method: _Method, n_boot: int, seed: int,
                              ci: float) -> dict[str, np.ndarray]:
    """Score and rank intervals of ``method`` over tasks resampled within their types.

    Each round draws, for every task type with :math:`k` tasks, :math:`k` of them with
    replacement; the method is rerun on those columns and the models re-ranked
    (competition ranks). Rounds where the method cannot run are dropped.

    Examples
    --------
    >>> import pandas as pd
    >>> from scorebench.aggregate import as_matrix
    >>> m = as_matrix(pd.DataFrame({"a": [3., 2, 1], "b": [3., 1, 2], "c": [2., 3, 1], "d": [3., 2, 1]},
    ...                            index=["x", "y", "z"]))
    >>> out = stratified_rank_intervals(m, ["s", "s", "t", "t"], METHODS[4], 50, 0, 0.9)
    >>> out["rank_low"].tolist(), out["rank_high"].tolist()
    ([1, 2, 2], [1, 2, 3])
    """
    from scorebench.aggregate.uncertainty import run_method, summarize_bootstrap
    from scorebench.aggregate import get_method
    from scorebench.core.errors import ScorebenchError

    if len(types) != matrix.n_columns:
        raise InputError(f"task types: expected {matrix.n_columns}, got {len(types)}")
    record = get_method(method.method)
    params = dict(method.params)
    groups = [np.flatnonzero(np.asarray(types) == t) for t in sorted(set(types))]
    rng = rng_for(seed, "incomplete", method.label)
    out = []
    for _ in range(n_boot):
        index = np.concatenate([g[rng.integers(len(g), size=len(g))] for g in groups])
        try:
            out.append(run_method(record, matrix.take_columns(index), params).scores)
        except ScorebenchError:
            continue
    if not out:
        raise InputError(f"{method.label}: the method failed on every stratified resample")
    return summarize_bootstrap(np.asarray(out, dtype=np.float64), ci)


def model_sizes(results: Path) -> pd.DataFrame:
    """``model_meta.json`` beside MTEB result files: model name -> parameters, open weights.

    Examples
    --------
    >>> model_sizes(Path("/nonexistent")).columns.tolist()
    ['system', 'n_parameters', 'open_weights']
    """
    rows = []
    for meta in sorted(Path(results).glob("*/*/model_meta.json")):
        try:
            doc = json.loads(meta.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # a damaged meta file only loses the size, never the scores
        if not isinstance(doc, dict):
            continue
        name = doc.get("name") or meta.parent.parent.name.replace("__", "/")
        n = doc.get("n_parameters")
        n = float(n) if isinstance(n, (int, float)) and not isinstance(n, bool) and n > 0 else np.nan
        ow = doc.get("open_weights")
        rows.append({"system": str(name), "n_parameters": n,
                     "open_weights": {True: "yes", False: "no"}.get(ow, "unknown")})
    frame = pd.DataFrame(rows, columns=["system", "n_parameters", "open_weights"])
    return frame.drop_duplicates("system", keep="first")


def pareto_dominated(size: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """True where another model no larger has a score interval entirely above this one's.

    Examples
    --------
    >>> pareto_dominated(np.array([1., 2., 3.]), np.array([.5, .2, .55]), np.array([.6, .4, .7])).tolist()
    [False, True, False]
    """
    size, low, high = (np.asarray(a, dtype=np.float64) for a in (size, low, high))
    return ((size[None, :] <= size[:, None]) & (low[None, :] > high[:, None])).any(axis=1)


#: At most this many frontier models are labelled on the size plot.
PARETO_LABELS = 15


def pareto_plot(names: list[str], size: np.ndarray, score: np.ndarray, low: np.ndarray, high: np.ndarray,
                dominated: np.ndarray) -> str:
    """Score (with interval bars) against size on a log x-axis; non-dominated models labelled."""
    from scorebench.leaderboard.plots import figure_svg, label, place_labels

    def draw(fig):
        ax = fig.add_subplot(1, 1, 1)
        for flag, colour in ((True, "#b0b0b0"), (False, "#1f77b4")):
            k = dominated == flag
            ax.errorbar(size[k], score[k], yerr=[score[k] - low[k], high[k] - score[k]], fmt="o", ms=3,
                        color=colour, ecolor=colour, elinewidth=0.8, capsize=0,
                        label="dominated" if flag else "not dominated")
        ax.set_xscale("log")
        ax.set_xlabel("parameters (log scale)")
        ax.set_ylabel("Mean (Task) ×100")
        # outside the axes (below), so that it covers no model
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=2, fontsize=8, frameon=False)
        # label the frontier only, best first, at most PARETO_LABELS, where a label fits
        frontier = np.flatnonzero(~dominated)
        frontier = frontier[np.argsort(-np.asarray(score, dtype=np.float64)[frontier], kind="stable")]
        shown = place_labels(ax, size, score, [label(n, 32) for n in names], order=frontier[:PARETO_LABELS])
        ax.set_title(f"labelled: {len(shown)} of the {len(frontier)} models on the size frontier (best first; "
                     "others where a label would overlap are in the table)", fontsize=8)

    return figure_svg(draw, figsize=(9, 6))


def _wide(table: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    need = {"system", "task", "task_type", "value"}
    if not need <= set(table.columns):
        raise InputError(f"incomplete board: the source needs columns {sorted(need)} (an MTEB result folder read "
                         f"with from = \"mteb\"); got {list(table.columns)}")
    types = table.drop_duplicates("task").set_index("task")["task_type"].astype(str)
    tasks = sorted(types.index, key=lambda t: (types[t], str(t)))
    wide = table.pivot_table(index="system", columns="task", values="value", aggfunc="first")
    return wide.reindex(columns=tasks), [types[t] for t in tasks]


def _millions(n: float) -> str:
    """Parameters in millions: whole numbers (no thousands separator: the page sorts on the text's number)."""
    if not np.isfinite(n):
        return "—"
    m = n / 1e6
    return f"{m:.0f}" if m >= 10 else f"{m:.2g}"


def _pct(v: float) -> str:
    return "—" if not np.isfinite(v) else f"{100 * v:.2f}"


def _rank_text(rank: int, low: int, high: int) -> str:
    return f"{rank} ({low}–{high})"


@dataclass
class _Board:
    """What the sections of an ``[incomplete]`` block share."""

    wide: pd.DataFrame
    types: list[str]
    systems: list[str]
    values: np.ndarray
    coverage: np.ndarray
    n_boot: int
    results: dict[str, dict[str, np.ndarray]]
    order: np.ndarray
    bands: np.ndarray
    size: np.ndarray
    weights: list[str]

    @property
    def n_tasks(self) -> int:
        return self.wide.shape[1]

    @property
    def type_names(self) -> list[str]:
        return sorted(set(self.types))

    def interval(self, label: str, i: int) -> str:
        r = self.results[label]
        if not self.n_boot:
            return str(int(r["rank"][i]))
        return _rank_text(int(r["rank"][i]), int(r["rank_low"][i]), int(r["rank_high"][i]))


def _method_results(matrix: Any, types: list[str], n_boot: int, seed: int, ci: float) -> dict[str, dict[str, np.ndarray]]:
    """Score, competition rank and (with ``n_boot``) stratified intervals of every method."""
    from scorebench.aggregate import competition_ranks, get_method
    from scorebench.aggregate.uncertainty import run_method

    results = {}
    for m in METHODS:
        res = run_method(get_method(m.method), matrix, dict(m.params))
        scores = np.asarray(res.scores, dtype=np.float64)
        out = {"score": scores, "rank": competition_ranks(scores)}
        if n_boot:
            out.update(stratified_rank_intervals(matrix, types, m, n_boot, seed, ci))
        results[m.label] = out
    return results


def _prepare(ctx: Any, block: Any) -> _Board:
    from scorebench.aggregate import as_matrix
    from scorebench.aggregate.rank_bands import interval_bands

    spec = ctx.spec
    wide, types = _wide(ctx.table(block.source))
    matrix = as_matrix(wide, higher_is_better=True)
    systems = list(matrix.systems)
    values = wide.reindex(index=systems).to_numpy(dtype=np.float64)
    n_boot = spec.n_boot if block.n_boot is None else block.n_boot
    results = _method_results(matrix, types, n_boot, spec.seed, spec.ci)
    primary = results[PRIMARY]
    order = np.lexsort((np.array(systems, dtype=object).astype(str), primary["rank"]))
    bands = (interval_bands(primary["rank"][order], primary["rank_low"][order]) if n_boot
             else np.arange(1, len(order) + 1))
    sizes = model_sizes(spec.source(block.source).path).set_index("system")
    return _Board(wide, types, systems, values, np.isfinite(values).sum(axis=1), n_boot, results, order, bands,
                  sizes["n_parameters"].reindex(systems).to_numpy(dtype=np.float64),
                  sizes["open_weights"].reindex(systems).fillna("unknown").tolist())


def _columns(b: _Board) -> tuple[list[str], dict[str, str]]:
    columns = ["band", f"rank: {PRIMARY}", "system", "parameters (M)", "open weights", "coverage",
               "Rank (Borda)", "Mean (Task)", "Mean (TaskType)", *b.type_names,
               *(f"rank: {m.label}" for m in METHODS if m.label not in (PRIMARY, "MTEB Borda")),
               "mean (available)", "win rate (shared)", *map(str, b.wide.columns)]
    groups = {"Rank (Borda)": "MTEB leaderboard", "Mean (Task)": "MTEB leaderboard",
              "Mean (TaskType)": "MTEB leaderboard", **{t: "task-type means" for t in b.type_names},
              **{f"rank: {m.label}": "missing-aware ranks" for m in METHODS if m.label != "MTEB Borda"},
              "mean (available)": "missing-aware scores", "win rate (shared)": "missing-aware scores",
              **{str(task): f"tasks: {t}" for task, t in zip(b.wide.columns, b.types)}}
    return columns, groups


def _main_records(b: _Board, i: int, band: int) -> list[dict[str, Any]]:
    name, n_boot = b.systems[i], b.n_boot
    records = [{"section": "incomplete", "system": name, "task": str(task), "task_type": t, "metric": "main_score",
                "value": float(v)} for task, t, v in zip(b.wide.columns, b.types, b.values[i]) if np.isfinite(v)]
    for m in METHODS:
        r = b.results[m.label]
        records.append({"section": "incomplete", "system": name, "task": None, "task_type": None,
                        "metric": m.label, "value": float(r["score"][i]),
                        "ci_low": float(r["ci_low"][i]) if n_boot else None,
                        "ci_high": float(r["ci_high"][i]) if n_boot else None,
                        "rank": int(r["rank"][i]), "rank_low": int(r["rank_low"][i]) if n_boot else None,
                        "rank_high": int(r["rank_high"][i]) if n_boot else None,
                        "band": band if m.label == PRIMARY else None})
    return records


def _main_rows(b: _Board) -> tuple[list[tuple[str, ...]], list[dict[str, Any]]]:
    """The leaderboard's columns (skipna=False means, as MTEB) next to the missing-aware rankings."""
    type_cols = {t: [j for j, tt in enumerate(b.types) if tt == t] for t in b.type_names}
    mean_task = b.values.mean(axis=1)  # NaN unless every task ran (skipna=False)
    type_means = np.column_stack([b.values[:, type_cols[t]].mean(axis=1) for t in b.type_names])
    mean_type = type_means.mean(axis=1)
    rows, records = [], []
    for pos, i in enumerate(b.order):
        cells = [str(int(b.bands[pos])), b.interval(PRIMARY, i), b.systems[i], _millions(b.size[i]), b.weights[i],
                 f"{b.coverage[i]}/{b.n_tasks}", str(int(b.results["MTEB Borda"]["rank"][i])),
                 _pct(mean_task[i]), _pct(mean_type[i]), *(_pct(v) for v in type_means[i])]
        cells += [b.interval(m.label, i) for m in METHODS if m.label not in (PRIMARY, "MTEB Borda")]
        for r in (b.results["mean (available)"], b.results["win rate (shared)"]):
            cells.append(_pct(r["score"][i]) + (f" [{_pct(r['ci_low'][i])}, {_pct(r['ci_high'][i])}]"
                                                if b.n_boot else ""))
        cells += [_pct(v) for v in b.values[i]]
        rows.append(tuple(cells))
        records += _main_records(b, i, int(b.bands[pos]))
    return rows, records


def _how(b: _Board, ci: float) -> str:
    return (f"{ci:.0%} percentile intervals over {b.n_boot} stratified task resamples (within each task type "
            "as many tasks as it has, drawn with replacement)" if b.n_boot else "no intervals (n_boot = 0)")


def _main_section(b: _Board, ci: float) -> Any:
    from scorebench.leaderboard.board import Section

    columns, groups = _columns(b)
    rows, records = _main_rows(b)
    complete = int((b.coverage == b.n_tasks).sum())
    note = (f"{len(b.systems)} models on {b.n_tasks} tasks ({len(b.type_names)} task types); {complete} ran every "
            f"task. Sorted by {PRIMARY}: {METHODS[1].note}. Rank cells: rank (interval), {_how(b, ci)}. Band: walking "
            "down the ranking, a model joins the current band when its rank interval reaches the rank of the band's "
            "top, otherwise it opens the next band (read off the rank intervals shown). What the rank intervals "
            "cover: how each ranking varies when the tasks are redrawn within their types (a population of similar "
            "tasks), not the measurement error of each score. The MTEB leaderboard's "
            "own columns follow its code: Mean (Task), the task-type means and Mean (TaskType) are blank (—) when a "
            "task is missing; Rank (Borda) gives a missing task 0 points. "
            + " ".join(f"{m.label}: {m.note}." for m in METHODS[2:])
            + " Scores are ×100; parameters from model_meta.json where the results carry one.")
    return Section("incomplete", "Leaderboard: MTEB's columns next to missing-aware rankings", note,
                   tuple(columns), tuple(rows), pd.DataFrame.from_records(records),
                   groups=tuple(groups.items()),
                   filters=(("parameters (M)", "num"), ("open weights", "cat"), ("coverage", "num")),
                   collapsed=tuple(sorted({g for g in groups.values() if g.startswith("tasks: ")})))


def _agreement_section(b: _Board) -> Any:
    """Kendall tau-b between the methods' scores over all models."""
    from scorebench.metrics.agreement import kendall_tau
    from scorebench.leaderboard.board import Section

    labels = [m.label for m in METHODS]
    tau = np.array([[kendall_tau(b.results[x]["score"], b.results[y]["score"]) for y in labels] for x in labels])
    t_rows = tuple((x, *(format_value(float(v), 3) for v in tau[k])) for k, x in enumerate(labels))
    t_data = pd.DataFrame([{"section": "incomplete-agreement", "method": x, "other": y, "value": float(tau[k, j])}
                           for k, x in enumerate(labels) for j, y in enumerate(labels)])
    return Section("incomplete-agreement", "Agreement between the rankings (Kendall tau-b)",
                   f"Kendall tau-b between the methods' scores over all {len(b.systems)} models.",
                   ("method", *labels), t_rows, t_data)


def _moves_section(b: _Board, top_n: int) -> Any:
    """The models whose rank moves most between the leaderboard's Borda and the missing-aware methods."""
    from scorebench.leaderboard.board import Section

    base = b.results["MTEB Borda"]["rank"]
    done = b.results[PRIMARY]["rank"] - base
    wins = b.results["win rate (shared)"]["rank"] - base
    moves = np.maximum(np.abs(done), np.abs(wins))
    top = sorted(range(len(b.systems)), key=lambda i: (-moves[i], b.systems[i]))[:top_n]
    c_cols = ("system", "coverage", "MTEB Borda rank", f"{PRIMARY} rank", "change", "win rate (shared) rank",
              "change (win rate)")
    c_rows = tuple((b.systems[i], f"{b.coverage[i]}/{b.n_tasks}", str(int(base[i])), b.interval(PRIMARY, i),
                    f"{int(done[i]):+d}", b.interval("win rate (shared)", i), f"{int(wins[i]):+d}") for i in top)
    c_data = pd.DataFrame([{"section": "incomplete-moves", "system": b.systems[i], "coverage": int(b.coverage[i]),
                            "mteb_borda_rank": int(base[i]), "completion_rank": int(b.results[PRIMARY]["rank"][i]),
                            "win_rate_rank": int(b.results["win rate (shared)"]["rank"][i]),
                            "largest_move": int(moves[i])} for i in top])
    n_full = sum(1 for i in top if b.coverage[i] == b.n_tasks)
    return Section("incomplete-moves", f"Models whose rank moves most ({len(top)} largest)",
                   "Largest absolute rank change between the leaderboard's Borda (a missing task = 0 "
                   f"points) and {PRIMARY} or the mean win rate over shared tasks (change: new rank minus "
                   f"the leaderboard's; + is a drop). {n_full} of these {len(top)} ran every task: under the "
                   "leaderboard's Borda every model that skipped a task hands its points to the others, so "
                   "complete but middling models climb over stronger incomplete ones.",
                   c_cols, c_rows, c_data)


def _pareto_section(b: _Board, ci: float) -> Any | None:
    """Score against size for the complete models with a known size (None when fewer than 2 or no intervals)."""
    from scorebench.leaderboard.board import Figure, Section

    keep = np.flatnonzero((b.coverage == b.n_tasks) & np.isfinite(b.size))
    if len(keep) < 2 or not b.n_boot:
        return None
    mean_av = b.results["mean (available)"]
    low, high = mean_av["ci_low"][keep], mean_av["ci_high"][keep]
    dominated = pareto_dominated(b.size[keep], low, high)
    names = [b.systems[i] for i in keep]
    svg = pareto_plot(names, b.size[keep], 100 * mean_av["score"][keep], 100 * low, 100 * high, dominated)
    p_data = pd.DataFrame({"section": "incomplete-pareto", "system": names, "n_parameters": b.size[keep],
                           "value": mean_av["score"][keep], "ci_low": low, "ci_high": high, "dominated": dominated})
    caption = (f"Mean (Task) ×100 against parameters (log scale) for the {len(keep)} models that ran every task "
               f"and report a size; bars: {_how(b, ci)}. A model is dominated (grey) only when a model no larger has "
               f"an interval entirely above its own; {int((~dominated).sum())} are not (labelled).")
    return Section("incomplete-pareto", "Score against model size", "", (), (), p_data,
                   (Figure("pareto-size", caption, svg),))


def incomplete_sections(ctx: Any, block: Any) -> list:
    """The sections of an ``[incomplete]`` block (see the module docstring)."""
    b = _prepare(ctx, block)
    ci = ctx.spec.ci
    sections = [_main_section(b, ci), _agreement_section(b), _moves_section(b, block.top)]
    pareto = _pareto_section(b, ci)
    return sections + ([pareto] if pareto is not None else [])
