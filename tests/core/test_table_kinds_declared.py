"""Every table kind is declared (columns and options), and the declarations drive validation,
the command line and the README's table reference."""

from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import scorebench
from scorebench.aggregate import aggregate, read_input
from scorebench.aggregate.input import ScoreMatrix, Battles, read_table_kind
from scorebench.aggregate.items import ItemScores
from scorebench.cli import cli
from scorebench.core.errors import InputError
from scorebench.core.kinds_reference import END, START, kinds_markdown
from scorebench.core.table_schema import Column, Option
from scorebench.core.tables import all_kinds, detect_kind, get_kind, register_kind

README = Path(__file__).resolve().parents[2] / "README.md"
KINDS = all_kinds()


def test_every_kind_is_declared_with_columns_and_typed_options():
    assert {k.stage for k in KINDS} == {"evaluate", "aggregate"}
    assert {k.name for k in KINDS if k.stage == "aggregate"} == {"scores", "wide", "battles", "items"}
    for kind in KINDS:
        assert kind.columns, kind.name
        assert all(isinstance(c, Column) for c in kind.columns), kind.name
        assert all(isinstance(o, Option) for o in kind.options), kind.name
        assert kind.description, kind.name


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_declared_options_are_the_extractors_keywords(kind):
    # the declaration and the function cannot drift apart: each declared option is a keyword of
    # the extractor with the declared default, and the extractor takes no undeclared keyword
    params = inspect.signature(kind.extract).parameters
    keywords = {n: p for n, p in params.items() if p.kind is inspect.Parameter.KEYWORD_ONLY and n != "nan_policy"}
    assert set(keywords) == set(kind.option_names)
    for option in kind.options:
        assert keywords[option.name].default == option.default, (kind.name, option.name)


def test_readme_table_reference_matches_the_declarations():
    text = README.read_text(encoding="utf-8")
    section = text.split(START, 1)[1].split(END, 1)[0]
    assert section.strip() == kinds_markdown().strip(), \
        "README's table reference is stale: run `python -m scorebench.core.kinds_reference README.md`"


def test_options_are_checked_and_converted_from_the_declaration():
    ranking = get_kind("ranking")
    assert ranking.check_options({"relevance_level": "2", "complete": "yes", "max_docs": 5.0}) == \
        {"relevance_level": 2.0, "complete": True, "max_docs": 5}
    with pytest.raises(InputError, match=r"option 'max_docs' expects an integer, got 2\.5"):
        ranking.check_options({"max_docs": 2.5})
    with pytest.raises(InputError, match=r"option 'complete' expects true or false, got 'maybe'"):
        ranking.check_options({"complete": "maybe"})
    with pytest.raises(InputError, match=r"option\(s\) \['atol'\] do not apply to kind 'ranking'"):
        ranking.check_options({"atol": 1e-3})
    with pytest.raises(InputError, match="expects one of 'ood', 'id'"):
        get_kind("ood").check_options({"score_direction": "up"})


def test_evaluate_refuses_a_badly_typed_option_by_name():
    t = pd.DataFrame({"y": ["a", "b"], "p_a": [0.6, 0.3], "p_b": [0.4, 0.7]})
    with pytest.raises(InputError, match="kind 'multiclass': option 'atol' expects a number, got 'loose'"):
        scorebench.evaluate(t, "log_score_multiclass", n_boot=0, atol="loose")
    out = scorebench.evaluate(t, "log_score_multiclass", n_boot=0, atol="1e-3")
    assert np.isfinite(out["value"]).all()


@pytest.mark.parametrize("name", sorted(k.name for k in KINDS if k.stage == "evaluate"))
def test_duplicate_columns_get_one_message_in_every_kind(name):
    kind = get_kind(name)
    required = [c.name for c in kind.columns if c.required and c.pattern is None] or ["x"]
    df = pd.DataFrame([[1.0] * (len(required) + 1)], columns=[*required, required[0]])
    with pytest.raises(InputError, match=r"duplicate column name\(s\) \['" + required[0]):
        kind.extract(df, **({"qrels": pd.DataFrame({"qid": [], "docid": [], "relevance": []})}
                            if "qrels" in kind.option_names else {}))


@pytest.mark.parametrize("name", sorted(k.name for k in KINDS if k.stage == "evaluate"))
def test_a_missing_declared_column_is_named(name):
    kind = get_kind(name)
    required = [c for c in kind.columns if c.required and c.pattern is None and not c.name.startswith("<")]
    if not required:
        pytest.skip(f"{name} declares only column families (their extractor names what is missing)")
    df = pd.DataFrame({"unrelated": [1.0]})
    options = {"qrels": pd.DataFrame({"qid": ["q"], "docid": ["d"], "relevance": [1]})} \
        if "qrels" in kind.option_names else {}
    with pytest.raises(InputError, match=rf"kind '{name}': missing column\(s\) \[.*'{required[0].name}'"):
        kind.extract(df, **options)


def test_declared_value_types_share_one_message():
    with pytest.raises(InputError, match=r"column 'correct': value 2\.0 in data row 2; expected binary outcomes 0 or 1 "
                                         r"\(1 = right, 0 = wrong\)"):
        scorebench.evaluate(pd.DataFrame({"correct": [1, 2]}), "accuracy", n_boot=0)
    with pytest.raises(InputError, match=r"column 'is_ood': value 3\.0 in data row 1; expected binary outcomes 0 or 1"):
        scorebench.evaluate(pd.DataFrame({"score": [0.1, 0.2], "is_ood": [3, 0]}), "auroc", n_boot=0)


# --- the aggregate kinds ------------------------------------------------------------------


SCORES = pd.DataFrame({"system": ["a", "b", "a", "b"], "task": ["t1", "t1", "t2", "t2"], "value": [1.0, 2, 3, 1]})
BATTLES = pd.DataFrame({"model_a": ["x", "y"], "model_b": ["y", "z"], "winner": ["model_a", "tie"]})
WIDE = pd.DataFrame({"t1": [1.0, 2.0], "t2": [3.0, 1.0]}, index=["a", "b"])


def _items() -> pd.DataFrame:
    t = pd.DataFrame({"system": list("aabb") * 2, "task": ["x"] * 4 + ["y"] * 4, "id": [1, 2] * 4,
                      "y": [1, 0] * 4, "p": [0.9, 0.2, 0.6, 0.5, 0.7, 0.1, 0.5, 0.5]})
    return scorebench.evaluate(t, "brier_score", n_boot=0, per_unit=True)


@pytest.mark.parametrize("table, kind, container", [
    (SCORES, "scores", ScoreMatrix), (BATTLES, "battles", Battles), (WIDE, "wide", ScoreMatrix),
    (_items(), "items", ItemScores)])
def test_aggregate_inputs_are_detected_from_their_declared_columns(table, kind, container):
    assert detect_kind(table, "aggregate").name == kind
    assert isinstance(read_table_kind(table), container)


def test_aggregate_kinds_refuse_options_they_do_not_declare():
    with pytest.raises(InputError, match=r"option\(s\) \['weights'\] do not apply to kind 'battles'"):
        read_input(BATTLES, weights={"x": 1.0})
    with pytest.raises(InputError, match=r"option\(s\) \['duplicates'\] do not apply to kind 'scores'"):
        read_input(SCORES, duplicates="first")
    with pytest.raises(InputError, match="option 'duplicates' expects one of"):
        read_input(WIDE, duplicates="merge")
    assert read_input(WIDE, duplicates="first").systems == ("a", "b")


def test_an_aggregate_kind_is_not_an_evaluate_kind():
    with pytest.raises(InputError, match=r"unknown table kind 'battles' \('battles' is an input of aggregate\)"):
        scorebench.evaluate(SCORES, "brier_score", kind="battles")
    assert get_kind("battles", stage=None).stage == "aggregate"


def test_aggregate_reads_every_declared_kind():
    for table in (SCORES, WIDE, _items()):
        assert aggregate(table, "borda", n_boot=0).systems == ("a", "b")
    assert set(aggregate(BATTLES, "elo", n_boot=0).systems) == {"x", "y", "z"}


def test_register_kind_refuses_free_text_declarations():
    with pytest.raises(TypeError, match="declare columns as Column"):
        register_kind("free_text", columns="y, p")


# --- the command line -----------------------------------------------------------------------


def test_flags_come_from_the_declarations():
    help_text = CliRunner().invoke(cli, ["evaluate", "--help"]).output
    flagged = {o.cli_name for k in KINDS if k.stage == "evaluate" for o in k.options if o.flag}
    assert flagged >= {"--qrels", "--relevance-level", "--complete", "--atol", "--renormalize", "--score-direction"}
    for flag in flagged:
        assert flag in help_text
    for kind in KINDS:
        if kind.stage == "evaluate":
            assert f"  {kind.name}: " in help_text  # the epilog lists every kind's columns


def test_cli_typed_option_errors_are_one_line(tmp_path):
    path = tmp_path / "t.csv"
    pd.DataFrame({"y": ["a", "b"], "p_a": [0.6, 0.3], "p_b": [0.4, 0.7]}).to_csv(path, index=False)
    result = CliRunner().invoke(cli, ["evaluate", str(path), "-m", "log_score_multiclass", "--bootstrap", "0",
                                      "-O", "renormalize=perhaps"])
    assert result.exit_code == 2
    assert result.output.strip() == ("error: kind 'multiclass': option 'renormalize' expects true or false, "
                                     "got 'perhaps'")
    ok = CliRunner().invoke(cli, ["evaluate", str(path), "-m", "log_score_multiclass", "--bootstrap", "0",
                                  "--atol", "0.01", "--renormalize"])
    assert ok.exit_code == 0, ok.output


def test_kinds_command_describes_each_kind():
    runner = CliRunner()
    listing = runner.invoke(cli, ["kinds"])
    assert listing.exit_code == 0
    assert all(k.name in listing.output for k in KINDS)
    one = runner.invoke(cli, ["kinds", "battles"])
    assert "column a or model_a (label)" in one.output
    ranking = runner.invoke(cli, ["kinds", "ranking"])
    assert "option relevance_level (a number, default 1)" in ranking.output and "[--relevance-level]" in ranking.output
    assert runner.invoke(cli, ["kinds", "--format", "markdown"]).output == kinds_markdown()
    bad = runner.invoke(cli, ["kinds", "nope"])
    assert bad.exit_code == 2 and bad.output.startswith("error: unknown table kind 'nope'")
