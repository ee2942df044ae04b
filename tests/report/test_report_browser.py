"""The comparison report in a real browser: headless Chromium through Playwright.

The page must load with no request leaving it, render its tables as text (system names carry
markup), run no injected script, and its tables sort like a board's. Skips with a message
only when Playwright or a Chromium binary is absent.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _browser import launch_chromium  # tests/ is on sys.path (conftest)

from scorebench.report import comparison_report, write_report

EVIL = "</script><script>window.pwned=1</script>"
NAMES = ["alpha", EVIL, "<b>gamma</b>"]


@pytest.fixture(scope="module")
def browser():
    yield from launch_chromium("the report page")


def _report(tmp_path: Path) -> Path:
    rng = np.random.default_rng(0)
    base = (rng.random(200) < 0.7).astype(int)
    frames = [pd.DataFrame({"system": name, "id": np.arange(200), "task": np.where(np.arange(200) % 2, "x", EVIL),
                            "correct": np.where(rng.random(200) < p, 1 - base, base)})
              for name, p in zip(NAMES, (0.0, 0.1, 0.4))]
    rep = comparison_report(pd.concat(frames, ignore_index=True), n_boot=100)
    return write_report(rep, tmp_path / "report.html")


@pytest.mark.parametrize("javascript", [True, False])
def test_report_opens_without_requests_or_injection(browser, tmp_path, javascript):
    path = _report(tmp_path)
    context = browser.new_context(java_script_enabled=javascript)
    page = context.new_page()
    outside, errors = [], []

    def route(r):
        if r.request.url == path.as_uri():
            r.continue_()
        else:
            outside.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.as_uri())
    if javascript:
        page.wait_for_selector("html[data-sb-ready]")
        assert page.evaluate("window.pwned") is None
    names = page.eval_on_selector_all("table#scores tbody td:nth-child(3)", "e => e.map(x => x.textContent)")
    assert sorted(names) == sorted(NAMES)
    for key in ("pairs", "task-scores", "task-pairs", "flips", "planner"):
        assert page.locator(f"table#{key} tbody tr").count() > 0, key
    assert page.locator("h2", has_text="Power and sample size").is_visible()
    assert outside == [] and errors == []
    context.close()


def test_report_tables_sort(browser, tmp_path):
    path = _report(tmp_path)
    context = browser.new_context()
    page = context.new_page()
    page.goto(path.as_uri())
    page.wait_for_selector("html[data-sb-ready]")
    page.click("table#scores thead th:nth-child(1)")  # rank
    first = page.eval_on_selector_all("table#scores tbody td:nth-child(1)", "e => e.map(x => Number(x.textContent))")
    page.click("table#scores thead th:nth-child(1)")
    second = page.eval_on_selector_all("table#scores tbody td:nth-child(1)", "e => e.map(x => Number(x.textContent))")
    assert sorted(first) in (first, first[::-1]) and second == first[::-1]
    context.close()
