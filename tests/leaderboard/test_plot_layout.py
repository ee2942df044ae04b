"""Board figures read cleanly: no two texts overlap, no legend covers a data point.

Every board figure goes through ``plots.figure_svg``; ``plots.FIGURE_CHECKS`` runs
``layout_problems`` on each drawn figure here, with data shaped like the real boards' (issue
35 item 7, issue 29 item 7). The browser test checks the committed SVGs of every board as well.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("matplotlib")

import scorebench  # noqa: E402
from scorebench.leaderboard import plots  # noqa: E402
from scorebench.leaderboard.friedman import friedman_nemenyi  # noqa: E402
from scorebench.leaderboard.incomplete import pareto_plot  # noqa: E402


@pytest.fixture
def problems():
    found: list[str] = []

    def check(fig):
        found.extend(plots.layout_problems(fig))

    plots.FIGURE_CHECKS.append(check)
    try:
        yield found
    finally:
        plots.FIGURE_CHECKS.remove(check)


def test_the_check_finds_overlaps_and_covered_points(problems):
    def draw(fig):
        ax = fig.subplots()
        ax.plot(np.arange(10), np.arange(10), "o", label="points")
        ax.text(2, 2, "label one")
        ax.text(2, 2, "label two")
        ax.legend(loc="center")

    plots.figure_svg(draw, figsize=(3, 3))
    assert any(p.startswith("overlapping text") for p in problems)
    assert any(p.startswith("legend covers data") for p in problems)


def test_rank_interval_legend_covers_no_point(problems):
    rng = np.random.default_rng(0)
    wide = pd.DataFrame(rng.uniform(size=(10, 8)), index=[f"system_{i}" for i in range(10)])
    rankings = {m: scorebench.aggregate(wide, m, n_boot=100, seed=0) for m in ("mean", "borda", "copeland")}
    plots.rank_interval_chart(rankings)
    assert problems == []


def test_ability_labels_do_not_overlap(problems):
    rng = np.random.default_rng(1)
    n = 22  # ChemBench: 22 systems, abilities clustered
    acc = np.sort(rng.uniform(0.25, 0.7, n))
    theta = (acc - 0.5) * 6 + rng.normal(0, 0.1, n)
    names = [f"Model-{i} (some long name)" for i in range(n)]
    plots.ability_plot(names, theta, theta - 0.1, theta + 0.1, acc)
    assert problems == []


def test_size_plot_labels_the_frontier_without_collisions(problems):
    rng = np.random.default_rng(2)
    n = 50  # MTEB: 50 models with sizes
    size = 10 ** rng.uniform(7, 10, n)
    score = 60 + 5 * np.log10(size) / 10 + rng.normal(0, 1, n)
    low, high = score - 0.8, score + 0.8
    dominated = np.zeros(n, bool)
    dominated[::3] = True
    pareto_plot([f"org/model-{i}-embedding" for i in range(n)], size, score, low, high, dominated)
    assert problems == []


@pytest.mark.parametrize("k", [12, 90])  # GLUE: 90 systems
def test_critical_difference_diagram(problems, k):
    rng = np.random.default_rng(3)
    oriented = rng.normal(size=(k, 20)) + np.arange(k)[:, None] * 0.2
    plots.critical_difference_diagram(friedman_nemenyi(oriented, tuple(f"sys{i}" for i in range(k))))
    assert problems == []


def test_compression_log_axis_ticks(problems):
    from scorebench.leaderboard.compression import _curve_plot

    rows = []
    for bench in ("arc", "gsm8k", "hellaswag", "truthfulqa", "winogrande"):
        for k in (10, 25, 50, 75, 100):
            for selection in ("IRT-selected", "anchor points", "random"):
                for scoring in ("mean", "gp-IRT"):
                    rows.append({"benchmark": bench, "size": k, "selection": selection, "scoring": scoring,
                                 "mae": 0.05, "mae_low": 0.04, "mae_high": 0.06})
    _curve_plot(pd.DataFrame(rows))
    assert problems == []
