r"""Parameter and return descriptions shared by the scoring rules' docstrings.

The ensemble, kernel, weighted and categorical scores take the same arguments; each
docstring marks the block with a ``%(name)s`` line and its module fills it with
:func:`scorebench.core.docstrings.fill_doc` and :data:`SECTIONS`, so every function
documents all its parameters while the text is written once.
"""

from __future__ import annotations

__all__ = ["SECTIONS"]

#: Shared numpydoc parameter blocks, by marker name.
SECTIONS = {
    "ensemble": """
obs : array_like, shape (...)
    Observations.
ens : array_like, shape (..., M)
    Ensemble members on the last axis.
""",
    "mv_ensemble": """
obs : array_like, shape (..., d)
    Observations, variables on the last axis.
ens : array_like, shape (..., M, d)
    Members on axis -2, variables on axis -1.
""",
    "window": r"""
a, b : float
    Window of the weight :math:`w(z) = \mathbb 1\{a \le z \le b\}` (``a < b``), bounds
    included; a multivariate forecast uses the box :math:`[a, b]^d` (the same window for
    every variable).
""",
    "estimator": """
estimator : {"standard", "fair"}
    ``"standard"`` scores the members' empirical distribution; ``"fair"`` is the unbiased
    estimator for the distribution the members are drawn from (pair terms over
    :math:`i \\ne j` only, as Ferro 2014 does for the CRPS).
""",
    "members": r"""
nan_policy : {"propagate", "omit"}
    ``"omit"`` skips members with a NaN value (a NaN variable, multivariate).
ens_w : array_like, shape (..., M), optional
    Member weights :math:`e_i` (normalised per row; :math:`1/M` by default), which
    replace :math:`1/M` in the sums.
""",
    "classes": """
y : array_like of int, shape (...)
    Observed class indices ``0..K-1``.
P : array_like, shape (..., K)
    Forecast probabilities, each row summing to 1.
""",
    "ordinal_classes": """
y : array_like of int, shape (...)
    Observed (ordinal) class indices ``0..K-1``.
P : array_like, shape (..., K)
    Forecast probabilities over the ordered classes, each row summing to 1.
""",
    "crps_returns": """
ndarray
    CRPS per element (lower is better).
""",
    "variogram": r"""
p : float
    Variogram order (> 0).
weights : array_like (d, d), optional
    Pair weights :math:`w_{ij}` (all ones by default).
""",
}
