"""Ranking metrics and run fusion against ranx on random runs.

ranx compiles its numba kernels on first use (minutes on a cold cache), so this file is
marked ``slow``. Scores are distinct here: ranx breaks score ties differently from trec_eval
(tie semantics are checked against pytrec_eval / trec_eval in the other files).
Documented differences: ranx's bpref is NaN for a query without judged non-relevant
documents (trec_eval: the 0/0 term counts as 1), and ranx's RBP uses graded relevance as
gain without rescaling into [0, 1] (so it can exceed 1); both are checked below.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import scorebench
from scorebench.metrics.ranking.fusion import comb_mnz, comb_sum, reciprocal_rank_fusion
from scorebench.metrics import ranking as rk
from scorebench.metrics.ranking import extract_ranking

ranx = pytest.importorskip("ranx")
pytestmark = pytest.mark.slow


def _case(seed: int, binary: bool = False):
    rng = np.random.default_rng(seed)
    run_rows, qrel_rows = [], []
    for q in range(30):
        docs = rng.choice(300, size=int(rng.integers(5, 60)), replace=False)
        run_rows += [(f"q{q}", f"d{d}", float(s)) for d, s in zip(docs, rng.normal(size=len(docs)))]
        pool = np.concatenate([docs[: len(docs) // 2], rng.choice(300, size=10, replace=False)])
        pool = np.unique(pool)
        grades = rng.integers(0, 2 if binary else 4, size=len(pool))
        grades[0] = max(grades[0], 1)  # every query has a relevant document
        if q % 3 == 0:
            grades = np.maximum(grades, 1)  # some queries have no judged non-relevant document
        qrel_rows += [(f"q{q}", f"d{d}", int(g)) for d, g in zip(pool, grades)]
    return (pd.DataFrame(run_rows, columns=["qid", "docid", "score"]),
            pd.DataFrame(qrel_rows, columns=["qid", "docid", "relevance"]))


def _ranx_objects(run, qrels):
    q = ranx.Qrels.from_df(qrels.astype({"qid": object, "docid": object}), q_id_col="qid",
                           doc_id_col="docid", score_col="relevance")
    r = ranx.Run.from_df(run.astype({"qid": object, "docid": object}), q_id_col="qid",
                         doc_id_col="docid", score_col="score")
    return q, r


_PAIRS = {
    "ndcg@10": "ndcg@10", "ndcg_burges@10": ("ndcg@10", {"gain": "exponential"}), "map": "map",
    "map@5": "map@5", "mrr": "mrr", "precision@5": "p@5", "recall@10": "r@10", "r-precision": "rprec",
    "hit_rate@3": "success@3",
}


@pytest.mark.parametrize("seed", [0, 1])
def test_metrics_match_ranx(seed):
    run, qrels = _case(seed)
    q, r = _ranx_objects(run, qrels)
    inputs = extract_ranking(run, qrels=qrels)
    qids = inputs.frame["qid"].tolist()
    for ranx_name, ours in _PAIRS.items():
        name, params = (ours, {}) if isinstance(ours, str) else ours
        theirs = ranx.evaluate(q, r, ranx_name, return_mean=False)
        theirs = dict(zip(list(r.keys()), theirs))
        got = scorebench.metric(name, **params).compute(inputs.merged())
        np.testing.assert_allclose(got, [theirs[qid] for qid in qids], rtol=1e-9, atol=1e-12, err_msg=ranx_name)


def test_rbp_and_bpref_documented_differences():
    run, qrels = _case(3, binary=True)
    q, r = _ranx_objects(run, qrels)
    inputs = extract_ranking(run, qrels=qrels)
    qids = inputs.frame["qid"].tolist()
    theirs = dict(zip(list(r.keys()), ranx.evaluate(q, r, "rbp.8", return_mean=False)))
    np.testing.assert_allclose(scorebench.metric("rbp", p=0.8).compute(inputs.merged()),
                               [theirs[qid] for qid in qids], rtol=1e-9)  # binary relevance: same
    bpref_theirs = dict(zip(list(r.keys()), ranx.evaluate(q, r, "bpref", return_mean=False)))
    ours = scorebench.metric("bpref").compute(inputs.merged())
    no_nonrel = inputs.arrays["num_nonrel"] == 0
    assert no_nonrel.any() and np.isnan([bpref_theirs[qid] for qid in np.array(qids)[no_nonrel]]).all()
    assert np.isfinite(ours).all()
    np.testing.assert_allclose(ours[~no_nonrel], [bpref_theirs[qid] for qid in np.array(qids)[~no_nonrel]],
                               rtol=1e-9)
    # graded relevance: ranx's RBP can exceed 1, ours stays in [0, 1]
    graded_q = ranx.Qrels({"q": {"a": 3, "b": 3, "c": 3}})
    assert ranx.evaluate(graded_q, ranx.Run({"q": {"a": 3.0, "b": 2.0, "c": 1.0}}), "rbp.8") > 1
    assert rk.rbp([[3, 3, 3]], [[3, 3, 3]], p=0.8)[0] == pytest.approx(0.2 * (1 + 0.8 + 0.64))


@pytest.mark.parametrize("method,norm", [("sum", "min-max"), ("mnz", "min-max"), ("rrf", None),
                                         ("sum", "zmuv")])
def test_fusion_matches_ranx(method, norm):
    rng = np.random.default_rng(5)
    base = [(f"q{q}", f"d{d}") for q in range(5) for d in rng.choice(50, size=20, replace=False)]
    runs = [pd.DataFrame([(q, d, float(s)) for (q, d), s in zip(base, rng.normal(size=len(base)))
                          if rng.random() < 0.8], columns=["qid", "docid", "score"]) for _ in range(3)]
    ranx_runs = [ranx.Run.from_df(r.astype({"qid": object, "docid": object}), q_id_col="qid",
                                  doc_id_col="docid", score_col="score") for r in runs]
    theirs = ranx.fuse(ranx_runs, norm=norm, method=method).to_dict()
    ours = {
        ("sum", "min-max"): lambda: comb_sum(runs, normalization="minmax"),
        ("mnz", "min-max"): lambda: comb_mnz(runs, normalization="minmax"),
        ("rrf", None): lambda: reciprocal_rank_fusion(runs, k=60),
        ("sum", "zmuv"): lambda: comb_sum(runs, normalization="zscore"),
    }[method, norm]()
    for qid, docid, score in ours[["qid", "docid", "score"]].itertuples(index=False):
        assert score == pytest.approx(theirs[qid][docid], rel=1e-9, abs=1e-9)
    assert len(ours) == sum(len(v) for v in theirs.values())
