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

The selections they are compared on: :func:`anchor_points` (tinyBenchmarks' anchor points: the
items clustered by their right/wrong pattern over training systems, one representative per
cluster, weighted by the cluster's size; :func:`anchor_estimate` is the weighted mean), items
chosen by IRT information (:func:`scorebench.irt.informative_items`) and random items, for which
:func:`score_draws` scores many random subsets at once (array operations over the draws).

All three take item parameters as an ``(J, 4)`` array (``a, d, c, u``, as
``IRTFit.params``) and answers on ``seen`` as 0/1; abilities are EAP under N(0, 1) unless given.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from scorebench.core.errors import InputError
from scorebench.irt.models import prob
from scorebench.irt.scoring import score_abilities

__all__ = ["irt_estimate", "pirt_estimate", "gpirt_estimate", "gp_weight", "ability_from_seen", "complete_params",
           "AnchorPoints", "anchor_points", "anchor_estimate", "DrawScores", "score_draws", "GRID"]

#: Fixed EAP grid of :func:`score_draws`: 81 equally spaced nodes on [-6, 6] (N(0, 1) prior; spacing 0.15:
#: abilities within 1e-5 of the adaptive-grid EAP of :func:`~scorebench.irt.score_abilities` up to 50 items).
GRID = np.linspace(-6.0, 6.0, 81)


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


def complete_params(params: Any, train: Any) -> np.ndarray:
    """Item parameters with every item scoreable: an item the fit left out (NaN parameters, e.g.
    constant in training: all right or all wrong) gets a flat curve at its training proportion
    (clipped to [0.001, 0.999]), so p-IRT and :func:`score_draws` can score every item.

    Examples
    --------
    >>> p = complete_params([[1.0, 0.0, 0.0, 1.0], [np.nan] * 4], [[1, 1], [0, 1]])
    >>> p[1].round(4).tolist()  # a = 0, d = logit(0.999)
    [0.0, 6.9068, 0.0, 1.0]
    """
    out = np.array(params, dtype=np.float64, copy=True)
    train = np.asarray(train, dtype=np.float64)
    if out.ndim != 2 or out.shape[1] != 4 or train.ndim != 2 or train.shape[1] != out.shape[0]:
        raise InputError(f"complete_params: expected (J, 4) params and (systems, J) answers, got {out.shape} and "
                         f"{train.shape}")
    missing = np.isnan(out).any(axis=1)
    if missing.any():
        p = np.clip(np.nanmean(train[:, missing], axis=0), 1e-3, 1 - 1e-3)
        out[missing] = np.column_stack([np.zeros(p.size), np.log(p / (1 - p)), np.zeros(p.size), np.ones(p.size)])
    return out


def _binary(values: Any, name: str) -> np.ndarray:
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 2 or 0 in values.shape:
        raise InputError(f"{name}: expected a non-empty (systems, items) matrix, got shape {values.shape}")
    bad = ~np.isin(values, (0.0, 1.0))
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise InputError(f"{name}: expected complete 0/1 answers; row {i}, item {j} is {values[i, j]!r}")
    return values


@dataclass(frozen=True)
class AnchorPoints:
    """tinyBenchmarks' anchor points.

    Attributes
    ----------
    items : ndarray of int
        Positions of the anchor items (one per non-empty cluster, increasing).
    weights : ndarray of int
        The size of each anchor's cluster (aligned with ``items``); they sum to the item count.
    labels : ndarray of int
        The cluster of every item, numbered as ``items``.
    """

    items: np.ndarray
    weights: np.ndarray
    labels: np.ndarray


def anchor_points(train: Any, k: int, *, seed: int = 0, n_init: int = 10) -> AnchorPoints:
    r"""tinyBenchmarks' anchor points: cluster the items by their answers over training systems.

    Each item :math:`j` is the point :math:`(y_{1j}, \dots, y_{nj})` of its right/wrong answers
    over the :math:`n` training systems; k-means (Lloyd, k-means++ starts, ``n_init`` restarts,
    seeded; computed on the items' coordinates in the span of these points, which keeps every
    distance) splits the items into ``k`` clusters; each cluster's anchor is its item nearest the
    centroid (Euclidean) and its weight the number of items in the cluster, so a system's
    full score is estimated by the weighted mean of its anchor answers
    (:func:`anchor_estimate`). Maia Polo et al. (2024), Section 3.1 ("correctness" clustering).
    With at most ``k`` distinct answer patterns every pattern is its own cluster (anchor: its
    first item), so fewer than ``k`` anchors can be returned; clusters k-means leaves empty are
    dropped; the weights always sum to the item count.

    Examples
    --------
    >>> y = np.array([[1, 1, 0, 0, 1], [1, 1, 0, 0, 0], [0, 0, 1, 1, 1]])
    >>> ap = anchor_points(y, 2)
    >>> int(ap.weights.sum()), bool(ap.labels[0] == ap.labels[1]), bool(ap.labels[2] == ap.labels[3])
    (5, True, True)
    """
    import warnings

    from sklearn.cluster import KMeans
    from sklearn.exceptions import ConvergenceWarning

    train = _binary(train, "anchor_points")
    J = train.shape[1]
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= J:
        raise InputError(f"anchor_points: k expected an integer between 1 and the number of items ({J}), got {k!r}")
    X = train.T
    patterns, first, inverse = np.unique(X, axis=0, return_index=True, return_inverse=True)
    if len(patterns) <= k:  # one cluster per distinct answer pattern: the exact optimum, no k-means needed
        order = np.argsort(first)
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        labels = rank[inverse.ravel()]
        return AnchorPoints(items=np.sort(first), weights=np.bincount(labels).astype(np.int64), labels=labels)
    if X.shape[1] > X.shape[0]:
        # the items' coordinates in the span of their answer vectors (X X^T = V diag(w) V^T, X -> V sqrt(w)):
        # every distance between items and centroids is the same, so the clustering is, at J, not n, dimensions
        w, V = np.linalg.eigh(X @ X.T)
        X = V * np.sqrt(np.clip(w, 0.0, None))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # fewer distinct patterns than k: handled below
        km = KMeans(n_clusters=int(k), n_init=n_init, random_state=int(seed)).fit(X)
    items, weights = [], []
    labels = np.full(J, -1, dtype=np.int64)
    for c in range(int(k)):
        members = np.flatnonzero(km.labels_ == c)
        if members.size == 0:
            continue
        dist = ((X[members] - km.cluster_centers_[c]) ** 2).sum(axis=1)
        items.append(int(members[np.argmin(dist)]))
        weights.append(members.size)
        labels[members] = c
    order = np.argsort(items)
    items, weights = np.asarray(items)[order], np.asarray(weights, dtype=np.int64)[order]
    renumber = {old: new for new, old in enumerate(labels[items])}
    return AnchorPoints(items=items, weights=weights, labels=np.array([renumber[v] for v in labels]))


def anchor_estimate(answers: Any, weights: Any) -> np.ndarray:
    r"""Weighted mean :math:`\sum_m w_m y_{i m} / \sum_m w_m` of each system's anchor answers.

    Examples
    --------
    >>> anchor_estimate([[1, 0], [0, 1]], [3, 1]).tolist()
    [0.75, 0.25]
    """
    answers = np.asarray(answers, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64).ravel()
    if answers.ndim == 1:
        answers = answers[None, :]
    if answers.ndim != 2 or answers.shape[1] != w.size:
        raise InputError(f"anchor_estimate: expected (systems, {w.size}) answers, got {answers.shape}")
    if not np.isfinite(w).all() or (w < 0).any() or w.sum() <= 0:
        raise InputError("anchor_estimate: weights must be finite, non-negative and not all 0")
    return answers @ w / w.sum()


@dataclass(frozen=True)
class DrawScores:
    """Estimates for every (system, draw) of :func:`score_draws`; arrays of shape (systems, draws).

    Attributes
    ----------
    theta : EAP ability from the drawn items.
    mean : plain accuracy on the drawn items.
    irt : tinyBenchmarks' IRT estimate (:func:`irt_estimate`).
    pirt : p-IRT (:func:`pirt_estimate`).
    """

    theta: np.ndarray
    mean: np.ndarray
    irt: np.ndarray
    pirt: np.ndarray


def _check_draw_inputs(params: Any, responses: Any, draws: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validate :func:`score_draws`' inputs; return ``(params, responses, draws)`` as arrays."""
    params = np.asarray(params, dtype=np.float64)
    if params.ndim != 2 or params.shape[1] != 4 or not np.isfinite(params).all():
        raise InputError(f"params: expected a (J, 4) array of finite item parameters, got shape {params.shape} "
                         "(complete_params gives left-out items a flat curve)")
    J = params.shape[0]
    Y = _binary(responses, "responses")
    if Y.shape[1] != J:
        raise InputError(f"responses: expected {J} items (one per parameter row), got {Y.shape[1]}")
    draws = np.asarray(draws)
    if draws.ndim != 2 or draws.shape[1] == 0 or not np.issubdtype(draws.dtype, np.integer):
        raise InputError(f"draws: expected a (draws, k) array of item positions, got shape {draws.shape}")
    if draws.min() < 0 or draws.max() >= J:
        raise InputError(f"draws: item positions must lie in [0, {J})")
    srt = np.sort(draws, axis=1)
    if (srt[:, 1:] == srt[:, :-1]).any():
        raise InputError("draws: an item appears twice in one draw")
    return params, Y, draws


def score_draws(params: Any, responses: Any, draws: Any, *, grid: Any = None, chunk: int = 64) -> DrawScores:
    r"""Mean, IRT and p-IRT estimates of every system's full score for many item subsets at once.

    ``draws`` is a ``(D, k)`` array of item positions (one subset per row, no repeats within a
    row). For every system :math:`i` and draw :math:`d` the ability is the EAP estimate from the
    answers on the drawn items, on the fixed grid ``grid`` (default :data:`GRID`) with an N(0, 1)
    prior,

    .. math:: \hat\theta_{id} = \frac{\sum_q \theta_q\, \phi(\theta_q) \prod_{j\in S_d}
              P_j(\theta_q)^{y_{ij}}(1-P_j(\theta_q))^{1-y_{ij}}}{\sum_q \phi(\theta_q)\prod_{j\in S_d}\cdots},

    computed for all draws with array operations (for 2PL items the likelihood depends on the
    answers only through :math:`\sum_{j\in S_d} a_j y_{ij}`: one matrix product). The IRT
    estimate is :math:`\frac1J\sum_j P_j(\hat\theta_{id})` (the test characteristic curve,
    through a cubic spline on a 0.01-spaced grid: error below 1e-9) and p-IRT
    :math:`\frac1J\bigl(\sum_{j\in S_d} y_{ij} + \sum_{j\notin S_d} P_j(\hat\theta_{id})\bigr)`.
    Equal, draw by draw, to :func:`irt_estimate` / :func:`pirt_estimate` given the same
    abilities. Memory: about ``chunk x systems x len(grid)`` floats at a time.

    Parameters
    ----------
    params : (J, 4) array
        Item parameters without NaN (see :func:`complete_params`).
    responses : (systems, J) array
        Complete 0/1 answers (only the drawn items' answers are read by the estimates).
    draws : (D, k) array of int

    Examples
    --------
    >>> params = np.array([[1.0, 0.0, 0.0, 1.0]] * 4)
    >>> out = score_draws(params, [[1, 1, 0, 0]], [[0, 1], [2, 3]])
    >>> out.mean.tolist(), bool(out.theta[0, 0] > 0 > out.theta[0, 1])
    ([[1.0, 0.0]], True)
    """
    from scipy.interpolate import CubicSpline
    from scipy.special import expit

    params, Y, draws = _check_draw_inputs(params, responses, draws)
    J = params.shape[0]
    q = np.asarray(GRID if grid is None else grid, dtype=np.float64).ravel()
    a, d, c, u = (params[:, m] for m in range(4))
    two_pl = bool(np.all(c == 0.0) and np.all(u == 1.0))
    P = np.clip(prob(params, q), 1e-300, 1.0)
    logP, log1mP = np.log(P), np.log(np.clip(1.0 - P, 1e-300, 1.0))
    logit = logP - log1mP
    prior = -0.5 * q**2
    fine = np.arange(q.min() - 0.05, q.max() + 0.0501, 0.01)
    tcc = CubicSpline(fine, prob(params, fine).sum(axis=0))
    n, D, k = Y.shape[0], draws.shape[0], draws.shape[1]
    theta = np.empty((D, n))
    seen_right = np.empty((D, n))
    seen_p = np.empty((D, n))
    for lo in range(0, D, max(int(chunk), 1)):
        idx = draws[lo:lo + chunk]                                    # (c, k)
        rows = np.arange(idx.shape[0])[:, None]
        mask = np.zeros((idx.shape[0], J))
        mask[rows, idx] = 1.0
        base = log1mP[idx].sum(axis=1) + prior                          # (c, Q)
        if two_pl:
            slope = np.zeros_like(mask)
            slope[rows, idx] = a[idx]
            s = (Y @ slope.T).T                                         # sufficient statistic sum_j a_j y_ij
            L = base[:, None, :] + s[:, :, None] * q[None, None, :]
        else:
            L = base[:, None, :] + np.matmul(np.moveaxis(Y[:, idx], 0, 1), logit[idx])  # (c, n, Q)
        L -= L.max(axis=2, keepdims=True)
        w = np.exp(L)
        th = (w @ q) / w.sum(axis=2)
        theta[lo:lo + chunk] = th
        seen_right[lo:lo + chunk] = (Y @ mask.T).T
        z = a[idx][:, None, :] * th[:, :, None] + d[idx][:, None, :]
        seen_p[lo:lo + chunk] = (c[idx][:, None, :] + (u - c)[idx][:, None, :] * expit(z)).sum(axis=2)
    total = tcc(theta)
    return DrawScores(theta=theta.T, mean=(seen_right / k).T, irt=(total / J).T,
                      pirt=((seen_right + total - seen_p) / J).T)
