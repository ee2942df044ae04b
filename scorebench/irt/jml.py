r"""Penalised joint maximum likelihood for large response matrices.

Abilities and item parameters are estimated together by alternating Fisher-scoring steps
on the penalised log-likelihood

.. math::

    \sum_{ij} m_{ij}\big[y_{ij}\log P_j(\theta_i) + (1 - y_{ij})\log(1 - P_j(\theta_i))\big]
    - \frac{1}{2}\sum_i \theta_i^2 + \log p(\text{items}),

i.e. abilities are posterior modes under :math:`N(0, 1)` (the ridge penalty keeps perfect
scores finite). Each cycle rescales the abilities so that their variance plus their mean
squared standard error is 1, the moment identity of :math:`\theta \sim N(0, 1)`; the item
step then regresses on these shrunken modes, which is regression calibration and removes
most of the attenuation that noisy abilities would cause. The cost of a cycle is a few
passes over the matrix, without quadrature; the remaining bias is :math:`O(1/J)` (JML's
incidental-parameter bias), negligible for long tests, so :func:`scorebench.irt.fit` uses
it only for very large matrices (or on request).

Reference: Haberman, S. J. (1977). Maximum likelihood estimates in exponential response
models. *Annals of Statistics* 5, 815-841; Chen, Li & Zhang (2019), Joint maximum
likelihood estimation for high-dimensional exploratory item factor analysis,
*Psychometrika* 84, 124-146.
"""

from __future__ import annotations

import numpy as np

from scorebench.irt.em import EMResult, Priors, mstep, start_values
from scorebench.irt.models import ModelSpec
from scorebench.irt.quadrature import ResponseOps, choose_grid, estep
from scorebench.irt.scoring import newton_theta

__all__ = ["fit_jml"]


def fit_jml(ops: ResponseOps, values: np.ndarray, spec: ModelSpec, *, priors: Priors, max_iter: int = 200,
            tol: float = 1e-4, fixed: np.ndarray | None = None, init: np.ndarray | None = None) -> EMResult:
    """Alternate ability and item steps until the largest item change is below ``tol``."""
    J = ops.shape[1]
    free = np.tile(spec.free_mask, (J, 1))
    if fixed is not None:
        free &= ~fixed
    params, theta = start_values(ops, spec, fixed, init)
    item_priors = Priors(a=priors.a or (1.0, 3.0), d=priors.d or (0.0, 5.0), c=priors.c, u=priors.u)
    converged = False
    change = np.inf
    it = 0
    rows = max(1, 4_000_000 // max(1, J))
    for it in range(1, max_iter + 1):
        se = np.empty_like(theta)
        for s in range(0, len(theta), rows):
            sl = slice(s, s + rows)
            theta[sl], se[sl], _ = newton_theta(values[sl], params, theta[sl], 1.0, 0.0, max_iter=3, tol=1e-6)
        if fixed is None:
            target = np.sqrt(max(1e-6, 1.0 - float(np.mean(se**2))))
            theta = (theta - theta.mean()) / theta.std() * target
        r, n = _counts_at_persons(ops, theta)
        new = mstep(params, r, n, theta, spec, free, item_priors, iters=2)
        change = float(np.abs(new - params)[free].max()) if free.any() else 0.0
        params = new
        if change < tol:
            converged = True
            break
    grid = choose_grid(params, theta, ops)
    final = estep(ops, params, grid)
    message = (f"JML converged in {it} cycles (largest item change {change:.2e} < tol {tol:g})" if converged
               else f"JML did not converge in {max_iter} cycles (largest item change {change:.2e} >= tol {tol:g})")
    return EMResult(params, grid, final, it, converged, change, [final.loglik], message)


def _counts_at_persons(ops: ResponseOps, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Counts for the item step with each system as its own node: r = Y^T, n = M^T (J, N)."""
    r = ops.y.T.astype(np.float64)
    n = np.ones_like(r) if ops.m is None else ops.m.T.astype(np.float64)
    return r, n
