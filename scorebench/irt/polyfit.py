r"""Polytomous and mixed-format IRT fits: the driver behind ``fit(..., model="grm")``.

Items scored :math:`0, \dots, K_j` (:math:`K_j` = the largest observed score of item
:math:`j`; every score in between must occur) are fitted by marginal ML (EM, see
:mod:`scorebench.irt.polyem`) with one model per item, as R mirt's ``itemtype``: ``"graded"``
(alias ``"grm"``), ``"gpcm"``, ``"pcm"`` (alias ``"rasch"``), ``"rsm"`` or ``"2pl"`` for
dichotomous items. Parameterisations and the conversion to IRT thresholds are in
:mod:`scorebench.irt.polymodels`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError, warn_user
from scorebench.metrics.irt_kind import ResponseMatrix
from scorebench.irt.polyem import ItemLayout, PolyEMResult, fit_poly_em, free_parameter_basis, poly_estep, onehot
from scorebench.irt.polymodels import thresholds
from scorebench.irt.result import UnidimensionalFit

__all__ = ["POLY_NAMES", "PolyIRTFit", "fit_poly", "is_poly_model"]

POLY_NAMES = {"grm": "graded", "graded": "graded", "gpcm": "gpcm", "pcm": "pcm", "rasch": "pcm",
              "rsm": "rsm", "2pl": "2pl"}
_RASCH = ("pcm", "rsm")


def is_poly_model(model: Any) -> bool:
    """Whether ``model`` asks for the polytomous driver (a per-item list, or grm/gpcm/pcm/rsm)."""
    if isinstance(model, str):
        return model.lower() in ("grm", "graded", "gpcm", "pcm", "rsm")
    return isinstance(model, (Sequence, np.ndarray, pd.Series, dict))


def _kinds(model: Any, items: pd.Index, K: np.ndarray) -> tuple[str, ...]:
    J = len(items)
    if isinstance(model, str):
        names = [model] * J
    elif isinstance(model, dict):
        missing = [i for i in items if i not in model]
        if missing:
            raise InputError(f"model: no model given for item(s) {missing[:5]}; expected one per item")
        names = [model[i] for i in items]
    else:
        names = list(model)
        if len(names) != J:
            raise InputError(f"model: a per-item list needs one entry per item ({J}), got {len(names)}")
    out = []
    for j, name in enumerate(names):
        key = str(name).lower()
        if key not in POLY_NAMES:
            raise InputError(f"model: item {items[j]!r} has model {name!r}; expected one of "
                             f"{', '.join(map(repr, POLY_NAMES))}")
        kind = POLY_NAMES[key]
        if kind == "2pl" and K[j] != 1:
            raise InputError(f"model: item {items[j]!r} is '2pl' but has scores 0..{int(K[j])}; "
                             "use 'graded' or 'gpcm' for polytomous items")
        out.append(kind)
    return tuple(out)


@dataclass(frozen=True)
class PolyIRTFit(UnidimensionalFit):
    """A fitted polytomous or mixed-format IRT model (mirt-style slope-intercept parameters).

    Attributes
    ----------
    items : DataFrame
        One row per item: ``model``, ``n_cat`` (:math:`K_j + 1`), slope ``a``, intercepts
        ``d1 .. dK`` and IRT thresholds ``b1 .. bK`` (see :mod:`scorebench.irt.polymodels`),
        ``n`` answers, ``mean`` score.
    abilities : DataFrame
        EAP ``theta`` and posterior SD ``se`` per system, ``n`` answered, ``score`` (sum).
    loglik, n_params, converged, message : see :class:`~scorebench.irt.IRTFit`.
    latent_sd : float
        Latent standard deviation (free only when every item is pcm/rsm: mirt's Rasch scaling).
    """

    layout: ItemLayout = field(default=None, repr=False)
    a: np.ndarray = field(default=None, repr=False)        # slopes on the internal N(0, 1) scale
    d: np.ndarray = field(default=None, repr=False)        # (J, Kmax) intercepts, NaN padded
    nodes: np.ndarray = field(default=None, repr=False)
    values: np.ndarray = field(default=None, repr=False)   # (N, J) scores, NaN = missing

    def summary(self) -> dict[str, Any]:
        """Model, sizes, log-likelihood, AIC/BIC and convergence in one mapping."""
        return {"model": self.model, "method": self.method, "systems": self.n_obs, "items": len(self.items),
                "loglik": self.loglik, "n_params": self.n_params, "aic": self.aic, "bic": self.bic,
                "converged": self.converged, "iterations": self.n_iter, "message": self.message}

    def warn_if_needed(self) -> None:
        """Emit an :class:`~scorebench.irt.IRTWarning` when EM did not converge."""
        if not self.converged:
            from scorebench.irt.result import IRTWarning

            warn_user(f"IRT fit did not converge: {self.message}", IRTWarning)

    def score(self, new_responses: Any) -> pd.DataFrame:
        """EAP abilities (``theta``, ``se``, ``n``) of new systems against the fitted items.

        ``new_responses`` is a wide matrix with the fitted items as columns (a subset is
        fine: missing items count as not answered) or a long table.
        """
        from scorebench.metrics.irt_kind import response_matrix

        rm = response_matrix(new_responses, ordinal=True)
        if isinstance(rm.items, pd.RangeIndex) and len(rm.items) == len(self.items):
            values = rm.values
        else:
            unknown = [i for i in rm.items if i not in self.items.index]
            if unknown:
                raise InputError(f"new_responses: item(s) {unknown[:5]} were not in the fitted model")
            values = np.full((len(rm.systems), len(self.items)), np.nan)
            values[:, self.items.index.get_indexer(rm.items)] = rm.values
        too_high = values > (self.layout.n_cat - 1)[None, :]
        if too_high.any():
            j = int(np.argwhere(too_high)[0, 1])
            raise InputError(f"new_responses: item {self.items.index[j]!r} was fitted with scores "
                             f"0..{int(self.layout.n_cat[j]) - 1}, got {values[too_high][0]:g}")
        post = self.posterior(values).post
        eap = post @ self.nodes
        sd = np.sqrt(np.maximum(post @ self.nodes**2 - eap**2, 0.0))
        return pd.DataFrame({"theta": eap * self.latent_sd, "se": sd * self.latent_sd,
                             "n": (~np.isnan(values)).sum(axis=1)}, index=pd.Index(rm.systems, name="system"))

    def information(self, theta: Any) -> pd.DataFrame:
        r"""Item information at abilities ``theta`` on the reported scale (rows = items).

        .. math:: I_j(\theta) = \sum_k [\partial_\theta P_{jk}(\theta)]^2 / P_{jk}(\theta)
        """
        from scorebench.irt.polymodels import item_information_poly

        th = np.atleast_1d(np.asarray(theta, dtype=np.float64))
        out = np.empty((len(self.items), th.size))
        for (kind, K), idx in self.layout.groups().items():
            out[idx] = item_information_poly(kind, self.a[idx], self.d[idx, :K], th / self.latent_sd)
        return pd.DataFrame(out / self.latent_sd**2, index=self.items.index, columns=pd.Index(th, name="theta"))

    def posterior(self, values: np.ndarray | None = None):
        """E-step at the estimates for ``values`` (default: the fitted responses)."""
        vals = self.values if values is None else values
        return poly_estep(onehot(vals, self.layout), self.layout, self.a, self.d, self.nodes,
                          _log_w(self.nodes))


def _log_w(nodes: np.ndarray) -> np.ndarray:
    from scorebench.irt.polyem import normal_log_weights

    return normal_log_weights(nodes)


def fit_poly(rm: ResponseMatrix, model: Any, *, max_iter: int = 2000, tol: float | None = None,
             quadpts: int | None = None, prior_a: tuple[float, float] | None = None,
             warn: bool = True) -> PolyIRTFit:
    """Fit polytomous / mixed item models to an ordinal response matrix (see :func:`scorebench.irt.fit`)."""
    values = rm.values
    N, J = values.shape
    obs = ~np.isnan(values)
    if (obs.sum(axis=0) == 0).any():
        bad = list(rm.items[obs.sum(axis=0) == 0][:5])
        raise InputError(f"responses: item(s) {bad} have no answers; drop them before fitting")
    K = np.nanmax(values, axis=0).astype(int)
    for j in range(J):
        col = values[obs[:, j], j].astype(int)
        seen = np.bincount(col, minlength=K[j] + 1)
        if K[j] == 0 or (seen == 0).any():
            missing = np.flatnonzero(seen == 0).tolist()
            why = "only one score occurs" if K[j] == 0 else f"score(s) {missing} never occur"
            raise InputError(f"responses: item {rm.items[j]!r} is scored 0..{K[j]} but {why}; every "
                             "item needs each score from 0 to its maximum at least once (recode the "
                             "scores to consecutive integers or drop the item)")
    kinds = _kinds(model, rm.items, K)
    layout = ItemLayout(kinds, K + 1)
    res: PolyEMResult = fit_poly_em(values, layout, max_iter=max_iter, tol=1e-5 if tol is None else tol,
                                    quadpts=quadpts, prior_a=prior_a)
    rasch_only = all(k in _RASCH for k in kinds)
    sd = float(res.a[0]) if rasch_only else 1.0
    items = _items_table(rm, layout, res, sd, values, obs)
    se = _crossprod_se(values, layout, res)
    if se is not None:
        Kmax = res.d.shape[1]
        items.insert(3 + 2 * Kmax, "se_a", np.nan if rasch_only else se[:, 0] / sd)
        for k in range(Kmax):
            items.insert(4 + 2 * Kmax + k, f"se_d{k + 1}", se[:, k + 1])
    post = res.posterior.post
    eap = post @ res.theta
    se = np.sqrt(np.maximum(post @ res.theta**2 - eap**2, 0.0))
    abilities = pd.DataFrame({"theta": eap * sd, "se": se * sd, "n": obs.sum(axis=1),
                              "score": np.where(obs, values, 0.0).sum(axis=1)},
                             index=pd.Index(rm.systems, name="system"))
    n_params = _count_params(layout)
    name = model.lower() if isinstance(model, str) else "mixed"
    name = POLY_NAMES.get(name, name)
    out = PolyIRTFit(model=name, method="em", items=items, abilities=abilities,
                     loglik=res.posterior.loglik, n_params=n_params, n_obs=N, converged=res.converged,
                     n_iter=res.n_iter, message=res.message, latent_sd=sd, history=tuple(res.history),
                     layout=layout, a=res.a, d=res.d, nodes=res.theta, values=values)
    if warn:
        out.warn_if_needed()
    return out


def _crossprod_se(values: np.ndarray, layout: ItemLayout, res: PolyEMResult,
                  max_work: float = 5e9) -> np.ndarray | None:
    r"""Standard errors of every slope and intercept, (J, 1 + Kmax), NaN padded, or None when too large.

    The information is the cross-product of the systems' score vectors,
    :math:`\sum_i s_i s_i^\top` with :math:`s_i = \partial\log L_i/\partial\psi` over the free
    parameters :math:`\psi` (R mirt's ``SE.type = "crossprod"``); derived intercepts (shared
    rating-scale steps) get their SEs by the delta method. Above 300 parameters without shared
    ones the information is inverted item by item (between-item terms are dropped).
    """
    from scorebench.irt.polymodels import category_jacobian

    N = values.shape[0]
    Q = len(res.theta)
    if float(N) * Q * float((layout.n_cat.astype(float) ** 2).sum()) > max_work:
        return None
    post = res.posterior.post
    sizes = layout.n_cat.astype(int)
    off = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    S = np.zeros((N, int(sizes.sum())))
    for (kind, K), idx in layout.groups().items():
        P, D = category_jacobian(kind, res.a[idx], res.d[idx, :K], res.theta)
        Dn = D / P[:, None]                                                  # (G, p, K+1, Q)
        for x, j in enumerate(idx):
            obs = ~np.isnan(values[:, j])
            cat = np.where(obs, values[:, j], 0).astype(int)
            g = post @ Dn[x].reshape((K + 1) * (K + 1), Q).T                 # (N, p*(K+1))
            g = g.reshape(N, K + 1, K + 1)[np.arange(N), :, cat]             # (N, p)
            S[:, off[j]:off[j] + K + 1] = np.where(obs[:, None], g, 0.0)
    out = np.full((len(sizes), res.d.shape[1] + 1), np.nan)
    shared = any(k in ("pcm", "rsm") for k in layout.kinds)
    if not shared and S.shape[1] > 300:
        # many items, no shared parameters: item-by-item blocks of the information (the
        # between-item terms change the SEs little and the full inverse costs O(params^3))
        for j in range(len(sizes)):
            block = S[:, off[j]:off[j] + sizes[j]]
            try:
                out[j, :sizes[j]] = np.sqrt(np.maximum(np.diag(np.linalg.inv(block.T @ block)), 0.0))
            except np.linalg.LinAlgError:
                pass
        return out
    T = free_parameter_basis(layout)
    Sf = S @ T if shared else S
    try:
        cov = np.linalg.inv(Sf.T @ Sf)
    except np.linalg.LinAlgError:
        return None
    var_full = np.einsum("pq,qr,pr->p", T, cov, T) if shared else np.diag(cov)
    for j in range(len(sizes)):
        out[j, :sizes[j]] = np.sqrt(np.maximum(var_full[off[j]:off[j] + sizes[j]], 0.0))
    return out


def _count_params(layout: ItemLayout) -> int:
    n = 0
    rsm_K = set()
    for (kind, K), idx in layout.groups().items():
        if kind in ("2pl", "graded", "gpcm"):
            n += len(idx) * (K + 1)
        elif kind == "pcm":
            n += len(idx) * K
        else:
            n += len(idx) + (K - 1)
            rsm_K.add(K)
    if any(k in _RASCH for k in layout.kinds):
        n += 1  # the shared slope (= latent sd in the Rasch scaling)
    return n


def _items_table(rm, layout: ItemLayout, res: PolyEMResult, sd: float, values, obs) -> pd.DataFrame:
    J = len(layout.kinds)
    Kmax = res.d.shape[1]
    a_rep = res.a / sd
    b = np.full((J, Kmax), np.nan)
    for (kind, K), idx in layout.groups().items():
        b[idx, :K] = thresholds(kind, a_rep[idx], res.d[idx, :K])
    cols: dict[str, Any] = {"model": list(layout.kinds), "n_cat": layout.n_cat.astype(int), "a": a_rep}
    for k in range(Kmax):
        cols[f"d{k + 1}"] = res.d[:, k]
    for k in range(Kmax):
        cols[f"b{k + 1}"] = b[:, k]
    cols["n"] = obs.sum(axis=0)
    cols["mean"] = np.where(obs, values, 0.0).sum(axis=0) / np.maximum(obs.sum(axis=0), 1)
    return pd.DataFrame(cols, index=pd.Index(rm.items, name="item"))
