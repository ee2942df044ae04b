"""Intent-aware measures against ndeval (pyndeval through ir_measures) per query, a
hand-computed example and errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scorebench.core.errors import InputError
from scorebench.metrics.ranking.diversity_kind import diversity_scores


def _case(seed: int):
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


@pytest.mark.parametrize("seed,k", [(0, 10), (1, 5), (2, 20)])
def test_matches_ndeval(seed, k):
    ir_measures = pytest.importorskip("ir_measures")
    pytest.importorskip("pyndeval")
    M = ir_measures.measures
    run, qrels = _case(seed)
    ours = diversity_scores(run, qrels, k=k).set_index("qid")
    irq = qrels.rename(columns={"qid": "query_id", "subtopic": "iteration", "docid": "doc_id"})
    irr = run.rename(columns={"qid": "query_id", "docid": "doc_id"})
    cases = {f"alpha_ndcg@{k}": M.alpha_nDCG @ k, f"err_ia@{k}": M.ERR_IA @ k, "nrbp": M.NRBP,
             f"p_ia@{k}": M.P_IA @ k, "ap_ia": M.AP_IA, f"s_recall@{k}": M.StRecall @ k}
    for col, measure in cases.items():
        ref = {m.query_id: m.value for m in ir_measures.pyndeval.iter_calc([measure], irq, irr)}
        assert ref, col
        qids = sorted(ref)
        np.testing.assert_allclose(ours.loc[qids, col], [ref[q] for q in qids], rtol=1e-12, atol=1e-14, err_msg=col)


def test_hand_computed():
    qrels = pd.DataFrame({"qid": "1", "subtopic": ["1", "1", "2", "2", "3"], "docid": ["a", "b", "b", "c", "d"],
                          "relevance": 1})
    run = pd.DataFrame({"qid": "1", "docid": ["a", "b", "c", "e"], "score": [4.0, 3.0, 2.0, 1.0]})
    row = diversity_scores(run, qrels, k=2).iloc[0]
    assert row["s_recall@2"] == pytest.approx(2 / 3)  # a, b cover intents 1 and 2 of 3
    assert row["p_ia@2"] == pytest.approx((1 + 0.5 + 0) / 3)
    assert row["ap_ia"] == pytest.approx((1 + (1 / 2 + 2 / 3) / 2 + 0) / 3)
    # NRBP, alpha = beta = 1/2: gains 1, 1.5, 0.5 at ranks 1..3 -> (1 - 1/4) / 3 * (1 + 0.75 + 0.125)
    assert row["nrbp"] == pytest.approx(0.75 / 3 * 1.875)
    # alpha-nDCG@2: gains (1, 1.5); greedy ideal (b: 2, d: 1)
    assert row["alpha_ndcg@2"] == pytest.approx((1 + 1.5 / np.log2(3)) / (2 + 1 / np.log2(3)))


def test_errors():
    run = pd.DataFrame({"qid": "1", "docid": ["a"], "score": [1.0]})
    qrels = pd.DataFrame({"qid": "1", "subtopic": "1", "docid": ["a"], "relevance": [1]})
    with pytest.raises(InputError, match="subtopic"):
        diversity_scores(run, qrels.drop(columns="subtopic"))
    with pytest.raises(InputError, match="cut-off"):
        diversity_scores(run, qrels, k=0)
    with pytest.raises(InputError, match="alpha"):
        diversity_scores(run, qrels, alpha=1.0)
    with pytest.raises(InputError, match="twice"):
        diversity_scores(pd.concat([run, run]), qrels)


def test_cli(tmp_path):
    from click.testing import CliRunner

    from scorebench.cli import cli

    q, r, out = tmp_path / "div.qrels", tmp_path / "div.run", tmp_path / "div.csv"
    q.write_text("1 1 a 1\n1 1 b 1\n1 2 b 1\n1 2 c 1\n1 3 d 1\n")
    r.write_text("1 Q0 a 1 4 S\n1 Q0 b 2 3 S\n1 Q0 c 3 2 S\n1 Q0 e 4 1 S\n")
    result = CliRunner().invoke(cli, ["diversity", str(r), str(q), "--k", "2", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert pd.read_csv(out)["s_recall@2"].iloc[0] == pytest.approx(2 / 3)
    result = CliRunner().invoke(cli, ["diversity", str(r), str(q), "--alpha", "2"])
    assert result.exit_code != 0 and "alpha" in result.output
