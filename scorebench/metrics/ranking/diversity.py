r"""Intent-aware (diversity) measures of the TREC Web track, with ``ndeval``'s definitions.

The qrels carry a subtopic (intent) column: ``qid, subtopic, docid, relevance`` (the
TREC diversity qrels ``qid subtopic docid rel``); a document is relevant to a subtopic
when its relevance is > 0, and a query's intents are its subtopics with at least one
relevant document (N of them). With :math:`J(d, i) \in \{0, 1\}`, :math:`c_i(r)` the
number of documents relevant to intent i ranked above r, :math:`\alpha` = ``alpha`` and
the novelty gain :math:`G(r) = \sum_i J(d_r, i)(1-\alpha)^{c_i(r)}`:

* ``alpha_ndcg@k`` (Clarke et al. 2008): :math:`\sum_{r \le k} G(r)/\log_2(r+1)` over the
  same for the greedy ideal ranking (ndeval's approximation: at each rank the judged
  document of largest gain, ties to the larger document id);
* ``err_ia@k`` (Chapelle et al. 2009/2011): :math:`\frac{1}{N}\sum_i \sum_{r \le k}
  \frac{\alpha J(d_r,i)}{r}\prod_{j<r}(1 - \alpha J(d_j,i))`, divided by
  :math:`\sum_{r \le k} \alpha(1-\alpha)^{r-1}/r` (ndeval's collection-independent
  normalisation); ``nerr_ia@k``: the same over its value for the greedy ideal ranking;
* ``nrbp`` (Clarke, Kolla & Vechtomova 2009): :math:`\frac{1-(1-\alpha)\beta}{N}
  \sum_r \beta^{r-1} G(r)`; ``nnrbp``: over its value for the greedy ideal ranking;
* ``p_ia@k``, ``ap_ia``: precision at k and average precision per intent, averaged over
  intents (Agrawal et al. 2009);
* ``s_recall@k`` (Zhai, Cohen & Lafferty 2003): the fraction of intents covered by the
  top k.

A query without intents scores 0. :func:`~scorebench.metrics.ranking.diversity_kind.diversity_scores` evaluates them all per query
from two tables; the run is ordered score descending, ties by document id descending
(trec_eval / ndeval). The same measures are registered metrics of the ``diversity`` table
kind (:mod:`.diversity_kind`), so ``scorebench.evaluate`` gives them per query and with
query-bootstrap intervals.

Reference: ndeval (TREC Web track 2009-2014, https://github.com/trec-web/trec-web-2014),
through its Python binding pyndeval, ir_measures' provider.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from scorebench.core.errors import InputError

__all__ = ["query_matrices", "measure_value", "check_params", "DIVERSITY_MEASURES"]

DIVERSITY_MEASURES = ("alpha_ndcg", "err_ia", "nerr_ia", "nrbp", "nnrbp", "p_ia", "ap_ia", "s_recall")
#: measures with a cut-off k (spelled ``name@k``)
AT_K = ("alpha_ndcg", "err_ia", "nerr_ia", "p_ia", "s_recall")


def check_params(k: object, alpha: object, beta: object, where: str) -> tuple[int, float, float]:
    """Validated ``(k, alpha, beta)``: k a positive integer, alpha and beta in (0, 1)."""
    if isinstance(k, bool) or not isinstance(k, (int, float, np.integer, np.floating)) \
            or not float(k).is_integer() or k < 1:
        raise InputError(f"{where}: cut-off k must be a positive integer, got {k!r}")
    for name, value in (("alpha", alpha), ("beta", beta)):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
                or not 0.0 < float(value) < 1.0:
            raise InputError(f"{where}: {name} must lie in (0, 1), got {value!r}")
    return int(k), float(alpha), float(beta)


def query_matrices(ranked: list, rel_docs: dict[str, set]) -> tuple[np.ndarray, np.ndarray]:
    """One query's judgments as two 0/1 matrices over its intents (sorted subtopic names).

    ``ranked_j[r, i]``: the document at rank r+1 is relevant to intent i; ``ideal_j[d, i]``:
    the same for every relevant document, documents in decreasing id order (ndeval's tie
    order for the greedy ideal ranking).
    """
    intents = sorted(i for i, docs in rel_docs.items() if docs)
    ranked_j = np.array([[doc in rel_docs[i] for i in intents] for doc in ranked],
                        dtype=np.float64).reshape(len(ranked), len(intents))
    docs = sorted(set().union(*(rel_docs[i] for i in intents)), reverse=True) if intents else []
    ideal_j = np.array([[doc in rel_docs[i] for i in intents] for doc in docs],
                       dtype=np.float64).reshape(len(docs), len(intents))
    return ranked_j, ideal_j


def _novelty_gain(j: np.ndarray, alpha: float) -> np.ndarray:
    seen = np.cumsum(j, axis=0) - j  # c_i(r): relevant to intent i above rank r
    return (j * (1.0 - alpha) ** seen).sum(axis=1)


def _greedy_ideal(ideal_j: np.ndarray, k: int | None, alpha: float) -> np.ndarray:
    """Rows of ``ideal_j`` in the greedy ideal order (largest novelty gain first; ties to
    the earlier row, the larger document id), the first ``k`` of them."""
    n = len(ideal_j) if k is None else min(k, len(ideal_j))
    seen = np.zeros(ideal_j.shape[1])
    free = np.ones(len(ideal_j), dtype=bool)
    order = []
    for _ in range(n):
        best = int(np.argmax(np.where(free, (ideal_j * (1.0 - alpha) ** seen).sum(axis=1), -np.inf)))
        order.append(best)
        free[best] = False
        seen += ideal_j[best]
    return ideal_j[order]


def _dcg(j: np.ndarray, alpha: float) -> float:
    return float((_novelty_gain(j, alpha) / np.log2(np.arange(2, len(j) + 2))).sum())


def _err_raw(j: np.ndarray, alpha: float) -> float:
    if not len(j):
        return 0.0
    stop = alpha * j
    reach = np.vstack([np.ones((1, j.shape[1])), np.cumprod(1.0 - stop, axis=0)[:-1]])
    return float((stop * reach / np.arange(1, len(j) + 1)[:, None]).sum() / j.shape[1])


def _nrbp_raw(j: np.ndarray, alpha: float, beta: float) -> float:
    decay = beta ** np.arange(len(j), dtype=np.float64)
    return float((1.0 - (1.0 - alpha) * beta) / j.shape[1] * (decay * _novelty_gain(j, alpha)).sum())


def _ratio(num: float, den: float) -> float:
    return num / den if den > 0 else 0.0


def _alpha_ndcg(rj, ij, k, alpha, beta):
    return _ratio(_dcg(rj[:k], alpha), _dcg(_greedy_ideal(ij, k, alpha), alpha))


def _err_ia(rj, ij, k, alpha, beta):
    return _err_raw(rj[:k], alpha) / sum(alpha * (1.0 - alpha) ** (r - 1) / r for r in range(1, k + 1))


def _nerr_ia(rj, ij, k, alpha, beta):
    return _ratio(_err_raw(rj[:k], alpha), _err_raw(_greedy_ideal(ij, k, alpha), alpha))


def _nrbp(rj, ij, k, alpha, beta):
    return _nrbp_raw(rj, alpha, beta)


def _nnrbp(rj, ij, k, alpha, beta):
    return _ratio(_nrbp_raw(rj, alpha, beta), _nrbp_raw(_greedy_ideal(ij, None, alpha), alpha, beta))


def _p_ia(rj, ij, k, alpha, beta):
    return float(rj[:k].sum(axis=0).mean() / k)


def _ap_ia(rj, ij, k, alpha, beta):
    prec_at = np.cumsum(rj, axis=0) / np.arange(1, len(rj) + 1)[:, None]
    return float(((prec_at * rj).sum(axis=0) / ij.sum(axis=0)).mean())


def _s_recall(rj, ij, k, alpha, beta):
    return float((rj[:k].sum(axis=0) > 0).mean())


_CORES: dict[str, Callable[..., float]] = {
    "alpha_ndcg": _alpha_ndcg, "err_ia": _err_ia, "nerr_ia": _nerr_ia, "nrbp": _nrbp, "nnrbp": _nnrbp,
    "p_ia": _p_ia, "ap_ia": _ap_ia, "s_recall": _s_recall,
}


def measure_value(name: str, ranked_j: np.ndarray, ideal_j: np.ndarray, *, k: int = 20, alpha: float = 0.5,
                  beta: float = 0.5) -> float:
    """One measure of one query from its :func:`query_matrices` (0 without intents)."""
    if ranked_j.shape[1] == 0:
        return 0.0
    return _CORES[name](ranked_j, ideal_j, k, alpha, beta)


def column_name(measure: str, k: int) -> str:
    """``alpha_ndcg@20`` for a cut-off measure, the bare name otherwise."""
    return f"{measure}@{k}" if measure in AT_K else measure
