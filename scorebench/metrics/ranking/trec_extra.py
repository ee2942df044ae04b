r"""trec_eval 10.0's sampled-pool, geometric-mean and experimental gain measures.

``infap`` (``infAP``), ``gm_map``, ``gm_bpref``, ``ndcg_rel``, ``rndcg`` (``Rndcg``),
``g`` (``G``), ``bin_g`` (``binG``) and ``rbp_resid`` on the shared engine
(:class:`~scorebench.metrics.ranking._lists.RankedLists`), vectorised over queries. The
trec_eval loops are transcribed into segment operations: every per-rank quantity of a loop
(documents seen so far, DCG so far, the ideal gain reached) is a per-query cumulative sum.

Qrels conventions (trec_eval's): a negative relevance marks a document *in the pool but
not judged* (for infAP: not in the judged sample); a document absent from the qrels is
*not in the pool*. Gains are the relevance grades (``gain`` maps grades to gains as in
:func:`~scorebench.metrics.ranking.measures.ndcg`); negative grades gain 0.

Reference: trec_eval 10.0, NIST (https://github.com/usnistgov/trec_eval), measure files
``m_infap.c``, ``m_gm_map.c``, ``m_gm_bpref.c``, ``m_ndcg_rel.c``, ``m_Rndcg.c``, ``m_G.c``,
``m_binG.c``, ``m_rbp_resid.c``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from scorebench.core.errors import InputError
from scorebench.core.registry import register
from scorebench.metrics.ranking._lists import RankedLists, segment_cumsum, segment_offsets, segment_sum
from scorebench.metrics.ranking.measures import (TREC_EVAL, TREC_EVAL_TESTS, TREC_TESTED, average_precision, bpref,
                                                 exclusive_cumsum, gain_function, ideal_gains, lists_table_fn,
                                                 log2_discount, measure, ranked_lists, safe_ratio)

__all__ = ["infap", "gm_map", "gm_bpref", "ndcg_rel", "rndcg", "g", "bin_g", "rbp_resid", "GM_MIN"]

#: trec_eval's MIN_GEO_MEAN: per-query values are floored here before the logarithm.
GM_MIN = 0.00001
_INFAP_EPSILON = 0.00001  # trec_eval's INFAP_EPSILON


# --- helpers ------------------------------------------------------------------------------


def _fsum(values: np.ndarray, seg: np.ndarray, n: int) -> np.ndarray:
    """:func:`segment_sum` as float64 even with nothing to sum (bincount then gives int64)."""
    return segment_sum(values, seg, n).astype(np.float64, copy=False)


class _Ideal:
    """Positive gains of each query's judged documents in decreasing order (the ideal
    ranking) with per-query cumulative sums, looked up at any rank: ``gains``, the query
    ``seg`` and 0-based ideal rank ``pos`` of each (from :func:`.measures.ideal_gains`), and
    each query's ``count`` and ``offsets`` in them."""

    def __init__(self, lists: RankedLists, gain_of: Any) -> None:
        self.gains, self.seg, self.pos = ideal_gains(lists, gain_of)
        self.count = np.bincount(self.seg, minlength=lists.n).astype(np.int64)
        self.offsets = segment_offsets(self.count)

    def cumsum(self, values: np.ndarray) -> np.ndarray:
        return segment_cumsum(values, self.offsets, self.count)

    def at(self, cum: np.ndarray, seg: np.ndarray, upto: np.ndarray) -> np.ndarray:
        """``cum`` of query ``seg`` summed over its first ``upto`` ideal documents (capped at
        the query's ideal length; 0 for ``upto`` = 0)."""
        n = np.minimum(upto, self.count[seg])
        out = np.zeros(len(seg))
        some = n > 0
        out[some] = cum[self.offsets[seg[some]] + n[some] - 1]
        return out


def _gains(lists: RankedLists, gain: Any, name: str) -> tuple[np.ndarray, _Ideal]:
    """The gain of each retrieved document and the query's ideal ranking, under ``gain``."""
    gain_of = gain_function(gain, name)
    return gain_of(lists.rel), _Ideal(lists, gain_of)


def _inclusive(values: np.ndarray, lists: RankedLists) -> np.ndarray:
    return segment_cumsum(values, lists.offsets, lists.n_ret)


def _last(values: np.ndarray, lists: RankedLists) -> np.ndarray:
    """Per query, the value at its last retrieved rank (0 for an empty list)."""
    out = np.zeros(lists.n)
    some = lists.n_ret > 0
    out[some] = values[lists.offsets[some] + lists.n_ret[some] - 1]
    return out


def _geometric(values: np.ndarray) -> float:
    if values.size == 0:
        return math.nan
    return float(np.exp(np.mean(np.log(np.maximum(values, GM_MIN)))))


def _check_p(p: Any, name: str) -> float:
    if isinstance(p, bool) or not isinstance(p, (int, float, np.floating)) or not 0.0 < float(p) < 1.0:
        raise InputError(f"{name}: persistence p must lie in (0, 1), got {p!r}")
    return float(p)


def _set_level(name: str, *, citation: str, tested_against: Any) -> Callable[[Callable[..., float]], Callable[..., float]]:
    """:func:`.measures.measure` for a set-level (``per_row=False``) measure, which ``measure``
    does not offer: registers ``core(lists) -> float`` once, deriving the public array function
    ``fn(ranked, judged, *, relevance_level=1)`` and the table function from it."""

    def decorate(core: Callable[..., float]) -> Callable[..., float]:
        def fn(ranked: Any, judged: Any, *, relevance_level: float = 1) -> float:
            return core(ranked_lists(ranked, judged, relevance_level))

        for attr in ("__name__", "__qualname__", "__doc__", "__module__"):
            setattr(fn, attr, getattr(core, attr))
        fn.core = core
        return register(name, core=fn, family="ranking", kind="ranking", higher_is_better=True, bounds=(0.0, 1.0),
                        per_row=False, table_fn=lists_table_fn(core), citation=citation, tested_against=tested_against)

    return decorate


# --- metrics: each defined once, on the shared lists ---------------------------------------


@measure("infap", higher_is_better=True, bounds=(0.0, 1.0),
         citation="Yilmaz & Aslam (2006), CIKM, 'Estimating average precision with incomplete and "
                  "imperfect judgments'; " + TREC_EVAL + " infAP", tested_against=(TREC_EVAL_TESTS, 1e-12))
def infap(lists: RankedLists) -> np.ndarray:
    r"""Inferred average precision for a sampled judgment pool (trec_eval ``infAP``).

    For the relevant document at 0-based rank :math:`j`, with :math:`r` relevant (this one
    included), :math:`n` judged non-relevant and :math:`u` pooled-but-unjudged documents
    ranked above it, the expected precision is 1 at :math:`j = 0` and otherwise

    .. math::

        E[P_j] = \frac{1}{j+1} + \frac{j}{j+1}\cdot\frac{r-1+n+u}{j}\cdot
        \frac{r-1+\epsilon}{r-1+n+2\epsilon},\qquad \epsilon = 10^{-5};

    infAP is :math:`\frac{1}{R}\sum_j E[P_j]`. Documents absent from the qrels (NaN: not in
    the pool) count as non-relevant through the :math:`j` in the middle factor; a negative
    relevance marks a pooled document left out of the judged sample. With a complete
    judgment (no negative grades, no unjudged documents) infAP equals AP.

    Examples
    --------
    >>> infap([[1, float("nan"), 1]], [[1, 1]]).round(4)
    array([0.8333])
    """
    rel = lists.rel
    nonrel = (rel >= 0) & ~lists.is_rel
    unjudged = rel < 0  # in the pool, not in the judged sample (NaN: not in the pool, skipped)
    mask = lists.is_rel
    j = lists.pos[mask].astype(np.float64)
    r = lists.rel_cum[mask].astype(np.float64)  # relevant so far, this one included
    n = exclusive_cumsum(nonrel, lists)[mask].astype(np.float64)
    u = exclusive_cumsum(unjudged, lists)[mask].astype(np.float64)
    term = np.ones(len(j))
    later = j > 0
    jl, rl, nl, ul = j[later], r[later], n[later], u[later]
    term[later] = 1.0 / (jl + 1.0) + (jl / (jl + 1.0)) * ((rl - 1 + nl + ul) / jl) * \
        ((rl - 1 + _INFAP_EPSILON) / (rl - 1 + nl + 2 * _INFAP_EPSILON))
    return safe_ratio(_fsum(term, lists.seg[mask], lists.n), lists.num_rel)


@_set_level("gm_map", citation="Robertson (2006), CIKM, 'On GMAP'; " + TREC_EVAL + " gm_map", tested_against=TREC_TESTED)
def gm_map(lists: RankedLists) -> float:
    r"""Geometric mean of average precision over queries (trec_eval ``gm_map``, GMAP).

    .. math::

        \mathrm{GMAP} = \exp\Big(\frac{1}{Q}\sum_{q} \log \max(\mathrm{AP}_q, 10^{-5})\Big)

    The floor :math:`10^{-5}` is trec_eval's ``MIN_GEO_MEAN`` (:data:`GM_MIN`), so a query
    with AP = 0 does not zero the mean. Set-level: one value for the whole table.

    Examples
    --------
    >>> round(gm_map([[1, 0], [0, 1]], [[1], [1]]), 6)
    0.707107
    """
    return _geometric(average_precision.core(lists))


@_set_level("gm_bpref", citation="Buckley & Voorhees (2004), SIGIR; " + TREC_EVAL + " gm_bpref", tested_against=TREC_TESTED)
def gm_bpref(lists: RankedLists) -> float:
    r"""Geometric mean of bpref over queries (trec_eval ``gm_bpref``):
    :math:`\exp(\frac{1}{Q}\sum_q \log \max(\mathrm{bpref}_q, 10^{-5}))`. Set-level.

    Examples
    --------
    >>> round(gm_bpref([[1, 0], [0, 1]], [[1, 0], [1, 0]]), 6)
    0.003162
    """
    return _geometric(bpref.core(lists))


@measure("ndcg_rel", higher_is_better=True, bounds=(0.0, 1.0),
         params={"gain": "linear"},
         citation="Järvelin & Kekäläinen (2002), ACM TOIS 20(4); " + TREC_EVAL + " ndcg_rel", tested_against=(TREC_EVAL_TESTS, 1e-12))
def ndcg_rel(lists: RankedLists, *, gain: Any = "linear") -> np.ndarray:
    r"""NDCG averaged over the relevant documents (trec_eval ``ndcg_rel``, experimental).

    .. math::

        \frac{1}{R_g}\Big(\sum_{i:\,g_i>0} \frac{\mathrm{DCG@}i}{\mathrm{IDCG@}\min(i, R_g)}
        + (R_g - R_g^{\mathrm{ret}})\,\frac{\mathrm{DCG}}{\mathrm{IDCG}}\Big)

    where :math:`R_g` counts the judged documents with positive gain, :math:`R_g^{ret}` those
    retrieved, and DCG/IDCG without a cut-off cover the whole list (a relevant document
    not retrieved scores the final NDCG). Gains as in ``ndcg@k``.

    Examples
    --------
    >>> ndcg_rel([[0, 1]], [[1]]).round(4)
    array([0.6309])
    """
    g, ideal = _gains(lists, gain, "ndcg_rel")
    icum = ideal.cumsum(ideal.gains * log2_discount(ideal.pos))
    rcum = _inclusive(g * log2_discount(lists.pos), lists)
    idcg_here = ideal.at(icum, lists.seg, lists.pos + 1)
    hit = g > 0
    total = _fsum(safe_ratio(rcum[hit], idcg_here[hit]), lists.seg[hit], lists.n)
    found = _fsum(hit, lists.seg, lists.n)
    idcg_all = ideal.at(icum, np.arange(lists.n), ideal.count)
    # relevant documents not retrieved score the final DCG / final ideal DCG
    total += (ideal.count - found) * safe_ratio(_last(rcum, lists), idcg_all)
    return safe_ratio(total, ideal.count.astype(np.float64))


@measure("rndcg", higher_is_better=True, bounds=(0.0, 1.0),
         params={"gain": "linear"},
         citation="Järvelin & Kekäläinen (2002), ACM TOIS 20(4); " + TREC_EVAL + " Rndcg", tested_against=(TREC_EVAL_TESTS, 1e-12))
def rndcg(lists: RankedLists, *, gain: Any = "linear") -> np.ndarray:
    r"""NDCG averaged at the R-level points (trec_eval ``Rndcg``, experimental).

    With the judged gains in decreasing order, the R levels are the ranks where the ideal
    gain drops (5 documents of gain 3 and 3 of gain 2 give levels 5 and 8): Rndcg is the
    mean of NDCG@c over those levels c, plus NDCG over the whole list when the list runs
    at least two ranks past the last positive ideal gain (trec_eval's loop). 0 without
    relevant documents.

    Examples
    --------
    >>> rndcg([[2, 0, 1]], [[2, 1]]).round(4)
    array([0.8801])
    """
    g, ideal = _gains(lists, gain, "rndcg")
    ipos = ideal.pos
    icum = ideal.cumsum(ideal.gains * log2_discount(ipos))
    rcum = _inclusive(g * log2_discount(lists.pos), lists)
    iseg = ideal.seg
    # R-level points: where the ideal gain changes, and the end of the positive gains
    change = np.zeros(len(ideal.gains), dtype=bool)
    change[1:] = (ideal.gains[1:] != ideal.gains[:-1]) & (ipos[1:] > 0)
    cut_seg = np.concatenate([iseg[change], np.flatnonzero(ideal.count > 0)])
    cut = np.concatenate([ipos[change], ideal.count[ideal.count > 0]])
    results = np.zeros(len(cut))
    upto = np.minimum(cut, lists.n_ret[cut_seg])
    some = upto > 0
    results[some] = rcum[lists.offsets[cut_seg[some]] + upto[some] - 1]
    total = _fsum(results / ideal.at(icum, cut_seg, cut), cut_seg, lists.n)
    points = np.bincount(cut_seg, minlength=lists.n).astype(np.float64)
    # trec_eval adds the whole list once more when it runs past the ideal gains by 2+ ranks
    extra = (ideal.count > 0) & (lists.n_ret > ideal.count + 1)
    idcg_all = ideal.at(icum, np.arange(lists.n), ideal.count)
    total[extra] += _last(rcum, lists)[extra] / idcg_all[extra]
    points[extra] += 1
    return np.where(lists.num_rel > 0, safe_ratio(total, points), 0.0)


@measure("g", higher_is_better=True, bounds=(0.0, 1.0),
         params={"gain": "linear"},
         citation=TREC_EVAL + " G (normalized gain, experimental measure of 4/10/2008)", tested_against=('trec_eval 10.0 (G measure)', 1e-12))
def g(lists: RankedLists, *, gain: Any = "linear") -> np.ndarray:
    r"""Normalised gain G (trec_eval ``G``, experimental).

    .. math::

        G = \frac{1}{\sum_j g^*_j}\sum_{i:\,g_i \ne 0}
            \frac{g_i}{\log_2\big(2 + \sum_{j \le i}\max(g^*_j, 1) - \sum_{j \le i} g_j\big)}

    with :math:`g_i` the gain retrieved at rank i and :math:`g^*_j` the ideal gain at rank j
    (0 past the judged positive gains).

    Examples
    --------
    >>> g([[0, 1]], [[1]]).round(4)
    array([0.6309])
    """
    g, ideal = _gains(lists, gain, "g")
    # cost of rank i: the ideal gain there, at least 1 (trec_eval's min_cost)
    extra_cost = ideal.cumsum(np.maximum(ideal.gains, 1.0) - 1.0)
    cost = (lists.pos + 1.0) + ideal.at(extra_cost, lists.seg, lists.pos + 1)
    seen = _inclusive(g, lists)
    hit = g != 0
    part = g[hit] / np.log2(2.0 + cost[hit] - seen[hit])
    ideal_total = ideal.at(ideal.cumsum(ideal.gains), np.arange(lists.n), ideal.count)
    return safe_ratio(_fsum(part, lists.seg[hit], lists.n), ideal_total)


@measure("bin_g", higher_is_better=True, bounds=(0.0, 1.0), citation=TREC_EVAL + " binG (binary G, experimental)", tested_against=(TREC_EVAL_TESTS, 1e-12))
def bin_g(lists: RankedLists) -> np.ndarray:
    r"""Binary G (trec_eval ``binG``):
    :math:`\frac{1}{R}\sum_{\text{relevant retrieved } d} 1 / \log_2(2 + n_d)`, with
    :math:`n_d` the non-relevant (or unjudged) documents ranked above d.

    Examples
    --------
    >>> bin_g([[0, 1, 1]], [[1, 1]]).round(4)
    array([0.6309])
    """
    mask = lists.is_rel
    part = 1.0 / np.log2(3.0 + lists.pos[mask] - lists.rel_cum[mask])
    return safe_ratio(_fsum(part, lists.seg[mask], lists.n), lists.num_rel)


@measure("rbp_resid", higher_is_better=None, bounds=(0.0, 1.0),
         params={"p": 0.8},
         citation="Moffat & Zobel (2008), ACM TOIS 27(1), sec. 4; " + TREC_EVAL + " rbp_resid", tested_against=TREC_TESTED)
def rbp_resid(lists: RankedLists, *, p: float = 0.8) -> np.ndarray:
    r"""Residual of rank-biased precision: the most RBP could rise if every unknown
    document had full gain.

    .. math::

        \mathrm{RBP_{resid}} = (1-p)\sum_{i \le n,\ d_i \text{ unjudged}} p^{i-1} + p^{n}

    over the n retrieved documents (the :math:`p^n` term is the unseen tail). ``rbp`` +
    ``rbp_resid`` bounds RBP from above. trec_eval's ``rbp_resid`` (default p = 0.9) prints
    0 when no retrieved document is unjudged, dropping the tail term :math:`p^n`; here the
    tail is always included, as in Moffat & Zobel's definition.

    Examples
    --------
    >>> rbp_resid([[1, float("nan"), 0]], [[1, 0]], p=0.5).round(4)
    array([0.375])
    """
    p = _check_p(p, "rbp_resid")
    unjudged = ~(lists.rel >= 0)  # NaN (not in the pool) or negative (pooled, unjudged)
    weight = np.power(p, lists.pos)
    return np.power(p, lists.n_ret) + (1.0 - p) * _fsum(weight * unjudged, lists.seg, lists.n)
