"""``scorebench.irt.fit``: one entry point for every unidimensional model and estimator."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.metrics.irt_kind import ResponseMatrix, response_matrix
from scorebench.core.validation import check_choice
from scorebench.irt.blas import blas_limit
from scorebench.irt.em import Priors, fit_em
from scorebench.irt.information import item_covariance, se_of_b, standard_errors
from scorebench.irt.itemfit import infit_outfit
from scorebench.irt.jml import fit_jml
from scorebench.irt.models import PARAMS, get_model
from scorebench.irt.polyfit import fit_poly, is_poly_model
from scorebench.irt.quadrature import ResponseOps
from scorebench.irt.result import IRTFit
from scorebench.irt.scoring import SCORING_METHODS, AbilityEstimates, score_abilities

__all__ = ["fit", "fit_by_topic", "score", "TopicFit", "METHODS"]

METHODS = ("auto", "em", "jml")
_JML_CELLS = 2e8  # method="auto" uses JML above this many systems x items


def _priors(spec_name: str, priors: Priors | Mapping | None) -> Priors:
    if isinstance(priors, Priors):
        given = {k: getattr(priors, k) for k in ("a", "d", "c", "u")}
    else:
        given = dict(priors or {})
    unknown = set(given) - set(PARAMS)
    if unknown:
        raise InputError(f"priors: unknown parameter(s) {sorted(unknown)}; expected keys among {PARAMS}")
    for key, value in given.items():
        _check_prior(key, value)
    return priors if isinstance(priors, Priors) else Priors(**given)


def _check_prior(key: str, value: Any) -> None:
    """Normal priors (a, d) need a finite mean and SD > 0; Beta priors (c, u) alpha, beta > 0."""
    if value is None:
        return
    try:
        first, second = (float(v) for v in value)
    except (TypeError, ValueError):
        raise InputError(f"priors: {key} expected a pair of numbers, got {value!r}") from None
    if key in ("a", "d"):
        if not (np.isfinite(first) and np.isfinite(second) and second > 0):
            raise InputError(f"priors: {key}=({value[0]}, {value[1]}) is not a normal prior; expected a finite mean "
                             "and a standard deviation > 0")
    elif not (np.isfinite(first) and np.isfinite(second) and first > 0 and second > 0):
        raise InputError(f"priors: {key}=({value[0]}, {value[1]}) is not a Beta prior; expected alpha > 0 and "
                         "beta > 0")


def _anchor_params(anchors: Any, items: pd.Index) -> tuple[np.ndarray, np.ndarray]:
    """Fixed values (J, 4; NaN = free) and the mask of fixed entries from an anchors table."""
    table = anchors.items if isinstance(anchors, IRTFit) else anchors
    if not isinstance(table, pd.DataFrame) or not {"a", "b"} <= set(table.columns):
        raise InputError("anchors: expected a DataFrame indexed by item with columns 'a' and 'b' "
                         "(optionally 'c', 'u'), or a previous fit")
    init = np.full((len(items), 4), np.nan)
    fixed = np.zeros((len(items), 4), dtype=bool)
    common = [i for i in table.index if i in items]
    if not common:
        raise InputError("anchors: none of the anchor items is in the responses")
    pos = items.get_indexer(common)
    a = table.loc[common, "a"].to_numpy(np.float64)
    b = table.loc[common, "b"].to_numpy(np.float64)
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise InputError("anchors: 'a' and 'b' must be finite numbers")
    init[pos, 0], init[pos, 1] = a, -a * b
    init[pos, 2] = table.loc[common, "c"].to_numpy(np.float64) if "c" in table.columns else 0.0
    init[pos, 3] = table.loc[common, "u"].to_numpy(np.float64) if "u" in table.columns else 1.0
    fixed[pos] = True
    return init, fixed


def _make_ops(values: np.ndarray, device: str | None) -> ResponseOps:
    if device is None:
        return ResponseOps(values)
    check_choice(device, "device", ("cpu", "cuda"))
    from scorebench.irt._torch import TorchOps

    return TorchOps(values, device)


def fit(responses: Any, model: Any = "2pl", *, method: str = "auto", scoring: str = "eap",
        topics: Any = None, anchors: Any = None, priors: Priors | Mapping | None = None,
        max_iter: int = 500, tol: float | None = None, spacing: float | None = None,
        device: str | None = None, nan_policy: str = "raise", full_se: bool | None = None,
        warn: bool = True, quadpts: int | None = None) -> IRTFit:
    r"""Fit a logistic IRT model to a systems x items matrix of right/wrong answers.

    .. math::

        P(y_{ij} = 1 \mid \theta_i) = c_j + \frac{u_j - c_j}{1 + \exp(-a_j(\theta_i - b_j))},
        \qquad \theta_i \sim N(0, 1)

    (``1pl``: one common slope; ``rasch``: slopes 1 and a free latent sd; ``2pl``: free slopes;
    ``3pl``: plus a lower asymptote with a beta prior; ``4pl``: plus an upper asymptote).

    Items scored 0..K take the polytomous models (``model="grm"``, ``"gpcm"``, ``"pcm"``,
    ``"rsm"``, or one model per item as a list or ``{item: model}`` mapping mixing these with
    ``"2pl"`` dichotomous items, like mirt's ``itemtype``); they are fitted by EM with mirt's
    slope-intercept parameters and return a :class:`~scorebench.irt.polyfit.PolyIRTFit`
    (formulas and the conversion to thresholds in :mod:`scorebench.irt.polymodels`).

    Parameters
    ----------
    responses : DataFrame, ndarray or ResponseMatrix
        Wide 0/1 matrix (rows = systems, columns = items, NaN = not answered) or a long
        ``responses`` table (``system``, ``item``, ``correct``, optional ``topic``).
    model : {"1pl", "rasch", "2pl", "3pl", "4pl", "grm", "gpcm", "pcm", "rsm"} or list or dict
        A per-item list/mapping selects the polytomous driver (entries ``"2pl"``, ``"graded"``
        or ``"grm"``, ``"gpcm"``, ``"pcm"``, ``"rsm"``).
    method : {"auto", "em", "jml"}
        Marginal ML by EM on an adaptive dense grid (default), or penalised joint ML
        (``auto`` picks JML only above 2e8 cells).
    scoring : {"eap", "map", "ml"}
        How :attr:`IRTFit.abilities` are estimated.
    topics : mapping, optional
        Item -> topic for wide input (used by :func:`fit_by_topic`).
    anchors : DataFrame or IRTFit, optional
        Items whose parameters are held fixed (columns ``a``, ``b`` and optionally ``c``,
        ``u``); the latent mean and sd are then estimated, which links the new calibration
        to the anchors' scale.
    priors : Priors or mapping, optional
        ``{"a": (mean, sd), "d": (mean, sd), "c": (alpha, beta), "u": (alpha, beta)}``;
        a key set to ``None`` removes that prior. Defaults: no prior on ``a`` or ``d``;
        Beta(5, 17) on ``c`` (3PL/4PL; mean 0.23, which keeps the lower asymptote of easy
        or weakly discriminating items from wandering); Beta(2, 20) on ``1 - u`` (4PL). R mirt's
        default 3PL has no prior on ``c``: ``priors={"c": None}`` reproduces it (maximum
        likelihood; ``c`` may then sit on its bound 0 or drift for easy items). The
        polytomous models take only ``{"a": (mean, sd)}`` (normal prior on free slopes).
    max_iter, tol : int, float
        Iteration limit and convergence tolerance (largest change of any item parameter;
        default 1e-5 for EM, 1e-4 for JML). EM also requires the gradient of the marginal
        log-posterior, projected on the bounds of ``c``/``u``, below 1e-4 per system, so
        ``converged`` means the optimum was reached, not that EM stalled.
    spacing : float, optional
        Fixed grid spacing (default: adapted to the narrowest posterior).
    quadpts : int, optional
        Polytomous models only: number of equally spaced nodes on [-6, 6] (default 61, as
        mirt, or finer when the test information needs it).
    device : {"cpu", "cuda"}, optional
        Run the E-step products with torch on this device (same estimates).
    full_se : bool, optional
        Invert the whole observed information (default for small problems) rather than
        item by item.
    warn : bool
        Emit :class:`~scorebench.irt.IRTWarning` when the fit did not converge or items are
        suspicious (the result says so either way: ``converged``, ``items["flag"]``).

    Returns
    -------
    IRTFit

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> theta = rng.normal(size=400)
    >>> a, b = rng.uniform(0.5, 2, 20), rng.normal(size=20)
    >>> y = (rng.random((400, 20)) < 1 / (1 + np.exp(-a * (theta[:, None] - b)))).astype(float)
    >>> result = fit(y, "2pl")
    >>> result.converged, list(result.items.columns[:4])
    (True, ['a', 'b', 'd', 'se_a'])
    >>> bool(np.corrcoef(result.abilities["theta"], theta)[0, 1] > 0.9)
    True
    """
    if is_poly_model(model):
        return _fit_poly(responses, model, method=method, scoring=scoring, topics=topics, anchors=anchors,
                         priors=priors, max_iter=max_iter, tol=tol, nan_policy=nan_policy, warn=warn,
                         quadpts=quadpts, device=device)
    spec = get_model(model)
    check_choice(method, "method", METHODS)
    check_choice(scoring, "scoring", SCORING_METHODS)
    rm = response_matrix(responses, topics=topics, nan_policy=nan_policy, min_systems=2)
    prior = _priors(spec.name, priors)
    screen = _screen_items(rm.values)
    init = fixed = None
    if anchors is not None:
        init, fixed = _anchor_params(anchors, rm.items)
        init, fixed = init[screen.use], fixed[screen.use]
    N, J = rm.values.shape
    chosen = method if method != "auto" else ("jml" if N * J > _JML_CELLS else "em")
    if chosen == "jml" and not spec.jml:
        raise InputError(f"method='jml' supports the 1pl, rasch and 2pl models, not {spec.name!r}; use method='em'")
    est = _estimate(rm.values[:, screen.use], spec, prior, chosen, init, fixed, anchors is not None, scoring,
                    max_iter=max_iter, tol=tol, spacing=spacing, device=device, full_se=full_se,
                    cells=N * J * 200.0)
    result = _assemble(rm, spec, chosen, scoring, screen, est, fixed, anchored=anchors is not None)
    if warn:
        result.warn_if_needed()
    return result


@dataclass(frozen=True)
class _Screen:
    """Per-item counts of a 0/1 matrix and which items can be fitted (not constant)."""

    obs: np.ndarray
    n_item: np.ndarray
    right: np.ndarray
    constant: np.ndarray

    @property
    def use(self) -> np.ndarray:
        return ~self.constant


def _screen_items(values: np.ndarray) -> _Screen:
    obs = ~np.isnan(values)
    n_item = obs.sum(axis=0)
    right = np.where(obs, values, 0.0).sum(axis=0)
    constant = (right == 0) | (right == n_item)
    if (~constant).sum() < 2:
        raise InputError(f"responses: fewer than 2 items have both right and wrong answers "
                         f"({int(constant.sum())} of {values.shape[1]} are constant or unanswered); nothing to fit")
    return _Screen(obs, n_item, right, constant)


@dataclass(frozen=True)
class _Estimate:
    res: Any
    cov: np.ndarray
    free: np.ndarray
    abilities: AbilityEstimates
    infit: np.ndarray
    outfit: np.ndarray


def _estimate(work: np.ndarray, spec, prior: Priors, chosen: str, init, fixed, estimate_latent: bool, scoring: str,
              *, max_iter: int, tol: float | None, spacing: float | None, device: str | None,
              full_se: bool | None, cells: float) -> _Estimate:
    """Item estimates, their covariance, abilities and infit/outfit on the fitted items ``work``."""
    N = work.shape[0]
    with blas_limit(cells):
        ops = _make_ops(work, device)
        if chosen == "em":
            res = fit_em(ops, spec, priors=prior, fixed=fixed, init=init, estimate_latent=estimate_latent,
                         max_iter=max_iter, tol=1e-5 if tol is None else tol, spacing=spacing)
        else:
            res = fit_jml(ops, work, spec, priors=prior, max_iter=max_iter, tol=1e-4 if tol is None else tol,
                          fixed=fixed, init=init)
        free = np.tile(spec.free_mask, (work.shape[1], 1))
        if fixed is not None:
            free &= ~fixed
        _, prior_h = prior.grad_info(res.params)
        cov = item_covariance(ops, res.params, res.grid, res.posterior, free, common_slope=spec.common_slope,
                              full=full_se, prior_info=np.where(free, prior_h, 0.0))
        eap = res.posterior.post @ res.grid.theta
        if scoring == "eap":  # the final E-step already holds every posterior
            sd = np.sqrt(np.maximum(res.posterior.post @ res.grid.theta**2 - eap**2, 0.0))
            est = AbilityEstimates(eap, sd, np.ones(N, dtype=bool), (~np.isnan(work)).sum(axis=1))
        else:
            est = score_abilities(work, res.params, method=scoring, mu=res.grid.mu, sigma=res.grid.sigma)
        infit, outfit = infit_outfit(work, res.params, eap)
    return _Estimate(res, cov, free, est, infit, outfit)


def _assemble(rm: ResponseMatrix, spec, chosen: str, scoring: str, screen: _Screen, est: _Estimate, fixed,
              *, anchored: bool) -> IRTFit:
    """The :class:`IRTFit`: fitted items back among the constant ones, reported on the model's scale."""
    J, use, res = len(rm.items), screen.use, est.res
    params = np.full((J, 4), np.nan)
    params[use] = res.params
    se_full = np.full((J, 4), np.nan)
    se_full[use] = standard_errors(est.cov)
    cov_ad = np.full(J, np.nan)
    cov_ad[use] = np.nan_to_num(est.cov[:, 0, 1]) if spec.common_slope else est.cov[:, 0, 1]
    fit_stats = np.full((J, 2), np.nan)
    fit_stats[use] = np.column_stack([est.infit, est.outfit])
    if fixed is not None:
        fixed_full = np.zeros((J, 4), dtype=bool)
        fixed_full[use] = fixed
        se_full[fixed_full] = 0.0
        cov_ad[fixed_full[:, 0]] = 0.0
    scale = float(params[use][0, 0]) if spec.rasch_scale else 1.0
    items = _items_table(rm, spec, params, se_full, cov_ad, screen.n_item, screen.right, screen.constant,
                         fit_stats, scale)
    answered = screen.obs.sum(axis=1)
    accuracy = np.where(screen.obs, rm.values, 0.0).sum(axis=1) / np.maximum(answered, 1)
    ab = est.abilities
    abilities = pd.DataFrame({"theta": ab.theta * scale, "se": ab.se * scale, "n": ab.n_answered,
                              "accuracy": np.where(answered > 0, accuracy, np.nan)},
                             index=pd.Index(rm.systems, name="system"))
    n_params = int(est.free.sum()) + (1 if spec.common_slope else 0) + (2 if anchored else 0)
    return IRTFit(model=spec.name, method=chosen, items=items, abilities=abilities,
                  loglik=res.posterior.loglik, n_params=n_params, n_obs=len(rm.systems), converged=res.converged,
                  n_iter=res.n_iter, message=res.message, scoring=scoring, latent_mean=res.grid.mu,
                  latent_sd=res.grid.sigma * scale, history=tuple(res.history), params=params, theta_scale=scale)


def _fit_poly(responses, model, *, method, scoring, topics, anchors, priors, max_iter, tol, nan_policy,
              warn, quadpts, device):
    if method not in ("auto", "em"):
        raise InputError(f"method: the polytomous models are fitted by 'em' only, got {method!r}")
    if scoring != "eap":
        raise InputError(f"scoring: the polytomous models support 'eap' scoring only, got {scoring!r}")
    if anchors is not None:
        raise InputError("anchors: linking to fixed item parameters is supported by the dichotomous models "
                         "(1pl, rasch, 2pl, 3pl, 4pl) only, not by grm/gpcm/pcm/rsm")
    if device is not None:
        raise InputError(f"device={device!r}: the polytomous models (grm, gpcm, pcm, rsm, mixed) run on the NumPy "
                         "path only; device='cpu'|'cuda' is supported by the dichotomous models (1pl, rasch, 2pl, "
                         "3pl, 4pl)")
    given = dict(priors or {}) if not isinstance(priors, Priors) else {"a": priors.a}
    if set(given) - {"a"} and any(v is not None for k, v in given.items() if k != "a"):
        raise InputError(f"priors: the polytomous models take only a prior on 'a', got {sorted(given)}")
    rm = response_matrix(responses, topics=topics, nan_policy=nan_policy, min_systems=2, ordinal=True)
    cells = float(np.nansum(np.nanmax(rm.values, axis=0) + 1)) * rm.values.shape[0] * 100.0
    with blas_limit(cells):
        return fit_poly(rm, model, max_iter=max(max_iter, 2000) if max_iter == 500 else max_iter, tol=tol,
                        quadpts=quadpts, prior_a=given.get("a"), warn=warn)


def _items_table(rm: ResponseMatrix, spec, params, se, cov_ad, n_item, right, constant, fit_stats,
                 scale) -> pd.DataFrame:
    a, d = params[:, 0], params[:, 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        b = -d / a
        se_b = se_of_b(a, d, se[:, 0] ** 2, se[:, 1] ** 2, cov_ad)
    cols: dict[str, Any] = {}
    if spec.rasch_scale:
        cols.update(a=np.where(constant, np.nan, 1.0), b=-d, d=d)
        cols.update(se_a=np.where(constant, np.nan, 0.0), se_b=se[:, 1], se_d=se[:, 1])
    else:
        cols.update(a=a, b=b, d=d, se_a=se[:, 0], se_b=se_b, se_d=se[:, 1])
    if "c" in spec.free:
        cols.update(c=params[:, 2], se_c=se[:, 2])
    if "u" in spec.free:
        cols.update(u=params[:, 3], se_u=se[:, 3])
    cols.update(n=n_item.astype(int), p=right / np.maximum(n_item, 1), infit=fit_stats[:, 0],
                outfit=fit_stats[:, 1])
    flag = np.full(len(a), "", dtype=object)
    flag[(np.abs(b) > 6) | (np.abs(a) > 6)] = "extreme"
    flag[a < 0] = "negative_slope"
    flag[constant] = "constant"
    cols["flag"] = flag
    return pd.DataFrame(cols, index=pd.Index(rm.items, name="item"))


@dataclass(frozen=True)
class TopicFit:
    """One model per topic (MedIRT style) and the systems' topic-wise ability profiles.

    Attributes
    ----------
    fits : dict
        Topic -> :class:`IRTFit`.
    profiles : DataFrame
        Long table: ``system``, ``topic``, ``theta``, ``se``.
    """

    fits: dict
    profiles: pd.DataFrame

    @property
    def converged(self) -> bool:
        return all(f.converged for f in self.fits.values())

    def wide(self, value: str = "theta") -> pd.DataFrame:
        """Systems x topics table of ``value`` (``theta`` or ``se``)."""
        return self.profiles.pivot(index="system", columns="topic", values=value)


def fit_by_topic(responses: Any, model: str = "2pl", *, topics: Any = None, **options: Any) -> TopicFit:
    """Fit one model per topic (items grouped by their ``topic``); see :func:`fit`.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(1)
    >>> y = (rng.random((300, 12)) < 0.6).astype(float)
    >>> y[:150] = (rng.random((150, 12)) < 0.8)
    >>> tf = fit_by_topic(pd.DataFrame(y), "1pl", topics={i: "ab"[i % 2] for i in range(12)}, warn=False)
    >>> sorted(tf.fits), tf.wide().shape
    (['a', 'b'], (300, 2))
    """
    rm = response_matrix(responses, topics=topics, nan_policy=options.pop("nan_policy", "raise"),
                         ordinal=is_poly_model(model))
    if rm.topics is None:
        raise InputError("fit_by_topic: no topics; pass a long table with a 'topic' column or topics={item: topic}")
    fits = {}
    frames = []
    for topic in pd.unique(rm.topics.to_numpy()):
        cols = np.flatnonzero((rm.topics == topic).to_numpy())
        sub = ResponseMatrix(rm.values[:, cols], rm.systems, rm.items[cols])
        fits[topic] = fit(sub, model, **options)
        ab = fits[topic].abilities[["theta", "se"]].reset_index()
        ab.insert(1, "topic", topic)
        frames.append(ab)
    return TopicFit(fits, pd.concat(frames, ignore_index=True))


def score(responses: Any, items: pd.DataFrame, *, method: str = "eap", mu: float = 0.0,
          sigma: float = 1.0) -> pd.DataFrame:
    """Abilities of systems against a table of fixed item parameters (e.g. a saved fit).

    ``items`` is indexed by item (or has an ``item`` column) with ``a`` and ``b`` (and
    optionally ``c``, ``u``), as printed by ``scorebench irt fit`` (``-o items.csv`` saves it). Items the
    responses lack count as not answered; responses to unknown items raise. A polytomous items
    table (``model``, ``n_cat``, ``a``, ``d1..dK``, from a grm/gpcm/pcm/rsm or mixed fit) is
    scored by EAP (:func:`scorebench.irt.polyscore.score_poly`; ``sigma`` = the fit's
    ``latent_sd`` for pcm/rsm fits).

    Examples
    --------
    >>> import pandas as pd
    >>> items = pd.DataFrame({"a": [1.0, 1.0], "b": [0.0, 0.0]}, index=["q1", "q2"])
    >>> score(pd.DataFrame({"q1": [1.0], "q2": [0.0]}), items, method="map")["theta"].round(6).tolist()
    [0.0]
    """
    from scorebench.irt.polyscore import is_poly_items, score_poly

    if isinstance(items, pd.DataFrame) and is_poly_items(items):
        return score_poly(responses, items, method=method, mu=mu, sigma=sigma)
    check_choice(method, "method", SCORING_METHODS)
    table = items.set_index("item") if "item" in items.columns else items
    init, _ = _anchor_params(table, pd.Index(table.index))
    rm = response_matrix(responses)
    unknown = [i for i in rm.items if i not in table.index]
    if unknown:
        raise InputError(f"responses: item(s) {unknown[:5]} have no parameters in the items table")
    values = np.full((len(rm.systems), len(table)), np.nan)
    values[:, table.index.get_indexer(rm.items)] = rm.values
    est = score_abilities(values, init, method=method, mu=mu, sigma=sigma)
    return pd.DataFrame({"theta": est.theta, "se": est.se, "n": est.n_answered},
                        index=pd.Index(rm.systems, name="system"))
