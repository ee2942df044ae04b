"""The comparison report: from two or more result files to a decision a reviewer accepts.

:func:`comparison_report` computes the tables (:mod:`.build`); :func:`write_report` writes
them as a self-contained HTML page, Markdown or a LaTeX (booktabs) document (:mod:`.render`).
"""

from __future__ import annotations

from scorebench.report.build import CORRECTIONS, REPORT_TESTS, ComparisonReport, comparison_report, read_runs
from scorebench.report.render import REPORT_FORMATS, render_report, write_report

__all__ = ["ComparisonReport", "comparison_report", "read_runs", "write_report", "render_report",
           "REPORT_TESTS", "CORRECTIONS", "REPORT_FORMATS"]
