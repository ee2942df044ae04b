r"""Contextual (style) Bradley–Terry as arena-rank fits it, with sandwich intervals.

arena-rank's ``ContextualBradleyTerry`` explains each battle by the two models' strengths and
a feature vector :math:`x` of the battle (style differences), with inverse-propensity weights
:math:`w` normalised to mean 1 and a ridge :math:`\lambda` (``reg``) on the coefficients only:

.. math::
    \min_{\theta,\gamma}\; -\frac1N\sum_{k} w_k\bigl[y_k\,\eta_k - \log(1 + e^{\eta_k})\bigr]
        + \frac{\lambda}{2}\lVert\gamma\rVert^2,\qquad \eta_k = \theta_{a_k} - \theta_{b_k} + x_k^\top\gamma

(ties :math:`y = 1/2`; :math:`\theta` centred). Features are standardised over the battles.
The sandwich covariance is arena-rank's: with :math:`z_k = (e_{a_k} - e_{b_k}, x_k)`,

.. math::
    H = \frac1N\sum_k w_k p_k(1-p_k) z_k z_k^\top + \epsilon I,\quad
    G = \frac1N\sum_k w_k^2 (y_k - p_k)^2 z_k z_k^\top - \frac{\lambda^2}{N}(0,\gamma)(0,\gamma)^\top,\quad
    \operatorname{cov} = \frac1N H^{-1} G H^{-1}

(:math:`\epsilon` = ``hessian_reg`` = 1e-5; arena-rank leaves :math:`\lambda` out of :math:`H`, and so
does this module, for parity). Ratings :math:`R = R_0 + \frac{s}{\ln b}\theta`.

This differs from FastChat's style control (:mod:`scorebench.aggregate.style_control`, method
``bradley_terry_style``): FastChat penalises the strengths too (``reg = 0.5`` on
:math:`(\theta, \gamma)`, summed rather than averaged loss) and has no weights.

Reference: lmarena/arena-rank 0.1.1, ``models/contextual_bradley_terry.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.lazy import lazy_attr
from scorebench.core.errors import ConvergenceError, InputError
from scorebench.aggregate.input import Battles, as_battles
from scorebench.aggregate.pair_counts import HESSIAN_REG, ipw_weights
from scorebench.aggregate.pairwise import to_elo_scale
from scorebench.aggregate.registry import MethodResult, register_bootstrap, register_intervals, register_method
from scorebench.aggregate.style_cells import resample_cell_weights, style_cells
from scorebench.aggregate.style_control import filter_battles, style_features

expit = lazy_attr("scipy.special", "expit")

__all__ = ["fit_contextual", "contextual_sandwich", "bradley_terry_contextual", "contextual_frame"]

_CITE = "lmarena/arena-rank 0.1.1 ContextualBradleyTerry; Chiang et al. (2024), Chatbot Arena, ICML"


class _Pairs:
    """Sums over the rows of each ordered pair: one ``reduceat`` pass when rows are sorted by pair
    (cells from :func:`~scorebench.aggregate.style_cells.style_cells` are), ``bincount`` otherwise.
    Holds the features transposed (k, rows), so that every per-row product is contiguous."""

    def __init__(self, a: np.ndarray, b: np.ndarray, n: int, X: np.ndarray) -> None:
        pid = a * n + b
        self.n = n
        self.Xt = np.ascontiguousarray(X.T)
        self.buffer = np.empty((X.shape[1] + 2, len(pid)))
        if len(pid) > 1 and np.all(pid[1:] >= pid[:-1]):
            self.starts = np.flatnonzero(np.r_[True, pid[1:] != pid[:-1]])
            self.lengths = np.diff(np.r_[self.starts, len(pid)])
            self.a, self.b = a[self.starts], b[self.starts]
        else:
            self.starts, self.pid = None, pid
            self.a, self.b = np.divmod(np.arange(n * n), n)

    def sums(self, M: np.ndarray) -> np.ndarray:
        """Per-pair row sums of ``M`` (k x rows), shape (k, pairs)."""
        if self.starts is not None:
            return np.add.reduceat(M, self.starts, axis=1)
        return np.stack([np.bincount(self.pid, row, self.n * self.n) for row in M])

    def spread(self, values: np.ndarray) -> np.ndarray:
        """A per-pair value on every row."""
        return np.repeat(values, self.lengths) if self.starts is not None else values[self.pid]

    def difference(self, theta: np.ndarray) -> np.ndarray:
        r""":math:`\theta_a - \theta_b` on every row."""
        return self.spread(theta[self.a] - theta[self.b])

    def products(self, v: np.ndarray, r: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
        r""":math:`\sum_k v_k z_k z_k^\top` for :math:`z_k = (e_{a_k} - e_{b_k}, x_k)`, dense (n + p)², and,
        given ``r``, :math:`\sum_k r_k z_k` — from one pass over the rows."""
        from scorebench.aggregate.pair_counts import laplacian

        n, p = self.n, self.Xt.shape[0]
        M = self.buffer
        M[0] = v
        np.multiply(self.Xt, v, out=M[1:p + 1])
        if r is not None:
            M[p + 1] = r
        S = self.sums(M if r is not None else M[:p + 1])
        out = np.empty((n + p, n + p))
        out[:n, :n] = laplacian(n, self.a, self.b, S[0])
        cross = np.empty((n, p))
        for j in range(p):  # over pairs, not rows
            cross[:, j] = np.bincount(self.a, S[1 + j], n) - np.bincount(self.b, S[1 + j], n)
        out[:n, n:] = cross
        out[n:, :n] = cross.T
        out[n:, n:] = M[1:p + 1] @ self.Xt.T
        if r is None:
            return out, None
        return out, np.concatenate([np.bincount(self.a, S[p + 1], n) - np.bincount(self.b, S[p + 1], n),
                                    self.Xt @ r])


def fit_contextual(a: np.ndarray, b: np.ndarray, y: np.ndarray, X: np.ndarray, w: np.ndarray, n: int, *,
                   reg: float = 1.0, tol: float = 1e-12, max_iter: int = 100,
                   start: tuple[np.ndarray, np.ndarray] | None = None,
                   n_battles: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Strengths (centred) and coefficients minimising the objective of the module docstring (Newton).

    Rows may be battles or deduplicated cells (:func:`~scorebench.aggregate.style_cells.style_cells`,
    ``w`` = the cells' :math:`\\sum w`); ``n_battles`` is then the :math:`N` of the mean loss
    (default: the number of rows).

    Examples
    --------
    >>> a, b = np.array([0, 0, 1, 1]), np.array([1, 1, 0, 0])
    >>> th, g = fit_contextual(a, b, np.array([1.0, 1.0, 0.0, 1.0]), np.zeros((4, 0)), np.ones(4), 2, reg=1.0)
    >>> round(float(th[0] - th[1]), 6) == round(float(np.log(3.0)), 6)
    True
    """
    N = X.shape[0] if n_battles is None else n_battles
    return _newton(_Pairs(a, b, n, X), y, w, N, reg, tol, max_iter, start)


def _newton(pairs: _Pairs, y: np.ndarray, w: np.ndarray, N: int, reg: float, tol: float, max_iter: int,
            start: tuple[np.ndarray, np.ndarray] | None) -> tuple[np.ndarray, np.ndarray]:
    """Newton's method of :func:`fit_contextual` on prepared rows (reused across bootstrap rounds)."""
    n, p = pairs.n, pairs.Xt.shape[0]
    theta, gamma = (np.zeros(n), np.zeros(p)) if start is None else (start[0].copy(), start[1].copy())
    lift = np.zeros((n + p, n + p))
    lift[:n, :n] = 1.0 / n  # the strengths' shift: fixed by centring, made invertible here
    for _ in range(max_iter):
        prob = expit(pairs.difference(theta) + gamma @ pairs.Xt)
        H, grad = pairs.products(w * prob * (1.0 - prob) / N, w * (y - prob) / N)
        grad[n:] -= reg * gamma
        H += lift
        H[np.arange(n, n + p), np.arange(n, n + p)] += reg
        step = np.linalg.solve(H, grad)
        theta += step[:n]
        theta -= theta.mean()
        gamma += step[n:]
        if np.abs(step).max() < tol:
            return theta, gamma
    raise ConvergenceError(f"contextual Bradley-Terry: Newton's method did not converge in {max_iter} iterations")


def contextual_sandwich(a: np.ndarray, b: np.ndarray, y: np.ndarray, X: np.ndarray, w: np.ndarray, n: int,
                        theta: np.ndarray, gamma: np.ndarray, *, reg: float = 1.0,
                        hessian_reg: float = HESSIAN_REG, w_sq: np.ndarray | None = None,
                        n_battles: int | None = None) -> np.ndarray:
    """Sandwich covariance of ``(theta, gamma)`` (module docstring), shape (n + p, n + p).

    On deduplicated cells pass ``w`` = :math:`\\sum w`, ``w_sq`` = :math:`\\sum w^2` per cell and
    ``n_battles``; the defaults (``w ** 2``, the number of rows) are those of battles.
    """
    N = X.shape[0] if n_battles is None else n_battles
    p = X.shape[1]
    w_sq = w * w if w_sq is None else w_sq
    pairs = _Pairs(a, b, n, X)
    prob = expit(pairs.difference(theta) + gamma @ pairs.Xt)
    H = pairs.products(w * prob * (1.0 - prob) / N)[0]
    H[np.diag_indices(n + p)] += hessian_reg
    G = pairs.products(w_sq * (y - prob) ** 2 / N)[0]
    G[n:, n:] -= (reg ** 2 / N) * np.outer(gamma, gamma)
    # (1, 0) is an eigenvector of H (eigenvalue hessian_reg) that G annihilates: lifting it is exact
    H[:n, :n] += np.trace(H[:n, :n]) / n / n
    H_inv = np.linalg.inv(H)
    cov = H_inv @ G @ H_inv / N
    return (cov + cov.T) / 2.0


class _Data:
    """Filtered battles, standardised features, weights and their (pair, outcome, style row) cells."""

    def __init__(self, table: pd.DataFrame, features: Any, reweight: bool, min_pair_count: float,
                 anony: Any, language: Any, category: Any) -> None:
        if not isinstance(reweight, (bool, np.bool_)):
            raise InputError(f"reweight: expected true or false, got {reweight!r}")
        table = filter_battles(table, anony, language, category)
        battles: Battles = as_battles(table)
        self.X, self.features, _, _ = style_features(table, features)
        if reweight:
            w = ipw_weights(battles, min_pair_count=min_pair_count).weight
            w = w / w.mean()
        else:
            w = np.asarray(battles.weight, dtype=np.float64)
        self.battles, self.w = battles, w
        self.cells = style_cells(battles.a, battles.b, battles.outcome, self.X, w)

    def fit(self, reg: float) -> tuple[np.ndarray, np.ndarray]:
        c = self.cells
        return fit_contextual(c.a, c.b, c.y, c.X, c.weight, self.battles.n_systems, reg=reg, n_battles=c.n_battles)

    def sandwich(self, theta: np.ndarray, gamma: np.ndarray, reg: float) -> np.ndarray:
        c = self.cells
        return contextual_sandwich(c.a, c.b, c.y, c.X, c.weight, self.battles.n_systems, theta, gamma, reg=reg,
                                   w_sq=c.weight_sq, n_battles=c.n_battles)


def _check(reg: float, scale: float, base: float) -> None:
    if not (np.isfinite(reg) and reg >= 0):
        raise InputError(f"contextual Bradley-Terry: reg must be a finite value >= 0, got {reg!r}")
    if not (scale > 0 and base > 1):
        raise InputError(f"contextual Bradley-Terry: expected scale > 0 and base > 1, got {scale!r}, {base!r}")


@register_method("bradley_terry_contextual", family="pairwise", accepts=("table",),
                 missing="battles are only between the models that met; style columns must be complete",
                 citation=_CITE)
def bradley_terry_contextual(table: pd.DataFrame, *, features: Any = "v1", reg: float = 1.0,
                             reweight: bool = True, min_pair_count: float = 50.0, scale: float = 400.0,
                             base: float = 10.0, init: float = 1000.0, anony: bool | None = None,
                             language: Any = None, category: str | None = None) -> MethodResult:
    r"""Contextual (style) Bradley–Terry ratings as arena-rank fits them (IPW weights, ridge on γ only).

    .. math:: P(a \succ b) = \sigma(\theta_a - \theta_b + x_{ab}^\top\gamma)

    Features are the style columns' :math:`(f_a - f_b)/(f_a + f_b + 1)`, standardised (see
    :func:`~scorebench.aggregate.style_control.style_features`). Default intervals: sandwich.
    ``details["coefficients"]`` holds :math:`\gamma`. Equals arena-rank 0.1.1 to 1e-6 Elo.

    Examples
    --------
    >>> t = pd.DataFrame({"a": ["x", "y", "x", "y"], "b": ["y", "x", "y", "x"], "winner": ["a", "a", "a", "b"],
    ...                   "style_len_a": [300, 100, 250, 90], "style_len_b": [100, 320, 90, 310]})
    >>> r = bradley_terry_contextual(t, features="len", reweight=False)
    >>> sorted(r.details["coefficients"])
    ['len']
    """
    _check(reg, scale, base)
    d = _Data(table, features, reweight, min_pair_count, anony, language, category)
    b = d.battles
    theta, gamma = d.fit(reg)
    return MethodResult(to_elo_scale(theta, scale=scale, base=base, init=init),
                        {"systems": b.systems, "coefficients": dict(zip(d.features, gamma.tolist())),
                         "theta": theta, "n_battles": len(b.a)})


@register_intervals("bradley_terry_contextual")
def bradley_terry_contextual_sandwich(table: pd.DataFrame, *, features: Any = "v1", reg: float = 1.0,
                                      reweight: bool = True, min_pair_count: float = 50.0, scale: float = 400.0,
                                      base: float = 10.0, init: float = 1000.0, anony: bool | None = None,
                                      language: Any = None,
                                      category: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Ratings and their sandwich covariance on the Elo scale (arena-rank's ``ci_method="sandwich"``)."""
    _check(reg, scale, base)
    d = _Data(table, features, reweight, min_pair_count, anony, language, category)
    n = d.battles.n_systems
    theta, gamma = d.fit(reg)
    cov = d.sandwich(theta, gamma, reg)
    unit = to_elo_scale(1.0, scale=scale, base=base, init=0.0)
    return to_elo_scale(theta, scale=scale, base=base, init=init), unit ** 2 * cov[:n, :n]


@register_bootstrap("bradley_terry_contextual")
def bradley_terry_contextual_bootstrap(table: pd.DataFrame, n_boot: int, rng: np.random.Generator, *,
                                       features: Any = "v1", reg: float = 1.0, reweight: bool = True,
                                       min_pair_count: float = 50.0, scale: float = 400.0, base: float = 10.0,
                                       init: float = 1000.0, anony: bool | None = None, language: Any = None,
                                       category: str | None = None) -> np.ndarray:
    """Ratings over battle resamples (rows drawn with replacement, weights and features travel along).

    Each round reweights the deduplicated cells (:func:`~scorebench.aggregate.style_cells.resample_cell_weights`).
    """
    _check(reg, scale, base)
    d = _Data(table, features, reweight, min_pair_count, anony, language, category)
    c, n = d.cells, d.battles.n_systems
    full = d.fit(reg)
    pairs = _Pairs(c.a, c.b, n, c.X)
    out = np.empty((n_boot, n))
    for i in range(n_boot):
        # N battles drawn with replacement, their weights summed per cell; warm start at the full-data
        # estimate: 3 Newton steps instead of 6-8 (a last step < 1e-6 leaves an error ~1e-12: quadratic)
        theta, _ = _newton(pairs, c.y, resample_cell_weights(c, rng), c.n_battles, reg, 1e-6, 100, full)
        out[i] = to_elo_scale(theta, scale=scale, base=base, init=init)
    return out


def contextual_frame(table: pd.DataFrame, *, ci: float = 0.95, **params: Any) -> pd.DataFrame:
    """Coefficients of the contextual model with sandwich intervals: ``feature``, ``coefficient``,
    ``se``, ``ci_low``, ``ci_high``."""
    from scorebench.aggregate.pair_counts import normal_bounds

    features = params.pop("features", "v1")
    reg = float(params.pop("reg", 1.0))
    reweight = params.pop("reweight", True)
    mpc = params.pop("min_pair_count", 50.0)
    filters = {k: params.pop(k, None) for k in ("anony", "language", "category")}
    if params:
        raise InputError(f"contextual_frame: unknown parameter(s) {sorted(params)}")
    d = _Data(table, features, reweight, mpc, filters["anony"], filters["language"], filters["category"])
    n = d.battles.n_systems
    theta, gamma = d.fit(reg)
    cov = d.sandwich(theta, gamma, reg)
    se = np.sqrt(np.clip(np.diag(cov)[n:], 0.0, None))
    lo, hi = normal_bounds(gamma, se, ci)
    return pd.DataFrame({"feature": list(d.features), "coefficient": gamma, "se": se, "ci_low": lo, "ci_high": hi})
