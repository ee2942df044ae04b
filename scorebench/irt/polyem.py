r"""Marginal ML for polytomous and mixed item sets by EM (Bock & Aitkin, 1981).

Responses are coded one-hot over the stacked categories of all items (``C`` columns), so an
E-step is two matrix products: the response log-likelihood at every node is
``onehot @ log P`` (N x C times C x Q) and the expected category counts are
``onehot.T @ posterior`` (C x Q). Missing answers are rows of zeros and drop out of both.

The M-step maximises, for each item, :math:`\sum_q\sum_k r_{jkq}\log P_{jk}(\theta_q)` by
Fisher scoring, vectorised over the items of one model and number of categories, with the
expected information :math:`\sum_q n_{jq}\sum_k \partial P_{jk}\partial P_{jk}^\top / P_{jk}`
and step halving. Parameters shared across items (the Rasch-family slope; the rating-scale
category steps) take their own Fisher-scoring step afterwards (a generalised EM step).
Each iteration is parameter-expanded (PX-EM; Liu, Rubin & Wu, 1998): the posterior mean and
standard deviation of the latent trait are folded back into the items.

Quadrature: equally spaced nodes on [-6, 6] with normalised N(0, 1) weights; 61 nodes
(spacing 0.2, R mirt's unidimensional default) unless the test information calls for a
finer spacing (long tests: the spacing follows the narrowest posterior, as in
:mod:`scorebench.irt.quadrature`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from scorebench.core.errors import InputError
from scorebench.irt.polymodels import category_jacobian, item_information_poly, log_category_probs

__all__ = ["ItemLayout", "PolyEMResult", "fit_poly_em", "poly_estep", "stacked_log_probs"]

_RASCH = ("pcm", "rsm")
_CUMUL = ("2pl", "graded")


@dataclass(frozen=True)
class ItemLayout:
    """Model and number of intercepts of each item, and where its categories are stacked."""

    kinds: tuple[str, ...]
    n_cat: np.ndarray          # (J,) K_j + 1

    @property
    def offsets(self) -> np.ndarray:
        return np.concatenate([[0], np.cumsum(self.n_cat)[:-1]]).astype(int)

    @property
    def n_columns(self) -> int:
        return int(self.n_cat.sum())

    def groups(self) -> dict[tuple[str, int], np.ndarray]:
        """(kind, K) -> item positions."""
        out: dict[tuple[str, int], list[int]] = {}
        for j, (k, c) in enumerate(zip(self.kinds, self.n_cat)):
            out.setdefault((k, int(c) - 1), []).append(j)
        return {key: np.array(v) for key, v in out.items()}

    def rows(self, idx: np.ndarray, K: int) -> np.ndarray:
        """Stacked row numbers of the categories of items ``idx`` (all with K intercepts), (G, K+1)."""
        return self.offsets[idx][:, None] + np.arange(K + 1)[None, :]


def onehot(values: np.ndarray, layout: ItemLayout):
    """N x C indicator of each system's category on each item (dense, or sparse when large)."""
    N, J = values.shape
    obs = ~np.isnan(values)
    ii, jj = np.nonzero(obs)
    cols = layout.offsets[jj] + values[ii, jj].astype(int)
    if N * layout.n_columns <= 4e7:
        out = np.zeros((N, layout.n_columns))
        out[ii, cols] = 1.0
        return out
    return sp.csr_matrix((np.ones(len(ii)), (ii, cols)), shape=(N, layout.n_columns))


def stacked_log_probs(layout: ItemLayout, a: np.ndarray, d: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """``log P`` of every stacked category at every node, (C, Q)."""
    out = np.empty((layout.n_columns, len(theta)))
    for (kind, K), idx in layout.groups().items():
        lp = log_category_probs(kind, a[idx], d[idx, :K], theta)
        out[layout.rows(idx, K).ravel()] = lp.reshape(-1, len(theta))
    return out


@dataclass
class Posterior:
    post: np.ndarray           # (N, Q)
    loglik_person: np.ndarray  # (N,)
    counts: np.ndarray         # (C, Q) expected category counts

    @property
    def loglik(self) -> float:
        return float(self.loglik_person.sum())


def normal_log_weights(theta: np.ndarray) -> np.ndarray:
    """Log N(0, 1) weights at the nodes, normalised to sum to one (as mirt does)."""
    lw = -0.5 * theta**2
    return lw - np.log(np.exp(lw).sum())


def poly_estep(Y, layout: ItemLayout, a: np.ndarray, d: np.ndarray, theta: np.ndarray,
               log_w: np.ndarray) -> Posterior:
    """Posteriors over the nodes, marginal log-likelihoods and expected category counts."""
    lp = stacked_log_probs(layout, a, d, theta)
    ll = np.asarray(Y @ lp) + log_w[None, :]
    top = ll.max(axis=1, keepdims=True)
    post = np.exp(ll - top)
    tot = post.sum(axis=1, keepdims=True)
    post /= tot
    counts = np.asarray(Y.T @ post)
    return Posterior(post, (top + np.log(tot))[:, 0], counts)


def _objective(kind, a, d, r, theta, prior_a=None) -> np.ndarray:
    out = (r * log_category_probs(kind, a, d, theta)).sum(axis=(1, 2))
    if prior_a is not None and kind not in _RASCH:
        out = out - 0.5 * ((a - prior_a[0]) / prior_a[1]) ** 2
    return out


def _transform(kind: str, K: int) -> np.ndarray:
    """Item-specific free directions in (a, d_1..d_K) space, (K+1, f)."""
    if kind == "pcm":
        return np.eye(K + 1)[:, 1:]
    if kind == "rsm":
        return np.concatenate([[0.0], np.arange(1, K + 1, dtype=float)])[:, None]
    return np.eye(K + 1)


def _grad_info(kind, a, d, r, theta):
    P, D = category_jacobian(kind, a, d, theta)
    n = r.sum(axis=1)                                        # (G, Q)
    grad = np.einsum("gpkq,gkq->gp", D, r / P)
    info = np.einsum("gpkq,gskq,gq->gps", D, D / P[:, None], n)
    return grad, info


def _halving(kind, a, d, step, r, theta, before, prior_a=None):
    """Apply ``step`` (G, K+1) with per-item halving until the objective does not decrease."""
    out_a, out_d = a.copy(), d.copy()
    todo = np.ones(len(a), dtype=bool)
    for _ in range(12):
        ta, td = a + step[:, 0], d + step[:, 1:]
        ok = todo & (_objective(kind, ta, td, r, theta, prior_a) >= before - 1e-10 * np.abs(before))
        if kind in _CUMUL and td.shape[1] > 1:
            ok &= (np.diff(td, axis=1) < 0).all(axis=1)
        out_a[ok], out_d[ok] = ta[ok], td[ok]
        todo &= ~ok
        if not todo.any():
            break
        step = step * 0.5
    return out_a, out_d


def mstep(layout: ItemLayout, a: np.ndarray, d: np.ndarray, counts: np.ndarray, theta: np.ndarray,
          prior_a: tuple[float, float] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """One Fisher-scoring step per item, then one for each set of shared parameters."""
    a, d = a.copy(), d.copy()
    shared_slope = {"g": 0.0, "h": 0.0}
    for (kind, K), idx in layout.groups().items():
        r = counts[layout.rows(idx, K)]                        # (G, K+1, Q)
        ga, da = a[idx], d[idx, :K]
        grad, info = _grad_info(kind, ga, da, r, theta)
        if prior_a is not None and kind not in _RASCH:
            grad[:, 0] -= (ga - prior_a[0]) / prior_a[1] ** 2
            info[:, 0, 0] += 1.0 / prior_a[1] ** 2
        B = _transform(kind, K)
        g = grad @ B
        H = np.einsum("pf,gps,sh->gfh", B, info, B) + 1e-9 * np.eye(B.shape[1])
        step = np.linalg.solve(H, g[..., None])[..., 0]
        step /= np.maximum(1.0, np.abs(step).max(axis=1, keepdims=True))
        before = _objective(kind, ga, da, r, theta, prior_a)
        na, nd = _halving(kind, ga, da, step @ B.T, r, theta, before, prior_a)
        a[idx], d[idx, :K] = na, nd
        if kind == "rsm":
            _rsm_steps(kind, K, idx, a, d, r, theta)
    rasch = [(k, K, idx) for (k, K), idx in layout.groups().items() if k in _RASCH]
    if rasch:
        _shared_slope(layout, rasch, a, d, counts, theta)
    return a, d


def _rsm_steps(kind, K, idx, a, d, r, theta) -> None:
    """Fisher-scoring step on the category steps shared by the rsm items with K intercepts."""
    if K < 2:
        return  # one step only: it is absorbed by the item locations
    ga, da = a[idx], d[idx, :K]
    grad, info = _grad_info(kind, ga, da, r, theta)
    # d_k = k c + sum_{m<=k} delta_m with sum(delta) = 0: free directions delta_m - delta_K.
    L = np.tril(np.ones((K, K)))
    C = np.vstack([np.eye(K - 1), -np.ones((1, K - 1))])
    T = L @ C                                                # (K, K-1) in d space
    g = grad[:, 1:].sum(axis=0) @ T
    H = T.T @ info[:, 1:, 1:].sum(axis=0) @ T + 1e-9 * np.eye(K - 1)
    step = np.linalg.solve(H, g)
    step /= max(1.0, float(np.abs(step).max()))
    before = _objective(kind, ga, da, r, theta).sum()
    for _ in range(12):
        trial = da + (T @ step)[None, :]
        if _objective(kind, ga, trial, r, theta).sum() >= before - 1e-10 * abs(before):
            d[idx, :K] = trial
            return
        step = step * 0.5


def _shared_slope(layout, rasch, a, d, counts, theta) -> None:
    g = h = before = 0.0
    parts = []
    for kind, K, idx in rasch:
        r = counts[layout.rows(idx, K)]
        grad, info = _grad_info(kind, a[idx], d[idx, :K], r, theta)
        g += grad[:, 0].sum()
        h += info[:, 0, 0].sum()
        before += _objective(kind, a[idx], d[idx, :K], r, theta).sum()
        parts.append((kind, K, idx, r))
    step = g / (h + 1e-9)
    step = float(np.clip(step, -1.0, 1.0))
    for _ in range(12):
        after = sum(_objective(kind, a[idx] + step, d[idx, :K], r, theta).sum() for kind, K, idx, r in parts)
        if after >= before - 1e-10 * abs(before):
            for _, _, idx, _ in parts:
                a[idx] += step
            return
        step *= 0.5


def start_values(values: np.ndarray, layout: ItemLayout) -> tuple[np.ndarray, np.ndarray]:
    """Slopes 1 and intercepts from the marginal category proportions (smoothed)."""
    J = values.shape[1]
    Kmax = int(layout.n_cat.max()) - 1
    a = np.ones(J)
    d = np.full((J, Kmax), np.nan)
    for j in range(J):
        K = int(layout.n_cat[j]) - 1
        col = values[:, j]
        col = col[~np.isnan(col)]
        p = (np.bincount(col.astype(int), minlength=K + 1)[:K + 1] + 0.5) / (len(col) + 0.5 * (K + 1))
        kind = layout.kinds[j]
        if kind in _CUMUL:
            ge = np.cumsum(p[::-1])[::-1][1:]
            d[j, :K] = np.log(ge / (1 - ge)) * 1.3
        elif kind == "rsm":
            c = float(np.mean(np.log(p[1:] / p[:-1])))
            d[j, :K] = c * np.arange(1, K + 1)
        else:
            d[j, :K] = np.log(p[1:] / p[0])
    return a, d


def choose_nodes(layout: ItemLayout, a: np.ndarray, d: np.ndarray, quadpts: int | None) -> np.ndarray:
    """Equally spaced nodes on [-6, 6]: 61 (mirt) unless the test information needs more."""
    if quadpts is not None:
        return np.linspace(-6.0, 6.0, int(quadpts))
    coarse = np.linspace(-4.0, 4.0, 81)
    info = np.zeros_like(coarse)
    for (kind, K), idx in layout.groups().items():
        info += item_information_poly(kind, np.clip(np.abs(a[idx]), 0, 4), d[idx, :K], coarse).sum(axis=0)
    s = 1.0 / np.sqrt(info.max() + 1.0)
    h = min(0.2, max(0.01, s))
    n = int(np.ceil(12.0 / h)) + 1
    n = max(61, min(n, 1201))
    return np.linspace(-6.0, 6.0, n)


def _regrid(Y, layout, a, d, theta, log_w, post):
    """Nodes for the current estimates; kept unless the spacing must shrink by more than 10%."""
    new = choose_nodes(layout, a, d, None)
    if len(new) <= 1.1 * len(theta):
        return theta, log_w, post
    lw = normal_log_weights(new)
    return new, lw, poly_estep(Y, layout, a, d, new, lw)


@dataclass
class PolyEMResult:
    a: np.ndarray
    d: np.ndarray
    theta: np.ndarray
    log_w: np.ndarray
    posterior: Posterior
    n_iter: int
    converged: bool
    message: str
    history: list = field(default_factory=list)


def fit_poly_em(values: np.ndarray, layout: ItemLayout, *, max_iter: int = 2000, tol: float = 1e-5,
                quadpts: int | None = None, prior_a: tuple[float, float] | None = None,
                px: bool = True) -> PolyEMResult:
    """EM to convergence (largest change of any slope or intercept below ``tol``)."""
    a, d = start_values(values, layout)
    Y = onehot(values, layout)
    theta = choose_nodes(layout, a, d, quadpts)
    log_w = normal_log_weights(theta)
    history: list[float] = []
    converged = False
    change = np.inf
    it = 0
    cum = np.array([k in _CUMUL for k in layout.kinds])
    kk = np.where(cum[:, None], 1.0, np.arange(1, d.shape[1] + 1)[None, :])
    for it in range(1, max_iter + 1):
        post = poly_estep(Y, layout, a, d, theta, log_w)
        history.append(post.loglik)
        if it == 5 and quadpts is None:  # the start values understate the slopes: regrid once
            theta, log_w, post = _regrid(Y, layout, a, d, theta, log_w, post)
        na, nd = mstep(layout, a, d, post.counts, theta, prior_a)
        if px and prior_a is not None and change < 1e-3:
            # with a slope prior the PX-EM map's fixed point is not the posterior mode (the prior
            # is not invariant under the rescaling): finish with plain EM
            px = False
        if px:
            w = post.post.sum(axis=0)
            mu = float(w @ theta / w.sum())
            sd = float(np.sqrt(w @ (theta - mu) ** 2 / w.sum()))
            sd = min(max(sd, 0.5), 2.0)
            nd = nd + (na * mu)[:, None] * kk
            na = na * sd
        change = float(max(np.nanmax(np.abs(na - a)), np.nanmax(np.abs(nd - d))))
        a, d = na, nd
        if not (np.isfinite(a).all() and np.isfinite(d[~np.isnan(d)]).all()):
            raise InputError("EM diverged (non-finite estimates); check for items with nearly empty categories")
        if it >= 50 and (np.abs(a) > 20.0).any():
            break  # separation: some slope has no finite estimate; say so instead of iterating on
        if change < tol:
            if quadpts is None:
                n_before = len(theta)
                theta, log_w, _ = _regrid(Y, layout, a, d, theta, log_w, post)
                if len(theta) != n_before:
                    continue  # the estimates call for a finer grid: iterate on it
            converged = True
            break
    final = poly_estep(Y, layout, a, d, theta, log_w)
    diverging = np.abs(a) > 20.0
    if converged:
        msg = f"EM converged in {it} iterations (largest parameter change {change:.2e} < tol {tol:g})"
    elif diverging.any():
        msg = (f"EM did not converge: {int(diverging.sum())} item(s) diverge (|a| > 20 after {it} iterations; "
               "typically the item's scores are perfectly ordered by the others, so the slope has no finite "
               "estimate). Add a prior on the slopes (priors={'a': (1.0, 1.5)}) or drop those items")
    else:
        msg = f"EM did not converge in {max_iter} iterations (largest change {change:.2e}, tol {tol:g})"
    return PolyEMResult(a, d, theta, log_w, final, it, converged, msg, history)


def free_parameter_basis(lay: ItemLayout) -> np.ndarray:
    """The map from the free parameters to every item's (slope, intercepts) vector.

    One column per free parameter: a slope and intercepts per 2PL/graded/GPCM item, the
    intercepts of a PCM item, a scaled step of a nominal-as-ordered item, the shared steps
    of rating-scale groups, and one common slope for the Rasch-family items.
    """
    sizes = lay.n_cat.astype(int)                                     # params per item: a + K
    off = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    total = int(sizes.sum())
    cols = []
    for j, kind in enumerate(lay.kinds):
        K = int(sizes[j]) - 1
        if kind in ("2pl", "graded", "gpcm"):
            for p in range(K + 1):
                v = np.zeros(total)
                v[off[j] + p] = 1.0
                cols.append(v)
        elif kind == "pcm":
            for p in range(1, K + 1):
                v = np.zeros(total)
                v[off[j] + p] = 1.0
                cols.append(v)
        else:
            v = np.zeros(total)
            v[off[j] + 1:off[j] + K + 1] = np.arange(1, K + 1)
            cols.append(v)
    for (kind, K), idx in lay.groups().items():
        if kind == "rsm" and K >= 2:
            L = np.tril(np.ones((K, K)))
            Cm = np.vstack([np.eye(K - 1), -np.ones((1, K - 1))])
            Tk = L @ Cm
            for m in range(K - 1):
                v = np.zeros(total)
                for j in idx:
                    v[off[j] + 1:off[j] + K + 1] = Tk[:, m]
                cols.append(v)
    rasch = [j for j, k in enumerate(lay.kinds) if k in ("pcm", "rsm")]
    if rasch:
        v = np.zeros(total)
        v[off[rasch]] = 1.0
        cols.append(v)
    return np.column_stack(cols)
