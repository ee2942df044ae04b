"""A 1,000-row x 50-column board page in headless Chromium: time to open and to sort.

Builds a synthetic board (1,000 systems, 48 task columns with intervals in 6 column groups,
drill-down data for every system), writes it with the normal renderer and drives the system
Chromium through Playwright: page load until the page script has run, then a click on a
numeric column header until the table is re-ordered (median of several clicks).

Run: python benchmarks/bench_board_page.py [--rows 1000] [--cols 50]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from scorebench.leaderboard.build import Board, Section
from scorebench.leaderboard.render import write_board
from scorebench.leaderboard.spec import BoardSpec


def make_board(rows: int, cols: int, out: Path) -> Path:
    rng = np.random.default_rng(0)
    tasks = [f"task{j:02d}" for j in range(cols - 2)]
    values = rng.uniform(0, 1, size=(rows, len(tasks)))
    mean = values.mean(axis=1)
    order = np.argsort(-mean)
    columns = ("system", "Mean", *tasks)
    groups = tuple((t, f"type{j % 6}") for j, t in enumerate(tasks))
    table, records = [], []
    for i in order:
        name = f"org{i % 37}/model-{i:04d}"
        cells = [name, f"{mean[i]:.4f} [{mean[i] - .02:.4f}, {mean[i] + .02:.4f}]"]
        cells += [f"{v:.4f} [{v - .05:.4f}, {v + .05:.4f}]" for v in values[i]]
        table.append(tuple(cells))
        records += [{"system": name, "task": t, "metric": "score", "value": float(v), "ci_low": float(v - .05),
                     "ci_high": float(v + .05)} for t, v in zip(tasks, values[i])]
    section = Section("big", "Big board", "", columns, tuple(table), pd.DataFrame.from_records(records),
                      groups=groups)
    board = Board(BoardSpec(path=out / "big.toml", name="big", title="Big board"), (section,), (("seed", "0"),))
    write_board(board, out / "site")
    return out / "site" / "index.html"


def main() -> None:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--cols", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        page_path = make_board(args.rows, args.cols, Path(tmp))
        build_s = time.perf_counter() - t0
        size = page_path.stat().st_size
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
            opens, sorts, nav = [], [], []
            for _ in range(args.repeat):
                pg = browser.new_page()
                t0 = time.perf_counter()
                pg.goto(page_path.as_uri())
                pg.wait_for_selector("html[data-sb-ready]")
                opens.append(time.perf_counter() - t0)
                # the browser's own clock: navigation start to the end of the load event (script run)
                nav.append(pg.evaluate("() => performance.getEntriesByType('navigation')[0].loadEventEnd") / 1000)
                for col in (2, 7, 30):
                    t0 = time.perf_counter()
                    pg.click(f"table#big thead th:nth-child({col})")
                    pg.wait_for_selector(f"table#big thead th:nth-child({col})[aria-sort=ascending]")
                    sorts.append(time.perf_counter() - t0)
                # in-page time of one sort, without the driver's round trips
                inner = pg.evaluate("() => { const b = window.scorebenchBoards.big; const t = performance.now(); "
                                    "b.sort(12); return performance.now() - t; }")
                sorts.append(inner / 1000)
                pg.close()
            browser.close()
    print(f"board {args.rows} rows x {args.cols} columns: page {size / 1e6:.2f} MB, written in {build_s:.2f} s")
    print(f"open (driver: goto to script ready): median {statistics.median(opens):.3f} s, max {max(opens):.3f} s; "
          f"browser clock (navigation start to load end): median {statistics.median(nav):.3f} s, "
          f"max {max(nav):.3f} s ({args.repeat} loads)")
    print(f"sort (click to re-ordered, and in-page): median {statistics.median(sorts):.3f} s, "
          f"max {max(sorts):.3f} s ({len(sorts)} sorts)")


if __name__ == "__main__":
    main()
