"""The [health] and [adaptive] board blocks on a small simulated item matrix."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scorebench.core.errors import InputError
from scorebench.leaderboard.build import build_board
from scorebench.leaderboard.render import board_files
from scorebench.leaderboard.spec import load_spec

EVIL = "<script>alert(1)</script>"


def _answers(n: int = 200, j: int = 30, seed: int = 2) -> np.ndarray:
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=n)
    a, b = rng.uniform(0.8, 2.5, j), rng.normal(size=j)
    y = (rng.random((n, j)) < 1 / (1 + np.exp(-a * (theta[:, None] - b)))).astype(float)
    y[:, 4] = 1 - y[:, 4]       # miskeyed
    y[:, 9] = 1.0               # saturated
    return y


def _spec(tmp_path, block: str) -> object:
    y = _answers()
    frame = pd.DataFrame(y, index=[f"m{i}" for i in range(len(y))], columns=[f"i{j}" for j in range(y.shape[1])])
    frame.to_csv(tmp_path / "a.csv")
    spec = tmp_path / "h.toml"
    spec.write_text(f'name = "h"\nn_boot = 30\n[[sources]]\nname = "{EVIL}"\npath = "a.csv"\n{block}',
                    encoding="utf-8")
    return spec


def test_health_section(tmp_path):
    board = build_board(load_spec(_spec(tmp_path, f'[health]\nsources = ["{EVIL}"]\nshow = 3\n')))
    summary, items = board.sections
    assert summary.key == "health" and items.key == "health-items"
    assert len(summary.rows) == 1 and summary.rows[0][2] == "200"
    flagged = {r[1]: r[2] for r in items.rows}
    assert len(items.rows) <= 3
    assert "likely_mislabelled" in flagged["i4"]          # the most serious comes first
    assert "i9" in set(items.data["item"]) and "saturated" in items.data.set_index("item").loc["i9", "issues"]
    page = board_files(board)["index.html"].decode()
    assert EVIL not in page and "&lt;script&gt;" in page


def test_adaptive_section(tmp_path):
    block = f'[adaptive]\nsources = ["{EVIL}"]\nbudgets = [5, 15]\nrandom = 5\n'
    board = build_board(load_spec(_spec(tmp_path, block)))
    (section,) = board.sections
    assert [r[1] for r in section.rows] == ["5", "15"] and section.figures
    assert set(section.data["system"]) == {"adaptive", "static_irt", "random"}
    assert (section.data["ci_low"] <= section.data["value"]).all()


@pytest.mark.parametrize("block, match", [
    ('[health]\nsources = ["x"]\n', "unknown source"),
    ('[health]\nsources = ["S"]\nalpha = 0\n', "alpha"),
    ('[health]\nsources = ["S"]\nmodel = "9pl"\n', "model"),
    ('[health]\nsources = ["S"]\nbogus = 1\n', "unknown key"),
    ('[adaptive]\nsources = ["S"]\nbudgets = []\n', "budgets"),
    ('[adaptive]\nsources = ["S"]\nse_target = -1\n', "se_target"),
    ('[adaptive]\nsources = ["S"]\ntest_size = 1\n', "test_size"),
])
def test_spec_validation(tmp_path, block, match):
    p = _spec(tmp_path, block.replace('"S"', f'"{EVIL}"'))
    with pytest.raises(InputError, match=match):
        load_spec(p)


def test_health_section_without_listed_items_has_no_empty_table(tmp_path):
    board = build_board(load_spec(_spec(tmp_path, f'[health]\nsources = ["{EVIL}"]\nshow = 0\n')))
    assert [s.key for s in board.sections] == ["health"]
