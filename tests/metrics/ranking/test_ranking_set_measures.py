"""Set / cut-off trec_eval measures (set_F, set_map, set_relative_P, relative_P, Rprec_mult,
utility, unj, judged): pytrec_eval-terrier on random runs to 1e-12, hand-computed values,
and errors. trec_eval 10.0's own outputs are compared in test_ranking_trec_eval.py."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import scorebench
from scorebench.core.errors import InputError
from scorebench.metrics.ranking import extract_ranking
from scorebench.metrics.ranking.set_measures import judged, rprec_mult, set_f, unjudged, utility

_spec = importlib.util.spec_from_file_location("_ranking_cases", Path(__file__).with_name("test_ranking_metrics.py"))
_cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_cases)
_pytrec, _random_case = _cases._pytrec, _cases._random_case  # the random runs of the core measures' test

_MAP = {
    "set_F": ("set_f", {}), "set_map": ("set_map", {}), "set_relative_P": ("set_relative_p", {}),
    "relative_P_5": ("relative_p@5", {}), "relative_P_30": ("relative_p@30", {}),
    "Rprec_mult_0.20": ("rprec_mult@m", {"m": 0.2}), "Rprec_mult_1.60": ("rprec_mult@m", {"m": 1.6}),
    "utility": ("utility", {}),
}


@pytest.mark.parametrize("seed,level", [(0, 1), (1, 2), (5, 1)])
def test_random_runs_match_pytrec_eval(seed, level):
    run, qrels = _random_case(seed)
    measures = {"set_F", "set_map", "set_relative_P", "relative_P.5,30", "Rprec_mult.0.2,1.6", "utility"}
    expected = _pytrec(run, qrels, measures, relevance_level=level)
    inputs = extract_ranking(run, qrels=qrels, relevance_level=level)
    qids = inputs.frame["qid"].tolist()
    for trec_name, (name, params) in _MAP.items():
        ours = scorebench.metric(name, **params).compute(inputs.merged())
        theirs = np.array([expected[q][trec_name] for q in qids])
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12, err_msg=trec_name)


def test_hand_computed_values():
    nan = float("nan")
    # 2 of 4 retrieved relevant, R = 3: P = 1/2, R = 2/3, F1 = 4/7; F2 = 5 PR / (4P + R) = 10/16
    np.testing.assert_allclose(set_f([[1, 0, 1, 0]], [[1, 1, 1]]), [4 / 7])
    np.testing.assert_allclose(set_f([[1, 0, 1, 0]], [[1, 1, 1]], beta=2.0), [(5 / 3) / (2 + 2 / 3)])
    np.testing.assert_allclose(set_f([[0, 0]], [[1]]), [0.0])  # P = R = 0 scores 0, not NaN
    # R = 3, m = 0.5: cut-off (long)(1.5 + 0.9) = 2 -> P@2
    np.testing.assert_allclose(rprec_mult([[1, 0, 1]], [[1, 1, 1]], m=0.5), [0.5])
    # 2 relevant retrieved, 2 non-relevant (one unjudged), 1 relevant missed, 2 judged non-relevant
    # of which 1 retrieved: U(2, -1, -3, 0.5) = 4 - 2 - 3 + 0.5
    np.testing.assert_allclose(utility([[1, 0, 1, nan]], [[1, 1, 1, 0, 0]], a=2, b=-1, c=-3, d=0.5), [-0.5])
    np.testing.assert_allclose(unjudged([[1, nan, -1, 0]], [[1, 0]], k=5), [0.4])
    np.testing.assert_allclose(judged([[1, nan, -1, 0]], [[1, 0]], k=5), [0.5])  # ir_measures: / min(k, 4)
    np.testing.assert_allclose(judged([[1, nan, -1, 0, 0]], [[1, 0]], k=5), [0.6])  # = 1 - unj@5 here


def test_bad_parameters_are_refused():
    with pytest.raises(InputError, match="multiple m"):
        rprec_mult([[1]], [[1]], m=0)
    with pytest.raises(InputError, match="beta"):
        set_f([[1]], [[1]], beta=-1.0)
    with pytest.raises(InputError, match="cut-off k"):
        judged([[1]], [[1]], k=0)
    run, qrels = _random_case(0)
    with pytest.raises(InputError, match="cut-off k"):
        scorebench.metric("relative_p@k").compute(extract_ranking(run, qrels=qrels).merged())


def test_listed_in_the_ranking_family():
    listed = scorebench.list_metrics(family="ranking")
    names = set(listed["name"]) | {a for cell in listed["aliases"] for a in cell.split(", ") if a}
    assert {"set_f", "set_map", "set_relative_p", "relative_p@k", "rprec_mult@m", "utility", "unj@k",
            "judged@k", "rr@k", "set_relative_precision", "relative_precision@k", "unjudged@k"} <= names


@pytest.mark.parametrize("seed", [0, 4])
def test_random_runs_match_ir_measures(seed):
    ir_measures = pytest.importorskip("ir_measures")
    run, qrels = _random_case(seed, ties=False)  # ir_measures' providers break score ties differently
    qrels = qrels[qrels["relevance"] >= 0]
    q = [ir_measures.Qrel(a, b, int(c)) for a, b, c in qrels.itertuples(index=False)]
    r = [ir_measures.ScoredDoc(a, b, float(c)) for a, b, c in run.itertuples(index=False)]
    inputs = extract_ranking(run, qrels=qrels)
    qids = inputs.frame["qid"].tolist()
    cases = {"RR@5": ("rr@5", ir_measures.RR @ 5), "RR@10": ("rr@10", ir_measures.RR @ 10),
             "Judged@10": ("judged@10", ir_measures.Judged @ 10), "SetF": ("set_f", ir_measures.SetF)}
    for label, (name, measure) in cases.items():
        theirs = {m.query_id: m.value for m in ir_measures.iter_calc([measure], q, r)}
        ours = scorebench.metric(name).compute(inputs.merged())
        # ir_measures leaves out queries without a relevant document; scorebench scores them
        kept = [i for i, qid in enumerate(qids) if qid in theirs]
        assert len(kept) >= len(qids) - 3
        np.testing.assert_allclose(ours[kept], [theirs[qids[i]] for i in kept], rtol=1e-12, atol=1e-12,
                                   err_msg=label)
