r"""Unbiased estimators from ``n`` repeated attempts per item (numpy, vectorised over items).

Every function takes ``outcomes``, an ``(m, n_max)`` array with one row per item: the 0/1
outcome of each attempt, left-packed, padded with NaN where an item has fewer attempts.
Item :math:`i` has :math:`n_i` attempts of which :math:`c_i` are correct. The estimators are
functions of :math:`(n_i, c_i)` alone: the probability of an event over the :math:`k`
attempts of a uniformly random :math:`k`-subset of the :math:`n_i` observed ones, which is
unbiased for the same event over :math:`k` fresh attempts (a U-statistic). An item with no
attempt (all NaN) gives NaN; an item with fewer than :math:`k` attempts raises.

References
----------
Chen et al. (2021), "Evaluating Large Language Models Trained on Code", arXiv:2107.03374
(pass@k and its numerically stable product form). Yao et al. (2024), "tau-bench",
arXiv:2406.12045 (pass^k). Liu et al. (2024), "Are Your LLMs Capable of Stable Reasoning?",
arXiv:2412.13147 (G-Pass@k_tau, mG-Pass@k). Hariri et al. (2026), "Don't Pass@k: A Bayesian
Framework for Large Language Model Evaluation", ICLR 2026, arXiv:2510.04265 (Bayes@N).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from scorebench.core.errors import InputError

__all__ = ["attempt_counts", "pass_at_k", "pass_hat_at_k", "g_pass_at_k", "pass_hat_k", "g_pass_at_k_tau",
           "mg_pass_at_k", "avg_at_n",
           "bayes_at_n", "bayes_at_n_posterior", "pass_at_k_curve", "majority_at_k", "tau_threshold"]


def attempt_counts(outcomes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(n, c)``: attempts and correct attempts per item of an ``(m, n_max)`` outcome array."""
    outcomes = np.asarray(outcomes, dtype=np.float64)
    if outcomes.ndim == 1:
        outcomes = outcomes[None, :]
    if outcomes.ndim != 2:
        raise InputError(f"outcomes: expected an (items, attempts) array, got shape {outcomes.shape}")
    valid = ~np.isnan(outcomes)
    bad = valid & (outcomes != 0) & (outcomes != 1)
    if bad.any():
        raise InputError(f"outcomes: value {outcomes[bad][0]!r} in item {int(np.argwhere(bad)[0, 0])}; "
                         "expected 0 or 1 per attempt")
    return valid.sum(axis=1).astype(np.int64), np.where(valid, outcomes, 0.0).sum(axis=1).astype(np.int64)


def _check_k(k: object, n: np.ndarray, name: str) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise InputError(f"{name}: k must be an integer >= 1, got {k!r}")
    short = (n > 0) & (n < k)
    if short.any():
        raise InputError(f"{name}@{k}: item {int(np.flatnonzero(short)[0])} has {int(n[short][0])} attempt(s); "
                         f"an unbiased estimate needs n >= k = {k} attempts per item")
    return int(k)


def _hypergeom_pmf(n: np.ndarray, c: np.ndarray, k: int) -> np.ndarray:
    """``(m, k + 1)``: P(j of a random k-subset are correct), j = 0..k (NaN rows where n = 0)."""
    from scipy.stats import hypergeom

    j = np.arange(k + 1)[None, :]
    with np.errstate(invalid="ignore"):
        pmf = hypergeom.pmf(j, np.maximum(n, k)[:, None], c[:, None], k)
    pmf[n == 0] = np.nan
    return pmf


def pass_at_k(outcomes: np.ndarray, *, k: int = 1) -> np.ndarray:
    r"""Unbiased pass@k per item: the probability that at least one of ``k`` attempts is correct.

    .. math:: \widehat{\text{pass@}k}_i = 1 - \frac{\binom{n_i - c_i}{k}}{\binom{n_i}{k}}
              = 1 - \prod_{j = n_i - c_i + 1}^{n_i} \Bigl(1 - \frac{k}{j}\Bigr)

    (1 when :math:`n_i - c_i < k`); the product form of Chen et al. (2021) never forms a
    binomial coefficient, so it is exact to rounding for any :math:`n`.

    Parameters
    ----------
    outcomes : (m, n_max) array
        0/1 per attempt, NaN-padded.
    k : int
        Attempts per trial, ``1 <= k <= n_i``.

    Returns
    -------
    (m,) array
        One estimate per item; the table value is their mean.

    Examples
    --------
    >>> import numpy as np
    >>> pass_at_k(np.array([[1, 0, 0, 0], [0, 0, 0, 0], [1, 1, 0, np.nan]]), k=2).round(4).tolist()
    [0.5, 0.0, 1.0]
    """
    n, c = attempt_counts(outcomes)
    k = _check_k(k, n, "pass")
    j = np.arange(1, max(int(n.max(initial=0)), 1) + 1)[None, :]
    terms = np.where((j > (n - c)[:, None]) & (j <= n[:, None]), 1.0 - k / j, 1.0)
    out = 1.0 - np.prod(terms, axis=1)
    out[n - c < k] = 1.0
    out[n == 0] = np.nan
    return out


def pass_hat_at_k(outcomes: np.ndarray, *, k: int = 1) -> np.ndarray:
    r"""Unbiased pass^k per item (tau-bench): the probability that all ``k`` attempts are correct.

    .. math:: \widehat{\text{pass}^k}_i = \frac{\binom{c_i}{k}}{\binom{n_i}{k}}
              = \prod_{j=0}^{k-1} \frac{c_i - j}{n_i - j}

    Examples
    --------
    >>> import numpy as np
    >>> pass_hat_at_k(np.array([[1, 1, 1, 0], [1, 0, 0, 0]]), k=2).round(4).tolist()
    [0.5, 0.0]
    """
    n, c = attempt_counts(outcomes)
    k = _check_k(k, n, "pass_hat")
    j = np.arange(k)[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.prod((c[:, None] - j) / (n[:, None] - j), axis=1)
    out[c < k] = 0.0
    out[n == 0] = np.nan
    return out


def tau_threshold(tau: float, k: int) -> int:
    r"""Successes needed by G-Pass@k_tau: :math:`\max(1, \lceil \tau k \rceil)`, with
    :math:`\tau = j/k` requiring exactly ``j`` (no rounding up of ``tau * k``).

    Examples
    --------
    >>> tau_threshold(0.5, 4), tau_threshold(0.7, 10), tau_threshold(0.0, 8)
    (2, 7, 1)
    """
    if not isinstance(tau, (int, float)) or isinstance(tau, bool) or not 0.0 <= tau <= 1.0:
        raise InputError(f"g_pass: tau must be a number in [0, 1], got {tau!r}")
    j = math.ceil(tau * k)
    while j > 0 and (j - 1) / k >= tau:
        j -= 1
    while j / k < tau:
        j += 1
    return max(1, j)


def g_pass_at_k(outcomes: np.ndarray, *, k: int = 1, tau: float = 1.0) -> np.ndarray:
    r"""G-Pass@k_tau per item (Liu et al. 2024): P(at least :math:`\lceil\tau k\rceil` of ``k`` attempts correct).

    .. math:: \text{G-Pass@}k_{\tau,i} = \sum_{j=j_0}^{k}
              \frac{\binom{c_i}{j}\binom{n_i - c_i}{k - j}}{\binom{n_i}{k}},\quad
              j_0 = \max(1, \lceil \tau k \rceil)

    :math:`\tau = 1` is pass^k; :math:`\tau \to 0` is pass@k.

    Examples
    --------
    >>> import numpy as np
    >>> round(float(g_pass_at_k(np.array([[0, 1, 1, 0, 1]]), k=2, tau=0.5)[0]), 6)
    0.9
    """
    n, c = attempt_counts(outcomes)
    k = _check_k(k, n, "g_pass")
    j0 = tau_threshold(tau, k)
    return _hypergeom_pmf(n, c, k)[:, j0:].sum(axis=1)


def mg_pass_at_k(outcomes: np.ndarray, *, k: int = 1) -> np.ndarray:
    r"""mG-Pass@k per item (Liu et al. 2024): G-Pass@k_tau averaged over :math:`\tau \in [0.5, 1]`.

    .. math:: \text{mG-Pass@}k_i = \frac{2}{k}\sum_{j=m+1}^{k} (j - m)\,P(X_i = j),\quad
              m = \lceil k/2 \rceil,\; X_i \sim \text{Hypergeometric}(n_i, c_i, k)

    Examples
    --------
    >>> import numpy as np
    >>> round(float(mg_pass_at_k(np.array([[0, 1, 1, 0, 1], [1, 1, 0, 1, 1]]), k=3).mean()), 6)
    0.166667
    """
    n, c = attempt_counts(outcomes)
    k = _check_k(k, n, "mg_pass")
    m = math.ceil(k / 2)
    weights = np.clip(np.arange(k + 1) - m, 0, None) * (2.0 / k)
    return _hypergeom_pmf(n, c, k) @ weights


def avg_at_n(outcomes: np.ndarray) -> np.ndarray:
    r"""avg@n per item: the share of correct attempts, :math:`c_i / n_i` (pass@1).

    Examples
    --------
    >>> import numpy as np
    >>> avg_at_n(np.array([[1, 0, 1, 1], [0, 1, np.nan, np.nan]])).tolist()
    [0.75, 0.5]
    """
    n, c = attempt_counts(outcomes)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, c / np.maximum(n, 1), np.nan)


def bayes_at_n(outcomes: np.ndarray) -> np.ndarray:
    r"""Bayes@N per item (Hariri et al. 2026): the posterior mean of the item's success rate.

    With a uniform Beta(1, 1) (Dirichlet(1, 1)) prior and :math:`c_i` of :math:`n_i` correct,

    .. math:: \mu_i = \frac{c_i + 1}{n_i + 2}, \qquad \mu = \frac{1}{M}\sum_i \mu_i .

    Examples
    --------
    >>> import numpy as np
    >>> bayes_at_n(np.array([[1, 1, 1, 1], [0, 0, 0, 0]])).round(4).tolist()
    [0.8333, 0.1667]
    """
    n, c = attempt_counts(outcomes)
    return np.where(n > 0, (c + 1.0) / (n + 2.0), np.nan)


def bayes_at_n_posterior(outcomes: np.ndarray) -> tuple[float, float]:
    r"""Bayes@N's posterior mean and standard deviation of the benchmark score (fixed items).

    .. math:: \sigma^2 = \frac{1}{M^2}\sum_{i} \frac{\mu_i (1 - \mu_i)}{n_i + 3}

    the variance of the mean of independent Beta(:math:`c_i + 1, n_i - c_i + 1`) posteriors
    (Hariri et al. 2026, eq. for :math:`\sigma` with :math:`T = n_i + 2`). It describes the
    uncertainty about *these* items' success rates; the intervals of
    :func:`scorebench.evaluate` also resample the items.

    Examples
    --------
    >>> import numpy as np
    >>> mu, sd = bayes_at_n_posterior(np.array([[1, 0, 1, 1, 0], [1, 1, 0, 1, 1]]))
    >>> round(mu, 4), round(sd, 4)
    (0.6429, 0.1185)
    """
    n, c = attempt_counts(outcomes)
    if (n == 0).any():
        raise InputError("bayes_at_n_posterior: every item needs at least one attempt")
    mu = (c + 1.0) / (n + 2.0)
    return float(mu.mean()), float(np.sqrt(np.sum(mu * (1.0 - mu) / (n + 3.0))) / mu.size)


def pass_at_k_curve(outcomes: np.ndarray, ks: np.ndarray | None = None) -> np.ndarray:
    r"""The mean pass@k over items for every ``k`` (default ``1..min n_i``) from one run.

    Returns an array of ``(k, pass@k)`` rows.

    Examples
    --------
    >>> import numpy as np
    >>> pass_at_k_curve(np.array([[1, 0, 0, 0], [0, 0, 1, 1]])).round(4).tolist()
    [[1.0, 0.375], [2.0, 0.6667], [3.0, 0.875], [4.0, 1.0]]
    """
    n, _ = attempt_counts(outcomes)
    smallest = int(n[n > 0].min()) if (n > 0).any() else 0
    ks = np.arange(1, smallest + 1) if ks is None else np.asarray(ks, dtype=np.int64)
    return np.array([[k, float(np.nanmean(pass_at_k(outcomes, k=int(k))))] for k in ks]).reshape(-1, 2)


def majority_at_k(answers: np.ndarray, outcomes: np.ndarray, *, k: int | None = None) -> np.ndarray:
    r"""maj@k (cons@k) per item: the expected correctness of a majority vote over ``k`` attempts.

    The vote is over the extracted answers of a uniformly random ``k``-subset of the item's
    :math:`n_i` attempts; the most frequent answer wins and **a tie is broken uniformly at
    random among the tied answers** (so a correct answer tied with one wrong answer earns
    1/2). Averaged exactly over all :math:`\binom{n_i}{k}` subsets (a multivariate
    hypergeometric sum), this is unbiased for the vote over ``k`` fresh attempts; ``k=None``
    votes over all :math:`n_i` attempts (cons@n).

    Parameters
    ----------
    answers : (m, n_max) array of int
        Answer code per attempt (equal codes = the same extracted answer), -1 for padding.
    outcomes : (m, n_max) array
        0/1 per attempt (the correctness of its answer), NaN-padded.
    k : int, optional
        Attempts voting.

    Examples
    --------
    >>> import numpy as np
    >>> answers = np.array([[0, 0, 1, 2], [0, 1, 1, 2]])
    >>> outcomes = np.array([[1, 1, 0, 0], [1, 0, 0, 0]])
    >>> majority_at_k(answers, outcomes).round(4).tolist()
    [1.0, 0.0]
    >>> majority_at_k(answers, outcomes, k=1).round(4).tolist()
    [0.5, 0.25]
    """
    n, _ = attempt_counts(outcomes)
    answers = np.asarray(answers, dtype=np.int64)
    if answers.shape != np.shape(outcomes):
        raise InputError(f"maj: answers of shape {answers.shape} do not match outcomes of shape {np.shape(outcomes)}")
    k = None if k is None else _check_k(k, n, "maj")
    outcomes = np.asarray(outcomes, dtype=np.float64)
    out = np.full(n.size, np.nan)
    for i in range(n.size):
        if n[i] == 0:
            continue
        valid = ~np.isnan(outcomes[i])
        codes, inverse, counts = np.unique(answers[i][valid], return_inverse=True, return_counts=True)
        right = np.zeros(codes.size, dtype=bool)
        right[inverse[outcomes[i][valid] == 1]] = True
        out[i] = sum(_vote_share(int(counts[a]), tuple(sorted(np.delete(counts, a).tolist())), n[i] if k is None else k)
                     for a in np.flatnonzero(right))
    return out


@lru_cache(maxsize=65536)
def _vote_share(own: int, others: tuple[int, ...], k: int) -> float:
    """P(an answer drawn ``own`` times of n wins a k-subset vote, ties split evenly)."""
    n = own + sum(others)
    total = 0.0
    for x in range(1, min(own, k) + 1):
        # ways[s, t]: choose s attempts among the other answers, t of them drawn exactly x
        # times and every other one fewer than x times
        ways = np.zeros((k + 1, len(others) + 2))
        ways[0, 0] = 1.0
        for size in others:
            nxt = np.zeros_like(ways)
            for y in range(0, min(size, x) + 1):
                tie = 1 if y == x else 0
                if y == x or y < x:
                    nxt[y:, tie:] += math.comb(size, y) * ways[:k + 1 - y, :ways.shape[1] - tie]
            ways = nxt
        rest = k - x
        if rest < 0:
            continue
        total += math.comb(own, x) * float(np.sum(ways[rest] / (np.arange(ways.shape[1]) + 1.0)))
    return total / math.comb(n, k)


# The earlier names of pass_hat_at_k and g_pass_at_k, still importable.
pass_hat_k, g_pass_at_k_tau = pass_hat_at_k, g_pass_at_k
