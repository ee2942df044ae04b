"""One panel per benchmark of an error-against-item-count figure (compression and adaptive sections)."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

__all__ = ["benchmark_panels"]


def benchmark_panels(data: pd.DataFrame, draw_panel: Callable, *, x: str, xlabel: str, ylabel: str) -> str:
    """An SVG with one log-x panel per ``data["benchmark"]`` (in order of appearance).

    ``draw_panel(ax, rows)`` draws one benchmark's lines on ``ax``; the panel then gets the item
    counts ``rows[x]`` as its only, plain-number ticks (log-axis labels collide), the benchmark
    as title, ``xlabel``, a y axis from 0, and the first panel ``ylabel`` and the legend.
    """
    from scorebench.leaderboard.plots import figure_svg, label

    names = list(dict.fromkeys(data["benchmark"]))

    def draw(fig):
        axes = fig.subplots(1, len(names), squeeze=False)[0]
        for ax, name in zip(axes, names):
            rows = data[data["benchmark"] == name]
            draw_panel(ax, rows)
            ticks = sorted(set(rows[x].tolist()))
            ax.set_xscale("log")
            ax.set_xticks(ticks, [f"{int(v)}" for v in ticks], fontsize=7)
            ax.minorticks_off()
            ax.set_title(label(name, 24), fontsize=9)
            ax.set_xlabel(xlabel)
            ax.set_ylim(bottom=0)
        axes[0].set_ylabel(ylabel)
        axes[0].legend(fontsize=7)

    return figure_svg(draw, figsize=(2.4 * len(names) + 1, 3))
