r"""Small-sample inference for accuracies: Beta-binomial posteriors, paired differences, rank intervals.

Below a few hundred items the normal (CLT) interval of an accuracy, and the percentile
bootstrap that behaves like it, are unreliable: too narrow, and degenerate (zero width) at
0 or n correct (Bowyer, Aitchison & Ivanova 2025). This module gives the Bayesian
alternatives they recommend, with uniform priors by default:

* :func:`beta_posterior`: accuracy :math:`\theta \mid k \sim \mathrm{Beta}(a + k, b + n - k)`,
  its mean and equal-tailed credible interval;
* :func:`paired_posterior`: two systems on the same items. The four cells of the paired
  table (both right, only A, only B, both wrong) get a Dirichlet(1, 1, 1, 1) posterior; the
  difference :math:`\theta_A - \theta_B = p_{10} - p_{01}` depends only on the discordant
  cells, and :math:`P(\theta_A > \theta_B) = P(p_{10} > p_{01}) = 1 - I_{1/2}(\alpha_{10}, \alpha_{01})`
  exactly (given :math:`p_{10} + p_{01}`, :math:`p_{10}/(p_{10}+p_{01})` is
  Beta(:math:`\alpha_{10}, \alpha_{01}`));
* :func:`rank_intervals`: credible intervals of each system's rank from independent Beta
  posteriors (Monte Carlo draws from a seeded generator of :mod:`scorebench.core.stats`);
* :func:`clt_flags`: which rows of a scores table carry a CLT-like interval where ``n`` is
  small or the value is near 0 or 1 (used by :func:`scorebench.evaluate`).

References
----------
Bowyer, Aitchison & Ivanova (2025), Position: Don't Use the CLT in LLM Evals With Fewer Than
a Few Hundred Datapoints, ICML 2025, arXiv:2503.01747.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.core.stats import check_resampling, rng_from_seed
from scorebench.core.validation import show_value

__all__ = ["Posterior", "PairedPosterior", "beta_posterior", "paired_posterior", "rank_intervals", "clt_flags",
           "posterior_table", "paired_table", "SMALL_N"]

#: Below this many units a CLT/bootstrap interval of a proportion is flagged.
SMALL_N = 100


class Posterior(NamedTuple):
    """Posterior mean and equal-tailed credible interval."""

    mean: float
    low: float
    high: float


class PairedPosterior(NamedTuple):
    """Posterior of :math:`\\theta_A - \\theta_B` and :math:`P(\\theta_A > \\theta_B)`."""

    mean: float
    low: float
    high: float
    prob_a_better: float


def _check_prior(prior: Any, size: int) -> np.ndarray:
    arr = np.broadcast_to(np.asarray(prior, dtype=np.float64), (size,))
    if not (np.isfinite(arr).all() and (arr > 0).all()):
        raise InputError(f"prior: expected positive pseudo-counts, got {prior!r}")
    return arr


def _binary(values: Any, name: str) -> np.ndarray:
    v = np.asarray(values, dtype=np.float64).ravel()
    if v.size == 0:
        raise InputError(f"{name}: no outcomes")
    bad = (v != 0) & (v != 1)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise InputError(f"{name}: value {show_value(v[first])} at position {first}; expected 0 or 1")
    return v


def beta_posterior(successes: float, n: float, *, ci: float = 0.95, prior: Sequence[float] = (1.0, 1.0)) -> Posterior:
    r"""Beta-binomial posterior of an accuracy: mean and equal-tailed credible interval.

    .. math:: \theta \mid k \sim \mathrm{Beta}(a + k,\; b + n - k),\qquad
              \mathbb{E}[\theta \mid k] = \frac{a + k}{a + b + n}

    ``prior=(0.5, 0.5)`` gives the Jeffreys interval.

    Examples
    --------
    >>> p = beta_posterior(20, 20)
    >>> round(p.mean, 4), round(p.low, 4), p.high
    (0.9545, 0.8389, 1.0)
    """
    from scipy.stats import beta

    check_resampling(ci=ci)
    a, b = _check_prior(prior, 2)
    if not (0 <= successes <= n) or n <= 0:
        raise InputError(f"beta_posterior: expected 0 <= successes <= n and n > 0, got {successes} of {n}")
    post = beta(a + successes, b + n - successes)
    low, high = post.ppf([(1 - ci) / 2, (1 + ci) / 2])
    # an interval at the edge reaches the edge (the posterior's mass there is the tail)
    return Posterior(float(post.mean()), float(0.0 if successes == 0 else low), float(1.0 if successes == n else high))


def paired_posterior(a: Any, b: Any, *, ci: float = 0.95, prior: float = 1.0, n_draws: int = 20_000,
                     seed: int = 0) -> PairedPosterior:
    r"""Posterior of the accuracy difference of two systems on the same items (discordant pairs).

    Parameters
    ----------
    a, b : (n,) arrays of 0/1
        The two systems' outcomes on the same items, in the same order.
    ci : float
        Credible level.
    prior : float
        Dirichlet pseudo-count of each of the four cells.
    n_draws, seed : int
        Monte Carlo draws for the credible interval (the probability is exact).

    Examples
    --------
    >>> post = paired_posterior([1, 1, 1, 0, 1, 1, 0, 1], [1, 0, 0, 0, 1, 1, 0, 0])
    >>> round(post.mean, 3), round(post.prob_a_better, 4)
    (0.25, 0.9375)
    """
    from scipy.stats import beta

    check_resampling(ci=ci, seed=seed)
    a, b = _binary(a, "paired_posterior: a"), _binary(b, "paired_posterior: b")
    if a.shape != b.shape:
        raise InputError(f"paired_posterior: {a.size} and {b.size} outcomes; expected the same items for both systems")
    cells = np.array([np.sum((a == 1) & (b == 1)), np.sum((a == 1) & (b == 0)), np.sum((a == 0) & (b == 1)),
                      np.sum((a == 0) & (b == 0))], dtype=np.float64) + _check_prior(prior, 4)
    draws = rng_from_seed(seed).dirichlet(cells, size=int(n_draws))
    diff = draws[:, 1] - draws[:, 2]
    low, high = np.quantile(diff, [(1 - ci) / 2, (1 + ci) / 2])
    mean = (cells[1] - cells[2]) / cells.sum()
    return PairedPosterior(float(mean), float(low), float(high), float(beta.sf(0.5, cells[1], cells[2])))


def rank_intervals(correct: Mapping[str, Any] | pd.DataFrame, *, ci: float = 0.95, prior: Sequence[float] = (1.0, 1.0),
                   n_draws: int = 20_000, seed: int = 0) -> pd.DataFrame:
    """Credible intervals of each system's rank (1 = best) from independent Beta posteriors.

    Parameters
    ----------
    correct : mapping system -> 0/1 outcomes, or a DataFrame with ``system`` and ``correct``
        Each system's outcomes.

    Returns
    -------
    DataFrame
        ``system, accuracy_mean, rank_median, rank_low, rank_high, prob_best``, best first.

    Examples
    --------
    >>> t = rank_intervals({"a": [1] * 18 + [0] * 2, "b": [1] * 10 + [0] * 10, "c": [1] * 17 + [0] * 3})
    >>> t[["system", "rank_low", "rank_high"]].values.tolist()
    [['a', 1, 2], ['c', 1, 2], ['b', 3, 3]]
    """
    check_resampling(ci=ci, seed=seed)
    if isinstance(correct, pd.DataFrame):
        if not {"system", "correct"} <= set(correct.columns):
            raise InputError("rank_intervals: expected columns 'system' and 'correct'")
        correct = {s: g.to_numpy() for s, g in correct.groupby("system", sort=True)["correct"]}
    if len(correct) < 2:
        raise InputError("rank_intervals: expected at least two systems")
    a, b = _check_prior(prior, 2)
    names = list(correct)
    outcomes = [_binary(correct[s], f"rank_intervals: system {s!r}") for s in names]
    rng = rng_from_seed(seed)
    draws = np.column_stack([rng.beta(a + v.sum(), b + v.size - v.sum(), int(n_draws)) for v in outcomes])
    ranks = (-draws).argsort(axis=1).argsort(axis=1) + 1
    low, mid, high = np.quantile(ranks, [(1 - ci) / 2, 0.5, (1 + ci) / 2], axis=0, method="inverted_cdf")
    out = pd.DataFrame({"system": names, "accuracy_mean": [(a + v.sum()) / (a + b + v.size) for v in outcomes],
                        "rank_median": mid.astype(np.int64), "rank_low": low.astype(np.int64),
                        "rank_high": high.astype(np.int64), "prob_best": (ranks == 1).mean(axis=0)})
    return out.sort_values(["accuracy_mean", "system"], ascending=[False, True], ignore_index=True)


def _outcomes_by_system(table: pd.DataFrame, where: str) -> dict[str, pd.Series]:
    if not isinstance(table, pd.DataFrame) or not {"system", "correct"} <= set(table.columns):
        raise InputError(f"{where}: expected a table with columns 'system' and 'correct' (0/1)")
    if table["system"].isna().any():
        raise InputError(f"{where}: column 'system' has missing labels")
    correct = pd.to_numeric(table["correct"], errors="coerce")
    bad = ~correct.isin([0, 1]).to_numpy()
    if bad.any():
        raise InputError(f"{where}: column 'correct' has {show_value(table['correct'].to_numpy()[bad][0])} in row "
                         f"{int(np.flatnonzero(bad)[0])}; expected 0 or 1")
    frame = table.assign(correct=correct, system=table["system"].astype(str))
    index = frame["id"].astype(str) if "id" in frame.columns else None
    return {s: (g["correct"].set_axis(index[g.index]) if index is not None else g["correct"])
            for s, g in frame.groupby("system", sort=True)}


def posterior_table(table: pd.DataFrame, *, ci: float = 0.95, prior: Sequence[float] = (1.0, 1.0),
                    n_draws: int = 20_000, seed: int = 0) -> pd.DataFrame:
    """Per system of a ``correct`` table (``system``, ``correct``): the Beta posterior of its
    accuracy (mean, credible interval, n) and its credible rank interval, best first.

    Examples
    --------
    >>> t = pd.DataFrame({"system": ["a"] * 10 + ["b"] * 10, "correct": [1] * 9 + [0] + [1] * 4 + [0] * 6})
    >>> posterior_table(t)[["system", "n", "rank_low", "rank_high"]].values.tolist()
    [['a', 10, 1, 1], ['b', 10, 2, 2]]
    """
    by_system = _outcomes_by_system(table, "posterior_table")
    rows = []
    for name, v in by_system.items():
        post = beta_posterior(float(v.sum()), float(v.size), ci=ci, prior=prior)
        rows.append({"system": name, "accuracy_mean": post.mean, "ci_low": post.low, "ci_high": post.high,
                     "n": int(v.size)})
    out = pd.DataFrame(rows)
    if len(by_system) > 1:
        ranks = rank_intervals({k: v.to_numpy() for k, v in by_system.items()}, ci=ci, prior=prior,
                               n_draws=n_draws, seed=seed)
        out = out.merge(ranks.drop(columns="accuracy_mean"), on="system")
    out = out.sort_values(["accuracy_mean", "system"], ascending=[False, True], ignore_index=True)
    out.attrs.update({"method": "Beta-binomial posterior (Bowyer et al. 2025)", "prior": list(prior), "ci": ci,
                      "seed": seed})
    return out


def paired_table(table: pd.DataFrame, *, ci: float = 0.95, prior: float = 1.0, n_draws: int = 20_000,
                 seed: int = 0) -> pd.DataFrame:
    """Every pair of systems of a ``correct`` table paired by ``id``: the posterior of the
    accuracy difference (discordant pairs) and P(A beats B).

    Examples
    --------
    >>> t = pd.DataFrame({"system": ["a"] * 4 + ["b"] * 4, "id": [1, 2, 3, 4] * 2, "correct": [1, 1, 1, 0, 1, 0, 0, 0]})
    >>> round(float(paired_table(t)["prob_a_better"].iloc[0]), 4)
    0.875
    """
    by_system = _outcomes_by_system(table, "paired_table")
    if "id" not in table.columns:
        raise InputError("paired_table: expected an 'id' column pairing the systems' items")
    names = sorted(by_system)
    if len(names) < 2:
        raise InputError("paired_table: expected at least two systems")
    rows = []
    for i, first in enumerate(names):
        for second in names[i + 1:]:
            a, b = by_system[first], by_system[second]
            for name, v in ((first, a), (second, b)):
                if v.index.duplicated().any():
                    raise InputError(f"paired_table: system {name!r} has a duplicate id")
            common = a.index.intersection(b.index)
            if len(common) == 0:
                raise InputError(f"paired_table: systems {first!r} and {second!r} share no id")
            post = paired_posterior(a[common].to_numpy(), b[common].to_numpy(), ci=ci, prior=prior,
                                    n_draws=n_draws, seed=seed)
            rows.append({"system_a": first, "system_b": second, "difference": post.mean, "ci_low": post.low,
                         "ci_high": post.high, "prob_a_better": post.prob_a_better, "n": int(len(common))})
    out = pd.DataFrame(rows)
    out.attrs.update({"method": "Dirichlet posterior of the paired table (discordant pairs)", "ci": ci, "seed": seed})
    return out


def clt_flags(scores: pd.DataFrame, unit_interval: Mapping[str, bool], intervals: Mapping[str, str],
              by: Sequence[str]) -> dict[str, str]:
    """The metrics of a scores table whose CLT-like interval is unreliable, with where and why.

    A row is flagged when its metric is a proportion of 0/1 outcomes (``unit_interval``), its interval
    is a bootstrap of a mean (not Wilson, Jeffreys or a Bayesian rule), and ``n < SMALL_N``
    or ``n * min(value, 1 - value) < 5`` (value near 0 or 1).
    """
    out: dict[str, str] = {}
    for metric, rows in scores.groupby("metric", sort=False):
        rule = intervals.get(metric, "")
        if not unit_interval.get(metric, False) or rule in ("none", "wilson score interval", "jeffreys interval"):
            continue
        n = rows["n"].to_numpy(dtype=np.float64)
        v = rows["value"].to_numpy(dtype=np.float64)
        bad = rows["ci_low"].notna().to_numpy() & ((n < SMALL_N) | (n * np.minimum(v, 1 - v) < 5))
        if bad.any():
            first = rows[bad].iloc[0]
            where = ", ".join(str(first[c]) for c in by) or "all rows"
            out[metric] = (f"{int(bad.sum())} group(s) with n < {SMALL_N} or a value near 0/1 (e.g. {where}: "
                           f"n={int(first['n'])}, value={first['value']:.3g}); CLT/bootstrap intervals undercover "
                           "there: use proportion_interval='wilson'/'jeffreys' for 0/1 outcomes or "
                           "scorebench.analysis.small_sample.beta_posterior")
    return out
