r"""Item response functions of the logistic IRT models and their derivatives.

Every unidimensional model here is a special case of the four-parameter logistic model

.. math::

    P_j(\theta) = c_j + (u_j - c_j)\,\sigma(a_j\theta + d_j), \qquad
    \sigma(z) = \frac{1}{1 + e^{-z}}, \qquad b_j = -d_j / a_j,

so that :math:`P_j(\theta) = c_j + (u_j - c_j) / (1 + \exp(-a_j(\theta - b_j)))` in the IRT
parameterisation (no 1.7 scaling constant). The 1PL ties all slopes to one common value,
the 2PL frees them, the 3PL adds a lower asymptote (guessing) :math:`c_j`, the 4PL an upper
asymptote :math:`u_j`. Internally parameters are stored as ``(a, d, c, u)`` columns.

Reference: Birnbaum (1968) in Lord & Novick, *Statistical Theories of Mental Test Scores*;
Barton & Lord (1981) for the 4PL.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from scorebench.core.errors import InputError

__all__ = ["ModelSpec", "MODELS", "get_model", "PARAMS", "log_prob", "prob", "derivatives",
           "curvature_sums", "item_information"]

PARAMS = ("a", "d", "c", "u")


@dataclass(frozen=True)
class ModelSpec:
    """Which item parameters a model estimates.

    Attributes
    ----------
    name : str
        ``"1pl"``, ``"rasch"``, ``"2pl"``, ``"3pl"`` or ``"4pl"``.
    free : tuple of str
        Item parameters estimated per item (subset of ``("a", "d", "c", "u")``).
    common_slope : bool
        Whether one slope is shared by all items (1PL / Rasch).
    rasch_scale : bool
        Whether results are reported in the Rasch scaling: slopes 1 and the common slope
        moved into the latent standard deviation (abilities and ``latent_sd`` multiplied by
        it, ``b = -d``), as R mirt's ``Rasch`` item type reports them.
    jml : bool
        Whether penalised joint ML (``method="jml"``) can estimate the model.
    """

    name: str
    free: tuple[str, ...]
    common_slope: bool = False
    rasch_scale: bool = False
    jml: bool = True

    @property
    def free_mask(self) -> np.ndarray:
        """Boolean over ``PARAMS``: estimated per item."""
        return np.array([p in self.free for p in PARAMS])

    def n_params(self, n_items: int) -> int:
        """Number of free item parameters for ``n_items`` items."""
        return n_items * len(self.free) + (1 if self.common_slope else 0)


MODELS = {
    "1pl": ModelSpec("1pl", ("d",), common_slope=True),
    "rasch": ModelSpec("rasch", ("d",), common_slope=True, rasch_scale=True),
    "2pl": ModelSpec("2pl", ("a", "d")),
    "3pl": ModelSpec("3pl", ("a", "d", "c"), jml=False),
    "4pl": ModelSpec("4pl", ("a", "d", "c", "u"), jml=False),
}


def get_model(name: str) -> ModelSpec:
    """Look a model up by name (case-insensitive)."""
    key = str(name).lower()
    if key not in MODELS:
        raise InputError(f"model: expected one of {', '.join(map(repr, MODELS))}, got {name!r}")
    return MODELS[key]


def _cols(params: np.ndarray) -> tuple[np.ndarray, ...]:
    return tuple(params[:, k][:, None] for k in range(4))


def prob(params: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """:math:`P_j(\\theta_q)` for items (rows of ``params``: a, d, c, u) at abilities ``theta``.

    Examples
    --------
    >>> import numpy as np
    >>> prob(np.array([[1.0, 0.0, 0.0, 1.0]]), np.array([0.0, 1.0])).round(4).tolist()
    [[0.5, 0.7311]]
    """
    a, d, c, u = _cols(params)
    return c + (u - c) * expit(a * np.asarray(theta)[None, :] + d)


def log_prob(params: np.ndarray, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(log P, log(1 - P))`` computed without overflow, shape (items, len(theta))."""
    a, d, c, u = _cols(params)
    z = a * np.asarray(theta)[None, :] + d
    log_s = -np.logaddexp(0.0, -z)
    log_1ms = -np.logaddexp(0.0, z)
    if np.all(c == 0.0) and np.all(u == 1.0):
        return log_s, log_1ms
    with np.errstate(divide="ignore"):
        log_g = np.log(u - c)
        return np.logaddexp(np.log(c), log_g + log_s), np.logaddexp(np.log1p(-u), log_g + log_1ms)


def derivatives(params: np.ndarray, theta: np.ndarray, *, second: bool = False,
                which: tuple[int, ...] = (0, 1, 2, 3)):
    r"""P and its derivatives with respect to ``(a, d, c, u)`` at each node.

    Returns ``P`` (J, Q), ``D`` (4, J, Q) and, with ``second``, ``D2`` (4, 4, J, Q); without
    ``second`` only the columns in ``which`` of ``D`` are computed (the others are zero):

    .. math::

        \partial_a P = g\sigma'\theta,\ \partial_d P = g\sigma',\
        \partial_c P = 1 - \sigma,\ \partial_u P = \sigma,\quad g = u - c,\ \sigma' = \sigma(1-\sigma).
    """
    a, d, c, u = _cols(params)
    th = np.asarray(theta)[None, :]
    s = expit(a * th + d)
    s1 = s * (1.0 - s)
    g = u - c
    P = c + g * s
    if not second:
        D = np.zeros((4,) + P.shape)
        make = (lambda: g * s1 * th, lambda: g * s1, lambda: 1.0 - s, lambda: s)
        for k in which:
            D[k] = make[k]()
        return P, D
    D = np.stack([g * s1 * th, g * s1, 1.0 - s, s + 0.0 * th])
    s2 = s1 * (1.0 - 2.0 * s)
    D2 = np.zeros((4, 4) + P.shape)
    D2[0, 0] = g * s2 * th * th
    D2[0, 1] = D2[1, 0] = g * s2 * th
    D2[1, 1] = g * s2
    D2[0, 2] = D2[2, 0] = -s1 * th
    D2[1, 2] = D2[2, 1] = -s1
    D2[0, 3] = D2[3, 0] = s1 * th
    D2[1, 3] = D2[3, 1] = s1
    return P, D, D2


def curvature_sums(params: np.ndarray, theta: np.ndarray, w: np.ndarray, which: tuple[int, ...]) -> np.ndarray:
    r"""Weighted sums over the nodes of the second derivatives of P, only for the parameters in ``which``.

    .. math::

        C_{kl,j} = \sum_q w_{jq}\, \partial_k \partial_l P_j(\theta_q), \qquad k, l \in \text{which},

    with the non-zero second derivatives of the 4PL (:math:`g = u - c`, :math:`\sigma' = \sigma(1-\sigma)`,
    :math:`\sigma'' = \sigma'(1 - 2\sigma)`): :math:`\partial_a^2 P = g\sigma''\theta^2`,
    :math:`\partial_a\partial_d P = g\sigma''\theta`, :math:`\partial_d^2 P = g\sigma''`,
    :math:`\partial_a\partial_c P = -\sigma'\theta`, :math:`\partial_d\partial_c P = -\sigma'`,
    :math:`\partial_a\partial_u P = \sigma'\theta`, :math:`\partial_d\partial_u P = \sigma'`. Each entry is one
    product of a (J, Q) array with a node vector, so the (4, 4, J, Q) tensor of
    :func:`derivatives` ``(second=True)`` is never built (3 entries for the 2PL instead of 16).

    Parameters
    ----------
    params : ndarray, shape (J, 4)
        Item parameters ``(a, d, c, u)``.
    theta : ndarray, shape (Q,)
        Nodes.
    w : ndarray, shape (J, Q)
        Weights per item and node.
    which : tuple of int
        Parameter columns (0 = a, 1 = d, 2 = c, 3 = u) whose entries are wanted.

    Returns
    -------
    ndarray, shape (4, 4, J)
        Symmetric in the first two axes; entries outside ``which`` are zero.

    Examples
    --------
    >>> import numpy as np
    >>> pr, th = np.array([[1.2, -0.3, 0.0, 1.0]]), np.linspace(-2, 2, 5)
    >>> w = np.ones((1, 5))
    >>> _, _, D2 = derivatives(pr, th, second=True)
    >>> C = curvature_sums(pr, th, w, (0, 1))
    >>> bool(np.allclose(C[:2, :2], (D2[:2, :2] * w).sum(axis=-1))), float(np.abs(C[2:]).sum())
    (True, 0.0)
    """
    a, d, c, u = _cols(params)
    th = np.asarray(theta, dtype=np.float64)
    s = expit(a * th[None, :] + d)
    s1 = s * (1.0 - s)
    out = np.zeros((4, 4, params.shape[0]))
    keep = set(which)
    if keep & {0, 1}:
        h = (u - c) * s1 * (1.0 - 2.0 * s) * w          # g sigma'' w
        sums = {0: lambda x: x @ (th * th), 1: lambda x: x @ th, 2: lambda x: x.sum(axis=1)}
        for k, l, power in ((0, 0, 0), (0, 1, 1), (1, 1, 2)):
            if k in keep and l in keep:
                out[k, l] = out[l, k] = sums[power](h)
    if keep & {2, 3} and keep & {0, 1}:
        e = s1 * w
        e_th, e_1 = e @ th, e.sum(axis=1)
        for k, base in ((0, e_th), (1, e_1)):
            for l, sign in ((2, -1.0), (3, 1.0)):
                if k in keep and l in keep:
                    out[k, l] = out[l, k] = sign * base
    return out

def item_information(params: np.ndarray, theta: np.ndarray) -> np.ndarray:
    r"""Fisher information of each item at each ability, shape (items, len(theta)).

    .. math::

        I_j(\theta) = \frac{[\partial_\theta P_j(\theta)]^2}{P_j(\theta)(1 - P_j(\theta))},
        \qquad \partial_\theta P_j = a_j (u_j - c_j)\,\sigma'(a_j\theta + d_j).

    For the 2PL this is :math:`a_j^2 P_j (1 - P_j)`.

    Examples
    --------
    >>> import numpy as np
    >>> float(item_information(np.array([[2.0, 0.0, 0.0, 1.0]]), np.array([0.0]))[0, 0])
    1.0
    """
    a, d, c, u = _cols(params)
    s = expit(a * np.asarray(theta)[None, :] + d)
    P = c + (u - c) * s
    dP = a * (u - c) * s * (1.0 - s)
    with np.errstate(divide="ignore", invalid="ignore"):
        info = dP * dP / (P * (1.0 - P))
    return np.nan_to_num(info, nan=0.0, posinf=0.0)
