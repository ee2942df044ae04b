"""Exact ranking metrics with trec_eval 10.0 semantics, registered for the ``ranking`` kind.

Each metric is defined once, as a *core* ``core(lists: RankedLists, **params) -> per-query
array`` on the shared engine (:mod:`._lists`), decorated with :func:`measure`, which derives
and registers both of its forms:

* the ``table_fn`` every engine calls with the ``ranking`` kind's arrays, and
* the public numpy function (the decorated name) taking per-query lists, for array use::

      ndcg(ranked, judged, k=10)

  where ``ranked[i]`` holds the relevance of query i's retrieved documents in ranked order
  (NaN = not judged) and ``judged[i]`` the relevance of all its judged documents.

Conventions shared by all metrics (those of trec_eval): a document is relevant when its
relevance is >= ``relevance_level`` (default 1; trec_eval ``-l``); relevance <= 0 is never
relevant; the gain-based metrics (DCG/NDCG, RBP, ERR) use the graded relevance and ignore
``relevance_level``, as trec_eval does; a query without relevant documents scores 0.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from scorebench.core.errors import InputError
from scorebench.core.registry import register
from scorebench.metrics.ranking._lists import RankedLists, Segments, gather_segments, segment_sum

__all__ = [
    "ndcg", "dcg", "average_precision", "reciprocal_rank", "p_at_k", "r_at_k", "rprec",
    "bpref", "success", "err", "rbp", "iprec_at_recall", "eleven_point_average",
    "num_ret", "num_rel", "num_rel_ret",
]

_FAMILY = "ranking"
_KIND = "ranking"
_ELEVEN = tuple(i / 10 for i in range(11))


# --- helpers ------------------------------------------------------------------------------


def lists_table_fn(core: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
    """The table form of a measure ``core(lists, **params)``: reads the kind's arrays into
    :class:`~scorebench.metrics.ranking._lists.RankedLists` and calls ``core``."""
    def table_fn(arrays: Mapping[str, Any], **params: Any) -> np.ndarray:
        return core(RankedLists.from_arrays(arrays), **params)

    table_fn.__name__ = f"{core.__name__}_table"
    return table_fn


def ranked_lists(ranked: Any, judged: Any, relevance_level: float) -> RankedLists:
    """:class:`~scorebench.metrics.ranking._lists.RankedLists` of per-query ranked ids and
    ``{id: relevance}`` judgments (the array form of every measure)."""
    return RankedLists.from_sequences(ranked, judged, relevance_level=relevance_level)


def check_k(k: Any, name: str, *, required: bool = False) -> int | None:
    """The cut-off ``k`` of measure ``name`` as a positive int (``None`` stays ``None`` unless
    ``required``); one error naming the measure otherwise."""
    if k is None:
        if required:
            raise InputError(f"{name}: a cut-off k is required, e.g. {name.split('@')[0]}@10")
        return None
    if isinstance(k, bool) or not isinstance(k, (int, float, np.integer, np.floating)) \
            or not float(k).is_integer() or k < 1:
        raise InputError(f"{name}: cut-off k must be a positive integer, got {k!r}")
    return int(k)


def safe_ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den with 0 where den == 0 (a query without relevant documents scores 0)."""
    out = np.zeros(np.broadcast(num, den).shape)
    np.divide(num, den, out=out, where=den != 0)
    return out


def log2_discount(pos: np.ndarray) -> np.ndarray:
    r"""DCG discount :math:`1 / \log_2(r + 1)` of the 0-based ranks ``pos`` (``r = pos + 1``)."""
    return 1.0 / np.log2(pos + 2.0)


def binary_ndcg(hits: np.ndarray, num_rel: np.ndarray, k: int) -> np.ndarray:
    r"""NDCG@k of binary relevance held densely: ``hits[q, i]`` is 1 when query q's item at
    rank i + 1 is relevant, ``num_rel[q]`` its count of relevant items (at least 1 counts).

    The gains and discounts of :func:`ndcg`, :math:`\sum_{i \le k} h_i / \log_2(i + 1)`
    over the ideal :math:`\sum_{i \le \min(R, k)} 1 / \log_2(i + 1)`, for callers that
    rank items themselves (embedding retrieval) instead of reading qrels.

    Examples
    --------
    >>> binary_ndcg(np.array([[0, 1, 1]]), np.array([2]), 3).round(4)
    array([0.6934])
    """
    discount = log2_discount(np.arange(k, dtype=np.float64))
    ideal = np.cumsum(discount)[np.clip(num_rel, 1, k) - 1]
    return (hits[:, :k] * discount).sum(axis=1) / ideal


def gain_function(gain: Any, name: str) -> Callable[[np.ndarray], np.ndarray]:
    """Map relevance to gain; unjudged (NaN) and negative relevance gain 0."""
    if isinstance(gain, str):
        if gain == "linear":
            return lambda rel: np.where(rel > 0, rel, 0.0)
        if gain == "exponential":
            return lambda rel: np.where(rel > 0, np.exp2(np.where(rel > 0, rel, 0.0)) - 1.0, 0.0)
        raise InputError(f"{name}: gain must be 'linear', 'exponential' or a mapping "
                         f"{{relevance: gain}}, got {gain!r}")
    if not isinstance(gain, Mapping) or not gain:
        raise InputError(f"{name}: gain must be 'linear', 'exponential' or a non-empty mapping "
                         f"{{relevance: gain}}, got {gain!r}")
    levels, values = [], []
    for level, value in gain.items():
        try:
            level_f, value_f = float(level), float(value)
        except (TypeError, ValueError):
            raise InputError(f"{name}: gain mapping entries must be numbers, got {level!r}: {value!r}") from None
        if not (math.isfinite(level_f) and math.isfinite(value_f)) or level_f < 0:
            raise InputError(f"{name}: gain mapping needs finite gains for relevance levels >= 0 "
                             f"(negative relevance is unjudged), got {level!r}: {value!r}")
        levels.append(level_f)
        values.append(value_f)

    def mapped(rel: np.ndarray) -> np.ndarray:
        out = np.where(rel >= 0, rel, 0.0)  # levels not in the mapping keep gain = level
        for level, value in zip(levels, values):
            out[rel == level] = value
        return out

    return mapped


def ideal_gains(lists: RankedLists, gain_of: Callable[[np.ndarray], np.ndarray], k: int | None = None, *,
           monotone: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positive gains of the judged documents in ideal (decreasing) order:
    (gains, query index, 0-based ideal rank), the top ``k`` ranks only when k is given.

    The judged lists are sorted by decreasing relevance, so with a ``monotone`` gain (never
    lower for a higher relevance) the top k are the first k of each list: only those are read.
    """
    if monotone and k is not None:
        count = np.minimum(lists.judged_count, k)
        g = gain_of(lists.judged[gather_segments(lists.judged_offsets, count)])
        keep = g > 0  # the positive gains lead each list
        g, seg = g[keep], np.repeat(np.arange(lists.n, dtype=np.int64), count)[keep]
    else:
        g = gain_of(lists.judged)
        keep = g > 0
        g, seg = g[keep], lists.judged_seg[keep]
        # re-sort only when the gain is not monotone in relevance (a custom mapping such as
        # {1: 3, 2: 9, 3: 1})
        if g.size and np.any((np.diff(g) > 0) & (np.diff(seg) == 0)):
            order = np.lexsort((-g, seg))
            g, seg = g[order], seg[order]
    pos = Segments(np.bincount(seg, minlength=lists.n), len(g)).positions
    if k is not None:
        top = pos < k
        g, seg, pos = g[top], seg[top], pos[top]
    return g, seg, pos


def _dcg_parts(lists: RankedLists, k: int | None, gain: Any, name: str) -> tuple[np.ndarray, np.ndarray]:
    gain_of = gain_function(gain, name)
    head = lists.head(k)
    dcg_value = segment_sum(gain_of(head.rel) * log2_discount(head.pos), head.seg, lists.n)
    ig, iseg, ipos = ideal_gains(lists, gain_of, k, monotone=isinstance(gain, str))  # linear, exponential
    ideal = segment_sum(ig * log2_discount(ipos), iseg, lists.n)
    return dcg_value, ideal


def exclusive_cumsum(values: np.ndarray, lists: RankedLists) -> np.ndarray:
    """Per-query sum of ``values`` strictly above each rank."""
    dtype = np.int64 if values.dtype == bool else np.float64
    total = np.cumsum(values, dtype=dtype)
    if total.size == 0:
        return total
    inclusive_before = np.zeros(lists.n, dtype=dtype)
    nonempty = lists.n_ret > 0
    first = lists.offsets[nonempty]
    inclusive_before[nonempty] = total[first] - values[first]
    return total - values - np.repeat(inclusive_before, lists.n_ret)


# --- metrics: each defined once, on the shared lists ---------------------------------------

#: The reference implementation the TREC measures follow, for citations.
TREC_EVAL = "trec_eval 10.0, NIST (https://github.com/usnistgov/trec_eval)"
#: The reference the measures checked against trec_eval's own test outputs name in ``tested_against``
#: (tests/metrics/ranking/test_ranking_trec_eval.py reads the data there).
TREC_EVAL_TESTS = "trec_eval 10.0 test outputs (../shared/reference/trec_eval)"
#: ``tested_against`` of a measure that matches those outputs to their printed precision (4 decimals).
TREC_TESTED = (TREC_EVAL_TESTS, 5e-05)
_ARRAY_ARGS = (inspect.Parameter("ranked", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation="Any"),
               inspect.Parameter("judged", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation="Any"))
_LEVEL = inspect.Parameter("relevance_level", inspect.Parameter.KEYWORD_ONLY, default=1, annotation="float")


def measure(name: str, *, higher_is_better: bool | None, bounds: tuple[float, float] = (0.0, 1.0),
            params: Mapping[str, Any] | None = None, citation: str = "",
            tested_against: Any = (), aliases: tuple[str, ...] = ()) -> Callable[[Callable], Callable]:
    """Register a ranking metric from its one definition, ``core(lists, **params) -> per query``.

    From the core it derives and registers the two forms: the public array function
    ``fn(ranked, judged, *, **params, relevance_level=1)`` (returned, with the core's
    docstring and name; the core stays reachable as ``fn.core``) and the table function the
    ``ranking`` kind's arrays go through. Both run the same core on the same
    :class:`._lists.RankedLists`, so the array and table values agree by construction.
    ``aliases`` are the field's other spellings of ``name`` (``("map@k",)``).
    """

    def decorate(core: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
        def fn(ranked: Any, judged: Any, *, relevance_level: float = 1, **kwargs: Any) -> np.ndarray:
            return core(ranked_lists(ranked, judged, relevance_level), **kwargs)

        for attr in ("__name__", "__qualname__", "__doc__", "__module__"):
            setattr(fn, attr, getattr(core, attr))
        options = list(inspect.signature(core).parameters.values())[1:]
        fn.__signature__ = inspect.Signature([*_ARRAY_ARGS, *options, _LEVEL], return_annotation="np.ndarray")
        fn.core = core
        return register(name, core=fn, family=_FAMILY, kind=_KIND, higher_is_better=higher_is_better, bounds=bounds,
                        params=params, table_fn=lists_table_fn(core), citation=citation, tested_against=tested_against,
                        aliases=aliases)

    return decorate


@measure("ndcg@k", higher_is_better=True, bounds=(0.0, 1.0),
         params={"k": None, "gain": "linear"},
         citation="Järvelin & Kekäläinen (2002), ACM TOIS 20(4); " + TREC_EVAL + " ndcg_cut / ndcg",
         tested_against=TREC_TESTED)
def ndcg(lists: RankedLists, *, k: int | None = None, gain: Any = "linear") -> np.ndarray:
    r"""Normalised discounted cumulative gain per query (trec_eval ``ndcg_cut.k``; ``ndcg`` without k).

    .. math::

        \mathrm{DCG@k} = \sum_{i=1}^{k} \frac{g(r_i)}{\log_2(i + 1)}, \qquad
        \mathrm{NDCG@k} = \mathrm{DCG@k} / \mathrm{IDCG@k}

    where :math:`g` is the gain of the relevance :math:`r_i` at rank :math:`i` and IDCG is
    the DCG of the judged documents in decreasing order of gain (all judged documents, not
    only the retrieved ones). ``gain="linear"`` uses :math:`g(r)=r` (trec_eval),
    ``"exponential"`` :math:`g(r)=2^r-1` (Burges et al., 2005), and a mapping
    ``{relevance: gain}`` sets gains per level like trec_eval's ``-m ndcg.1=3,2=9``
    (levels not listed keep gain = level). Unjudged and negative relevance gain 0;
    a query with IDCG = 0 scores 0.

    Parameters
    ----------
    ranked : sequence of 1-D arrays
        Per query, relevance of the retrieved documents in ranked order (NaN = unjudged).
    judged : sequence of 1-D arrays
        Per query, relevance of every judged document (the qrels).
    k : int, optional
        Cut-off; None evaluates the whole list.
    gain : {"linear", "exponential"} or mapping
    relevance_level : float
        Not used by NDCG (gains are graded), accepted for a uniform signature.

    Returns
    -------
    ndarray
        One value per query.

    Examples
    --------
    >>> ndcg([[3, 2, 0, 1]], [[3, 2, 1, 0]], k=3).round(4)
    array([0.895])
    """
    k = check_k(k, "ndcg@k")
    dcg_value, ideal = _dcg_parts(lists, k, gain, "ndcg@k")
    return safe_ratio(dcg_value, ideal)


@measure("dcg@k", higher_is_better=True, bounds=(0.0, math.inf),
         params={"k": None, "gain": "linear"},
         citation="Järvelin & Kekäläinen (2002), ACM TOIS 20(4); " + TREC_EVAL + " dcg",
         tested_against=TREC_TESTED)
def dcg(lists: RankedLists, *, k: int | None = None, gain: Any = "linear") -> np.ndarray:
    r"""Discounted cumulative gain per query, :math:`\sum_{i \le k} g(r_i) / \log_2(i+1)`.

    Gains as in :func:`ndcg`; ``judged`` is accepted for a uniform signature.

    Examples
    --------
    >>> dcg([[3, 2, 0, 1]], [[3, 2, 1, 0]], k=2).round(4)
    array([4.2619])
    """
    k = check_k(k, "dcg@k")
    return _dcg_parts(lists, k, gain, "dcg@k")[0]


@measure("average_precision@k", aliases=("map@k",), higher_is_better=True, bounds=(0.0, 1.0),
         params={"k": None},
         citation="Buckley & Voorhees (2000), SIGIR; " + TREC_EVAL + " map / map_cut",
         tested_against=TREC_TESTED)
def average_precision(lists: RankedLists, *, k: int | None = None) -> np.ndarray:
    r"""Average precision per query (``map``; ``map@k`` is trec_eval's ``map_cut.k``).

    .. math::

        \mathrm{AP@k} = \frac{1}{R} \sum_{i \le k,\ r_i \ge \ell} P@i

    with :math:`R` the number of relevant judged documents (retrieved or not) and
    :math:`\ell` the relevance level. The table value (mean over queries) is MAP.

    Examples
    --------
    >>> average_precision([[1, 0, 1]], [[1, 0, 1, 1]]).round(4)
    array([0.5556])
    """
    head = lists.head(check_k(k, "map@k"))
    prec = head.hit_rank / (head.hit_pos + 1.0)
    return safe_ratio(segment_sum(prec, head.hit_seg, lists.n), lists.num_rel)


@measure("reciprocal_rank", aliases=("mrr",), higher_is_better=True, bounds=(0.0, 1.0),
         citation="Voorhees (1999), TREC-8 QA track; " + TREC_EVAL + " recip_rank",
         tested_against=TREC_TESTED)
def reciprocal_rank(lists: RankedLists) -> np.ndarray:
    r"""Reciprocal rank of the first relevant document, :math:`1 / \min\{i : r_i \ge \ell\}`
    (0 when none is retrieved); its mean over queries is MRR.

    Examples
    --------
    >>> reciprocal_rank([[0, 0, 2], [1]], [[2], [1]])
    array([0.33333333, 1.        ])
    """
    found = lists.hit_count > 0
    out = np.zeros(lists.n)
    out[found] = 1.0 / (lists.hit_pos[lists.hit_first[found]] + 1.0)
    return out


#: The record precision and recall at k share: a cut-off, checked against trec_eval and pytrec_eval.
_PRECISION_RECALL: dict[str, Any] = dict(higher_is_better=True, bounds=(0.0, 1.0), params={"k": None},
                                         tested_against=((TREC_EVAL_TESTS, 5e-05), ('pytrec_eval', 1e-12)))


@measure("p@k", citation=TREC_EVAL + " P / set_P", **_PRECISION_RECALL)
def p_at_k(lists: RankedLists, *, k: int | None = None) -> np.ndarray:
    r"""Precision at cut-off k, :math:`|\{i \le k : r_i \ge \ell\}| / k` (trec_eval ``P.k``:
    the denominator stays k when fewer documents are retrieved). Without k, the precision
    of the whole retrieved set (``set_P``).

    Examples
    --------
    >>> p_at_k([[1, 0, 1]], [[1, 1]], k=5)
    array([0.4])
    """
    k = check_k(k, "p@k")
    den = lists.n_ret.astype(np.float64) if k is None else np.full(lists.n, float(k))
    return safe_ratio(lists.count_rel(k), den)


@measure("r@k", citation=TREC_EVAL + " recall / set_recall", **_PRECISION_RECALL)
def r_at_k(lists: RankedLists, *, k: int | None = None) -> np.ndarray:
    r"""Recall at cut-off k, :math:`|\{i \le k : r_i \ge \ell\}| / R` (0 when R = 0); without
    k, the recall of the whole retrieved set (``set_recall``).

    Examples
    --------
    >>> r_at_k([[1, 0, 1]], [[1, 1, 1, 0]], k=2).round(4)
    array([0.3333])
    """
    k = check_k(k, "r@k")
    return safe_ratio(lists.count_rel(k), lists.num_rel)


@measure("rprec", higher_is_better=True, bounds=(0.0, 1.0), citation=TREC_EVAL + " Rprec",
         tested_against=TREC_TESTED)
def rprec(lists: RankedLists) -> np.ndarray:
    r"""R-precision: precision at rank R, the number of relevant judged documents.

    Examples
    --------
    >>> rprec([[1, 0, 1]], [[1, 1, 0]])
    array([0.5])
    """
    mask = lists.is_rel & (lists.pos < lists.num_rel[lists.seg])
    return safe_ratio(segment_sum(mask, lists.seg, lists.n), lists.num_rel)


# The ranking functions' earlier names, still importable; the registry names (p@k, r@k, rprec)
# follow the functions, as the generative precision/recall and the embedding r_precision own those names.
precision, recall, r_precision = p_at_k, r_at_k, rprec


@measure("bpref", higher_is_better=True, bounds=(0.0, 1.0),
         citation="Buckley & Voorhees (2004), SIGIR, 'Retrieval evaluation with incomplete information'; "
                  + TREC_EVAL + " bpref",
                  tested_against=((TREC_EVAL_TESTS, 1e-09),
                                    ('ranx', 1e-09),))
def bpref(lists: RankedLists) -> np.ndarray:
    r"""Binary preference, trec_eval's definition.

    .. math::

        \mathrm{bpref} = \frac{1}{R} \sum_{\text{relevant retrieved } d}
            \left(1 - \frac{\min(n_d, R)}{\min(N, R)}\right)

    where :math:`n_d` counts judged non-relevant documents ranked above :math:`d`, N the
    judged non-relevant documents of the query (a term is 1 when :math:`n_d = 0`).
    Unjudged documents (NaN, or negative relevance) are skipped.

    Examples
    --------
    >>> bpref([[1, 0, float("nan"), 1]], [[1, 1, 0, 0]])
    array([0.75])
    """
    rel = lists.rel
    nonrel = (rel >= 0) & (rel < lists.relevance_level)
    nonrel_above = exclusive_cumsum(nonrel, lists)
    mask = lists.is_rel
    seg = lists.seg[mask]
    r = lists.num_rel[seg]
    above = nonrel_above[mask].astype(np.float64)
    denom = np.minimum(lists.num_nonrel[seg], r)
    frac = np.ones(len(seg))
    some = above > 0
    frac[some] = 1.0 - np.minimum(above[some], r[some]) / denom[some]
    return safe_ratio(segment_sum(frac, seg, lists.n), lists.num_rel)


@measure("success@k", higher_is_better=True, bounds=(0.0, 1.0),
         params={"k": None}, citation=TREC_EVAL + " success",
         tested_against=TREC_TESTED)
def success(lists: RankedLists, *, k: int | None = None) -> np.ndarray:
    r"""Success (hit) at k: 1 when a relevant document is in the top k, else 0.

    Examples
    --------
    >>> success([[0, 1], [0, 0]], [[1], [1]], k=2)
    array([1., 0.])
    """
    k = check_k(k, "success@k")
    return (lists.count_rel(k) > 0).astype(np.float64)


@measure("err@k", higher_is_better=True, bounds=(0.0, 1.0),
         params={"k": None, "max_grade": None},
         citation="Chapelle, Metzler, Zhang & Grinspan (2009), CIKM, 'Expected reciprocal rank for graded relevance'",
         tested_against=TREC_TESTED)
def err(lists: RankedLists, *, k: int | None = None, max_grade: float | None = None) -> np.ndarray:
    r"""Expected reciprocal rank (cascade model) at cut-off k.

    .. math::

        \mathrm{ERR@k} = \sum_{i=1}^{k} \frac{1}{i} R_i \prod_{j<i} (1 - R_j), \qquad
        R_i = \frac{2^{g_i} - 1}{2^{g_{\max}}}

    with :math:`g_i = \max(r_i, 0)` and :math:`g_{\max}` = ``max_grade`` (default: the
    largest relevance in the judgments, over all queries). On tables, the ``ranking`` kind's
    ``max_grade`` option sets it (e.g. 4, the scale of gdeval); by default it is the largest
    grade of the whole qrels on both the pandas and the Dask engine (which computes it once,
    before partitioning).

    Examples
    --------
    >>> err([[2, 1]], [[2, 1]]).round(4)
    array([0.7812])
    """
    k = check_k(k, "err@k")
    top = lists.max_relevance if max_grade is None else float(max_grade)
    if not math.isfinite(top) or top < 0:
        raise InputError(f"err@k: max_grade must be a finite number >= 0, got {max_grade!r}")
    sub = lists.head(k)
    grade = np.where(sub.rel > 0, sub.rel, 0.0)
    if np.any(grade > top):
        raise InputError(f"err@k: relevance {grade.max()!r} exceeds max_grade {top!r}")
    stop = (np.exp2(grade) - 1.0) / np.exp2(top)
    # probability the user reaches each rank: product of (1 - stop) above it
    log_continue = np.log1p(-np.minimum(stop, 1.0 - 1e-300))
    reach = np.exp(exclusive_cumsum(log_continue, sub))
    return segment_sum(reach * stop / (sub.pos + 1.0), sub.seg, lists.n)


@measure("rbp", higher_is_better=True, bounds=(0.0, 1.0),
         params={"p": 0.8},
         citation="Moffat & Zobel (2008), ACM TOIS 27(1); " + TREC_EVAL + " rbp",
         tested_against=((TREC_EVAL_TESTS, 1e-12), ('ranx', 1e-09),))
def rbp(lists: RankedLists, *, p: float = 0.8) -> np.ndarray:
    r"""Rank-biased precision with persistence p.

    .. math::

        \mathrm{RBP} = (1 - p) \sum_{i \ge 1} g_i\, p^{i-1}

    with binary relevance :math:`g_i \in \{0, 1\}`; graded relevance is scaled into
    [0, 1] by the query's top grade, as trec_eval does. trec_eval's default is p = 0.9
    (``rbp`` there equals ``rbp`` here with ``p=0.9``); ours is 0.8.

    Examples
    --------
    >>> rbp([[1, 0, 1]], [[1, 1]], p=0.5)
    array([0.625])
    """
    if not (0.0 < float(p) < 1.0):
        raise InputError(f"rbp: persistence p must lie in (0, 1), got {p!r}")
    top = np.zeros(lists.n)
    has = lists.judged_count > 0
    top[has] = lists.judged[lists.judged_offsets[has]]  # judged is sorted decreasing
    scale = np.maximum(top, 1.0)  # trec_eval rescales gains into [0, 1] when a grade exceeds 1
    rel = lists.rel
    g = np.where(rel > 0, rel, 0.0) / scale[lists.seg]
    return (1.0 - p) * segment_sum(g * np.power(float(p), lists.pos), lists.seg, lists.n)


@measure("iprec_at_recall@r", higher_is_better=True, bounds=(0.0, 1.0),
         params={"r": None}, citation=TREC_EVAL + " iprec_at_recall",
         tested_against=((TREC_EVAL_TESTS, 1e-12),
                           ('pytrec_eval', 1e-12),))
def iprec_at_recall(lists: RankedLists, *, r: float | None = None) -> np.ndarray:
    r"""Interpolated precision at recall level r (trec_eval ``iprec_at_recall``).

    .. math::

        \mathrm{iP}(r) = \max_{i \ge i_c} P@i, \qquad c = \lfloor rR + 1/2 \rfloor

    where :math:`i_c` is the rank of the c-th relevant retrieved document (0 when fewer
    than c are retrieved; :math:`c = 0` takes the maximum over all ranks).

    Examples
    --------
    >>> iprec_at_recall([[1, 0, 1, 0]], [[1, 1]], r=1.0).round(4)
    array([0.6667])
    """
    if r is None or not (0.0 <= float(r) <= 1.0):
        raise InputError(f"iprec_at_recall@r: recall level r in [0, 1] is required, got {r!r}")
    # trec_eval 10.0: the c-th relevant document, c = floor(r * R + 1/2), marks recall r
    # (checked against every iprec_at_recall value in trec_eval's own test outputs);
    # interpolated precision = max precision at any rank at or below it.
    cut = np.floor(float(r) * lists.num_rel + 0.5)
    mask = lists.is_rel & (lists.rel_cum >= cut[lists.seg])
    prec = lists.rel_cum[mask] / (lists.pos[mask] + 1.0)
    out = np.zeros(lists.n)
    np.maximum.at(out, lists.seg[mask], prec)
    return out


@measure("eleven_point_average", aliases=("11pt_avg",), higher_is_better=True, bounds=(0.0, 1.0),
         params={"levels": _ELEVEN}, citation=TREC_EVAL + " 11pt_avg",
         tested_against=TREC_TESTED)
def eleven_point_average(lists: RankedLists, *, levels: Any = _ELEVEN) -> np.ndarray:
    r"""Mean interpolated precision over recall levels (default 0, 0.1, ..., 1):
    :math:`\frac{1}{|L|}\sum_{r \in L} \mathrm{iP}(r)` (see :func:`iprec_at_recall`).

    Examples
    --------
    >>> eleven_point_average([[1, 0, 1, 0]], [[1, 1]]).round(4)
    array([0.9091])
    """
    levels = tuple(levels)
    if not levels:
        raise InputError("11pt_avg: levels must name at least one recall level")
    return np.mean([iprec_at_recall.core(lists, r=level) for level in levels], axis=0)


#: The record of the two counts that describe a run and its judgments rather than rank
#: systems (a larger count is neither better nor worse): trec_eval's num_ret and num_rel.
_INPUT_COUNT: dict[str, Any] = dict(higher_is_better=None, bounds=(0.0, math.inf), tested_against=TREC_TESTED)


@measure("num_ret", citation=TREC_EVAL + " num_ret", **_INPUT_COUNT)
def num_ret(lists: RankedLists) -> np.ndarray:
    """Number of retrieved documents per query (trec_eval reports the sum; the table value
    here is the mean per query). A query that retrieved nothing counts 0.

    Examples
    --------
    >>> num_ret([[1, 0, 1], []], [[1], [1]])
    array([3., 0.])
    """
    return lists.n_ret.astype(np.float64)


@measure("num_rel", citation=TREC_EVAL + " num_rel", **_INPUT_COUNT)
def num_rel(lists: RankedLists) -> np.ndarray:
    """Number of relevant judged documents per query, retrieved or not.

    Relevant means relevance >= ``relevance_level``; this is the R that recall,
    R-precision and average precision divide by.

    Examples
    --------
    The document of relevance 2 is not retrieved, yet counts; at level 2 only it does:

    >>> num_rel([[1, 0]], [[1, 2, 0]])
    array([2.])
    >>> num_rel([[1, 0]], [[1, 2, 0]], relevance_level=2)
    array([1.])
    """
    return lists.num_rel.astype(np.float64)


@measure("num_rel_ret", higher_is_better=True, bounds=(0.0, math.inf), citation=TREC_EVAL + " num_rel_ret",
         tested_against=TREC_TESTED)
def num_rel_ret(lists: RankedLists) -> np.ndarray:
    """Number of relevant documents retrieved per query.

    Examples
    --------
    >>> num_rel_ret([[1, 0, 2]], [[1, 2, 0]])
    array([2.])
    """
    return lists.count_rel(None)


# the cores sibling modules build on (set_measures' rr@k, trec_extra's gm_map and gm_bpref)
_rr_core, _ap_core, _bpref_core = reciprocal_rank.core, average_precision.core, bpref.core
