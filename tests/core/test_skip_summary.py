"""The grouped skip summary printed at the end of a test run (tests/_skip_summary.py)."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).parents[1]))
from _skip_summary import summary_lines  # noqa: E402


def _skip(path, line, reason, nodeid="t"):
    return SimpleNamespace(longrepr=(path, line, f"Skipped: {reason}"), nodeid=nodeid)


def test_groups_by_place_most_frequent_first_and_names_the_reason():
    reports = [_skip("/x/tests/test_a.py", 10, "set-level metric") for _ in range(30)]
    reports.append(_skip("/x/tests/test_board_browser.py", 49, "Chromium is not installed"))
    reports += [_skip("/x/tests/test_r.py", 5, f"reason {i}") for i in range(3)]
    lines = summary_lines(reports)
    assert lines[0].startswith("skipped: 34 test(s) at 3 place(s)")
    assert lines[1] == "    30 x test_a.py:10: set-level metric"
    assert lines[2] == "     3 x test_r.py:5: reason 0 (+2 other reason(s))"
    assert lines[3] == "     1 x test_board_browser.py:49: Chromium is not installed"


def test_output_stays_short():
    reports = [_skip("/t.py", i, "word " * 100) for i in range(40)]
    lines = summary_lines(reports, max_lines=5)
    assert len(lines) == 7 and lines[-1] == "    35 x at 35 other place(s)"
    assert all(len(line) < 200 for line in lines)
    assert summary_lines([]) == []
