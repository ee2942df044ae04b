"""ChemBench items section: it says where IRT and the paired tests disagree, MAP when a prior is
used, and its information grid reaches every plotted ability (issue 29, item 1)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from scorebench.leaderboard.items_board import _disagreements  # noqa: PLC2701  (unit under test, same package tests)

BOARD = Path(__file__).resolve().parents[2] / "leaderboards" / "chembench"


def test_disagreements_name_reversed_significant_pairs_and_separated_bands():
    systems = ["a", "b", "c"]
    acc = np.array([0.61, 0.57, 0.40])
    theta = np.array([0.80, 1.07, -1.0])
    se = np.array([0.05, 0.05, 0.05])
    p = np.array([[1.0, 0.014, 1e-9], [0.014, 1.0, 1e-9], [1e-9, 1e-9, 1.0]])
    text = _disagreements(systems, acc, theta, se, p, 0.05)
    assert "a is significantly more accurate than b" in text and "slope" in text
    p2 = p.copy()
    p2[0, 1] = p2[1, 0] = 0.5
    text2 = _disagreements(systems, acc, theta, se, p2, 0.05)
    assert "contradicts" not in text2 and "1 of the 1 pairs McNemar finds not different" in text2
    assert _disagreements(systems, acc, np.array([1.0, 0.9, -1.0]), np.array([0.5, 0.5, 0.5]), p2, 0.05) == ""


def test_committed_chembench_board():
    if not (BOARD / "board.csv").exists():
        return
    readme = (BOARD / "README.md").read_text(encoding="utf-8")
    first = readme.splitlines()[0]
    assert "22 LLMs" not in first and "agent" in first
    assert "by MAP" in readme and "marginal maximum likelihood" not in readme
    assert "What the ability band covers" in readme
    board = pd.read_csv(BOARD / "board.csv", low_memory=False)
    theta = board[(board["section"] == "items") & (board["metric"] == "2pl ability")]["value"]
    grid = board[board["section"] == "items-information"]["theta"]
    assert grid.min() <= theta.min() and grid.max() >= theta.max()  # Galactica sits near -6


def test_disagreements_report_both_band_counts():
    systems = ["a", "b"]
    p = np.array([[1.0, 0.5], [0.5, 1.0]])
    text = _disagreements(systems, np.array([0.6, 0.59]), np.array([1.0, 0.8]), np.array([0.1, 0.1]), p, 0.05,
                          se_known=np.array([0.04, 0.04]))
    assert "0 of the 1 pairs McNemar finds not different" in text
    assert "(1 with posterior-sd bands that treat the item parameters as known)" in text
