r"""Retrieval metrics for embeddings, as used to evaluate deep metric learning.

Every item is a query against all *other* items (leave-one-out, the CUB-200 / Cars-196 /
SOP protocol); an item is relevant to a query when it has the same label. For a query
with :math:`R \ge 1` relevant items and neighbours ranked by decreasing similarity
(:math:`\mathrm{rel}(i) \in \{0, 1\}` at rank :math:`i`):

.. math::

    \mathrm{Recall@}k = \mathbb 1\Big[\sum_{i \le k} \mathrm{rel}(i) > 0\Big],\qquad
    \mathrm{R\text{-}Precision} = \frac{1}{R}\sum_{i \le R} \mathrm{rel}(i),\qquad
    \mathrm{MAP@R} = \frac{1}{R}\sum_{i \le R} \mathrm{rel}(i)\, P@i,

averaged over queries with :math:`R \ge 1` (queries whose label occurs once are left out,
as in pytorch-metric-learning's ``AccuracyCalculator``). Similarities are cosine
(default) or negative Euclidean distance; ties rank the lower item index first.

Queries are processed in chunks, so memory stays at ``chunk_size x n`` similarities plus the
top neighbours kept per query, never ``n x n``. Similarities are screened in float32 (the
matrix product is half the cost) and the candidates that float32 cannot order are re-scored
in float64, so the ranking is exactly the float64 one (see ``_nearest`` for the bound).

Table kind ``embeddings``: one row per item with ``label`` and the features either as
columns ``f0, f1, ..., f{d-1}`` or as one ``embedding`` column holding equal-length vectors.
Each ``system`` (and ``task``) is its own gallery. The registered metrics are per query
(units are the queries that have a relevant item), so bootstrap intervals resample queries
against the fixed gallery; resampling gallery rows would let a duplicated item retrieve its
own copy.

References
----------
Musgrave, Belongie & Lim (2020), "A Metric Learning Reality Check", ECCV (MAP@R).
Jégou, Douze & Schmid (2011), IEEE TPAMI 33(1) (Recall@k for nearest-neighbour search).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.core.registry import register
from scorebench.core.tables import Column, Inputs, hash_labels, unit_frame, start_table, numeric_column, register_kind
from scorebench.core.validation import as_float_array, check_choice, check_finite, describe_rows
from scorebench.metrics.ranking.measures import binary_ndcg

__all__ = ["embedding_recall", "embedding_ndcg", "recall_at_k", "ndcg_at_k", "r_precision", "map_at_r", "retrieval_per_query", "retrieval_scores",
           "RetrievalScores", "extract_embeddings", "SIMILARITIES"]

SIMILARITIES = ("cosine", "euclidean")
_KIND = "embeddings"
_FAMILY = "embedding_retrieval"
_FEATURE = re.compile(r"^f(\d+)$")
_CHUNK_FLOATS = 1 << 22  # similarities held at once: 4M float64 = 32 MiB


# --- validation and the shared neighbour engine ----------------------------------------


def _prepare(labels: Any, embeddings: Any, metric: str) -> tuple[np.ndarray, np.ndarray]:
    check_choice(metric, "metric", SIMILARITIES)
    X = as_float_array(embeddings, "embeddings", ndim=2)
    check_finite(X, "embeddings")
    y = np.asarray(labels)
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise InputError(f"labels: expected one label per embedding row ({X.shape[0]}), got shape {y.shape}")
    if X.shape[0] < 2:
        raise InputError("embeddings: need at least 2 items to retrieve neighbours")
    if pd.isna(y).any():
        raise InputError(f"labels: missing values in {describe_rows(pd.isna(y))}; expected a label per item")
    _, codes = np.unique(y, return_inverse=True)
    if metric == "cosine":
        norms = np.linalg.norm(X, axis=1, keepdims=True)
        zero = norms[:, 0] == 0
        if zero.any():
            raise InputError(f"embeddings: zero vectors in {describe_rows(zero)} have no cosine similarity")
        X = X / norms
    return codes.ravel(), X


def _chunk_rows(n: int, chunk_size: int | None) -> int:
    if chunk_size is None:
        return max(1, min(n, _CHUNK_FLOATS // n))
    if not isinstance(chunk_size, (int, np.integer)) or isinstance(chunk_size, bool) or chunk_size < 1:
        raise InputError(f"chunk_size: expected a positive integer, got {chunk_size!r}")
    return int(chunk_size)


def _top_hits(codes: np.ndarray, X: np.ndarray, queries: np.ndarray, depth: int, metric: str,
              chunk_size: int | None):
    """Yield ``(positions, hits)``: relevance of each query's ``depth`` nearest other items, in rank order.

    ``positions`` index into ``queries`` (row numbers of ``X``). The ranking is by float64
    similarity, ties by lower item index (see :func:`_nearest`).
    """
    n = X.shape[0]
    step = _chunk_rows(n, chunk_size)
    gallery = _Gallery.build(X, depth)
    chunks = [slice(start, min(queries.size, start + step)) for start in range(0, queries.size, step)]
    workers = min(len(chunks), _blas_threads(), 8)  # each thread holds a chunk's scores (~30 MB)
    if workers < 2:
        for positions in chunks:
            yield positions, _chunk_hits(gallery, codes, queries[positions], depth, metric)
        return
    # As many threads as BLAS would use, each running whole chunks on a one-thread BLAS:
    # NumPy releases the GIL in the product, the partition and the sorts, so the selection
    # work runs in parallel too (a threaded BLAS alone only parallelises the product).
    from concurrent.futures import ThreadPoolExecutor

    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"), ThreadPoolExecutor(workers) as pool:
        hits = list(pool.map(lambda positions: _chunk_hits(gallery, codes, queries[positions], depth, metric),
                             chunks))  # small (queries x depth booleans); the limit ends before yielding
    yield from zip(chunks, hits)


def _blas_threads() -> int:
    from threadpoolctl import threadpool_info

    return max((info.get("num_threads", 1) for info in threadpool_info() if info.get("user_api") == "blas"),
               default=1)


def _chunk_hits(gallery: "_Gallery", codes: np.ndarray, rows: np.ndarray, depth: int, metric: str) -> np.ndarray:
    return codes[_nearest(gallery, rows, depth, metric)] == codes[rows, None]


@dataclass(frozen=True)
class _Gallery:
    """The items to search, prepared once: float64 for exact scores, a screening copy in
    float32 (when the scale allows) whose rows are shuffled into blocks, padded to whole blocks.
    """

    X: np.ndarray
    sq_norms: np.ndarray
    screen: np.ndarray  # (blocks * block, d), rows perm[0], perm[1], ..., then zero padding
    perm: np.ndarray
    where: np.ndarray  # where[i]: position of item i in the screening order
    blocks: int
    block: int
    exact_screen: bool

    @classmethod
    def build(cls, X: np.ndarray, depth: int) -> "_Gallery":
        n, d = X.shape
        sq_norms = np.einsum("ij,ij->i", X, X)
        # float32 products would overflow, or lose the error bound's meaning, far from unit scale
        exact = not 1e-30 < sq_norms.min() <= sq_norms.max() < 1e30
        block = max(1, -(-n // min(n, max(4 * depth, 256))))
        blocks = -(-n // block)
        # a fixed shuffle, so that items that sit together (a gallery sorted by label) spread over blocks
        perm = np.random.default_rng(0).permutation(n)
        screen = np.zeros((blocks * block, d), dtype=np.float64 if exact else np.float32)
        screen[:n] = X[perm]
        where = np.empty(n, dtype=np.int64)
        where[perm] = np.arange(n)
        return cls(X, sq_norms, screen, perm, where, blocks, block, exact)


def _ranking_scores(X: np.ndarray, sq_norms: np.ndarray, rows: np.ndarray, cols: np.ndarray,
                    metric: str) -> np.ndarray:
    """float64 ranking scores of (rows, cols) pairs.

    Cosine: the dot product of unit vectors. Euclidean: ``2 x.y - |y|^2``, which ranks the
    neighbours of a fixed query like the negative distance.
    """
    dots = np.einsum("ij,ij->i", X[rows], X[cols])
    return 2.0 * dots - sq_norms[cols] if metric == "euclidean" else dots


def _rank_candidates(local: np.ndarray, cols: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, ...]:
    """Candidates ordered by query row (``local``, already grouped), score desc, item index."""
    order = np.lexsort((-s, local))
    local, cols, s = local[order], cols[order], s[order]
    tied = (local[1:] == local[:-1]) & (s[1:] == s[:-1])
    if tied.any():  # rare (duplicate items): the item index breaks the tie
        order = np.lexsort((cols, -s, local))
        local, cols, s = local[order], cols[order], s[order]
    return local, cols, s


def _nearest(g: _Gallery, rows: np.ndarray, depth: int, metric: str) -> np.ndarray:
    """The ``depth`` nearest other items of each row, by float64 score, ties by lower index.

    Scores against the whole gallery are computed in the screening dtype (float32: half
    the cost of the float64 product). With unit roundoff u = 2**-24 and dimension d, a
    float32 score is within delta = (2d + 10) u (|x| + max|y|)**2 of its float64 value
    (rounding of the dot product, of the inputs and of the norm term); delta = 0 when the
    screen is float64. Let t be a row's depth-th largest score. The gallery is cut into
    blocks (in a fixed shuffled order); the depth-th largest block maximum m is at most t,
    since depth blocks hold an item scoring at least m. Every item scoring at least
    m - 2 delta is a candidate, which contains the true depth nearest items and every
    item tied with them. Candidates whose screening scores lie within 2 delta of each
    other are re-scored in float64; further apart, their order is already the float64
    order. Sorting by (score, index) gives the exact ranking.
    """
    n, d = g.X.shape
    r = rows.size
    Xq = g.X[rows]
    scores = Xq.astype(g.screen.dtype) @ g.screen.T
    if metric == "euclidean":
        scores *= 2.0
        scores[:, :n] -= g.sq_norms[g.perm].astype(scores.dtype)
    scores[:, n:] = -np.inf  # padding
    scores[np.arange(r), g.where[rows]] = -np.inf  # an item never retrieves itself
    # block b holds screening positions b, b + blocks, b + 2 blocks, ...: reducing over a
    # middle axis is an elementwise maximum of rows (vectorised), over a short last axis it is not
    tiles = scores.reshape(r, g.block, g.blocks)
    block_max = tiles.max(axis=1)
    line = np.partition(block_max, g.blocks - depth, axis=1)[:, g.blocks - depth].astype(np.float64)
    tol = None
    if not g.exact_screen:
        norms = np.sqrt(g.sq_norms)
        tol = 2.0 * (2 * d + 10) * 2.0**-24 * (norms[rows] + norms.max()) ** 2
        line -= tol
    cut = line.astype(scores.dtype)
    cut = np.where(cut > line, np.nextafter(cut, -np.inf), cut)  # round the line down, never up
    hot_row, hot_block = np.divmod(np.flatnonzero(block_max >= cut[:, None]), g.blocks)
    values = tiles[hot_row, :, hot_block]  # (hot blocks, block)
    pair, slot = np.divmod(np.flatnonzero(values >= cut[hot_row, None]), g.block)
    local = hot_row[pair]
    cols = g.perm[slot * g.blocks + hot_block[pair]]
    s = values[pair, slot].astype(np.float64)
    local, cols, s = _rank_candidates(local, cols, s)
    if tol is not None:
        close = (local[1:] == local[:-1]) & (s[:-1] - s[1:] <= tol[local[1:]])
        ambiguous = np.zeros(s.size, dtype=bool)
        ambiguous[:-1] |= close
        ambiguous[1:] |= close
        if ambiguous.any():
            s[ambiguous] = _ranking_scores(g.X, g.sq_norms, rows[local[ambiguous]], cols[ambiguous], metric)
            local, cols, s = _rank_candidates(local, cols, s)
    first = np.concatenate([[0], np.cumsum(np.bincount(local, minlength=r))[:-1]])
    return cols[first[:, None] + np.arange(depth)]  # each row has at least depth candidates


def _recall(hits: np.ndarray, R: np.ndarray, k: int) -> np.ndarray:
    return hits[:, :k].any(axis=1).astype(np.float64)


def _r_precision(hits: np.ndarray, R: np.ndarray, k: int) -> np.ndarray:
    within = np.arange(hits.shape[1]) < R[:, None]
    return (hits & within).sum(axis=1) / np.maximum(R, 1)


def _map_at_r(hits: np.ndarray, R: np.ndarray, k: int) -> np.ndarray:
    within = np.arange(hits.shape[1]) < R[:, None]
    precision = np.cumsum(hits, axis=1) / np.arange(1, hits.shape[1] + 1)
    return (precision * (hits & within)).sum(axis=1) / np.maximum(R, 1)


_MEASURES: dict[str, Callable[[np.ndarray, np.ndarray, int], np.ndarray]] = {
    "recall": _recall, "r_precision": _r_precision, "map_at_r": _map_at_r, "ndcg": binary_ndcg,  # the ranking DCG
}
_CUTOFF_MEASURES = ("recall", "ndcg")  # measures of the top k only


def retrieval_per_query(labels: Any, embeddings: Any, *, measure: str, k: int = 1,
                        metric: str = "cosine", queries: Any = None,
                        chunk_size: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per-query values of a retrieval measure and the mask of queries that count.

    Parameters
    ----------
    labels : array-like, shape (n,)
    embeddings : array-like, shape (n, d)
        The gallery; every query is one of its rows and never retrieves itself.
    measure : {"recall", "r_precision", "map_at_r", "ndcg"}
    k : int
        Cut-off of ``"recall"`` and ``"ndcg"``.
    metric : {"cosine", "euclidean"}
    queries : array-like of int, optional
        Rows used as queries (default: all rows, each once).
    chunk_size : int, optional
        Queries per chunk (default: about 4M similarities at a time).

    Returns
    -------
    values, counted : ndarray
        One entry per query: its value (0 where it does not count) and whether it counts
        (False for queries with no other item of their label).
    """
    check_choice(measure, "measure", tuple(_MEASURES))
    codes, X = _prepare(labels, embeddings, metric)
    n = X.shape[0]
    queries = np.arange(n) if queries is None else np.asarray(queries, dtype=np.int64).ravel()
    if queries.size and (queries.min() < 0 or queries.max() >= n):
        raise InputError(f"queries: row numbers must lie in [0, {n - 1}]")
    R = (np.bincount(codes)[codes] - 1)[queries]
    if measure in _CUTOFF_MEASURES:
        if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or not 1 <= k <= n - 1:
            raise InputError(f"k: expected an integer in [1, {n - 1}] (items minus the query), got {k!r}")
        depth = int(k)
    else:
        depth = int(max(R.max(initial=0), 1))
    values = np.zeros(queries.size)
    for positions, hits in _top_hits(codes, X, queries, depth, metric, chunk_size):
        values[positions] = _MEASURES[measure](hits, R[positions], int(k))
    counted = R > 0
    return np.where(counted, values, 0.0), counted


def _mean(labels: Any, embeddings: Any, **options: Any) -> float:
    values, counted = retrieval_per_query(labels, embeddings, **options)
    if not counted.any():
        raise InputError("labels: every label occurs once, so no query has a relevant item to retrieve")
    return float(values[counted].mean())


def _per_query_table(measure: str) -> Callable[..., np.ndarray]:
    """``table_fn`` of a retrieval metric: per-query values against each query's own gallery."""

    def table_fn(arrays: dict[str, Any], **params: Any) -> np.ndarray:
        query, gallery = arrays["query"], arrays["gallery"]
        values = np.empty(query.size)
        for group in np.unique(gallery[query]):
            rows = np.flatnonzero(gallery == group)
            mine = gallery[query] == group
            local = np.searchsorted(rows, query[mine])
            values[mine], _ = retrieval_per_query(arrays["labels"][rows], arrays["X"][rows],
                                                  measure=measure, queries=local, **params)
        return values

    return table_fn


@dataclass(frozen=True)
class RetrievalScores:
    """All retrieval measures of one embedding set, from a single neighbour pass.

    Attributes
    ----------
    recall : dict
        ``{k: Recall@k}``.
    r_precision, map_at_r : float
    n_queries : int
        Queries that count (label occurring at least twice).
    """

    recall: dict[int, float]
    r_precision: float
    map_at_r: float
    n_queries: int


def retrieval_scores(labels: Any, embeddings: Any, *, ks: Sequence[int] = (1, 2, 4, 8), metric: str = "cosine",
                     chunk_size: int | None = None) -> RetrievalScores:
    """Recall@k for each ``k`` in ``ks``, R-precision and MAP@R in one chunked pass.

    Same definitions as :func:`embedding_recall`, :func:`r_precision` and :func:`map_at_r`; one pass
    over the similarities instead of one per metric (the usual metric-learning report).

    Examples
    --------
    >>> X = [[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9], [0.6, 0.55]]
    >>> s = retrieval_scores([0, 0, 1, 1, 1], X, ks=(1, 2))
    >>> s.recall, round(s.r_precision, 4), round(s.map_at_r, 4)
    ({1: 0.8, 2: 1.0}, 0.9, 0.85)
    """
    codes, X = _prepare(labels, embeddings, metric)
    n = X.shape[0]
    ks = [int(k) for k in ks]
    if not ks or any(not 1 <= k <= n - 1 for k in ks):
        raise InputError(f"ks: expected integers in [1, {n - 1}] (items minus the query), got {list(ks)!r}")
    R = np.bincount(codes)[codes] - 1
    counted = R > 0
    if not counted.any():
        raise InputError("labels: every label occurs once, so no query has a relevant item to retrieve")
    depth = int(max(max(ks), R.max()))
    queries = np.arange(n)
    values = {name: np.zeros(n) for name in ("r_precision", "map_at_r", *(f"recall@{k}" for k in ks))}
    for positions, hits in _top_hits(codes, X, queries, depth, metric, chunk_size):
        r = R[positions]
        values["r_precision"][positions] = _r_precision(hits, r, 0)
        values["map_at_r"][positions] = _map_at_r(hits, r, 0)
        for k in ks:
            values[f"recall@{k}"][positions] = _recall(hits, r, k)
    mean = {name: float(v[counted].mean()) for name, v in values.items()}
    return RetrievalScores(recall={k: mean[f"recall@{k}"] for k in ks}, r_precision=mean["r_precision"],
                           map_at_r=mean["map_at_r"], n_queries=int(counted.sum()))


# --- public metrics --------------------------------------------------------------------

_CITATION_MAPR = "Musgrave, Belongie & Lim (2020), A Metric Learning Reality Check, ECCV"
#: Registry keywords that every leave-one-out retrieval metric shares.
_ENTRY = dict(family=_FAMILY, kind=_KIND, inputs=("labels", "X"), higher_is_better=True, bounds=(0.0, 1.0),
              per_row=True, tested_against=('scikit-learn', 1e-12))
#: ... and those of the two metrics cut at R (no k; Musgrave et al.'s protocol).
_AT_R = dict(params={"metric": "cosine", "chunk_size": None}, citation=_CITATION_MAPR, **_ENTRY)


@register("embedding_recall@k", table_fn=_per_query_table("recall"), params={"k": 1, "metric": "cosine", "chunk_size": None},
          citation="Jégou, Douze & Schmid (2011), IEEE TPAMI 33(1); Song et al. (2016), CVPR", **_ENTRY)
def embedding_recall(labels: Any, embeddings: Any, *, k: int = 1, metric: str = "cosine",
                chunk_size: int | None = None) -> float:
    r"""Recall@k of leave-one-out retrieval: share of queries with a same-label item in their top k.

    .. math:: \mathrm{Recall@}k = \frac{1}{|Q|}\sum_{q \in Q} \mathbb 1\big[\exists\, i \le k:\ y_{\pi_q(i)} = y_q\big]

    over queries :math:`Q` whose label occurs at least twice (Recall@1 = precision@1).

    Examples
    --------
    >>> X = [[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9], [0.6, 0.55]]
    >>> embedding_recall([0, 0, 1, 1, 1], X, k=1)
    0.8
    """
    return _mean(labels, embeddings, measure="recall", k=k, metric=metric, chunk_size=chunk_size)


@register("embedding_ndcg@k", table_fn=_per_query_table("ndcg"), params={"k": 10, "metric": "cosine", "chunk_size": None},
          citation="Järvelin & Kekäläinen (2002), Cumulated gain-based evaluation of IR techniques, ACM TOIS 20(4)",
          **_ENTRY)
def embedding_ndcg(labels: Any, embeddings: Any, *, k: int = 10, metric: str = "cosine",
              chunk_size: int | None = None) -> float:
    r"""NDCG@k of leave-one-out retrieval with binary relevance (same label).

    .. math:: \mathrm{NDCG@}k = \frac{1}{|Q|}\sum_{q \in Q}
        \frac{\sum_{i \le k} \mathrm{rel}_q(i) / \log_2(i + 1)}{\sum_{i \le \min(k, R_q)} 1 / \log_2(i + 1)}

    over queries :math:`Q` with :math:`R_q \ge 1` same-label items; neighbours ranked by
    similarity, ties by lower item index.

    Examples
    --------
    >>> X = [[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9], [0.6, 0.55]]
    >>> round(embedding_ndcg([0, 0, 1, 1, 1], X, k=2), 4)
    0.8774
    """
    return _mean(labels, embeddings, measure="ndcg", k=k, metric=metric, chunk_size=chunk_size)


@register("r_precision", table_fn=_per_query_table("r_precision"), **_AT_R)
def r_precision(labels: Any, embeddings: Any, *, metric: str = "cosine", chunk_size: int | None = None) -> float:
    r"""R-precision of leave-one-out retrieval: precision at rank R, the number of same-label items.

    .. math:: \mathrm{RP} = \frac{1}{|Q|}\sum_{q \in Q} \frac{1}{R_q}\sum_{i \le R_q} \mathrm{rel}_q(i)

    Examples
    --------
    >>> X = [[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9], [0.6, 0.55]]
    >>> round(r_precision([0, 0, 1, 1, 1], X), 4)
    0.9
    """
    return _mean(labels, embeddings, measure="r_precision", metric=metric, chunk_size=chunk_size)


@register("map_at_r", table_fn=_per_query_table("map_at_r"), **_AT_R)
def map_at_r(labels: Any, embeddings: Any, *, metric: str = "cosine", chunk_size: int | None = None) -> float:
    r"""MAP@R: mean average precision over the top R neighbours (Musgrave et al., 2020).

    .. math:: \mathrm{MAP@R} = \frac{1}{|Q|}\sum_{q \in Q} \frac{1}{R_q}\sum_{i \le R_q} \mathrm{rel}_q(i)\,P_q@i

    Unlike :func:`r_precision` it also rewards the order inside the top R: each hit counts
    with the precision at its rank.

    Examples
    --------
    Item 4 (label 1) has two relevant items; its nearest neighbour has label 0 and the next
    one label 1, so R-precision gives it 1/2 and MAP@R :math:`\tfrac12 \cdot P@2 = 1/4`; the
    four other queries find only relevant items in their top R and score 1 on both:

    >>> X = [[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9], [0.6, 0.55]]
    >>> labels = [0, 0, 1, 1, 1]
    >>> r_precision(labels, X), round(map_at_r(labels, X), 4)
    (0.9, 0.85)
    """
    return _mean(labels, embeddings, measure="map_at_r", metric=metric, chunk_size=chunk_size)


# --- table kind ------------------------------------------------------------------------


@register_kind(_KIND, columns=(Column("label", "label", "the item's class; items of one label are relevant to "
                                     "each other"),
                              Column("f<i>", "number", "feature i (f0 .. f{d-1})", required=False,
                                     pattern=_FEATURE.pattern[1:-1]),
                              Column("embedding", "vector", "the feature vector in one cell, instead of f<i>",
                                     required=False)),
               whole_groups=True)
def extract_embeddings(df: pd.DataFrame, *, nan_policy: str = "raise") -> Inputs:
    """One embedded item per row: its class ``label`` and its feature vector.

    Units are the *queries*: the items whose label occurs at least twice within their
    ``system``/``task`` group. Every item of a group (lone labels included) stays in that
    group's gallery (``consts``), so bootstrap intervals resample queries against a fixed
    gallery instead of duplicating gallery items.
    """
    features = sorted((c for c in df.columns if isinstance(c, str) and _FEATURE.match(c)),
                      key=lambda c: int(c[1:]))
    if not features and "embedding" not in df.columns:
        raise InputError("kind 'embeddings': expected feature columns f0, f1, ... or an 'embedding' column "
                         "holding one vector per row; found neither")
    df, key = start_table(df, _KIND, ["label", *(features or ["embedding"])], nan_policy)
    missing = df["label"].isna().to_numpy()
    if missing.any():
        raise InputError(f"column 'label': missing values in {describe_rows(missing, df.index)}")
    X = np.column_stack([numeric_column(df, c) for c in features]) if features else _vectors(df["embedding"])
    groups = [c for c in ("system", "task") if c in df.columns]
    gallery = (df.groupby(groups, sort=False, dropna=False).ngroup().to_numpy() if groups
               else np.zeros(len(df), dtype=np.int64))
    labels, _ = pd.factorize(df["label"], sort=True)
    pair_codes, _ = pd.factorize(pd.Series(list(zip(gallery, labels))), sort=False)
    is_query = np.bincount(pair_codes)[pair_codes] > 1
    if not is_query.any():
        raise InputError("kind 'embeddings': every label occurs once within its system/task, so no item "
                         "has a relevant neighbour to retrieve")
    query = np.flatnonzero(is_query)
    # hashed by the query's label and vector, not its row position (partition-independent weights)
    content = {"label": hash_labels(df["label"].iloc[query]).astype(np.float64), "X": X[query]}
    return Inputs(unit_frame(df.iloc[query], key), {"query": query},
                  {"labels": labels.astype(np.int64), "X": X, "gallery": gallery.astype(np.int64)}, key=key,
                  content=content)


def _vectors(column: pd.Series) -> np.ndarray:
    try:
        rows = [np.asarray(v, dtype=np.float64).ravel() for v in column]
    except (TypeError, ValueError):
        raise InputError("column 'embedding': expected a numeric vector in every row") from None
    lengths = np.array([r.size for r in rows])
    bad = lengths != lengths[0]
    if bad.any():
        raise InputError(f"column 'embedding': vectors of length {lengths[bad][0]} in "
                         f"{describe_rows(bad, column.index)}; expected length {lengths[0]} in every row")
    X = np.vstack(rows)
    check_finite(X, "column 'embedding'", labels=column.index)
    return X


# The earlier names of embedding_recall and embedding_ndcg, still importable.
recall_at_k, ndcg_at_k = embedding_recall, embedding_ndcg
