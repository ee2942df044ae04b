r"""Ability estimates with standard errors for fixed item parameters (EAP, MAP, ML).

* **EAP**: posterior mean and standard deviation of :math:`\theta` under
  :math:`N(\mu, \sigma^2)` on an adaptive grid (:mod:`scorebench.irt.quadrature`).
* **MAP**: posterior mode by Fisher scoring; standard error
  :math:`(I(\hat\theta) + 1/\sigma^2)^{-1/2}` with the test information of the answered
  items, :math:`I(\theta) = \sum_j m_{ij} [\partial_\theta P_j]^2 / (P_j(1 - P_j))`.
* **ML**: the same without the prior; systems with all answers right (or all wrong, with
  positive slopes) have no finite estimate and get :math:`\pm\infty` with an infinite SE.

Reference: Bock, R. D., & Mislevy, R. J. (1982). Adaptive EAP estimation of ability in a
microcomputer environment. *Applied Psychological Measurement* 6, 431-444.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from scorebench.core.errors import InputError
from scorebench.irt.quadrature import ResponseOps, choose_grid, estep

__all__ = ["AbilityEstimates", "score_abilities", "SCORING_METHODS"]

SCORING_METHODS = ("eap", "map", "ml")


@dataclass(frozen=True)
class AbilityEstimates:
    """Ability estimates: ``theta``, ``se``, whether each converged, and answered counts."""

    theta: np.ndarray
    se: np.ndarray
    converged: np.ndarray
    n_answered: np.ndarray


def _eap(values: np.ndarray, params: np.ndarray, mu: float, sigma: float):
    ops = ResponseOps(values)
    obs = ~np.isnan(values)
    right = np.where(obs, values, 0).sum(axis=1)
    frac = (right + 0.5) / (obs.sum(axis=1) + 1.0)
    start = mu + sigma * np.clip(np.log(frac / (1 - frac)), -3, 3)
    grid = choose_grid(params, start, ops, mu=mu, sigma=sigma)
    post = estep(ops, params, grid, counts=False)
    eap = post.post @ grid.theta
    grid = choose_grid(params, eap, ops, mu=mu, sigma=sigma)
    post = estep(ops, params, grid, counts=False)
    theta = post.post @ grid.theta
    var = post.post @ grid.theta**2 - theta**2
    return theta, np.sqrt(np.maximum(var, 0.0))


def newton_theta(values: np.ndarray, params: np.ndarray, start: np.ndarray, prior_prec: float, mu: float,
                 *, max_iter: int = 100, tol: float = 1e-8):
    """Newton steps for the MAP abilities of the rows of ``values`` (NaN = not answered) under
    the 4PL item ``params`` (columns a, d, c, u) and a normal prior (mean ``mu``, precision
    ``prior_prec``; 0 gives maximum likelihood), from ``start``.

    Steps are clipped to [-1, 1] and abilities to [-20, 20]. Returns ``(theta, se, converged)``
    per row; ``se`` is :math:`1/\\sqrt{I(\theta)}` with the Fisher information plus the prior precision.
    """
    a, d, c, u = (params[:, k][None, :] for k in range(4))
    obs = ~np.isnan(values)
    y = np.where(obs, values, 0.0)
    theta = start.astype(np.float64).copy()
    done = np.zeros(len(theta), dtype=bool)
    info = np.zeros(len(theta))
    for _ in range(max_iter):
        s = expit(a * theta[:, None] + d)
        P = np.clip(c + (u - c) * s, 1e-12, 1 - 1e-12)
        dP = a * (u - c) * s * (1 - s)
        grad = (obs * (y - P) * dP / (P * (1 - P))).sum(axis=1) - prior_prec * (theta - mu)
        info = (obs * dP * dP / (P * (1 - P))).sum(axis=1) + prior_prec
        step = np.clip(grad / np.maximum(info, 1e-12), -1.0, 1.0)
        step[done] = 0.0
        theta = np.clip(theta + step, -20.0, 20.0)
        done |= np.abs(step) < tol
        if done.all():
            break
    return theta, 1.0 / np.sqrt(np.maximum(info, 1e-300)), done


def score_abilities(values: np.ndarray, params: np.ndarray, *, method: str = "eap", mu: float = 0.0,
                    sigma: float = 1.0) -> AbilityEstimates:
    """Estimate each row's ability from ``values`` (0/1/NaN) given item ``params`` (J, 4).

    Items with NaN parameters (not estimable, e.g. constant items) are ignored.

    Examples
    --------
    >>> import numpy as np
    >>> items = np.array([[1.0, 0.0, 0.0, 1.0]] * 4)
    >>> est = score_abilities(np.array([[1, 1, 0, 0.0], [1, 1, 1, 1]]), items, method="map")
    >>> round(float(est.theta[1]), 3)  # solves 4 (1 - P(theta)) = theta
    1.043
    """
    if method not in SCORING_METHODS:
        raise InputError(f"method: expected one of {', '.join(map(repr, SCORING_METHODS))}, got {method!r}")
    usable = ~np.isnan(params).any(axis=1)
    values = values[:, usable]
    params = params[usable]
    n_answered = (~np.isnan(values)).sum(axis=1)
    theta = np.empty(values.shape[0])
    se = np.empty(values.shape[0])
    ok = np.ones(values.shape[0], dtype=bool)
    rows = max(1, 4_000_000 // max(1, values.shape[1]))
    for start in range(0, values.shape[0], rows):
        sl = slice(start, start + rows)
        v = values[sl]
        eap, eap_sd = _eap(v, params, mu, sigma)
        if method == "eap":
            theta[sl], se[sl] = eap, eap_sd
            continue
        prec = 1.0 / sigma**2 if method == "map" else 0.0
        t, s, conv = newton_theta(v, params, eap, prec, mu)
        if method == "ml":
            obs = ~np.isnan(v)
            right = np.where(obs, v, 0).sum(axis=1)
            pos = params[:, 0] > 0
            top = (right == obs.sum(axis=1)) & pos.all()
            bottom = (right == 0) & pos.all()
            t = np.where(top, np.inf, np.where(bottom, -np.inf, t))
            s = np.where(top | bottom, np.inf, s)
            conv = conv & ~(top | bottom)
        theta[sl], se[sl], ok[sl] = t, s, conv
    none = n_answered == 0
    if none.any() and method != "eap":
        theta[none], se[none] = (mu, sigma) if method == "map" else (np.nan, np.inf)
    return AbilityEstimates(theta, se, ok, n_answered)
