r"""Anytime-valid confidence sequences for bounded means and paired differences.

A fixed-n interval is valid only at the sample size chosen in advance; looking at it after
every batch and stopping when it excludes zero inflates the error far above ``alpha``. A
confidence sequence :math:`(C_t)_{t \ge 1}` holds at every time at once,

.. math:: P(\exists t: \mu \notin C_t) \le \alpha,

so results may be checked after every item and the evaluation stopped whenever the answer
is clear.

:func:`betting_cs` is the hedged-capital betting confidence sequence of Waudby-Smith &
Ramdas (2023, JRSS-B 86(1), Theorem 3 with the predictable plug-in bets of their eq. (26)):
for observations :math:`x_i \in [0, 1]` and each candidate mean :math:`m`, the capital

.. math::

    \mathcal K_t(m) = \max\Big\{\theta \prod_{i \le t} (1 + \lambda_i^+(m)(x_i - m)),\;
    (1 - \theta) \prod_{i \le t} (1 - \lambda_i^-(m)(x_i - m))\Big\}, \qquad \theta = \tfrac12,

is a nonnegative supermartingale when :math:`m` is the true mean, so by Ville's inequality
:math:`C_t = \{m : \mathcal K_t(m) < 1/\alpha\}` is a confidence sequence. The bets are

.. math::

    \lambda_t = \sqrt{\frac{2 \log(2/\alpha)}{\hat\sigma_{t-1}^2\, t \log(1 + t)}}, \quad
    \lambda_t^+(m) = \min(\lambda_t, c/m), \quad \lambda_t^-(m) = \min(\lambda_t, c/(1 - m)),

with :math:`c = 1/2`, :math:`\hat\mu_t = (1/2 + \sum_{i \le t} x_i)/(t + 1)` and
:math:`\hat\sigma_t^2 = (1/4 + \sum_{i \le t} (x_i - \hat\mu_i)^2)/(t + 1)`. The set is found
on a grid of candidate means and intersected over time (``running_intersection``), which
keeps the guarantee. Values in other known bounds :math:`[a, b]` are mapped to [0, 1];
paired differences of two [0, 1] scores lie in [-1, 1].

References
----------
Waudby-Smith & Ramdas (2023), "Estimating means of bounded random variables by betting",
JRSS-B 86(1):1–27; Howard, Ramdas, McAuliffe & Sekhon (2021), Annals of Statistics 49(2).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from scorebench.core.errors import InputError
from scorebench.core.validation import check_level, check_positive_int

__all__ = ["betting_cs", "confidence_sequence", "fixed_n_interval"]

_C = 0.5  # truncation of the bets (the paper's c in (0, 1))
_CELLS = 2_000_000  # (time x candidate) cells of log capital held at once


def _bounds(bounds: Sequence[float]) -> tuple[float, float]:
    try:
        lo, hi = (float(b) for b in bounds)
    except (TypeError, ValueError):
        raise InputError(f"bounds: expected (low, high), got {bounds!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise InputError(f"bounds: expected finite low < high, got {bounds!r}")
    return lo, hi


def _bets(x: np.ndarray, alpha: float) -> np.ndarray:
    """Predictable plug-in bets lambda_t (before truncation), t = 1..n."""
    n = x.size
    t = np.arange(1, n + 1, dtype=np.float64)
    mu = (0.5 + np.cumsum(x)) / (t + 1)  # mu_hat_t, uses x_1..x_t
    sq = np.cumsum((x - mu) ** 2)
    sigma2 = (0.25 + sq) / (t + 1)  # sigma2_hat_t
    prev = np.concatenate(([0.25], sigma2[:-1]))  # sigma2_hat_{t-1}, predictable
    return np.sqrt(2 * math.log(2 / alpha) / (prev * t * np.log1p(t)))


def betting_cs(x: ArrayLike, *, alpha: float = 0.05, bounds: Sequence[float] = (0.0, 1.0),
               grid: int = 1000, running_intersection: bool = True) -> pd.DataFrame:
    r"""Hedged-capital betting confidence sequence for the mean of bounded observations.

    Parameters
    ----------
    x : sequence of float
        Observations in arrival order, each within ``bounds``.
    alpha : float
        The probability that the sequence ever misses the mean.
    bounds : (low, high)
        Known bounds of every observation ((-1, 1) for a paired difference of [0, 1] scores).
    grid : int
        Candidate means tried (an interval end is accurate to ``(high - low) / grid``; the
        reported interval is widened outward to grid points, so it stays valid).
    running_intersection : bool
        Intersect the sets over time (still valid; never widens).

    Returns
    -------
    DataFrame
        One row per time ``t``: ``t, mean, lower, upper``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> cs = betting_cs(rng.random(2000) < 0.3, grid=400)
    >>> row = cs.iloc[-1]
    >>> bool(row.lower < 0.3 < row.upper), round(float(row.upper - row.lower), 2)
    (True, 0.08)
    """
    check_level(alpha, "alpha")
    grid = check_positive_int(grid, "grid", minimum=10)
    lo, hi = _bounds(bounds)
    raw = np.asarray(x, dtype=np.float64).ravel()
    if raw.size == 0:
        raise InputError("a confidence sequence needs at least one observation")
    if not np.isfinite(raw).all():
        raise InputError("observations must be finite")
    outside = (raw < lo) | (raw > hi)
    if outside.any():
        raise InputError(f"observation {raw[outside][0]!r} (position {int(np.flatnonzero(outside)[0])}) lies outside "
                         f"the bounds [{lo:g}, {hi:g}]; a betting confidence sequence needs known bounds")
    z = (raw - lo) / (hi - lo)
    n = z.size
    m = (np.arange(grid + 1) / grid)[1:-1]  # candidate means strictly inside (0, 1)
    lam = _bets(z, alpha)
    threshold = math.log(1 / alpha)
    step = 1.0 / grid
    lower, upper = np.empty(n), np.empty(n)
    carry_plus, carry_minus = np.zeros(m.size), np.zeros(m.size)
    rows = max(1, _CELLS // m.size)
    for s in range(0, n, rows):  # cumulative log capital over time, a block of times at once
        e = min(n, s + rows)
        diff = z[s:e, None] - m[None, :]
        log_plus = carry_plus + np.cumsum(np.log1p(np.minimum(lam[s:e, None], _C / m) * diff), axis=0)
        log_minus = carry_minus + np.cumsum(np.log1p(-np.minimum(lam[s:e, None], _C / (1 - m)) * diff), axis=0)
        carry_plus, carry_minus = log_plus[-1], log_minus[-1]
        keep = np.logaddexp(log_plus, log_minus) + math.log(0.5) < threshold
        anything = keep.any(axis=1)
        first = np.argmax(keep, axis=1)
        last = m.size - 1 - np.argmax(keep[:, ::-1], axis=1)
        # outward to the next grid point, so grid rounding never makes the set too small
        a = np.maximum(0.0, m[first] - step)
        b = np.minimum(1.0, m[last] + step)
        if not anything.all():  # every candidate rejected: narrower than the grid; keep the estimate's cell
            centre = np.clip(np.cumsum(z)[s:e] / np.arange(s + 1, e + 1), 0, 1)
            a = np.where(anything, a, np.maximum(0.0, centre - step))
            b = np.where(anything, b, np.minimum(1.0, centre + step))
        lower[s:e], upper[s:e] = a, b
    if running_intersection:
        lower, upper = np.maximum.accumulate(lower), np.minimum.accumulate(upper)
        crossed = lower > upper  # possible only through grid rounding; keep a valid cell
        lower[crossed], upper[crossed] = upper[crossed], lower[crossed]
    scale = hi - lo
    return pd.DataFrame({"t": np.arange(1, n + 1), "mean": np.cumsum(raw) / np.arange(1, n + 1),
                         "lower": lo + scale * lower, "upper": lo + scale * upper})


def fixed_n_interval(x: ArrayLike, *, alpha: float = 0.05) -> pd.DataFrame:
    """The fixed-n Student-t interval recomputed at every t (valid only at a fixed, pre-set t).

    Shown for contrast: peeking at it after every item and stopping at the first exclusion
    is not a level-``alpha`` procedure.
    """
    from scipy import stats

    x = np.asarray(x, dtype=np.float64).ravel()
    t = np.arange(1, x.size + 1)
    mean = np.cumsum(x) / t
    var = np.maximum(np.cumsum(x * x) / t - mean**2, 0.0) * t / np.maximum(t - 1, 1)
    with np.errstate(invalid="ignore"):
        half = stats.t.ppf(1 - alpha / 2, np.maximum(t - 1, 1)) * np.sqrt(var / t)
    half[t < 2] = np.inf
    return pd.DataFrame({"t": t, "mean": mean, "lower": mean - half, "upper": mean + half})


def _system_sequence(wide: pd.DataFrame, system: Any, baseline: str | None, task: Any, *,
                     bounds: Sequence[float] | None, alpha: float, grid: int, path: bool) -> pd.DataFrame:
    """The confidence sequence of one system's column of ``wide`` (units x systems), or of its
    differences from ``baseline``, labelled with the system, baseline and task."""
    values = wide[system].to_numpy(dtype=np.float64)
    lim = bounds if bounds is not None else (0.0, 1.0)
    if baseline is not None:
        values = values - wide[baseline].to_numpy(dtype=np.float64)
        lo, hi = _bounds(lim)
        lim = bounds if bounds is not None else (lo - hi, hi - lo)
    cs = betting_cs(values, alpha=alpha, bounds=lim, grid=grid)
    if not path:
        cs = cs.iloc[[-1]]
    cs.insert(0, "system", system)
    if baseline is not None:
        cs.insert(1, "baseline", baseline)
    if task is not None:
        cs.insert(1 + (baseline is not None), "task", task)
    return cs


def confidence_sequence(table: Any, metric: str, *, baseline: str | None = None, alpha: float = 0.05,
                        bounds: Sequence[float] | None = None, grid: int = 1000, kind: str | None = None,
                        path: bool = False, **kind_options: Any) -> pd.DataFrame:
    """Anytime-valid confidence sequence of each system's mean (or its difference to ``baseline``).

    Units are taken in the table's order of first appearance (the order results arrived);
    every system must be scored on the same units.

    Parameters
    ----------
    table : DataFrame or path
        A result table with a unit key (``id``).
    metric : str
        A per-row metric whose per-unit values lie in ``bounds`` (default [0, 1]; [-1, 1] for
        differences to a baseline).
    baseline : str, optional
        Sequences of ``system - baseline`` per unit instead of each system's mean.
    path : bool
        Every time ``t`` (True) or only the last (False).

    Returns
    -------
    DataFrame
        ``system, [baseline,] [task,] t, mean, lower, upper``.

    Examples
    --------
    >>> t = pd.DataFrame({"system": ["a"] * 400, "id": range(400), "correct": [1, 0, 1, 1] * 100})
    >>> cs = confidence_sequence(t, "accuracy", grid=200)
    >>> cs[["system", "t", "mean"]].values.tolist()
    [['a', 400, 0.75]]
    """
    from scorebench.evaluation.evaluate import evaluate

    check_level(alpha, "alpha")
    scores = evaluate(table, [metric], kind=kind, n_boot=0, per_unit=True, **kind_options)
    key = scores.attrs.get("unit_key") or "row"
    by = [c for c in ("system", "task") if c in scores.columns]
    n_groups = len(scores[by].drop_duplicates())
    units = scores.iloc[: len(scores) - n_groups]
    rows = []
    tasks = units["task"].unique().tolist() if "task" in units.columns else [None]
    for task in tasks:
        sub = units if task is None else units[units["task"] == task]
        order = pd.unique(sub[key])
        wide = sub.pivot_table(index=key, columns="system", values="value", aggfunc="first").reindex(order)
        if wide.isna().any().any():
            raise InputError("systems are not scored on the same units; every unit needs a value for every system")
        if baseline is not None and baseline not in wide.columns:
            raise InputError(f"baseline {baseline!r} is not among the systems {list(wide.columns)}")
        rows += [_system_sequence(wide, system, baseline, task, bounds=bounds, alpha=alpha, grid=grid, path=path)
                 for system in wide.columns if system != baseline]
    out = pd.concat(rows, ignore_index=True)
    out.attrs.update({"alpha": alpha, "method": "hedged-capital betting confidence sequence "
                      "(Waudby-Smith & Ramdas 2023), valid at every t simultaneously"})
    return out
