r"""Ties modelled, not halved: the Davidson and Rao–Kupper extensions of Bradley–Terry.

About 30% of Chatbot Arena battles are ties. Bradley–Terry has no tie outcome, so the usual
fix counts a tie as half a win each way (``bradley_terry``, which stays available). The two
classical models below give a tie its own probability, governed by one tie parameter, with
strengths :math:`\pi_i = e^{\theta_i}` and :math:`d = \theta_a - \theta_b`:

**Davidson (1970)**, tie parameter :math:`\nu \ge 0`:

.. math::
    P(a) = \frac{\pi_a}{\pi_a + \pi_b + \nu\sqrt{\pi_a\pi_b}},\quad
    P(\text{tie}) = \frac{\nu\sqrt{\pi_a\pi_b}}{\pi_a + \pi_b + \nu\sqrt{\pi_a\pi_b}}

(at :math:`d = 0` the tie probability is :math:`\nu/(2 + \nu)`).

**Rao–Kupper (1967)**, tie parameter :math:`\vartheta \ge 1`:

.. math::
    P(a) = \frac{\pi_a}{\pi_a + \vartheta\pi_b} = \sigma(d - \log\vartheta),\quad
    P(\text{tie}) = \frac{(\vartheta^2 - 1)\pi_a\pi_b}{(\pi_a + \vartheta\pi_b)(\pi_b + \vartheta\pi_a)}

Both are fitted by maximum (weighted) likelihood with Fisher scoring on the deduplicated
(pair, outcome) counts; :math:`\theta` is centred, the tie parameter is estimated on an
unconstrained scale (:math:`\log\nu`; :math:`\log\log\vartheta`) and its interval mapped back.
Intervals are sandwich intervals :math:`I^{-1} G I^{-1}` (expected information :math:`I`, outer
products of the per-battle scores :math:`G`), valid under per-battle weights.

References: Davidson, R. R. (1970), On extending the Bradley–Terry model to accommodate ties in
paired comparison experiments, JASA 65(329); Rao, P. V. & Kupper, L. L. (1967), Ties in
paired-comparison experiments: a generalization of the Bradley–Terry model, JASA 62(317).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from scorebench.core.lazy import lazy_attr
from scorebench.core.errors import ConvergenceError, InputError
from scorebench.core.validation import check_level
from scorebench.aggregate.input import Battles, battles_from_matrix
from scorebench.aggregate.pair_counts import PairCounts, ipw_weights, laplacian, normal_bounds, pair_counts
from scorebench.aggregate.pairwise import bt_fit, to_elo_scale
from scorebench.aggregate.registry import MethodResult, register_intervals, register_method

expit = lazy_attr("scipy.special", "expit")
log_expit = lazy_attr("scipy.special", "log_expit")

__all__ = ["TieModel", "TieFit", "TIE_MODELS", "fit_tie_model", "tie_model_probabilities",
           "bradley_terry_davidson", "bradley_terry_rao_kupper"]


@dataclass(frozen=True)
class TieModel:
    """One tie model: log-probabilities and per-outcome scores as functions of (d, tau).

    ``logp(d, tau)`` returns the log-probabilities of (a wins, b wins, tie), each shaped like
    ``d``; ``scores(d, tau)`` the derivatives of each with respect to ``d`` and ``tau``, shape
    ``(3, 2, len(d))``; ``param(tau)`` is the reported tie parameter.
    """

    name: str
    parameter: str
    logp: Callable[[np.ndarray, float], np.ndarray]
    scores: Callable[[np.ndarray, float], np.ndarray]
    param: Callable[[float], float]
    citation: str


def _davidson_logp(d: np.ndarray, tau: float) -> np.ndarray:
    h = d / 2.0
    log_z = np.logaddexp(np.logaddexp(h, -h), tau)
    return np.stack([h - log_z, -h - log_z, tau - log_z])


def _davidson_scores(d: np.ndarray, tau: float) -> np.ndarray:
    pa, pb, pt = np.exp(_davidson_logp(d, tau))
    half = (pa - pb) / 2.0
    return np.stack([np.stack([0.5 - half, -pt]), np.stack([-0.5 - half, -pt]), np.stack([-half, 1.0 - pt])])


def _rk_logp(d: np.ndarray, tau: float) -> np.ndarray:
    eta = np.exp(tau)  # log(vartheta) > 0
    log_tie = 2.0 * eta + np.log(-np.expm1(-2.0 * eta)) - np.logaddexp(d / 2.0, eta - d / 2.0) - np.logaddexp(-d / 2.0, eta + d / 2.0)
    return np.stack([log_expit(d - eta), log_expit(-d - eta), log_tie])


def _rk_scores(d: np.ndarray, tau: float) -> np.ndarray:
    eta = np.exp(tau)
    pa, pb = expit(d - eta), expit(-d - eta)
    ratio = 2.0 / -np.expm1(-2.0 * eta)  # 2 e^{2η} / (e^{2η} - 1)
    d_eta = np.stack([-(1.0 - pa), -(1.0 - pb), ratio - (1.0 - pa) - (1.0 - pb)]) * eta  # chain rule: dη/dτ = η
    d_d = np.stack([1.0 - pa, -(1.0 - pb), pb - pa])
    return np.stack([d_d, d_eta], axis=1)


TIE_MODELS = {
    "davidson": TieModel("davidson", "nu", _davidson_logp, _davidson_scores, lambda t: float(np.exp(t)),
                         "Davidson (1970), JASA 65(329)"),
    "rao_kupper": TieModel("rao_kupper", "tie_theta", _rk_logp, _rk_scores, lambda t: float(np.exp(np.exp(t))),
                           "Rao & Kupper (1967), JASA 62(317)"),
}

_OUTCOME_INDEX = {1.0: 0, 0.0: 1, 0.5: 2}


@dataclass(frozen=True)
class TieFit:
    """A fitted tie model: centred strengths, the tie parameter and the sandwich covariance.

    ``cov`` is the covariance of ``(theta, tau)`` (tau: the unconstrained tie parameter);
    ``tie_parameter`` = ``model.param(tau)`` with interval ``tie_low``/``tie_high``.
    """

    model: TieModel
    theta: np.ndarray
    tau: float
    cov: np.ndarray
    loglik: float
    tie_low: float
    tie_high: float

    @property
    def tie_parameter(self) -> float:
        return self.model.param(self.tau)


def _outcome_rows(pc: PairCounts) -> np.ndarray:
    idx = np.full(len(pc.outcome), -1)
    for value, k in _OUTCOME_INDEX.items():
        idx[pc.outcome == value] = k
    if (idx < 0).any():
        bad = sorted(set(pc.outcome[idx < 0].tolist()))
        raise InputError(f"tie models: outcomes must be a win, a loss or a tie (1, 0, 0.5); got {bad[:5]}")
    return idx


def _products(pc: PairCounts, s_d: np.ndarray, s_t: np.ndarray, v: np.ndarray) -> np.ndarray:
    """:math:`\\sum_c v_c z_c z_c^\\top` with :math:`z_c = (s_d (e_a - e_b), s_t)`."""
    n = pc.n_systems
    out = np.empty((n + 1, n + 1))
    out[:n, :n] = laplacian(n, pc.a, pc.b, v * s_d * s_d)
    cross = np.bincount(pc.a, v * s_d * s_t, n) - np.bincount(pc.b, v * s_d * s_t, n)
    out[:n, n] = out[n, :n] = cross
    out[n, n] = float((v * s_t * s_t).sum())
    return out


def _information(model: TieModel, pc: PairCounts, theta: np.ndarray, tau: float) -> np.ndarray:
    d = theta[pc.a] - theta[pc.b]
    probs = np.exp(model.logp(d, tau))
    sc = model.scores(d, tau)
    return sum(_products(pc, sc[k, 0], sc[k, 1], pc.weight * probs[k]) for k in range(3))


_NO_MLE = ("tie model {model!r}: the maximum-likelihood estimate does not exist on these battles (the strengths "
           "or the tie parameter diverge: too few battles, or a system that never loses or never wins); use "
           "bradley_terry (ties as half wins, with prior=<lambda> if needed) or add battles")


def fit_tie_model(battles: Battles, model: str = "davidson", *, tol: float = 1e-10, max_iter: int = 500,
                  ci: float = 0.95) -> TieFit:
    """Fit a tie model (``"davidson"`` or ``"rao_kupper"``) to battles by Fisher scoring.

    Examples
    --------
    >>> import pandas as pd
    >>> from scorebench.aggregate.input import as_battles
    >>> b = as_battles(pd.DataFrame({"a": ["x"] * 8, "b": ["y"] * 8, "winner": ["a"] * 3 + ["b"] * 3 + ["tie"] * 2}))
    >>> fit = fit_tie_model(b, "davidson")
    >>> round(fit.tie_parameter, 6)   # equal strengths: P(tie) = nu / (2 + nu) = 1/4
    0.666667
    """
    if model not in TIE_MODELS:
        raise InputError(f"tie model {model!r}: expected one of {sorted(TIE_MODELS)}")
    check_level(ci, "ci")
    tm = TIE_MODELS[model]
    pc = pair_counts(battles)
    k = _outcome_rows(pc)
    n = pc.n_systems
    ties = float(pc.weight[k == 2].sum())
    total = float(pc.weight.sum())
    if ties <= 0 or ties >= total:
        raise InputError(f"tie models: the tie parameter needs both ties and decisive battles; "
                         f"{ties:g} of {total:g} (weighted) battles are ties")
    decisive = Battles(pc.systems, pc.a, pc.b, pc.outcome, pc.weight * (k != 2))
    theta = bt_fit(pair_counts(decisive).wins(), prior=0.01, tol=1e-8)  # a start; exists even if some never lose
    theta -= theta.mean()
    share = ties / total
    tau = float(np.log(2.0 * share / (1.0 - share))) if model == "davidson" else float(np.log(max(share, 0.05)))
    lift = np.zeros((n + 1, n + 1))
    lift[:n, :n] = 1.0 / n
    rows = np.arange(len(k))

    def loglik(th: np.ndarray, t: float) -> float:
        return float((pc.weight * tm.logp(th[pc.a] - th[pc.b], t)[k, rows]).sum())

    current = loglik(theta, tau)
    for _ in range(max_iter):
        d = theta[pc.a] - theta[pc.b]
        sc = tm.scores(d, tau)[k, :, rows]  # (cells, 2): score of each cell's observed outcome
        r = pc.weight * sc[:, 0]
        grad = np.concatenate([np.bincount(pc.a, r, n) - np.bincount(pc.b, r, n), [(pc.weight * sc[:, 1]).sum()]])
        info = _information(tm, pc, theta, tau) + lift * max(1.0, total / n)
        try:
            step = np.linalg.solve(info, grad)
        except np.linalg.LinAlgError:
            raise ConvergenceError(_NO_MLE.format(model=model)) from None
        scale = 1.0
        while scale > 1e-6:  # step halving keeps every iterate an ascent step
            th_new = theta + scale * step[:n]
            th_new -= th_new.mean()
            t_new = tau + scale * step[n]
            new = loglik(th_new, t_new)
            if np.isfinite(new) and new >= current - 1e-12 * abs(current):
                break
            scale /= 2.0
        theta, tau, current = th_new, t_new, new
        if np.abs(theta).max() > 50.0 or abs(tau) > 50.0 or not np.isfinite(current):
            raise ConvergenceError(_NO_MLE.format(model=model))
        if np.abs(scale * step).max() < tol:
            break
    else:
        raise ConvergenceError(f"tie model {model!r}: Fisher scoring did not converge in {max_iter} iterations "
                               "(a system that never loses or never wins has no finite strength)")
    d = theta[pc.a] - theta[pc.b]
    sc = tm.scores(d, tau)[k, :, rows]
    info = _information(tm, pc, theta, tau)
    meat = _products(pc, sc[:, 0], sc[:, 1], pc.weight_sq)
    info[:n, :n] += np.trace(info[:n, :n]) / n / n  # the shift direction: exact lift (meat annihilates it)
    inv = np.linalg.inv(info)
    cov = inv @ meat @ inv
    cov = (cov + cov.T) / 2.0
    lo, hi = normal_bounds(np.array([tau]), np.sqrt(np.array([max(cov[n, n], 0.0)])), ci)
    return TieFit(tm, theta, tau, cov, current, tm.param(float(lo[0])), tm.param(float(hi[0])))


def tie_model_probabilities(model: str, d: np.ndarray, tie_parameter: float) -> np.ndarray:
    """P(a wins), P(b wins), P(tie) at log-strength differences ``d``, shape (3, len(d)).

    Examples
    --------
    >>> np.round(tie_model_probabilities("davidson", np.array([0.0]), 2.0)[:, 0], 3).tolist()
    [0.25, 0.25, 0.5]
    """
    if model not in TIE_MODELS:
        raise InputError(f"tie model {model!r}: expected one of {sorted(TIE_MODELS)}")
    tau = float(np.log(tie_parameter)) if model == "davidson" else float(np.log(np.log(tie_parameter)))
    return np.exp(TIE_MODELS[model].logp(np.asarray(d, dtype=np.float64), tau))


def _battles(data: Battles, reweight: bool, min_pair_count: float) -> Battles:
    if not isinstance(reweight, (bool, np.bool_)):
        raise InputError(f"reweight: expected true or false, got {reweight!r}")
    b = data if isinstance(data, Battles) else battles_from_matrix(data)
    return ipw_weights(b, min_pair_count=min_pair_count) if reweight else b


def _fit(data: Battles, model: str, reweight: bool, min_pair_count: float) -> tuple[TieFit, Battles]:
    """The tie model fitted to the checked (optionally IPW-reweighted) battles, and those battles."""
    b = _battles(data, reweight, min_pair_count)
    return fit_tie_model(b, model), b


def _result(fit: TieFit, b: Battles, scale: float, base: float, init: float) -> MethodResult:
    return MethodResult(to_elo_scale(fit.theta, scale=scale, base=base, init=init),
                        {"theta": fit.theta, "tie_model": fit.model.name, fit.model.parameter: fit.tie_parameter,
                         "tie_parameter": fit.tie_parameter, "tie_parameter_ci": (fit.tie_low, fit.tie_high),
                         "loglik": fit.loglik, "n_battles": len(b.a)})


def _cov(fit: TieFit, b: Battles, scale: float, base: float, init: float) -> tuple[np.ndarray, np.ndarray]:
    n = b.n_systems
    unit = to_elo_scale(1.0, scale=scale, base=base, init=0.0)
    return to_elo_scale(fit.theta, scale=scale, base=base, init=init), unit ** 2 * fit.cov[:n, :n]


_MISSING = "battles are only between systems scored on the same column; missing pairs are skipped"


@register_method("bradley_terry_davidson", family="pairwise", accepts=("battles",), missing=_MISSING,
                 citation=TIE_MODELS["davidson"].citation)
def bradley_terry_davidson(data: Battles, *, scale: float = 400.0, base: float = 10.0, init: float = 1000.0,
                           reweight: bool = False, min_pair_count: float = 50.0) -> MethodResult:
    r"""Bradley–Terry with Davidson's tie model (ties are an outcome with parameter ν), Elo scale.

    ``details`` holds ``nu`` (= ``tie_parameter``) and its sandwich interval ``tie_parameter_ci``.
    See :mod:`scorebench.aggregate.tie_models`.

    Examples
    --------
    Six battles of ``x`` against ``y``: three wins, one loss, two ties. The fit is saturated:
    the strength ratio is wins to losses, 3 (400 log10 3 Elo points), and
    :math:`\nu = P(\text{tie}) / \sqrt{P(a) P(b)} = 2/\sqrt{3}`:

    >>> from scorebench.aggregate import as_battles
    >>> b = as_battles({"a": ["x"] * 6, "b": ["y"] * 6, "winner": ["a", "a", "a", "b", "tie", "tie"]})
    >>> r = bradley_terry_davidson(b)
    >>> round(float(r.scores[0] - r.scores[1]), 2), round(r.details["nu"], 4)
    (190.85, 1.1547)
    """
    return _result(*_fit(data, "davidson", reweight, min_pair_count), scale, base, init)


@register_method("bradley_terry_rao_kupper", family="pairwise", accepts=("battles",), missing=_MISSING,
                 citation=TIE_MODELS["rao_kupper"].citation)
def bradley_terry_rao_kupper(data: Battles, *, scale: float = 400.0, base: float = 10.0, init: float = 1000.0,
                             reweight: bool = False, min_pair_count: float = 50.0) -> MethodResult:
    r"""Bradley–Terry with the Rao–Kupper tie model (threshold ϑ ≥ 1 on the strength ratio), Elo scale.

    ``details`` holds ``tie_theta`` (ϑ, also ``tie_parameter``) and its interval ``tie_parameter_ci``.

    Examples
    --------
    On :func:`bradley_terry_davidson`'s six battles (three wins, one loss, two ties) the fit
    is saturated too, but the two models read the ties differently: here
    :math:`P(a) = \pi_a / (\pi_a + \vartheta\pi_b) = 1/2` and :math:`P(b) = 1/6` give
    :math:`\vartheta = \sqrt 5` and the strength ratio :math:`\sqrt 5` (400 log10 √5 Elo
    points), not Davidson's 3. The fitted model gives back the observed shares 3/6, 1/6, 2/6:

    >>> from scorebench.aggregate import as_battles
    >>> r = bradley_terry_rao_kupper(as_battles({"a": ["x"] * 6, "b": ["y"] * 6,
    ...                                          "winner": ["a", "a", "a", "b", "tie", "tie"]}))
    >>> round(float(r.scores[0] - r.scores[1]), 2), round(r.details["tie_theta"], 3)
    (139.79, 2.236)
    >>> d = r.details["theta"][:1] - r.details["theta"][1:]
    >>> np.round(tie_model_probabilities("rao_kupper", d, r.details["tie_theta"]), 4).ravel().tolist()
    [0.5, 0.1667, 0.3333]
    """
    return _result(*_fit(data, "rao_kupper", reweight, min_pair_count), scale, base, init)


def _sandwich(model: str, label: str) -> Callable[..., tuple[np.ndarray, np.ndarray]]:
    """The covariance function of the method fitting tie model ``model`` (its default intervals)."""

    def sandwich(data: Battles, *, scale: float = 400.0, base: float = 10.0, init: float = 1000.0,
                 reweight: bool = False, min_pair_count: float = 50.0) -> tuple[np.ndarray, np.ndarray]:
        return _cov(*_fit(data, model, reweight, min_pair_count), scale, base, init)

    sandwich.__name__ = sandwich.__qualname__ = f"bradley_terry_{model}_sandwich"
    sandwich.__doc__ = f"{label} ratings and their sandwich covariance on the Elo scale."
    return sandwich


bradley_terry_davidson_sandwich = register_intervals("bradley_terry_davidson")(_sandwich("davidson", "Davidson"))
bradley_terry_rao_kupper_sandwich = register_intervals("bradley_terry_rao_kupper")(_sandwich("rao_kupper", "Rao–Kupper"))
