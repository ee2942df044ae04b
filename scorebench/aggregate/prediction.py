r"""Which rating system predicts battles best? Held-out log loss and Brier on a time-ordered split.

:func:`predict_battles` sorts the battles by time (a ``tstamp`` column, or the table order),
fits every rating system on the first ``train_fraction`` of them and scores its predictions
of the rest. Each system gives, for a held-out battle, the expected score of ``a``
(:math:`E = P(a) + \tfrac12 P(\text{tie})`) and a three-way forecast :math:`(P(a), P(b), P(\text{tie}))`:

* ``elo (K=k)``: online Elo over the training battles in time order (Chatbot Arena's first
  leaderboard, several :math:`K`), frozen; :math:`E = 1/(1 + 10^{(R_b - R_a)/400})`;
* ``bradley_terry``: ties counted as half a win (:math:`E = \sigma(\theta_a - \theta_b)`);
* ``bradley_terry_davidson`` / ``bradley_terry_rao_kupper``: ties modelled
  (:mod:`scorebench.aggregate.tie_models`);
* ``glicko2``: Glickman's Glicko-2 over equal rating periods of the training battles
  (:math:`\tau = 0.5`, rating 1500, RD 350, volatility 0.06); :math:`E` uses both players'
  deviations, :math:`E = \sigma\bigl(g(\sqrt{\phi_a^2 + \phi_b^2})(\mu_a - \mu_b)\bigr)`.

Systems that model no tie (Elo, BT, Glicko-2) get the training tie rate :math:`t` for the
three-way forecast: :math:`((1 - t)E', (1 - t)(1 - E'), t)` with :math:`E'` their win
probability. Metrics (lower is better), with :math:`y \in \{1, \tfrac12, 0\}`:

.. math::
    \text{log loss} = -\overline{y\log E + (1 - y)\log(1 - E)},\quad
    \text{Brier} = \overline{(y - E)^2},\quad
    \text{log loss (3-way)} = -\overline{\log P(\text{observed outcome})}

A system unseen in training is predicted at the average strength. Weights (a ``weight``
column) weight the training likelihoods and the held-out averages.

References: Glickman, M. E. (2012), Example of the Glicko-2 system; Elo (1978); Chiang et al.
(2024), Chatbot Arena, ICML (FastChat issue #3065: "is Elo or BT better at prediction?").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError, ScorebenchError
from scorebench.core.validation import check_level
from scorebench.aggregate.input import Battles, as_battles
from scorebench.aggregate.pair_counts import pair_counts
from scorebench.aggregate.pairwise import bt_fit
from scorebench.aggregate.tie_models import TIE_MODELS, fit_tie_model

__all__ = ["predict_battles", "glicko2_ratings", "Glicko2", "PREDICTORS"]

_GLICKO_SCALE = 173.7178


@dataclass(frozen=True)
class Glicko2:
    """Glicko-2 state on the Glicko-2 scale: ``mu``, ``phi`` (deviation), ``sigma`` (volatility)."""

    mu: np.ndarray
    phi: np.ndarray
    sigma: np.ndarray

    @property
    def rating(self) -> np.ndarray:
        return 1500.0 + _GLICKO_SCALE * self.mu

    @property
    def rd(self) -> np.ndarray:
        return _GLICKO_SCALE * self.phi


def _g(phi: np.ndarray) -> np.ndarray:
    return 1.0 / np.sqrt(1.0 + 3.0 * phi ** 2 / np.pi ** 2)


def _volatility(sigma: np.ndarray, phi: np.ndarray, v: np.ndarray, delta: np.ndarray, tau: float,
                eps: float = 1e-6) -> np.ndarray:
    """Glickman's step 5 (Illinois algorithm), vectorised over players."""
    a = np.log(sigma ** 2)

    def f(x: np.ndarray) -> np.ndarray:
        ex = np.exp(x)
        return ex * (delta ** 2 - phi ** 2 - v - ex) / (2.0 * (phi ** 2 + v + ex) ** 2) - (x - a) / tau ** 2

    A = a.copy()
    big = delta ** 2 > phi ** 2 + v
    B = np.where(big, np.log(np.maximum(delta ** 2 - phi ** 2 - v, 1e-300)), 0.0)
    if (~big).any():
        k = np.ones_like(a)
        todo = ~big
        B[todo] = a[todo] - tau
        for _ in range(200):
            neg = todo & (f(a - k * tau) < 0)
            if not neg.any():
                break
            k[neg] += 1
            B[neg] = a[neg] - k[neg] * tau
    fA, fB = f(A), f(B)
    for _ in range(200):
        active = np.abs(B - A) > eps
        if not active.any():
            break
        C = A + (A - B) * fA / (fB - fA)
        fC = f(C)
        swap = fC * fB <= 0
        A_new = np.where(swap, B, A)
        fA_new = np.where(swap, fB, fA / 2.0)
        A = np.where(active, A_new, A)
        fA = np.where(active, fA_new, fA)
        B = np.where(active, C, B)
        fB = np.where(active, fC, fB)
    return np.exp(A / 2.0)


def glicko2_ratings(battles: Battles, *, periods: int = 20, tau: float = 0.5, rating: float = 1500.0,
                    rd: float = 350.0, volatility: float = 0.06) -> Glicko2:
    """Glicko-2 after the battles, in table order, split into ``periods`` equal rating periods.

    Examples
    --------
    Glickman's worked example (a 1500 player, RD 200, beats 1400/RD 30, loses to 1550/RD 100
    and 1700/RD 300 in one period) gives 1464.06, RD 151.52 (1464.05 unrounded: Glickman
    rounds the intermediate values):

    >>> import pandas as pd
    >>> from scorebench.aggregate.input import as_battles
    >>> b = as_battles(pd.DataFrame({"a": ["p"] * 3, "b": ["o1", "o2", "o3"], "winner": ["a", "b", "b"]}))
    >>> start = {"o1": (1400.0, 30.0), "o2": (1550.0, 100.0), "o3": (1700.0, 300.0), "p": (1500.0, 200.0)}
    >>> g = glicko2_ratings(b, periods=1, rd=[start[s][1] for s in b.systems],
    ...                     rating=[start[s][0] for s in b.systems])
    >>> round(float(g.rating[b.systems.index("p")]), 2), round(float(g.rd[b.systems.index("p")]), 2)
    (1464.05, 151.52)
    """
    if not (isinstance(periods, (int, np.integer)) and not isinstance(periods, bool) and periods >= 1):
        raise InputError(f"glicko2: periods must be a positive integer, got {periods!r}")
    if not (np.isfinite(tau) and tau > 0):
        raise InputError(f"glicko2: tau must be > 0, got {tau!r}")
    n = battles.n_systems
    mu = (np.broadcast_to(np.asarray(rating, dtype=np.float64), (n,)) - 1500.0) / _GLICKO_SCALE
    phi = np.broadcast_to(np.asarray(rd, dtype=np.float64), (n,)) / _GLICKO_SCALE
    sigma = np.full(n, float(volatility))
    mu, phi = mu.copy(), phi.copy()
    for chunk in np.array_split(np.arange(len(battles.a)), periods):
        if len(chunk) == 0:
            continue
        a, b = battles.a[chunk], battles.b[chunk]
        s, w = battles.outcome[chunk], battles.weight[chunk]
        players = np.concatenate([a, b])
        opp = np.concatenate([b, a])
        score = np.concatenate([s, 1.0 - s])
        ww = np.concatenate([w, w])
        g = _g(phi[opp])
        E = 1.0 / (1.0 + np.exp(-g * (mu[players] - mu[opp])))
        info = np.bincount(players, ww * g * g * E * (1.0 - E), n)
        resid = np.bincount(players, ww * g * (score - E), n)
        played = info > 0
        new_phi = np.sqrt(phi ** 2 + sigma ** 2)  # players who sat the period out
        if played.any():
            v = 1.0 / info[played]
            delta = v * resid[played]
            sig = _volatility(sigma[played], phi[played], v, delta, tau)
            phi_star = np.sqrt(phi[played] ** 2 + sig ** 2)
            phi_new = 1.0 / np.sqrt(1.0 / phi_star ** 2 + 1.0 / v)
            mu[played] = mu[played] + phi_new ** 2 * resid[played]
            new_phi[played] = phi_new
            sigma[played] = sig
        phi = new_phi
    return Glicko2(mu, phi, sigma)


# --- predictors: fit on training battles, forecast held-out pairs ------------------------------


@dataclass(frozen=True)
class Predictor:
    """A rating system's forecast: ``fn(train, a, b) -> (P(a), P(b), P(tie) or None)``.

    ``P(tie)`` is None for systems that model no tie (their P(a) is the expected score).
    """

    name: str
    fn: Callable[[Battles, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray | None]]


def _bt(train: Battles, a: np.ndarray, b: np.ndarray):
    W = pair_counts(train).wins()
    try:
        theta = bt_fit(W)
    except ScorebenchError:  # the MLE does not exist on the training battles: a weak ridge
        theta = bt_fit(W, prior=0.01)
    p = 1.0 / (1.0 + np.exp(-(theta[a] - theta[b])))
    return p, 1.0 - p, None


def _tie_predictor(model: str):
    def fn(train: Battles, a: np.ndarray, b: np.ndarray):
        fit = fit_tie_model(train, model)
        probs = np.exp(TIE_MODELS[model].logp(fit.theta[a] - fit.theta[b], fit.tau))
        return probs[0], probs[1], probs[2]

    return fn


def _elo_predictor(k: float):
    def fn(train: Battles, a: np.ndarray, b: np.ndarray):
        r = np.zeros(train.n_systems)
        for i, j, s, w in zip(train.a.tolist(), train.b.tolist(), train.outcome.tolist(), train.weight.tolist()):
            e = 1.0 / (1.0 + 10.0 ** ((r[j] - r[i]) / 400.0))
            step = k * w * (s - e)
            r[i] += step
            r[j] -= step
        p = 1.0 / (1.0 + 10.0 ** ((r[b] - r[a]) / 400.0))
        return p, 1.0 - p, None

    return fn


def _glicko_predictor(periods: int):
    def fn(train: Battles, a: np.ndarray, b: np.ndarray):
        st = glicko2_ratings(train, periods=periods)
        p = 1.0 / (1.0 + np.exp(-_g(np.sqrt(st.phi[a] ** 2 + st.phi[b] ** 2)) * (st.mu[a] - st.mu[b])))
        return p, 1.0 - p, None

    return fn


def _predictors(elo_k: Sequence[float], glicko_periods: int) -> list[Predictor]:
    return ([Predictor(f"elo (K={k:g})", _elo_predictor(float(k))) for k in elo_k]
            + [Predictor("bradley_terry", _bt)]
            + [Predictor(f"bradley_terry_{m}", _tie_predictor(m)) for m in TIE_MODELS]
            + [Predictor("glicko2", _glicko_predictor(glicko_periods))])


PREDICTORS = ("elo (K=...)", "bradley_terry", *(f"bradley_terry_{m}" for m in TIE_MODELS), "glicko2")


def _ordered(table: pd.DataFrame, order: str | None) -> pd.DataFrame:
    if order is None and "tstamp" in table.columns:
        order = "tstamp"
    if order is None:
        return table.reset_index(drop=True)
    if order not in table.columns:
        raise InputError(f"predict_battles: order={order!r} is not a column of the battles table "
                         f"(columns: {list(table.columns)[:12]})")
    if table[order].isna().any():
        raise InputError(f"predict_battles: column {order!r} has missing values; cannot order the battles by time")
    return table.sort_values(order, kind="stable").reset_index(drop=True)


def predict_battles(table: pd.DataFrame, *, train_fraction: float = 0.8, order: str | None = None,
                    elo_k: Sequence[float] = (4.0, 8.0, 16.0, 32.0), glicko_periods: int = 20) -> pd.DataFrame:
    """Held-out log loss and Brier of every rating system on a time-ordered split (module docstring).

    Returns one row per system: ``system``, ``log_loss``, ``brier``, ``log_loss_3way``,
    ``models_ties``, ``n_train``, ``n_test``; sorted by log loss. ``attrs`` holds the split.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> s = np.array([0.0, 0.5, 1.0, 1.5])
    >>> a = rng.integers(4, size=3000); b = (a + rng.integers(1, 4, size=3000)) % 4
    >>> win = rng.random(3000) < 1 / (1 + np.exp(-(s[a] - s[b])))
    >>> winner = np.where(rng.random(3000) < 0.2, "tie", np.where(win, "a", "b"))
    >>> t = pd.DataFrame({"a": a.astype(str), "b": b.astype(str), "winner": winner})
    >>> out = predict_battles(t, elo_k=(4, 32)).set_index("system")
    >>> bool(out.loc["bradley_terry", "log_loss"] < out.loc["elo (K=32)", "log_loss"])
    True
    """
    if not isinstance(table, pd.DataFrame):
        raise InputError(f"predict_battles: expected a battles DataFrame, got {type(table).__name__}")
    check_level(train_fraction, "train_fraction")
    if not elo_k or not all(np.isfinite(k) and k > 0 for k in elo_k):
        raise InputError(f"predict_battles: elo_k must be positive numbers, got {elo_k!r}")
    if order is None and "tstamp" in table.columns:
        order = "tstamp"
    battles = as_battles(_ordered(table, order))
    N = len(battles.a)
    cut = int(round(train_fraction * N))
    if cut < 2 or N - cut < 1:
        raise InputError(f"predict_battles: {N} battles split at {train_fraction} leaves {cut} for training and "
                         f"{N - cut} to predict; need at least 2 and 1")
    train = battles.take(np.arange(cut))
    test = battles.take(np.arange(cut, N))
    y, w = test.outcome, test.weight
    tie_rate = float(train.weight[train.outcome == 0.5].sum() / train.weight.sum())
    observed = np.where(y == 1.0, 0, np.where(y == 0.0, 1, 2))
    rows = []
    eps = 1e-15
    for pred in _predictors(elo_k, glicko_periods):
        try:
            pa, pb, pt = pred.fn(train, test.a, test.b)
        except ScorebenchError as exc:
            rows.append({"system": pred.name, "log_loss": np.nan, "brier": np.nan, "log_loss_3way": np.nan,
                         "models_ties": None, "n_train": cut, "n_test": N - cut, "error": str(exc)})
            continue
        models_ties = pt is not None
        if models_ties:
            E = pa + pt / 2.0
            three = np.stack([pa, pb, pt])
        else:
            E = pa
            three = np.stack([(1.0 - tie_rate) * pa, (1.0 - tie_rate) * pb, np.full_like(pa, tie_rate)])
        Ec = np.clip(E, eps, 1.0 - eps)
        ll = -(y * np.log(Ec) + (1.0 - y) * np.log1p(-Ec))
        p_obs = np.clip(three[observed, np.arange(len(y))], eps, 1.0)
        rows.append({"system": pred.name, "log_loss": float(np.average(ll, weights=w)),
                     "brier": float(np.average((y - E) ** 2, weights=w)),
                     "log_loss_3way": float(np.average(-np.log(p_obs), weights=w)), "models_ties": models_ties,
                     "n_train": cut, "n_test": N - cut, "error": None})
    out = pd.DataFrame(rows).sort_values(["log_loss", "system"], kind="stable", na_position="last")
    out = out.reset_index(drop=True)
    if out["error"].isna().all():
        out = out.drop(columns="error")
    out.attrs.update(train_fraction=train_fraction, train_tie_rate=tie_rate, order=order or "table order")
    return out


def prediction_options(options: dict[str, Any]) -> dict[str, Any]:
    """CLI ``-p key=value`` options that :func:`predict_battles` accepts (others raise)."""
    known = {"train_fraction", "order", "elo_k", "glicko_periods"}
    unknown = sorted(set(options) - known)
    if unknown:
        raise InputError(f"--predict: unknown option(s) {unknown}; accepted: {sorted(known)}")
    out = dict(options)
    if "elo_k" in out and not isinstance(out["elo_k"], (list, tuple)):
        out["elo_k"] = (out["elo_k"],)
    return out
