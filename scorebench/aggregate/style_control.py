r"""Arena ratings with style control: Bradley–Terry with style covariates fitted jointly.

Chatbot Arena's style control (Chiang et al., 2024; LMSYS blog "Does style matter?", 2024)
explains each battle's outcome by the two models' strengths *and* the difference in the
style of their two answers:

.. math::
    P(a \succ b) = \sigma\bigl(\ln(\beta)\,(r_a - r_b) + x_{ab}^\top \gamma\bigr),\qquad
    x_{ab,f} = \frac{z_f - \bar z_f}{\operatorname{sd}(z_f)},\quad
    z_f = \frac{f_a - f_b}{f_a + f_b + 1}

for the style features :math:`f` (FastChat's ``STYLE_CONTROL_ELEMENTS_V1``: answer length
in tokens and the counts of markdown headers, list items and bold spans), standardised
over the battles (population standard deviation). Strengths :math:`r` and coefficients
:math:`\gamma` minimise the soft-label log loss (a tie is half a win each way) plus the ridge
penalty :math:`\tfrac{\lambda}{2}\lVert(r, \gamma)\rVert^2` (``reg`` :math:`\lambda = 0.5`, FastChat's
default), by L-BFGS. Ratings are :math:`R = R_0 + s\,r` (``init`` :math:`R_0 = 1000`,
``scale`` :math:`s = 400`, ``base`` :math:`\beta = 10`), shifted so that an ``anchor`` model,
if given, sits at ``anchor_rating``. "Rank Δ (style)" compares with the plain
Bradley–Terry ratings without covariates: positive when a model rises once style is
controlled. The plain ratings are FastChat's unpenalised maximum-likelihood fit
(``compute_mle_elo``: ``LogisticRegression(penalty=None)``), as :func:`bt_fit` with no
prior computes it; only when that fit does not exist (a model that never loses, or never
wins, along a chain of battles) do they keep the ``reg`` ridge.

The Arena rank of a model is 1 + the number of models whose interval's lower bound
exceeds its upper bound (:attr:`StyleControl.arena_rank`, ``Ranking.rank_ub``).

Reference: Chiang, W.-L. et al. (2024). Chatbot Arena: An Open Platform for Evaluating
LLMs by Human Preference. ICML. Li, T. et al. (2024). Does Style Matter? Disentangling
style and substance in Chatbot Arena (lmsys.org blog); FastChat
``fastchat/serve/monitor/rating_systems.py::compute_style_control``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import ConvergenceError, InputError
from scorebench.core.stats import interval_bounds, rng_for
from scorebench.core.validation import check_level, check_positive_int
from scorebench.aggregate.input import as_battles
from scorebench.aggregate.pairwise import bt_fit
from scorebench.aggregate.ranking import competition_ranks
from scorebench.aggregate.registry import MethodResult, register_bootstrap, register_method
from scorebench.aggregate.style_cells import resample_cell_weights, style_cells
from scorebench.core.lazy import lazy_attr

minimize = lazy_attr("scipy.optimize", "minimize")
expit = lazy_attr("scipy.special", "expit")
log_expit = lazy_attr("scipy.special", "log_expit")

__all__ = ["style_control", "StyleControl", "style_features", "filter_battles", "fit_contextual_bt", "bradley_terry_style",
           "STYLE_V1"]

STYLE_V1 = ("sum_assistant_tokens", "header_count", "list_count", "bold_count")
_CITE = ("Chiang et al. (2024), Chatbot Arena, ICML; Li et al. (2024), Does Style Matter? (LMSYS blog); "
         "FastChat rating_systems.compute_style_control")


def _paired_style_columns(columns: list[str]) -> dict[str, tuple[str, str]]:
    """``style_<x>_a<y>`` / ``style_<x>_b<y>`` column pairs, keyed by the feature name ``<x><y>``."""
    out = {}
    for col in columns:
        if not isinstance(col, str) or not col.startswith("style_"):
            continue
        name = col[6:]
        if name.endswith("_a"):
            feature, partner = name[:-2], name[:-2] + "_b"
        elif "_a_" in name:
            feature, partner = name.replace("_a_", "_", 1), name.replace("_a_", "_b_", 1)
        else:
            continue
        if f"style_{partner}" in columns:
            out[feature] = (col, f"style_{partner}")
    return out


def style_features(table: pd.DataFrame, features: Any = "v1") -> tuple[np.ndarray, tuple[str, ...], np.ndarray,
                                                                          np.ndarray]:
    r"""Standardised style features of each battle, shape (N, k), their names, means and sds.

    ``features``: ``"v1"`` (FastChat's length, headers, lists, bold), ``"all"`` (every paired
    ``style_*_a``/``style_*_b`` column) or a list of feature names. Columns follow the arena
    reader's names (``style_sum_assistant_a_tokens``, ``style_header_count_a``, ...).
    """
    pairs = _paired_style_columns(list(table.columns))
    if isinstance(features, str) and features == "v1":
        names = STYLE_V1
    elif isinstance(features, str) and features == "all":
        names = tuple(sorted(pairs))
    elif isinstance(features, str):
        names = tuple(f.strip() for f in features.split(",") if f.strip())
    else:
        names = tuple(features)
    missing = [f for f in names if f not in pairs]
    if missing or not names:
        raise InputError(f"style features {missing or 'none'}: expected paired columns style_<feature>_a / "
                         f"style_<feature>_b (or style_<x>_a_<y> / style_<x>_b_<y>); paired features found: "
                         f"{sorted(pairs) or 'none'}")
    z = np.empty((len(table), len(names)))
    for j, name in enumerate(names):
        a = pd.to_numeric(table[pairs[name][0]], errors="coerce").to_numpy(dtype=np.float64)
        b = pd.to_numeric(table[pairs[name][1]], errors="coerce").to_numpy(dtype=np.float64)
        bad = ~np.isfinite(a) | ~np.isfinite(b) | (a < 0) | (b < 0)
        if bad.any():
            raise InputError(f"style feature {name!r}: missing, negative or non-numeric counts in "
                             f"{int(bad.sum())} battle(s) (columns {pairs[name]}); expected counts >= 0")
        z[:, j] = (a - b) / (a + b + 1.0)
    mean = z.mean(axis=0)
    sd = z.std(axis=0)
    flat = sd == 0
    if flat.any():
        raise InputError(f"style feature(s) {[n for n, f in zip(names, flat) if f]} do not vary between battles, "
                         "so their effect cannot be estimated; leave them out with features=...")
    return (z - mean) / sd, names, mean, sd


def _objective(params: np.ndarray, a: np.ndarray, b: np.ndarray, X: np.ndarray, y: np.ndarray, w: np.ndarray,
               n: int, alpha: float, reg: float) -> tuple[float, np.ndarray]:
    r = params[:n]
    logit = alpha * (r[a] - r[b]) + X @ params[n:]
    loss = -(w * (y * log_expit(logit) + (1.0 - y) * log_expit(-logit))).sum() + 0.5 * reg * params @ params
    err = w * (y - expit(logit))
    grad = reg * params
    grad[:n] -= alpha * (np.bincount(a, err, n) - np.bincount(b, err, n))
    grad[n:] -= X.T @ err
    return float(loss), grad


def fit_contextual_bt(a: np.ndarray, b: np.ndarray, X: np.ndarray, y: np.ndarray, n: int, *, weights: Any = None,
                      alpha: float = float(np.log(10.0)), reg: float = 0.5, start: Any = None) -> np.ndarray:
    r"""Strengths and style coefficients :math:`(r, \gamma)` minimising the penalised soft log loss (L-BFGS).

    ``a``, ``b``: player indices per battle; ``X``: (N, k) covariates; ``y``: 1 / 0.5 / 0
    outcome for ``a``; ``weights``: battle multiplicities. Returns the vector of length n + k.

    Examples
    --------
    >>> a, b = np.array([0, 0, 1]), np.array([1, 1, 0])
    >>> p = fit_contextual_bt(a, b, np.zeros((3, 0)), np.array([1.0, 1.0, 1.0]), 2, reg=1.0)
    >>> bool(p[0] > 0 > p[1])
    True
    """
    w = np.ones(len(a)) if weights is None else np.asarray(weights, dtype=np.float64)
    x0 = np.zeros(n + X.shape[1]) if start is None else np.asarray(start, dtype=np.float64)
    if reg <= 0 or not np.isfinite(reg):
        raise InputError(f"reg: expected a ridge penalty > 0 (the unpenalised fit need not exist), got {reg!r}")
    res = minimize(_objective, x0, args=(a, b, X, y, w, n, alpha, reg), jac=True, method="L-BFGS-B",
                   options={"maxiter": 20_000, "gtol": 1e-10, "ftol": 1e-15, "maxcor": 30})
    x = res.x
    # L-BFGS stops on a relative decrease of a loss summed over many battles; a few Newton
    # steps (the problem is strictly convex) take the estimate to machine precision.
    for _ in range(8):
        grad = _objective(x, a, b, X, y, w, n, alpha, reg)[1]
        if np.abs(grad).max() < 1e-10 * max(1.0, w.sum()):
            break
        x = x - np.linalg.solve(_hessian(x, a, b, X, w, n, alpha, reg), grad)
    grad = _objective(x, a, b, X, y, w, n, alpha, reg)[1]
    if not np.all(np.isfinite(x)) or np.abs(grad).max() > 1e-6 * max(1.0, w.sum()):
        raise ConvergenceError(f"style control: the fit did not converge ({res.message})")
    return x


def _hessian(params: np.ndarray, a: np.ndarray, b: np.ndarray, X: np.ndarray, w: np.ndarray, n: int,
             alpha: float, reg: float) -> np.ndarray:
    k = X.shape[1]
    p = expit(alpha * (params[a] - params[b]) + X @ params[n:])
    h = w * p * (1.0 - p)
    H = np.zeros((n + k, n + k))
    rr = np.zeros(n * n)
    np.add.at(rr, a * n + b, -h)
    rr = rr.reshape(n, n)
    rr = rr + rr.T
    rr[np.diag_indices(n)] = np.bincount(a, h, n) + np.bincount(b, h, n)
    H[:n, :n] = alpha**2 * rr
    rx = np.zeros((n, k))
    np.add.at(rx, a, h[:, None] * X)
    np.add.at(rx, b, -h[:, None] * X)
    H[:n, n:] = alpha * rx
    H[n:, :n] = alpha * rx.T
    H[n:, n:] = X.T @ (h[:, None] * X)
    return H + reg * np.eye(n + k)


@dataclass(frozen=True)
class _Prepared:
    systems: tuple[str, ...]
    a: np.ndarray
    b: np.ndarray
    y: np.ndarray
    w: np.ndarray
    X: np.ndarray
    features: tuple[str, ...]


def filter_battles(table: pd.DataFrame, anony: bool | None = None, language: Any = None,
                   category: str | None = None) -> pd.DataFrame:
    """The battles kept by the ``anony`` / ``language`` / ``category`` filters (None: no filter).

    Examples
    --------
    >>> t = pd.DataFrame({"a": ["x", "y"], "b": ["y", "x"], "winner": ["a", "b"], "anony": [True, False]})
    >>> len(filter_battles(t, anony=True))
    1
    """
    if not isinstance(table, pd.DataFrame):
        raise InputError(f"style control: expected a battles DataFrame, got {type(table).__name__}")
    keep = np.ones(len(table), dtype=bool)
    for name, value in (("anony", anony), ("language", language)):
        if value is None:
            continue
        if name not in table.columns:
            raise InputError(f"style control: filter {name}={value!r} but the table has no {name!r} column")
        values = {value} if isinstance(value, (str, bool)) else set(value)
        keep &= table[name].isin(values).to_numpy()
    if category is not None:
        if category not in table.columns:
            raise InputError(f"style control: category={category!r} names no boolean column of the table "
                             "(the arena reader's category= option filters a clean_battle file by its tags)")
        keep &= table[category].fillna(False).astype(bool).to_numpy()
    if not keep.any():
        raise InputError(f"style control: no battle left after the filters (anony={anony}, language={language}, "
                         f"category={category})")
    return table.loc[keep].reset_index(drop=True)


def _prepare(table: pd.DataFrame, features: Any, anony: Any, language: Any, category: Any) -> _Prepared:
    table = filter_battles(table, anony, language, category)
    battles = as_battles(table)
    X, names, _, _ = style_features(table, features)
    return _Prepared(battles.systems, battles.a, battles.b, battles.outcome, battles.weight, X, names)


def _to_elo(r: np.ndarray, systems: tuple[str, ...], scale: float, init: float, anchor: str | None,
            anchor_rating: float | None) -> np.ndarray:
    scores = init + scale * r
    if anchor is not None:
        if anchor not in systems:
            raise InputError(f"anchor {anchor!r} is not among the systems ({', '.join(systems[:8])} ...)")
        scores = scores + ((init if anchor_rating is None else anchor_rating) - scores[..., [systems.index(anchor)]])
    return scores


def _check(scale: float, base: float, reg: float) -> float:
    if not (scale > 0 and base > 1 and reg > 0):
        raise InputError(f"style control: expected scale > 0, base > 1 and reg > 0, got scale={scale!r}, "
                         f"base={base!r}, reg={reg!r}")
    return float(np.log(base))


@register_method("bradley_terry_style", family="pairwise", accepts=("table",),
                 missing="battles are only between the models that met; style columns must be complete",
                 citation=_CITE)
def bradley_terry_style(table: pd.DataFrame, *, features: Any = "v1", reg: float = 0.5, scale: float = 400.0,
                        base: float = 10.0, init: float = 1000.0, anchor: str | None = None,
                        anchor_rating: float | None = None, anony: bool | None = None, language: Any = None,
                        category: str | None = None) -> MethodResult:
    r"""Style-controlled Bradley–Terry ratings (Chatbot Arena) from a battles table with style columns.

    .. math:: P(a \succ b) = \sigma\bigl(\ln\beta\,(r_a - r_b) + x_{ab}^\top\gamma\bigr)

    See :mod:`scorebench.aggregate.style_control`. ``details`` holds the style
    ``coefficients``, the ``plain`` ratings without covariates and ``rank_delta``.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"a": ["x", "y", "x", "y"], "b": ["y", "x", "y", "x"], "winner": ["a", "a", "a", "b"],
    ...                   "style_len_a": [300, 100, 250, 90], "style_len_b": [100, 320, 90, 310]})
    >>> r = bradley_terry_style(t, features="len")
    >>> sorted(r.details["coefficients"])
    ['len']
    """
    alpha = _check(scale, base, reg)
    p = _prepare(table, features, anony, language, category)
    n = len(p.systems)
    params = fit_contextual_bt(p.a, p.b, p.X, p.y, n, weights=p.w, alpha=alpha, reg=reg)
    plain = _plain_fit(p, n, alpha, reg)
    scores = _to_elo(params[:n], p.systems, scale, init, anchor, anchor_rating)
    plain_scores = _to_elo(plain, p.systems, scale, init, anchor, anchor_rating)
    delta = competition_ranks(plain_scores) - competition_ranks(scores)
    return MethodResult(scores, {"systems": p.systems, "coefficients": dict(zip(p.features, params[n:].tolist())),
                                 "plain": dict(zip(p.systems, plain_scores.tolist())),
                                 "rank_delta": dict(zip(p.systems, delta.tolist())), "n_battles": len(p.a)})


def _plain_fit(p: _Prepared, n: int, alpha: float, reg: float, weights: np.ndarray | None = None) -> np.ndarray:
    """Plain Bradley–Terry strengths (the ``r`` scale): unpenalised as FastChat's, ridge only if none exists."""
    w = p.w if weights is None else weights
    W = np.zeros((n, n))
    np.add.at(W, (p.a, p.b), w * p.y)
    np.add.at(W, (p.b, p.a), w * (1.0 - p.y))
    try:
        return bt_fit(W, prior=0.0) / alpha
    except InputError:  # no maximum-likelihood estimate: the ridge keeps the ratings finite
        return fit_contextual_bt(p.a, p.b, np.zeros((len(p.a), 0)), p.y, n, weights=w, alpha=alpha, reg=reg)


def _plain_bootstrap(p: _Prepared, n_boot: int, rng: np.random.Generator, alpha: float, reg: float) -> np.ndarray:
    N, n = len(p.a), len(p.systems)
    out = np.empty((n_boot, n))
    for i in range(n_boot):
        counts = np.bincount(rng.integers(N, size=N), minlength=N).astype(np.float64)
        out[i] = _plain_fit(p, n, alpha, reg, counts * p.w)
    return out


def _bootstrap_params(p: _Prepared, n_boot: int, rng: np.random.Generator, alpha: float, reg: float,
                      start: np.ndarray) -> np.ndarray:
    # battles deduplicated to (pair, outcome, style row) cells; a round draws N battles with replacement
    # (the per-battle resample) and refits the cells reweighted by the drawn battles' weights
    cells = style_cells(p.a, p.b, p.y, p.X, p.w)
    out = np.empty((n_boot, len(start)))
    for i in range(n_boot):
        out[i] = fit_contextual_bt(cells.a, cells.b, cells.X, cells.y, len(p.systems),
                                   weights=resample_cell_weights(cells, rng), alpha=alpha, reg=reg, start=start)
    return out


@register_bootstrap("bradley_terry_style")
def bradley_terry_style_bootstrap(table: pd.DataFrame, n_boot: int, rng: np.random.Generator, *,
                                  features: Any = "v1", reg: float = 0.5, scale: float = 400.0, base: float = 10.0,
                                  init: float = 1000.0, anchor: str | None = None, anchor_rating: float | None = None,
                                  anony: bool | None = None, language: Any = None,
                                  category: str | None = None) -> np.ndarray:
    """Bootstrap ratings: battles resampled with replacement (features standardised once, as FastChat)."""
    alpha = _check(scale, base, reg)
    p = _prepare(table, features, anony, language, category)
    start = fit_contextual_bt(p.a, p.b, p.X, p.y, len(p.systems), weights=p.w, alpha=alpha, reg=reg)
    boot = _bootstrap_params(p, n_boot, rng, alpha, reg, start)
    return _to_elo(boot[:, :len(p.systems)], p.systems, scale, init, anchor, anchor_rating)


@dataclass(frozen=True)
class StyleControl:
    """Style-controlled ratings, style coefficients and the comparison with plain Bradley–Terry."""

    systems: tuple[str, ...]
    scores: np.ndarray
    plain_scores: np.ndarray
    features: tuple[str, ...]
    coefficients: np.ndarray
    n_battles: int
    ci_low: np.ndarray | None = None
    ci_high: np.ndarray | None = None
    coef_low: np.ndarray | None = None
    coef_high: np.ndarray | None = None
    plain_low: np.ndarray | None = None
    plain_high: np.ndarray | None = None
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def arena_rank(self) -> np.ndarray:
        """1 + number of models whose lower bound exceeds this model's upper bound (point ranks without intervals)."""
        if self.ci_low is None:
            return competition_ranks(self.scores)
        return 1 + (self.ci_low[None, :] > self.ci_high[:, None]).sum(axis=1)

    @property
    def plain_arena_rank(self) -> np.ndarray:
        if self.plain_low is None:
            return competition_ranks(self.plain_scores)
        return 1 + (self.plain_low[None, :] > self.plain_high[:, None]).sum(axis=1)

    @property
    def rank_delta(self) -> np.ndarray:
        """Plain rank minus style-controlled rank (positive: the model rises under style control)."""
        return self.plain_arena_rank - self.arena_rank

    def to_frame(self) -> pd.DataFrame:
        """One row per model, best first: rating, interval, Arena rank, plain rating and rank Δ."""
        frame = pd.DataFrame({"system": self.systems, "rating": self.scores, "ci_low": self.ci_low,
                              "ci_high": self.ci_high, "rank": self.arena_rank, "plain_rating": self.plain_scores,
                              "plain_rank": self.plain_arena_rank, "rank_delta": self.rank_delta})
        return frame.sort_values(["rank", "rating"], ascending=[True, False], kind="stable").reset_index(drop=True)

    def coefficients_frame(self) -> pd.DataFrame:
        """Style coefficients (log-odds per standard deviation of the feature) with intervals."""
        return pd.DataFrame({"feature": self.features, "coefficient": self.coefficients,
                             "ci_low": self.coef_low, "ci_high": self.coef_high})


def style_control(table: pd.DataFrame, *, features: Any = "v1", reg: float = 0.5, scale: float = 400.0,
                  base: float = 10.0, init: float = 1000.0, anchor: str | None = None,
                  anchor_rating: float | None = None, anony: bool | None = None, language: Any = None,
                  category: str | None = None, n_boot: int = 0, seed: int = 0, ci: float = 0.95) -> StyleControl:
    """Style-controlled and plain Bradley–Terry ratings with bootstrap intervals for ratings and coefficients.

    Parameters are those of :func:`bradley_terry_style`; ``n_boot`` battle resamples
    (seeded by ``seed``) give percentile intervals of the ratings, the style coefficients
    and the plain ratings, and so the Arena ranks of both.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"a": ["x", "y", "x", "y"], "b": ["y", "x", "y", "x"], "winner": ["a", "a", "a", "b"],
    ...                   "style_len_a": [300, 100, 250, 90], "style_len_b": [100, 320, 90, 310]})
    >>> out = style_control(t, features="len", n_boot=20)
    >>> out.to_frame().columns.tolist()[:5]
    ['system', 'rating', 'ci_low', 'ci_high', 'rank']
    """
    check_level(ci, "ci")
    n_boot = check_positive_int(n_boot, "n_boot", minimum=0)
    alpha = _check(scale, base, reg)
    p = _prepare(table, features, anony, language, category)
    n = len(p.systems)
    params = fit_contextual_bt(p.a, p.b, p.X, p.y, n, weights=p.w, alpha=alpha, reg=reg)
    plain = _plain_fit(p, n, alpha, reg)
    elo = lambda r: _to_elo(r, p.systems, scale, init, anchor, anchor_rating)  # noqa: E731
    extra: dict[str, Any] = {}
    if n_boot:
        rng = rng_for(seed, "style_control")
        boot = _bootstrap_params(p, n_boot, rng, alpha, reg, params)
        plain_boot = _plain_bootstrap(p, n_boot, rng_for(seed, "style_control", "plain"), alpha, reg)

        def bounds(estimates: np.ndarray, reps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            pairs = [interval_bounds(float(e), reps[:, j], ci, "percentile") for j, e in enumerate(estimates)]
            return np.array([q[0] for q in pairs]), np.array([q[1] for q in pairs])

        scores_b = elo(boot[:, :n])
        plain_b = elo(plain_boot)
        lo, hi = bounds(elo(params[:n]), scores_b)
        clo, chi = bounds(params[n:], boot[:, n:])
        plo, phi = bounds(elo(plain), plain_b)
        extra = dict(ci_low=lo, ci_high=hi, coef_low=clo, coef_high=chi, plain_low=plo, plain_high=phi)
    return StyleControl(p.systems, elo(params[:n]), elo(plain), p.features, params[n:], len(p.a),
                        details={"reg": reg, "n_boot": n_boot, "seed": seed, "ci": ci}, **extra)
