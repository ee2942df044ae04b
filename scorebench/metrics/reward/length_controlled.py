r"""AlpacaEval's length-controlled win rate (Dubois et al., 2024), as alpaca_eval computes it.

AlpacaEval 2 compares a model's answers with a baseline's on the same instructions; a judge
gives a preference :math:`\pi_i \in [0, 1]` that the model's answer is better (alpaca_eval
encodes it in :math:`[1, 2]`, ``0`` for a tie, read as :math:`\tfrac12`). Judges prefer longer
answers, so the win rate rewards verbosity. The length-controlled win rate fits a logistic GLM

.. math::

    \operatorname{logit} P(\text{model wins } i) = \theta_\text{len}\,\tanh\!\Big(\frac{\ell^{b}_i -
    \ell^{m}_i}{\operatorname{sd}(\ell^{b} - \ell^{m})}\Big) + \theta_\text{diff}\,\gamma_i + \theta_\text{model}

(``length_controlled_v1``'s formula ``np.tanh(std_delta_len) + instruction_difficulty +
not_gamed_baseline - 1``: :math:`\ell` answer lengths in characters, baseline minus model,
:math:`\gamma_i` the instruction's difficulty) and reports the mean predicted preference with the
length term set to 0, :math:`100\cdot\frac1n\sum_i \sigma(\hat\theta_\text{diff}\gamma_i +
\hat\theta_\text{model})`, with the standard error of those predictions (``pandas.Series.sem``).

The fit is alpaca_eval's ``fit_LogisticRegressionCV`` reproduced exactly: L1-penalised logistic
regression without intercept, the soft labels :math:`\pi_i` as weights of a label-1 and a
label-0 copy of each row, :math:`C` chosen from ``numpy.logspace(-4, 4, 10)`` by 5-fold
``GroupKFold`` cross-validation (each row's two copies one group) on the continuous log loss
(predictions clipped to :math:`[10^{-15}, 1 - 10^{-15}]`), then refit on all rows at the chosen
:math:`C`; the penalised likelihood is maximised to convergence (proximal Newton), where
liblinear stops at ``tol=1e-4``. ``length_controlled_v1`` also trains on alpaca_eval's two
"gamed" baselines (the ``df_gamed.csv`` of the ``tatsu-lab/alpaca_eval`` Hub dataset: rows with
``std_delta_len``, ``instruction_difficulty``, ``preference`` in [0, 1]) with weight
:math:`\lambda/2 = 0.1` and the model term switched off, which regularises the length and
difficulty slopes; without that table (``gamed=None``) the fit is ``length_controlled_noreg``.
Rows without a preference are left out of the fit but predicted (as alpaca_eval does).

Reference: Dubois, Galambosi, Liang, Hashimoto (2024), *Length-Controlled AlpacaEval: A Simple
Way to Debias Automatic Evaluators*, arXiv:2404.04475; tatsu-lab/alpaca_eval
``src/alpaca_eval/metrics/glm_winrate.py`` (``get_length_controlled_winrate``,
``_get_featurized_data``, ``fit_LogisticRegressionCV``, ``logloss_continuous``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.core.registry import register
from scorebench.core.tables import Column, Inputs, numeric_column, register_kind, start_table, unit_frame

__all__ = ["length_controlled_winrate", "glm_folds", "l1_logistic", "extract_alpaca_annotations",
           "alpaca_lc_winrate", "CS"]

CS = np.logspace(-4, 4, 10)  # LogisticRegressionCV(Cs=10)
_CLIP = 1e-15
_CITE = ("Dubois et al. (2024), Length-Controlled AlpacaEval, arXiv:2404.04475; "
         "tatsu-lab/alpaca_eval metrics/glm_winrate.py")


def glm_folds(n: int, n_splits: int = 5) -> np.ndarray:
    """The fold of each of ``n`` one-row groups under scikit-learn's ``GroupKFold(n_splits)``.

    Groups of equal size are dealt from the last to the first, each to the lightest fold (the
    first of equal ones), so group :math:`g` lands in fold :math:`(n - 1 - g) \bmod k`.

    Examples
    --------
    >>> glm_folds(7, 3).tolist()
    [0, 2, 1, 0, 2, 1, 0]
    """
    if n < n_splits:
        raise InputError(f"{n} annotated rows: fewer than the {n_splits} cross-validation folds")
    return (n - 1 - np.arange(n)) % n_splits


def _objective(w: np.ndarray, X: np.ndarray, p: np.ndarray, s: np.ndarray, C: float) -> float:
    z = X @ w
    return float(C * np.sum(s * (np.logaddexp(0.0, z) - p * z)) + np.abs(w).sum())


def l1_logistic(X: np.ndarray, p: np.ndarray, s: np.ndarray, C: float, *, tol: float = 1e-13,
                max_iter: int = 200, start: np.ndarray | None = None) -> np.ndarray:
    r"""Minimise :math:`\|w\|_1 + C\sum_i s_i\,[\log(1 + e^{x_i^\top w}) - \pi_i x_i^\top w]`.

    That is liblinear's L1-regularised logistic regression (no intercept) on a label-1 copy of
    each row weighted :math:`s_i\pi_i` and a label-0 copy weighted :math:`s_i(1 - \pi_i)`, solved
    by proximal Newton steps (coordinate descent on the quadratic model, backtracking on the
    objective) until the step is below ``tol``. ``start`` (a nearby solution, e.g. at the previous
    :math:`C`) only speeds it up: the optimum is the same.

    Examples
    --------
    >>> X = np.array([[1.0], [1.0]]); w = l1_logistic(X, np.array([0.9, 0.7]), np.ones(2), 100.0)
    >>> round(float(w[0]), 6)  # C (2 sigma(w) - 1.6) + 1 = 0: sigma(w) = 0.795, w = logit(0.795)
    1.355332
    """
    w = np.zeros(X.shape[1]) if start is None else np.array(start, dtype=np.float64)
    f = _objective(w, X, p, s, C)
    if start is not None and f > _objective(np.zeros_like(w), X, p, s, C):
        w = np.zeros_like(w)
        f = _objective(w, X, p, s, C)
    for _ in range(max_iter):
        z = X @ w
        q = 1.0 / (1.0 + np.exp(-z))
        g = C * X.T @ (s * (q - p))
        H = C * (X.T * (s * q * (1.0 - q))) @ X
        d = np.array(_quadratic_l1_step(w.tolist(), g.tolist(), H.tolist()))
        decrease = float(g @ d + np.abs(w + d).sum() - np.abs(w).sum())
        if np.abs(d).max() <= tol * (1.0 + np.abs(w).max()) or decrease >= -1e-15 * (1.0 + abs(f)):
            break
        t = 1.0
        while t >= 1e-10:
            trial = w + t * d
            f_trial = _objective(trial, X, p, s, C)
            if f_trial <= f + 1e-4 * t * decrease:
                break
            t /= 2
        else:
            break  # no decrease left that rounding can show: converged
        w, f = trial, f_trial
    return w


def _quadratic_l1_step(w: list[float], g: list[float], H: list[list[float]]) -> list[float]:
    """The step :math:`d` minimising :math:`g^\\top d + \\tfrac12 d^\\top H d + \\|w + d\\|_1`, by cyclic
    coordinate descent with exact soft-thresholding (plain floats: the problem has three coordinates)."""
    k = len(w)
    diag = [max(H[j][j], 1e-300) for j in range(k)]
    scale = 1e-15 * (1.0 + max(abs(v) for v in w))
    d = [0.0] * k
    for _sweep in range(500):
        moved = 0.0
        for j in range(k):
            grad_j = g[j] + sum(H[j][i] * d[i] for i in range(k))
            u = w[j] + d[j] - grad_j / diag[j]
            shrunk = abs(u) - 1.0 / diag[j]
            new = (math.copysign(shrunk, u) if shrunk > 0 else 0.0) - w[j]
            moved = max(moved, abs(new - d[j]))
            d[j] = new
        if moved <= scale:
            break
    return d


def _cv_loss(w: np.ndarray, X: np.ndarray, p: np.ndarray, s: np.ndarray) -> float:
    """alpaca_eval's ``logloss_continuous`` on a validation fold (both copies of each row)."""
    q = np.clip(1.0 / (1.0 + np.exp(-(X @ w))), _CLIP, 1.0 - _CLIP)
    loss = s * (p * np.log(q) + (1.0 - p) * np.log(1.0 - q))
    return float(-np.mean(np.concatenate([loss, loss])))


def _fit_cv(X: np.ndarray, p: np.ndarray, s: np.ndarray, n_splits: int) -> tuple[np.ndarray, float]:
    folds = glm_folds(len(p), n_splits)
    scores = np.zeros(len(CS))
    for fold in range(n_splits):
        test = folds == fold
        w = None
        for k, C in enumerate(CS):
            w = l1_logistic(X[~test], p[~test], s[~test], C, start=w)
            scores[k] -= _cv_loss(w, X[test], p[test], s[test])
    best = float(CS[int(np.argmax(scores))])
    return l1_logistic(X, p, s, best), best


def length_controlled_winrate(preference: Any, len_model: Any, len_baseline: Any, difficulty: Any, *,
                              gamed: pd.DataFrame | None = None, regularize: float = 0.2,
                              n_splits: int = 5) -> dict[str, Any]:
    r"""AlpacaEval's length-controlled win rate of one model against the baseline (module docstring).

    Parameters
    ----------
    preference : array-like
        The judge's preference per instruction in alpaca_eval's encoding: :math:`[1, 2]` (2 =
        the model's answer better), ``0`` a tie; ``NaN`` unannotated (predicted, not fitted).
    len_model, len_baseline : array-like
        Answer lengths in characters (``output_2`` and ``output_1`` in alpaca_eval).
    difficulty : array-like
        Each instruction's difficulty :math:`\gamma_i` (alpaca_eval's ``instruction_difficulty``).
    gamed : DataFrame, optional
        alpaca_eval's ``df_gamed.csv`` (columns ``preference`` in [0, 1], ``std_delta_len``,
        ``instruction_difficulty``) for ``length_controlled_v1``; None fits ``length_controlled_noreg``.
    regularize : float
        :math:`\lambda`, the total weight of the gamed rows relative to the model's (0.2).
    n_splits : int
        Cross-validation folds for choosing :math:`C` (5).

    Returns
    -------
    dict
        ``length_controlled_winrate`` and ``lc_standard_error`` (percent), ``win_rate`` (percent,
        alpaca_eval's ``win_rate``: the mean of :math:`\pi` over annotated rows), ``coef``
        (length, difficulty, model), ``C``, ``n`` (annotated rows), ``glm``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> n = 60; gamma = rng.normal(size=n); lm = rng.integers(100, 900, n); lb = rng.integers(100, 900, n)
    >>> pref = 1 + 1 / (1 + np.exp(0.8 * gamma - 0.5 * np.tanh((lm - lb) / 300)))
    >>> out = length_controlled_winrate(pref, lm, lb, gamma)
    >>> 0 < out["length_controlled_winrate"] < 100, out["glm"]
    (True, 'length_controlled_noreg')
    """
    pref = np.asarray(preference, dtype=np.float64)
    lm = np.asarray(len_model, dtype=np.float64)
    lb = np.asarray(len_baseline, dtype=np.float64)
    gamma = np.asarray(difficulty, dtype=np.float64)
    if not (pref.shape == lm.shape == lb.shape == gamma.shape) or pref.ndim != 1:
        raise InputError("preference, lengths and difficulty must be 1-D arrays of one length, got shapes "
                         f"{pref.shape}, {lm.shape}, {lb.shape}, {gamma.shape}")
    bad = ~np.isnan(pref) & (pref != 0) & ((pref < 1) | (pref > 2))
    if bad.any():
        raise InputError(f"preference: expected values in [1, 2] (2 = the model wins) or 0 (a tie), got "
                         f"{pref[bad][0]!r} at row {int(np.flatnonzero(bad)[0])}")
    if not (np.isfinite(lm).all() and np.isfinite(lb).all() and np.isfinite(gamma).all()):
        raise InputError("answer lengths and instruction difficulties must be finite numbers")
    if not 0 <= regularize:
        raise InputError(f"regularize={regularize!r}: expected a weight >= 0")
    delta = lb - lm
    sd = float(np.std(delta, ddof=1)) if len(delta) > 1 else 0.0
    if not sd > 0:
        raise InputError("the length differences are all equal: the length term is not defined")
    pi = np.where(pref == 0, 1.5, pref) - 1.0
    X = np.column_stack([np.tanh(delta / sd), gamma, np.ones_like(gamma)])
    fit = ~np.isnan(pi)
    Xf, pf, sf = X[fit], pi[fit], np.ones(int(fit.sum()))
    glm = "length_controlled_noreg"
    if gamed is not None and regularize > 0:
        Xg, pg = _gamed_rows(gamed)
        Xf, pf = np.vstack([Xg, Xf]), np.concatenate([pg, pf])
        sf = np.concatenate([np.full(len(pg), regularize / 2.0), sf])
        glm = "length_controlled_v1"
    w, C = _fit_cv(Xf, pf, sf, n_splits)
    predicted = 1.0 / (1.0 + np.exp(-(gamma * w[1] + w[2])))
    n = int(fit.sum())
    return {"length_controlled_winrate": 100.0 * float(predicted.mean()),
            "lc_standard_error": 100.0 * float(predicted.std(ddof=1) / np.sqrt(len(predicted))),
            "win_rate": 100.0 * float(pi[fit].mean()) if n else float("nan"),
            "coef": {"length": float(w[0]), "difficulty": float(w[1]), "model": float(w[2])},
            "C": C, "n": n, "glm": glm, "predicted": predicted}


def _gamed_rows(gamed: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    if not isinstance(gamed, pd.DataFrame):
        raise InputError("gamed: expected a DataFrame (alpaca_eval's df_gamed.csv)")
    missing = [c for c in ("preference", "std_delta_len", "instruction_difficulty") if c not in gamed.columns]
    if missing:
        raise InputError(f"gamed: missing column(s) {', '.join(missing)} (expected alpaca_eval's df_gamed.csv)")
    table = gamed[gamed["preference"].notna()]
    values = table[["std_delta_len", "instruction_difficulty", "preference"]].to_numpy(dtype=np.float64)
    if not np.isfinite(values).all() or ((values[:, 2] < 0) | (values[:, 2] > 1)).any():
        raise InputError("gamed: std_delta_len and instruction_difficulty must be finite and preference in [0, 1]")
    X = np.column_stack([np.tanh(values[:, 0]), values[:, 1], np.zeros(len(values))])
    return X, values[:, 2]


@register_kind("alpaca_annotations", columns=(
    Column("preference", "number", "the judge's preference: in [1, 2] (2 = the model's answer wins), 0 a tie"),
    Column("len_2", "number", "the model's answer length in characters (or the text output_2)", required=False),
    Column("len_1", "number", "the baseline's answer length in characters (or the text output_1)", required=False),
    Column("instruction_difficulty", "number", "the instruction's difficulty (alpaca_eval's GLM feature)")))
def extract_alpaca_annotations(df: pd.DataFrame, *, nan_policy: str = "raise") -> Inputs:
    """AlpacaEval annotations: one row per (model, instruction) judged against the baseline.

    The model is ``system`` (or alpaca_eval's ``generator_2``); lengths come from ``len_1``/``len_2``
    or from the answer texts ``output_1``/``output_2``. A missing preference is kept (alpaca_eval
    predicts those rows too), whatever ``nan_policy``.
    """
    if isinstance(df, pd.DataFrame) and "system" not in df.columns and "generator_2" in df.columns:
        df = df.rename(columns={"generator_2": "system"})
    if isinstance(df, pd.DataFrame):
        df = df.copy()
        for side in ("1", "2"):
            if f"len_{side}" not in df.columns and f"output_{side}" in df.columns:
                df[f"len_{side}"] = df[f"output_{side}"].astype("string").str.len().astype("float64")
        if "len_1" not in df.columns or "len_2" not in df.columns:
            raise InputError("kind 'alpaca_annotations': needs the answer lengths len_1 and len_2 "
                             "(or the texts output_1 and output_2)")
    df, key = start_table(df, "alpaca_annotations", ["len_1", "len_2", "instruction_difficulty"], nan_policy)
    arrays = {"preference": numeric_column(df, "preference", nan_ok=True),
              "len_1": numeric_column(df, "len_1"), "len_2": numeric_column(df, "len_2"),
              "difficulty": numeric_column(df, "instruction_difficulty")}
    return Inputs(unit_frame(df.drop(columns=[c for c in ("output_1", "output_2") if c in df.columns]), key),
                  arrays, key=key)


@register("alpaca_lc_winrate", family="judge", kind="alpaca_annotations",
          inputs=("preference", "len_2", "len_1", "difficulty"), higher_is_better=True, bounds=(0.0, 100.0),
          per_row=False, params={"n_splits": 5}, citation=_CITE,
          tested_against=("alpaca-eval 0.6.6 (length_controlled_noreg, solved to convergence)", 1e-6))
def alpaca_lc_winrate(preference: Any, len_2: Any, len_1: Any, difficulty: Any, /, *, n_splits: int = 5) -> float:
    r"""AlpacaEval length-controlled win rate in percent (``length_controlled_noreg``; see the module).

    With alpaca_eval's gamed-baseline table use :func:`length_controlled_winrate` (``gamed=``)
    for ``length_controlled_v1``. Bootstrap intervals resample instructions and refit the GLM.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> g = rng.normal(size=40); l2 = rng.integers(100, 900, 40); l1 = rng.integers(100, 900, 40)
    >>> 0 < alpaca_lc_winrate(1 + 1 / (1 + np.exp(g)), l2, l1, g) < 100
    True
    """
    return float(length_controlled_winrate(preference, len_2, len_1, difficulty,
                                           n_splits=int(n_splits))["length_controlled_winrate"])
