r"""tinyBenchmarks' estimators of a full-benchmark score from a few answered items.

Maia Polo, Weber, Choshen, Sun, Xu & Yurochkin (2024), "tinyBenchmarks: evaluating LLMs with
fewer examples", ICML. A system answers the items :math:`S \subset J` (``seen``); with item
parameters fitted on other systems and its ability :math:`\hat\theta` estimated from its
answers on :math:`S`, the full score :math:`Z = \frac{1}{|J|}\sum_{j \in J} Y_j` is estimated by

* **IRT** (:func:`irt_estimate`): :math:`\hat Z_{\mathrm{IRT}} = \frac{1}{|J|}\sum_{j\in J}
  \hat P_j(\hat\theta)`, the model's expected score on every item (the answers on :math:`S`
  enter only through :math:`\hat\theta`);
* **p-IRT** (:func:`pirt_estimate`): keeps the answers it observed,

  .. math:: \hat Z_{\mathrm{p\text{-}IRT}} = \frac{\hat\lambda}{|S|}\sum_{j\in S} Y_j
            + \frac{1 - \hat\lambda}{|J\setminus S|}\sum_{j \in J\setminus S}\hat P_j(\hat\theta),
            \qquad \hat\lambda = |S|/|J|;

* **gp-IRT** (:func:`gpirt_estimate`): a convex combination of p-IRT and a direct estimate
  :math:`\hat Z_{\mathrm{dir}}` (the weighted anchor-point mean, or the plain mean of random
  items), :math:`\hat Z_{\mathrm{gp}} = \lambda \hat Z_{\mathrm{dir}} + (1-\lambda)\hat Z_{\mathrm{p\text{-}IRT}}`
  with :math:`\lambda = b^2/(b^2 + v)`, :math:`b^2` the squared bias of p-IRT and :math:`v` the
  variance of the direct estimate (the paper estimates both on training systems:
  :func:`gp_weight`).

All three take item parameters as an ``(J, 4)`` array (``a, d, c, u``, as
``IRTFit.params``) and answers on ``seen`` as 0/1; abilities are EAP under N(0, 1) unless given.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from scorebench.core.errors import InputError
from scorebench.irt.models import prob
from scorebench.irt.scoring import score_abilities

__all__ = ["irt_estimate", "pirt_estimate", "gpirt_estimate", "gp_weight", "ability_from_seen"]


def _check(params: Any, answers: Any, seen: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    params = np.asarray(params, dtype=np.float64)
    if params.ndim != 2 or params.shape[1] != 4:
        raise InputError(f"params: expected a (J, 4) array of item parameters (a, d, c, u), got {params.shape}")
    J = params.shape[0]
    seen = np.asarray(seen)
    if seen.dtype == bool:
        if seen.shape != (J,):
            raise InputError(f"seen: a boolean mask needs one entry per item ({J}), got {seen.shape}")
        idx = np.flatnonzero(seen)
    else:
        idx = seen.astype(np.int64).ravel()
        if idx.size and (idx.min() < 0 or idx.max() >= J):
            raise InputError(f"seen: item positions must lie in [0, {J}), got {idx.min()}..{idx.max()}")
        if np.unique(idx).size != idx.size:
            raise InputError("seen: repeated item positions")
    if idx.size == 0:
        raise InputError("seen: no items were answered")
    answers = np.asarray(answers, dtype=np.float64)
    if answers.ndim == 1:
        answers = answers[None, :]
    if answers.ndim != 2 or answers.shape[1] != idx.size:
        raise InputError(f"answers: expected (systems, {idx.size}) answers on the seen items, got {answers.shape}")
    if not np.isin(answers, (0.0, 1.0)).all():
        raise InputError("answers: expected 0/1 right/wrong answers")
    if np.isnan(params[idx]).any():
        raise InputError("params: a seen item has no parameters (NaN); drop it from seen")
    return params, answers, idx


def ability_from_seen(params: Any, answers: Any, seen: Any) -> np.ndarray:
    """EAP abilities (N(0, 1) prior) from the answers on the seen items."""
    params, answers, idx = _check(params, answers, seen)
    return score_abilities(answers, params[idx], method="eap").theta


def _expected(params: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """P_j(theta_i), shape (systems, J); NaN-parameter items give NaN."""
    return prob(params, np.asarray(theta, dtype=np.float64)).T


def irt_estimate(params: Any, answers: Any, seen: Any, *, theta: Any = None) -> np.ndarray:
    r"""tinyBenchmarks' IRT estimate :math:`\frac{1}{|J|}\sum_j \hat P_j(\hat\theta)` per system.

    Examples
    --------
    >>> params = np.array([[1.0, 0.0, 0.0, 1.0]] * 4)
    >>> irt_estimate(params, [[1, 0]], [0, 1], theta=[0.0]).tolist()
    [0.5]
    """
    params, answers, idx = _check(params, answers, seen)
    th = ability_from_seen(params, answers, idx) if theta is None else np.asarray(theta, dtype=np.float64).ravel()
    usable = ~np.isnan(params).any(axis=1)
    return np.nanmean(_expected(params[usable], th), axis=1)


def pirt_estimate(params: Any, answers: Any, seen: Any, *, theta: Any = None) -> np.ndarray:
    r"""tinyBenchmarks' p-IRT estimate: observed answers on the seen items, the model on the rest.

    With :math:`\hat\lambda = |S|/|J|` this is :math:`\bigl(\sum_{j\in S} Y_j +
    \sum_{j\notin S}\hat P_j(\hat\theta)\bigr)/|J|`; it equals the plain accuracy when every
    item is seen.

    Examples
    --------
    >>> params = np.array([[1.0, 0.0, 0.0, 1.0]] * 4)
    >>> pirt_estimate(params, [[1, 1]], [0, 1], theta=[0.0]).tolist()  # (1 + 1 + 0.5 + 0.5) / 4
    [0.75]
    """
    params, answers, idx = _check(params, answers, seen)
    th = ability_from_seen(params, answers, idx) if theta is None else np.asarray(theta, dtype=np.float64).ravel()
    usable = ~np.isnan(params).any(axis=1)
    unseen = np.setdiff1d(np.flatnonzero(usable), idx)
    n_total = idx.size + unseen.size
    lam = idx.size / n_total
    observed = answers.mean(axis=1)
    if unseen.size == 0:
        return observed
    model = _expected(params[unseen], th).mean(axis=1)
    return lam * observed + (1.0 - lam) * model


def gp_weight(bias2: float, variance: float) -> float:
    r"""gp-IRT's weight :math:`\lambda = b^2/(b^2 + v)` of the direct estimate.

    Examples
    --------
    >>> gp_weight(0.0004, 0.0004)
    0.5
    """
    bias2, variance = float(bias2), float(variance)
    if not (np.isfinite(bias2) and np.isfinite(variance)) or bias2 < 0 or variance < 0 or bias2 + variance == 0:
        raise InputError(f"gp_weight: expected finite bias2 >= 0 and variance >= 0, not both 0; got {bias2}, "
                         f"{variance}")
    return bias2 / (bias2 + variance)


def gpirt_estimate(params: Any, answers: Any, seen: Any, *, direct: Any, lam: float,
                   theta: Any = None) -> np.ndarray:
    r"""tinyBenchmarks' gp-IRT: :math:`\lambda \hat Z_{\mathrm{dir}} + (1-\lambda)\hat Z_{\mathrm{p\text{-}IRT}}`.

    ``direct`` is the direct estimate per system (anchor-point weighted mean, or the plain
    mean of random items); ``lam`` the weight (:func:`gp_weight`).

    Examples
    --------
    >>> params = np.array([[1.0, 0.0, 0.0, 1.0]] * 4)
    >>> gpirt_estimate(params, [[1, 1]], [0, 1], direct=[1.0], lam=0.5, theta=[0.0]).tolist()
    [0.875]
    """
    lam = float(lam)
    if not 0.0 <= lam <= 1.0:
        raise InputError(f"lam: expected a weight in [0, 1], got {lam}")
    p = pirt_estimate(params, answers, seen, theta=theta)
    direct = np.asarray(direct, dtype=np.float64).ravel()
    if direct.shape != p.shape:
        raise InputError(f"direct: expected one direct estimate per system ({p.size}), got {direct.size}")
    return lam * direct + (1.0 - lam) * p
