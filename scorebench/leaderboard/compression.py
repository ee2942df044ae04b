r"""Board section: how well a few items predict each held-out system's benchmark score.

Benchmark compression in the sense of tinyBenchmarks (Maia Polo et al., 2024), laid out as a
selection x scoring design on held-out systems. For each benchmark (a systems x items 0/1
matrix) and each of ``splits`` seeded train/test splits of the systems:

1. a share of the systems is held out; a 2PL (or the chosen model) is fitted on the rest;
2. for each size :math:`k`, three **selections** of :math:`k` items:

   * *IRT-selected*: :func:`scorebench.irt.informative_items` (Fisher information at the
     quantiles of the training abilities);
   * *anchor points*: :func:`scorebench.irt.tiny.anchor_points` (k-means of the items' answer
     patterns over the training systems; weights = cluster sizes);
   * *random*: ``random`` uniformly drawn subsets per split, all scored at once
     (:func:`scorebench.irt.tiny.score_draws`);

3. each selection is scored four ways (**scorings**): *mean* (plain accuracy on the kept items;
   for anchor points the anchor-weighted mean), *IRT* (:math:`\frac1J\sum_j P_j(\hat\theta)`),
   *p-IRT* (observed answers on the kept items plus the model on the rest) and *gp-IRT*
   (:math:`\lambda\,\text{mean} + (1-\lambda)\,\text{p-IRT}`, with
   :math:`\lambda = b^2/(b^2+v)` from the training systems: :math:`b^2` the mean squared error of
   p-IRT, :math:`v` that of the mean, on up to 1,000 of them (seeded) and, for random subsets,
   the first 20 draws; :func:`scorebench.irt.gp_weight`); abilities are EAP from the kept items
   on a fixed grid.

The target is each held-out system's accuracy on all items of the benchmark matrix. Per split:
MAE and RMSE over the held-out systems (for random subsets, averaged over the draws). Reported
per cell: the mean over splits and the range of the per-split values (the lower and higher
order statistics at :math:`(1 \pm \text{ci})/2`): the split-to-split variation at this number
of training systems.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.core.stats import rng_for

__all__ = ["compression_splits", "summarise_splits", "compression_curve", "compression_sections",
           "identical_to_training", "SELECTIONS", "SCORINGS"]

#: The selection rules, in table order.
SELECTIONS = ("IRT-selected", "anchor points", "random")
#: The scoring rules, in table order.
SCORINGS = ("mean", "IRT", "p-IRT", "gp-IRT")

_LAMBDA_DRAWS = 20  # random draws scored on training systems to set gp-IRT's weight
_LAMBDA_SYSTEMS = 1000  # at most this many (seeded) training systems set it


def _errors(estimate: np.ndarray, actual: np.ndarray) -> tuple[float, float]:
    """MAE and RMSE over systems (axis 0), averaged over draws (axis 1)."""
    err = estimate - actual[:, None]
    return float(np.abs(err).mean(axis=0).mean()), float(np.sqrt((err**2).mean(axis=0)).mean())


def _scorings(out: Any, direct: np.ndarray, lam: float) -> dict[str, np.ndarray]:
    return {"mean": direct, "IRT": out.irt, "p-IRT": out.pirt, "gp-IRT": lam * direct + (1 - lam) * out.pirt}


def _gp_lambda(out: Any, direct: np.ndarray, actual: np.ndarray) -> float:
    from scorebench.irt.tiny import gp_weight

    bias2 = float(np.mean((out.pirt - actual[:, None]) ** 2))
    var = float(np.mean((direct - actual[:, None]) ** 2))
    return gp_weight(bias2, var) if bias2 + var > 0 else 0.5


def compression_splits(values: np.ndarray, sizes: list[int], *, model: str = "2pl", test_size: float = 0.2,
                       n_splits: int = 10, n_random: int = 100, seed: int = 0, label: str = "") -> pd.DataFrame:
    """Per-split errors of every (size, selection, scoring) cell on held-out systems.

    Returns one row per (split, size, selection, scoring) with ``mae``, ``rmse``, ``lam`` (the
    gp-IRT weight of that split and selection), ``n_train``, ``n_test``, ``n_identical``
    (held-out systems answering exactly as a training system), ``n_items`` and ``converged``
    (whether that split's IRT fit converged).

    Examples
    --------
    >>> from scorebench.irt.simulate import simulate_2pl
    >>> out = compression_splits(simulate_2pl(300, 40), [10], n_splits=2, n_random=20)
    >>> out.groupby("split").size().tolist(), sorted(out["selection"].unique())
    ([12, 12], ['IRT-selected', 'anchor points', 'random'])
    """
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 2:
        raise InputError(f"compression: expected a systems x items matrix, got shape {values.shape}")
    n, j = values.shape
    bad = [k for k in sizes if not 1 <= k <= j]
    if bad:
        raise InputError(f"compression sizes {bad}: expected between 1 and the number of items ({j})")
    for name, v in (("n_splits", n_splits), ("n_random", n_random)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise InputError(f"compression: {name} expected a positive integer, got {v!r}")
    if np.isnan(values).any() or not np.isin(values, (0.0, 1.0)).all():
        i, c = np.argwhere(~np.isin(values, (0.0, 1.0)))[0]
        raise InputError(f"compression: needs complete 0/1 answers; row {i}, item {c} is {values[i, c]!r}")
    from threadpoolctl import threadpool_limits

    rows = []
    with threadpool_limits(1):  # small matrix products: extra BLAS threads only spin (3x the CPU on a busy machine)
        for split in range(int(n_splits)):
            rows += _split_rows(values, sizes, split, model=model, test_size=test_size, n_random=n_random, seed=seed,
                                label=label)
    return pd.DataFrame(rows)


def _split_rows(values: np.ndarray, sizes: list[int], split: int, *, model: str, test_size: float, n_random: int,
                seed: int, label: str) -> list[dict]:
    """The rows of one train/test split (see :func:`compression_splits`)."""
    from scorebench.irt.compress import accuracy, fit_matrix, informative_items, split_systems
    from scorebench.irt.tiny import anchor_estimate, anchor_points, complete_params, score_draws

    n, j = values.shape
    rows = []
    rng = rng_for(seed, "compression", label, split)
    test, train = split_systems(n, test_size, rng)
    y_tr, y_te = values[train], values[test]
    fit = fit_matrix(y_tr, pd.RangeIndex(j), model, {})
    t_train = fit.abilities["theta"].to_numpy() / fit.theta_scale
    params = complete_params(fit.params, y_tr)
    z_te = accuracy(y_te)
    lam_rows = np.sort(rng.choice(len(train), size=min(len(train), _LAMBDA_SYSTEMS), replace=False))
    y_lam = y_tr[lam_rows]
    z_lam = accuracy(y_lam)
    base = {"benchmark": label, "split": split, "n_items": j, "n_train": len(train), "n_test": len(test),
            "n_identical": identical_to_training(y_tr, y_te), "converged": bool(fit.converged)}
    for k in sizes:
        anchors = anchor_points(y_tr, int(k), seed=int(rng.integers(2**31)), n_init=1)
        picks = {"IRT-selected": (informative_items(fit.params, t_train, k)[None, :], None),
                 "anchor points": (anchors.items[None, :], anchors.weights),
                 "random": (np.argsort(rng.random((int(n_random), j)), axis=1)[:, :k], None)}
        for selection, (draws, weights) in picks.items():
            lam_draws = draws[:_LAMBDA_DRAWS]
            on_train, on_test = score_draws(params, y_lam, lam_draws), score_draws(params, y_te, draws)
            if weights is None:
                direct_tr, direct_te = on_train.mean, on_test.mean
            else:
                direct_tr = anchor_estimate(y_lam[:, draws[0]], weights)[:, None]
                direct_te = anchor_estimate(y_te[:, draws[0]], weights)[:, None]
            lam = _gp_lambda(on_train, direct_tr, z_lam)
            for scoring, estimate in _scorings(on_test, direct_te, lam).items():
                mae, rmse = _errors(estimate, z_te)
                rows.append({**base, "size": int(k), "selection": selection, "scoring": scoring, "mae": mae,
                             "rmse": rmse, "lam": lam, "n_draws": draws.shape[0]})
    return rows


def summarise_splits(splits: pd.DataFrame, ci: float = 0.95) -> pd.DataFrame:
    """Mean over splits and the range of the per-split values of every cell.

    ``mae_low``/``mae_high`` (and ``rmse_low``/``rmse_high``) are the lower and higher order
    statistics at :math:`(1-\\text{ci})/2` and :math:`(1+\\text{ci})/2` of the per-split values
    (with 10 splits and ci = 0.95: the smallest and the largest): how much the error varies
    from one train/test split to another, not an interval for the mean.

    Examples
    --------
    >>> s = pd.DataFrame({"benchmark": "b", "size": 5, "selection": "random", "scoring": "mean",
    ...                   "split": range(4), "mae": [0.1, 0.2, 0.3, 0.4], "rmse": 0.5, "lam": 0.5,
    ...                   "n_items": 9, "n_train": 8, "n_test": 2, "n_identical": 0, "n_draws": 3})
    >>> summarise_splits(s)[["mae", "mae_low", "mae_high", "n_splits"]].round(3).values.tolist()
    [[0.25, 0.1, 0.4, 4.0]]
    """
    if not 0 < ci < 1:
        raise InputError(f"ci: expected a level in (0, 1), got {ci!r}")
    alpha = (1 - ci) / 2
    keys = ["benchmark", "size", "selection", "scoring"]
    grouped = splits.groupby(keys, sort=False)
    cols = [c for c in ("mae", "rmse", "lam", "n_identical", "n_test", "n_train", "n_items", "n_draws", "converged")
            if c in splits.columns]
    out = grouped[cols].mean()
    for m in ("mae", "rmse"):
        out[f"{m}_low"] = grouped[m].quantile(alpha, interpolation="lower")
        out[f"{m}_high"] = grouped[m].quantile(1 - alpha, interpolation="higher")
    out["n_splits"] = grouped.size()
    return out.reset_index()


def compression_curve(values: np.ndarray, sizes: list[int], *, model: str = "2pl", test_size: float = 0.2,
                      n_splits: int = 10, n_random: int = 100, seed: int = 0, ci: float = 0.95,
                      label: str = "") -> pd.DataFrame:
    """The selection x scoring grid: :func:`compression_splits` summarised by :func:`summarise_splits`.

    Examples
    --------
    >>> from scorebench.irt.simulate import simulate_2pl
    >>> out = compression_curve(simulate_2pl(400, 80, slopes=(0.8, 2.5)), [10], n_splits=2, n_random=20)
    >>> cell = out.set_index(["selection", "scoring"])["rmse"]
    >>> bool(cell["IRT-selected", "p-IRT"] < cell["random", "mean"])
    True
    """
    return summarise_splits(compression_splits(values, sizes, model=model, test_size=test_size, n_splits=n_splits,
                                               n_random=n_random, seed=seed, label=label), ci)


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


#: Published tinyBenchmarks errors (Maia Polo et al., 2024, 100 anchor items, gp-IRT, MAE on the full benchmark).
PUBLISHED_MAE = {"ARC": 0.017, "GSM8K": 0.020, "WinoGrande": 0.015, "HellaSwag": 0.015, "TruthfulQA": 0.011}


def _cell(r: Any, m: str = "mae") -> str:
    return f"{100 * r[m]:.2f} [{100 * r[m + '_low']:.2f}, {100 * r[m + '_high']:.2f}]"


def _overlaps(data: pd.DataFrame) -> list[str]:
    """Per (benchmark, size): the best cell by mean MAE and how many other cells' split ranges reach it."""
    out = []
    for (bench, k), d in data.groupby(["benchmark", "size"], sort=False):
        best = d.loc[d["mae"].idxmin()]
        rest = d.drop(index=best.name)
        overlap = int(((rest["mae_low"] <= best["mae_high"]) & (rest["mae_high"] >= best["mae_low"])).sum())
        out.append(f"{bench} k = {k}: best {best['selection']}, {best['scoring']} ({100 * best['mae']:.2f}); "
                   f"{overlap} of {len(rest)} other cells overlap its range")
    return out


def _convergence(data: pd.DataFrame) -> str:
    """A sentence naming the benchmarks whose IRT fit did not converge in some splits."""
    share = data.groupby("benchmark", sort=False)["converged"].first()
    n = int(data["n_splits"].max())
    bad = [f"{b} ({round((1 - v) * n)} of {n} splits)" for b, v in share.items() if v < 1]
    if not bad:
        return "Every split's IRT fit converged."
    return ("IRT fits that stopped unconverged (iteration limit): " + ", ".join(bad) + "; there the fitted item "
            "parameters are unstable from split to split (e.g. a runaway slope), which shows as wide ranges in the "
            "IRT-based columns: read those cells with that caveat (the plain and anchor-weighted means do not score "
            "with the fit).")


def compression_sections(ctx: Any, block: Any) -> list:
    """The section of a ``[compression]`` block: one table row per (benchmark, size, selection), one figure."""
    from scorebench.leaderboard.board import Figure, Section
    from scorebench.leaderboard.items_board import response_matrix_of

    spec = ctx.spec
    frames = []
    for name in block.sources:
        wide = response_matrix_of(ctx.table(name), block.layout)
        sizes = [k for k in block.sizes if k <= wide.shape[1]]
        frames.append(compression_splits(wide.to_numpy(), sizes, model=block.model, test_size=block.test_size,
                                          n_splits=block.splits, n_random=block.random, seed=spec.seed, label=name))
    data = summarise_splits(pd.concat(frames, ignore_index=True), spec.ci)
    wide = data.set_index(["benchmark", "size", "selection", "scoring"])
    rows = []
    for (bench, k, selection), _ in data.groupby(["benchmark", "size", "selection"], sort=False):
        cells = [_cell(wide.loc[(bench, k, selection, s)]) for s in SCORINGS]
        first = wide.loc[(bench, k, selection, "gp-IRT")]
        rows.append((bench, str(k), selection, *cells, f"{first['lam']:.2f}", f"{int(first['n_items'])}",
                     f"{first['n_test']:.0f} ({first['n_identical']:.0f} identical)"))
    n_splits, n_draws = block.splits, block.random
    published = ", ".join(f"{b} {v:.3f}" for b, v in PUBLISHED_MAE.items())
    note = (f"What is estimated: each held-out system's accuracy on all the items of the benchmark matrix, i.e. the "
            f"~100-item tinyBenchmarks set itself (Maia Polo et al., 2024), from k of those items. {block.test_size:.0%} "
            f"of the systems are held out, {n_splits} times over (seeded splits); a {block.model.upper()} model is "
            "fitted on the rest each time. Rows: how the k items are chosen — IRT-selected (Fisher information at "
            "the training abilities' quantiles), anchor points (tinyBenchmarks: k-means of the items' right/wrong "
            "patterns over the training systems, the item nearest each centroid, weighted by its cluster's size) or "
            f"random ({n_draws} subsets per split, {n_splits * n_draws:,} per size in all). Columns: how they are "
            "scored — mean (plain accuracy on the k items; anchor points: weighted by cluster size), IRT (the "
            "model's expected score on all items at the ability estimated from the k answers), p-IRT (the k "
            "observed answers plus the model's expected score on the other items) and gp-IRT (λ·mean + "
            "(1−λ)·p-IRT, λ = b²/(b²+v) with b² p-IRT's and v the mean's squared error on the training "
            "systems; λ shown, averaged over splits). Cells: mean absolute error in percentage points of accuracy, "
            f"mean over the {n_splits} splits (random: also over the draws) [range over splits]. What the range "
            "covers: the split-to-split variation of the MAE at this number of training systems (the lowest and "
            f"highest of the {n_splits} per-split values), not a confidence interval for the mean and not the "
            "variation over held-out systems; where two cells' ranges overlap, this board does not separate them. "
            "board.csv also has the RMSE. Held-out systems answering every item exactly as a training system are "
            "counted (mean per split) and kept. Published tinyBenchmarks errors for reference (100 anchor items "
            f"of the full benchmark, gp-IRT, MAE as a share): {published}. They are not the same target — they "
            "estimate the full benchmark (thousands of items) from 100 items, here k ≤ 50 of the ~100 items "
            "estimate those ~100 — and come from other training systems, so a difference of a few tenths of a "
            "point is not a disagreement. Best cell per benchmark and size, and how many others overlap it: "
            + "; ".join(_overlaps(data)) + ". " + _convergence(data))
    figure = Figure("compression-curve", "MAE of the estimated score against items kept: gp-IRT (solid) and plain "
                    "mean (dashed) per selection; bands: range over splits (gp-IRT)", _curve_plot(data))
    columns = ("benchmark", "items kept", "selection", "MAE, mean [range over splits]", "MAE, IRT", "MAE, p-IRT",
               "MAE, gp-IRT", "λ (gp-IRT)", "items", "held-out systems (identical to a training one)")
    return [Section("compression", "Benchmark compression: item selection x scoring (tinyBenchmarks estimators)",
                    note, columns, tuple(rows), _long(data), (figure,), filters=(("benchmark", "cat"),))]


def _long(data: pd.DataFrame) -> pd.DataFrame:
    """One row per (benchmark, size, selection, scoring, metric); ``system`` is "selection, scoring"."""
    keep = ["benchmark", "size", "n_items", "n_train", "n_test", "n_splits"]
    frames = [data[keep].assign(system=data["selection"] + ", " + data["scoring"], metric=m, value=data[m],
                                ci_low=data[f"{m}_low"], ci_high=data[f"{m}_high"]) for m in ("mae", "rmse")]
    out = pd.concat(frames, ignore_index=True).rename(columns={"benchmark": "task"})
    return out.assign(section="compression")[["section", "task", "system", "metric", "size", "value", "ci_low",
                                              "ci_high", "n_items", "n_train", "n_test", "n_splits"]]


_COLORS = {"IRT-selected": "#1f77b4", "anchor points": "#2ca02c", "random": "#d62728"}


def _curve_plot(data: pd.DataFrame) -> str:
    from scorebench.leaderboard.curve_panels import benchmark_panels

    def panel(ax, d):
        for selection, color in _COLORS.items():
            gp = d[(d["selection"] == selection) & (d["scoring"] == "gp-IRT")]
            mean = d[(d["selection"] == selection) & (d["scoring"] == "mean")]
            ax.plot(gp["size"], 100 * gp["mae"], "o-", color=color, label=f"{selection}, gp-IRT", ms=4)
            ax.fill_between(gp["size"], 100 * gp["mae_low"], 100 * gp["mae_high"], color=color, alpha=0.15, lw=0)
            ax.plot(mean["size"], 100 * mean["mae"], "s--", color=color, label=f"{selection}, mean", ms=3, lw=1)

    return benchmark_panels(data, panel, x="size", xlabel="items kept", ylabel="MAE (points)")
