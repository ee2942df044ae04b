r"""Benchmark compression: a small informative item subset that reconstructs full scores.

In the spirit of metabench (Kipnis et al., 2024) and tinyBenchmarks (Maia Polo et al., 2024):

1. Hold out a share of the systems; fit a 2PL (or the chosen model) on the rest.
2. For a subset size :math:`k`, place :math:`k` target abilities at the quantiles
   :math:`(i + 1/2)/k` of the training abilities and give each the unused item with the
   largest Fisher information there, :math:`I_j(\theta) = [\partial_\theta P_j]^2/(P_j(1-P_j))`,
   so the subset is informative over the whole ability range.
3. A system's ability is estimated from the subset only (EAP), and its full-benchmark score
   is reconstructed as the expected proportion right on *all* items,
   :math:`\hat s = \frac{1}{J}\sum_j P_j(\hat\theta)`, then linearly calibrated on the
   training systems (which absorbs misfit of the IRT model).
4. :math:`k` is chosen by K-fold cross-validation over the training systems (items are
   refitted in every fold): the smallest size whose CV RMSE is within one standard error of
   the best (the one-standard-error rule). The RMSE on the held-out systems is reported.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.core.stats import rng_from_seed
from scorebench.metrics.irt_kind import ResponseMatrix, response_matrix
from scorebench.irt.models import item_information, prob
from scorebench.irt.result import IRTFit
from scorebench.irt.scoring import score_abilities

__all__ = ["Selection", "select", "informative_items", "accuracy", "reconstruct", "calibrate", "fit_matrix",
           "split_systems"]


def informative_items(params: np.ndarray, theta: np.ndarray, k: int) -> np.ndarray:
    """Positions of ``k`` items chosen by information at the quantiles of ``theta``.

    Examples
    --------
    >>> import numpy as np
    >>> items = np.array([[2.0, -2.0, 0, 1], [2.0, 0.0, 0, 1], [2.0, 2.0, 0, 1], [0.2, 0.0, 0, 1]])
    >>> sorted(informative_items(items, np.linspace(-2, 2, 101), 3).tolist())
    [0, 1, 2]
    """
    usable = ~np.isnan(params).any(axis=1)
    k = min(int(k), int(usable.sum()))
    targets = np.quantile(theta, (np.arange(k) + 0.5) / k)
    info = item_information(np.where(usable[:, None], params, 0.0), targets)
    info[~usable] = -np.inf
    chosen: list[int] = []
    taken = ~usable.copy()
    for q in np.argsort(np.abs(targets - np.median(theta))):  # centre first, then outwards
        col = np.where(taken, -np.inf, info[:, q])
        j = int(np.argmax(col))
        chosen.append(j)
        taken[j] = True
    return np.array(sorted(chosen), dtype=int)


@dataclass(frozen=True)
class Selection:
    """A compressed benchmark.

    Attributes
    ----------
    items : Index
        The selected items.
    size : int
        Their number (chosen by cross-validation unless given).
    cv : DataFrame
        Cross-validated RMSE (and its standard error) of the reconstructed score per size.
    test_rmse : float
        RMSE of the reconstructed full-benchmark score on the held-out systems.
    predictions : DataFrame
        Held-out systems: ``accuracy`` (full benchmark), ``predicted``, ``theta``, ``se``.
    fit : IRTFit
        The IRT model fitted on the training systems (all items).
    calibration : (float, float)
        Intercept and slope mapping the IRT expected score to the accuracy.
    """

    items: pd.Index
    size: int
    cv: pd.DataFrame
    test_rmse: float
    predictions: pd.DataFrame
    fit: IRTFit
    calibration: tuple[float, float]

    def predict(self, responses: Any) -> pd.DataFrame:
        """Reconstruct full-benchmark scores of new systems from their answers to the subset."""
        scored = self.fit.score(_subset_frame(response_matrix(responses), self.items))
        expected = self.fit.expected_score(scored["theta"].to_numpy())
        out = scored[["theta", "se"]].copy()
        out.insert(0, "predicted", self.calibration[0] + self.calibration[1] * expected)
        return out


def _subset_frame(rm: ResponseMatrix, items: pd.Index) -> pd.DataFrame:
    keep = [i for i in items if i in rm.items]
    if not keep:
        raise InputError("responses: none of the selected items is present")
    return rm.to_frame()[keep]


def accuracy(values: np.ndarray) -> np.ndarray:
    r"""Proportion right per system over its answered items, :math:`\sum_j y_{ij}/\#\{j: y_{ij}\ \text{observed}\}`
    (NaN = not answered; a system with no answers gets 0).

    Examples
    --------
    >>> accuracy(np.array([[1.0, 0.0, np.nan], [1.0, 1.0, 1.0]])).tolist()
    [0.5, 1.0]
    """
    obs = ~np.isnan(values)
    return np.where(obs, values, 0.0).sum(axis=1) / np.maximum(obs.sum(axis=1), 1)


def reconstruct(params: np.ndarray, values: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Expected full score from the answers on the items ``cols`` only.

    Each system's ability is the EAP estimate (N(0, 1) prior) from its answers on ``cols``; its
    expected score is :math:`\frac{1}{J'}\sum_{j} P_j(\hat\theta)` over the :math:`J'` items with
    parameters (rows of ``params`` without NaN).

    Returns
    -------
    (expected, theta, se) : three arrays, one entry per system.

    Examples
    --------
    >>> params = np.array([[1.0, 0.0, 0.0, 1.0]] * 3)
    >>> expected, theta, se = reconstruct(params, np.array([[1.0, 0.0, 1.0]]), np.array([0, 1]))
    >>> round(float(theta[0]), 6), round(float(expected[0]), 6)
    (0.0, 0.5)
    """
    sub = np.full_like(values, np.nan)
    sub[:, cols] = values[:, cols]
    est = score_abilities(sub, params, method="eap")
    usable = ~np.isnan(params).any(axis=1)
    expected = prob(params[usable], est.theta).mean(axis=0)
    return expected, est.theta, est.se


def calibrate(expected: np.ndarray, actual: np.ndarray) -> tuple[float, float]:
    r"""Least-squares line :math:`\text{actual} \approx c_0 + c_1\,\text{expected}`; returns ``(c0, c1)``.

    With constant ``expected`` the line is flat at the mean of ``actual``.

    Examples
    --------
    >>> [round(v, 6) for v in calibrate(np.array([0.2, 0.4, 0.6]), np.array([0.3, 0.5, 0.7]))]
    [0.1, 1.0]
    """
    if np.std(expected) < 1e-12:
        return float(np.mean(actual)), 0.0
    slope, intercept = np.polyfit(expected, actual, 1)
    return float(intercept), float(slope)


def fit_matrix(values: np.ndarray, items: pd.Index, model: str, fit_options: dict) -> IRTFit:
    """:func:`scorebench.irt.fit` on a systems x items array (no warnings; the result says if it converged)."""
    from scorebench.irt.api import fit

    frame = pd.DataFrame(values, columns=items)
    return fit(frame, model, warn=False, **fit_options)


def split_systems(n: int, test_size: float, rng: np.random.Generator, *, what: str = "compression",
                  min_test: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Held-out and training positions: a random ``test_size`` share of ``n`` systems held out.

    Raises :class:`~scorebench.core.errors.InputError` for a share outside (0, 1) or fewer than 10
    training systems (``what`` names the caller in the message).

    Examples
    --------
    >>> test, train = split_systems(50, 0.2, np.random.default_rng(0))
    >>> len(test), len(train), sorted(np.concatenate([test, train]).tolist()) == list(range(50))
    (10, 40, True)
    """
    if isinstance(test_size, bool) or not isinstance(test_size, (int, float)) or not 0 < test_size < 1:
        raise InputError(f"test_size: expected a share in (0, 1), got {test_size!r}")
    order = rng.permutation(n)
    n_test = max(min_test, int(round(test_size * n)))
    test, train = order[:n_test], order[n_test:]
    if len(train) < 10:
        raise InputError(f"{what}: need at least 10 training systems, got {len(train)}")
    return test, train


def select(responses: Any, n_items: int | list[int] | None = None, *, model: str = "2pl",
           test_size: float = 0.2, cv: int = 5, seed: int = 0, **fit_options: Any) -> Selection:
    """Choose a small informative item subset and report how well it reconstructs scores.

    Parameters
    ----------
    responses : DataFrame, ndarray or ResponseMatrix
        Systems x items answers (wide or long, see :func:`scorebench.irt.fit`).
    n_items : int or list of int, optional
        Subset size, or candidate sizes for cross-validation (default: a ladder from 5 items
        to a quarter of the benchmark).
    model : str
        IRT model used for selection and scoring.
    test_size : float
        Share of systems held out to report the final RMSE.
    cv : int
        Folds for choosing the size (ignored when ``n_items`` is a single int).
    seed : int
        Seed of the system split and folds.

    Returns
    -------
    Selection

    Examples
    --------
    >>> from scorebench.irt.simulate import simulate_2pl
    >>> sel = select(simulate_2pl(300, 60), [10, 20], cv=3)
    >>> sel.size in (10, 20), bool(sel.test_rmse < 0.08)
    (True, True)
    """
    rm = response_matrix(responses)
    values = rm.values
    N, J = values.shape
    rng = rng_from_seed(seed)
    test, train = split_systems(N, test_size, rng, what="select", min_test=1)
    if n_items is None:
        sizes = sorted({s for s in (5, 10, 20, 30, 50, 100, 200, 500, 1000) if s <= max(5, J // 4)})
    else:
        sizes = sorted({int(s) for s in np.atleast_1d(n_items)})
    if not sizes or sizes[0] < 1 or sizes[-1] > J:
        raise InputError(f"n_items: expected sizes between 1 and the number of items ({J}), got {n_items!r}")
    rows = []
    if len(sizes) > 1:
        folds = np.array_split(rng.permutation(train), cv)
        errors = {s: [] for s in sizes}
        for f in range(cv):
            held = folds[f]
            rest = np.concatenate([folds[g] for g in range(cv) if g != f])
            res = fit_matrix(values[rest], rm.items, model, fit_options)
            t_rest = res.abilities["theta"].to_numpy() / res.theta_scale
            acc_rest, acc_held = accuracy(values[rest]), accuracy(values[held])
            for s in sizes:
                cols = informative_items(res.params, t_rest, s)
                e_rest, _, _ = reconstruct(res.params, values[rest], cols)
                e_held, _, _ = reconstruct(res.params, values[held], cols)
                c0, c1 = calibrate(e_rest, acc_rest)
                errors[s].append((c0 + c1 * e_held - acc_held) ** 2)
        for s in sizes:
            per_system = np.concatenate(errors[s])
            rmse = float(np.sqrt(per_system.mean()))
            se = float(per_system.std(ddof=1) / np.sqrt(len(per_system)) / (2 * max(rmse, 1e-12)))
            rows.append({"size": s, "rmse": rmse, "se": se})
        table = pd.DataFrame(rows)
        best = table["rmse"].idxmin()
        limit = table.loc[best, "rmse"] + table.loc[best, "se"]
        size = int(table.loc[table["rmse"] <= limit, "size"].min())
    else:
        size = sizes[0]
        table = pd.DataFrame(columns=["size", "rmse", "se"])
    res = fit_matrix(values[train], rm.items, model, fit_options)
    t_train = res.abilities["theta"].to_numpy() / res.theta_scale
    cols = informative_items(res.params, t_train, size)
    e_train, _, _ = reconstruct(res.params, values[train], cols)
    calibration = calibrate(e_train, accuracy(values[train]))
    e_test, th, se = reconstruct(res.params, values[test], cols)
    predicted = calibration[0] + calibration[1] * e_test
    actual = accuracy(values[test])
    predictions = pd.DataFrame({"accuracy": actual, "predicted": predicted, "theta": th * res.theta_scale,
                                "se": se * res.theta_scale}, index=pd.Index(rm.systems[test], name="system"))
    return Selection(items=rm.items[cols], size=size, cv=table,
                     test_rmse=float(np.sqrt(np.mean((predicted - actual) ** 2))),
                     predictions=predictions, fit=res, calibration=calibration)
