r"""Board section kind ``[adaptive]``: adaptive testing replayed on item matrices, beside compression.

A spec block::

    [adaptive]
    sources = ["ARC", "GSM8K"]      # systems x items 0/1 matrices
    budgets = [10, 25, 50]
    model = "2pl"
    test_size = 0.2
    random = 50                     # random subsets per budget
    se_target = 0.3                 # optional: also stop once SE(theta) reaches this

gives one section from :func:`scorebench.irt.adaptive_replay` (see there for the procedure and
formulas): per benchmark and budget, the RMSE of the predicted full-benchmark accuracy of the
held-out systems for computerized adaptive testing (next item by Fisher information at the
current EAP ability), for the static IRT-selected subset of :mod:`scorebench.irt.compress`, and
for random subsets, each with a percentile interval over resamples of the held-out systems;
and a figure of the three curves.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from scorebench.core.errors import InputError
from scorebench.leaderboard.board import Figure, Section

__all__ = ["AdaptiveSpec", "parse_adaptive", "adaptive_sections"]

_METHODS = (("adaptive", "adaptive (CAT)", "#2ca02c", "o-"), ("static_irt", "static IRT items", "#1f77b4", "^-"),
            ("random", "random items", "#d62728", "s--"))


@dataclass(frozen=True)
class AdaptiveSpec:
    """Adaptive testing replay (:mod:`scorebench.leaderboard.adaptive_board`)."""

    sources: tuple[str, ...]
    budgets: tuple[int, ...] = (10, 25, 50)
    model: str = "2pl"
    test_size: float = 0.2
    random: int = 50
    se_target: float | None = None
    layout: str = "systems_x_items"


def parse_adaptive(data: Any, where: str) -> AdaptiveSpec:
    """The ``[adaptive]`` table of a spec (errors name ``where`` and the key).

    Examples
    --------
    >>> parse_adaptive({"sources": ["a"], "budgets": [25, 10]}, "b.toml: adaptive").budgets
    (10, 25)
    >>> parse_adaptive({"sources": ["a"], "budgets": [0]}, "b.toml: adaptive")
    Traceback (most recent call last):
    ...
    scorebench.core.errors.InputError: b.toml: adaptive: 'budgets' expected a non-empty list of positive integers, got [0]
    """
    from scorebench.irt import MODELS
    from scorebench.leaderboard.spec import SpecReader

    r = SpecReader(data, where)
    budgets = r.get("budgets", list, [10, 25, 50])
    if not budgets or not all(isinstance(k, int) and not isinstance(k, bool) and k >= 1 for k in budgets):
        raise InputError(f"{where}: 'budgets' expected a non-empty list of positive integers, got {budgets!r}")
    target = r.get("se_target", (int, float), None)
    spec = AdaptiveSpec(sources=r.strings("sources", required=True), budgets=tuple(sorted(set(budgets))),
                        model=r.get("model", str, "2pl"), test_size=float(r.get("test_size", (int, float), 0.2)),
                        random=r.get("random", int, 50), se_target=None if target is None else float(target),
                        layout=r.get("layout", str, "systems_x_items"))
    r.done()
    if not 0 < spec.test_size < 1 or spec.random < 1:
        raise InputError(f"{where}: 'test_size' must be in (0, 1) and 'random' >= 1")
    if spec.se_target is not None and not spec.se_target > 0:
        raise InputError(f"{where}: 'se_target' must be > 0")
    if spec.layout not in ("items_x_systems", "systems_x_items"):
        raise InputError(f"{where}: layout {spec.layout!r} is not 'items_x_systems' or 'systems_x_items'")
    if spec.model not in MODELS:
        raise InputError(f"{where}: model {spec.model!r} is not one of {list(MODELS)}")
    return spec


def adaptive_sections(ctx: Any, block: AdaptiveSpec) -> list[Section]:
    """The replay section of an ``[adaptive]`` block: one row per (benchmark, budget), one figure."""
    from scorebench.irt.adaptive import adaptive_replay
    from scorebench.leaderboard.items_board import response_matrix_of

    spec = ctx.spec
    n_boot = max(spec.n_boot, 1)
    frames = []
    for name in block.sources:
        wide = response_matrix_of(ctx.table(name), block.layout)
        budgets = [k for k in block.budgets if k <= wide.shape[1]]
        frames.append(adaptive_replay(wide.to_numpy(), budgets, model=block.model, test_size=block.test_size,
                                      n_random=block.random, n_boot=n_boot, seed=spec.seed, ci=spec.ci,
                                      se_target=block.se_target, label=name))
    data = pd.concat(frames, ignore_index=True)
    f = lambda v: f"{100 * v:.2f}"  # noqa: E731  (percentage points)
    wide = data.pivot_table(index=["benchmark", "budget"], columns="method", values=["rmse", "ci_low", "ci_high",
                                                                                      "mean_se", "n_items"],
                            sort=False)
    rows = []
    for (bench, budget), r in wide.iterrows():
        cells = [f"{f(r[('rmse', m)])} [{f(r[('ci_low', m)])}, {f(r[('ci_high', m)])}]" for m, *_ in _METHODS]
        rows.append((str(bench), str(budget), *cells, f"{r[('mean_se', 'adaptive')]:.3f}",
                     f"{r[('mean_se', 'static_irt')]:.3f}", f"{r[('n_items', 'adaptive')]:.1f}",
                     f"{r[('rmse', 'adaptive')] / r[('rmse', 'static_irt')]:.2f}"))
    stop = (f"; each test also stops once SE(θ) ≤ {block.se_target:g} (items: mean given)" if block.se_target
            else "")
    note = (f"Offline replay of computerized adaptive testing on the recorded answers (Fluid Benchmarking, Hofmann "
            f"et al., 2025). {block.test_size:.0%} of each benchmark's systems are held out (seeded); a "
            f"{block.model.upper()} model fitted on the others is the item bank. Adaptive: start at θ = 0, give the "
            f"unused item with the largest Fisher information at the current EAP ability, update, up to the "
            f"budget{stop}. Static IRT: the same informative items for every system (as in the compression section). "
            f"Both predict the full-benchmark accuracy as the expected proportion right at the final ability, "
            f"linearly calibrated on the training systems run the same way. Random: plain accuracy on random items, "
            f"{block.random} draws. Cells: RMSE in percentage points against the actual full-benchmark accuracy "
            f"[{spec.ci:.0%} percentile interval over {n_boot} resamples of the held-out systems]; SE: mean "
            f"posterior SD of θ; ratio < 1: adaptive beats the static subset.")
    columns = ("benchmark", "items given", "RMSE, adaptive [95%]", "RMSE, static IRT [95%]", "RMSE, random [95%]",
               "SE(θ) adaptive", "SE(θ) static", "items (adaptive)", "ratio adaptive / static")
    long = data.rename(columns={"benchmark": "task", "method": "system"}).assign(section="adaptive", metric="rmse")
    long = long.rename(columns={"rmse": "value"})[["section", "task", "system", "metric", "budget", "value", "ci_low",
                                                   "ci_high", "mean_se", "n_items", "n_items_total", "n_train",
                                                   "n_test"]]
    figure = Figure("adaptive-curve", "RMSE of the predicted full score against items given: adaptive testing "
                    "(green), static IRT-selected items (blue) and random items (red, dashed); bands: intervals over "
                    "held-out systems", _curve_plot(data))
    return [Section("adaptive", "Adaptive testing vs static IRT-selected and random items (held-out systems)", note,
                    columns, tuple(rows), long, (figure,), filters=(("benchmark", "cat"),))]


def _curve_plot(data: pd.DataFrame) -> str:
    from scorebench.leaderboard.curve_panels import benchmark_panels

    def panel(ax, d):
        for method, text, color, style in _METHODS:
            m = d[d["method"] == method]
            x = m["budget"].to_numpy()
            ax.plot(x, 100 * m["rmse"], style, color=color, label=text, ms=4)
            ax.fill_between(x, 100 * m["ci_low"], 100 * m["ci_high"], color=color, alpha=0.15, lw=0)

    return benchmark_panels(data, panel, x="budget", xlabel="items given", ylabel="RMSE (points)")
