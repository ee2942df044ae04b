"""The ``diversity`` table kind: intent-aware measures through ``scorebench.evaluate`` and the
CLI, per query equal to :func:`diversity_scores` and to ndeval (pyndeval)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import scorebench
from scorebench.cli import cli
from scorebench.core.errors import InputError
from scorebench.metrics.ranking.diversity_kind import diversity_scores



def _case(seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A random run and diversity qrels over 20 queries (graded, some non-relevant)."""
    rng = np.random.default_rng(seed)
    qr, ru = [], []
    for q in range(20):
        for s in range(int(rng.integers(1, 6))):
            for d in rng.choice(40, size=int(rng.integers(1, 10)), replace=False):
                qr.append((f"q{q}", str(s + 1), f"d{d}", int(rng.choice([0, 1, 1, 2]))))
        docs = rng.choice(50, size=int(rng.integers(1, 30)), replace=False)
        ru += [(f"q{q}", f"d{d}", float(x)) for d, x in zip(docs, rng.normal(size=len(docs)))]
    qrels = pd.DataFrame(qr, columns=["qid", "subtopic", "docid", "relevance"])
    return pd.DataFrame(ru, columns=["qid", "docid", "score"]), qrels.drop_duplicates(["qid", "subtopic", "docid"])


_MEASURES = ["alpha_ndcg@10", "err_ia@10", "nerr_ia@10", "nrbp", "nnrbp", "p_ia@10", "ap_ia", "s_recall@10"]


def _two_systems(seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    run_a, qrels = _case(seed)
    run_b = run_a.assign(score=-run_a["score"])
    run_b = run_b[run_b["qid"] != "q3"]  # q3 missing from system b: scores 0 there (ndeval)
    return pd.concat([run_a.assign(system="a"), run_b.assign(system="b")], ignore_index=True), qrels


def test_per_query_values_equal_the_functions():
    run, qrels = _two_systems(0)
    scores = scorebench.evaluate(run, _MEASURES, qrels=qrels, per_unit=True, n_boot=0)
    assert scores.attrs["kind"] == "diversity"
    for system, block in run.groupby("system"):
        ref = diversity_scores(block.drop(columns="system"), qrels, k=10).set_index("qid")
        mine = scores[(scores.system == system) & (scores.qid != "all")]
        for measure in _MEASURES:
            per_query = mine[mine.metric == measure].set_index("qid")["value"]
            assert list(per_query.index) == list(ref.index)
            np.testing.assert_allclose(per_query, ref[measure], rtol=1e-12, atol=0, err_msg=measure)
            total = scores[(scores.system == system) & (scores.qid == "all") & (scores.metric == measure)]
            assert total["value"].iloc[0] == pytest.approx(ref[measure].mean(), rel=1e-12)
            assert total["n"].iloc[0] == qrels["qid"].nunique()
    b = scores[(scores.system == "b") & (scores.qid == "q3")]
    assert (b["value"] == 0).all() and len(b) == len(_MEASURES)


@pytest.mark.parametrize("seed", [3, 4])
def test_evaluate_matches_ndeval_including_normalised_measures(seed):
    ir_measures = pytest.importorskip("ir_measures")
    pytest.importorskip("pyndeval")
    M = ir_measures.measures
    run, qrels = _case(seed)
    scores = scorebench.evaluate(run, ["nerr_ia@5", "nnrbp", "alpha_ndcg@20", "err_ia@20"], qrels=qrels,
                                 per_unit=True, n_boot=0)
    irq = qrels.rename(columns={"qid": "query_id", "subtopic": "iteration", "docid": "doc_id"})
    irr = run.rename(columns={"qid": "query_id", "docid": "doc_id"})
    cases = {"nerr_ia@5": M.nERR_IA @ 5, "nnrbp": M.nNRBP, "alpha_ndcg@20": M.alpha_nDCG @ 20,
             "err_ia@20": M.ERR_IA @ 20}
    for name, measure in cases.items():
        ref = {m.query_id: m.value for m in ir_measures.pyndeval.iter_calc([measure], irq, irr)}
        mine = scores[(scores.metric == name) & (scores.qid != "all")].set_index("qid")["value"]
        qids = sorted(ref)
        assert qids
        np.testing.assert_allclose(mine.loc[qids], [ref[q] for q in qids], rtol=1e-12, atol=1e-14, err_msg=name)


def test_parameters_through_the_name_and_hand_values():
    qrels = pd.DataFrame({"qid": "1", "subtopic": ["1", "1", "2", "2", "3"], "docid": ["a", "b", "b", "c", "d"],
                          "relevance": 1})
    run = pd.DataFrame({"qid": "1", "docid": ["a", "b", "c", "e"], "score": [4.0, 3.0, 2.0, 1.0]})
    value = scorebench.evaluate(run, "nrbp(alpha=0.25,beta=0.75)", qrels=qrels, n_boot=0)["value"].iloc[0]
    gains = np.array([1.0, 1 + 0.75, 0.75, 0.0])  # novelty gains at ranks 1..4 with alpha = 1/4
    assert value == pytest.approx((1 - 0.75 * 0.75) / 3 * (0.75 ** np.arange(4) * gains).sum(), rel=1e-12)
    # nERR-IA@5: ERR-IA of the run (a, b, c) over that of the greedy ideal ranking (b, d, c, a)
    run_err = (0.5 + 0.25 / 2) + (0.5 / 2 + 0.25 / 3)
    ideal_err = (0.5 + 0.25 / 4) + (0.5 + 0.25 / 3) + 0.5 / 2
    value = scorebench.evaluate(run, "nerr_ia@5", qrels=qrels, n_boot=0)["value"].iloc[0]
    assert value == pytest.approx(run_err / ideal_err, rel=1e-12)


def test_intervals_resample_queries():
    run, qrels = _case(5)
    scores = scorebench.evaluate(run, "alpha_ndcg@10", qrels=qrels, n_boot=300, seed=1)
    row = scores.iloc[0]
    assert row.ci_low < row.value < row.ci_high
    assert scores.attrs["interval_methods"]["alpha_ndcg@10"] == "percentile"
    again = scorebench.evaluate(run, "alpha_ndcg@10", qrels=qrels, n_boot=300, seed=1)
    assert again.iloc[0].ci_low == row.ci_low


def test_errors_name_the_problem():
    run = pd.DataFrame({"qid": "1", "docid": ["a", "b"], "score": [1.0, 0.5]})
    qrels = pd.DataFrame({"qid": "1", "subtopic": "1", "docid": ["a"], "relevance": [1]})
    with pytest.raises(InputError, match="subtopic"):
        scorebench.evaluate(run, "ap_ia", qrels=qrels.drop(columns="subtopic"), n_boot=0)
    with pytest.raises(InputError, match="qrels are required"):
        scorebench.evaluate(run, "ap_ia", n_boot=0)
    with pytest.raises(InputError, match="alpha"):
        scorebench.evaluate(run, "nrbp(alpha=1.5)", qrels=qrels, n_boot=0)
    with pytest.raises(InputError, match="cut-off"):
        scorebench.evaluate(run, "p_ia@0", qrels=qrels, n_boot=0)
    with pytest.raises(InputError, match="retrieved twice"):
        scorebench.evaluate(pd.concat([run, run]), "ap_ia", qrels=qrels, n_boot=0)
    with pytest.raises(InputError, match="judged twice"):
        scorebench.evaluate(run, "ap_ia", qrels=pd.concat([qrels, qrels]), n_boot=0)
    with pytest.raises(InputError, match="score"):
        scorebench.evaluate(run.assign(score=["x", "y"]), "ap_ia", qrels=qrels, n_boot=0)
    with pytest.raises(InputError, match="missing ids"):
        scorebench.evaluate(run.assign(docid=["a", None]), "ap_ia", qrels=qrels, n_boot=0)


def test_cli_evaluate_reads_trec_diversity_qrels(tmp_path):
    q, r = tmp_path / "div.qrels", tmp_path / "div.run"
    q.write_text("1 1 a 1\n1 1 b 1\n1 2 b 1\n1 2 c 1\n1 3 d 1\n2 1 x 1\n")
    r.write_text("1 Q0 a 1 4 S\n1 Q0 b 2 3 S\n1 Q0 c 3 2 S\n1 Q0 e 4 1 S\n")
    result = CliRunner().invoke(cli, ["evaluate", str(r), "-m", "s_recall@2", "-m", "ap_ia", "--qrels", str(q),
                                      "--per-query", "--bootstrap", "0", "--format", "trec_eval"])
    assert result.exit_code == 0, result.output
    lines = [line.split("\t") for line in result.output.splitlines()]
    table = {(m.strip(), qid): value for m, qid, value in lines}
    assert table[("strec@2", "1")] == f"{2 / 3:6.4f}"
    assert table[("strec@2", "2")] == "0.0000"  # query 2 is not in the run: 0, as ndeval
    assert table[("MAP-IA", "all")] == f"{(1 + (1 / 2 + 2 / 3) / 2 + 0) / 3 / 2:6.4f}"
    assert table[("num_q", "all")] == "2"
    bad = CliRunner().invoke(cli, ["evaluate", str(r), "-m", "ap_ia", "--qrels", str(tmp_path / "none.qrels")])
    assert bad.exit_code != 0 and "not found" in bad.output


def test_listed_in_the_ranking_family():
    listing = scorebench.list_metrics(family="ranking")
    names = set(listing.loc[listing.kind == "diversity", "name"])
    assert names == {"alpha_ndcg@k", "err_ia@k", "nerr_ia@k", "nrbp", "nnrbp", "p_ia@k", "ap_ia", "s_recall@k"}
