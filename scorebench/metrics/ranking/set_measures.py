r"""Set-based and cut-off trec_eval measures beyond the core set, on the shared engine.

``set_f`` (trec_eval ``set_F``), ``set_map``, ``set_relative_precision`` (alias
``set_relative_p``; trec_eval ``set_relative_P``), ``relative_precision@k`` (alias ``relative_p@k``;
``relative_P``), ``rprec_mult@m`` (``Rprec_mult``), ``utility`` and ``unjudged@k`` (alias ``unj@k``) /
``judged@k``, ``rr@k``. Every one is a few segment counts on
:class:`~scorebench.metrics.ranking._lists.RankedLists` (the engine of :mod:`.measures`),
defined once with :func:`~scorebench.metrics.ranking.measures.measure` (which derives the
public array function and the ``ranking`` kind's table function from it),
with trec_eval's conventions: relevant means relevance >= ``relevance_level``; a query
without relevant documents scores 0; "retrieved" is the whole run list for the query.

Reference: trec_eval 10.0, NIST (https://github.com/usnistgov/trec_eval), measure files
``m_set_F.c``, ``m_set_map.c``, ``m_set_relative_P.c``, ``m_relative_P.c``,
``m_Rprec_mult.c``, ``m_utility.c``, ``m_unj.c``; Buckley & Voorhees (2004) for judged
fractions.
"""

from __future__ import annotations

import math

import numpy as np

from scorebench.core.errors import InputError
from scorebench.core.registry import NO_EXTERNAL_REFERENCE
from scorebench.metrics.ranking._lists import RankedLists, segment_sum
from scorebench.metrics.ranking.measures import (
    TREC_EVAL,
    TREC_EVAL_TESTS,
    TREC_TESTED,
    check_k,
    measure,
    reciprocal_rank,
    safe_ratio,
)

__all__ = ["set_f", "set_map", "set_relative_precision", "relative_precision", "rprec_mult", "utility",
           "unjudged", "judged", "rr_at_k", "reciprocal_rank_at"]


@measure("set_f", higher_is_better=True, bounds=(0.0, 1.0), params={"beta": 1.0},
         citation="van Rijsbergen (1979), Information Retrieval, ch. 7; " + TREC_EVAL + " set_F",
         tested_against=('ir_measures', 1e-12))
def set_f(lists: RankedLists, *, beta: float = 1.0) -> np.ndarray:
    r"""F-measure of the retrieved set (trec_eval ``set_F``).

    .. math::

        F_\beta = \frac{(1 + \beta^2) P R}{\beta^2 P + R}, \qquad
        P = \frac{|\mathrm{Ret} \cap \mathrm{Rel}|}{|\mathrm{Ret}|},\quad
        R = \frac{|\mathrm{Ret} \cap \mathrm{Rel}|}{|\mathrm{Rel}|}

    (0 when :math:`P = R = 0`).

    Examples
    --------
    >>> set_f([[1, 0, 1, 0]], [[1, 1, 1]]).round(4)
    array([0.5714])
    """
    if not (isinstance(beta, (int, float)) and math.isfinite(beta) and beta >= 0):
        raise InputError(f"set_f: beta must be a finite number >= 0, got {beta!r}")
    hits = lists.count_rel()
    p = safe_ratio(hits, lists.n_ret.astype(np.float64))
    r = safe_ratio(hits, lists.num_rel)
    b2 = float(beta) ** 2
    return safe_ratio((1.0 + b2) * p * r, b2 * p + r)


@measure("set_map", higher_is_better=True, bounds=(0.0, 1.0), citation=TREC_EVAL + " set_map",
         tested_against=(TREC_EVAL_TESTS, 1e-12))
def set_map(lists: RankedLists) -> np.ndarray:
    r"""Set average precision (trec_eval ``set_map``): set precision times set recall,
    :math:`|\mathrm{Ret} \cap \mathrm{Rel}|^2 / (|\mathrm{Ret}|\,|\mathrm{Rel}|)`.

    Examples
    --------
    >>> set_map([[1, 0, 1, 0]], [[1, 1, 1]]).round(4)
    array([0.3333])
    """
    hits = lists.count_rel()
    return safe_ratio(hits * hits, lists.num_rel * lists.n_ret)


@measure("set_relative_precision", aliases=("set_relative_p",),
         higher_is_better=True, bounds=(0.0, 1.0), citation=TREC_EVAL + " set_relative_P",
         tested_against=NO_EXTERNAL_REFERENCE)
def set_relative_precision(lists: RankedLists) -> np.ndarray:
    r"""Set precision relative to the best possible (trec_eval ``set_relative_P``),
    :math:`|\mathrm{Ret} \cap \mathrm{Rel}| / \min(|\mathrm{Ret}|, |\mathrm{Rel}|)`.

    Examples
    --------
    >>> set_relative_precision([[1, 0, 1, 0]], [[1, 1, 1]]).round(4)
    array([0.6667])
    """
    return safe_ratio(lists.count_rel(), np.minimum(lists.n_ret, lists.num_rel))


@measure("relative_precision@k", aliases=("relative_p@k",),
         higher_is_better=True, bounds=(0.0, 1.0), params={"k": None},
         citation=TREC_EVAL + " relative_P",
         tested_against=TREC_TESTED)
def relative_precision(lists: RankedLists, *, k: int | None = None) -> np.ndarray:
    r"""Precision at k relative to the best possible at k (trec_eval ``relative_P``),
    :math:`|\{i \le k : r_i \ge \ell\}| / \min(k, R)`. The cut-off k is required.

    Examples
    --------
    >>> relative_precision([[1, 0, 1, 0]], [[1, 1]], k=3).round(4)
    array([1.])
    """
    k = check_k(k, "relative_precision@k", required=True)
    return safe_ratio(lists.count_rel(k), np.minimum(float(k), lists.num_rel))


@measure("rprec_mult@m", higher_is_better=True, bounds=(0.0, 1.0), params={"m": None},
         citation=TREC_EVAL + " Rprec_mult",
         tested_against=TREC_TESTED)
def rprec_mult(lists: RankedLists, *, m: float | None = None) -> np.ndarray:
    r"""Precision at a multiple of R (trec_eval ``Rprec_mult``): P@c with
    :math:`c = \lfloor mR + 0.9 \rfloor` (trec_eval's rounding; 0 when c = 0); ``m=1`` is
    R-precision. The multiple m is required.

    Examples
    --------
    >>> rprec_mult([[1, 0, 1, 0]], [[1, 1]], m=2.0).round(4)
    array([0.5])
    """
    if m is None or isinstance(m, bool) or not isinstance(m, (int, float)) or not math.isfinite(m) or m <= 0:
        raise InputError(f"rprec_mult@m: the multiple m of R must be a number > 0, e.g. rprec_mult@0.5, got {m!r}")
    cut = np.floor(float(m) * lists.num_rel + 0.9)  # trec_eval's rank: (long)(m R + 0.9)
    hits = segment_sum(lists.is_rel & (lists.pos < cut[lists.seg]), lists.seg, lists.n)
    return safe_ratio(hits, cut)


@measure("utility", higher_is_better=True, bounds=(-math.inf, math.inf),
         params={"a": 1.0, "b": -1.0, "c": 0.0, "d": 0.0},
         citation="Hull & Robertson (1999), TREC-8 filtering track; " + TREC_EVAL + " utility",
         tested_against=((TREC_EVAL_TESTS, 1e-12),
                           ('ir_measures', 1e-12),))
def utility(lists: RankedLists, *, a: float = 1.0, b: float = -1.0, c: float = 0.0, d: float = 0.0) -> np.ndarray:
    r"""Linear set utility (trec_eval ``utility``, default coefficients 1, -1, 0, 0).

    .. math::

        U = a\,|\mathrm{Ret} \cap \mathrm{Rel}| + b\,|\mathrm{Ret} \setminus \mathrm{Rel}|
        + c\,|\mathrm{Rel} \setminus \mathrm{Ret}| + d\,|\mathrm{NonRel} \setminus \mathrm{Ret}|

    where retrieved non-relevant documents include unjudged ones and NonRel is the judged
    non-relevant set.

    Examples
    --------
    >>> utility([[1, 0, 1, 0]], [[1, 1, 1, 0]]).tolist()
    [0.0]
    """
    rel_ret = lists.count_rel()
    nonrel_ret = lists.n_ret - rel_ret
    rel_not = lists.num_rel - rel_ret
    judged_nonrel_ret = segment_sum((lists.rel >= 0) & ~lists.is_rel, lists.seg, lists.n)
    nonrel_not = lists.num_nonrel - judged_nonrel_ret
    return a * rel_ret + b * nonrel_ret + c * rel_not + d * nonrel_not


@measure("unjudged@k", aliases=("unj@k",),
         higher_is_better=None, bounds=(0.0, 1.0), params={"k": None}, citation=TREC_EVAL + " unj",
         tested_against=((TREC_EVAL_TESTS, 1e-12),
                           ('ir_measures', 1e-12),))
def unjudged(lists: RankedLists, *, k: int | None = None) -> np.ndarray:
    r"""Fraction of the top k that the qrels do not judge (trec_eval ``unj``):
    :math:`|\{i \le k : d_i \notin \mathrm{qrels}\}| / k` (the denominator stays k); a negative
    relevance (trec_eval's "in the pool but unjudged") counts as unjudged. k is required.

    Examples
    --------
    >>> unjudged([[1, float("nan"), 0]], [[1, 0]], k=4).tolist()
    [0.25]
    """
    k = check_k(k, "unjudged@k", required=True)
    unknown = ~(lists.rel >= 0)  # not in the qrels (NaN) or judged "in pool, unjudged" (< 0)
    return segment_sum(unknown & (lists.pos < k), lists.seg, lists.n) / float(k)


@measure("judged@k", higher_is_better=None, bounds=(0.0, 1.0), params={"k": None},
         citation="MacAvaney, Macdonald & Ounis (2022), ECIR, ir-measures (Judged@k)",
         tested_against=((TREC_EVAL_TESTS, 5e-05),
                           ('pytrec_eval', 1e-12),))
def judged(lists: RankedLists, *, k: int | None = None) -> np.ndarray:
    r"""Judged fraction of the top k as ir_measures ``Judged@k`` defines it:
    :math:`|\{i \le k : d_i \in \mathrm{qrels}\}| / \min(k, |\mathrm{Ret}|)` (0 with nothing
    retrieved). The denominator differs from trec_eval's ``unj`` (always k), so
    ``judged@k`` equals ``1 - unj@k`` only when at least k documents are retrieved. k is required.

    Examples
    --------
    >>> judged([[1, float("nan"), 0]], [[1, 0]], k=5).round(4)
    array([0.6667])
    """
    k = check_k(k, "judged@k", required=True)
    known = segment_sum((lists.rel >= 0) & (lists.pos < k), lists.seg, lists.n)
    return safe_ratio(known, np.minimum(lists.n_ret, k).astype(np.float64))


@measure("rr@k", higher_is_better=True, bounds=(0.0, 1.0), params={"k": None},
         citation="Voorhees (1999), TREC-8 QA track; ir_measures RR@k (MRR@10 of MS MARCO)",
         tested_against=((TREC_EVAL_TESTS, 5e-05),
                           ('ir_measures', 1e-12),))
def rr_at_k(lists: RankedLists, *, k: int | None = None) -> np.ndarray:
    r"""Reciprocal rank with a cut-off: :math:`1 / r_1` when the first relevant document sits
    at rank :math:`r_1 \le k`, else 0 (``mrr`` is the uncut version; MS MARCO reports MRR@10).
    k is required.

    Examples
    --------
    >>> rr_at_k([[0, 0, 1], [0, 1]], [[1], [1]], k=2)
    array([0. , 0.5])
    """
    k = check_k(k, "rr@k", required=True)
    rr = reciprocal_rank.core(lists)
    return np.where(rr * k >= 1.0, rr, 0.0)  # first relevant document below rank k scores 0


#: The earlier name of :func:`rr_at_k`, still importable.
reciprocal_rank_at = rr_at_k
