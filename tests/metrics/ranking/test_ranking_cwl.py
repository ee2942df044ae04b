"""C/W/L user-model measures (INST, INSQ, BPM, SDCG, NERR eq. 8-11) against cwl_eval through
ir_measures' cwl_eval provider (per query, to 1e-12), hand-computed values and errors."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import scorebench
from scorebench.core.errors import InputError
from scorebench.metrics.ranking import extract_ranking
from scorebench.metrics.ranking.cwl_measures import bpm, inst, insq, nerr8, nerr10, sdcg

_spec = importlib.util.spec_from_file_location("_ranking_cases", Path(__file__).with_name("test_ranking_metrics.py"))
_cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_cases)
_random_case = _cases._random_case


def _cwl_reference(run, qrels, measures):
    ir_measures = pytest.importorskip("ir_measures")
    pytest.importorskip("cwl")
    out: dict[str, dict[str, float]] = {}
    frames = [f.rename(columns={"qid": "query_id", "docid": "doc_id"}) for f in (qrels, run)]
    for m in ir_measures.cwl_eval.iter_calc(measures, *frames):
        out.setdefault(str(m.measure), {})[m.query_id] = m.value
    return out


@pytest.mark.parametrize("seed,max_rel", [(0, 3), (4, 2), (9, 3)])
def test_random_runs_match_cwl_eval(seed, max_rel):
    ir_measures = pytest.importorskip("ir_measures")
    M = ir_measures.measures
    run, qrels = _random_case(seed, ties=False)  # cwl_eval breaks score ties its own way
    cases = {
        ("inst", (("T", 2.0),)): M.INST(T=2.0, max_rel=max_rel),
        ("inst", ()): M.INST(T=1.0, max_rel=max_rel),
        ("insq", (("T", 3.0),)): M.INSQ(T=3.0, max_rel=max_rel),
        ("bpm@5", ()): M.BPM(cutoff=5, T=1.0, max_rel=max_rel),
        ("bpm@10", (("T", 2.0),)): M.BPM(cutoff=10, T=2.0, max_rel=max_rel),
        ("sdcg@10", ()): M.SDCG(cutoff=10, max_rel=max_rel),
        ("nerr8@10", ()): M.NERR8(cutoff=10, max_rel=max_rel),
        ("nerr9@5", ()): M.NERR9(cutoff=5, max_rel=max_rel),
        ("nerr10", (("p", 0.8),)): M.NERR10(p=0.8, max_rel=max_rel),
        ("nerr11", (("T", 2.0),)): M.NERR11(T=2.0, max_rel=max_rel),
    }
    expected = _cwl_reference(run, qrels, list(cases.values()))
    inputs = extract_ranking(run, qrels=qrels)
    qids = inputs.frame["qid"].tolist()
    for (name, params), measure in cases.items():
        ours = scorebench.metric(name, **dict(params), max_rel=max_rel).compute(inputs.merged())
        theirs = np.array([expected[str(measure)][q] for q in qids])
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14, err_msg=str(measure))


def test_hand_computed_values():
    # INST, T = 1, gains (1, 0), depth 2: C_1 = ((1 + 1 + 0 - 1) / (1 + 1 + 0))^2 = 1/4 -> W = (4/5, 1/5)
    np.testing.assert_allclose(inst([[1, 0]], [[1]], depth=2), [0.8])
    # INSQ, T = 1: C_1 = (2/3)^2 -> EU = 1 / (1 + 4/9)
    np.testing.assert_allclose(insq([[1, 0]], [[1]], depth=2), [9 / 13])
    # BPM@3: reads ranks 1..3 (gain budget not reached before rank 3) -> mean gain 1/3
    np.testing.assert_allclose(bpm([[0, 0, 1, 1]], [[1, 1]], k=3), [1 / 3])
    # SDCG@2: (0 + 1/log2 3) / (1 + 1/log2 3) for gains (0, 1)
    np.testing.assert_allclose(sdcg([[0, 1]], [[1]], k=2), [(1 / np.log2(3)) / (1 + 1 / np.log2(3))])
    # graded: max_rel 2 scales a grade 1 to gain 1/2; NERR8@2: C_1 = 1/2 -> EU = (1/2 + 1/2 * 1) / 1.5
    np.testing.assert_allclose(nerr8([[1, 2]], [[1, 2]], k=2), [(0.5 + 0.5) / 1.5])
    # unjudged documents gain 0; depth pads with zero gains: NERR10 with p: C_i = p for zero gains
    p = 0.5
    np.testing.assert_allclose(nerr10([[float("nan")]], [[1]], p=p, depth=3), [0.0])
    np.testing.assert_allclose(nerr10([[0, 1]], [[1]], p=p, depth=3), [p / (1 + p + 0)])


def test_bad_parameters_are_refused():
    with pytest.raises(InputError, match="max_rel"):
        inst([[1]], [[1]], max_rel=0)
    with pytest.raises(InputError, match="T"):
        insq([[1]], [[1]], T=-1)
    with pytest.raises(InputError, match="cut-off"):
        bpm([[1]], [[1]], k=0)
    with pytest.raises(InputError, match="persistence"):
        nerr10([[1]], [[1]], p=1.5)
    with pytest.raises(InputError, match="depth"):
        sdcg([[1]], [[1]], k=2, depth=0)


def test_listed_in_the_ranking_family():
    names = set(scorebench.list_metrics(family="ranking")["name"])
    assert {"inst", "insq", "bpm@k", "sdcg@k", "nerr8@k", "nerr9@k", "nerr10", "nerr11"} <= names
