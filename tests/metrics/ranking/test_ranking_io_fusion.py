"""TREC run/qrels readers, run fusion, and the exact fallback of the hashed id join."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import scorebench
from scorebench.core.errors import InputError
from scorebench.metrics.ranking.fusion import comb_mnz, comb_sum, fuse, normalize_scores, reciprocal_rank_fusion
from scorebench.io.trec import looks_like_trec, read_trec_qrels, read_trec_run, write_trec_run
from scorebench.metrics.ranking import _ids, extract_ranking


# --- readers ------------------------------------------------------------------------------


def test_read_run_with_comments_blank_lines_and_trailing_fields(tmp_path):
    path = tmp_path / "a.run"
    path.write_text("# header comment\n1 Q0 d1 1 2.5 bm25\n\n1 Q0 d2 2 1e-3 bm25 extra junk\n"
                    "#another\n2\tQ0\td9\t1\t-3\tbm25\n")
    run = read_trec_run(path)
    assert run.columns.tolist() == ["qid", "docid", "rank", "score", "system"]
    assert run["docid"].tolist() == ["d1", "d2", "d9"]
    assert run["score"].tolist() == [2.5, 1e-3, -3.0]
    assert run["score"].dtype == np.float64 and run["rank"].dtype == np.int64
    assert looks_like_trec(path) == "run"


def test_read_qrels_graded_negative_and_float_grades(tmp_path):
    path = tmp_path / "a.qrels"
    path.write_text("1 0 d1 2\n1 0 d2 -1\n# c\n2 0 d3 0\n")
    qrels = read_trec_qrels(path)
    assert qrels.values.tolist() == [["1", "d1", 2], ["1", "d2", -1], ["2", "d3", 0]]
    assert qrels["relevance"].dtype == np.int64
    path.write_text("1 0 d1 0.5\n")
    assert read_trec_qrels(path)["relevance"].tolist() == [0.5]
    assert looks_like_trec(path) == "qrels"


@pytest.mark.parametrize("reader,text,line,what", [
    (read_trec_run, "1 Q0 d1 1 2.5 x\n1 Q0 d2 2 x\n", 2, "6 whitespace-separated"),
    (read_trec_run, "# c\n1 Q0 d1 1 2.5 x\n1 Q0 d2 2 abc x\n", 3, "'score' must be a finite number"),
    (read_trec_run, "1 Q0 d1 1 nan x\n", 1, "finite"),
    (read_trec_qrels, "1 0 d1 1\n1 0 d2\n", 2, "4 whitespace-separated"),
    (read_trec_qrels, "1 0 d1 1 7\n", 1, "4 whitespace-separated"),
    (read_trec_qrels, "1 0 d1 high\n", 1, "'relevance'"),
])
def test_malformed_lines_name_the_line(tmp_path, reader, text, line, what):
    path = tmp_path / "bad.txt"
    path.write_text(text)
    with pytest.raises(InputError, match=f"line {line}: .*{what}"):
        reader(path)


def test_empty_file_and_write_roundtrip(tmp_path):
    (tmp_path / "empty.run").write_text("# nothing\n")
    with pytest.raises(InputError, match="no data lines"):
        read_trec_run(tmp_path / "empty.run")
    run = pd.DataFrame({"qid": ["2", "1", "1"], "docid": ["a", "b", "c"], "score": [0.5, 1.0, 3.0]})
    write_trec_run(run, tmp_path / "out.run", tag="mine")
    back = read_trec_run(tmp_path / "out.run")
    assert back[["qid", "docid", "rank"]].values.tolist() == [["1", "c", 1], ["1", "b", 2], ["2", "a", 1]]
    assert set(back["system"]) == {"mine"}


def test_qrels_path_and_dataframe_give_the_same_inputs(tmp_path):
    (tmp_path / "q.qrels").write_text("1 0 b 1\n1 0 c 2\n")
    run = pd.DataFrame({"qid": ["1"] * 3, "docid": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
    # the evaluation layer reads the file (the option's declared formats); the kind takes tables
    from_path = scorebench.evaluate(run, ["ndcg@3", "map"], qrels=tmp_path / "q.qrels", n_boot=0)
    from_frame = scorebench.evaluate(run, ["ndcg@3", "map"], qrels=read_trec_qrels(tmp_path / "q.qrels"), n_boot=0)
    assert from_path["value"].tolist() == from_frame["value"].tolist()
    with pytest.raises(InputError, match="qrels: file not found: '.*missing.qrels'"):
        scorebench.evaluate(run, "map", qrels=tmp_path / "missing.qrels", n_boot=0)
    with pytest.raises(InputError, match="takes a DataFrame; a file path"):
        extract_ranking(run, qrels=tmp_path / "q.qrels")


def test_hash_collisions_fall_back_to_the_exact_join(monkeypatch):
    """With every id hashed alike, the hashed join must notice and take the exact path."""
    rng = np.random.default_rng(0)
    run = pd.DataFrame({"qid": np.repeat(["1", "2"], 20), "docid": [f"d{i}" for i in range(40)],
                        "score": rng.normal(size=40)})
    qrels = pd.DataFrame({"qid": np.repeat(["1", "2"], 10), "docid": [f"d{i}" for i in range(0, 40, 2)],
                          "relevance": rng.integers(0, 3, 20)})
    expected = scorebench.metric("ndcg@5").compute(extract_ranking(run, qrels=qrels).merged())
    constant = lambda arr: (np.zeros(len(arr), np.uint64), np.arange(len(arr), dtype=np.uint64))  # noqa: E731
    monkeypatch.setattr("scorebench.metrics.ranking.kind.hash_strings", constant)
    got = scorebench.metric("ndcg@5").compute(extract_ranking(run, qrels=qrels).merged())
    np.testing.assert_allclose(got, expected)
    with pytest.raises(InputError, match="retrieved twice"):
        extract_ranking(pd.concat([run, run.iloc[[3]]]), qrels=qrels)


def test_string_hash_is_deterministic_and_separates_ids():
    import pyarrow as pa

    arr = pa.array(["a", "ab", "ba", "", "a" * 40, "é"], type=pa.large_string())
    h1, h2 = _ids.hash_strings(arr)
    assert len(set(h1.tolist())) == 6 and len(set(h2.tolist())) == 6
    again = _ids.hash_strings(pa.array(["ba"], type=pa.string()))
    assert again[0][0] == h1[2] and again[1][0] == h2[2]


# --- fusion -------------------------------------------------------------------------------


def _runs():
    a = pd.DataFrame({"qid": ["1"] * 4, "docid": ["w", "x", "y", "z"], "score": [4.0, 3.0, 2.0, 1.0]})
    b = pd.DataFrame({"qid": ["1"] * 3, "docid": ["z", "y", "v"], "score": [10.0, 5.0, 0.0]})
    return a, b


def test_fusion_exact_values():
    a, b = _runs()
    s = comb_sum([a, b]).set_index("docid")["score"]
    # min-max: a -> w 1, x 2/3, y 1/3, z 0; b -> z 1, y 0.5, v 0
    assert s.to_dict() == pytest.approx({"w": 1.0, "x": 2 / 3, "y": 1 / 3 + 0.5, "z": 1.0, "v": 0.0})
    m = comb_mnz([a, b]).set_index("docid")["score"]
    assert m["y"] == pytest.approx(2 * (1 / 3 + 0.5)) and m["x"] == pytest.approx(2 / 3)
    r = reciprocal_rank_fusion({"a": a, "b": b}, k=60).set_index("docid")["score"]
    assert r["z"] == pytest.approx(1 / 64 + 1 / 61) and r["v"] == pytest.approx(1 / 63)
    fused = comb_sum([a, b])
    assert fused["rank"].tolist() == [1, 2, 3, 4, 5] and fused["docid"].iloc[:2].tolist() == ["z", "w"]  # tie: docid desc
    assert fuse([a, b], method="combsum", normalization="zscore", weights=[1, 0])["docid"].iloc[0] == "w"


def test_zscore_and_single_frame_with_systems():
    a, b = _runs()
    z = normalize_scores(a, method="zscore")["score"].to_numpy()
    np.testing.assert_allclose(z, (a.score - a.score.mean()) / a.score.std(ddof=0))
    long = pd.concat([a.assign(system="a"), b.assign(system="b")])
    pd.testing.assert_frame_equal(reciprocal_rank_fusion(long), reciprocal_rank_fusion({"a": a, "b": b}))
    const = normalize_scores(pd.DataFrame({"qid": ["1", "1"], "docid": ["p", "q"], "score": [2.0, 2.0]}))
    assert const["score"].tolist() == [0.0, 0.0]


def test_fusion_errors():
    a, b = _runs()
    with pytest.raises(InputError, match="system"):
        comb_sum(a)
    with pytest.raises(InputError, match="normalization"):
        comb_sum([a, b], normalization="softmax")
    with pytest.raises(InputError, match="method"):
        fuse([a, b], method="borda")
    with pytest.raises(InputError, match="twice"):
        comb_sum([pd.concat([a, a.iloc[:1]]), b])
    with pytest.raises(InputError, match="weights"):
        comb_sum([a, b], weights=[1.0])


def test_fused_run_evaluates():
    a, b = _runs()
    qrels = pd.DataFrame({"qid": ["1", "1"], "docid": ["y", "z"], "relevance": [1, 2]})
    fused = comb_sum([a, b])
    value = scorebench.metric("ndcg@3").compute(extract_ranking(fused, qrels=qrels).merged())[0]
    assert 0 < value <= 1


def test_exact_ranking_sort_path_agrees_with_the_fast_path(monkeypatch):
    rng = np.random.default_rng(3)
    run = pd.DataFrame({"qid": np.repeat([f"q{i}" for i in range(30)], 25),
                        "docid": [f"d{i % 40}" for i in range(750)],
                        "score": np.round(rng.normal(size=750), 1)})  # many ties
    qrels = pd.DataFrame({"qid": np.repeat([f"q{i}" for i in range(30)], 8),
                          "docid": [f"d{i % 40}" for i in range(240)], "relevance": rng.integers(0, 4, 240)})
    names = ["ndcg@10", "map", "bpref", "mrr"]
    fast = [scorebench.metric(n).compute(extract_ranking(run, qrels=qrels).merged()) for n in names]
    monkeypatch.setattr("scorebench.metrics.ranking.kind._fast_order", lambda unit, score: None)
    exact = [scorebench.metric(n).compute(extract_ranking(run, qrels=qrels).merged()) for n in names]
    for a, b in zip(fast, exact):
        np.testing.assert_array_equal(a, b)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(max_size=30), min_size=1, max_size=20))
def test_string_hash_does_not_depend_on_the_batch(texts):
    import pyarrow as pa

    h1, h2 = _ids.hash_strings(pa.array(texts, type=pa.large_string()))
    for i, text in enumerate(texts):
        s1, s2 = _ids.hash_strings(pa.array([text], type=pa.string()))
        assert (s1[0], s2[0]) == (h1[i], h2[i])
    distinct = {t: (a, b) for t, a, b in zip(texts, h1.tolist(), h2.tolist())}
    assert len(set(distinct.values())) == len(distinct)


def test_txt_files_are_read_as_trec_when_laid_out_so(tmp_path):
    # TREC DL ships 2019qrels-pass.txt; a .txt CSV must still read as CSV.
    from scorebench.io.tables import read_table

    (tmp_path / "qrels.txt").write_text("19335 0 1017759 0\n19335 0 1082489 2\n")
    (tmp_path / "run.txt").write_text("19335 Q0 1017759 1 12.5 bm25\n")
    (tmp_path / "table.txt").write_text("system,y,p\na b c d,1,0.5\n")
    assert read_table(tmp_path / "qrels.txt").columns.tolist() == ["qid", "docid", "relevance"]
    assert read_table(tmp_path / "run.txt")["docid"].tolist() == ["1017759"]
    assert read_table(tmp_path / "table.txt").columns.tolist() == ["system", "y", "p"]
