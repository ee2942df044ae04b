"""``--format trec_eval``: scorebench's scores written as trec_eval -q text, compared line for
line with trec_eval 10.0's own output on its test collection."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

import scorebench
from scorebench.cli import cli
from scorebench.core.errors import InputError
from scorebench.io.trec import read_trec_qrels, read_trec_run
from scorebench.io.trec_eval_output import format_trec_eval, trec_eval_name

REF = Path(__file__).resolve().parents[2].parent / "shared" / "reference" / "trec_eval"
_METRICS = ["map", "ndcg@10", "p@5", "mrr", "num_ret", "num_rel", "num_rel_ret", "rprec", "bpref", "infap",
            "rprec_mult@0.2", "iprec_at_recall@0.1", "success@1", "binG"]
_METRICS[-1] = "bin_g"


@pytest.mark.skipif(not (REF / "out.test.aq").exists(), reason="trec_eval reference data not found")
def test_lines_equal_trec_eval_q_output():
    run, qrels = read_trec_run(REF / "results.test"), read_trec_qrels(REF / "qrels.test")
    scores = scorebench.evaluate(run, _METRICS, kind="ranking", qrels=qrels, per_unit=True, n_boot=0)
    ours = format_trec_eval(scores).splitlines()
    reference = set((REF / "out.test.aq").read_text().splitlines())
    missing = [line for line in ours if line not in reference]
    assert not missing, missing
    assert len(ours) == 3 * len(_METRICS) + 2 + len(_METRICS)  # 3 queries, runid + num_q, all rows


def test_names_and_counts():
    assert trec_eval_name("ndcg@10") == "ndcg_cut_10"
    assert trec_eval_name("p") == "set_P"
    assert trec_eval_name("ndcg@10(gain=exponential)") == "ndcg@10(gain=exponential)"
    assert trec_eval_name("inst") == "inst"
    s = pd.DataFrame({"system": ["r"] * 3, "qid": ["1", "2", "all"], "metric": ["num_ret"] * 3,
                      "value": [2.0, 3.0, 2.5], "n": [1, 1, 2]})
    assert format_trec_eval(s).splitlines()[-1] == "num_ret               \tall\t5"  # trec_eval sums counts
    with pytest.raises(InputError, match="group only by"):
        format_trec_eval(s.assign(task="t"))


def test_cli_format_trec_eval(tmp_path):
    run, qrels = tmp_path / "r.run", tmp_path / "q.qrels"
    run.write_text("1 Q0 a 1 3.0 sysA\n1 Q0 b 2 2.0 sysA\n2 Q0 c 1 1.0 sysA\n")
    qrels.write_text("1 0 a 1\n1 0 d 1\n2 0 c 2\n")
    args = ["evaluate", str(run), "--qrels", str(qrels), "-m", "map", "-m", "num_ret", "--per-query",
            "--bootstrap", "0", "--format", "trec_eval"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        "map                   \t1\t0.5000", "num_ret               \t1\t2",
        "map                   \t2\t1.0000", "num_ret               \t2\t1",
        "runid                 \tall\tsysA", "num_q                 \tall\t2",
        "map                   \tall\t0.7500", "num_ret               \tall\t3"]
    out = tmp_path / "eval.txt"
    result = CliRunner().invoke(cli, [*args, "--output", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text().startswith("map                   \t1\t0.5000\n")
