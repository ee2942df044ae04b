"""trec_eval's ``prefs_*`` measures (``-m all_prefs``) against trec_eval 10.0's own test outputs
(``out.test.prefs``: ``-R prefs``, the equivalence-class and preference-array corner cases;
``out.test.qrels_prefs``: ``-R qrels_prefs`` over qrels.test), line for line as printed, plus
hand-computed cases and errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import scorebench
from scorebench.cli import cli
from scorebench.core.errors import InputError
from scorebench.io.trec import read_trec_run
from scorebench.metrics.ranking.prefs_counts import PREFS_MEASURES
from scorebench.metrics.ranking.prefs_measures import extract_prefs, prefs_avgjg_Rnonrel, prefs_simp
from scorebench.io.trec_eval_output import format_trec_eval

REF = Path(__file__).resolve().parents[3].parent / "shared" / "reference" / "trec_eval"
_CASES = [("out.test.prefs", "prefs.test", "prefs.results.test"),
          ("out.test.prefs", "prefs.comment.test", "prefs.results.test"),
          ("out.test.qrels_prefs", "qrels.test", "results.test")]
needs_ref = pytest.mark.skipif(not (REF / "MANIFEST.md").exists(), reason=f"trec_eval reference data not found at {REF}")


def _lines(text: str) -> dict[tuple[str, str], str]:
    return {(m.strip(), q): v for m, q, v in (line.split("\t") for line in text.splitlines())}


@needs_ref
@pytest.mark.parametrize("out,prefs,results", _CASES)
def test_every_line_of_trec_eval_all_prefs(out, prefs, results):
    scores = scorebench.evaluate(read_trec_run(REF / results), list(PREFS_MEASURES), qrels=REF / prefs,
                                 per_unit=True, n_boot=0)
    ref, mine = _lines((REF / out).read_text()), _lines(format_trec_eval(scores))
    assert set(ref) == set(mine)
    assert {k: v for k, v in ref.items() if mine[k] != v} == {}


@needs_ref
def test_per_query_values_to_the_printed_digits_and_count_totals():
    scores = scorebench.evaluate(read_trec_run(REF / "prefs.results.test"), list(PREFS_MEASURES),
                                 qrels=REF / "prefs.test", per_unit=True, n_boot=0)
    ref = _lines((REF / "out.test.prefs").read_text())
    per_query = scores[scores.qid != "all"]
    for measure, qid, value in zip(per_query.metric, per_query.qid, per_query.value):
        assert abs(value - float(ref[(measure, qid)])) <= 5e-5 + 1e-12, (measure, qid)
    total = scores[(scores.qid == "all") & (scores.metric == "prefs_num_prefs_poss")]
    assert total["value"].iloc[0] * total["n"].iloc[0] == pytest.approx(float(ref[("prefs_num_prefs_poss", "all")]))
    assert total["n"].iloc[0] == 24


@needs_ref
def test_cli_writes_trec_eval_text(tmp_path):
    out = tmp_path / "prefs.txt"
    args = ["evaluate", str(REF / "prefs.results.test"), "--qrels", str(REF / "prefs.test"), "--per-query",
            "--bootstrap", "0", "--format", "trec_eval", "-o", str(out)]
    for measure in PREFS_MEASURES:
        args += ["-m", measure]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert _lines(out.read_text()) == _lines((REF / "out.test.prefs").read_text())


def _prefs(rows):
    return pd.DataFrame(rows, columns=["qid", "jg", "jsg", "docid", "relevance"])


def test_preference_array_is_closed_under_transitivity():
    # judge u: a > b in sub-group 1, b > c in sub-group 2, so a > c too (3 preferences)
    prefs = _prefs([("1", "u", "1", "a", 2), ("1", "u", "1", "b", 1), ("1", "u", "2", "b", 1), ("1", "u", "2", "c", 0)])
    run = pd.DataFrame({"qid": "1", "docid": ["c", "b", "a"], "score": [3.0, 2.0, 1.0]})  # every preference fails
    inputs = extract_prefs(run, qrels=prefs)
    assert inputs.arrays["prefs_num_prefs_poss"].tolist() == [3.0]
    assert inputs.arrays["prefs_num_prefs_ful"].tolist() == [0.0]
    flipped = run.assign(score=-run["score"])  # a, b, c: all three fulfilled
    assert prefs_simp(flipped, prefs).tolist() == [1.0]


def test_equivalence_classes_count_every_cross_class_pair_and_judges_are_pooled_per_pair():
    # judge u: {a, b} > {c}; judge v: c > a. Pair (a, c): 1 of 2 judgments fulfilled when a is above c.
    prefs = _prefs([("1", "u", "0", "a", 1), ("1", "u", "0", "b", 1), ("1", "u", "0", "c", 0),
                    ("1", "v", "0", "c", 1), ("1", "v", "0", "a", 0)])
    run = pd.DataFrame({"qid": "1", "docid": ["a", "c", "b"], "score": [3.0, 2.0, 1.0]})
    values = extract_prefs(run, qrels=prefs).arrays
    assert values["prefs_num_prefs_poss"][0] == 3  # a>c, b>c (u) and c>a (v)
    assert values["prefs_simp"][0] == pytest.approx(1 / 3)  # only a > c holds
    assert values["prefs_pair"][0] == pytest.approx((1 / 2 + 0) / 2)  # pairs (a, c): 1/2, (c, b): 0/1
    assert values["prefs_avgjg"][0] == pytest.approx((1 / 2 + 0) / 2)


def test_ties_in_score_break_by_document_id_ascending():
    prefs = _prefs([("1", "u", "0", "a", 1), ("1", "u", "0", "b", 0)])
    tied = pd.DataFrame({"qid": "1", "docid": ["b", "a"], "score": [1.0, 1.0]})
    assert prefs_simp(tied, prefs).tolist() == [1.0]  # a before b, as form_prefs_counts.c orders them


def test_rnonrel_caps_the_nonrelevant_documents_at_r():
    # one relevant document a, three non-relevant; a ranked second of the judged documents
    prefs = _prefs([("1", "u", "0", d, r) for d, r in [("a", 1), ("x", 0), ("y", 0), ("z", 0)]])
    run = pd.DataFrame({"qid": "1", "docid": ["x", "a", "y", "z"], "score": [4.0, 3.0, 2.0, 1.0]})
    # N = 3 > R = 1: trec_eval recalculates with the first R non-relevant documents by rank ({x}) and
    # pairs every class with it, the non-relevant class included: a > x fails (a below x), and
    # x, y, z against x count as 3 more possible, none fulfilled -> 0 / 4
    value = prefs_avgjg_Rnonrel(run, prefs)[0]
    assert value == 0.0
    assert prefs_simp(run, prefs)[0] == pytest.approx(2 / 3)


def test_qrels_table_without_groups_is_one_judge():
    qrels = pd.DataFrame({"qid": ["1", "1"], "docid": ["a", "b"], "relevance": [1, 0]})
    run = pd.DataFrame({"qid": "1", "docid": ["a", "b"], "score": [2.0, 1.0]})
    scores = scorebench.evaluate(run, ["prefs_simp", "prefs_num_prefs_poss"], kind="prefs", qrels=qrels, n_boot=0)
    assert scores["value"].tolist() == [1.0, 1.0]


def test_errors():
    run = pd.DataFrame({"qid": "1", "docid": ["a", "b"], "score": [2.0, 1.0]})
    inconsistent = _prefs([("1", "u", "1", "a", 2), ("1", "u", "1", "b", 1), ("1", "u", "2", "b", 2),
                           ("1", "u", "2", "a", 1)])
    with pytest.raises(InputError, match="inconsistent"):
        extract_prefs(run, qrels=inconsistent)
    zero_and_not = _prefs([("1", "u", "1", "a", 1), ("1", "u", "1", "b", 0), ("1", "u", "2", "b", 1),
                           ("1", "u", "2", "a", 0)])
    with pytest.raises(InputError, match="both 0 and non-0"):
        extract_prefs(run, qrels=zero_and_not)
    with pytest.raises(InputError, match="inconsistent"):
        extract_prefs(run, qrels=inconsistent)
    two_levels = _prefs([("1", "u", "0", "a", 1), ("1", "u", "0", "a", 0)])
    with pytest.raises(InputError, match="two different rel_levels"):
        extract_prefs(run, qrels=two_levels)
    with pytest.raises(InputError, match="judgments are required"):
        extract_prefs(run)
    with pytest.raises(InputError, match="retrieved twice"):
        extract_prefs(pd.concat([run, run]), qrels=two_levels)
    with pytest.raises(InputError, match="no query"):
        extract_prefs(run.assign(qid="9"), qrels=two_levels)
    with pytest.raises(InputError, match="relevance"):
        extract_prefs(run, qrels=two_levels.drop(columns="relevance"))
    with pytest.raises(InputError, match="qrels: file not found: '/nonexistent/prefs.txt'"):
        scorebench.evaluate(run, "prefs_simp", kind="prefs", qrels="/nonexistent/prefs.txt", n_boot=0)
    with pytest.raises(InputError, match="takes a DataFrame"):
        extract_prefs(run, qrels="/nonexistent/prefs.txt")


def test_several_systems_and_interval():
    rng = np.random.default_rng(0)
    rows = [(f"q{q}", "u", "0", f"d{d}", int(rng.integers(0, 3))) for q in range(15) for d in range(8)]
    prefs = _prefs(rows)
    run = pd.DataFrame([(s, f"q{q}", f"d{d}", float(rng.normal())) for s in "ab" for q in range(15) for d in range(8)],
                       columns=["system", "qid", "docid", "score"])
    scores = scorebench.evaluate(run, "prefs_simp", qrels=prefs, n_boot=200)
    assert list(scores.system) == ["a", "b"]
    assert ((scores.ci_low <= scores.value) & (scores.value <= scores.ci_high)).all()
    one = scorebench.evaluate(run[run.system == "a"].drop(columns="system"), "prefs_simp", qrels=prefs, n_boot=0)
    assert one["value"].iloc[0] == pytest.approx(scores["value"].iloc[0], rel=1e-12)
