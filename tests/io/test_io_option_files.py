"""Files given as kind options (qrels=) are read by the io layer, in the formats the kind declares."""

from __future__ import annotations

import pandas as pd
import pytest

from scorebench.core.errors import InputError
from scorebench.core.tables import get_kind
from scorebench.io.option_files import choose_format, read_option_file, read_options


def _formats(kind: str) -> tuple[str, ...]:
    return next(o for o in get_kind(kind).options if o.name == "qrels").formats


def test_each_judged_kind_declares_the_formats_of_its_qrels():
    assert _formats("ranking") == ("trec_qrels", "table")
    assert _formats("diversity") == ("table", "trec_qrels_jg")
    assert _formats("prefs") == ("trec_qrels_prefs", "trec_prefs")


def test_content_then_suffix_then_the_first(tmp_path):
    (tmp_path / "q.txt").write_text("1 0 d1 1\n")
    (tmp_path / "q.csv").write_text("qid,docid,relevance\n1,d1,1\n")
    (tmp_path / "p.txt").write_text("1 u 0 d1 1\n")
    (tmp_path / "odd.dat").write_text("qid docid\n")
    assert choose_format(tmp_path / "q.txt", _formats("ranking")) == "trec_qrels"  # content
    assert choose_format(tmp_path / "q.csv", _formats("ranking")) == "table"  # suffix
    assert choose_format(tmp_path / "odd.dat", _formats("ranking")) == "trec_qrels"  # the first
    assert choose_format(tmp_path / "q.txt", _formats("diversity")) == "trec_qrels_jg"
    assert choose_format(tmp_path / "q.csv", _formats("diversity")) == "table"
    assert choose_format(tmp_path / "p.txt", _formats("prefs")) == "trec_prefs"
    assert choose_format(tmp_path / "q.txt", _formats("prefs")) == "trec_qrels_prefs"
    assert read_option_file(tmp_path / "q.txt", "qrels", _formats("diversity")).columns.tolist() == \
        ["qid", "jg", "docid", "relevance"]
    assert read_option_file(tmp_path / "q.csv", "qrels", _formats("ranking")).shape == (1, 3)


def test_missing_file_and_bad_line_name_the_path(tmp_path):
    with pytest.raises(InputError, match=r"^qrels: file not found: '.*nope\.qrels'$"):
        read_option_file(tmp_path / "nope.qrels", "qrels", _formats("ranking"))
    (tmp_path / "bad.qrels").write_text("1 0 d1 1\n1 0 d2\n")
    with pytest.raises(InputError, match=r"bad\.qrels.*line 2"):
        read_option_file(tmp_path / "bad.qrels", "qrels", _formats("ranking"))


def test_read_options_reads_only_declared_paths(tmp_path):
    (tmp_path / "q.qrels").write_text("1 0 d1 1\n")
    options = read_options(get_kind("ranking").options, {"qrels": str(tmp_path / "q.qrels"), "max_docs": 5})
    assert isinstance(options["qrels"], pd.DataFrame) and options["max_docs"] == 5
    frame = pd.DataFrame({"qid": ["1"], "docid": ["d"], "relevance": [1]})
    assert read_options(get_kind("ranking").options, {"qrels": frame})["qrels"] is frame
