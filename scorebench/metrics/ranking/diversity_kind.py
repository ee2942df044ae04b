"""The ``diversity`` table kind and the intent-aware measures registered on it.

A run (``qid, docid, score``; ``system``, ``task`` optional) judged against diversity qrels
(``qrels=``: ``qid, subtopic, docid, relevance``, or the path of a TREC diversity qrels file
``qid subtopic docid rel``). One unit per (system[, task], qid of the qrels): as ndeval does,
every query of the qrels is scored for every run, a query the run lacks scoring 0, and
queries the qrels do not know are ignored. Documents are ranked by score descending, ties by
document id descending (trec_eval / ndeval); a document listed twice for one query, or judged
twice for one subtopic, is an error.

The measures (definitions in :mod:`.diversity`): ``alpha_ndcg@k``, ``err_ia@k``,
``nerr_ia@k``, ``nrbp``, ``nnrbp``, ``p_ia@k``, ``ap_ia``, ``s_recall@k``, each with the
parameters ``alpha`` and ``beta`` (ndeval's 0.5), e.g. ``alpha_ndcg@10(alpha=0.8)``. The
table value is the mean over queries and the interval resamples queries, as for the
``ranking`` kind.

Examples
--------
>>> import pandas as pd, scorebench
>>> qrels = pd.DataFrame({"qid": "1", "subtopic": ["1", "1", "2"], "docid": ["a", "b", "b"], "relevance": 1})
>>> run = pd.DataFrame({"qid": "1", "docid": ["a", "b"], "score": [2.0, 1.0]})
>>> scorebench.evaluate(run, "s_recall@1", qrels=qrels, n_boot=0)["value"].tolist()
[0.5]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.core.registry import register
from scorebench.core.tables import Inputs, numeric_column, register_kind, require_columns
from scorebench.core.validation import describe_rows
from scorebench.metrics.ranking._run_table import RUN_COLUMNS, checked_run, id_frame, judgments_frame, qrels_option
from scorebench.metrics.ranking.diversity import AT_K, DIVERSITY_MEASURES, check_params, column_name, measure_value, query_matrices

__all__ = ["extract_diversity", "diversity_scores", "load_diversity_qrels", "alpha_ndcg", "err_ia", "nerr_ia", "nrbp", "nnrbp",
           "p_ia", "ap_ia", "s_recall"]

_QRELS = ("qid", "subtopic", "docid", "relevance")


def load_diversity_qrels(qrels: Any) -> pd.DataFrame:
    """Diversity qrels as a DataFrame ``qid, subtopic, docid, relevance``.

    A file (TREC diversity qrels ``qid subtopic docid rel``, or a table file) is read by the
    evaluation layer before the kind runs. A table that names the subtopic column ``jg`` or
    ``iteration`` (trec_eval's and ir_measures' names) is accepted.
    """
    qrels = judgments_frame(qrels, "diversity", "qrels are required (a DataFrame with qid, subtopic, docid, "
                            "relevance, or the path of TREC diversity qrels), e.g. evaluate(run, ..., qrels=qrels)")
    if "subtopic" not in qrels.columns:
        for alias in ("jg", "iteration"):
            if alias in qrels.columns:
                return qrels.rename(columns={alias: "subtopic"})
    return qrels


def _relevant_docs(qrels: pd.DataFrame) -> tuple[dict[str, dict[str, set]], list[str]]:
    require_columns(qrels, list(_QRELS), "diversity (qrels)")
    ids = id_frame(qrels, ("qid", "subtopic", "docid"), "qrels")
    ids["relevance"] = numeric_column(qrels, "relevance")
    dup = ids.duplicated(["qid", "subtopic", "docid"]).to_numpy()
    if dup.any():
        raise InputError(f"qrels: the same (qid, subtopic, docid) is judged twice in {describe_rows(dup, qrels.index)}; "
                         "expected one judgment per document and subtopic")
    rel_docs: dict[str, dict[str, set]] = {}
    for (qid, subtopic), docs in ids[ids["relevance"] > 0].groupby(["qid", "subtopic"])["docid"]:
        rel_docs.setdefault(qid, {})[subtopic] = set(docs)
    return rel_docs, sorted(ids["qid"].unique())


@register_kind("diversity", columns=RUN_COLUMNS,
               options=(qrels_option("intent (subtopic) judgments: qid, subtopic, docid, relevance "
                                     "(TREC diversity qrels)", ("table", "trec_qrels_jg")),), unit_column="qid")
def extract_diversity(df: pd.DataFrame, *, nan_policy: str = "raise", qrels: Any = None) -> Inputs:
    """A run judged against intent (subtopic) qrels, one unit per query of the qrels (ndeval)."""
    ids, groups = checked_run(df, "diversity", nan_policy)
    rel_docs, qids = _relevant_docs(load_diversity_qrels(qrels))
    ids = ids.sort_values([*groups, "qid", "score", "docid"], ascending=[True] * (len(groups) + 1) + [False, False],
                          kind="stable")
    ranked = {tuple(key): docs.tolist() for key, docs in ids.groupby([*groups, "qid"], sort=False)["docid"]}
    systems = ids[groups].drop_duplicates().sort_values(groups).itertuples(index=False, name=None) if groups else [()]
    rows, ranked_j, ideal_j = [], [], []
    for system in systems:
        for qid in qids:
            rj, ij = query_matrices(ranked.get((*system, qid), []), rel_docs.get(qid, {}))
            rows.append((*system, qid))
            ranked_j.append(rj)
            ideal_j.append(ij)
    frame = pd.DataFrame(rows, columns=[*groups, "qid"])
    arrays = {"ranked_j": _objects(ranked_j), "ideal_j": _objects(ideal_j)}
    ignored = sorted(set(ids["qid"]) - set(qids))
    consts = {"missing_queries_policy": "queries in the qrels missing from a run score 0 (ndeval)",
              "ignored_queries": tuple(ignored)}
    return Inputs(frame, arrays, consts, key="qid")


def _objects(items: list[np.ndarray]) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


# --- registered measures -----------------------------------------------------------------------

_NDEVAL = "ndeval, TREC Web track 2009-2014 (https://github.com/trec-web/trec-web-2014)"
_EXAMPLE = """
    Examples
    --------
    >>> import pandas as pd
    >>> qrels = pd.DataFrame({{"qid": "1", "subtopic": ["1", "1", "2", "2", "3"],
    ...                       "docid": ["a", "b", "b", "c", "d"], "relevance": 1}})
    >>> run = pd.DataFrame({{"qid": "1", "docid": ["a", "b", "c", "e"], "score": [4.0, 3.0, 2.0, 1.0]}})
    >>> {call}(run, qrels{k}).round(4)
    array([{value}])
"""


def _table_fn(measure: str) -> Callable[..., np.ndarray]:
    def table_fn(arrays: Mapping[str, Any], *, k: int = 20, alpha: float = 0.5, beta: float = 0.5) -> np.ndarray:
        k, alpha, beta = check_params(k, alpha, beta, measure)
        return np.array([measure_value(measure, rj, ij, k=k, alpha=alpha, beta=beta)
                         for rj, ij in zip(arrays["ranked_j"], arrays["ideal_j"])], dtype=np.float64)

    table_fn.__name__ = f"{measure}_table"
    return table_fn


def _public(measure: str, doc: str, example: tuple[str, str]) -> Callable[..., np.ndarray]:
    table_fn = _table_fn(measure)

    def fn(run: pd.DataFrame, qrels: Any, *, k: int = 20, alpha: float = 0.5, beta: float = 0.5) -> np.ndarray:
        inputs = extract_diversity(run, qrels=qrels)
        return table_fn(inputs.arrays, k=k, alpha=alpha, beta=beta)

    fn.__name__ = fn.__qualname__ = measure
    fn.__module__ = __name__
    fn.__doc__ = doc + """
    Parameters
    ----------
    run : DataFrame
        ``qid, docid, score`` of one run.
    qrels : DataFrame or path
        ``qid, subtopic, docid, relevance`` (see :func:`load_diversity_qrels`).
    k : int
        Cut-off (the ``@k`` measures; ignored by the others).
    alpha, beta : float
        Redundancy penalty (ndeval's 0.5) and NRBP's persistence (0.5).

    Returns
    -------
    ndarray
        One value per query of the qrels, in query-id order.
""" + _EXAMPLE.format(call=measure, k=example[0], value=example[1])
    return fn


_SPECS = {
    # name: (one-line definition, citation, doctest k argument, doctest value)
    "alpha_ndcg": (r"alpha-nDCG@k: :math:`\sum_{r\le k} G(r)/\log_2(r+1)` over the same for the greedy ideal "
                   r"ranking, :math:`G(r)=\sum_i J(d_r,i)(1-\alpha)^{c_i(r)}`.",
                   "Clarke et al. (2008), SIGIR; " + _NDEVAL + " alpha-nDCG@k", ", k=5", "0.7094"),
    "err_ia": (r"ERR-IA@k: intent-aware expected reciprocal rank, :math:`\frac1N\sum_i\sum_{r\le k}"
               r"\frac{\alpha J(d_r,i)}{r}\prod_{j<r}(1-\alpha J(d_j,i))`, over :math:`\sum_{r\le k}"
               r"\alpha(1-\alpha)^{r-1}/r`.",
               "Chapelle et al. (2009), CIKM; Chapelle et al. (2011), Inf. Retr. 14; " + _NDEVAL + " ERR-IA@k",
               ", k=5", "0.4639"),
    "nerr_ia": ("nERR-IA@k: ERR-IA@k over its value for the greedy ideal ranking (ndeval's nERR-IA@k).",
                "Chapelle et al. (2011), Inf. Retr. 14; " + _NDEVAL + " nERR-IA@k", ", k=5", "0.6866"),
    "nrbp": (r"NRBP: novelty- and rank-biased precision, :math:`\frac{1-(1-\alpha)\beta}{N}\sum_r"
             r"\beta^{r-1}G(r)` over the whole ranking.",
             "Clarke, Kolla & Vechtomova (2009), ICTIR; " + _NDEVAL + " NRBP", "", "0.4688"),
    "nnrbp": ("nNRBP: NRBP over its value for the greedy ideal ranking (ndeval's nNRBP).",
              "Clarke, Kolla & Vechtomova (2009), ICTIR; " + _NDEVAL + " nNRBP", "", "0.6977"),
    "p_ia": ("P-IA@k: precision at k per intent, averaged over the query's intents.",
             "Agrawal et al. (2009), WSDM; " + _NDEVAL + " P-IA@k", ", k=5", "0.2667"),
    "ap_ia": ("AP-IA: average precision per intent (over the whole ranking), averaged over intents.",
              "Agrawal et al. (2009), WSDM; " + _NDEVAL + " MAP-IA", "", "0.5278"),
    "s_recall": ("S-recall@k (subtopic recall): the fraction of the query's intents with a relevant "
                 "document in the top k.",
                 "Zhai, Cohen & Lafferty (2003), SIGIR; " + _NDEVAL + " strec@k", ", k=5", "0.6667"),
}

# The public functions, one per measure (named like the measure).
alpha_ndcg = _public("alpha_ndcg", _SPECS["alpha_ndcg"][0] + "\n", _SPECS["alpha_ndcg"][2:])
err_ia = _public("err_ia", _SPECS["err_ia"][0] + "\n", _SPECS["err_ia"][2:])
nerr_ia = _public("nerr_ia", _SPECS["nerr_ia"][0] + "\n", _SPECS["nerr_ia"][2:])
nrbp = _public("nrbp", _SPECS["nrbp"][0] + "\n", _SPECS["nrbp"][2:])
nnrbp = _public("nnrbp", _SPECS["nnrbp"][0] + "\n", _SPECS["nnrbp"][2:])
p_ia = _public("p_ia", _SPECS["p_ia"][0] + "\n", _SPECS["p_ia"][2:])
ap_ia = _public("ap_ia", _SPECS["ap_ia"][0] + "\n", _SPECS["ap_ia"][2:])
s_recall = _public("s_recall", _SPECS["s_recall"][0] + "\n", _SPECS["s_recall"][2:])

_TESTED = ("ndeval through ir_measures (pyndeval provider)", 1e-12)
for _fn in (alpha_ndcg, err_ia, nerr_ia, nrbp, nnrbp, p_ia, ap_ia, s_recall):
    _measure = _fn.__name__
    register(f"{_measure}@k" if _measure in AT_K else _measure, core=_fn, family="ranking", kind="diversity",
             higher_is_better=True, bounds=(0.0, 1.0),
             params={"k": 20, "alpha": 0.5, "beta": 0.5} if _measure in AT_K else {"alpha": 0.5, "beta": 0.5},
             table_fn=_table_fn(_measure), citation=_SPECS[_measure][1],
             tested_against=_TESTED)
del _fn, _measure


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
        Cut-off of the ``@k`` measures (ndeval reports 5, 10, 20).
    alpha, beta : float
        Redundancy penalty / stop probability (ndeval's 0.5) and NRBP's persistence.

    Returns
    -------
    DataFrame
        One row per query of the qrels (a query without a run scores 0), per ``system``
        (and ``task``) when the run has that column: those columns, ``qid`` and the
        columns ``alpha_ndcg@k``, ``err_ia@k``, ``nerr_ia@k``, ``nrbp``, ``nnrbp``,
        ``p_ia@k``, ``ap_ia``, ``s_recall@k``.

    Examples
    --------
    >>> import pandas as pd
    >>> qrels = pd.DataFrame({"qid": "1", "subtopic": ["1", "1", "2", "2", "3"],
    ...                       "docid": ["a", "b", "b", "c", "d"], "relevance": 1})
    >>> run = pd.DataFrame({"qid": "1", "docid": ["a", "b", "c", "e"], "score": [4.0, 3.0, 2.0, 1.0]})
    >>> diversity_scores(run, qrels, k=5).iloc[0, 1:].round(4).tolist()
    [0.7094, 0.4639, 0.6866, 0.4688, 0.6977, 0.2667, 0.5278, 0.6667]
    """
    k, alpha, beta = check_params(k, alpha, beta, "diversity_scores")
    inputs = extract_diversity(run, qrels=qrels)
    frame = inputs.frame.copy()
    for measure in DIVERSITY_MEASURES:
        frame[column_name(measure, k)] = [measure_value(measure, rj, ij, k=k, alpha=alpha, beta=beta)
                                          for rj, ij in zip(inputs.arrays["ranked_j"], inputs.arrays["ideal_j"])]
    return frame.reset_index(drop=True)
