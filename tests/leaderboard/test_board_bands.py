"""Bands and rank intervals tell one story on every committed board (issue 29, item 5).

For every section of every committed ``leaderboards/*/board.csv`` that prints bands:

* beside rank intervals, the bands must follow the stated rule
  (:data:`scorebench.aggregate.rank_bands.INTERVAL_BAND_RULE`): a band member's rank interval
  reaches its top's rank, a band's top's interval stops short of the previous top's rank, and
  every rank lies inside its own interval; the board's README states the rule;
* without rank intervals (ChemBench's items section, bands from McNemar tests), the bands must
  follow the tie-class rule against the Holm-adjusted p-values the board prints beside them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from scorebench.aggregate.rank_bands import check_interval_bands, interval_bands

BOARDS = sorted((Path(__file__).resolve().parents[2] / "leaderboards").glob("*/board.csv"))
ALPHA = 0.05


def _band_sections():
    for path in BOARDS:
        board = pd.read_csv(path, low_memory=False)
        if "band" not in board:
            continue
        banded = board[board["band"].notna()]
        for section, rows in banded.groupby("section", sort=False):
            yield pytest.param(path, section, rows, id=f"{path.parent.name}:{section}")


SECTIONS = list(_band_sections())


def test_there_are_banded_sections():
    assert len(SECTIONS) >= 20 and {p.values[0].parent.name for p in SECTIONS} >= {"classification", "forecasting",
                                                                                   "mteb", "chembench"}


@pytest.mark.parametrize(("path", "section", "rows"), SECTIONS)
def test_bands_agree_with_the_intervals_or_tests_shown(path, section, rows):
    rank = rows["rank"].to_numpy(dtype=float)
    bands = rows["band"].to_numpy(dtype=float)
    assert (np.diff(rank) >= 0).all(), "rows of a banded section are in ranking order"
    if "rank_low" in rows and rows["rank_low"].notna().all():
        low, high = rows["rank_low"].to_numpy(dtype=float), rows["rank_high"].to_numpy(dtype=float)
        problems = check_interval_bands(rank, low, high, bands)
        assert not problems, f"{path.parent.name}/{section}: " + "; ".join(problems[:5])
        np.testing.assert_array_equal(interval_bands(rank, low), bands)
        readme = (path.parent / "README.md").read_text(encoding="utf-8")
        assert "reaches the rank of the band's top" in readme
        return
    board = pd.read_csv(path, low_memory=False)
    p = board[board["section"] == f"{section}-mcnemar"]
    assert len(p), f"{path.parent.name}/{section}: bands without rank intervals need the tests they come from"
    p_of = {(a, b): v for a, b, v in zip(p["system"], p["other"], p["p_holm"])}
    systems = rows["system"].tolist()
    top = systems[0]
    assert bands[0] == 1
    for i in range(1, len(systems)):
        s = systems[i]
        if bands[i] == bands[i - 1]:
            assert p_of[(top, s)] >= ALPHA, f"{s} shares band {bands[i]:g} with {top} but differs (p={p_of[(top, s)]})"
        else:
            assert bands[i] == bands[i - 1] + 1 and p_of[(top, s)] < ALPHA
            top = s


def test_the_rule_catches_the_contradictions_the_issue_found():
    # classification/breast_cancer before: band 2 with interval 1-7 (the top's rank is 1)
    assert check_interval_bands(np.array([1, 5]), np.array([1, 1]), np.array([3, 7]), np.array([1, 2]))
    # forecasting/eval3-co2 before: band 1 with interval 2-2
    assert check_interval_bands(np.array([1, 2]), np.array([1, 2]), np.array([2, 2]), np.array([1, 1]))
    assert not check_interval_bands(np.array([1, 2]), np.array([1, 2]), np.array([2, 2]), np.array([1, 2]))
