"""Metric aliases (issue 30 item 3): another spelling of a registered metric resolves exactly like
its name, keeps its spelling in the output, is listed, and can never shadow another metric."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import scorebench
from scorebench.cli import cli
from scorebench.core.errors import UnknownMetricError
from scorebench.core.registry import all_metrics, metric_aliases, register

#: Alias -> the registered name it must resolve to (the field's short names people type).
EXPECTED = {"map@k": "average_precision@k", "mrr": "reciprocal_rank", "11pt_avg": "eleven_point_average",
            "relative_p@k": "relative_precision@k", "set_relative_p": "set_relative_precision",
            "unj@k": "unjudged@k", "maj@k": "majority@k", "anyloss": "anyloss_value"}


def _ranking(seed: int = 3) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    run = pd.DataFrame([(f"q{q}", f"d{d}", float(rng.normal()), sys) for sys in ("a", "b")
                        for q in range(12) for d in range(15)], columns=["qid", "docid", "score", "system"])
    qrels = pd.DataFrame([(f"q{q}", f"d{d}", int(rng.integers(0, 3))) for q in range(12) for d in range(0, 20, 2)],
                         columns=["qid", "docid", "relevance"])
    return run, qrels


def test_the_field_names_are_aliases_of_the_function_names():
    assert {a: n for a, n in metric_aliases().items() if a in EXPECTED} == EXPECTED


@pytest.mark.parametrize(("alias", "name"), [("p@10", "p@10"), ("map@10", "average_precision@10"),
                                             ("map", "average_precision"),
                                             ("mrr", "reciprocal_rank"), ("11pt_avg", "eleven_point_average"),
                                             ("relative_p@5", "relative_precision@5"), ("unj@5", "unjudged@5"),
                                             ("set_relative_p", "set_relative_precision")])
def test_an_alias_gives_the_same_numbers_under_its_own_column(alias, name):
    run, qrels = _ranking()
    via_alias = scorebench.evaluate(run, [alias], kind="ranking", qrels=qrels, n_boot=50, seed=4)
    canonical = scorebench.evaluate(run, [name], kind="ranking", qrels=qrels, n_boot=50, seed=4)
    assert set(via_alias["metric"]) == {alias} and set(canonical["metric"]) == {name}
    # values and intervals exactly: the bootstrap stream is keyed by the registered spelling
    # (Metric.canonical_name), so an alias and its name give one interval for one seed
    cols = ["system", "value", "ci_low", "ci_high", "n"]
    pd.testing.assert_frame_equal(via_alias[cols].reset_index(drop=True), canonical[cols].reset_index(drop=True))
    again = scorebench.evaluate(run, [alias], kind="ranking", qrels=qrels, n_boot=50, seed=4)
    pd.testing.assert_frame_equal(again, via_alias)


def test_the_canonical_name_replaces_only_an_alias_spelling():
    assert scorebench.metric("map@10").canonical_name == "average_precision@10"
    assert scorebench.metric("mrr").canonical_name == "reciprocal_rank"
    assert scorebench.metric("p@5").canonical_name == "p@5"
    assert scorebench.metric("ndcg@10").canonical_name == "ndcg@10"


def test_an_alias_takes_parameters_like_the_name():
    m = scorebench.metric("map@10(relevance_level=2)") if "relevance_level" in scorebench.metric("map").params else None
    assert m is None or m.name.startswith("map@10")
    assert scorebench.metric("map@k", k=7).name == "map@7"
    assert scorebench.metric("maj@3").params["k"] == 3
    assert scorebench.metric("anyloss(metric=mcc)").name == "anyloss(metric=mcc)"
    assert scorebench.metric("anyloss_value(metric=mcc)").name == "anyloss_value(metric=mcc)"
    with pytest.raises(UnknownMetricError, match="takes no '@' parameter"):
        scorebench.metric("mrr@10")


def test_unknown_names_suggest_aliases():
    with pytest.raises(UnknownMetricError, match="did you mean .*'mrr'"):
        scorebench.metric("mrrr")


def _toy(y, p):
    return np.abs(np.asarray(y, float) - np.asarray(p, float))


@pytest.mark.parametrize(("name", "aliases", "message"), [
    ("_toy", ("mrr",), "alias 'mrr' collides with an alias of metric 'reciprocal_rank'"),
    ("_toy", ("ndcg",), "alias 'ndcg' collides with the metric 'ndcg'"),
    ("_toy", ("_toy",), "collides with its own name"),
    ("_toy", ("toy@k",), "must spell the same parameter"),
    ("_toy", ("toy(x=1)",), "alias must be a plain name"),
    ("mrr", (), "the name is already an alias of metric 'reciprocal_rank'"),
])
def test_a_colliding_alias_is_refused(name, aliases, message):
    before = (len(all_metrics()), dict(metric_aliases()))
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        register(name, core=_toy, family="test", kind="binary", inputs=("y", "p"), higher_is_better=False,
                 aliases=aliases)
    assert (len(all_metrics()), metric_aliases()) == before  # nothing half-registered


def test_list_metrics_and_the_cli_show_aliases():
    table = scorebench.list_metrics(family="ranking").set_index("name")
    assert table.loc["average_precision@k", "aliases"] == "map@k"
    assert table.loc["ndcg@k", "aliases"] == ""
    res = CliRunner().invoke(cli, ["metrics", "--family", "ranking"])
    assert res.exit_code == 0, res.output
    assert "also: map@k" in res.output and "also: mrr" in res.output
    rows = json.loads(CliRunner().invoke(cli, ["metrics", "--family", "sampling", "--format", "json"]).output)
    assert {r["name"]: r["aliases"] for r in rows}["majority@k"] == "maj@k"
    markdown = CliRunner().invoke(cli, ["metrics", "--family", "ranking", "--format", "markdown"]).output
    assert "| reciprocal_rank | mrr |" in markdown


def test_the_cli_evaluates_an_alias_under_its_own_name(tmp_path):
    run, qrels = _ranking()
    run.to_csv(tmp_path / "run.csv", index=False)
    with open(tmp_path / "qrels.txt", "w") as fh:
        for row in qrels.itertuples():
            fh.write(f"{row.qid} 0 {row.docid} {row.relevance}\n")
    outs = {}
    for spelling in ("map@10", "average_precision@10"):
        res = CliRunner().invoke(cli, ["evaluate", str(tmp_path / "run.csv"), "--kind", "ranking", "--qrels",
                                       str(tmp_path / "qrels.txt"), "-m", spelling, "--bootstrap", "50",
                                       "--seed", "1", "--output", str(tmp_path / f"{spelling}.csv")])
        assert res.exit_code == 0, res.output
        outs[spelling] = pd.read_csv(tmp_path / f"{spelling}.csv")
    assert set(outs["map@10"]["metric"]) == {"map@10"}
    assert outs["map@10"]["value"].tolist() == outs["average_precision@10"]["value"].tolist()
    bad = CliRunner().invoke(cli, ["evaluate", str(tmp_path / "run.csv"), "--kind", "ranking", "--qrels",
                                   str(tmp_path / "qrels.txt"), "-m", "mapp@10"])
    assert bad.exit_code != 0 and "unknown metric 'mapp@10'" in bad.output
