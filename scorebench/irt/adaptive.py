r"""Computerized adaptive testing (CAT) from a calibrated item bank, and its offline replay.

**Adaptive test** (:func:`adaptive_test`). With item parameters :math:`(a_j, d_j, c_j, u_j)`
(:math:`P_j(\theta) = c_j + (u_j - c_j)\,\sigma(a_j\theta + d_j)`) and a standard normal prior on
:math:`\theta`, after the answers :math:`y_{j_1}, \dots, y_{j_t}` to the items given so far the
ability estimate is the posterior mean (EAP) on a quadrature grid,

.. math::

    \hat\theta_t = \frac{\int \theta\, \phi(\theta) \prod_{s\le t} P_{j_s}(\theta)^{y_{j_s}}
    (1 - P_{j_s}(\theta))^{1-y_{j_s}}\, d\theta}{\int \phi(\theta) \prod_{s\le t} \cdots\, d\theta},
    \qquad \mathrm{SE}_t = \text{the posterior standard deviation},

and the next item is the unused one with the largest Fisher information at the current estimate,

.. math::

    j_{t+1} = \arg\max_{j \notin \{j_1..j_t\}} I_j(\hat\theta_t), \qquad
    I_j(\theta) = \frac{[\partial_\theta P_j(\theta)]^2}{P_j(\theta)\,(1 - P_j(\theta))}.

The test stops when :math:`\mathrm{SE}_t \le` ``se_target`` or after ``budget`` items
(Lord, 1980; Weiss, 1982; van der Linden & Glas, 2010). Fluid Benchmarking (Hofmann et al.,
2025) applies this to language models with item banks calibrated on the Open LLM Leaderboard.

**Replay** (:func:`adaptive_replay`). On a complete systems x items 0/1 matrix: hold out a
share of the systems (seeded), fit the IRT model on the rest, and for each budget :math:`k`
predict each held-out system's full-benchmark accuracy three ways:

* *adaptive*: the CAT above run on the system's recorded answers for :math:`k` items;
  prediction :math:`c_0 + c_1 \frac{1}{J}\sum_j P_j(\hat\theta_k)`;
* *static IRT*: the same :math:`k` items for every system, chosen by
  :func:`scorebench.irt.informative_items` (information at the quantiles of the training
  abilities), EAP from those items, same prediction;
* *random*: plain accuracy on :math:`k` random items (redrawn ``n_random`` times).

The calibration :math:`(c_0, c_1)` is the least-squares line from the expected score to the
actual accuracy on the training systems, each run through the same procedure (which absorbs
misfit of the model), as in :mod:`scorebench.irt.compress`. Reported per budget and method: the
RMSE against the actual full-benchmark accuracy of the held-out systems, with a percentile
interval from resampling the held-out systems, and the mean posterior SD of :math:`\hat\theta`.

References: Lord, F. M. (1980). *Applications of Item Response Theory to Practical Testing
Problems*. Weiss, D. J. (1982). Improving measurement quality and efficiency with adaptive
testing. *Applied Psychological Measurement* 6, 473-492. Hofmann, V., Heineman, D., Magnusson,
I., et al. (2025). Fluid Language Model Benchmarking. arXiv:2509.11106.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.core.stats import rng_for
from scorebench.irt.models import item_information, log_prob, prob

__all__ = ["AdaptiveRun", "adaptive_test", "adaptive_replay"]

_GRID = np.linspace(-6.0, 6.0, 121)
_LOG_PRIOR = -0.5 * _GRID ** 2


@dataclass(frozen=True)
class AdaptiveRun:
    """The course of adaptive tests, one row per system.

    Attributes
    ----------
    items : ndarray of int, shape (N, budget)
        Positions of the items given, in order (-1 after the test stopped).
    theta, se : ndarray, shape (N, budget + 1)
        EAP estimate and posterior SD before any item (column 0) and after each item
        (carried forward after the test stopped).
    n_items : ndarray of int, shape (N,)
        Items given when the test stopped.
    """

    items: np.ndarray
    theta: np.ndarray
    se: np.ndarray
    n_items: np.ndarray


def _posterior(loglik: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """EAP and posterior SD from grid log-likelihoods (N, Q) under the N(0, 1) prior."""
    lp = loglik + _LOG_PRIOR[None, :]
    w = np.exp(lp - lp.max(axis=1, keepdims=True))
    w /= w.sum(axis=1, keepdims=True)
    mean = w @ _GRID
    var = np.maximum(w @ _GRID ** 2 - mean ** 2, 0.0)
    return mean, np.sqrt(var)


def _check_bank(params: Any) -> np.ndarray:
    p = np.asarray(params, dtype=np.float64)
    if p.ndim != 2 or p.shape[1] != 4 or p.shape[0] < 1:
        raise InputError(f"item bank: expected parameters of shape (items, 4) = (a, d, c, u), got {p.shape}")
    return p


def adaptive_test(answers: Any, params: Any, *, budget: int, se_target: float | None = None) -> AdaptiveRun:
    """Run adaptive tests for every row of ``answers`` (systems x items, 0/1) against the bank ``params``.

    Items whose parameters are not finite (e.g. answered alike by every calibration system) are
    never chosen. Ties in information go to the lowest item position, so runs are deterministic.

    Parameters
    ----------
    answers : array, shape (N, J)
        The answers each system would give to each item (complete).
    params : array, shape (J, 4)
        Item parameters ``(a, d, c, u)`` on the ability scale of the prior N(0, 1), e.g. ``IRTFit.params``.
    budget : int
        Most items given.
    se_target : float, optional
        Stop a system's test once the posterior SD of its ability is at most this.

    Returns
    -------
    AdaptiveRun

    Examples
    --------
    >>> bank = np.array([[1.5, -1.5 * b, 0.0, 1.0] for b in np.linspace(-2, 2, 9)])
    >>> run = adaptive_test(np.array([[1, 1, 1, 1, 1, 0, 0, 0, 0]]), bank, budget=3)
    >>> run.items[0].tolist()  # b = 0 first; right, so a harder one (b = 0.5); wrong, so b = -0.5
    [4, 5, 3]
    >>> run.se[0, 0] > run.se[0, 3]
    np.True_
    """
    params = _check_bank(params)
    y = np.asarray(answers, dtype=np.float64)
    if y.ndim != 2 or y.shape[1] != params.shape[0]:
        raise InputError(f"answers: expected a systems x items matrix with {params.shape[0]} columns, got shape "
                         f"{y.shape}")
    if not np.isin(y, (0.0, 1.0)).all():
        raise InputError("answers: every answer must be 0 or 1 (complete data)")
    if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)) or budget < 1:
        raise InputError(f"budget: expected a positive integer, got {budget!r}")
    if se_target is not None and not (np.isfinite(se_target) and se_target > 0):
        raise InputError(f"se_target: expected a positive number, got {se_target!r}")
    usable = np.isfinite(params).all(axis=1)
    budget = int(min(budget, usable.sum()))
    if budget < 1:
        raise InputError("item bank: no item has finite parameters")
    n = y.shape[0]
    safe = np.where(usable[:, None], params, [[0.0, 0.0, 0.0, 1.0]])
    log_p, log_q = log_prob(safe, _GRID)               # (J, Q)
    loglik = np.zeros((n, _GRID.size))
    used = np.zeros((n, params.shape[0]), dtype=bool)
    used[:, ~usable] = True
    items = np.full((n, budget), -1, dtype=int)
    theta = np.empty((n, budget + 1))
    se = np.empty((n, budget + 1))
    theta[:, 0], se[:, 0] = _posterior(loglik)
    active = np.ones(n, dtype=bool) if se_target is None else se[:, 0] > se_target
    n_items = np.zeros(n, dtype=int)
    rows = np.arange(n)
    for t in range(budget):
        if not active.any():
            theta[:, t + 1:], se[:, t + 1:] = theta[:, [t]], se[:, [t]]
            break
        info = item_information(safe, theta[:, t]).T    # (N, J)
        info[used] = -np.inf
        pick = np.argmax(info, axis=1)
        r = rows[active]
        j = pick[active]
        items[r, t] = j
        used[r, j] = True
        ans = y[r, j]
        loglik[r] += np.where(ans[:, None] == 1.0, log_p[j], log_q[j])
        n_items[r] += 1
        theta[:, t + 1], se[:, t + 1] = theta[:, t], se[:, t]
        theta[r, t + 1], se[r, t + 1] = _posterior(loglik[r])
        if se_target is not None:
            active &= se[:, t + 1] > se_target
    return AdaptiveRun(items=items, theta=theta, se=se, n_items=n_items)


def _subset_eap(y: np.ndarray, params: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    log_p, log_q = log_prob(params[cols], _GRID)
    sub = y[:, cols]
    return _posterior(sub @ log_p + (1 - sub) @ log_q)


def _line(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    if np.std(x) < 1e-12:
        return float(np.mean(y)), 0.0
    slope, intercept = np.polyfit(x, y, 1)
    return float(intercept), float(slope)


def _interval(sq: np.ndarray, boot: np.ndarray, ci: float) -> tuple[float, float, float]:
    est = float(np.sqrt(sq.mean()))
    if boot.size == 0:
        return est, float("nan"), float("nan")
    reps = np.sqrt(sq[boot].mean(axis=1))
    alpha = (1 - ci) / 2
    return est, float(np.quantile(reps, alpha)), float(np.quantile(reps, 1 - alpha))


def adaptive_replay(responses: Any, budgets: list[int], *, model: str = "2pl", test_size: float = 0.2,
                    n_random: int = 50, n_boot: int = 200, seed: int = 0, ci: float = 0.95,
                    se_target: float | None = None, label: str = "", **fit_options: Any) -> pd.DataFrame:
    """Offline replay: adaptive vs static IRT-selected vs random items, per budget, on held-out systems.

    Parameters
    ----------
    responses : DataFrame, ndarray or ResponseMatrix
        Complete systems x items 0/1 answers (wide or long).
    budgets : list of int
        Numbers of items to give.
    model : str
        IRT model calibrated on the training systems.
    test_size : float
        Share of systems held out.
    n_random : int
        Random subsets drawn per budget.
    n_boot : int
        Resamples of the held-out systems for the intervals (0: none).
    seed : int
        Seed of the split, the random subsets and the resamples.
    ci : float
        Interval level.
    se_target : float, optional
        Also stop each adaptive test once SE(θ) reaches this (``n_items`` reports the mean used).
    label : str
        Benchmark name for the ``benchmark`` column (and the random streams).

    Returns
    -------
    DataFrame
        One row per (budget, method) with ``benchmark``, ``budget``, ``method`` (``adaptive``,
        ``static_irt``, ``random``), ``rmse``, ``ci_low``, ``ci_high``, ``mean_se`` (posterior SD
        of θ; NaN for random), ``n_items`` (mean items given), ``n_items_total``, ``n_train``,
        ``n_test``.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> theta = rng.normal(size=500)
    >>> a, b = rng.uniform(0.8, 2.5, 120), rng.normal(size=120)
    >>> y = (rng.random((500, 120)) < 1 / (1 + np.exp(-a * (theta[:, None] - b)))).astype(float)
    >>> out = adaptive_replay(y, [10, 30], n_random=10, n_boot=50).set_index(["budget", "method"])["rmse"]
    >>> bool(out[30, "adaptive"] < out[30, "random"]), bool(out[30, "adaptive"] < out[10, "adaptive"])
    (True, True)
    """
    from scorebench.metrics.irt_kind import complete_response_matrix
    from scorebench.irt.api import fit
    from scorebench.irt.compress import split_systems

    rm = complete_response_matrix(responses, "adaptive replay")
    values = rm.values
    n, n_all = values.shape
    if not 0 < ci < 1:
        raise InputError(f"ci: expected a level in (0, 1), got {ci!r}")
    for name, v in (("n_random", n_random), ("n_boot", n_boot)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
            raise InputError(f"{name}: expected a non-negative integer, got {v!r}")
    budgets = sorted({int(k) for k in budgets}) if len(budgets) else []
    if not budgets or budgets[0] < 1 or budgets[-1] > n_all:
        raise InputError(f"budgets: expected integers between 1 and the number of items ({n_all}), got {budgets!r}")
    rng = rng_for(seed, "adaptive", label)
    test, train = split_systems(n, test_size, rng, what="adaptive replay")
    n_test = len(test)
    calib = fit(pd.DataFrame(values[train]), model, warn=False, **fit_options)
    params = calib.params
    usable = np.isfinite(params).all(axis=1)
    t_train = calib.abilities["theta"].to_numpy() / calib.theta_scale
    y_tr, y_te = values[train], values[test]
    acc_tr, acc_te = y_tr.mean(axis=1), y_te.mean(axis=1)
    expected = lambda th: prob(params[usable], th).mean(axis=0)  # noqa: E731
    top = budgets[-1]
    run_tr = adaptive_test(y_tr, params, budget=top, se_target=se_target)
    run_te = adaptive_test(y_te, params, budget=top, se_target=se_target)
    boot = rng.integers(n_test, size=(n_boot, n_test)) if n_boot else np.empty((0, n_test), dtype=int)
    rows = []
    base = {"benchmark": label, "n_items_total": n_all, "n_train": len(train), "n_test": n_test}
    for k in budgets:
        kk = min(k, run_te.theta.shape[1] - 1)
        c0, c1 = _line(expected(run_tr.theta[:, kk]), acc_tr)
        sq = (c0 + c1 * expected(run_te.theta[:, kk]) - acc_te) ** 2
        est, lo, hi = _interval(sq, boot, ci)
        rows.append({**base, "budget": k, "method": "adaptive", "rmse": est, "ci_low": lo, "ci_high": hi,
                     "mean_se": float(run_te.se[:, kk].mean()),
                     "n_items": float(np.minimum(run_te.n_items, kk).mean())})
        from scorebench.irt.compress import informative_items

        cols = informative_items(params, t_train, k)
        th_tr, _ = _subset_eap(y_tr, params, cols)
        th_te, se_te = _subset_eap(y_te, params, cols)
        c0, c1 = _line(expected(th_tr), acc_tr)
        sq = (c0 + c1 * expected(th_te) - acc_te) ** 2
        est, lo, hi = _interval(sq, boot, ci)
        rows.append({**base, "budget": k, "method": "static_irt", "rmse": est, "ci_low": lo, "ci_high": hi,
                     "mean_se": float(se_te.mean()), "n_items": float(len(cols))})
        if n_random:
            sq = np.zeros(n_test)
            for _ in range(n_random):
                pick = rng.choice(n_all, size=k, replace=False)
                sq += (y_te[:, pick].mean(axis=1) - acc_te) ** 2
            est, lo, hi = _interval(sq / n_random, boot, ci)
            rows.append({**base, "budget": k, "method": "random", "rmse": est, "ci_low": lo, "ci_high": hi,
                         "mean_se": float("nan"), "n_items": float(k)})
    out = pd.DataFrame(rows)[["benchmark", "budget", "method", "rmse", "ci_low", "ci_high", "mean_se", "n_items",
                              "n_items_total", "n_train", "n_test"]]
    out.attrs.update({"model": model, "test_size": test_size, "n_random": n_random, "n_boot": n_boot, "seed": seed,
                      "ci": ci, "se_target": se_target})
    return out
