"""The [arena] block's optional sections: ties modelled with sandwich intervals, selection-bias diagnostics."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from scorebench.aggregate.input import as_battles
from scorebench.aggregate.pairwise import bradley_terry_sandwich
from scorebench.aggregate.style_control import filter_battles
from scorebench.aggregate.tie_models import fit_tie_model
from scorebench.core.errors import InputError
from scorebench.leaderboard.build import build_board
from scorebench.leaderboard.render import board_files
from scorebench.leaderboard.spec import load_spec

sys.path.insert(0, str(Path(__file__).parents[1]))
from _style_battles import style_battles  # noqa: E402


def _spec(tmp_path, body: str) -> Path:
    table = style_battles(seed=12, n=1500)
    table.to_csv(tmp_path / "battles.csv", index=False)
    spec = tmp_path / "arena.toml"
    spec.write_text('name = "ar"\nn_boot = 0\n[[sources]]\nname = "b"\npath = "battles.csv"\n'
                    f'[arena]\nsource = "b"\nanony = true\n{body}', encoding="utf-8")
    return spec


def test_ties_and_diagnostics_sections(tmp_path):
    spec = _spec(tmp_path, 'tie_model = "davidson"\ndiagnostics = true\nbest_of = 5\n')
    board = build_board(load_spec(spec))
    keys = [s.key for s in board.sections]
    assert keys == ["arena", "arena-style", "arena-ties", "arena-diagnostics"]
    ties, diag = board.sections[2], board.sections[3]
    table = filter_battles(pd.read_csv(tmp_path / "battles.csv"), True)
    battles = as_battles(table)
    fit = fit_tie_model(battles, "davidson")
    data = ties.data.set_index(["system", "metric"])
    half, cov = bradley_terry_sandwich(battles)
    for i, s in enumerate(battles.systems):
        assert data.loc[(s, "bt_davidson_rating"), "value"] == pytest.approx(1000 + 400 / np.log(10) * fit.theta[i])
        row = data.loc[(s, "bt_sandwich_rating")]
        assert row["value"] == pytest.approx(half[i])
        assert row["ci_high"] - row["value"] == pytest.approx(1.959964 * np.sqrt(cov[i, i]), rel=1e-6)
    nu = ties.data[ties.data["metric"] == "tie_parameter_nu"].iloc[0]
    assert nu["value"] == pytest.approx(fit.tie_parameter)
    assert nu["ci_low"] < nu["value"] < nu["ci_high"]
    d = diag.data
    shares = d[d["metric"] == "sampling_share"]["value"]
    assert shares.sum() == pytest.approx(1.0)
    assert (d[d["metric"] == "best_of_n_inflation"]["value"] > 0).all()
    files = board_files(board)
    text = files["README.md"]
    assert "Arena: selection-bias diagnostics" in (text.decode() if isinstance(text, bytes) else text)


def test_bad_arena_options_are_clear(tmp_path):
    with pytest.raises(InputError, match="tie_model"):
        load_spec(_spec(tmp_path, 'tie_model = "bradley"\n'))
    with pytest.raises(InputError, match="providers"):
        load_spec(_spec(tmp_path, 'providers = { "m1" = 3 }\n'))
    with pytest.raises(InputError, match="best_of"):
        load_spec(_spec(tmp_path, 'best_of = 0\n'))
