"""Deterministic SVG figures for leaderboards (matplotlib, Agg backend).

Every figure is drawn under fixed rcParams (``svg.hashsalt``, text as paths, DejaVu Sans,
no date metadata), so the same data gives byte-identical SVG. Labels come from untrusted
tables: :func:`label` neutralises mathtext (``$``) and control characters, and matplotlib
XML-escapes text (kept as ``<text>``, ``svg.fonttype = "none"``, which keeps files small).
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["label", "figure_svg", "reliability_grid", "rank_interval_chart", "critical_difference_diagram",
           "ood_curves", "ability_plot", "layout_problems", "place_labels", "FIGURE_CHECKS"]

#: Callables ``check(fig)`` run on every figure after it is drawn and before it is saved; the
#: tests register one that collects :func:`layout_problems` of every board figure.
FIGURE_CHECKS: list[Callable[[Any], None]] = []

_RC = {
    "svg.hashsalt": "scorebench", "svg.fonttype": "none", "font.family": "DejaVu Sans", "font.size": 9,
    "axes.grid": False, "figure.dpi": 100, "savefig.dpi": 100, "path.simplify": False,
    "axes.prop_cycle": None,
}


def label(text: Any, limit: int = 40) -> str:
    """Plot-safe one-line label: no mathtext, no control characters, at most ``limit`` characters.

    Examples
    --------
    >>> label("a$b\\nc")
    'a\\\\$b c'
    """
    text = " ".join(str(text).split())
    text = text.replace("\\", "\\\\").replace("$", "\\$")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from cycler import cycler

    rc = dict(_RC)
    rc["axes.prop_cycle"] = cycler(color=["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                          "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"])
    return plt, rc


def figure_svg(draw, *, figsize: tuple[float, float]) -> str:
    """Run ``draw(fig)`` on a fresh figure under the fixed rcParams and return the SVG text."""
    plt, rc = _pyplot()
    with plt.rc_context(rc):
        fig = plt.figure(figsize=figsize)
        try:
            draw(fig)
            for check in FIGURE_CHECKS:
                check(fig)
            buffer = io.StringIO()
            fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": "scorebench"},
                        bbox_inches="tight")
        finally:
            plt.close(fig)
    return buffer.getvalue()


def _visible_texts(fig) -> list[Any]:
    """Every text a reader sees: titles, axis labels, tick labels inside the view, annotations,
    legend entries and figure texts (empty or hidden ones left out)."""
    from matplotlib.text import Text

    texts: list[Any] = list(fig.texts)
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        texts += [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label, *ax.texts]
        for axis, (lo, hi) in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
            lo, hi = min(lo, hi), max(lo, hi)
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                inside = lo <= tick.get_loc() <= hi if tick.get_loc() is not None else False
                if inside and tick.label1.get_visible():
                    texts.append(tick.label1)
        legend = ax.get_legend()
        if legend is not None:
            texts += list(legend.get_texts())
    if fig.legends:
        for legend in fig.legends:
            texts += list(legend.get_texts())
    return [t for t in texts if isinstance(t, Text) and t.get_visible() and t.get_text().strip()]


def _marker_points(ax) -> np.ndarray:
    """Display coordinates of the data points drawn as markers (lines with markers, scatters)."""
    points = []
    for line in ax.lines:
        if line.get_visible() and line.get_marker() not in (None, "None", "", " ", ","):
            xy = np.column_stack(line.get_data()).astype(np.float64)
            points.append(line.get_transform().transform(xy))
    for coll in ax.collections:
        offsets = coll.get_offsets()
        if coll.get_visible() and len(offsets) and type(coll).__name__ == "PathCollection":
            points.append(coll.get_offset_transform().transform(np.asarray(offsets, dtype=np.float64)))
    return np.concatenate(points) if points else np.empty((0, 2))


def layout_problems(fig, *, pad: float = 0.5) -> list[str]:
    """What a reader would trip on in a drawn figure: overlapping texts, legends over data.

    Two visible texts (tick labels, axis labels, titles, annotations, legend entries) whose
    window extents overlap by more than ``pad`` pixels each way, and a legend whose box
    contains a data point drawn as a marker, are reported, one line each.

    Examples
    --------
    >>> plt, rc = _pyplot()
    >>> fig = plt.figure(figsize=(3, 2)); ax = fig.subplots()
    >>> _ = ax.plot([0.5], [0.5], "o", label="a point"); _ = ax.text(0.5, 0.5, "one"); _ = ax.text(0.5, 0.5, "two")
    >>> _ = ax.legend(loc="center")
    >>> problems = layout_problems(fig); plt.close(fig)
    >>> sorted(p.split(":")[0] for p in problems)
    ['legend covers data', 'overlapping text', 'overlapping text', 'overlapping text']
    """
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    texts = _visible_texts(fig)
    boxes = [t.get_window_extent(renderer) for t in texts]
    problems = []
    for i in range(len(texts)):
        for j in range(i + 1, len(texts)):
            a, b = boxes[i], boxes[j]
            if (min(a.x1, b.x1) - max(a.x0, b.x0) > pad) and (min(a.y1, b.y1) - max(a.y0, b.y0) > pad):
                problems.append(f"overlapping text: {texts[i].get_text()!r} and {texts[j].get_text()!r}")
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is None or not ax.get_visible():
            continue
        box = legend.get_window_extent(renderer)
        points = _marker_points(ax)
        inside = ((points[:, 0] >= box.x0) & (points[:, 0] <= box.x1)
                  & (points[:, 1] >= box.y0) & (points[:, 1] <= box.y1)) if len(points) else np.zeros(0, bool)
        if inside.any():
            problems.append(f"legend covers data: {int(inside.sum())} point(s) under the legend of "
                            f"{ax.get_title() or 'an axes'!r}")
    return problems


#: Where :func:`place_labels` tries a label, in points from its data point (x, y, ha, va).
_LABEL_SPOTS = ((4, 2, "left", "bottom"), (4, -2, "left", "top"), (-4, 2, "right", "bottom"),
                (-4, -2, "right", "top"), (0, 5, "center", "bottom"), (0, -5, "center", "top"),
                (10, 6, "left", "bottom"), (-10, -6, "right", "top"), (10, -6, "left", "top"),
                (-10, 6, "right", "bottom"))


def place_labels(ax, x: Sequence[float], y: Sequence[float], texts: Sequence[str], *, fontsize: float = 7,
                 order: Sequence[int] | None = None) -> list[int]:
    """Label points without overlaps: each label takes the first free spot around its point.

    Labels are placed in ``order`` (default: as given; put the important ones first); a
    spot is free when the label stays inside the axes and overlaps no placed label, no
    other point and no legend. A label with no free spot is left out (the board's table
    lists every system). Returns the indices of the labelled points.
    """
    fig = ax.figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    pts = ax.transData.transform(np.column_stack([np.asarray(x, float), np.asarray(y, float)]))
    taken = []
    legend = ax.get_legend()
    if legend is not None:
        taken.append(legend.get_window_extent(renderer))
    r = 3.0  # a marker's half-size in pixels
    placed: list[int] = []
    for i in (range(len(texts)) if order is None else order):
        if not np.all(np.isfinite(pts[i])):
            continue
        for dx, dy, ha, va in _LABEL_SPOTS:
            ann = ax.annotate(texts[i], (x[i], y[i]), xytext=(dx, dy), textcoords="offset points",
                              ha=ha, va=va, fontsize=fontsize)
            box = ann.get_window_extent(renderer)
            inside = box.x0 >= frame.x0 and box.x1 <= frame.x1 and box.y0 >= frame.y0 and box.y1 <= frame.y1
            others = np.delete(pts, i, axis=0)
            hits_point = bool(((others[:, 0] >= box.x0 - r) & (others[:, 0] <= box.x1 + r)
                               & (others[:, 1] >= box.y0 - r) & (others[:, 1] <= box.y1 + r)).any())
            if inside and not hits_point and not any(box.overlaps(b) for b in taken):
                taken.append(box)
                placed.append(int(i))
                break
            ann.remove()
    return placed


def class_probabilities(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(y, P) of a multiclass or binary table (``p_<class>`` columns or ``p``)."""
    if "p" in frame.columns:
        p = frame["p"].to_numpy(dtype=np.float64)
        return frame["y"].to_numpy().astype(np.int64), np.column_stack([1.0 - p, p])
    cols = sorted((c for c in frame.columns if str(c).startswith("p_")), key=lambda c: int(str(c)[2:]))
    P = frame[cols].to_numpy(dtype=np.float64)
    classes = [int(str(c)[2:]) for c in cols]
    y = np.searchsorted(classes, frame["y"].to_numpy().astype(np.int64))
    return y, P


def reliability_grid(table: pd.DataFrame, *, n_bins: int = 10, ncols: int = 5) -> str:
    """Top-label reliability diagram of every system in ``table`` (one panel each)."""
    from scorebench.metrics.calibration import reliability_diagram
    from scorebench.metrics.calibration._common import top_label

    systems = sorted(table["system"].astype(str).unique().tolist())
    nrows = int(np.ceil(len(systems) / ncols))

    def draw(fig):
        axes = fig.subplots(nrows, ncols, sharex=True, sharey=True, squeeze=False)
        for ax, system in zip(axes.flat, systems):
            y, P = class_probabilities(table[table["system"].astype(str) == system])
            correct, confidence = top_label(y, P)
            d = reliability_diagram(correct, confidence, n_bins=n_bins)
            keep = d.count > 0
            ax.plot([0, 1], [0, 1], color="#999999", lw=0.8, ls="--")
            ax.bar(d.lower, np.where(keep, d.observed_frequency, 0.0), width=d.upper - d.lower, align="edge",
                   color="#9ecae1", edgecolor="#3182bd", lw=0.5)
            mid = (d.lower + d.upper)[keep] / 2
            ax.errorbar(mid, d.observed_frequency[keep],
                        yerr=np.maximum(0.0, [d.observed_frequency[keep] - d.ci_low[keep],
                                              d.ci_high[keep] - d.observed_frequency[keep]]),
                        fmt="none", ecolor="#08306b", lw=0.7)
            ax.set_title(label(system, 24), fontsize=8)
            ax.set_xlim(0, 1)
            ax.set_ylim(0, 1)
        for ax in list(axes.flat)[len(systems):]:
            ax.set_visible(False)
        fig.supxlabel("confidence (top-label probability)")
        fig.supylabel("accuracy")

    return figure_svg(draw, figsize=(2.0 * ncols, 2.0 * nrows + 0.4))


def rank_interval_chart(rankings: Mapping[str, Any]) -> str:
    """Rank (point) and bootstrap rank interval (bar) of each system under each method."""
    names = list(rankings)
    order = list(rankings[names[0]].order)

    def draw(fig):
        ax = fig.subplots()
        offsets = np.linspace(-0.3, 0.3, len(names)) if len(names) > 1 else np.zeros(1)
        for j, (m, r) in enumerate(rankings.items()):
            idx = [r.systems.index(s) for s in order]
            ypos = np.arange(len(order)) + offsets[j]
            ranks = r.ranks[idx].astype(float)
            if r.rank_low is not None:
                lo, hi = r.rank_low[idx], r.rank_high[idx]
                ax.hlines(ypos, lo, hi, color=f"C{j % 10}", lw=2, alpha=0.6)
            ax.plot(ranks, ypos, "o", color=f"C{j % 10}", ms=4, label=label(m))
        ax.set_yticks(np.arange(len(order)), [label(s) for s in order])
        ax.invert_yaxis()
        ax.set_xlabel("rank (1 = best)")
        ax.set_xlim(0.5, len(order) + 0.5)
        # outside the axes, to the right: inside it covered the points of the last ranks
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False)

    return figure_svg(draw, figsize=(7.5, 0.32 * len(order) + 1.2))


def _tick_step(n: int, *, width_pt: float, label_pt: float) -> int:
    """The smallest of 1, 2, 5, 10, 20, 50, ... such that labels of ``label_pt`` points every
    that many of ``n`` evenly spaced ticks over ``width_pt`` points do not touch.

    Examples
    --------
    >>> _tick_step(10, width_pt=460, label_pt=18), _tick_step(90, width_pt=460, label_pt=18)
    (1, 5)
    """
    spacing = width_pt / max(n, 1)
    for magnitude in (1, 10, 100, 1000, 10000):
        for base in (1, 2, 5):
            if spacing * base * magnitude >= label_pt:
                return base * magnitude
    return max(n, 1)


def critical_difference_diagram(result: Any) -> str:
    """Demšar's critical-difference diagram from a :class:`~scorebench.leaderboard.friedman.FriedmanResult`."""
    k = len(result.systems)
    order = np.argsort(result.average_ranks, kind="stable")
    ranks = result.average_ranks[order]
    names = [label(result.systems[i], 28) for i in order]
    cliques = result.cliques()
    half = (k + 1) // 2

    def draw(fig):
        ax = fig.subplots()
        ax.set_xlim(0.5, k + 0.5)
        ax.hlines(0, 1, k, color="black", lw=1)
        step = _tick_step(k, width_pt=8.0 * 72 * 0.8, label_pt=6.0 * len(str(k)) + 6.0)
        for t in range(1, k + 1):
            ax.vlines(t, -0.05, 0.05, color="black", lw=0.8)
            if t == 1 or t % step == 0:  # every rank numbered only where the numbers fit
                ax.text(t, 0.12, str(t), ha="center", va="bottom", fontsize=8)
        ax.hlines(0.45, 1, 1 + result.critical_difference, color="#d62728", lw=2)
        ax.text(1 + result.critical_difference / 2, 0.5, f"CD = {result.critical_difference:.2f}",
                ha="center", va="bottom", fontsize=8, color="#d62728")
        for pos, (r, name) in enumerate(zip(ranks, names)):
            left = pos < half
            row = pos if left else k - 1 - pos
            y = -0.35 - 0.3 * row
            x_text = 0.6 if left else k + 0.4
            ax.plot([r, r, x_text], [0, y, y], color="black", lw=0.7)
            ax.text(x_text + (-0.05 if left else 0.05), y, f"{name} ({r:.2f})", ha="right" if left else "left",
                    va="center", fontsize=8)
        for c, (a, b) in enumerate(cliques):
            y = -0.12 - 0.08 * c
            ax.hlines(y, ranks[a] - 0.03, ranks[b] + 0.03, color="#2c7fb8", lw=3)
        ax.set_ylim(-0.35 - 0.3 * half, 0.8)
        ax.axis("off")

    return figure_svg(draw, figsize=(8.0, 1.2 + 0.3 * half))


def ood_curves(table: pd.DataFrame, *, curve: str = "roc") -> str:
    """ROC or precision-recall curve of each system of an ``ood`` table (``score``, ``is_ood``)."""
    from sklearn.metrics import precision_recall_curve, roc_curve

    systems = sorted(table["system"].astype(str).unique().tolist())

    def draw(fig):
        ax = fig.subplots()
        for j, system in enumerate(systems):
            sub = table[table["system"].astype(str) == system]
            y, s = sub["is_ood"].to_numpy().astype(int), sub["score"].to_numpy(dtype=np.float64)
            if curve == "roc":
                x, yv, _ = roc_curve(y, s)
            else:
                yv, x, _ = precision_recall_curve(y, s)
            ax.plot(x, yv, color=f"C{j % 10}", lw=1.2, label=label(system))
        ax.set_xlabel("false positive rate" if curve == "roc" else "recall")
        ax.set_ylabel("true positive rate" if curve == "roc" else "precision")
        ax.legend(fontsize=7, frameon=False)

    return figure_svg(draw, figsize=(5.0, 4.0))


def ability_plot(systems: list[str], ability: np.ndarray, low: np.ndarray | None, high: np.ndarray | None,
                 accuracy: np.ndarray) -> str:
    """IRT ability (with interval) against raw accuracy, one point per system."""

    def draw(fig):
        ax = fig.subplots()
        if low is not None and high is not None:
            ax.vlines(accuracy, low, high, color="#9ecae1", lw=2)
        ax.plot(accuracy, ability, "o", color="#08519c", ms=4)
        ax.set_xlabel("accuracy (share of items right)")
        ax.set_ylabel("IRT ability θ")
        ax.margins(x=0.15, y=0.08)  # room for labels at the ends
        best_first = np.argsort(-np.asarray(ability, dtype=np.float64), kind="stable")
        shown = place_labels(ax, accuracy, ability, [label(s, 20) for s in systems], order=best_first)
        if len(shown) < len(systems):
            ax.set_title(f"{len(systems) - len(shown)} of {len(systems)} labels left out where they would "
                         "overlap (see the table)", fontsize=7)

    return figure_svg(draw, figsize=(6.0, 4.5))
