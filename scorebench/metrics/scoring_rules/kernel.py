r"""Gaussian kernel scores of ensembles, univariate and multivariate.

The kernel score of a positive-definite kernel :math:`k` (Gneiting & Raftery 2007, §5) is

.. math:: \mathrm{KS}(F, y) = \tfrac12 k(y, y) + \frac{1}{2c} \sum_{i,j} k(x_i, x_j)
          - \frac1M \sum_i k(x_i, y),
          \qquad c = M^2 \text{ (standard) or } M(M-1) \text{ with } i \ne j \text{ (fair)},

here with the Gaussian kernel :math:`k(x, x') = \exp(-\tfrac12 \lVert x - x' \rVert^2)`
(unit length scale, as scoringrules' ``gksuv_ensemble`` / ``gksmv_ensemble`` with
``estimator="nrg"`` / ``"fair"``). The standard estimator is half the squared maximum
mean discrepancy between the ensemble and the observation, so it lies in [0, 1]; the
fair one is unbiased for the score of the distribution the members are drawn from and
can be slightly negative. Pairs are summed in row chunks of bounded memory, :math:`O(M^2 d)`
per row. Infinite inputs are refused (the kernel would silently map them to 0).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from scorebench.core.docstrings import fill_doc
from scorebench.core.registry import register
from scorebench.core.validation import check_choice
from scorebench.metrics.scoring_rules._common import FAMILY, GNEITING_RAFTERY, SCORINGRULES
from scorebench.metrics.scoring_rules._members import fair_denominator, member_weights, omit_nan_members
from scorebench.metrics.scoring_rules.docs import SECTIONS
from scorebench.metrics.scoring_rules.inputs import ensemble_inputs, mv_inputs

__all__ = ["gksuv_ensemble", "gksmv_ensemble", "gks_terms"]

_CHUNK_BYTES = 1 << 21
_PARAMS = {"estimator": "standard", "nan_policy": "propagate", "ens_w": None}


def gks_terms(obs: np.ndarray, ens: np.ndarray, u: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    r"""Per row :math:`\sum_i u_i k(x_i, y)` and :math:`\sum_{i,j} u_i u_j k(x_i, x_j)` for
    ``obs (n, d)``, ``ens (n, m, d)`` and member weights ``u (n, m)`` (``None``: ``1/m``)."""
    n, m, _ = ens.shape
    near, pair = np.empty(n), np.empty(n)
    rows = min(n, max(1, _CHUNK_BYTES // (8 * m * m)))
    for start in range(0, n, rows):
        stop = min(n, start + rows)
        e = ens[start:stop] - obs[start:stop, None, :]  # shift: the kernel is translation-invariant
        sq = np.einsum("rmd,rmd->rm", e, e)
        d2 = sq[:, :, None] + sq[:, None, :] - 2.0 * np.einsum("rid,rjd->rij", e, e)
        kern = np.exp(-0.5 * np.maximum(d2, 0.0))
        if u is None:
            near[start:stop] = np.exp(-0.5 * sq).sum(axis=1) / m
            pair[start:stop] = kern.sum(axis=(1, 2)) / (m * m)
        else:
            w = u[start:stop]
            near[start:stop] = (np.exp(-0.5 * sq) * w).sum(axis=1)
            pair[start:stop] = np.einsum("ri,rij,rj->r", w, kern, w)
    return near, pair


def gks_score(obs: np.ndarray, ens: np.ndarray, batch: tuple[int, ...], estimator: str,
                nan_policy: str, ens_w: Any) -> np.ndarray:
    """Kernel score per row for ``obs (n, d)`` and ``ens (n, m, d)`` with optional member
    weights (normalised per row) and NaN members omitted on request."""
    check_choice(estimator, "estimator", ("standard", "fair"))
    n, m, _ = ens.shape
    e = None if ens_w is None else member_weights(ens_w, n, m, batch)
    ens, e = omit_nan_members(ens, e, nan_policy, multivariate=True)
    near, pair = gks_terms(obs, ens, e)
    if estimator == "fair":  # drop the diagonal terms k(x_i, x_i) = 1 of the pair sum
        diagonal = 1.0 / m if e is None else np.einsum("nm,nm->n", e, e)
        pair = (pair - diagonal) / fair_denominator(e, m)
    return (0.5 + 0.5 * pair - near).reshape(batch)


# What the two registrations share; each adds its name and kind.
_ENTRY: dict[str, Any] = {"family": FAMILY, "inputs": ("y", "ens"), "higher_is_better": False,
                          "bounds": (0.0, 1.0), "proper": "strict", "per_row": True, "params": _PARAMS,
                          "citation": GNEITING_RAFTERY + "; Allen et al. (2023), SIAM/ASA JUQ 11(2)",
                          "tested_against": (SCORINGRULES, 1e-10)}


@register("gksuv_ensemble", kind="ensemble", **_ENTRY)
def gksuv_ensemble(obs: Any, ens: Any, *, estimator: str = "standard", nan_policy: str = "propagate",
                   ens_w: Any = None) -> np.ndarray:
    r"""Gaussian kernel score of a univariate ensemble.

    .. math:: \mathrm{GKS} = \tfrac12 + \frac{1}{2c} \sum_{i,j} e^{-(x_i - x_j)^2/2}
              - \frac1M \sum_i e^{-(x_i - y)^2/2}

    (see the module docstring for ``c``). Strictly proper; bounded, so insensitive to
    outlying members.

    Parameters
    ----------
    %(ensemble, estimator, members)s

    Examples
    --------
    >>> float(gksuv_ensemble(0.0, [0.0]))
    0.0
    >>> round(float(gksuv_ensemble(0.0, [1.0, -1.0])), 6)
    0.177303
    """
    obs_f, ens_f, batch = ensemble_inputs(obs, ens)
    return gks_score(obs_f[:, None], ens_f[:, :, None], batch, estimator, nan_policy, ens_w)


@register("gksmv_ensemble", kind="multivariate", **_ENTRY)
def gksmv_ensemble(obs: Any, ens: Any, *, estimator: str = "standard", nan_policy: str = "propagate",
                   ens_w: Any = None) -> np.ndarray:
    r"""Gaussian kernel score of a multivariate ensemble (Euclidean distance, unit scale).

    .. math:: \mathrm{GKS} = \tfrac12 + \frac{1}{2c} \sum_{i,j} e^{-\lVert x_i - x_j\rVert^2/2}
              - \frac1M \sum_i e^{-\lVert x_i - y\rVert^2/2}

    Parameters
    ----------
    %(mv_ensemble, estimator, members)s

    Examples
    --------
    >>> round(float(gksmv_ensemble([0.0, 0.0], [[1.0, 0.0], [-1.0, 0.0]])), 6)
    0.177303
    """
    obs_f, ens_f, batch = mv_inputs(obs, ens)
    return gks_score(obs_f, ens_f, batch, estimator, nan_policy, ens_w)


fill_doc(gksuv_ensemble, gksmv_ensemble, **SECTIONS)
