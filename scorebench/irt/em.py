r"""Marginal maximum likelihood by EM (Bock & Aitkin, 1981) on an adaptive dense grid.

Each iteration computes, for every item :math:`j` and node :math:`q`, the expected number of
systems at the node that answered (:math:`n_{jq}`) and answered right (:math:`r_{jq}`) under
the current posteriors (:func:`~scorebench.irt.quadrature.estep`), then maximises the
expected complete-data log-likelihood item by item,

.. math::

    \ell_j(\eta_j) = \sum_q r_{jq} \log P_j(\theta_q) + (n_{jq} - r_{jq}) \log(1 - P_j(\theta_q))
    + \log p(\eta_j),

by Fisher scoring with step halving (:math:`p` is an optional prior: normal on ``a`` and
``d``, beta on ``c`` and ``1 - u``). The grid spacing follows the narrowest posterior
(:func:`~scorebench.irt.quadrature.choose_grid`), which keeps long tests unbiased.

Plain EM moves the latent scale very slowly when tests are long (the N(0, 1) prior is the
only thing that fixes it, and posteriors are dominated by the likelihood), so each
iteration is a parameter-expanded step (PX-EM; Liu, Rubin & Wu, 1998): the latent mean and
standard deviation are estimated from the posteriors and folded back into the items,
:math:`a \leftarrow a\hat\sigma`, :math:`d \leftarrow d + a\hat\mu`.

Reference: Bock, R. D., & Aitkin, M. (1981). Marginal maximum likelihood estimation of
item parameters: application of an EM algorithm. *Psychometrika* 46, 443-459.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from scorebench.irt.models import PARAMS, ModelSpec, derivatives, log_prob
from scorebench.irt.quadrature import Grid, Posterior, ResponseOps, choose_grid, estep

__all__ = ["Priors", "EMResult", "fit_em", "start_values", "mstep", "projected_gradient"]

_EPS = 1e-12
_DIVERGE_A = 20.0
_DIVERGE_D = 40.0


def _diverging(params: np.ndarray) -> np.ndarray:
    """Items whose estimates run off to infinity (separation)."""
    return (np.abs(params[:, 0]) > _DIVERGE_A) | (np.abs(params[:, 1]) > _DIVERGE_D)


@dataclass(frozen=True)
class Priors:
    """Priors on item parameters (``None`` = none).

    ``a``, ``d``: ``(mean, sd)`` of a normal prior (a normal prior on the slope allows
    negative slopes, which real data has). ``c``: ``(alpha, beta)`` of a beta prior on the
    lower asymptote; ``u``: ``(alpha, beta)`` of a beta prior on ``1 - u``.
    """

    a: tuple[float, float] | None = None
    d: tuple[float, float] | None = None
    c: tuple[float, float] | None = (5.0, 17.0)
    u: tuple[float, float] | None = (2.0, 20.0)

    def _spec(self):
        return (("a", 0, self.a, "normal"), ("d", 1, self.d, "normal"),
                ("c", 2, self.c, "beta"), ("u", 3, self.u, "beta1m"))

    def log_density(self, params: np.ndarray, free: np.ndarray) -> np.ndarray:
        """Log prior of each item's free parameters (up to constants), shape (J,)."""
        out = np.zeros(params.shape[0])
        for _, k, prior, kind in self._spec():
            if prior is None:
                continue
            x = params[:, k]
            if kind == "normal":
                v = -0.5 * ((x - prior[0]) / prior[1]) ** 2
            else:
                p = x if kind == "beta" else 1.0 - x
                with np.errstate(divide="ignore"):
                    v = (prior[0] - 1) * np.log(p) + (prior[1] - 1) * np.log1p(-p)
            out += np.where(free[:, k], v, 0.0)
        return out

    def grad_info(self, params: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Gradient and negative second derivative of the log prior, shape (J, 4) each."""
        g = np.zeros_like(params)
        h = np.zeros_like(params)
        for _, k, prior, kind in self._spec():
            if prior is None:
                continue
            x = params[:, k]
            if kind == "normal":
                g[:, k] = -(x - prior[0]) / prior[1] ** 2
                h[:, k] = 1.0 / prior[1] ** 2
            else:
                p = np.clip(x if kind == "beta" else 1.0 - x, 1e-9, 1 - 1e-9)
                sign = 1.0 if kind == "beta" else -1.0
                g[:, k] = sign * ((prior[0] - 1) / p - (prior[1] - 1) / (1 - p))
                h[:, k] = (prior[0] - 1) / p**2 + (prior[1] - 1) / (1 - p) ** 2
        return g, h


@dataclass
class EMResult:
    """What :func:`fit_em` returns (internal)."""

    params: np.ndarray
    grid: Grid
    posterior: Posterior
    n_iter: int
    converged: bool
    max_change: float
    history: list = field(default_factory=list)
    message: str = ""


def _objective(params: np.ndarray, r: np.ndarray, n: np.ndarray, theta: np.ndarray,
               priors: Priors, free: np.ndarray) -> np.ndarray:
    log_p, log_q = log_prob(params, theta)
    return (r * log_p + (n - r) * log_q).sum(axis=1) + priors.log_density(params, free)


def _clip(params: np.ndarray) -> np.ndarray:
    params[:, 2] = np.clip(params[:, 2], 0.0, 0.95)
    params[:, 3] = np.clip(params[:, 3], np.maximum(params[:, 2] + 0.05, 0.05), 1.0)
    return params


def mstep(params: np.ndarray, r: np.ndarray, n: np.ndarray, theta: np.ndarray, spec: ModelSpec,
          free: np.ndarray, priors: Priors, *, iters: int = 2) -> np.ndarray:
    """Fisher-scoring steps on every item's expected log-likelihood (with step halving).

    ``free`` (J, 4) marks the parameters estimated per item; with ``spec.common_slope`` one
    slope shared by all items is updated after the per-item parameters.
    """
    J, Q = r.shape
    block = max(1, 2_000_000 // max(Q, 1))
    if J > block and not spec.common_slope:  # bound the memory of the (items x nodes) arrays
        return np.concatenate([mstep(params[s:s + block], r[s:s + block], n[s:s + block], theta, spec,
                                     free[s:s + block], priors, iters=iters) for s in range(0, J, block)])
    params = params.copy()
    idx = [k for k in range(4) if free[:, k].any()]
    for _ in range(iters):
        P, D = derivatives(params, theta, which=tuple(idx) + ((0,) if spec.common_slope else ()))
        P = np.clip(P, _EPS, 1.0 - _EPS)
        w = r / P - (n - r) / (1.0 - P)
        v = n / (P * (1.0 - P))
        gp, hp = priors.grad_info(params)
        k = len(idx)
        if k:
            grad = _grad(w, D, gp, idx)
            info = np.empty((params.shape[0], k, k))
            for x, i in enumerate(idx):
                for y, l in enumerate(idx[x:], start=x):
                    info[:, x, y] = info[:, y, x] = (v * D[i] * D[l]).sum(axis=1)
                info[:, x, x] += hp[:, i] + 1e-10
            # Active set: an asymptote sitting on its bound with the gradient pushing outwards
            # is held for this step; a joint Newton step that includes it would be clipped
            # back and drag the slope and intercept to a point short of the optimum.
            fmask = free[:, idx] & ~_at_bound(params, grad, idx)
            grad = np.where(fmask, grad, 0.0)
            eye = np.eye(k)[None]
            keep = fmask[:, :, None] & fmask[:, None, :]
            info = np.where(keep, info, eye)
            step = np.linalg.solve(info, grad[..., None])[..., 0]
            big = np.abs(step).max(axis=1, keepdims=True)
            step = step / np.maximum(1.0, big)  # at most 1 per coordinate per step
            params = _halving(params, step, idx, r, n, theta, priors, free)
        if spec.common_slope:
            params = _common_slope_step(params, r, n, theta, priors)
    return params


def _grad(w: np.ndarray, D: np.ndarray, gp: np.ndarray, idx: list[int]) -> np.ndarray:
    """Gradient of each item's expected log-posterior over the parameters ``idx``, (J, len(idx))."""
    return np.stack([(w * D[i]).sum(axis=1) + gp[:, i] for i in idx], axis=1)


def projected_gradient(params: np.ndarray, r: np.ndarray, n: np.ndarray, theta: np.ndarray,
                       spec: ModelSpec, free: np.ndarray, priors: Priors) -> float:
    r"""Largest component of the gradient of the marginal log-posterior, projected on the bounds.

    By Fisher's identity the gradient of the marginal log-likelihood at :math:`\eta` equals the
    gradient of the expected complete-data log-likelihood with the posteriors taken at
    :math:`\eta`, so ``r`` and ``n`` from an E-step at ``params`` give it exactly. Components of
    asymptotes on a bound whose ascent direction points outside are dropped (the KKT conditions).
    """
    idx = [k for k in range(4) if free[:, k].any()]
    P, D = derivatives(params, theta, which=tuple(idx) + ((0,) if spec.common_slope else ()))
    P = np.clip(P, _EPS, 1.0 - _EPS)
    w = r / P - (n - r) / (1.0 - P)
    gp, _ = priors.grad_info(params)
    out = 0.0
    if idx:
        grad = _grad(w, D, gp, idx)
        grad = np.where(free[:, idx] & ~_at_bound(params, grad, idx), grad, 0.0)
        out = float(np.abs(grad).max())
    if spec.common_slope:
        g = float((w * D[0]).sum())
        if priors.a is not None:
            g -= (params[0, 0] - priors.a[0]) / priors.a[1] ** 2
        out = max(out, abs(g))
    return out


def _at_bound(params: np.ndarray, grad: np.ndarray, idx: list[int]) -> np.ndarray:
    """(J, len(idx)) mask of parameters on a bound of :func:`_clip` with the ascent direction outside."""
    out = np.zeros(grad.shape, dtype=bool)
    for x, k in enumerate(idx):
        if k == 2:
            out[:, x] = ((params[:, 2] <= 0.0) & (grad[:, x] < 0)) | ((params[:, 2] >= 0.95) & (grad[:, x] > 0))
        elif k == 3:
            out[:, x] = ((params[:, 3] >= 1.0) & (grad[:, x] > 0)) | (
                (params[:, 3] <= np.maximum(params[:, 2] + 0.05, 0.05)) & (grad[:, x] < 0))
    return out


def _halving(params, step, idx, r, n, theta, priors, free):
    before = _objective(params, r, n, theta, priors, free)
    scale = np.ones(params.shape[0])
    todo = np.ones(params.shape[0], dtype=bool)
    new = params.copy()
    for _ in range(8):
        trial = params.copy()
        trial[:, idx] += scale[:, None] * step
        trial = _clip(trial)
        after = _objective(trial, r, n, theta, priors, free)
        ok = todo & (after >= before - 1e-9 * np.abs(before))
        new[ok] = trial[ok]
        todo &= ~ok
        if not todo.any():
            break
        scale = np.where(todo, scale * 0.5, scale)
    return new


def _common_slope_step(params, r, n, theta, priors):
    P, D = derivatives(params, theta, which=(0,))
    P = np.clip(P, _EPS, 1.0 - _EPS)
    grad = ((r / P - (n - r) / (1.0 - P)) * D[0]).sum()
    info = (n / (P * (1.0 - P)) * D[0] ** 2).sum()
    if priors.a is not None:
        grad += -(params[0, 0] - priors.a[0]) / priors.a[1] ** 2
        info += 1.0 / priors.a[1] ** 2
    step = float(np.clip(grad / max(info, 1e-12), -1.0, 1.0))
    allfree = np.zeros_like(params, dtype=bool)
    before = _objective(params, r, n, theta, Priors(c=None, u=None), allfree).sum()
    for _ in range(8):
        trial = params.copy()
        trial[:, 0] += step
        if _objective(trial, r, n, theta, Priors(c=None, u=None), allfree).sum() >= before - 1e-9 * abs(before):
            return trial
        step *= 0.5
    return params


def start_values(ops: ResponseOps, spec: ModelSpec, fixed: np.ndarray | None = None,
                 init: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Starting item parameters from a logistic regression on the standardised score.

    Each system's proportion right (of the items it answered) gives a provisional ability
    (standardised logit); items are regressed on it through the same M-step as EM, using a
    coarse grid with each system placed at its provisional ability.
    """
    N, J = ops.shape
    right = ops._left(ops.y, np.ones((J, 1)))[:, 0]
    p = (right + 0.5) / (ops.n_obs_persons + 1.0)
    t = np.log(p / (1 - p))
    t = (t - t.mean()) / (t.std() or 1.0)
    nodes = np.linspace(-4.0, 4.0, 41)
    pos = np.clip((t + 4.0) / 0.2, 0, 40 - 1e-9)
    k = pos.astype(int)
    frac = pos - k
    post = np.zeros((N, 41))
    post[np.arange(N), k] = 1 - frac
    post[np.arange(N), k + 1] += frac
    r, n = ops.counts(post)
    params = np.tile([1.0, 0.0, 0.0, 1.0], (J, 1))
    if "c" in spec.free:
        params[:, 2] = 0.1
    if "u" in spec.free:
        params[:, 3] = 0.95
    rate = (r.sum(1) + 0.5) / (n.sum(1) + 1.0)
    params[:, 1] = np.log(rate / (1 - rate))
    if init is not None:
        params = np.where(np.isnan(init), params, init)
    free = np.tile(spec.free_mask, (J, 1))
    if fixed is not None:
        free &= ~fixed
    params = mstep(params, r, n, nodes, spec, free, Priors(a=(1.0, 2.0), d=(0.0, 5.0)), iters=6)
    if spec.common_slope:
        params[:, 0] = np.median(params[:, 0])
    return params, t


def fit_em(ops: ResponseOps, spec: ModelSpec, *, priors: Priors, fixed: np.ndarray | None = None,
           init: np.ndarray | None = None, estimate_latent: bool = False, max_iter: int = 500,
           tol: float = 1e-5, spacing: float | None = None, max_nodes: int = 1201,
           regrid: tuple[int, ...] = (3, 12), mstep_iters: int = 1, px: bool = True,
           gtol: float = 1e-4) -> EMResult:
    """Run EM to convergence: largest parameter change below ``tol`` and the projected gradient
    of the marginal log-posterior (:func:`projected_gradient`) below ``gtol`` per system.

    ``fixed`` (J, 4) marks parameters held at their ``init`` values (anchor items); with
    ``estimate_latent`` the mean and standard deviation of the ability distribution are
    estimated as well (needed when anchors fix the scale).
    """
    J = ops.shape[1]
    free = np.tile(spec.free_mask, (J, 1))
    if fixed is not None:
        free &= ~fixed
    params, t = start_values(ops, spec, fixed, init)
    grid = choose_grid(params, t, ops, spacing=spacing, max_nodes=max_nodes)
    history: list[float] = []
    converged = False
    change = pgrad = np.inf
    it = 0
    for it in range(1, max_iter + 1):
        post = estep(ops, params, grid)
        history.append(post.loglik)
        if it in regrid and spacing is None:
            eap = post.post @ grid.theta
            new_grid = choose_grid(params, eap, ops, mu=grid.mu, sigma=grid.sigma, max_nodes=max_nodes)
            if (abs(new_grid.h - grid.h) > 0.1 * grid.h or new_grid.theta[0] < grid.theta[0] - grid.h
                    or new_grid.theta[-1] > grid.theta[-1] + grid.h):
                grid = new_grid
                post = estep(ops, params, grid)
        new = mstep(params, post.r, post.n, grid.theta, spec, free, priors, iters=mstep_iters)
        w = post.post.sum(axis=0)
        mu = float(w @ grid.theta / w.sum())
        sd = float(np.sqrt(w @ (grid.theta - mu) ** 2 / w.sum()))
        if estimate_latent:
            grid = grid.with_prior(mu, sd)
        elif px and not _diverging(new).any():
            # PX-EM: the latent mean and sd are free in the expanded model; reducing back to
            # N(0, 1) rescales the items. This removes EM's slow drift of the scale, which
            # the prior alone pins down only weakly when tests are long.
            sd = min(max(sd, 0.5), 2.0)
            new[:, 1] += new[:, 0] * mu
            new[:, 0] *= sd
        diff = np.abs(new - params)[:, list(PARAMS).index("a"):]
        change = float(np.nanmax(np.where(free | spec.common_slope, diff, 0.0))) if diff.size else 0.0
        if change < tol:
            # A small step alone can be a stall (an asymptote pinned on its bound); converged
            # also requires the projected gradient of the marginal log-posterior to vanish.
            pgrad = projected_gradient(params, post.r, post.n, grid.theta, spec, free, priors)
            if pgrad < gtol * ops.shape[0]:
                params = new
                converged = True
                break
            # With priors on the slopes or intercepts the PX-EM map's fixed point is not the
            # posterior mode (the prior is not invariant under the rescaling): finish with EM.
            px = False
        params = new
        if it >= 50 and _diverging(params).any():
            break  # the maximum likelihood estimate does not exist; say so instead of iterating on
    final = estep(ops, params, grid)
    diverging = _diverging(params)
    if converged:
        message = (f"EM converged in {it} iterations (largest parameter change {change:.2e} < tol {tol:g}, "
                   f"projected gradient {pgrad:.2e} < {gtol:g} x {ops.shape[0]} systems)")
    elif diverging.any():
        message = (f"EM did not converge: {int(diverging.sum())} item(s) diverge (|a| > {_DIVERGE_A:g} or "
                   f"|d| > {_DIVERGE_D:g} after {it} iterations; typically every system above some ability "
                   "answers right, so the slope has no finite estimate; EM stopped there). "
                   + ("Use stronger priors (priors={'a': (1.0, 1.0), 'd': (0.0, 3.0)}) or drop those items"
                      if priors.a is not None else
                      "Add a prior on the slopes (priors={'a': (1.0, 1.5)}) or drop those items"))
    else:
        message = (f"EM did not converge in {max_iter} iterations (largest parameter change {change:.2e}, "
                   f"tol {tol:g}; projected gradient {pgrad:.2e}, needed < {gtol:g} x {ops.shape[0]} systems)")
    return EMResult(params, grid, final, it, converged, change, history, message)
