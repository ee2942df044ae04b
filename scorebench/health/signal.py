r"""Signal, noise and their ratio for a benchmark (Heineman et al., 2025), monotonicity over
training (Madaan et al., 2024), decision accuracy, and noisy sub-tasks.

For a population of models :math:`M` with (final-checkpoint) scores :math:`m_1, \dots, m_{|M|}`
on a benchmark, and for one model's scores :math:`s_1, \dots, s_n` at its final :math:`n`
training checkpoints (or :math:`n` seeds),

.. math::

    \text{signal}(M) = \frac{\max_{j,k} |m_j - m_k|}{\bar m}
    \quad\text{(relative dispersion)},\qquad
    \text{noise} = \frac{\sigma(s)}{\bar s}
    \quad\text{(relative standard deviation, } \sigma \text{ with divisor } n\text{)},

    \mathrm{SNR} = \frac{\text{signal}}{\text{noise}}.

These are the definitions of Heineman et al. (2025), Sec. 2, and of the authors' reference code
(``snr/metrics.py`` of allenai/signal-and-noise: ``np.max(|m_j - m_k|) / np.mean(m)`` and
``np.std(s) / np.mean(s)``). When several models have checkpoints, :func:`signal_noise` reports
the mean over models of their relative standard deviations (for one model: exactly the paper's
noise).

**Decision accuracy** (Heineman et al., 2025; Magnusson et al., 2025, DataDecide): the share of
model pairs that the small-scale scores :math:`x` order as the large-scale (target) scores
:math:`y` do,

.. math::

    \text{DA}(x, y) = \binom{K}{2}^{-1} \sum_{i<j}
    \mathbb{1}\big[\,\mathbb{1}[x_i > x_j] = \mathbb{1}[y_i > y_j]\,\big].

**Monotonicity** (Madaan et al., 2024): Kendall's :math:`\tau_b` between the training step and
the score over a model's checkpoints; 1 when the score never falls as training proceeds.

**Noisy sub-tasks.** Heineman et al. (2025, Sec. 4.2) improve a multi-task benchmark by
dropping sub-tasks with low SNR. :func:`signal_noise` computes the SNR of the aggregate (the
mean score over sub-tasks) with and without each sub-task; a sub-task is flagged ``noisy``
when leaving it out raises the aggregate's SNR.

References: Heineman, D., Hofmann, V., Magnusson, I., Gu, Y., Smith, N. A., Hajishirzi, H.,
Lo, K., & Dodge, J. (2025). Signal and Noise: A Framework for Reducing Uncertainty in Language
Model Evaluation. arXiv:2508.13144. Madaan, L., Singh, A. K., Schaeffer, R., et al. (2024).
Quantifying Variance in Evaluation Benchmarks. arXiv:2406.10229.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import kendalltau

from scorebench.core.errors import InputError

__all__ = ["relative_dispersion", "relative_std", "signal_to_noise", "decision_accuracy", "monotonicity",
           "signal_noise"]


def _vector(values: Any, name: str, minimum: int) -> np.ndarray:
    try:
        x = np.asarray(values, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        raise InputError(f"{name}: expected numbers") from None
    if x.size < minimum:
        raise InputError(f"{name}: need at least {minimum} scores, got {x.size}")
    if not np.isfinite(x).all():
        raise InputError(f"{name}: scores must be finite (position {int(np.flatnonzero(~np.isfinite(x))[0])} is "
                         f"{x[~np.isfinite(x)][0]})")
    return x


def _relative(spread: float, mean: float, name: str) -> float:
    if mean == 0:
        raise InputError(f"{name}: the mean score is 0, so a relative spread is undefined")
    return float(spread / mean)


def relative_dispersion(scores: Any) -> float:
    r"""Signal: :math:`\max_{j,k}|m_j - m_k| / \bar m` of the models' scores.

    Examples
    --------
    >>> round(relative_dispersion([0.4, 0.5, 0.6]), 12)
    0.4
    """
    m = _vector(scores, "signal scores", 2)
    return _relative(float(m.max() - m.min()), float(m.mean()), "signal")


def relative_std(scores: Any) -> float:
    r"""Noise: :math:`\sigma(s)/\bar s` (population standard deviation) of one model's scores over
    its final checkpoints or seeds.

    Examples
    --------
    >>> round(relative_std([0.49, 0.51, 0.50, 0.50]), 6)
    0.014142
    """
    s = _vector(scores, "noise scores", 2)
    return _relative(float(s.std()), float(s.mean()), "noise")


def signal_to_noise(signal_scores: Any, noise_scores: Any) -> float:
    """SNR = :func:`relative_dispersion` of ``signal_scores`` / :func:`relative_std` of ``noise_scores``.

    Examples
    --------
    >>> round(signal_to_noise([0.4, 0.5, 0.6], [0.49, 0.51, 0.50, 0.50]), 3)
    28.284
    """
    noise = relative_std(noise_scores)
    signal = relative_dispersion(signal_scores)
    return float(np.inf) if noise == 0 else signal / noise


def decision_accuracy(small: Any, large: Any) -> float:
    """Share of model pairs ordered alike by small-scale and large-scale scores (see the module docstring).

    Examples
    --------
    >>> decision_accuracy([0.1, 0.2, 0.3], [0.5, 0.7, 0.6])
    0.6666666666666666
    """
    x = _vector(small, "small-scale scores", 2)
    y = _vector(large, "large-scale scores", 2)
    if x.size != y.size:
        raise InputError(f"decision accuracy: {x.size} small-scale and {y.size} large-scale scores; expected one of "
                         "each per model")
    i, j = np.triu_indices(x.size, k=1)
    return float(np.mean((x[i] > x[j]) == (y[i] > y[j])))


def monotonicity(steps: Any, scores: Any) -> float:
    """Kendall's tau-b between training step and score (Madaan et al., 2024); NaN when either is constant.

    Examples
    --------
    >>> monotonicity([1, 2, 3, 4], [0.1, 0.2, 0.15, 0.3])
    0.6666666666666669
    """
    t = _vector(steps, "steps", 2)
    s = _vector(scores, "scores", 2)
    if t.size != s.size:
        raise InputError(f"monotonicity: {t.size} steps and {s.size} scores")
    if np.ptp(t) == 0 or np.ptp(s) == 0:
        return float("nan")
    return float(kendalltau(t, s).statistic)


_REQUIRED = ("system", "value")


def _check_table(table: Any, over: str | None, task: str | None, scale: str | None) -> pd.DataFrame:
    if not isinstance(table, pd.DataFrame):
        raise InputError(f"signal_noise: expected a DataFrame, got {type(table).__name__}")
    need = [*_REQUIRED, *(c for c in (over, task, scale) if c)]
    missing = [c for c in need if c not in table.columns]
    if missing:
        raise InputError(f"signal_noise: missing column(s) {missing}; expected 'system', 'value'"
                         + (f", {over!r} (checkpoint step or seed)" if over else "")
                         + (f", {task!r}" if task else "") + (f", {scale!r}" if scale else "")
                         + f"; got {list(table.columns)}")
    value = pd.to_numeric(table["value"], errors="coerce")
    bad = ~np.isfinite(value.to_numpy(dtype=np.float64, na_value=np.nan))
    if bad.any():
        rows = list(table.index[bad][:5])
        raise InputError(f"signal_noise: column 'value' must hold finite numbers; rows {rows} do not")
    out = table.assign(value=value.astype(np.float64))
    if over:
        step = pd.to_numeric(out[over], errors="coerce")
        if step.isna().any():
            raise InputError(f"signal_noise: column {over!r} must hold numbers (checkpoint steps or seeds); "
                             f"rows {list(out.index[step.isna()][:5])} do not")
        out[over] = step
        keys = [c for c in ("system", over, task, scale) if c]
        dup = out.duplicated(keys)
        if dup.any():
            raise InputError(f"signal_noise: more than one score per {tuple(keys)}; first repeated rows "
                             f"{list(out.index[dup][:5])}")
    return out


def _one(frame: pd.DataFrame, over: str | None, last: int, seeds: bool) -> dict[str, float]:
    """Signal, noise, SNR, monotonicity of one benchmark (rows of one task and scale)."""
    if over is None:
        finals = frame.groupby("system", sort=True)["value"].mean()
        noise = float("nan")
        mono = float("nan")
    else:
        ordered = frame.sort_values(["system", over], kind="stable")
        groups = ordered.groupby("system", sort=True)
        finals = groups["value"].mean() if seeds else groups["value"].last()
        tails = [g["value"].to_numpy()[-last:] if not seeds else g["value"].to_numpy() for _, g in groups]
        rel = [relative_std(t) for t in tails if t.size >= 2]
        noise = float(np.mean(rel)) if rel else float("nan")
        mono_each = [] if seeds else [monotonicity(g[over], g["value"]) for _, g in groups if len(g) >= 2]
        mono_each = [m for m in mono_each if np.isfinite(m)]
        mono = float(np.mean(mono_each)) if mono_each else float("nan")
    signal = relative_dispersion(finals.to_numpy()) if len(finals) >= 2 else float("nan")
    snr = signal / noise if np.isfinite(noise) and noise > 0 else (float("inf") if noise == 0 else float("nan"))
    return {"n_systems": int(len(finals)), "signal": signal, "noise": noise, "snr": snr, "monotonicity": mono,
            "_finals": finals}


def signal_noise(table: pd.DataFrame, *, over: str | None = "step", last: int = 5, seeds: bool = False,
                 task: str | None = None, scale: str | None = None, subtasks: bool = True) -> pd.DataFrame:
    """Signal, noise, SNR, monotonicity and decision accuracy per benchmark (task) and scale.

    Parameters
    ----------
    table : DataFrame
        Long scores: ``system``, ``value`` and the columns named by ``over``, ``task``, ``scale``.
    over : str or None
        Column of the replicate index: training step (default ``"step"``) or seed. ``None``: one
        score per system, so only the signal is defined.
    last : int
        Number of final checkpoints whose relative standard deviation is the noise.
    seeds : bool
        ``over`` holds seeds, not steps: the signal uses each system's mean over seeds and the
        noise the relative standard deviation over all its seeds (no monotonicity).
    task : str, optional
        Column of the benchmark or sub-task; each gets its own row. With ``subtasks`` and more
        than one task, an ``(aggregate)`` row (mean over tasks per system and step) is added and
        each task gets ``snr_without`` (the aggregate's SNR without it) and ``noisy``.
    scale : str, optional
        Column of the model scale (e.g. parameter count, numeric); the largest scale is the
        target and every smaller scale gets its ``decision_accuracy`` against it (systems present
        at both).

    Returns
    -------
    DataFrame
        One row per (task, scale): ``n_systems``, ``signal``, ``noise``, ``snr``,
        ``monotonicity``, ``decision_accuracy``, and for sub-tasks ``snr_without``, ``noisy``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> rows = [{"system": s, "step": t, "value": 0.3 + 0.1 * s + 0.002 * t + rng.normal(0, 0.005)}
    ...         for s in range(4) for t in range(10)]
    >>> out = signal_noise(pd.DataFrame(rows))
    >>> bool(out.loc[0, "snr"] > 10), bool(out.loc[0, "monotonicity"] > 0.5)
    (True, True)
    """
    if isinstance(last, bool) or not isinstance(last, (int, np.integer)) or last < 2:
        raise InputError(f"last: expected an integer >= 2 (checkpoints in the noise), got {last!r}")
    data = _check_table(table, over, task, scale)
    if over is None and data.duplicated([c for c in ("system", task, scale) if c]).any():
        raise InputError("signal_noise: several scores per system without an 'over' column (step or seed)")
    tasks = list(dict.fromkeys(data[task])) if task else [None]
    scales = sorted(set(data[scale])) if scale else [None]
    rows = []
    for sc in scales:
        at = data if sc is None else data[data[scale] == sc]
        per_task = {}
        for tk in tasks:
            frame = at if tk is None else at[at[task] == tk]
            if len(frame):
                per_task[tk] = frame
        if task and subtasks and len(per_task) > 1:
            agg_keys = ["system", over] if over else ["system"]
            whole = at.groupby(agg_keys, sort=True)["value"].mean().reset_index()
            base = _one(whole, over, last, seeds)
            for tk, frame in per_task.items():
                r = _one(frame, over, last, seeds)
                rest = at[at[task] != tk].groupby(agg_keys, sort=True)["value"].mean().reset_index()
                r["snr_without"] = _one(rest, over, last, seeds)["snr"]
                r["noisy"] = bool(r["snr_without"] > base["snr"])
                rows.append({"task": tk, "scale": sc, **r})
            rows.append({"task": "(aggregate)", "scale": sc, **base, "snr_without": float("nan"), "noisy": False})
        else:
            for tk, frame in per_task.items():
                rows.append({"task": tk, "scale": sc, **_one(frame, over, last, seeds)})
    out = pd.DataFrame(rows)
    out["task"] = out["task"].astype(object).where(out["task"].notna(), "")
    out["decision_accuracy"] = np.nan
    if scale and len(scales) > 1:
        target = scales[-1]
        for tk in out["task"].unique():
            ref = out[(out["task"] == tk) & (out["scale"] == target)]
            if ref.empty:
                continue
            y = ref.iloc[0]["_finals"]
            for idx in out.index[(out["task"] == tk) & (out["scale"] != target)]:
                x = out.at[idx, "_finals"]
                common = x.index.intersection(y.index)
                if len(common) >= 2:
                    out.at[idx, "decision_accuracy"] = decision_accuracy(x[common].to_numpy(), y[common].to_numpy())
    out = out.drop(columns="_finals")
    if not task:
        out = out.drop(columns="task")
    if not scale:
        out = out.drop(columns="scale")
    return out
