"""The result of :func:`scorebench.irt.fit`: item parameters, abilities, fit statistics."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError, warn_user
from scorebench.irt.models import PARAMS, item_information
from scorebench.irt.scoring import SCORING_METHODS, score_abilities

__all__ = ["IRTFit", "IRTWarning", "FitSummary", "UnidimensionalFit"]


class IRTWarning(UserWarning):
    """A fit that did not converge, or items whose estimates are suspicious."""


class InformationCriteria:
    """AIC and BIC of a fitted model with ``loglik``, ``n_params`` and ``n_obs`` (systems)."""

    loglik: float
    n_params: int
    n_obs: int

    @property
    def aic(self) -> float:
        """Akaike information criterion, :math:`-2\\ell + 2k`."""
        return -2.0 * self.loglik + 2.0 * self.n_params

    @property
    def bic(self) -> float:
        """Bayesian information criterion, :math:`-2\\ell + k\\log N` (N = systems)."""
        return -2.0 * self.loglik + self.n_params * float(np.log(self.n_obs))


@dataclass(frozen=True)
class FitSummary(InformationCriteria):
    """What every IRT fit reports: item and ability tables, the log-likelihood with its
    parameter and system counts (for AIC/BIC), and how the estimator ended.

    Attributes
    ----------
    items, abilities : DataFrame
        One row per item, one row per system (columns depend on the model).
    loglik : float
        Marginal log-likelihood at the estimates.
    n_params, n_obs : int
        Free parameters and systems.
    converged : bool
        Whether the estimator met its tolerance; ``message`` says how.
    n_iter : int
        Iterations used.
    message : str
    """

    items: pd.DataFrame
    abilities: pd.DataFrame
    loglik: float
    n_params: int
    n_obs: int
    converged: bool
    n_iter: int
    message: str


@dataclass(frozen=True)
class UnidimensionalFit(FitSummary):
    """A :class:`FitSummary` of a model with one latent ability: the model and estimator
    names, the scoring method and the latent scale (the base of :class:`IRTFit` and
    :class:`~scorebench.irt.polyfit.PolyIRTFit`)."""

    model: str
    method: str
    scoring: str = "eap"
    latent_mean: float = 0.0
    latent_sd: float = 1.0
    history: tuple = field(default=(), repr=False)


@dataclass(frozen=True)
class IRTFit(UnidimensionalFit):
    """A fitted unidimensional IRT model.

    Attributes
    ----------
    model, method : str
        The model (``"1pl"``, ``"rasch"``, ``"2pl"``, ``"3pl"``, ``"4pl"``) and estimator.
    items : DataFrame
        One row per item: ``a``, ``b`` (:math:`P = c + (u - c)/(1 + e^{-a(\\theta - b)})`),
        ``d`` (intercept, :math:`b = -d/a`), ``c``/``u`` when estimated, their standard
        errors ``se_*``, ``n`` answers, ``p`` proportion right, ``infit``/``outfit``, and
        ``flag`` (``""``, ``"negative_slope"``, ``"constant"``, ``"extreme"``).
    abilities : DataFrame
        One row per system: ``theta``, ``se`` (scored by ``scoring``), ``n`` answered,
        ``accuracy`` (proportion right of the answered items).
    loglik : float
        Marginal log-likelihood at the estimates.
    n_params : int
        Free parameters (items, plus the latent mean and sd when estimated).
    converged : bool
        Whether the estimator met its tolerance; :attr:`message` says how.
    """

    params: np.ndarray = field(default=None, repr=False)  # (J, 4) a, d, c, u on the theta scale
    theta_scale: float = field(default=1.0, repr=False)   # reported theta = theta_scale * internal

    def summary(self) -> dict[str, Any]:
        """Model, estimator, sizes, log-likelihood, AIC/BIC and convergence in one mapping."""
        return {"model": self.model, "method": self.method, "systems": self.n_obs,
                "items": len(self.items), "loglik": self.loglik, "n_params": self.n_params,
                "aic": self.aic, "bic": self.bic, "converged": self.converged,
                "iterations": self.n_iter, "message": self.message,
                "suspicious_items": int((self.items["flag"] != "").sum())}

    # --- scoring new systems -------------------------------------------------------

    def score(self, new_responses: Any, *, method: str | None = None) -> pd.DataFrame:
        """Abilities of new systems against the fixed, fitted item parameters.

        ``new_responses`` is a wide matrix whose columns are (a subset of) the fitted items
        or a long ``responses`` table; items it lacks count as not answered. Items not in
        the fit raise.

        Returns a DataFrame indexed by system with ``theta``, ``se``, ``n``.
        """
        from scorebench.metrics.irt_kind import response_matrix

        method = method or self.scoring
        if method not in SCORING_METHODS:
            raise InputError(f"method: expected one of {', '.join(map(repr, SCORING_METHODS))}, got {method!r}")
        rm = response_matrix(new_responses) if not (isinstance(new_responses, np.ndarray)) else None
        if rm is None:
            arr = np.asarray(new_responses, dtype=np.float64)
            if arr.ndim != 2 or arr.shape[1] != len(self.items):
                raise InputError(f"new_responses: a plain array needs one column per fitted item "
                                 f"({len(self.items)}), got shape {arr.shape}")
            values, systems = arr, pd.RangeIndex(arr.shape[0], name="system")
        else:
            unknown = [i for i in rm.items if i not in self.items.index]
            if unknown:
                raise InputError(f"new_responses: item(s) {unknown[:5]} were not in the fitted model; "
                                 "expected columns among the fitted items")
            values = np.full((len(rm.systems), len(self.items)), np.nan)
            values[:, self.items.index.get_indexer(rm.items)] = rm.values
            systems = rm.systems
        est = score_abilities(values, self.params, method=method)
        s = self.theta_scale
        return pd.DataFrame({"theta": est.theta * s, "se": est.se * s, "n": est.n_answered},
                            index=pd.Index(systems, name="system"))

    # --- information -----------------------------------------------------------------

    def information(self, theta: Any, *, items: Any = None) -> pd.DataFrame:
        """Item information at abilities ``theta`` (rows = items, columns = theta).

        .. math:: I_j(\\theta) = [\\partial_\\theta P_j(\\theta)]^2 / (P_j(\\theta)(1 - P_j(\\theta)))
        """
        theta = np.atleast_1d(np.asarray(theta, dtype=np.float64))
        sel = self._select(items)
        info = item_information(self.params[sel], theta / self.theta_scale) / self.theta_scale**2
        return pd.DataFrame(info, index=self.items.index[sel], columns=pd.Index(theta, name="theta"))

    def test_information(self, theta: Any, *, items: Any = None) -> pd.Series:
        """Test information (sum over items) and its standard error :math:`1/\\sqrt{I}`."""
        info = self.information(theta, items=items).sum(axis=0)
        return info.rename("information")

    def expected_score(self, theta: Any, *, items: Any = None) -> np.ndarray:
        """Expected proportion right on the selected items at each ``theta``."""
        from scorebench.irt.models import prob

        theta = np.atleast_1d(np.asarray(theta, dtype=np.float64))
        sel = self._select(items)
        return prob(self.params[sel], theta / self.theta_scale).mean(axis=0)

    def _select(self, items: Any) -> np.ndarray:
        usable = ~np.isnan(self.params).any(axis=1)
        if items is None:
            return np.flatnonzero(usable)
        pos = self.items.index.get_indexer(pd.Index(items))
        if (pos < 0).any():
            raise InputError(f"items: {list(pd.Index(items)[pos < 0][:5])} are not in the fitted model")
        return pos[usable[pos]]

    # --- diagnostics -----------------------------------------------------------------

    def suspicious_items(self) -> pd.DataFrame:
        """Items flagged as suspicious: negative slope (better systems get them wrong,
        likely miskeyed), constant answers, or extreme estimates."""
        return self.items[self.items["flag"] != ""]

    def ranking(self) -> pd.DataFrame:
        """Leaderboard by ability (with SE and a 95% interval) next to the plain accuracy rank."""
        ab = self.abilities.copy()
        ab["ci_low"] = ab["theta"] - 1.959963984540054 * ab["se"]
        ab["ci_high"] = ab["theta"] + 1.959963984540054 * ab["se"]
        ab["rank"] = ab["theta"].rank(ascending=False, method="min").astype(int)
        ab["accuracy_rank"] = ab["accuracy"].rank(ascending=False, method="min").astype(int)
        return ab.sort_values(["rank", "accuracy_rank"])

    def warn_if_needed(self) -> None:
        """Emit an :class:`IRTWarning` for non-convergence or suspicious items."""
        if not self.converged:
            warn_user(f"IRT fit did not converge: {self.message}; the estimates are not final "
                          "(raise max_iter, loosen tol, or add item priors)", IRTWarning)
        flagged = self.items["flag"].value_counts()
        flagged = flagged[flagged.index != ""]
        if len(flagged):
            text = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in flagged.items())
            warn_user(f"IRT fit: suspicious items ({text}); see fit.suspicious_items()",
                          IRTWarning)


PARAM_COLUMNS = PARAMS
