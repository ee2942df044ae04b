"""Ratings from pairwise battles: Bradley–Terry, Elo, Plackett–Luce, and intransitivity checks.

Battles come from a ``battles`` table (``a``, ``b``, ``winner``) or are derived from a score
matrix: on every column, each pair of scored systems plays one battle weighted by the
column weight (see :func:`~scorebench.aggregate.input.battles_from_matrix`). Ratings are
reported on the Elo scale used by Chatbot Arena: :math:`R = R_0 + \\frac{s}{\\ln b}\\,\\theta`
with ``init`` :math:`R_0 = 1000`, ``scale`` :math:`s = 400`, ``base`` :math:`b = 10`, and
:math:`\\theta` centred to mean zero.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scorebench.core.lazy import lazy_attr
from scorebench.core.errors import ConvergenceError, InputError
from scorebench.core.stats import rng_from_seed
from scorebench.aggregate.input import Battles, ScoreMatrix, battles_from_matrix
from scorebench.aggregate.pair_counts import bt_sandwich, ipw_weights, pair_counts
from scorebench.aggregate.registry import MethodResult, register_bootstrap, register_intervals, register_method

minimize = lazy_attr("scipy.optimize", "minimize")
csr_matrix = lazy_attr("scipy.sparse", "csr_matrix")
connected_components = lazy_attr("scipy.sparse.csgraph", "connected_components")
expit, log_expit = lazy_attr("scipy.special", "expit"), lazy_attr("scipy.special", "log_expit")

__all__ = ["bt_fit", "bt_loglik", "bradley_terry", "bradley_terry_sandwich", "bt_bootstrap_cells", "elo", "plackett_luce", "pl_fit", "intransitivity",
           "Intransitivity", "to_elo_scale"]

_BT_CITATION = ("Bradley & Terry (1952), Biometrika 39; Hunter (2004), Ann. Statist. 32(1); "
                "Chiang et al. (2024), Chatbot Arena, ICML")
_BOOT_CHUNK = 128
_BOOT_TOL = 1e-4  # Newton step size in logits; the error left after such a step is ~1e-8 (quadratic)


def to_elo_scale(theta: np.ndarray, *, scale: float = 400.0, base: float = 10.0, init: float = 1000.0) -> np.ndarray:
    """Map log-strengths to the Elo scale: ``init + scale * theta / ln(base)``."""
    if not (scale > 0 and base > 1):
        raise InputError(f"Elo scale: expected scale > 0 and base > 1, got scale={scale!r}, base={base!r}")
    return init + scale * np.asarray(theta) / np.log(base)


def bt_loglik(W: np.ndarray, theta: np.ndarray) -> float:
    r"""Bradley–Terry log-likelihood :math:`\sum_{ij} W_{ij} \log \sigma(\theta_i - \theta_j)`."""
    return float((W * log_expit(theta[:, None] - theta[None, :])).sum())


def _strongly_connected(W: np.ndarray) -> bool:
    graph = csr_matrix(W > 0)
    n_comp, _ = connected_components(graph, directed=True, connection="strong")
    return n_comp == 1


def _newton(W: np.ndarray, prior: float, theta: np.ndarray, tol: float, max_iter: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Batched Newton–Raphson for the (penalised) Bradley–Terry likelihood; W has shape (B, n, n)."""
    B, n, _ = W.shape
    N = W + W.transpose(0, 2, 1)
    wins = W.sum(axis=2)
    extra = prior * np.eye(n) if prior > 0 else np.full((n, n), 1.0 / n)
    idx = np.arange(n)
    theta = theta.copy()
    converged = np.zeros(B, dtype=bool)
    p = np.empty_like(N)
    H = np.empty_like(N)
    it = 0
    for it in range(1, max_iter + 1):
        np.subtract(theta[:, :, None], theta[:, None, :], out=p)
        expit(p, out=p)
        np.multiply(N, p, out=H)  # N p
        g = wins - H.sum(axis=2) - prior * theta
        np.subtract(1.0, p, out=p)
        np.multiply(H, p, out=H)  # h = N p (1 - p)
        diag = H.sum(axis=2)
        np.negative(H, out=H)
        H[:, idx, idx] = diag
        H += extra
        delta = np.linalg.solve(H, g[:, :, None])[:, :, 0]
        big = np.abs(delta).max(axis=1)
        delta *= np.minimum(1.0, 4.0 / np.maximum(big, 1e-300))[:, None]
        theta += delta
        if prior == 0:
            theta -= theta.mean(axis=1, keepdims=True)
        converged = big < tol
        if converged.all():
            break
    return theta, converged, it


def bt_fit(W: np.ndarray, *, prior: float = 0.0, tol: float = 1e-10, max_iter: int = 200) -> np.ndarray:
    r"""Bradley–Terry maximum-likelihood (or MAP) log-strengths from a wins matrix.

    .. math::
        \hat\theta = \arg\max_\theta \sum_{i \ne j} W_{ij} \log \sigma(\theta_i - \theta_j)
                     - \frac{\lambda}{2}\lVert\theta\rVert^2

    ``W[i, j]`` counts the (weighted) wins of ``i`` over ``j``; a tie adds 1/2 to both
    directions. With ``prior`` :math:`\lambda = 0` the estimate is centred (mean 0) and exists
    only when every system both wins and loses along a chain of battles (the win graph is
    strongly connected); :math:`\lambda > 0` is a Gaussian prior with variance :math:`1/\lambda`.
    choix penalises :math:`\alpha\lVert\theta\rVert^2` rather than
    :math:`\tfrac{\lambda}{2}\lVert\theta\rVert^2`, so ``prior=λ`` equals choix's
    ``opt_pairwise(..., alpha=λ/2)`` (pinned by a test). Solved by Newton's method.

    Examples
    --------
    >>> W = np.array([[0.0, 2.0], [1.0, 0.0]])
    >>> th = bt_fit(W)
    >>> round(float(th[0] - th[1]), 6) == round(float(np.log(2.0)), 6)
    True
    """
    W = np.asarray(W, dtype=np.float64)
    if prior < 0 or not np.isfinite(prior):
        raise InputError(f"prior: expected a finite value >= 0, got {prior!r}")
    if prior == 0 and not _strongly_connected(W):
        raise InputError("Bradley-Terry: the maximum-likelihood estimate does not exist because some systems "
                         "never lose (or never win) against the rest (the win graph is not strongly "
                         "connected); pass prior=<lambda> > 0 for a regularised estimate")
    theta, converged, _ = _newton(W[None], prior, np.zeros((1, len(W))), tol, max_iter)
    if not converged.all():
        raise ConvergenceError(f"Bradley-Terry: Newton's method did not converge in {max_iter} iterations")
    return theta[0]


def _as_battles(data: ScoreMatrix | Battles) -> Battles:
    return data if isinstance(data, Battles) else battles_from_matrix(data)


def _weighted(data: ScoreMatrix | Battles, reweight: bool, min_pair_count: float) -> Battles:
    """The battles, with arena-rank's inverse-propensity weights when ``reweight``."""
    if not isinstance(reweight, (bool, np.bool_)):
        raise InputError(f"reweight: expected true or false, got {reweight!r}")
    b = _as_battles(data)
    return ipw_weights(b, min_pair_count=min_pair_count) if reweight else b


@register_method("bradley_terry", family="pairwise", accepts=("battles",),
                 missing="battles are only between systems scored on the same column; missing pairs are skipped",
                 citation=_BT_CITATION)
def bradley_terry(data: Battles, *, prior: float = 0.0, scale: float = 400.0, base: float = 10.0,
                  init: float = 1000.0, reweight: bool = False, min_pair_count: float = 50.0) -> MethodResult:
    r"""Bradley–Terry ratings (MLE, ties count half a win each way) on the Elo scale.

    .. math:: P(i \text{ beats } j) = \sigma(\theta_i - \theta_j) = \frac{1}{1 + b^{-(R_i - R_j)/s}}

    The battles are first reduced to (pair, outcome) counts with their weight sums
    (:func:`~scorebench.aggregate.pair_counts.pair_counts`), so the fit costs O(battles) once
    and then O(n²) per Newton step. Per-battle weights come from the table's ``weight``
    column; ``reweight=True`` replaces them by arena-rank's inverse-propensity weights
    :math:`1/\max(n_{\{a,b\}}, \text{min\_pair\_count})` (uneven model sampling undone). The
    default intervals of ``aggregate`` are the sandwich intervals of
    :func:`bradley_terry_sandwich` (``intervals="bootstrap"`` resamples battles instead);
    ratings and intervals equal arena-rank 0.1.1's to 1e-6 Elo (tests/aggregate/test_arena_rank_parity.py).

    Examples
    --------
    >>> import pandas as pd
    >>> from scorebench.aggregate.input import as_battles
    >>> b = as_battles(pd.DataFrame({"a": ["x", "x", "y"], "b": ["y", "y", "x"], "winner": ["a", "a", "a"]}))
    >>> r = bradley_terry(b)
    >>> round(float(r.scores[0] - r.scores[1]), 2)   # x won 2 of 3: 400 * log10(2)
    120.41
    """
    b = _weighted(data, reweight, min_pair_count)
    W = pair_counts(b).wins()
    theta = bt_fit(W, prior=prior)
    return MethodResult(to_elo_scale(theta, scale=scale, base=base, init=init),
                        {"theta": theta, "loglik": bt_loglik(W, theta), "n_battles": len(b.a)})


@register_intervals("bradley_terry")
def bradley_terry_sandwich(data: Battles, *, prior: float = 0.0, scale: float = 400.0, base: float = 10.0,
                           init: float = 1000.0, reweight: bool = False,
                           min_pair_count: float = 50.0) -> tuple[np.ndarray, np.ndarray]:
    r"""Bradley–Terry ratings and their sandwich covariance on the Elo scale (arena-rank's default).

    Returns ``(ratings, cov)`` with :math:`\mathrm{cov} = (s/\ln b)^2 H^{-1} G H^{-1}` (see
    :func:`~scorebench.aggregate.pair_counts.bt_sandwich`); the Wald interval is
    :math:`R_i \pm z_{(1+\mathrm{ci})/2} \sqrt{\mathrm{cov}_{ii}}`.

    Examples
    --------
    >>> import pandas as pd
    >>> from scorebench.aggregate.input import as_battles
    >>> b = as_battles(pd.DataFrame({"a": ["x"] * 30 + ["y"] * 10, "b": ["y"] * 30 + ["x"] * 10,
    ...                              "winner": ["a", "b", "tie"] * 10 + ["a"] * 10}))
    >>> r, cov = bradley_terry_sandwich(b)
    >>> round(float(np.sqrt(cov[0, 0])), 1)
    24.3
    """
    b = _weighted(data, reweight, min_pair_count)
    pc = pair_counts(b)
    theta = bt_fit(pc.wins(), prior=prior, tol=1e-12)
    unit = to_elo_scale(1.0, scale=scale, base=base, init=0.0)
    return to_elo_scale(theta, scale=scale, base=base, init=init), unit ** 2 * bt_sandwich(pc, theta, prior=prior)


@register_bootstrap("bradley_terry")
def bradley_terry_bootstrap(data: Battles, n_boot: int, rng: np.random.Generator, *, prior: float = 0.0,
                            scale: float = 400.0, base: float = 10.0, init: float = 1000.0, reweight: bool = False,
                            min_pair_count: float = 50.0) -> np.ndarray:
    """Bootstrap BT ratings by multinomial counts over the distinct (pair, outcome, weight) cells.

    Resampling ``N`` battles with replacement is the same as drawing multinomial counts of
    the distinct battle cells, so each round costs O(cells), not O(N); Newton's method starts
    from the full-data estimate. Rounds whose estimate diverges (a resample in which some
    system never loses) keep their last iterate.
    """
    b = _weighted(data, reweight, min_pair_count)
    n = b.n_systems
    lo = np.minimum(b.a, b.b)
    hi = np.maximum(b.a, b.b)
    out_lo = np.where(b.a == lo, b.outcome, 1.0 - b.outcome)
    # Distinct cells (pair, outcome for the lower index, weight) and their multiplicities.
    outcome_values, outcome_code = np.unique(out_lo, return_inverse=True)
    weight_values, weight_code = np.unique(b.weight, return_inverse=True)
    key = ((lo * n + hi) * len(outcome_values) + outcome_code) * len(weight_values) + weight_code
    cell_keys, counts = np.unique(key, return_counts=True)
    rest = cell_keys // len(weight_values)
    c_w = weight_values[cell_keys % len(weight_values)]
    c_out = outcome_values[rest % len(outcome_values)]
    pair = rest // len(outcome_values)
    return bt_bootstrap_cells(n, pair // n, pair % n, c_out, c_w, counts, n_boot, rng, prior=prior, scale=scale,
                              base=base, init=init)


def bt_bootstrap_cells(n: int, c_lo: np.ndarray, c_hi: np.ndarray, c_out: np.ndarray, c_w: np.ndarray,
                       counts: np.ndarray, n_boot: int, rng: np.random.Generator, *, prior: float = 0.0,
                       scale: float = 400.0, base: float = 10.0, init: float = 1000.0) -> np.ndarray:
    """Bootstrap BT ratings (Elo scale), shape (n_boot, n), from the distinct battle cells.

    A cell is (lower system index ``c_lo``, higher ``c_hi``, outcome for the lower one ``c_out``,
    battle weight ``c_w``) with its multiplicity ``counts``; the cells are in increasing order of
    that key (as :func:`numpy.unique` returns them), so the same battles give the same draws
    whether the cells were counted in memory or summed over partitions
    (:mod:`scorebench.aggregate.dask_aggregate`). Each round draws multinomial cell counts.
    """
    counts = np.asarray(counts, dtype=np.int64)
    K = len(counts)
    rows = np.concatenate([np.arange(K), np.arange(K)])
    spread = csr_matrix((np.concatenate([c_w * c_out, c_w * (1.0 - c_out)]),
                         (rows, np.concatenate([c_lo * n + c_hi, c_hi * n + c_lo]))), shape=(K, n * n))
    W_full = np.asarray(spread.T @ counts).reshape(n, n)
    theta_hat = bt_fit(W_full, prior=prior)
    # The gradient at theta_hat is linear in the cell counts, so a first Newton step with the
    # full-data Hessian costs one matrix product per round; full Newton steps then finish.
    p_hat = expit(theta_hat[c_lo] - theta_hat[c_hi])
    resid = c_w * (c_out - p_hat)
    grad_of_cell = csr_matrix((np.concatenate([resid, -resid]), (rows, np.concatenate([c_lo, c_hi]))), shape=(K, n))
    N_full = W_full + W_full.T
    pp = expit(theta_hat[:, None] - theta_hat[None, :])
    h = N_full * pp * (1.0 - pp)
    H0 = np.diag(h.sum(axis=1)) - h + (prior * np.eye(n) if prior > 0 else np.full((n, n), 1.0 / n))
    H0_inv = np.linalg.inv(H0)
    total = int(counts.sum())
    probs = counts / total
    out = np.empty((n_boot, n))
    for start in range(0, n_boot, _BOOT_CHUNK):
        size = min(_BOOT_CHUNK, n_boot - start)
        # Resampling N battles with replacement = multinomial counts over the distinct cells.
        cell_counts = rng.multinomial(total, probs, size=size).astype(np.float64)
        Wb = np.asarray((spread.T @ cell_counts.T).T).reshape(size, n, n)
        g0 = np.asarray((grad_of_cell.T @ cell_counts.T).T) - prior * theta_hat
        theta1 = theta_hat + g0 @ H0_inv.T
        if prior == 0:
            theta1 -= theta1.mean(axis=1, keepdims=True)
        theta, _, _ = _newton(Wb, prior, theta1, _BOOT_TOL, 100)
        out[start:start + size] = to_elo_scale(theta, scale=scale, base=base, init=init)
    return out


@register_method("elo", family="pairwise", accepts=("battles",),
                 missing="battles are only between systems scored on the same column; missing pairs are skipped",
                 citation="Elo (1978), The Rating of Chessplayers; Chiang et al. (2024), Chatbot Arena, ICML")
def elo(data: Battles, *, k: float = 4.0, scale: float = 400.0, base: float = 10.0, init: float = 1000.0) -> MethodResult:
    r"""Online Elo ratings, updated battle by battle in table order (order-dependent).

    .. math::
        E_a = \frac{1}{1 + b^{(R_b - R_a)/s}}, \quad R_a \mathrel{+}= K w (S_a - E_a), \quad
        R_b \mathrel{-}= K w (S_a - E_a)

    with :math:`S_a \in \{1, \tfrac12, 0\}` and battle weight :math:`w`. **The result depends on
    the order of the battles**: shuffling the table changes the ratings (the bootstrap
    resamples battles in random order, as Chatbot Arena did). For an order-free estimate
    use ``bradley_terry``. Battles derived from a score matrix are ordered column by column.

    Examples
    --------
    >>> import pandas as pd
    >>> from scorebench.aggregate.input import as_battles
    >>> b = as_battles(pd.DataFrame({"a": ["x"], "b": ["y"], "winner": ["a"]}))
    >>> elo(b, k=32).scores.tolist()
    [1016.0, 984.0]
    """
    b = _as_battles(data)
    if not (k > 0 and np.isfinite(k)):
        raise InputError(f"elo: k must be a positive number, got {k!r}")
    if not (scale > 0 and base > 1):
        raise InputError(f"elo: expected scale > 0 and base > 1, got scale={scale!r}, base={base!r}")
    r = np.full(b.n_systems, float(init))
    for a, bb, s, w in zip(b.a.tolist(), b.b.tolist(), b.outcome.tolist(), b.weight.tolist()):
        e = 1.0 / (1.0 + base ** ((r[bb] - r[a]) / scale))
        step = k * w * (s - e)
        r[a] += step
        r[bb] -= step
    return MethodResult(r, {"order_dependent": True, "n_battles": len(b.a)})


# --- Plackett-Luce ---------------------------------------------------------------------------


def _stages(data: ScoreMatrix | Battles) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Choice stages (remaining set R, chosen group G, weight w) of every ballot.

    A column ranks its scored systems; each distinct score level, best first, is chosen
    from the systems not yet chosen. A battle is a two-system ballot; tied battles carry
    no order information and are dropped. The final stage (the last group alone) is
    skipped, as it is certain.
    """
    R_rows: list[np.ndarray] = []
    G_rows: list[np.ndarray] = []
    weights: list[float] = []
    n = len(data.systems)
    if isinstance(data, Battles):
        decisive = data.outcome != 0.5
        win = np.where(data.outcome == 1.0, data.a, data.b)[decisive]
        lose = np.where(data.outcome == 1.0, data.b, data.a)[decisive]
        m = len(win)
        R = np.zeros((m, n), dtype=bool)
        G = np.zeros((m, n), dtype=bool)
        R[np.arange(m), win] = True
        R[np.arange(m), lose] = True
        G[np.arange(m), win] = True
        return R, G, data.weight[decisive]
    x = data.oriented
    for j in range(data.n_columns):
        if data.weights[j] == 0:
            continue
        col = x[:, j]
        present = ~np.isnan(col)
        levels = np.unique(col[present])[::-1]
        remaining = present.copy()
        for level in levels[:-1]:
            chosen = present & (col == level)
            R_rows.append(remaining.copy())
            G_rows.append(chosen)
            weights.append(data.weights[j])
            remaining &= ~chosen
    if not R_rows:
        return np.zeros((0, n), bool), np.zeros((0, n), bool), np.zeros(0)
    return np.array(R_rows), np.array(G_rows), np.array(weights)


def pl_fit(R: np.ndarray, G: np.ndarray, w: np.ndarray, *, prior: float = 0.0, tol: float = 1e-10) -> np.ndarray:
    r"""Plackett–Luce log-strengths by maximum likelihood (ties: Breslow's approximation).

    .. math::
        \ell(\theta) = \sum_s w_s\Big(\sum_{i \in G_s}\theta_i - |G_s|\log\sum_{j \in R_s} e^{\theta_j}\Big)
                       - \frac{\lambda}{2}\lVert\theta\rVert^2

    where stage ``s`` chooses the group :math:`G_s` (one system, or several tied ones) out of
    the systems :math:`R_s` still unranked. Centred to mean zero.
    """
    n = R.shape[1]
    Rf = R.astype(np.float64)
    Gf = G.astype(np.float64)
    g = Gf.sum(axis=1)
    if prior == 0:
        beat = (Gf * w[:, None]).T @ (Rf * ~G)  # [i, j]: i chosen while j was still available
        if not _strongly_connected(beat):
            raise InputError("Plackett-Luce: the maximum-likelihood estimate does not exist because some systems "
                             "are never ranked below (or above) the rest; pass prior=<lambda> > 0")
    chosen = Gf.T @ w

    def objective(theta: np.ndarray) -> tuple[float, np.ndarray]:
        c = theta.max()
        e = np.exp(theta - c)
        z = Rf @ e
        f = -(chosen @ theta) + (w * g) @ (np.log(z) + c) + 0.5 * prior * theta @ theta
        grad = -chosen + e * (Rf.T @ (w * g / z)) + prior * theta
        return float(f), grad

    res = minimize(objective, np.zeros(n), jac=True, method="L-BFGS-B",
                   options={"maxiter": 10_000, "gtol": tol, "ftol": 1e-15})
    if not res.success and np.abs(res.jac).max() > 1e-6 * max(1.0, float(w.sum())):
        raise ConvergenceError(f"Plackett-Luce: the optimiser did not converge ({res.message})")
    theta = res.x
    return theta - theta.mean() if prior == 0 else theta


@register_method("plackett_luce", family="pairwise", accepts=("matrix", "battles"),
                 missing="a column ranks only the systems it scores (partial rankings are native to the model)",
                 citation="Plackett (1975), JRSS C 24(2); Luce (1959); Hunter (2004), Ann. Statist. 32(1)")
def plackett_luce(data: ScoreMatrix | Battles, *, prior: float = 0.0, scale: float = 400.0, base: float = 10.0,
                  init: float = 1000.0) -> MethodResult:
    r"""Plackett–Luce ratings from the full rankings each column induces, on the Elo scale.

    Each column is a ranking of its scored systems, read as successive choices of the best
    remaining system (see :func:`pl_fit`); ties within a column use Breslow's approximation.

    Examples
    --------
    >>> import pandas as pd
    >>> from scorebench.aggregate.input import as_matrix
    >>> m = as_matrix(pd.DataFrame({"t1": [3, 2, 1], "t2": [1, 3, 2], "t3": [3, 1, 2]}, index=["a", "b", "c"]))
    >>> int(plackett_luce(m).scores.argmax())
    0
    """
    R, G, w = _stages(data)
    if len(w) == 0:
        raise InputError("Plackett-Luce: no ranking information (every ballot is a single tie)")
    theta = pl_fit(R, G, w, prior=prior)
    return MethodResult(to_elo_scale(theta, scale=scale, base=base, init=init), {"theta": theta})


# --- intransitivity ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Intransitivity:
    """Cycles in the majority graph and a rank-2 general-preference fit against Bradley–Terry.

    Attributes
    ----------
    n_three_cycles : int
        Number of 3-cycles ``a > b > c > a`` of the strict majority graph.
    cyclic_groups : tuple of tuple of str
        Strongly connected components of size > 1 (each contains a majority cycle).
    example_cycle : tuple of str or None
        One majority cycle, if any.
    loglik_bt, loglik_gpm : float
        Maximised log-likelihoods of Bradley–Terry and of the rank-2 skew-symmetric model.
    lr_statistic, df, p_value : float
        Likelihood-ratio test of BT inside the general preference model (``df = n - 2``).
    embedding : ndarray, shape (n, 2)
        Fitted 2-d preference vectors.
    """

    systems: tuple[str, ...]
    n_three_cycles: int
    cyclic_groups: tuple[tuple[str, ...], ...]
    example_cycle: tuple[str, ...] | None
    loglik_bt: float
    loglik_gpm: float
    lr_statistic: float
    df: int
    p_value: float
    embedding: np.ndarray

    @property
    def transitive(self) -> bool:
        return self.n_three_cycles == 0 and not self.cyclic_groups


def _gpm_fit(W: np.ndarray, start: np.ndarray, prior: float) -> tuple[np.ndarray, float]:
    n = len(W)

    def objective(z: np.ndarray) -> tuple[float, np.ndarray]:
        u, v = z[:n], z[n:]
        s = u[:, None] * v[None, :] - v[:, None] * u[None, :]
        ll = (W * log_expit(s)).sum()
        r = W * expit(-s)  # d ll / d s_ij
        r = r - r.T  # s is skew-symmetric: s_ji = -s_ij
        du = r @ v
        dv = -(r @ u)
        f = -ll + 0.5 * prior * (z @ z)
        return float(f), np.concatenate([-du, -dv]) + prior * z

    res = minimize(objective, start, jac=True, method="L-BFGS-B", options={"maxiter": 20_000, "gtol": 1e-9})
    return res.x.reshape(2, n).T, -float(res.fun) - 0.5 * prior * float(res.x @ res.x)


def intransitivity(data: ScoreMatrix | Battles, *, prior: float = 0.0, restarts: int = 5, seed: int = 0) -> Intransitivity:
    r"""Check the majority relation for cycles and fit a rank-2 general preference model.

    The general preference model gives :math:`P(i \succ j) = \sigma(z_i^\top J z_j)` with
    :math:`J = \begin{pmatrix}0 & 1\\ -1 & 0\end{pmatrix}` and :math:`z_i \in \mathbb{R}^2`, a
    skew-symmetric rank-2 score that can represent cycles (Zhang et al., 2024, "General
    preference modeling with preference representations"). It nests Bradley–Terry
    (:math:`z_i = (\theta_i, 1)`), so the likelihood-ratio statistic
    :math:`2(\ell_{GPM} - \ell_{BT})` measures the evidence for intransitivity
    (χ² with ``n - 2`` degrees of freedom as a rough guide).

    Examples
    --------
    >>> import pandas as pd
    >>> from scorebench.aggregate.input import as_battles
    >>> rps = pd.DataFrame({"a": ["r", "p", "s"] * 5, "b": ["s", "r", "p"] * 5, "winner": ["a"] * 15})
    >>> upsets = rps.head(3).assign(winner="b")
    >>> out = intransitivity(as_battles(pd.concat([rps, upsets])))
    >>> out.n_three_cycles, out.example_cycle, round(out.lr_statistic, 2)
    (1, ('p', 'r', 's'), 8.73)
    """
    from scipy.stats import chi2  # lazy: keeps `import scorebench` light

    from scorebench.aggregate.condorcet import pairwise

    b = _as_battles(data)
    P, _ = pairwise(data)
    A = (P > P.T).astype(np.int64)
    n = len(A)
    n3 = int(np.trace(A @ A @ A) // 3)
    n_comp, label = connected_components(csr_matrix(A), directed=True, connection="strong")
    groups = tuple(tuple(b.systems[i] for i in np.flatnonzero(label == c))
                   for c in range(n_comp) if (label == c).sum() > 1)
    example = None
    if n3:
        i, j = np.argwhere(A * (A @ A).T)[0]
        k = int(np.flatnonzero(A[j] & A[:, i])[0])
        example = (b.systems[i], b.systems[j], b.systems[k])
    W = b.wins()
    theta = bt_fit(W, prior=max(prior, 0.0)) if (prior > 0 or _strongly_connected(W)) else bt_fit(W, prior=1e-6)
    ll_bt = bt_loglik(W, theta)
    rng = rng_from_seed(seed)
    best_z, best_ll = np.stack([theta, np.ones(n)], axis=1), ll_bt
    for r in range(restarts):
        start = np.concatenate([theta, np.ones(n)]) + (0.1 if r == 0 else 1.0) * rng.standard_normal(2 * n)
        z, ll = _gpm_fit(W, start, max(prior, 1e-8))
        if ll > best_ll:
            best_z, best_ll = z, ll
    df = max(n - 2, 1)
    stat = max(0.0, 2.0 * (best_ll - ll_bt))
    return Intransitivity(b.systems, n3, groups, example, ll_bt, best_ll, stat, df, float(chi2.sf(stat, df)), best_z)
