r"""Category response functions of the polytomous IRT models (mirt's slope-intercept form).

An item :math:`j` is scored :math:`0, \dots, K_j`. Every model is written with a slope
:math:`a_j` and intercepts :math:`d_{j1}, \dots, d_{jK_j}` exactly as R mirt parameterises it
(``coef(fit)``; Chalmers, 2012):

* **graded** (GRM; Samejima, 1969): cumulative logits,
  :math:`P(X \ge k \mid \theta) = \sigma(a\theta + d_k)` with :math:`d_1 > \dots > d_K`, and
  :math:`P_k = P(X \ge k) - P(X \ge k + 1)`. IRT thresholds: :math:`b_k = -d_k / a`, so
  :math:`P(X \ge k) = \sigma(a(\theta - b_k))`.
* **gpcm** (generalised partial credit; Muraki, 1992): divide-by-total,
  :math:`P_k \propto \exp(a k \theta + d_k)`, :math:`d_0 = 0`. The adjacent-category logit is
  :math:`\log(P_k / P_{k-1}) = a\theta + d_k - d_{k-1} = a(\theta - b_k)`, so the step
  difficulties are :math:`b_k = -(d_k - d_{k-1}) / a`.
* **pcm** (partial credit; Masters, 1982): gpcm with one slope shared by all Rasch-family
  items. It is reported as mirt's ``Rasch`` item type reports it: :math:`a = 1` and the
  latent standard deviation equal to the shared slope (the two are the same model), with
  :math:`b_k = -(d_k - d_{k-1})`.
* **rsm** (rating scale; Andrich, 1978): pcm with :math:`d_{jk} = k c_j + \sum_{m\le k}\delta_m`,
  item locations :math:`c_j` and category steps :math:`\delta_m` shared by the rsm items with
  the same number of categories (:math:`\sum_m \delta_m = 0`). Andrich's location
  :math:`b_j = -c_j` and thresholds :math:`\tau_m = -\delta_m`, in the same unit-slope scale.

A dichotomous ``2pl`` item is the graded (and the gpcm) item with :math:`K = 1`.

References: Samejima, F. (1969). *Psychometrika Monograph* 17. Muraki, E. (1992). *Applied
Psychological Measurement* 16, 159-176. Masters, G. N. (1982). *Psychometrika* 47, 149-174.
Andrich, D. (1978). *Psychometrika* 43, 561-573. Chalmers, R. P. (2012). mirt. *Journal of
Statistical Software* 48(6).
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit, log_softmax

__all__ = ["POLY_MODELS", "category_probs", "category_jacobian", "item_information_poly", "thresholds", "simulate"]

POLY_MODELS = ("2pl", "graded", "gpcm", "pcm", "rsm")
_CUMULATIVE = ("2pl", "graded")


def category_probs(kind: str, a: np.ndarray, d: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Category probabilities, shape (G, K+1, Q), for G items of one kind with K intercepts.

    ``a`` is (G,), ``d`` is (G, K); ``kind`` is one of :data:`POLY_MODELS`.

    Examples
    --------
    >>> import numpy as np
    >>> p = category_probs("graded", np.array([1.0]), np.array([[1.0, -1.0]]), np.array([0.0]))
    >>> p[0, :, 0].round(4).tolist()
    [0.2689, 0.4621, 0.2689]
    """
    th = np.asarray(theta, dtype=np.float64)
    if kind in _CUMULATIVE:
        star = expit(a[:, None, None] * th[None, None, :] + d[:, :, None])     # (G, K, Q)
        G, K, Q = star.shape
        full = np.concatenate([np.ones((G, 1, Q)), star, np.zeros((G, 1, Q))], axis=1)
        return np.clip(full[:, :-1] - full[:, 1:], 1e-300, None)
    return np.exp(_log_gpcm(a, d, th))


def _log_gpcm(a: np.ndarray, d: np.ndarray, th: np.ndarray) -> np.ndarray:
    K = d.shape[1]
    k = np.arange(K + 1, dtype=np.float64)
    d0 = np.concatenate([np.zeros((d.shape[0], 1)), d], axis=1)
    z = a[:, None, None] * k[None, :, None] * th[None, None, :] + d0[:, :, None]
    return log_softmax(z, axis=1)


def log_category_probs(kind: str, a: np.ndarray, d: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """``log`` of :func:`category_probs`, computed stably for the divide-by-total models."""
    if kind in _CUMULATIVE:
        return np.log(category_probs(kind, a, d, theta))
    return _log_gpcm(a, d, np.asarray(theta, dtype=np.float64))


def category_jacobian(kind: str, a: np.ndarray, d: np.ndarray, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""``P`` (G, K+1, Q) and its derivatives with respect to ``(a, d_1..d_K)``, (G, K+1, K+1, Q).

    The second axis of the Jacobian is the parameter (0 = slope, m = :math:`d_m`), the third the
    category. Graded: :math:`\partial P_k/\partial d_m = w_m([m = k] - [m = k + 1])`,
    :math:`\partial P_k/\partial a = \theta(w_k - w_{k+1})` with :math:`w = P^*(1 - P^*)`.
    Divide-by-total: :math:`\partial P_k/\partial a = P_k\theta(k - \bar k)`,
    :math:`\partial P_k/\partial d_m = P_k([k = m] - P_m)`.
    """
    th = np.asarray(theta, dtype=np.float64)
    G, K = d.shape
    Q = th.size
    D = np.zeros((G, K + 1, K + 1, Q))
    if kind in _CUMULATIVE:
        star = expit(a[:, None, None] * th[None, None, :] + d[:, :, None])
        full = np.concatenate([np.ones((G, 1, Q)), star, np.zeros((G, 1, Q))], axis=1)
        P = np.clip(full[:, :-1] - full[:, 1:], 1e-300, None)
        w = star * (1.0 - star)                                                   # (G, K, Q)
        wf = np.concatenate([np.zeros((G, 1, Q)), w, np.zeros((G, 1, Q))], axis=1)
        D[:, 0] = th[None, None, :] * (wf[:, :-1] - wf[:, 1:])
        for m in range(1, K + 1):
            D[:, m, m] = w[:, m - 1]
            D[:, m, m - 1] = -w[:, m - 1]
        return P, D
    P = np.exp(_log_gpcm(a, d, th))
    k = np.arange(K + 1, dtype=np.float64)[None, :, None]
    kbar = (P * k).sum(axis=1, keepdims=True)
    D[:, 0] = P * th[None, None, :] * (k - kbar)
    for m in range(1, K + 1):
        D[:, m] = -P * P[:, m][:, None, :]
        D[:, m, m] += P[:, m]
    return P, D


def item_information_poly(kind: str, a: np.ndarray, d: np.ndarray, theta: np.ndarray) -> np.ndarray:
    r"""Fisher information :math:`I_j(\theta) = \sum_k (\partial_\theta P_{jk})^2 / P_{jk}`, (G, Q).

    Examples
    --------
    >>> import numpy as np
    >>> float(item_information_poly("gpcm", np.array([2.0]), np.array([[0.0]]), np.array([0.0]))[0, 0])
    1.0
    """
    th = np.asarray(theta, dtype=np.float64)
    P, D = category_jacobian(kind, a, d, th)
    K = d.shape[1]
    if kind in _CUMULATIVE:
        star = expit(a[:, None, None] * th[None, None, :] + d[:, :, None])
        w = a[:, None, None] * star * (1.0 - star)
        wf = np.concatenate([np.zeros_like(w[:, :1]), w, np.zeros_like(w[:, :1])], axis=1)
        dP = wf[:, :-1] - wf[:, 1:]
    else:
        k = np.arange(K + 1, dtype=np.float64)[None, :, None]
        dP = a[:, None, None] * P * (k - (P * k).sum(axis=1, keepdims=True))
    return (dP * dP / P).sum(axis=1)


def thresholds(kind: str, a: np.ndarray, d: np.ndarray) -> np.ndarray:
    """IRT thresholds ``b`` (G, K) from slope-intercept parameters (see the module docstring).

    Examples
    --------
    >>> import numpy as np
    >>> thresholds("gpcm", np.array([2.0]), np.array([[1.0, 0.0]])).tolist()
    [[-0.5, 0.5]]
    """
    a = np.asarray(a, dtype=np.float64)[:, None]
    d = np.asarray(d, dtype=np.float64)
    if kind in _CUMULATIVE:
        return -d / a
    steps = np.diff(np.concatenate([np.zeros((d.shape[0], 1)), d], axis=1), axis=1)
    return -steps / a


def simulate(kind: str, a: np.ndarray, d: np.ndarray, theta: np.ndarray,
             rng: np.random.Generator) -> np.ndarray:
    """Draw scores (N, G) for N abilities on G items of one kind (``a`` (G,), ``d`` (G, K)).

    Examples
    --------
    >>> import numpy as np
    >>> y = simulate("graded", np.ones(3), np.array([[1.0, -1.0]] * 3), np.zeros(5), np.random.default_rng(0))
    >>> y.shape, bool(set(np.unique(y)) <= {0, 1, 2})
    ((5, 3), True)
    """
    P = category_probs(kind, np.asarray(a, float), np.asarray(d, float), np.asarray(theta, float))  # (G, K+1, N)
    cum = np.cumsum(P, axis=1)[:, :-1]
    u = rng.random((P.shape[0], 1, P.shape[2]))
    return (u > cum).sum(axis=1).T.astype(np.float64)
