r"""Multivariate Dawid–Sebastiani score, from a mean vector and covariance matrix or from an ensemble.

.. math:: \mathrm{DSS}(F, y) = \log\det\Sigma_F + (y - \mu_F)^\top \Sigma_F^{-1} (y - \mu_F)

(Dawid & Sebastiani 1999; Gneiting & Raftery 2007, eq. 27). It depends on the forecast
only through its first two moments and is proper (not strictly). Evaluated through the
Cholesky factor :math:`\Sigma = LL^\top`: :math:`\log\det\Sigma = 2\sum_k \log L_{kk}` and
the quadratic form is :math:`\lVert L^{-1}(y - \mu)\rVert^2`, which avoids forming the
inverse and the determinant (which under/overflows for large ``d``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from scorebench.core.errors import InputError
from scorebench.core.registry import register
from scorebench.core.validation import as_float_array, describe_rows
from scorebench.metrics.scoring_rules._common import FAMILY, GNEITING_RAFTERY, check_batch
from scorebench.metrics.scoring_rules.inputs import mv_inputs

__all__ = ["dawid_sebastiani_mv", "dssmv_ensemble"]

DAWID_SEBASTIANI = "Dawid & Sebastiani (1999), Annals of Statistics 27(1):65-81"


def _dss_core(obs: np.ndarray, mean: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """DSS of flattened rows ``obs, mean (N, d)`` and ``cov (N, d, d)``; NaN rows give NaN."""
    out = np.full(obs.shape[0], np.nan)
    ok = ~(np.isnan(obs).any(axis=1) | np.isnan(mean).any(axis=1) | np.isnan(cov).any(axis=(1, 2)))
    if not ok.any():
        return out
    c = cov[ok]
    # The smallest eigenvalue relative to the largest decides definiteness row by row, so the
    # error names the rows rather than failing the whole batch in the factorisation.
    eig = np.linalg.eigvalsh(c)
    singular = eig[:, 0] <= eig[:, -1] * (c.shape[-1] * np.finfo(float).eps)
    if singular.any():
        rows = np.flatnonzero(ok)[singular]
        raise InputError(f"cov: the covariance matrix is not positive definite in {describe_rows(rows)}; "
                         "the Dawid-Sebastiani score needs an invertible covariance (an ensemble needs "
                         "more members than variables, and members that span every direction)")
    chol = np.linalg.cholesky(c)
    z = np.linalg.solve(chol, (obs[ok] - mean[ok])[..., None])[..., 0]
    logdet = 2.0 * np.log(np.diagonal(chol, axis1=-2, axis2=-1)).sum(axis=-1)
    out[ok] = np.einsum("nd,nd->n", z, z) + logdet
    return out


def dawid_sebastiani_mv(obs: Any, mean: Any, cov: Any) -> np.ndarray:
    r"""Multivariate Dawid–Sebastiani score of a forecast with mean :math:`\mu` and covariance :math:`\Sigma`.

    .. math:: \mathrm{DSS} = \log\det\Sigma + (y - \mu)^\top \Sigma^{-1} (y - \mu)

    Parameters
    ----------
    obs : array_like, shape (..., d)
        Observed vectors.
    mean : array_like, shape (..., d)
        Forecast mean vectors.
    cov : array_like, shape (..., d, d)
        Forecast covariance matrices (symmetric positive definite; only the lower triangle
        is read).

    Returns
    -------
    ndarray, shape (...)

    References
    ----------
    Dawid, A. P. & Sebastiani, P. (1999). Coherent dispersion criteria for optimal
    experimental design. *Annals of Statistics* 27(1), 65-81.

    Examples
    --------
    >>> round(float(dawid_sebastiani_mv([1.0, 0.0], [0.0, 0.0], [[1.0, 0.0], [0.0, 4.0]])), 6)
    2.386294
    """
    obs = as_float_array(obs, "obs", check_inf=True)
    mean = as_float_array(mean, "mean", check_inf=True)
    cov = as_float_array(cov, "cov", check_inf=True)
    if cov.ndim < 2 or cov.shape[-1] != cov.shape[-2] or cov.shape[-1] == 0:
        raise InputError(f"cov: expected square matrices of shape (..., d, d), got shape {cov.shape}")
    d = cov.shape[-1]
    for name, arr in (("obs", obs), ("mean", mean)):
        if arr.ndim < 1 or arr.shape[-1] != d:
            raise InputError(f"mismatched lengths: {name} has shape {arr.shape} but cov has shape {cov.shape}; "
                             f"expected {name} of shape (..., {d})")
    batch = check_batch(obs[..., 0], cov[..., 0], "obs", "cov", core=1)
    batch = np.broadcast_shapes(batch, mean.shape[:-1])
    n = math.prod(batch)
    out = _dss_core(np.broadcast_to(obs, (*batch, d)).reshape(n, d),
                    np.broadcast_to(mean, (*batch, d)).reshape(n, d),
                    np.broadcast_to(cov, (*batch, d, d)).reshape(n, d, d))
    return out.reshape(batch)


@register("dssmv_ensemble", family=FAMILY, kind="multivariate", inputs=("y", "ens"),
          higher_is_better=False, bounds=(-math.inf, math.inf), proper="proper", per_row=True,
          params={"ddof": 1}, citation=DAWID_SEBASTIANI + "; " + GNEITING_RAFTERY,
          tested_against=('scoringrules 0.7 (numpy backend)', 1e-10))
def dssmv_ensemble(obs: Any, ens: Any, *, ddof: int = 1) -> np.ndarray:
    r"""Multivariate Dawid–Sebastiani score from the ensemble mean and covariance.

    .. math:: \mathrm{DSS} = \log\det S + (y - \bar x)^\top S^{-1} (y - \bar x), \qquad
              S = \frac{1}{M - \text{ddof}} \sum_m (x_m - \bar x)(x_m - \bar x)^\top

    (scoringrules' ``dssmv_ensemble``; ``ddof=1`` is its ``bias=False``). Rows whose
    sample covariance is singular (fewer than ``d + 1`` distinct members, or members
    in a hyperplane) raise, naming the rows.

    Parameters
    ----------
    obs : array_like, shape (..., d)
    ens : array_like, shape (..., M, d)
    ddof : int, default 1
        Delta degrees of freedom of the sample covariance.

    Examples
    --------
    >>> round(float(dssmv_ensemble([1.0, 0.0], [[1.0, 1.0], [-1.0, 1.0], [0.0, -2.0]])), 6)  # S = diag(1, 3): log 3 + 1
    2.098612
    """
    obs_f, ens_f, batch = mv_inputs(obs, ens)
    n, m, d = ens_f.shape
    if not isinstance(ddof, (int, np.integer)) or isinstance(ddof, bool) or not 0 <= ddof < m:
        raise InputError(f"ddof: expected an integer in [0, {m - 1}] for {m} members, got {ddof!r}")
    mean = ens_f.mean(axis=1)
    dev = ens_f - mean[:, None, :]
    cov = np.einsum("nmi,nmj->nij", dev, dev) / (m - ddof)
    return _dss_core(obs_f, mean, cov).reshape(batch)
