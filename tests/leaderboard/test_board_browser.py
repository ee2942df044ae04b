"""The interactive board page in a real browser: headless Chromium driven through Playwright.

Sorting, search, filters, column groups, drill-down and downloads are exercised through the
page's DOM; every request the page makes is recorded and none may leave it. System names
carry markup, quotes and ``</script>`` so each widget is also an injection test. Skips with
a message only when Playwright or a Chromium binary is absent.
"""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

import pandas as pd
import pytest
from _browser import launch_chromium  # tests/ is on sys.path (conftest)

from scorebench.leaderboard.build import Board, Section
from scorebench.leaderboard.render import write_board
from scorebench.leaderboard.spec import BoardSpec

EVIL = "<script>alert(1)</script>"
CLOSER = "</script><script>window.pwned=1</script>"
QUOTES = "q\"uo'te & <b>bold</b>"
NAMES = ["alpha", EVIL, CLOSER, QUOTES, "zeta"]
# numeric order differs from text order: "10.5" < "9.25" as text
A = [9.25, 10.5, 2.0, 100.0, 0.5]
B = [1.0, 2.0, 3.0, 4.0, 5.0]
TYPES = ["encoder", "decoder", "encoder", EVIL, "decoder"]
COVERAGE = [41, 20, 33, 41, 25]


@pytest.fixture(scope="module")
def browser():
    yield from launch_chromium("the interactive page")


def _board(tmp_path: Path) -> Path:
    rows = tuple((str(i + 1), n, t, str(c), f"{a:.4f} [{a - 1:.4f}, {a + 1:.4f}]", str(i + 1),
                  f"{b:.4f}", str(5 - i))
                 for i, (n, t, c, a, b) in enumerate(zip(NAMES, TYPES, COVERAGE, A, B)))
    records = []
    for n, a in zip(NAMES, A):
        for task in ("t1", EVIL):
            records.append({"system": n, "task": task, "metric": "A", "value": a, "ci_low": a - 1, "ci_high": a + 1,
                            "rank": 1, "rank_low": 1, "rank_high": 3})
    section = Section("main", "Main <table>", "note", ("rank", "system", "type", "coverage", "A score", "A rank",
                                                       "B score", "B rank"),
                      rows, pd.DataFrame.from_records(records), filters=(("type", "cat"), ("coverage", "num")))
    spec = BoardSpec(path=tmp_path / "b.toml", name="b", title=f"Board {EVIL}")
    board = Board(spec, (section,), (("seed", "0"),))
    write_board(board, tmp_path / "site")
    return tmp_path / "site" / "index.html"


@pytest.fixture
def page(browser, tmp_path):
    html_path = _board(tmp_path)
    context = browser.new_context(accept_downloads=True)
    pg = context.new_page()
    outside, dialogs, errors = [], [], []

    def route(r):  # only the page itself may be fetched; anything else is recorded and aborted
        if r.request.url == html_path.as_uri():
            r.continue_()
        else:
            outside.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    pg.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto(html_path.as_uri())
    pg.wait_for_selector("html[data-sb-ready]")
    yield pg
    assert outside == [], f"the page made requests: {outside}"
    assert dialogs == [] and errors == [], (dialogs, errors)
    assert pg.evaluate("window.pwned") is None
    context.close()


def _visible_names(pg) -> list[str]:
    return pg.eval_on_selector_all("table#main tbody tr:not([hidden]) td:nth-child(2)", "e => e.map(x => x.textContent)")


def test_names_render_as_text(page):
    assert _visible_names(page) == NAMES
    assert page.title() == f"Board {EVIL}"


def test_click_header_sorts_numerically_then_reverses(page):
    page.click("table#main thead th:nth-child(5)")  # "A score": by value, not by text
    order = [n for _, n in sorted(zip(A, NAMES))]
    assert _visible_names(page) == order
    assert page.get_attribute("table#main thead th:nth-child(5)", "aria-sort") == "ascending"
    page.click("table#main thead th:nth-child(5)")
    assert _visible_names(page) == order[::-1]
    page.click("table#main thead th:nth-child(2)")  # a text column sorts as text
    assert _visible_names(page) == sorted(NAMES)


def test_search_filters_visible_rows(page):
    page.fill("input.sb-search", "zet")
    assert _visible_names(page) == ["zeta"]
    page.fill("input.sb-search", "<SCRIPT")  # case-insensitive, markup is only text
    assert _visible_names(page) == [EVIL, CLOSER]
    page.fill("input.sb-search", "")
    assert _visible_names(page) == NAMES
    assert "5 of 5 rows" in page.inner_text(".sb-count")


def test_metadata_filters(page):
    page.select_option("select.sb-filter", EVIL)  # a category that is itself markup
    assert _visible_names(page) == [QUOTES]
    page.select_option("select.sb-filter", "encoder")
    assert _visible_names(page) == ["alpha", CLOSER]
    page.select_option("select.sb-filter", "")
    page.fill("input[type=number].sb-filter", "30")
    assert _visible_names(page) == ["alpha", CLOSER, QUOTES]


def test_column_group_toggle(page):
    hidden = "els => els.map(e => e.hidden)"
    assert page.eval_on_selector_all("table#main thead th", hidden) == [False] * 8
    page.uncheck("input[type=checkbox][data-group='B']")
    assert page.eval_on_selector_all("table#main thead th", hidden) == [False] * 6 + [True] * 2
    assert page.eval_on_selector_all("table#main tbody tr:first-child td", hidden) == [False] * 6 + [True] * 2
    page.check("input[type=checkbox][data-group='B']")
    assert page.eval_on_selector_all("table#main thead th", hidden) == [False] * 8


def test_drill_down_shows_every_value_as_text(page):
    page.click(f"table#main tbody tr:nth-child(3) td.sb-drill")  # CLOSER
    panel = page.locator("#sb-drill")
    assert panel.is_visible()
    assert page.inner_text("#sb-drill h3") == CLOSER
    cells = page.eval_on_selector_all("#sb-drill tbody tr td:nth-child(2)", "e => e.map(x => x.textContent)")
    assert cells == ["t1", EVIL]
    assert page.inner_text("#sb-drill tbody tr:first-child td:nth-child(5)") == "[1, 3]"
    assert page.inner_text("#sb-drill tbody tr:first-child td:nth-child(6)") == "1 (1–3)"
    page.keyboard.press("Escape")
    assert not panel.is_visible()


def test_download_current_view(page):
    page.fill("input.sb-search", "ta")  # zeta only
    page.uncheck("input[type=checkbox][data-group='A']")
    with page.expect_download() as info:
        page.click("button.sb-csv")
    text = Path(info.value.path()).read_text(encoding="utf-8")
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["rank", "system", "type", "coverage", "B score", "B rank"]
    assert [r[1] for r in rows[1:]] == ["zeta"]
    page.fill("input.sb-search", "<")
    with page.expect_download() as info:
        page.click("button.sb-json")
    doc = json.loads(Path(info.value.path()).read_text(encoding="utf-8"))
    assert [d["system"] for d in doc] == [EVIL, CLOSER, QUOTES]
    assert doc[2]["type"] == EVIL


def test_without_javascript_the_static_table_is_complete(browser, tmp_path):
    html_path = _board(tmp_path)
    context = browser.new_context(java_script_enabled=False)
    pg = context.new_page()
    pg.goto(html_path.as_uri())
    assert _visible_names(pg) == NAMES
    assert pg.locator(".sb-toolbar").count() == 0
    context.close()


def test_long_tables_are_paged_but_sorted_and_searched_whole(browser, tmp_path):
    n = 150
    rows = tuple((f"s{i:03d}", f"{(i * 37) % n}") for i in range(n))
    section = Section("long", "Long", "", ("system", "score"), rows,
                      pd.DataFrame({"system": [r[0] for r in rows], "value": [float(r[1]) for r in rows]}))
    board = Board(BoardSpec(path=tmp_path / "l.toml", name="l", title="L"), (section,), ())
    write_board(board, tmp_path / "site")
    path = tmp_path / "site" / "index.html"
    context = browser.new_context()
    pg = context.new_page()
    pg.goto(path.as_uri())
    pg.wait_for_selector("html[data-sb-ready]")
    visible = "table#long tbody tr:not([hidden]) td:nth-child(1)"
    names = lambda: pg.eval_on_selector_all(visible, "e => e.map(x => x.textContent)")  # noqa: E731
    assert names() == [r[0] for r in rows[:100]]
    assert "first 100 shown" in pg.inner_text(".sb-count")
    pg.click("table#long thead th:nth-child(2)")
    pg.click("table#long thead th:nth-child(2)")  # descending over all 150 rows, not the first page
    best = sorted(rows, key=lambda r: -int(r[1]))
    assert names() == [r[0] for r in best[:100]]
    pg.fill("input.sb-search", "s14")
    found = names()
    assert sorted(found) == [f"s14{i}" for i in range(10)]
    assert found == [r[0] for r in best if r[0].startswith("s14")]  # still in the sorted order
    pg.fill("input.sb-search", "")
    pg.click("button.sb-more")
    assert len(names()) == n and pg.locator("button.sb-more").is_hidden()
    context.close()
    off = browser.new_context(java_script_enabled=False)
    pg = off.new_page()
    pg.goto(path.as_uri())
    assert len(names()) == n  # without the script every row shows
    off.close()


MTEB = Path(__file__).resolve().parents[2] / "leaderboards" / "mteb" / "index.html"


@pytest.mark.skipif(not MTEB.is_file(), reason="the MTEB board is not built in this checkout")
def test_committed_mteb_board(browser):
    context = browser.new_context()
    outside = []
    context.route("**/*", lambda r: r.continue_() if r.request.url == MTEB.as_uri()
                  else (outside.append(r.request.url), r.abort()))
    pg = context.new_page()
    pg.goto(MTEB.as_uri())
    pg.wait_for_selector("html[data-sb-ready]")
    table = "section table"  # a wide table sits in a scrolling div
    first = pg.eval_on_selector(table, "t => t.id")
    names = f"table#{first} tbody tr:not([hidden]) td.sb-drill"  # the system column
    pg.click(f"table#{first} + button.sb-more")  # past the first page
    assert pg.eval_on_selector_all(names, "e => e.length") > 200
    heads = pg.eval_on_selector_all(f"table#{first} thead th", "e => e.map(x => x.textContent)")
    col = heads.index("Mean (Task)") + 1
    pg.click(f"table#{first} thead th:nth-child({col})")
    pg.click(f"table#{first} thead th:nth-child({col})")  # descending: best first, blanks last
    values = pg.eval_on_selector_all(f"table#{first} tbody tr td:nth-child({col})",
                                     "e => e.map(x => x.getAttribute('data-v'))")
    numbers = [float(v) for v in values if v is not None]
    assert numbers == sorted(numbers, reverse=True) and values[len(numbers):] == [None] * (len(values) - len(numbers))
    pg.fill(f".sb-toolbar[data-for='{first}'] input.sb-search", "e5")
    shown = pg.eval_on_selector_all(names, "e => e.map(x => x.textContent)")
    assert shown and all("e5" in s.lower() for s in shown)
    group = pg.eval_on_selector(f".sb-toolbar[data-for='{first}'] input[type=checkbox]", "e => e.dataset.group")
    pg.uncheck(f".sb-toolbar[data-for='{first}'] input[type=checkbox][data-group='{group}']")
    assert pg.eval_on_selector_all(f"table#{first} thead th[data-group='{group}']", "e => e.every(x => x.hidden)")
    pg.click(f"table#{first} tbody tr:not([hidden]) td.sb-drill")
    assert pg.locator("#sb-drill").is_visible()
    assert pg.eval_on_selector_all("#sb-drill tbody tr", "e => e.length") >= 20  # its per-task values
    assert outside == []
    context.close()


# --- every committed board: a screenshot, the page width, figure texts that do not overlap ----
BOARDS = sorted((Path(__file__).resolve().parents[2] / "leaderboards").glob("*/index.html"))
#: Set SCOREBENCH_SCREENSHOTS=DIR to keep the screenshots (one PNG per board) for a person to look at.
SCREENSHOTS = os.environ.get("SCOREBENCH_SCREENSHOTS")
VIEWPORT = {"width": 1280, "height": 900}

_SVG_OVERLAPS = """() => {
  const boxes = [...document.querySelectorAll('text')].filter(e => e.textContent.trim())
    .map(e => { const r = e.getBoundingClientRect(); return [e.textContent.trim(), r.left, r.top, r.right, r.bottom]; })
    .filter(b => b[3] > b[1] && b[4] > b[2]);
  const out = [];
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const a = boxes[i], b = boxes[j];
    const w = Math.min(a[3], b[3]) - Math.max(a[1], b[1]), h = Math.min(a[4], b[4]) - Math.max(a[2], b[2]);
    if (w > 1 && h > 1) out.push(a[0] + ' / ' + b[0]);
  }
  return out;
}"""


@pytest.mark.parametrize("index", BOARDS, ids=[p.parent.name for p in BOARDS])
def test_every_board_screenshot_width_and_figure_texts(browser, index, tmp_path):
    """Each committed board: a full-page screenshot, no sideways overflow of the page (wide tables
    scroll inside it), and no two texts of any of its SVG figures overlapping as Chromium lays them out."""
    folder = index.parent
    context = browser.new_context(viewport=VIEWPORT)
    outside = []
    context.route("**/*", lambda r: r.continue_() if r.request.url.startswith(folder.as_uri())
                  else (outside.append(r.request.url), r.abort()))
    pg = context.new_page()
    pg.goto(index.as_uri())
    pg.wait_for_selector("html[data-sb-ready]")
    shots = Path(SCREENSHOTS) if SCREENSHOTS else tmp_path
    shots.mkdir(parents=True, exist_ok=True)
    pg.screenshot(path=str(shots / f"{folder.name}.png"), full_page=True)
    width = pg.evaluate("document.documentElement.scrollWidth")
    assert width <= VIEWPORT["width"], f"{folder.name}: the page is {width} px wide"
    toggles = pg.eval_on_selector_all(".sb-groups", "e => e.map(x => x.textContent)")
    assert not any(t.count("columns:") > 1 for t in toggles), toggles
    overlaps = {}
    for svg in sorted((folder / "plots").glob("*.svg")):
        pg.goto(svg.as_uri())
        found = pg.evaluate(_SVG_OVERLAPS)
        if found:
            overlaps[svg.name] = found[:5]
    assert overlaps == {}, f"{folder.name}: overlapping figure texts {overlaps}"
    assert outside == []
    context.close()


CHEMBENCH = Path(__file__).resolve().parents[2] / "leaderboards" / "chembench" / "index.html"


@pytest.mark.skipif(not CHEMBENCH.is_file(), reason="the ChemBench board is not built in this checkout")
def test_significance_matrix_is_coloured_without_a_dropdown_per_column(browser):
    context = browser.new_context(viewport=VIEWPORT)
    pg = context.new_page()
    pg.goto(CHEMBENCH.as_uri())
    pg.wait_for_selector("html[data-sb-ready]")
    assert pg.eval_on_selector_all("table#items-mcnemar td.sb-up", "e => e.length") > 0
    colour = pg.eval_on_selector("table#items-mcnemar td.sb-up", "e => getComputedStyle(e).backgroundColor")
    assert colour not in ("rgba(0, 0, 0, 0)", "rgb(255, 255, 255)")
    assert pg.eval_on_selector_all(".sb-toolbar[data-for='items-mcnemar'] select", "e => e.length") == 0
    context.close()


@pytest.mark.skipif(not MTEB.is_file(), reason="the MTEB board is not built in this checkout")
def test_mteb_page_fits_with_task_columns_collapsed(browser):
    context = browser.new_context(viewport=VIEWPORT)
    pg = context.new_page()
    pg.goto(MTEB.as_uri())
    pg.wait_for_selector("html[data-sb-ready]")
    first = pg.eval_on_selector("section table", "t => t.id")
    hidden = pg.eval_on_selector_all(f"table#{first} thead th[data-group^='tasks: ']", "e => e.every(x => x.hidden)")
    shown = pg.eval_on_selector_all(f"table#{first} thead th:not([hidden])", "e => e.map(x => x.textContent)")
    assert hidden and "Mean (Task)" in shown and "system" in shown
    assert pg.evaluate("document.documentElement.scrollWidth") <= VIEWPORT["width"]
    sticky = pg.eval_on_selector(f"table#{first} tbody td.sb-drill", "e => getComputedStyle(e).position")
    assert sticky == "sticky"  # the system column stays in view while the table scrolls
    context.close()
