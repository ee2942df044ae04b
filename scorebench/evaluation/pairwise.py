r"""All-pairs paired tests from one units × systems matrix (the engine behind :func:`scorebench.compare`).

Every paired test of :func:`scorebench.compare` on independent units is a function of a few
sums over units of the matrix ``S`` (``n`` units × ``k`` systems), so all ``k (k - 1) / 2``
pairs come from matrix products instead of one loop per pair:

* **means and paired t**: column sums ``s = 1ᵀS`` and the Gram matrix ``G = SᵀS``;
  for the pair (a, b) the differences ``d = S_a - S_b`` have
  :math:`\sum d = s_a - s_b` and
  :math:`\sum (d - \bar d)^2 = C_{aa} + C_{bb} - 2 C_{ab}` with ``C = G - s sᵀ / n``;
* **McNemar** (0/1 contributions): the units only a gets right are
  :math:`n_{10}(a, b) = s_a - G_{ab}`, so one Gram matrix gives every discordant count;
* **paired bootstrap**: one draw of Poisson(1) unit weights ``W`` (``B`` rounds × ``n``),
  shared by all pairs; ``W S`` holds every system's weighted sum per round, and a pair's
  replicate of the mean difference is :math:`(W S)_{\cdot a} / W1 - (W S)_{\cdot b} / W1`;
* **sign-flip permutation**: one draw of signs ``E`` (rounds × ``n``), shared by all pairs;
  :math:`|E (S_a - S_b)| = |(E S)_{\cdot a} - (E S)_{\cdot b}|` (exact enumeration of the
  ``2^n`` patterns for ``n <= 16``).

The weights and signs of a unit derive from (seed, hash of the unit's key, round) only
(:func:`scorebench.core.stats.poisson_weights`, :func:`scorebench.core.stats.half_sample_masks`), so
all of the above are sums over units that add across any split of the units:
:class:`PairSums` is the mergeable partial, and the Dask engine adds one per partition.
Adding a system or choosing a baseline never changes another pair's draws.

Cost: ``O(n k^2)`` for the Gram matrix, ``O(B n k)`` for the bootstrap and permutation
products, ``O(B P)`` for the ``P`` pairs' quantiles and counts, against ``O(B n P)`` for a
loop over pairs.

References: McNemar (1947), Psychometrika 12(2); Efron & Tibshirani (1993), *An
Introduction to the Bootstrap*, ch. 15-16 (paired and permutation tests); Hanley &
MacGibbon (2006), Computational Statistics & Data Analysis 50(12) (Poisson bootstrap).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from scorebench.core.errors import InputError
from scorebench.core.stats import EXACT_BOOTSTRAP_LIMIT, half_sample_masks, poisson_weights, weighted_sums
from scorebench.analysis.stats_tests import MCNEMAR_EXACT_BELOW

__all__ = ["PairSums", "pair_sums", "pair_tests", "permutation_rounds", "PAIRWISE_TESTS", "BOOTSTRAP_DETAIL"]

#: The tests this engine computes for all pairs at once.
PAIRWISE_TESTS = ("bootstrap", "permutation", "t", "mcnemar")
BOOTSTRAP_DETAIL = "Poisson bootstrap (unit weights from key hashes, shared by all pairs)"
_CELLS = 8_388_608  # weight/sign cells (rounds x units) drawn per block
_EXACT_FLIPS = 16  # sign patterns enumerated exactly up to this many units
_PAIR_BLOCK = 4096  # pairs finished per block (rounds x pairs temporaries)


def permutation_rounds(n: int, n_perm: int) -> int:
    """Sign-flip rounds used for ``n`` units: ``n_perm``, capped so that ``n * rounds`` stays
    near :data:`scorebench.core.stats.EXACT_BOOTSTRAP_LIMIT` (at least 199); ``2**n`` patterns
    (exact) for ``n <= 16``.

    Examples
    --------
    >>> permutation_rounds(100_000, 10_000), permutation_rounds(10, 10_000)
    (500, 1024)
    """
    if n <= _EXACT_FLIPS:
        return 2**n
    return int(min(n_perm, max(199, EXACT_BOOTSTRAP_LIMIT // n)))


@dataclass
class PairSums:
    """Sums over some units of a units × systems matrix, enough for every pair's tests.

    Partials over disjoint sets of units add with ``+`` (rounding aside, any split gives the
    same sums); ``boot``/``flips`` are empty when no bootstrap / permutation was asked for.

    Attributes
    ----------
    n : int
        Units.
    sums : (k,) array
        Column sums ``1ᵀS``.
    gram : (k, k) array
        ``SᵀS``.
    boot, weight : (B, k) and (B,) arrays
        Poisson-weighted column sums ``W S`` and total weights ``W 1`` per round.
    flips : (R, k) array
        Sign-flipped column sums ``E S`` per round.
    binary : bool
        Whether every value is 0 or 1 (McNemar applies).

    Examples
    --------
    >>> S = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 0.0]])
    >>> p = pair_sums(S, np.arange(3, dtype=np.uint64), seed=0)
    >>> p.sums.tolist(), p.gram.tolist(), p.binary
    ([2.0, 1.0], [[2.0, 1.0], [1.0, 1.0]], True)
    """

    n: int
    sums: np.ndarray
    gram: np.ndarray
    boot: np.ndarray
    weight: np.ndarray
    flips: np.ndarray
    binary: bool

    def __add__(self, other: PairSums) -> PairSums:
        if self.sums.shape != other.sums.shape or self.boot.shape != other.boot.shape \
                or self.flips.shape != other.flips.shape:
            raise ValueError("PairSums of different systems or rounds cannot be added")
        return PairSums(self.n + other.n, self.sums + other.sums, self.gram + other.gram, self.boot + other.boot,
                        self.weight + other.weight, self.flips + other.flips, self.binary and other.binary)


def pair_sums(matrix: np.ndarray, hashes: np.ndarray, *, seed: int, n_boot: int = 0, n_perm: int = 0,
              cells: int = _CELLS) -> PairSums:
    """The :class:`PairSums` of ``matrix`` (units × systems), units identified by ``hashes``.

    ``n_boot`` Poisson rounds and ``n_perm`` sign-flip rounds are drawn from the unit hashes
    and ``seed`` (pass the *effective* number of flips, :func:`permutation_rounds` of the
    whole table's units, so that partials agree). Work is done ``cells`` weights at a time,
    so memory stays ``O(cells + (B + R) k)`` whatever ``n``.
    """
    S = np.asarray(matrix, dtype=np.float64)
    if S.ndim != 2:
        raise InputError(f"pair_sums: expected a units x systems matrix, got shape {S.shape}")
    n, k = S.shape
    h = np.asarray(hashes, dtype=np.uint64).ravel()
    if h.size != n:
        raise InputError(f"pair_sums: {h.size} unit hashes for {n} units")
    boot, weight = np.zeros((n_boot, k)), np.zeros(n_boot)
    flips = np.zeros((n_perm, k))
    rounds = max(n_boot, n_perm, 1)
    step = max(1, cells // rounds)
    for start in range(0, n, step):
        block, bh = S[start:start + step], h[start:start + step]
        if n_boot:
            w = poisson_weights(bh, seed, n_boot)
            boot += weighted_sums(w, block)
            weight += w.sum(axis=1)
        if n_perm:
            signs = half_sample_masks(bh, seed, n_perm).astype(np.float64)
            flips += weighted_sums(2.0 * signs - 1.0, block)
    gram = weighted_sums(S.T, S) if n else np.zeros((k, k))
    binary = bool(np.isin(S, (0.0, 1.0)).all())
    return PairSums(n, S.sum(axis=0), gram, boot, weight, flips, binary)


def _exact_flips(S: np.ndarray) -> np.ndarray:
    """Column sums under every one of the ``2**n`` sign patterns (``n <= 16``)."""
    n = S.shape[0]
    signs = 1 - 2 * ((np.arange(2**n)[:, None] >> np.arange(n)) & 1)
    return weighted_sums(signs.astype(np.float64), S)


def pair_tests(sums: PairSums, ia: np.ndarray, ib: np.ndarray, tests: Sequence[str], *, ci: float = 0.95,
               alpha: float = 0.05, power: float = 0.8, matrix: np.ndarray | None = None,
               n_boot: int = 0) -> dict[str, Any]:
    """Every pair's mean difference, interval, MDE and tests from the sums of all units.

    Parameters
    ----------
    sums : PairSums
        Of all units (merged partials).
    ia, ib : (P,) int arrays
        Column positions of system a and system b of each pair.
    tests : list of str
        Among :data:`PAIRWISE_TESTS`.
    ci, alpha, power : float
        Interval level; level and power of the minimum detectable effect.
    matrix : (n, k) array, optional
        The matrix itself, when at hand: pairs with (nearly) constant differences get their
        mean and standard deviation recomputed from it (sums and the Gram form lose digits
        there), and for
        ``n <= 16`` the permutation test enumerates all sign patterns.
    n_boot : int
        Bootstrap rounds asked for (0: no interval).

    Returns
    -------
    dict
        ``n, mean_diff, ci_low, ci_high, mde`` (arrays over pairs) and, per test, a tuple
        ``(statistic, p_value, detail)`` of arrays (``detail`` an object array of strings).

    Examples
    --------
    >>> S = np.array([[1, 0], [1, 1], [1, 0], [0, 0], [1, 0]], dtype=float)
    >>> out = pair_tests(pair_sums(S, np.arange(5, dtype=np.uint64), seed=0), np.array([0]), np.array([1]),
    ...                  ["mcnemar", "t"])
    >>> float(out["mean_diff"][0]), float(out["mcnemar"][1][0]), str(out["mcnemar"][2][0])
    (0.6, 0.25, 'exact binomial; discordant 3 vs 0')
    """
    from scipy import stats

    n = sums.n
    if n < 2:
        raise InputError(f"a paired test needs at least 2 paired rows, got {n}")
    ia, ib = np.asarray(ia, dtype=np.intp), np.asarray(ib, dtype=np.intp)
    s, G = sums.sums, sums.gram
    diff_sum = s[ia] - s[ib]
    mean = diff_sum / n
    centred = G - np.outer(s, s) / n
    ss = centred[ia, ia] + centred[ib, ib] - 2.0 * centred[ia, ib]  # sum of squared deviations of d
    ss = np.maximum(ss, 0.0)
    if matrix is not None and not sums.binary:  # the Gram form cancels digits when a and b nearly agree
        redo = np.flatnonzero(ss <= 1e-6 * (centred[ia, ia] + centred[ib, ib]))
        for j in redo:
            d = matrix[:, ia[j]] - matrix[:, ib[j]]
            mean[j] = d.mean()
            ss[j] = float(((d - mean[j]) ** 2).sum())
    sd = np.sqrt(ss / (n - 1))
    se = sd / np.sqrt(n)
    dist = stats.t(n - 1)
    out: dict[str, Any] = {"n": n, "mean_diff": mean,
                           "mde": (dist.ppf(1 - alpha / 2) + dist.ppf(power)) * se}
    if "t" in tests:
        out["t"] = _t_test(mean, se, sd, n, dist)
    if "mcnemar" in tests:
        if not sums.binary:
            raise InputError("test 'mcnemar' needs right/wrong (0/1) contributions")
        out["mcnemar"] = _mcnemar(s[ia] - G[ia, ib], s[ib] - G[ia, ib])
    low = high = np.full(ia.size, np.nan)
    if "bootstrap" in tests or n_boot:
        boot_p, low, high = _bootstrap(sums, ia, ib, mean, ci)
        out["bootstrap"] = (mean, boot_p, np.full(ia.size, BOOTSTRAP_DETAIL, dtype=object))
        if not n_boot:
            low = high = np.full(ia.size, np.nan)
    out["ci_low"], out["ci_high"] = low, high
    if "permutation" in tests:
        out["permutation"] = _permutation(sums, ia, ib, mean, ss, matrix)
    return out


def _t_test(mean: np.ndarray, se: np.ndarray, sd: np.ndarray, n: int, dist: Any) -> tuple:
    """Paired t with n - 1 df; constant differences give t = ±inf (p = 0) or 0 (p = 1)."""
    constant = sd == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(constant, np.where(mean != 0, np.inf, 0.0), mean / se)
    p = np.where(constant, np.where(mean == 0, 1.0, 0.0), 2 * dist.sf(np.abs(t)))
    detail = np.where(constant, "constant differences", f"df={n - 1}").astype(object)
    return t, p, detail


def _mcnemar(b: np.ndarray, c: np.ndarray) -> tuple:
    """McNemar's test of every pair from its discordant counts (the forms of :func:`scorebench.analysis.stats_tests.mcnemar`)."""
    from scipy import stats

    b, c = np.rint(b).astype(np.int64), np.rint(c).astype(np.int64)
    total = b + c
    exact = total < MCNEMAR_EXACT_BELOW
    low = np.minimum(b, c)
    chi = np.where(total > 0, (np.abs(b - c) - 1.0) ** 2 / np.maximum(total, 1), 0.0)
    stat = np.where(total == 0, 0.0, np.where(exact, low.astype(np.float64), chi))
    p = np.where(total == 0, 1.0, np.where(exact, np.minimum(1.0, 2 * stats.binom.cdf(low, np.maximum(total, 1), 0.5)),
                                           stats.chi2.sf(chi, 1)))
    method = np.where(total == 0, "no discordant pairs",
                      np.where(exact, "exact binomial", "chi-square with continuity correction"))
    detail = np.array([f"{m}; discordant {x} vs {y}" for m, x, y in zip(method, b.tolist(), c.tolist())], dtype=object)
    return stat, p, detail


def _pair_blocks(size: int, rounds: int) -> Iterator[slice]:
    step = max(1, min(_PAIR_BLOCK, _CELLS // max(rounds, 1)))
    for start in range(0, size, step):
        yield slice(start, min(size, start + step))


def _bootstrap(sums: PairSums, ia: np.ndarray, ib: np.ndarray, mean: np.ndarray, ci: float) -> tuple:
    """p-values ``(1 + #{|m* - m| >= |m|}) / (B + 1)`` and percentile intervals of every pair."""
    ok = sums.weight > 0
    M = sums.boot[ok] / sums.weight[ok, None]  # rounds x systems: each system's weighted mean
    rounds = M.shape[0]
    p = np.empty(ia.size)
    low, high = np.empty(ia.size), np.empty(ia.size)
    q = (1.0 - ci) / 2.0
    for sl in _pair_blocks(ia.size, rounds):
        R = M[:, ia[sl]] - M[:, ib[sl]]
        m = mean[sl]
        extreme = np.count_nonzero(np.abs(R - m) >= np.abs(m), axis=0)
        p[sl] = (1 + extreme) / (rounds + 1)
        low[sl], high[sl] = np.quantile(R, [q, 1.0 - q], axis=0)
    return p, low, high


def _permutation(sums: PairSums, ia: np.ndarray, ib: np.ndarray, mean: np.ndarray, ss: np.ndarray,
                 matrix: np.ndarray | None) -> tuple:
    """Sign-flip p-values of every pair: the share of rounds with ``|Σ e d| >= |Σ d|``."""
    n = sums.n
    exact = n <= _EXACT_FLIPS
    if exact:
        if matrix is None:
            raise InputError(f"the exact sign-flip test ({n} <= {_EXACT_FLIPS} units) needs the matrix")
        F = _exact_flips(np.asarray(matrix, dtype=np.float64))
    else:
        F = sums.flips
    rounds = F.shape[0]
    observed = np.abs(mean * n)
    # rounding slack for ties: 1e-12 of sum |d|, bounded by sqrt(n sum d^2)
    raw = ss + n * mean**2
    tol = 1e-12 * np.maximum(1.0, np.sqrt(n * raw))
    p = np.empty(ia.size)
    for sl in _pair_blocks(ia.size, rounds):
        extreme = np.count_nonzero(np.abs(F[:, ia[sl]] - F[:, ib[sl]]) >= observed[sl] - tol[sl], axis=0)
        p[sl] = extreme / rounds if exact else (1 + extreme) / (rounds + 1)
    detail = f"exact, {rounds} sign patterns" if exact else f"{rounds} random sign flips"
    return mean, p, np.full(ia.size, detail, dtype=object)
