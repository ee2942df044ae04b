"""trec_eval's infAP, gm_map, gm_bpref, ndcg_rel, Rndcg, G, binG (pytrec_eval-terrier on
random runs to 1e-12, per query; the geometric means on the whole table), rbp_resid
(Moffat & Zobel's definition, hand-computed), and hand-computed values."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import scorebench
from scorebench.core.errors import InputError
from scorebench.metrics.ranking import extract_ranking
from scorebench.metrics.ranking.measures import average_precision, rbp
from scorebench.metrics.ranking.trec_extra import (GM_MIN, bin_g, g, gm_bpref, gm_map, infap, ndcg_rel, rbp_resid,
                                                   rndcg)

_spec = importlib.util.spec_from_file_location("_ranking_cases", Path(__file__).with_name("test_ranking_metrics.py"))
_cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_cases)
_pytrec, _random_case = _cases._pytrec, _cases._random_case

_PER_QUERY = {"infAP": "infap", "ndcg_rel": "ndcg_rel", "Rndcg": "rndcg", "G": "g", "binG": "bin_g"}
nan = float("nan")


@pytest.mark.parametrize("seed,level,ties", [(0, 1, True), (1, 2, True), (5, 1, True), (7, 1, False), (8, 3, False)])
def test_random_runs_match_pytrec_eval(seed, level, ties):
    run, qrels = _random_case(seed, ties=ties)
    expected = _pytrec(run, qrels, {*_PER_QUERY, "gm_map", "gm_bpref"}, relevance_level=level)
    inputs = extract_ranking(run, qrels=qrels, relevance_level=level)
    qids = inputs.frame["qid"].tolist()
    for trec_name, name in _PER_QUERY.items():
        ours = scorebench.metric(name).compute(inputs.merged())
        theirs = np.array([expected[q][trec_name] for q in qids])
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12, err_msg=trec_name)
    for trec_name in ("gm_map", "gm_bpref"):
        # pytrec_eval reports log(max(value, 1e-5)) per query; trec_eval's summary is exp(mean)
        theirs = np.exp(np.mean([expected[q][trec_name] for q in qids]))
        np.testing.assert_allclose(scorebench.metric(trec_name).compute(inputs.merged()), theirs, rtol=1e-12)


def test_gm_measures_through_evaluate_are_set_level():
    run, qrels = _random_case(2)
    out = scorebench.evaluate(run, ["gm_map", "map"], kind="ranking", qrels=qrels, n_boot=50, seed=1)
    values = dict(zip(out["metric"], out["value"]))
    assert 0 < values["gm_map"] <= values["map"]  # geometric mean <= arithmetic mean
    assert not scorebench.metric("gm_map").per_row


def test_hand_computed_values():
    # infAP equals AP with complete judgments
    np.testing.assert_allclose(infap([[1, 0, 1, 0, 2]], [[1, 0, 1, 0, 2, 1]]),
                               average_precision([[1, 0, 1, 0, 2]], [[1, 0, 1, 0, 2, 1]]), rtol=1e-4)
    # rel at rank 2 below one pooled-unjudged doc: 1/2 + 1/2 * (1/1) * (e / (0 + 0 + 2e)) = 3/4; R = 1
    np.testing.assert_allclose(infap([[-1, 1]], [[1, -1]]), [0.75])
    # ... and below one not-in-pool doc: 1/2 + 1/2 * (0/1) * ... = 1/2
    np.testing.assert_allclose(infap([[nan, 1]], [[1]]), [0.5])
    # GMAP of AP (1, 1/2): sqrt(1/2); an AP of 0 is floored at 1e-5
    np.testing.assert_allclose(gm_map([[1], [0, 1]], [[1], [1]]), np.sqrt(0.5))
    np.testing.assert_allclose(gm_map([[1], [0]], [[1], [1]]), np.sqrt(GM_MIN))
    np.testing.assert_allclose(gm_bpref([[1], [0, 1]], [[1], [1, 0]]), np.sqrt(GM_MIN))
    # binG: relevant at ranks 2 and 3 after one non-relevant: (1/log2 3 + 1/log2 3) / 2
    np.testing.assert_allclose(bin_g([[0, 1, 1]], [[1, 1]]), [1 / np.log2(3)])
    # G: gains (0, 1), ideal (1): cost at rank 2 = 1 + 1, seen = 1 -> 1 / log2(3), / ideal sum 1
    np.testing.assert_allclose(g([[0, 1]], [[1]]), [1 / np.log2(3)])
    # ndcg_rel: one relevant doc at rank 2: DCG = 1/log2(3), IDCG@1 = 1 -> 1/log2(3)
    np.testing.assert_allclose(ndcg_rel([[0, 1]], [[1]]), [1 / np.log2(3)])
    # Rndcg with ideal (2, 1): levels 1 and 2; run (2, 0, 1): NDCG@1 = 1, NDCG@2 = 2 / (2 + 1/log2 3);
    # the list (3) is not 2+ ranks past the ideal (2), so no whole-list point
    np.testing.assert_allclose(rndcg([[2, 0, 1]], [[2, 1]]), [(1 + 2 / (2 + 1 / np.log2(3))) / 2])
    np.testing.assert_allclose(rndcg([[0]], [[0]]), [0.0])


def test_rbp_residual_bounds_rbp():
    ranked, judged_ = [[1, nan, 0, -1]], [[1, 0, -1]]
    p = 0.6
    # unjudged at ranks 2 and 4: (1 - p)(p + p^3) + p^4
    np.testing.assert_allclose(rbp_resid(ranked, judged_, p=p), [(1 - p) * (p + p ** 3) + p ** 4])
    # RBP with every unknown document relevant is RBP + residual, up to the infinite tail
    full = rbp([[1, 1, 0, 1] + [1] * 200], [[1] * 210], p=p)
    np.testing.assert_allclose(rbp(ranked, judged_, p=p) + rbp_resid(ranked, judged_, p=p), full, rtol=1e-12)
    # fully judged list: the residual is the tail p^n (trec_eval prints 0 here)
    np.testing.assert_allclose(rbp_resid([[1, 0]], [[1, 0]], p=p), [p ** 2])
    with pytest.raises(InputError, match="persistence p"):
        rbp_resid(ranked, judged_, p=1.0)


def test_custom_gains():
    # pytrec_eval cannot pass gain parameters; NDCG-type ratios are invariant to scaling the
    # gains, and a mapping naming every level as itself is the linear gain
    run, qrels = _random_case(3)
    inputs = extract_ranking(run, qrels=qrels).merged()
    for name in ("ndcg_rel", "rndcg"):
        linear = scorebench.metric(name).compute(inputs)
        np.testing.assert_allclose(scorebench.metric(name, gain={1: 2.5, 2: 5.0, 3: 7.5}).compute(inputs), linear,
                                   rtol=1e-12)
    np.testing.assert_allclose(scorebench.metric("g", gain={1: 1, 2: 2, 3: 3}).compute(inputs),
                               scorebench.metric("g").compute(inputs), rtol=1e-12)
    # G with gains {1: 3}: one doc of gain 3 at rank 2 after a gain-0 doc: cost 3 + 1, seen 3
    np.testing.assert_allclose(g([[0, 1]], [[1]], gain={1: 3.0}), [3 / np.log2(3) / 3])


def test_listed_in_the_ranking_family():
    names = set(scorebench.list_metrics(family="ranking")["name"])
    assert {"infap", "gm_map", "gm_bpref", "ndcg_rel", "rndcg", "g", "bin_g", "rbp_resid"} <= names


_REF = Path(__file__).resolve().parents[3].parent / "shared" / "reference" / "trec_eval"


@pytest.mark.skipif(not (_REF / "out.test.aq").exists(), reason="trec_eval reference data not found")
@pytest.mark.parametrize("expected_file,qrels_name,run_name,options", [
    ("out.test.aq", "qrels.test", "results.test", {}),
    ("out.test.aqc", "qrels.test", "results.trunc", {"complete": True}),
    ("out.test.aql", "qrels.rel_level", "results.test", {"relevance_level": 2}),
])
def test_summary_only_and_residual_measures_match_trec_eval_outputs(expected_file, qrels_name, run_name, options):
    from scorebench.io.trec import read_trec_qrels, read_trec_run

    expected = {}
    for line in (_REF / expected_file).read_text().splitlines():
        measure, qid, value = (part.strip() for part in line.split("\t"))
        if measure in ("gm_map", "gm_bpref", "rbp_resid"):
            expected[measure, qid] = float(value)
    inputs = extract_ranking(read_trec_run(_REF / run_name), qrels=read_trec_qrels(_REF / qrels_name), **options)
    qids = inputs.frame["qid"].tolist()
    for name in ("gm_map", "gm_bpref"):
        assert abs(scorebench.metric(name).compute(inputs.merged()) - expected[name, "all"]) <= 5e-5
    resid = scorebench.metric("rbp_resid", p=0.9).compute(inputs.merged())
    for qid, ours in zip(qids, resid):
        if inputs.merged()["n_ret"][qids.index(qid)] == 0:
            # a query the run does not answer (-c): trec_eval prints 0, the residual is 1 here
            assert expected["rbp_resid", qid] == 0.0 and ours == 1.0
        else:
            assert abs(ours - expected["rbp_resid", qid]) <= 5e-5, qid
