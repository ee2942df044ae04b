r"""Limited-information test fit (M2, RMSEA) and marginal reliability.

**M2** (Maydeu-Olivares & Joe, 2005, 2006). With :math:`\mathbf e = \mathbf p - \boldsymbol\pi(\hat\eta)`
the residuals of the first- and second-order moments (dichotomous items: the proportions
right :math:`p_j` and both-right :math:`p_{jk}`, :math:`j < k`),

.. math::

    M_2 = N\,\mathbf e^\top C_2\,\mathbf e,\qquad
    C_2 = \Delta_c(\Delta_c^\top \Xi_2 \Delta_c)^{-1}\Delta_c^\top,

where :math:`\Xi_2` is the model-implied covariance of the moments (one observation),
:math:`\Delta = \partial\boldsymbol\pi/\partial\eta^\top` and :math:`\Delta_c` an orthogonal
complement of :math:`\Delta`. Under the model :math:`M_2 \sim \chi^2_{s - q}` with
:math:`s = J(J+1)/2` moments and :math:`q` free parameters. For polytomous items the moments
are the item-score means :math:`E[y_j]` and cross-products :math:`E[y_j y_k]` (the
collapsed statistic of Cai & Hansen, 2013, mirt's ``M2(type = "M2*")``, the default), which
reduces to M2 for 0/1 items; ``m2(..., type="M2")`` tests instead the category margins
:math:`P(y_j = k)` and :math:`P(y_j = k, y_l = m)` for :math:`k, m \ge 1` (mirt's
``M2(type = "M2")``; :math:`\Xi_2` holds the products of category indicators, zero for two
different categories of one item). No mirt values for polytomous M2 are available offline:
the moments and their covariance are checked against an enumeration of all answer patterns. RMSEA :math:`= \sqrt{\max(M_2/\mathrm{df} - 1, 0)/(N - 1)}` (mirt's formula).
Moments and derivatives are computed by quadrature (61 nodes on [-6, 6] for short tests).

**Marginal reliability** (Green, Bock, Humphreys, Linn & Reckase, 1984; mirt's
``marginal_rxx``): :math:`\bar\rho = \int \frac{I(\theta)}{I(\theta) + 1}\,\phi(\theta)\,d\theta`
with the test information :math:`I` on the standardised latent scale (latent variance 1;
for Rasch scalings mirt writes :math:`I/(I + \sigma^2)` on its own scale, which differs from
this scale-free value when :math:`\sigma \ne 1`).

References: Maydeu-Olivares, A., & Joe, H. (2005). Limited- and full-information estimation
and goodness-of-fit testing in 2^n contingency tables. *JASA* 100, 1009-1020; (2006)
*Psychometrika* 71, 713-732. Cai, L., & Hansen, M. (2013). *British Journal of Mathematical
and Statistical Psychology* 66, 245-276.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

import numpy as np
from scipy.linalg import null_space
from scipy.stats import chi2

from scorebench.core.errors import InputError
from scorebench.irt.polyem import free_parameter_basis
from scorebench.irt.sumscore import complete_responses, model_curves

__all__ = ["m2", "marginal_reliability"]


def _score_moments(fit: Any, nodes: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray]:
    """Per item: :math:`E[y|\\theta]`, :math:`E[y^2|\\theta]` (Q,), derivative of E[y|theta] wrt the free
    parameters (n_free, Q) per item, and the free-parameter transform (columns = free parameters)."""
    from scorebench.irt.polyfit import PolyIRTFit

    if isinstance(fit, PolyIRTFit):
        from scorebench.irt.polymodels import category_jacobian

        lay = fit.layout
        J = len(lay.kinds)
        mu1: list = [None] * J
        mu2: list = [None] * J
        dmu: list = [None] * J
        for (kind, K), idx in lay.groups().items():
            P, D = category_jacobian(kind, fit.a[idx], fit.d[idx, :K], nodes)
            k = np.arange(K + 1, dtype=float)
            for x, j in enumerate(idx):
                mu1[j] = k @ P[x]
                mu2[j] = (k * k) @ P[x]
                dmu[j] = np.einsum("k,pkq->pq", k, D[x])            # (K+1, Q) wrt (a, d1..dK)
        T = free_parameter_basis(fit.layout)
        return mu1, mu2, dmu, T
    from scorebench.irt.models import derivatives, get_model

    P, D = derivatives(fit.params, nodes)
    spec = get_model(fit.model)
    J = P.shape[0]
    dmu = [D[:, j] for j in range(J)]                                # (4, Q) wrt (a, d, c, u)
    cols = []
    for j in range(J):
        for p, name in enumerate(("a", "d", "c", "u")):
            if name in spec.free:
                v = np.zeros(4 * J)
                v[4 * j + p] = 1.0
                cols.append(v)
    if spec.common_slope:
        v = np.zeros(4 * J)
        v[0::4] = 1.0
        cols.append(v)
    return list(P), list(P), dmu, np.column_stack(cols)


def m2(fit: Any, responses: Any = None, *, type: str = "M2*") -> dict[str, float]:
    r"""M2 limited-information goodness of fit with its df, p-value and RMSEA.

    Parameters
    ----------
    fit : IRTFit or PolyIRTFit
        A unidimensional fit (3PL/4PL included: their asymptotes count as parameters).
    responses : optional
        The (complete) responses the fit was made on; required for an ``IRTFit``.
    type : {"M2*", "M2"}
        For polytomous items: ``"M2*"`` tests the item-score means and cross-products (Cai &
        Hansen, 2013; mirt's ``M2(type = "M2*")``), ``"M2"`` the univariate and bivariate
        category margins :math:`P(y_j = k)`, :math:`P(y_j = k, y_l = m)`, :math:`k, m \ge 1`
        (Maydeu-Olivares & Joe, 2006; mirt's ``M2(type = "M2")``). The two are the same
        statistic for 0/1 items.

    Returns
    -------
    dict with ``M2``, ``df``, ``p``, ``RMSEA``, ``n_moments`` and ``n_params``.

    Examples
    --------
    Six 2PL items whose slopes range from 0.3 to 3: the 2PL fits, the Rasch model (one
    common slope, 7 parameters instead of 12) is rejected.

    >>> from scorebench.irt import fit, simulate_2pl
    >>> y = simulate_2pl(800, 6, seed=0, slopes=(0.3, 3.0))
    >>> good, rasch = m2(fit(y, "2pl"), y), m2(fit(y, "rasch"), y)
    >>> good["df"], bool(good["p"] > 0.01)
    (9, True)
    >>> rasch["df"], bool(rasch["p"] < 1e-6), bool(rasch["RMSEA"] > good["RMSEA"])
    (14, True, True)
    """
    if type not in ("M2*", "M2"):
        raise InputError(f"m2: type must be 'M2*' or 'M2', got {type!r}")
    _, nodes, w, values, _ = model_curves(fit, responses)
    values = complete_responses(values, "m2").astype(float)
    from scorebench.irt.polyfit import PolyIRTFit

    if type == "M2" and isinstance(fit, PolyIRTFit):
        e, Xi, Delta = _category_parts(fit, values, nodes, w)
    else:
        e, Xi, Delta = _score_parts(fit, values, nodes, w)
    s, q = Delta.shape
    if s <= q:
        raise InputError(f"m2: {s} first- and second-order moments cannot test {q} parameters (df <= 0); "
                         "M2 needs more items")
    Dc = null_space(Delta.T)                                          # (s, s - rank)
    C2 = Dc @ np.linalg.solve(Dc.T @ Xi @ Dc, Dc.T)
    N = values.shape[0]
    stat = float(N * e @ C2 @ e)
    df = int(s - q)
    rmsea = float(np.sqrt(max(stat / df - 1.0, 0.0) / (N - 1)))
    return {"M2": stat, "df": df, "p": float(chi2.sf(stat, df)), "RMSEA": rmsea, "n_moments": s, "n_params": q}


def _score_parts(fit: Any, values: np.ndarray, nodes: np.ndarray, w: np.ndarray):
    """Residuals, moment covariance and Jacobian of the item-score means and cross-products."""
    N, J = values.shape
    mu1, mu2, dmu, T = _score_moments(fit, nodes)
    pairs = list(combinations(range(J), 2))
    members = [(j,) for j in range(J)] + pairs
    s = len(members)
    lm1 = np.log(np.clip(np.array(mu1), 1e-300, None))               # (J, Q)
    lm2 = np.log(np.clip(np.array(mu2), 1e-300, None))
    M = np.zeros((s, J))
    for a, mem in enumerate(members):
        M[a, list(mem)] = 1.0
    logZ = M @ lm1                                                    # (s, Q)
    Z = np.exp(logZ)
    pi = Z @ w
    Xi = np.empty((s, s))
    for a, mem in enumerate(members):
        corr = M[:, list(mem)] @ (lm2 - 2.0 * lm1)[list(mem)]         # log mu2/mu1^2 over a ∩ b
        Xi[a] = np.exp(logZ[a][None, :] + logZ + corr) @ w
    Xi -= np.outer(pi, pi)
    # Jacobian of the moments: item i enters moment {i} and {i, k} through E[y_i | theta].
    sizes = [d.shape[0] for d in dmu]
    off = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int)
    Dfull = np.zeros((s, int(sum(sizes))))
    m1 = np.array(mu1)
    for a, mem in enumerate(members):
        for i in mem:
            others = [k for k in mem if k != i]
            rest = np.prod(m1[others], axis=0) if others else np.ones(len(nodes))
            Dfull[a, off[i]:off[i] + sizes[i]] = dmu[i] @ (w * rest)
    obs_mom = np.concatenate([values.mean(axis=0),
                              np.array([(values[:, j] * values[:, k]).mean() for j, k in pairs])])
    return obs_mom - pi, Xi, Dfull @ T


def _category_curves(fit: Any, nodes: np.ndarray) -> tuple[list, list]:
    """Per item: category probabilities (K+1, Q) and their derivatives (params, K+1, Q)."""
    from scorebench.irt.polymodels import category_jacobian

    J = len(fit.layout.kinds)
    P: list = [None] * J
    D: list = [None] * J
    for (kind, K), idx in fit.layout.groups().items():
        Pg, Dg = category_jacobian(kind, fit.a[idx], fit.d[idx, :K], nodes)
        for x, j in enumerate(idx):
            P[j], D[j] = Pg[x], Dg[x]
    return P, D


def _category_parts(fit: Any, values: np.ndarray, nodes: np.ndarray, w: np.ndarray):
    """The same for the category margins: moments are products of 1 or 2 category indicators."""
    lay = fit.layout
    J = len(lay.kinds)
    P, D = _category_curves(fit, nodes)
    K = lay.n_cat.astype(int) - 1
    cells = [((j, k),) for j in range(J) for k in range(1, K[j] + 1)]
    cells += [((j, k), (m, c)) for j, m in combinations(range(J), 2) for k in range(1, K[j] + 1)
              for c in range(1, K[m] + 1)]
    s = len(cells)
    C = np.zeros((s, J), dtype=np.int64)                              # category of each item in a moment, 0 = none
    for a, cell in enumerate(cells):
        for j, k in cell:
            C[a, j] = k
    LP = [np.log(np.clip(p, 1e-300, None)) for p in P]
    logZ = np.array([sum(LP[j][k] for j, k in cell) for cell in cells])  # (s, Q)
    pi = np.exp(logZ) @ w
    Xi = np.empty((s, s))
    for a, cell in enumerate(cells):
        log_both = logZ[a][None, :] + logZ
        clash = np.zeros(s, dtype=bool)
        for j, k in cell:                                             # an item in both: same category or 0
            log_both -= np.outer(C[:, j] == k, LP[j][k])
            clash |= (C[:, j] >= 1) & (C[:, j] != k)
        Xi[a] = np.where(clash, 0.0, np.exp(log_both) @ w)
    Xi -= np.outer(pi, pi)
    sizes = lay.n_cat.astype(int)
    off = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int)
    Dfull = np.zeros((s, int(sizes.sum())))
    for a, cell in enumerate(cells):
        for i, (j, k) in enumerate(cell):
            rest = np.exp(sum(LP[m][c] for m, c in cell[:i] + cell[i + 1:])) if len(cell) > 1 else 1.0
            Dfull[a, off[j]:off[j] + sizes[j]] += D[j][:, k, :] @ (w * rest)
    obs = np.array([np.mean(np.all([values[:, j] == k for j, k in cell], axis=0)) for cell in cells])
    return obs - pi, Xi, Dfull @ free_parameter_basis(fit.layout)


def marginal_reliability(fit: Any) -> float:
    """Marginal reliability :math:`\\int I/(I + 1)\\,\\phi` of a unidimensional fit (see module docstring).

    Examples
    --------
    More items measure the ability more reliably:

    >>> from scorebench.irt import fit, simulate_2pl
    >>> short, long = (marginal_reliability(fit(simulate_2pl(400, n, seed=0), "2pl")) for n in (5, 20))
    >>> 0.0 < short < long < 1.0
    True
    """
    from scorebench.irt.polyfit import PolyIRTFit

    nodes = np.linspace(-8.0, 8.0, 3201)
    if isinstance(fit, PolyIRTFit):
        from scorebench.irt.polymodels import item_information_poly

        info = np.zeros_like(nodes)
        for (kind, K), idx in fit.layout.groups().items():
            info += item_information_poly(kind, fit.a[idx], fit.d[idx, :K], nodes).sum(axis=0)
    else:
        from scorebench.irt.models import item_information

        usable = ~np.isnan(fit.params).any(axis=1)
        sigma = fit.latent_sd / fit.theta_scale
        # standardise: theta = mu + sigma z, information on the z scale is sigma^2 I(theta)
        info = item_information(fit.params[usable], fit.latent_mean + sigma * nodes).sum(axis=0) * sigma**2
    w = np.exp(-0.5 * nodes**2)
    w /= w.sum()
    return float((info / (info + 1.0)) @ w)
