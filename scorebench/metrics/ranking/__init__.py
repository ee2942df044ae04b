"""Exact ranking (information retrieval) metrics with trec_eval 10.0 semantics.

Importing this package registers the ``ranking`` table kind (:mod:`.kind`) and the metrics
(:mod:`.measures`): ``ndcg@k``, ``dcg@k``, ``average_precision@k`` (alias ``map@k``; ``map``
uncut), ``reciprocal_rank`` (``mrr``), ``p@k``, ``r@k``, ``rprec``, ``bpref``, ``success@k``,
``err@k``, ``rbp``, ``iprec_at_recall@r``, ``eleven_point_average`` (``11pt_avg``), ``num_ret``,
``num_rel``, ``num_rel_ret``, and (:mod:`.set_measures`) ``set_f``, ``set_map``,
``set_relative_precision`` (``set_relative_p``), ``relative_precision@k`` (``relative_p@k``),
``rprec_mult@m``, ``utility``, ``unjudged@k`` (``unj@k``), ``judged@k``, ``rr@k``. The short
field names in brackets are registry aliases: they resolve to the same metric. All metrics share one engine
(:mod:`._lists`): each query's retrieved documents are sorted once, and every metric is a
few vectorised segment operations on the resulting relevance lists.

Examples
--------
>>> import pandas as pd
>>> import scorebench
>>> run = pd.DataFrame({"qid": ["1", "1", "1"], "docid": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
>>> qrels = pd.DataFrame({"qid": ["1", "1"], "docid": ["b", "d"], "relevance": [1, 1]})
>>> inputs = extract_ranking(run, qrels=qrels)
>>> scorebench.metric("map").compute(inputs.merged())
array([0.25])
"""

from __future__ import annotations

from scorebench.metrics.ranking._lists import RankedLists
from scorebench.metrics.ranking.kind import extract_ranking, load_qrels
from scorebench.metrics.ranking import set_measures  # noqa: F401  (registers the set / cut-off measures)
from scorebench.metrics.ranking import trec_extra  # noqa: F401  (registers infAP, gm_map, gm_bpref, ndcg_rel, Rndcg, G, binG, rbp_resid)
from scorebench.metrics.ranking import cwl_measures  # noqa: F401  (registers the C/W/L user-model measures)
from scorebench.metrics.ranking import diversity_kind  # noqa: F401  (registers the diversity kind and the intent-aware measures)
from scorebench.metrics.ranking import prefs_measures  # noqa: F401  (registers the prefs kind and trec_eval's prefs_* measures)
from scorebench.metrics.ranking.measures import (
    average_precision, bpref, dcg, eleven_point_average, err, iprec_at_recall, ndcg, num_rel,
    num_rel_ret, num_ret, p_at_k, precision, r_at_k, r_precision, rbp, recall, reciprocal_rank, rprec, success,
)

__all__ = [
    "RankedLists", "extract_ranking", "load_qrels",
    "ndcg", "dcg", "average_precision", "reciprocal_rank", "p_at_k", "r_at_k", "rprec",
    "precision", "recall", "r_precision",  # the earlier names of p_at_k, r_at_k, rprec
    "bpref", "success", "err", "rbp", "iprec_at_recall", "eleven_point_average",
    "num_ret", "num_rel", "num_rel_ret",
]
