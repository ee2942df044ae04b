r"""Board section: how well a few IRT-selected items predict each system's full score.

Benchmark compression in the sense of tinyBenchmarks (Maia Polo et al., 2024) and metabench
(Kipnis et al., 2024), on held-out systems. For each benchmark (a systems x items 0/1 matrix):

1. a share of the systems is held out (seeded); the IRT model is fitted on the rest;
2. for each size :math:`k`, :func:`scorebench.irt.informative_items` picks :math:`k` items
   informative across the training abilities; a held-out system's ability is estimated from
   those items only, and its full score reconstructed as the expected proportion right on all
   items, linearly calibrated on the training systems (as :func:`scorebench.irt.select` does);
3. the baseline is a random subset of the same size scored by its plain accuracy, redrawn
   ``random`` times.

Reported: RMSE between predicted and actual full-benchmark accuracy of the held-out systems,
for IRT selection with a 95% percentile interval from resampling the held-out systems, and for
random subsets the median and 2.5–97.5% range over the draws.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.core.stats import rng_for

__all__ = ["compression_curve", "compression_sections"]


def compression_curve(values: np.ndarray, sizes: list[int], *, model: str = "2pl", test_size: float = 0.2,
                      n_random: int = 50, n_boot: int = 200, seed: int = 0, ci: float = 0.95,
                      label: str = "") -> pd.DataFrame:
    """RMSE of reconstructed full scores on held-out systems, IRT-selected vs random items.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> theta = rng.normal(size=400)
    >>> a, b = rng.uniform(0.8, 2.5, 80), rng.normal(size=80)
    >>> y = (rng.random((400, 80)) < 1 / (1 + np.exp(-a * (theta[:, None] - b)))).astype(float)
    >>> out = compression_curve(y, [10, 20], n_random=20, n_boot=50)
    >>> bool((out["irt_rmse"] < out["random_rmse"]).all())
    True
    """
    from scorebench.irt.compress import _accuracy, _calibrate, _fit, _reconstruct, informative_items
    from scorebench.irt.tiny import pirt_estimate

    values = np.asarray(values, dtype=np.float64)
    n, j = values.shape
    if not 0 < test_size < 1:
        raise InputError(f"test_size: expected a share in (0, 1), got {test_size!r}")
    bad = [k for k in sizes if not 1 <= k <= j]
    if bad:
        raise InputError(f"compression sizes {bad}: expected between 1 and the number of items ({j})")
    rng = rng_for(seed, "compression", label)
    order = rng.permutation(n)
    n_test = max(2, int(round(test_size * n)))
    test, train = order[:n_test], order[n_test:]
    if len(train) < 10:
        raise InputError(f"compression: need at least 10 training systems, got {len(train)}")
    fit = _fit(values[train], pd.RangeIndex(j), model, {})
    t_train = fit.abilities["theta"].to_numpy() / fit.theta_scale
    actual_train, actual = _accuracy(values[train]), _accuracy(values[test])
    boot = rng.integers(n_test, size=(n_boot, n_test))
    alpha = (1 - ci) / 2
    full = _complete_params(fit.params, values[train])
    n_identical = identical_to_training(values[train], values[test])
    rows = []
    for k in sizes:
        cols = informative_items(fit.params, t_train, k)
        e_train, _, _ = _reconstruct(fit.params, values[train], cols)
        c0, c1 = _calibrate(e_train, actual_train)
        e_test, _, _ = _reconstruct(fit.params, values[test], cols)
        sq = (c0 + c1 * e_test - actual) ** 2
        rmse_boot = np.sqrt(sq[boot].mean(axis=1))
        pirt = pirt_estimate(full, values[test][:, cols], cols)  # same fit and items, observed answers kept
        random_rmse, random_pirt = [], []
        for _ in range(n_random):
            pick = rng.choice(j, size=k, replace=False)
            random_rmse.append(np.sqrt(np.mean((values[test][:, pick].mean(axis=1) - actual) ** 2)))
            guess = pirt_estimate(full, values[test][:, pick], pick)
            random_pirt.append(np.sqrt(np.mean((guess - actual) ** 2)))
        random_rmse = np.asarray(random_rmse)
        rows.append({"benchmark": label, "size": int(k), "n_items": j, "n_train": len(train), "n_test": n_test,
                     "irt_rmse": float(np.sqrt(sq.mean())), "irt_low": float(np.quantile(rmse_boot, alpha)),
                     "irt_high": float(np.quantile(rmse_boot, 1 - alpha)),
                     "random_rmse": float(np.median(random_rmse)),
                     "random_low": float(np.quantile(random_rmse, alpha)),
                     "random_high": float(np.quantile(random_rmse, 1 - alpha)),
                     "irt_pirt_rmse": float(np.sqrt(np.mean((pirt - actual) ** 2))),
                     "random_pirt_rmse": float(np.median(random_pirt)), "n_identical": n_identical})
    return pd.DataFrame(rows)


def identical_to_training(train: np.ndarray, test: np.ndarray) -> int:
    """How many held-out systems answer every item exactly as some training system does (their
    full score is then known from training data: a leak that flatters any predictor).

    Examples
    --------
    >>> identical_to_training(np.array([[1, 0, 1], [0, 0, 1]]), np.array([[1, 0, 1], [1, 1, 1]]))
    1
    """
    seen = {row.tobytes() for row in np.ascontiguousarray(train, dtype=np.float64)}
    return int(sum(row.tobytes() in seen for row in np.ascontiguousarray(test, dtype=np.float64)))


def _complete_params(params: np.ndarray, train: np.ndarray) -> np.ndarray:
    """Item parameters with the items the fit left out (constant in training: all right or all
    wrong) given a flat curve at their training proportion, so p-IRT can score every item."""
    out = np.array(params, dtype=np.float64, copy=True)
    missing = np.isnan(out).any(axis=1)
    if missing.any():
        p = np.clip(np.nanmean(train[:, missing], axis=0), 1e-3, 1 - 1e-3)
        out[missing] = np.column_stack([np.zeros(p.size), np.log(p / (1 - p)), np.zeros(p.size), np.ones(p.size)])
    return out


def compression_sections(ctx: Any, block: Any) -> list:
    """The section of a ``[compression]`` block: one table row per (benchmark, size), one curve figure."""
    from scorebench.leaderboard.board import Figure, Section
    from scorebench.leaderboard.items_board import response_matrix_of

    spec = ctx.spec
    frames = []
    for name in block.sources:
        wide = response_matrix_of(ctx.table(name), block.layout)
        sizes = [k for k in block.sizes if k <= wide.shape[1]]
        frames.append(compression_curve(wide.to_numpy(), sizes, model=block.model, test_size=block.test_size,
                                        n_random=block.random, n_boot=max(spec.n_boot, 1), seed=spec.seed,
                                        ci=spec.ci, label=name))
    data = pd.concat(frames, ignore_index=True)
    f = lambda v: f"{100 * v:.2f}"  # noqa: E731  (percentage points)
    rows = tuple((r.benchmark, str(r.size), f"{r.n_items}", f"{r.n_test} ({r.n_identical} identical)",
                  f"{f(r.irt_rmse)} [{f(r.irt_low)}, {f(r.irt_high)}]",
                  f"{f(r.random_rmse)} [{f(r.random_low)}, {f(r.random_high)}]",
                  f"{r.irt_rmse / r.random_rmse:.2f}", f(r.irt_pirt_rmse), f(r.random_pirt_rmse),
                  f"{r.irt_pirt_rmse / r.random_pirt_rmse:.2f}") for r in data.itertuples())
    note = (f"RMSE (percentage points of accuracy) between predicted and actual full-benchmark accuracy of the "
            f"held-out systems ({block.test_size:.0%} of each benchmark's systems, seeded). IRT: {block.model.upper()} "
            f"fitted on the other systems, items chosen by Fisher information across the training abilities, full "
            f"score reconstructed from the subset (EAP ability, expected score, linear calibration on the training "
            f"systems); interval: {spec.ci:.0%} percentile over {max(spec.n_boot, 1)} resamples of the held-out "
            f"systems. Random: plain accuracy on a random subset of the same size, median and {spec.ci:.0%} range "
            f"over {block.random} draws. Ratio < 1: the IRT subset predicts better. What the intervals cover: the "
            "IRT interval, the RMSE over a population of held-out systems like these for this one train/test split "
            "(not the variation over splits); the random range, how the RMSE varies from one random subset to "
            "another (a range of draws, not an interval for a population value). The IRT column mixes item selection "
            "with item scoring: it predicts the full score from the model alone and discards the answers it "
            "observed, while the random column scores plain accuracy. The p-IRT columns score both selections the "
            "same way (tinyBenchmarks' p-IRT, scorebench.irt.pirt_estimate: the observed answers on the kept items "
            "plus the model's expected score on the others, same fit), which separates the two effects. The target "
            "is the score on the ~100 items of each tinyBenchmarks set, not the full benchmark. Published "
            "tinyBenchmarks errors for comparison (100 anchor items, gp-IRT, mean absolute error on the full "
            "benchmark): ARC 0.017, GSM8K 0.020, WinoGrande 0.015, HellaSwag 0.015, TruthfulQA 0.011. Not yet "
            "here: several train/test splits, anchor-point selection and gp-IRT scoring. Held-out systems that answer "
            "every item exactly as some training system does are counted beside the held-out count (kept in the "
            "RMSE; their scores are effectively seen in training).")
    figure = Figure("compression-curve", "RMSE of the predicted full score against subset size: IRT-selected items "
                    "(line, band = interval over held-out systems) and random items (dashed, band = range over "
                    "draws)", _curve_plot(data))
    return [Section("compression", "Benchmark compression: IRT-selected vs random items", note,
                    ("benchmark", "items kept", "items", "held-out systems (answering identically to a training one)", "RMSE, IRT items [95%]",
                     "RMSE, random items [95% range]", "ratio", "RMSE, IRT items, p-IRT",
                     "RMSE, random items, p-IRT (median)", "ratio (p-IRT)"), rows, _long(data),
                    (figure,), filters=(("benchmark", "cat"),))]


def _long(data: pd.DataFrame) -> pd.DataFrame:
    """One row per (benchmark, size, selection): ``system`` is the selection rule, ``task`` the benchmark."""
    keep = ["benchmark", "size", "n_items", "n_train", "n_test"]
    frames = [data[keep].assign(system=name, metric="rmse", value=data[f"{p}_rmse"], ci_low=data[f"{p}_low"],
                                ci_high=data[f"{p}_high"]) for p, name in (("irt", "IRT-selected items"),
                                                                           ("random", "random items"))]
    frames += [data[keep].assign(system=name, metric="rmse", value=data[col], ci_low=np.nan, ci_high=np.nan)
               for col, name in (("irt_pirt_rmse", "IRT-selected items, p-IRT"),
                                 ("random_pirt_rmse", "random items, p-IRT (median over draws)"))]
    out = pd.concat(frames, ignore_index=True).rename(columns={"benchmark": "task"})
    return out.assign(section="compression")[["section", "task", "system", "metric", "size", "value", "ci_low",
                                              "ci_high", "n_items", "n_train", "n_test"]]


def _curve_plot(data: pd.DataFrame) -> str:
    from scorebench.leaderboard.plots import figure_svg, label

    names = list(dict.fromkeys(data["benchmark"]))

    def draw(fig):
        axes = fig.subplots(1, len(names), squeeze=False)[0]
        for ax, name in zip(axes, names):
            d = data[data["benchmark"] == name]
            x = d["size"].to_numpy()
            ax.plot(x, 100 * d["irt_rmse"], "o-", color="#1f77b4", label="IRT items")
            ax.fill_between(x, 100 * d["irt_low"], 100 * d["irt_high"], color="#1f77b4", alpha=0.2, lw=0)
            ax.plot(x, 100 * d["random_rmse"], "s--", color="#d62728", label="random items")
            ax.fill_between(x, 100 * d["random_low"], 100 * d["random_high"], color="#d62728", alpha=0.15, lw=0)
            ax.set_xscale("log")
            # the kept-item counts as the only ticks, plain numbers (log-axis labels collided)
            ax.set_xticks(x, [f"{int(v)}" for v in x], fontsize=7)
            ax.minorticks_off()
            ax.set_title(label(name, 24), fontsize=9)
            ax.set_xlabel("items kept")
            ax.set_ylim(bottom=0)
        axes[0].set_ylabel("RMSE (points)")
        axes[0].legend(fontsize=7)

    return figure_svg(draw, figsize=(2.4 * len(names) + 1, 3))
