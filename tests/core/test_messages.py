"""Messages count data rows from 1 and warnings name the caller's line (issue 35, item 6)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import scorebench
from scorebench.cli import cli
from scorebench.core.errors import InputError
from scorebench.core.validation import describe_rows


def test_describe_rows_counts_from_one():
    assert describe_rows(np.array([True, False, True])) == "data rows 1, 3"
    assert describe_rows(np.array([0])) == "data row 1"
    assert describe_rows(np.arange(8)) == "data rows 1, 2, 3, 4, 5 (and 3 more)"
    # a filtered default index keeps the row numbers of the table as read
    assert describe_rows(np.array([False, True]), labels=pd.Index([4, 9])) == "data row 10"
    assert describe_rows(np.array([True, True]), labels=["bert", "t5"]) == "rows 'bert', 't5'"


def test_error_row_is_the_line_under_the_header(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("y,p\n1,0.2\n0,0.3\n1,0.9\n0,1.5\n")  # the bad value is on line 5
    with pytest.raises(InputError, match=r"value 1\.5 outside \[0, 1\] in data row 4\b"):
        scorebench.evaluate(pd.read_csv(path), ["brier_score"], n_boot=0)
    res = CliRunner().invoke(cli, ["evaluate", str(path), "-m", "brier_score", "--bootstrap", "0"])
    assert res.exit_code == 2 and "in data row 4;" in res.output


def _caught(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [w for w in caught if issubclass(w.category, UserWarning)]


def test_warnings_name_the_callers_line():
    table = pd.DataFrame({"system": "a", "y": [1, 0, 1, 0], "p": [0.0, 0.5, 0.5, 0.5]})
    caught = _caught(lambda: scorebench.evaluate(table, ["log_score"], n_boot=0))
    assert caught and all(w.filename == __file__ for w in caught), [(w.filename, w.lineno) for w in caught]

    wide = pd.DataFrame({"small": [0.1, 0.2, 0.3], "large": [100.0, 300.0, 200.0]},
                        index=["a", "b", "c"])
    caught = _caught(lambda: scorebench.aggregate(wide, method="mean"))
    assert caught and all(w.filename == __file__ for w in caught), [(w.filename, w.lineno) for w in caught]
