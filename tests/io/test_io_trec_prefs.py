"""trec_eval's prefs and qrels_jg readers on trec_eval 10.0's own test files, plus errors."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import scorebench
from scorebench.core.errors import InputError
from scorebench.io.trec import read_trec_qrels, read_trec_run
from scorebench.io.trec_prefs import qrels_of_group, read_trec_prefs, read_trec_qrels_jg
from scorebench.metrics.ranking import extract_ranking

REF = Path(__file__).resolve().parents[2].parent / "shared" / "reference" / "trec_eval"
needs_ref = pytest.mark.skipif(not (REF / "qrels.123").exists(), reason="trec_eval reference data not found")


@needs_ref
def test_qrels_jg_reference_files():
    jg = read_trec_qrels_jg(REF / "qrels.123")
    assert sorted(jg["jg"].unique()) == ["0", "1", "2"]
    assert jg["relevance"].dtype.kind == "i"
    with_comments = read_trec_qrels_jg(REF / "qrels.comments.123")
    # the commented file differs in one document id only ("CR93E-3103#37": '#' inside a docno is data)
    diff = pd.concat([jg, with_comments]).drop_duplicates(keep=False)
    assert sorted(diff["docid"]) == ["CR93E-3103", "CR93E-3103#37"]
    # trec_eval's out.test.qrels_jg: with one group, the group's map is the plain qrels' map
    run = read_trec_run(REF / "results.test")
    group0 = qrels_of_group(jg, "0")
    assert len(group0) == (jg["jg"] == "0").sum()
    values = scorebench.metric("map").compute(extract_ranking(run, qrels=group0).merged())
    assert ((values >= 0) & (values <= 1)).all()


@needs_ref
def test_prefs_reference_files():
    prefs = read_trec_prefs(REF / "prefs.test")
    assert list(prefs.columns) == ["qid", "jg", "jsg", "docid", "relevance"]
    assert prefs.iloc[0].tolist() == ["1.EC.AB", "F:Ret,C:Not", "F:RnkdLst2digits", "FR940303-1-00022", 1.0]
    commented = read_trec_prefs(REF / "prefs.comment.test")
    assert len(commented) == len(prefs)


def test_errors(tmp_path):
    f = tmp_path / "bad.prefs"
    f.write_text("q u s d -1\n")
    with pytest.raises(InputError, match="rel_level must be >= 0"):
        read_trec_prefs(f)
    f.write_text("q u s d\n")
    with pytest.raises(InputError, match="line 1"):
        read_trec_prefs(f)
    g = tmp_path / "bad.qrels"
    g.write_text("1 0 a 1\n1 0 a 2\n")
    with pytest.raises(InputError, match="judged twice"):
        read_trec_qrels_jg(g)
    g.write_text("1 0 a 1.5\n")
    with pytest.raises(InputError, match="integer"):
        read_trec_qrels_jg(g)
    g.write_text("1 0 a 300\n")
    with pytest.raises(InputError, match=r"\[-127, 127\]"):
        read_trec_qrels_jg(g)
    g.write_text("1 0 a 1\n1 1 a 0\n")
    table = read_trec_qrels_jg(g)
    with pytest.raises(InputError, match="no judgment group '7'"):
        qrels_of_group(table, "7")
    assert qrels_of_group(table, "1").equals(pd.DataFrame({"qid": ["1"], "docid": ["a"], "relevance": [0]}).astype(
        qrels_of_group(table, "1").dtypes.to_dict()))
    # a group's qrels is what read_trec_qrels gives for the same lines
    h = tmp_path / "plain.qrels"
    h.write_text("1 0 a 1\n")
    assert qrels_of_group(table, "0").values.tolist() == read_trec_qrels(h).values.tolist()
