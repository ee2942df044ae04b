"""Ranking metrics: pytrec_eval on random runs, exact toy values, properties, options, errors,
and the end-to-end paths (``scorebench.evaluate`` and the CLI) on TREC files."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import scorebench
from scorebench.core.errors import InputError
from scorebench.metrics import ranking as rk
from scorebench.metrics.ranking import extract_ranking

REF = Path(__file__).resolve().parents[3].parent / "shared" / "reference" / "trec_eval"


def _random_case(seed: int, n_q: int = 25, depth: int = 40, ties: bool = True):
    """A run with score ties, unjudged retrieved docs, judged unretrieved docs, graded qrels
    (including negative grades), a query without relevant docs and one missing from the run."""
    rng = np.random.default_rng(seed)
    run_rows, qrel_rows = [], []
    for q in range(n_q):
        qid = f"q{q}"
        n = int(rng.integers(1, depth))
        docs = rng.choice(200, size=n, replace=False)
        scores = np.round(rng.normal(size=n), 1) if ties else rng.normal(size=n)
        run_rows += [(qid, f"d{d}", float(s)) for d, s in zip(docs, scores)]
        pool = rng.choice(200, size=int(rng.integers(1, 60)), replace=False)
        grades = rng.choice([-1, 0, 0, 1, 2, 3], size=len(pool))
        if q == 3:
            grades = np.zeros(len(pool), dtype=int)
        qrel_rows += [(qid, f"d{d}", int(g)) for d, g in zip(pool, grades)]
    qrel_rows.append(("only_in_qrels", "d1", 1))
    run_rows.append(("only_in_run", "d1", 1.0))
    return (pd.DataFrame(run_rows, columns=["qid", "docid", "score"]),
            pd.DataFrame(qrel_rows, columns=["qid", "docid", "relevance"]))


def _pytrec(run, qrels, measures, **kwargs):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    q = {}
    for a, b, c in qrels.itertuples(index=False):
        q.setdefault(a, {})[b] = int(c)
    r = {}
    for a, b, c in run.itertuples(index=False):
        r.setdefault(a, {})[b] = float(c)
    return pytrec_eval.RelevanceEvaluator(q, measures, **kwargs).evaluate(r)


_PYTREC_MAP = {
    "ndcg_cut_5": ("ndcg@5", {}), "ndcg_cut_10": ("ndcg@10", {}), "ndcg": ("ndcg", {}),
    "map": ("map", {}), "map_cut_10": ("map@10", {}), "recip_rank": ("mrr", {}), "P_5": ("p@5", {}),
    "P_30": ("p@30", {}), "recall_10": ("r@10", {}), "Rprec": ("rprec", {}), "bpref": ("bpref", {}),
    "success_1": ("success@1", {}), "success_5": ("success@5", {}), "set_P": ("p", {}),
    "set_recall": ("r", {}), "num_ret": ("num_ret", {}), "num_rel": ("num_rel", {}),
    "num_rel_ret": ("num_rel_ret", {}),
}


@pytest.mark.parametrize("seed,options", [(0, {}), (1, {"relevance_level": 2}),
                                          (2, {"judged_docs_only": True}), (3, {})])
def test_random_runs_match_pytrec_eval(seed, options):
    run, qrels = _random_case(seed)
    kwargs = {}
    if "relevance_level" in options:
        kwargs["relevance_level"] = options["relevance_level"]
    if options.get("judged_docs_only"):
        kwargs["judged_docs_only_flag"] = True
    measures = {"ndcg_cut.5,10", "ndcg", "map", "map_cut.10", "recip_rank", "P.5,30", "recall.10", "Rprec",
                "bpref", "success.1,5", "set_P", "set_recall", "num_ret", "num_rel", "num_rel_ret"}
    expected = _pytrec(run, qrels, measures, **kwargs)
    inputs = extract_ranking(run, qrels=qrels, **options)
    qids = inputs.frame["qid"].tolist()
    assert set(qids) == set(expected)  # the query only in the run is ignored, only in qrels excluded
    for trec_name, (name, params) in _PYTREC_MAP.items():
        ours = scorebench.metric(name, **params).compute(inputs.merged())
        theirs = np.array([expected[q][trec_name] for q in qids])
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12, err_msg=trec_name)


def test_iprec_cutoff_follows_trec_eval_10_not_pytrec_eval():
    """The recall cut-off of iprec_at_recall: trec_eval 10.0's test outputs (see
    test_ranking_trec_eval.py) need the c-th relevant document with c = floor(r R + 1/2);
    pytrec_eval-terrier 0.5.11 bundles code using floor(r R + 0.9). Here R = 4, r = 0.3:
    c = 1 (ours: max precision from rank 1 on = 1.0) versus c = 2 (pytrec_eval: from rank 4
    on, 4/6)."""
    ranked, judged = [[1, 0, 0, 1, 1, 1]], [[1, 1, 1, 1]]
    assert rk.iprec_at_recall(ranked, judged, r=0.3)[0] == 1.0
    run = pd.DataFrame({"qid": "q", "docid": [f"d{i}" for i in range(6)], "score": -np.arange(6.0)})
    qrels = pd.DataFrame({"qid": "q", "docid": ["d0", "d3", "d4", "d5"], "relevance": 1})
    assert _pytrec(run, qrels, {"iprec_at_recall.0.3"})["q"]["iprec_at_recall_0.30"] == pytest.approx(2 / 3)


def test_exponential_and_custom_gains_against_direct_formula():
    run, qrels = _random_case(5, ties=False)
    inputs = extract_ranking(run, qrels=qrels)
    judged = qrels.groupby("qid")
    for gain, fn in (("exponential", lambda r: 2.0 ** r - 1), ({1: 3.0, 2: 9.0, 3: 1.0},
                                                             lambda r: np.select([r == 1, r == 2, r == 3], [3.0, 9.0, 1.0], 0.0))):
        ours = scorebench.metric("ndcg@10", gain=gain).compute(inputs.merged())
        for i, qid in enumerate(inputs.frame["qid"]):
            ranked = run[run.qid == qid].sort_values(["score", "docid"], ascending=False)
            rel_of = dict(zip(judged.get_group(qid).docid, judged.get_group(qid).relevance))
            r = np.array([rel_of.get(d, 0) for d in ranked.docid[:10]], dtype=float)
            g = np.where(r > 0, fn(np.maximum(r, 0)), 0.0)
            dcg = (g / np.log2(np.arange(len(g)) + 2)).sum()
            all_r = np.array([v for v in rel_of.values() if v > 0], dtype=float)
            ig = np.sort(fn(all_r))[::-1][:10]
            ig = ig[ig > 0]
            idcg = (ig / np.log2(np.arange(len(ig)) + 2)).sum()
            assert ours[i] == pytest.approx(dcg / idcg if idcg > 0 else 0.0, abs=1e-12)


def _err_reference(rels, max_grade, k=None):
    total, reach = 0.0, 1.0
    for i, r in enumerate(rels[:k] if k else rels, start=1):
        stop = (2.0 ** max(r, 0) - 1) / 2.0 ** max_grade
        total += reach * stop / i
        reach *= 1 - stop
    return total


def test_err_matches_the_cascade_definition():
    rng = np.random.default_rng(7)
    ranked = [rng.integers(0, 4, size=int(n)).astype(float) for n in rng.integers(1, 30, size=40)]
    judged = [np.concatenate([r, [3.0]]) for r in ranked]
    for k in (None, 5):
        ours = rk.err(ranked, judged, k=k)
        np.testing.assert_allclose(ours, [_err_reference(list(r), 3.0, k) for r in ranked], rtol=1e-12)
    assert rk.err([[3.0]], [[3.0]], max_grade=4)[0] == pytest.approx(7 / 16)


def test_ranking_kind_max_grade_sets_errs_top_grade_for_every_query():
    # the kind's max_grade (gdeval's scale is 0..4) replaces the qrels' largest grade as g_max
    run = pd.DataFrame({"qid": ["1", "1", "2"], "docid": ["a", "b", "c"], "score": [2.0, 1.0, 1.0]})
    qrels = pd.DataFrame({"qid": ["1", "1", "2"], "docid": ["a", "b", "c"], "relevance": [2, 1, 1]})
    by_default = scorebench.evaluate(run, ["err@5"], qrels=qrels, n_boot=0)
    gdeval = scorebench.evaluate(run, ["err@5"], qrels=qrels, max_grade=4, n_boot=0)
    ranked, judged = [[2, 1], [1]], [[2, 1], [1]]
    assert by_default.value.iloc[0] == pytest.approx(rk.err(ranked, judged).mean(), rel=1e-12)
    assert gdeval.value.iloc[0] == pytest.approx(rk.err(ranked, judged, max_grade=4).mean(), rel=1e-12)
    with pytest.raises(InputError, match="below the largest relevance"):
        extract_ranking(run, qrels=qrels, max_grade=1)
    with pytest.raises(InputError, match="max_grade"):
        extract_ranking(run, qrels=qrels, max_grade=float("nan"))


def test_exact_toy_values():
    ranked, judged = [[1, 0, 1, float("nan"), 2]], [[1, 1, 2, 0, 0, 1]]
    # relevant at ranks 1, 3, 5; R = 4 relevant judged documents
    assert rk.average_precision(ranked, judged)[0] == pytest.approx((1 + 2 / 3 + 3 / 5) / 4)
    assert rk.precision(ranked, judged, k=2)[0] == 0.5
    assert rk.precision(ranked, judged, k=10)[0] == 0.3
    assert rk.recall(ranked, judged, k=3)[0] == 0.5
    assert rk.r_precision(ranked, judged)[0] == 0.5
    assert rk.reciprocal_rank([[0, 0, 0, 1]], [[1]])[0] == 0.25
    assert rk.success(ranked, judged, k=1)[0] == 1.0
    assert rk.num_rel_ret(ranked, judged)[0] == 3
    # bpref: N = 2 judged non-relevant; the relevant docs after it see 1 non-relevant above
    assert rk.bpref(ranked, judged)[0] == pytest.approx((1 + 0.5 + 0.5) / 4)
    # ndcg with linear gains: dcg = 1 + 1/2 + 2/log2(6); ideal 2, 1, 1, 1
    dcg = 1 + 1 / 2 + 2 / math.log2(6)
    idcg = 2 + 1 / math.log2(3) + 1 / 2 + 1 / math.log2(5)
    assert rk.ndcg(ranked, judged)[0] == pytest.approx(dcg / idcg)
    assert rk.dcg(ranked, judged, k=3)[0] == pytest.approx(1.5)
    assert rk.rbp(ranked, judged, p=0.5)[0] == pytest.approx(0.5 * (0.5 + 0.5 ** 2 * 0.5 + 0.5 ** 4))
    assert rk.rbp([[1, 1]], [[1, 1]], p=0.8)[0] == pytest.approx(0.2 * 1.8)
    # a query without relevant documents scores 0 everywhere (not NaN, not 1)
    for fn in (rk.ndcg, rk.average_precision, rk.reciprocal_rank, rk.r_precision, rk.bpref, rk.recall):
        assert fn([[0, 0]], [[0, 0]])[0] == 0.0


def test_ties_are_broken_by_docid_descending_and_rank_column_ignored():
    run = pd.DataFrame({"qid": "1", "docid": ["a", "c", "b"], "score": [1.0, 1.0, 1.0], "rank": [1, 2, 3]})
    qrels = pd.DataFrame({"qid": ["1"], "docid": ["a"], "relevance": [1]})
    inputs = extract_ranking(run, qrels=qrels)
    assert scorebench.metric("mrr").compute(inputs.merged())[0] == pytest.approx(1 / 3)  # c, b, a
    shuffled = extract_ranking(run.iloc[[2, 0, 1]], qrels=qrels)
    assert scorebench.metric("mrr").compute(shuffled.merged())[0] == pytest.approx(1 / 3)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=12), st.integers(1, 12), st.randoms())
def test_properties(grades, k, rnd):
    ideal = sorted(grades, reverse=True)
    assert rk.ndcg([ideal], [grades], k=k)[0] == pytest.approx(1.0 if max(grades) > 0 else 0.0)
    shuffled = list(grades)
    rnd.shuffle(shuffled)
    for fn in (rk.ndcg, rk.average_precision, rk.rbp, rk.err, rk.bpref, rk.r_precision):
        value = fn([shuffled], [grades])[0]
        assert 0.0 <= value <= 1.0 + 1e-12
    # AP never exceeds 1 and equals 1 when all relevant documents come first
    assert rk.average_precision([ideal], [grades])[0] == pytest.approx(1.0 if max(grades) > 0 else 0.0)


def test_options_max_docs_and_complete_and_subsets():
    run, qrels = _random_case(11)
    full = extract_ranking(run, qrels=qrels)
    cut = extract_ranking(run, qrels=qrels, max_docs=5)
    np.testing.assert_allclose(scorebench.metric("p@5").compute(cut.merged()),
                               scorebench.metric("p@5").compute(full.merged()))
    assert cut.arrays["n_ret"].max() <= 5
    complete = extract_ranking(run, qrels=qrels, complete=True)
    assert complete.n == full.n + 1 and complete.consts["missing_queries"] == (("only_in_qrels",),)
    assert full.consts["ignored_queries"] == ("only_in_run",)
    # units taken in any order / resampled keep their values (what the bootstrap does)
    m = scorebench.metric("ndcg@10")
    values = m.compute(full.merged())
    idx = np.array([4, 0, 4, 2])
    np.testing.assert_allclose(m.compute(full.take(idx)), values[idx])


def test_systems_tasks_and_mixed_id_types():
    run, qrels = _random_case(12)
    two = pd.concat([run.assign(system="a"), run.assign(system="b", score=-run.score)], ignore_index=True)
    inputs = extract_ranking(two, qrels=qrels)
    assert list(inputs.frame.columns) == ["system", "qid"]
    single = scorebench.metric("map").compute(extract_ranking(run, qrels=qrels).merged())
    both = scorebench.metric("map").compute(inputs.merged())
    np.testing.assert_allclose(both[inputs.frame.system.eq("a").to_numpy()], single)
    # integer qids in the run match string qids in the qrels
    numeric = pd.DataFrame({"qid": [7, 7], "docid": ["x", "y"], "score": [2.0, 1.0]})
    judged = pd.DataFrame({"qid": ["7"], "docid": ["y"], "relevance": [1]})
    assert scorebench.metric("mrr").compute(extract_ranking(numeric, qrels=judged).merged())[0] == 0.5


@pytest.mark.parametrize("change,message", [
    (lambda run, q: (run, None), "qrels are required"),
    (lambda run, q: (pd.concat([run, run.iloc[:1]]), q), "retrieved twice"),
    (lambda run, q: (run, pd.concat([q, q.iloc[:1]])), "judged more than once"),
    (lambda run, q: (run.assign(score=np.where(np.arange(len(run)) == 2, np.nan, run.score)), q), "NaN"),
    (lambda run, q: (run.drop(columns="docid"), q), "missing column"),
    (lambda run, q: (run, q.assign(relevance="x")), "expected numbers"),
])
def test_input_errors(change, message):
    run, qrels = _random_case(13, n_q=4)
    run, qrels = change(run, qrels)
    with pytest.raises(InputError, match=message):
        extract_ranking(run, qrels=qrels)


def test_parameter_errors():
    with pytest.raises(InputError, match="positive integer"):
        rk.ndcg([[1]], [[1]], k=0)
    with pytest.raises(InputError, match="gain"):
        rk.ndcg([[1]], [[1]], gain="cubic")
    with pytest.raises(InputError, match="required"):
        rk.iprec_at_recall([[1]], [[1]], r=None)
    with pytest.raises(InputError, match=r"\(0, 1\)"):
        rk.rbp([[1]], [[1]], p=1.5)
    with pytest.raises(InputError, match="relevance_level"):
        rk.ndcg([[1]], [[1]], relevance_level=0)
    with pytest.raises(InputError, match="queries"):
        rk.ndcg([[1], [0]], [[1]])
    run, qrels = _random_case(14, n_q=3)
    with pytest.raises(InputError, match="max_docs"):
        extract_ranking(run, qrels=qrels, max_docs=0)


def test_nan_policy_omit_drops_rows():
    run, qrels = _random_case(15, n_q=5)
    holed = run.assign(score=np.where(np.arange(len(run)) == 0, np.nan, run.score))
    inputs = extract_ranking(holed, qrels=qrels, nan_policy="omit")
    assert inputs.arrays["n_ret"].sum() == len(run) - 1 - 1  # one NaN row, one query without qrels


# --- end to end ---------------------------------------------------------------------------

needs_ref = pytest.mark.skipif(not (REF / "MANIFEST.md").exists(), reason=f"trec_eval data not at {REF}")


@needs_ref
def test_evaluate_per_query_end_to_end(tmp_path):
    from scorebench.io.trec import read_trec_qrels, read_trec_run

    run = read_trec_run(REF / "results.test")
    out = scorebench.evaluate(run, ["ndcg@10", "map"], kind="ranking", qrels=REF / "qrels.test",
                              per_unit=True, n_boot=50)
    rows = out.set_index(["qid", "metric"])["value"]
    assert rows["302", "ndcg@10"] == pytest.approx(0.7530, abs=5e-5)
    assert rows["all", "ndcg@10"] == pytest.approx(0.3016, abs=5e-5)
    assert rows["all", scorebench.metric("map").name] == pytest.approx(0.1785, abs=5e-5)
    complete = scorebench.evaluate(read_trec_run(REF / "results.trunc"), ["map"], kind="ranking",
                                   qrels=read_trec_qrels(REF / "qrels.test"), complete=True, n_boot=20)
    assert complete["value"].iloc[0] == pytest.approx(0.1016, abs=5e-5)


@needs_ref
def test_cli_on_trec_files(tmp_path):
    from scorebench.cli import cli

    shutil.copy(REF / "results.test", tmp_path / "bm25.run")
    shutil.copy(REF / "qrels.test", tmp_path / "judged.qrels")
    result = CliRunner().invoke(cli, ["evaluate", str(tmp_path / "bm25.run"), "--qrels", str(tmp_path / "judged.qrels"),
                                      "--metric", "ndcg@10", "--metric", "p@5", "--per-query",
                                      "--bootstrap", "50", "--output", str(tmp_path / "scores.csv")])
    assert result.exit_code == 0, result.output
    table = pd.read_csv(tmp_path / "scores.csv", comment="#", dtype={"qid": str})
    values = table.set_index(["qid", "metric"])["value"]
    assert values["301", "ndcg@10"] == pytest.approx(0.1518, abs=5e-5)
    assert values["all", "p@5"] == pytest.approx(0.2667, abs=5e-5)
    assert len(table) == 8


def test_paired_comparison_per_query_through_compare():
    run, qrels = _random_case(21)
    rng = np.random.default_rng(0)
    two = pd.concat([run.assign(system="a"), run.assign(system="b", score=rng.normal(size=len(run)))],
                    ignore_index=True)
    out = scorebench.compare(two, "ndcg@10", kind="ranking", qrels=qrels)
    inputs = extract_ranking(two, qrels=qrels)
    values = scorebench.metric("ndcg@10").compute(inputs.merged())
    is_a = inputs.frame["system"].eq("a").to_numpy()
    assert out["mean_diff"].iloc[0] == pytest.approx(values[is_a].mean() - values[~is_a].mean())
    assert {"p_holm", "p_bh"} <= set(out.columns) and (out["n"] == is_a.sum()).all()


def test_system_and_task_groups_are_kept():
    # Regression: with both columns, pandas' factorize of the MultiIndex dropped the level
    # names, so every (system, task) was pooled into one group.
    rng = np.random.default_rng(9)
    qid = np.repeat(np.arange(20), 10).astype(str)
    docid = np.tile(np.arange(10), 20).astype(str)
    qrels = pd.DataFrame({"qid": qid, "docid": docid, "relevance": rng.integers(0, 3, qid.size)})
    run = pd.concat([pd.DataFrame({"system": s, "task": t, "qid": qid, "docid": docid,
                                   "score": rng.normal(size=qid.size)})
                     for s in ("a", "b") for t in ("t1", "t2")], ignore_index=True)
    scores = scorebench.evaluate(run, "ndcg@5", qrels=qrels, n_boot=0)
    assert list(scores[["system", "task"]].itertuples(index=False, name=None)) == [
        ("a", "t1"), ("a", "t2"), ("b", "t1"), ("b", "t2")]
    for (s, t), part in run.groupby(["system", "task"]):
        alone = scorebench.evaluate(part.drop(columns=["system", "task"]), "ndcg@5", qrels=qrels, n_boot=0)
        got = scores[(scores.system == s) & (scores.task == t)].value.item()
        assert got == pytest.approx(alone.value.item(), rel=1e-12)
