"""The [arena] board block (plain and style-controlled Bradley–Terry from battles), the section-kind
registry, and style-control coefficients from the CLI."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import scorebench
from scorebench.aggregate.style_control import style_control
from scorebench.cli import cli
from scorebench.core.errors import InputError
from scorebench.leaderboard.build import build_board
from scorebench.leaderboard.render import board_files
from scorebench.leaderboard.sections import section_kinds
from scorebench.leaderboard.spec import load_spec

sys.path.insert(0, str(Path(__file__).parents[1]))
from _style_battles import style_battles  # noqa: E402  (battles from a known style-controlled model)

EVIL = "<script>alert(1)</script>"


def _battles(tmp_path) -> pd.DataFrame:
    table = style_battles(seed=11, n=1500)
    table["model_a"] = table["model_a"].replace({"m2": EVIL})
    table["model_b"] = table["model_b"].replace({"m2": EVIL})
    table.to_csv(tmp_path / "battles.csv", index=False)
    return table


def _spec(tmp_path, body: str = 'anony = true\nn_boot = 30\n') -> Path:
    _battles(tmp_path)
    spec = tmp_path / "arena.toml"
    spec.write_text('name = "ar"\nn_boot = 0\n[[sources]]\nname = "b"\npath = "battles.csv"\n'
                    f'[arena]\nsource = "b"\n{body}', encoding="utf-8")
    return spec


def test_arena_board_numbers_match_style_control(tmp_path):
    board = build_board(load_spec(_spec(tmp_path)))
    ratings, coefficients = board.sections
    table = pd.read_csv(tmp_path / "battles.csv")
    expected = style_control(table, anony=True, n_boot=30, seed=0, ci=0.95)
    frame = expected.to_frame().set_index("system")
    data = ratings.data.set_index(["system", "metric"])
    for system, row in frame.iterrows():
        styled, plain = data.loc[(system, "bt_style_rating")], data.loc[(system, "bt_plain_rating")]
        assert styled["value"] == pytest.approx(row["rating"], rel=1e-10)
        assert (styled["ci_low"], styled["ci_high"]) == pytest.approx((row["ci_low"], row["ci_high"]), rel=1e-10)
        assert plain["value"] == pytest.approx(row["plain_rating"], rel=1e-10)
        assert styled["rank"] == row["rank"] and plain["rank"] == row["plain_rank"]
        assert data.loc[(system, "rank_delta_style"), "value"] == row["plain_rank"] - row["rank"]
    # the display follows the Arena rank, and the battle counts are those after the anony filter
    shown = pd.DataFrame(ratings.rows, columns=ratings.columns)
    assert shown["rank (style control)"].astype(int).is_monotonic_increasing
    kept = table[table["anony"]]
    counts = pd.concat([kept["model_a"], kept["model_b"]]).value_counts()
    assert dict(zip(shown["system"], shown["battles"].astype(float))) == {k: float(v) for k, v in counts.items()}
    assert set(ratings.data.columns) | set(coefficients.data.columns) <= {  # the board.csv columns of other boards
        "section", "task", "system", "metric", "value", "ci_low", "ci_high", "n", "rank", "rank_low", "rank_high", "band"}
    coef = coefficients.data.set_index("metric")
    assert coef["value"].to_numpy() == pytest.approx(expected.coefficients, rel=1e-10)
    assert (coef["ci_low"] <= coef["value"]).all() and (coef["value"] <= coef["ci_high"]).all()
    page = board_files(board)["index.html"].decode()
    assert page.count(EVIL) == 0 and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "Rank Δ (style)" in ratings.note and "battle resamples" in coefficients.note


def test_arena_without_intervals_and_with_an_anchor(tmp_path):
    board = build_board(load_spec(_spec(tmp_path, 'n_boot = 0\nanchor = "m3"\nanchor_rating = 1200\n')))
    ratings, coefficients = board.sections
    data = ratings.data.set_index(["system", "metric"])
    assert data.loc[("m3", "bt_style_rating"), "value"] == pytest.approx(1200.0, abs=1e-9)
    assert data["ci_low"].isna().all() and coefficients.data["ci_low"].isna().all()
    assert "no intervals" in ratings.note


@pytest.mark.parametrize("body, message", [
    ('reg = 0\n', "'reg' must be > 0"),
    ('anchor_rating = 1200\n', "needs 'anchor'"),
    ('features = []\n', "'features'"),
    ('n_boot = -1\n', "n_boot"),
    ('colour = "red"\n', "unknown key"),
    ('anony = "yes"\n', "'anony' expected a boolean"),
])
def test_arena_spec_errors(tmp_path, body, message):
    with pytest.raises(InputError, match=message):
        load_spec(_spec(tmp_path, body))


def test_arena_build_errors_name_the_problem(tmp_path):
    with pytest.raises(InputError, match="anchor 'nobody'"):
        build_board(load_spec(_spec(tmp_path, 'anchor = "nobody"\nn_boot = 0\n')))
    spec = load_spec(_spec(tmp_path, 'language = "English"\nn_boot = 0\n'))
    pd.read_csv(tmp_path / "battles.csv").drop(columns="language").to_csv(tmp_path / "battles.csv", index=False)
    with pytest.raises(InputError, match="filter language"):
        build_board(spec)


def test_unknown_arena_source_is_refused(tmp_path):
    _battles(tmp_path)
    spec = tmp_path / "a.toml"
    spec.write_text('name = "a"\n[[sources]]\nname = "b"\npath = "battles.csv"\n[arena]\nsource = "nope"\n')
    with pytest.raises(InputError, match="unknown source 'nope'"):
        load_spec(spec)


def test_section_kinds_are_declared_once_in_board_order():
    blocks = [k.block for k in section_kinds()]
    assert blocks == ["aggregate", "incomplete", "items", "compression", "adaptive", "irt", "arena", "health",
                      "sampling"]
    from scorebench.leaderboard.sections import register_section

    with pytest.raises(ValueError, match="already registered"):
        register_section("arena", parse="x:y", build="x:y", sources=lambda b: ())
    from scorebench.leaderboard.spec import BoardSpec

    fields = set(BoardSpec.__dataclass_fields__)
    assert set(blocks) <= fields  # every declared block has its place in the spec


def test_a_task_is_evaluated_once(tmp_path, monkeypatch):
    """The per-unit values behind the paired rank intervals come from the same evaluate call."""
    rng = np.random.default_rng(0)
    n = 60
    pd.DataFrame({"system": np.repeat(["a", "b", "c"], n), "id": np.tile(np.arange(n), 3),
                  "y": np.tile(rng.integers(0, 2, n), 3), "p": rng.uniform(size=3 * n)}).to_csv(tmp_path / "p.csv",
                                                                                              index=False)
    spec = tmp_path / "b.toml"
    spec.write_text('name = "b"\nn_boot = 50\n[[sources]]\nname = "s"\npath = "p.csv"\n'
                    '[[evaluate]]\nsource = "s"\nkind = "binary"\nmetrics = ["brier_score", "log_score"]\n')
    calls = []
    original = scorebench.evaluate

    def counting(*args, **kwargs):
        calls.append(kwargs.get("per_unit", False))
        return original(*args, **kwargs)

    monkeypatch.setattr(scorebench, "evaluate", counting)
    board = build_board(load_spec(spec))
    assert calls == [True]
    section = board.sections[0]
    ranked = section.data[section.data["metric"] == "brier_score"]
    assert ranked["rank_low"].notna().all() and "paired bootstrap over units" in section.note
    monkeypatch.setattr(scorebench, "evaluate", original)
    direct = original(pd.read_csv(tmp_path / "p.csv"), ["brier_score", "log_score"], kind="binary", n_boot=50, seed=0)
    merged = section.data.merge(direct, on=["system", "metric"], suffixes=("", "_direct"))
    assert np.allclose(merged["value"], merged["value_direct"], rtol=1e-12)
    assert np.allclose(merged["ci_low"], merged["ci_low_direct"], rtol=1e-12)


def test_cli_style_coefficients_with_intervals(tmp_path):
    table = _battles(tmp_path)
    out = tmp_path / "coef.csv"
    result = CliRunner().invoke(cli, ["aggregate", str(tmp_path / "battles.csv"), "-m", "bradley_terry_style",
                                      "--coefficients", "--bootstrap", "30", "--seed", "2", "-p", "anony=true",
                                      "--output", str(out)])
    assert result.exit_code == 0, result.output
    got = pd.read_csv(out)
    expected = style_control(table, anony=True, n_boot=30, seed=2).coefficients_frame()
    assert got["feature"].tolist() == list(expected["feature"])
    assert np.allclose(got[["coefficient", "ci_low", "ci_high"]], expected[["coefficient", "ci_low", "ci_high"]],
                       rtol=1e-8)
    bad = CliRunner().invoke(cli, ["aggregate", str(tmp_path / "battles.csv"), "-m", "borda", "--coefficients"])
    assert bad.exit_code != 0 and "bradley_terry_style alone" in bad.output


def test_committed_battles_show_the_style_effects_they_were_drawn_with():
    """data/boards/reward_battles.csv: long, formatted answers win beyond strength, so the plain
    rating over-rates chat-verbose and under-rates chat-terse; style control reverses their order."""
    root = Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(root / "data" / "boards"))
    import make_reward

    table = pd.read_csv(root / "data" / "boards" / "reward_battles.csv")
    assert len(table) == 6000
    out = style_control(table, anony=True)
    rating = dict(zip(out.systems, out.scores))
    plain = dict(zip(out.systems, out.plain_scores))
    assert plain["chat-verbose"] > plain["chat-terse"] and rating["chat-verbose"] < rating["chat-terse"]
    coef = dict(zip(out.features, out.coefficients))
    assert coef["sum_assistant_tokens"] == pytest.approx(make_reward.ARENA_GAMMA[0], abs=0.15)
    # the style-controlled order follows the true strengths more closely than the plain one
    truth = {k: v[0] for k, v in make_reward.ARENA.items()}
    names = sorted(truth)
    from scipy.stats import kendalltau

    styled = kendalltau([truth[n] for n in names], [rating[n] for n in names]).statistic
    unstyled = kendalltau([truth[n] for n in names], [plain[n] for n in names]).statistic
    assert styled > unstyled


def test_section_modules_do_not_import_the_builder():
    """No import cycle: the section builders take the board types from leaderboard.board, and the
    builder reaches them only through the section registry (by name, when a block is present)."""
    import ast

    import scorebench.leaderboard as package

    folder = Path(package.__file__).parent
    for name in ("board", "sections", "irt_board", "incomplete", "items_board", "compression", "arena", "render",
                 "check", "interactive"):
        tree = ast.parse((folder / f"{name}.py").read_text(encoding="utf-8"))
        imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.level == 1}
        assert "build" not in imported, f"leaderboard/{name}.py imports the builder"
    build = ast.parse((folder / "build.py").read_text(encoding="utf-8"))
    from_build = {node.module for node in ast.walk(build) if isinstance(node, ast.ImportFrom) and node.level == 1}
    assert not from_build & {"irt_board", "incomplete", "items_board", "compression", "arena"}
