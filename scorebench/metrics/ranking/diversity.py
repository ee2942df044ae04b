r"""Intent-aware (diversity) measures of the TREC Web track, with ``ndeval``'s definitions.

The qrels carry a subtopic (intent) column: ``qid, subtopic, docid, relevance`` (the
TREC diversity qrels ``qid subtopic docid rel``); a document is relevant to a subtopic
when its relevance is > 0, and a query's intents are its subtopics with at least one
relevant document (N of them). With :math:`J(d, i) \in \{0, 1\}`, :math:`c_i(r)` the
number of documents relevant to intent i ranked above r, and :math:`\alpha` = ``alpha``:

* ``alpha_ndcg@k`` (Clarke et al. 2008): DCG@k of the gains
  :math:`\sum_i J(d_r, i)(1-\alpha)^{c_i(r)}`, over the same for the greedy ideal ranking
  (ndeval's approximation: at each rank the judged document of largest gain);
* ``err_ia@k`` (Chapelle et al. 2009/2011): :math:`\frac{1}{N}\sum_i \sum_{r \le k}
  \frac{\alpha J(d_r,i)}{r}\prod_{j<r}(1 - \alpha J(d_j,i))`, divided by
  :math:`\sum_{r \le k} \alpha(1-\alpha)^{r-1}/r` (ndeval's collection-independent
  normalisation);
* ``nrbp`` (Clarke, Kolla & Vechtomova 2009): :math:`\frac{1-(1-\alpha)\beta}{N}
  \sum_r \beta^{r-1}\sum_i J(d_r,i)(1-\alpha)^{c_i(r)}`;
* ``p_ia@k``, ``ap_ia``: precision at k and average precision per intent, averaged over
  intents (Agrawal et al. 2009);
* ``s_recall@k`` (Zhai, Cohen & Lafferty 2003): the fraction of intents covered by the
  top k.

:func:`diversity_scores` evaluates them per query from two tables; the run is ordered
score descending, ties by document id descending (trec_eval / ndeval).

Reference: ndeval (TREC Web track 2009-2014, https://github.com/trec-web/trec-web-2014),
through its Python binding pyndeval, ir_measures' provider.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...errors import InputError

__all__ = ["diversity_scores", "DIVERSITY_MEASURES"]

DIVERSITY_MEASURES = ("alpha_ndcg", "err_ia", "nrbp", "p_ia", "ap_ia", "s_recall")


def _judgment_matrix(ranked: list, rel_docs: dict[str, set]) -> tuple[np.ndarray, list]:
    intents = sorted(i for i, docs in rel_docs.items() if docs)
    out = np.zeros((len(ranked), len(intents)))
    for col, intent in enumerate(intents):
        docs = rel_docs[intent]
        out[:, col] = [doc in docs for doc in ranked]
    return out, intents


def _novelty_gain(j: np.ndarray, alpha: float) -> np.ndarray:
    seen = np.cumsum(j, axis=0) - j  # c_i(r): relevant to intent i above rank r
    return (j * (1.0 - alpha) ** seen).sum(axis=1)


def _ideal_gains(rel_docs: dict[str, set], intents: list, k: int, alpha: float) -> np.ndarray:
    # ties between equal gains go to the larger document id, as ndeval breaks them
    docs = sorted(set().union(*(rel_docs[i] for i in intents)), reverse=True) if intents else []
    j = np.array([[doc in rel_docs[i] for i in intents] for doc in docs], dtype=np.float64).reshape(len(docs), -1)
    seen = np.zeros(len(intents))
    free = np.ones(len(docs), dtype=bool)
    gains = []
    for _ in range(min(k, len(docs))):
        g = np.where(free, (j * (1.0 - alpha) ** seen).sum(axis=1), -np.inf)
        best = int(np.argmax(g))
        gains.append(g[best])
        free[best] = False
        seen += j[best]
    return np.array(gains)


def _one_query(ranked: list, rel_docs: dict[str, set], k: int, alpha: float, beta: float) -> dict[str, float]:
    j_all, intents = _judgment_matrix(ranked, rel_docs)
    n = len(intents)
    if n == 0:
        return dict.fromkeys(DIVERSITY_MEASURES, 0.0)
    j = j_all[:k]
    rank = np.arange(1, len(j) + 1, dtype=np.float64)
    disc = 1.0 / np.log2(rank + 1.0)
    ideal = _ideal_gains(rel_docs, intents, k, alpha)
    idcg = (ideal / np.log2(np.arange(2, len(ideal) + 2))).sum()
    alpha_ndcg = (_novelty_gain(j, alpha) * disc).sum() / idcg if idcg > 0 else 0.0
    stop = alpha * j
    reach = np.vstack([np.ones((1, n)), np.cumprod(1.0 - stop, axis=0)[:-1]]) if len(j) else stop
    err = ((stop * reach) / rank[:, None]).sum() / n if len(j) else 0.0
    norm = sum(alpha * (1.0 - alpha) ** (r - 1) / r for r in range(1, k + 1))
    full_rank = np.arange(1, len(j_all) + 1, dtype=np.float64)
    nrbp = (1.0 - (1.0 - alpha) * beta) / n * (beta ** (full_rank - 1) * _novelty_gain(j_all, alpha)).sum()
    p_ia = j.sum(axis=0).mean() / k
    n_rel = np.array([len(rel_docs[i]) for i in intents], dtype=np.float64)
    prec_at = np.cumsum(j_all, axis=0) / full_rank[:, None]
    ap_ia = ((prec_at * j_all).sum(axis=0) / n_rel).mean()
    s_recall = (j.sum(axis=0) > 0).mean()
    return {"alpha_ndcg": float(alpha_ndcg), "err_ia": float(err / norm), "nrbp": float(nrbp),
            "p_ia": float(p_ia), "ap_ia": float(ap_ia), "s_recall": float(s_recall)}


def diversity_scores(run: pd.DataFrame, qrels: pd.DataFrame, *, k: int = 20, alpha: float = 0.5,
                     beta: float = 0.5) -> pd.DataFrame:
    """Intent-aware measures per query (see the module docstring for the definitions).

    Parameters
    ----------
    run : DataFrame
        Columns ``qid``, ``docid``, ``score``.
    qrels : DataFrame
        Columns ``qid``, ``subtopic``, ``docid``, ``relevance``.
    k : int
        Cut-off of ``alpha_ndcg``, ``err_ia``, ``p_ia``, ``s_recall`` (ndeval reports 5, 10, 20).
    alpha, beta : float
        Redundancy penalty / stop probability (ndeval's 0.5) and NRBP's persistence.

    Returns
    -------
    DataFrame
        One row per query of the qrels (a query without a run scores 0): ``qid`` and the
        columns ``alpha_ndcg@k``, ``err_ia@k``, ``nrbp``, ``p_ia@k``, ``ap_ia``, ``s_recall@k``.

    Examples
    --------
    >>> import pandas as pd
    >>> qrels = pd.DataFrame({"qid": "1", "subtopic": ["1", "1", "2", "2", "3"],
    ...                       "docid": ["a", "b", "b", "c", "d"], "relevance": 1})
    >>> run = pd.DataFrame({"qid": "1", "docid": ["a", "b", "c", "e"], "score": [4.0, 3.0, 2.0, 1.0]})
    >>> diversity_scores(run, qrels, k=5).iloc[0, 1:].round(4).tolist()
    [0.7094, 0.4639, 0.4688, 0.2667, 0.5278, 0.6667]
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise InputError(f"diversity_scores: cut-off k must be a positive integer, got {k!r}")
    for name, value in (("alpha", alpha), ("beta", beta)):
        if not (isinstance(value, (int, float)) and 0.0 < float(value) < 1.0) or isinstance(value, bool):
            raise InputError(f"diversity_scores: {name} must lie in (0, 1), got {value!r}")
    for name, table, cols in (("run", run, ("qid", "docid", "score")),
                              ("qrels", qrels, ("qid", "subtopic", "docid", "relevance"))):
        missing = [c for c in cols if c not in table.columns]
        if missing:
            raise InputError(f"diversity_scores: {name} lacks the column(s) {missing} (expected {', '.join(cols)})")
    r = run[["qid", "docid", "score"]].astype({"qid": str, "docid": str})
    r["score"] = pd.to_numeric(r["score"], errors="coerce")
    if r["score"].isna().any():
        raise InputError("diversity_scores: run has non-numeric or missing values in column 'score'")
    if r.duplicated(["qid", "docid"]).any():
        raise InputError("diversity_scores: run lists a document twice for one query")
    r = r.sort_values(["qid", "score", "docid"], ascending=[True, False, False], kind="stable")
    q = qrels[["qid", "subtopic", "docid", "relevance"]].astype({"qid": str, "subtopic": str, "docid": str})
    q["relevance"] = pd.to_numeric(q["relevance"], errors="coerce")
    if q["relevance"].isna().any():
        raise InputError("diversity_scores: qrels has non-numeric or missing values in column 'relevance'")
    rel = q[q["relevance"] > 0]
    rel_docs: dict[str, dict[str, set]] = {}
    for (qid, subtopic), docs in rel.groupby(["qid", "subtopic"])["docid"]:
        rel_docs.setdefault(qid, {})[subtopic] = set(docs)
    ranked = {qid: docs.tolist() for qid, docs in r.groupby("qid")["docid"]}
    rows = []
    for qid in sorted(q["qid"].unique()):
        values = _one_query(ranked.get(qid, []), rel_docs.get(qid, {}), int(k), float(alpha), float(beta))
        rows.append({"qid": qid, **{f"{m}@{k}" if m not in ("nrbp", "ap_ia") else m: v for m, v in values.items()}})
    columns = ["qid", f"alpha_ndcg@{k}", f"err_ia@{k}", "nrbp", f"p_ia@{k}", "ap_ia", f"s_recall@{k}"]
    return pd.DataFrame(rows, columns=columns)

