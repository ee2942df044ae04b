"""The [incomplete] board block: MTEB's own columns against the mteb package, missing-aware
rankings, the stratified task bootstrap, Pareto dominance and escaping."""

from __future__ import annotations

import dataclasses
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _mteb_package import load_mteb_results, mteb_quietly
from _paths import REFERENCE

from scorebench.aggregate import as_matrix
from scorebench.core.errors import InputError
from scorebench.leaderboard.build import build_board
from scorebench.leaderboard.incomplete import METHODS, model_sizes, pareto_dominated, stratified_rank_intervals
from scorebench.leaderboard.render import board_files
from scorebench.leaderboard.spec import load_spec

ROOT = Path(__file__).resolve().parents[2]
MTEB_RESULTS = REFERENCE / "mteb" / "results"
EVIL = "<script>alert(1)</script>"


def _toy(tmp_path: Path, n_boot: int = 40) -> Path:
    rng = np.random.default_rng(0)
    rows = []
    systems = ["a", "b", "c", EVIL, 'q"uote']
    tasks = [(f"t{j}", "X" if j < 3 else "Y") for j in range(6)]
    for s, name in enumerate(systems):
        for task, kind in tasks:
            if name == "c" and task in ("t0", "t4"):
                continue  # c misses two tasks
            rows.append({"system": name, "task": task, "task_type": kind, "value": 0.2 * s + rng.uniform(0, 0.1)})
    pd.DataFrame(rows).to_csv(tmp_path / "long.csv", index=False)
    spec = tmp_path / "inc.toml"
    spec.write_text(f'name = "inc"\nn_boot = {n_boot}\n[[sources]]\nname = "s"\npath = "long.csv"\n'
                    '[incomplete]\nsource = "s"\ntop = 3\n', encoding="utf-8")
    return spec


def test_toy_board_sections_and_escaping(tmp_path):
    board = build_board(load_spec(_toy(tmp_path)))
    keys = [s.key for s in board.sections]
    assert keys[:3] == ["incomplete", "incomplete-agreement", "incomplete-moves"]
    main = board.sections[0]
    col = main.columns.index
    by_name = {r[col("system")]: r for r in main.rows}
    assert by_name["c"][col("coverage")] == "4/6" and by_name["a"][col("coverage")] == "6/6"
    assert by_name["c"][col("Mean (Task)")] == "—" and by_name["a"][col("Mean (Task)")] != "—"
    # the best system (highest values) ranks first under every method
    assert main.rows[0][col("system")] == 'q"uote' and main.rows[0][col("rank: Borda (completion)")].startswith("1 ")
    assert len(board.sections[2].rows) == 3
    page = board_files(board)["index.html"].decode()
    assert EVIL not in page.split('<script type="application/json"')[0]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    data = page.split('<script type="application/json" id="sb-data">')[1].split("</script>")[0]
    assert "<" not in data and "\\u003cscript\\u003e" in data
    assert 'data-group="tasks: X"' in page and 'data-filter="num"' in page


def test_spec_validation(tmp_path):
    spec = _toy(tmp_path)
    text = spec.read_text()
    spec.write_text(text.replace("top = 3", "top = 0"))
    with pytest.raises(InputError, match="'top'"):
        load_spec(spec)
    spec.write_text(text.replace("top = 3", "colour = 1"))
    with pytest.raises(InputError, match="unknown key"):
        load_spec(spec)
    spec.write_text(text.replace('source = "s"\ntop', 'source = "nope"\ntop'))
    with pytest.raises(InputError, match="unknown source 'nope'"):
        load_spec(spec)


def test_source_without_task_types_is_refused(tmp_path):
    spec = _toy(tmp_path)
    pd.read_csv(tmp_path / "long.csv").drop(columns="task_type").to_csv(tmp_path / "long.csv", index=False)
    with pytest.raises(InputError, match="task_type"):
        build_board(load_spec(spec))


def test_stratified_bootstrap_keeps_the_type_mix():
    # every type holds identical copies of one column, so a stratified replicate is the same
    # matrix up to duplicated columns: no rank can move (a plain column bootstrap would move them)
    base = pd.DataFrame({"x": [3.0, 2.0, 1.0, 0.0], "y": [0.0, 1.0, 2.0, 3.5]}, index=list("abcd"))
    wide = pd.concat([base[["x"]]] * 3 + [base[["y"]]] * 3, axis=1)
    wide.columns = [f"c{j}" for j in range(6)]
    m = as_matrix(wide)
    out = stratified_rank_intervals(m, ["X"] * 3 + ["Y"] * 3, METHODS[4], 100, 1, 0.95)
    assert out["rank_low"].tolist() == out["rank_high"].tolist()
    np.testing.assert_allclose(out["ci_low"], out["ci_high"], rtol=0, atol=1e-12)
    with pytest.raises(InputError, match="task types"):
        stratified_rank_intervals(m, ["X"], METHODS[4], 10, 0, 0.95)


def test_pareto_dominance_needs_separated_intervals():
    size = np.array([1.0, 2.0, 2.0, 10.0])
    low = np.array([0.50, 0.40, 0.58, 0.30])
    high = np.array([0.60, 0.49, 0.70, 0.75])
    # b: a is smaller and entirely above; c: overlaps a; d: overlaps everyone -> not dominated
    assert pareto_dominated(size, low, high).tolist() == [False, True, False, False]
    assert pareto_dominated(size[:1], low[:1], high[:1]).tolist() == [False]


def test_model_sizes_reads_meta_and_survives_bad_files(tmp_path):
    good = tmp_path / "org__m" / "rev"
    good.mkdir(parents=True)
    (good / "model_meta.json").write_text('{"name": "org/m", "n_parameters": 1000, "open_weights": true}')
    bad = tmp_path / "org__bad" / "rev"
    bad.mkdir(parents=True)
    (bad / "model_meta.json").write_text("{not json")
    odd = tmp_path / "org__odd" / "rev"
    odd.mkdir(parents=True)
    (odd / "model_meta.json").write_text('{"n_parameters": "big", "open_weights": null}')
    frame = model_sizes(tmp_path).set_index("system")
    assert frame.loc["org/m", "n_parameters"] == 1000 and frame.loc["org/m", "open_weights"] == "yes"
    assert np.isnan(frame.loc["org/odd", "n_parameters"]) and frame.loc["org/odd", "open_weights"] == "unknown"
    assert "org/bad" not in frame.index


# --- the real MTEB(eng, v2) board against the mteb package ------------------------------

needs_data = pytest.mark.skipif(not MTEB_RESULTS.is_dir(), reason=f"reference data not found at {MTEB_RESULTS}")


@pytest.fixture(scope="module")
def mteb_board():
    spec = load_spec(ROOT / "leaderboards" / "mteb.toml")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return build_board(dataclasses.replace(spec, n_boot=20))  # the columns under test need no bootstrap


@pytest.fixture(scope="module")
def leaderboard():
    results = load_mteb_results(MTEB_RESULTS)
    with mteb_quietly():
        return results.get_benchmark_result().set_index("Model")


def _number(cell: str) -> float:
    return np.nan if cell == "—" else float(re.match(r"[-\d.]+", cell).group())


@needs_data
def test_mteb_columns_reproduce_the_leaderboard(mteb_board, leaderboard):
    main = mteb_board.sections[0]
    col = main.columns.index
    ours = pd.DataFrame(main.rows, columns=main.columns).set_index("system")
    assert len(ours) == 270
    common = leaderboard.index
    assert (ours.loc[common, "Rank (Borda)"].astype(int) == leaderboard["Rank (Borda)"]).all()
    for column in ("Mean (Task)", "Mean (TaskType)", "Classification", "Clustering", "PairClassification",
                   "Reranking", "Retrieval", "STS", "Summarization"):
        mine = ours.loc[common, column].map(_number).to_numpy()
        theirs = 100 * leaderboard[column].to_numpy(dtype=float)
        assert (np.isnan(mine) == np.isnan(theirs)).all(), column
        np.testing.assert_allclose(mine[~np.isnan(mine)], theirs[~np.isnan(theirs)], rtol=0, atol=0.005 + 1e-9)
    size = ours.loc[common, "parameters (M)"].map(_number).to_numpy()
    total = 1000 * leaderboard["Total Parameters (B)"].to_numpy(dtype=float)
    both = np.isfinite(size) & np.isfinite(total) & (total >= 10)
    # our sizes come from the model_meta.json files of the results; the package reads its newer model
    # registry, which corrected a few (e.g. 596M vs 607M): most, not all, agree
    agree = np.isclose(size[both], total[both], rtol=0.002, atol=1.0)
    assert agree.mean() > 0.9, np.asarray(common)[both][~agree]
    assert col("coverage") < col("Rank (Borda)")


@needs_data
def test_mteb_missing_aware_methods_and_moves(mteb_board):
    main = mteb_board.sections[0]
    data = main.data
    ranks = data[data["metric"].isin([m.label for m in METHODS])].pivot(index="system", columns="metric",
                                                                        values="rank")
    assert ranks.notna().all().all() and len(ranks) == 270
    tau = mteb_board.sections[1].data
    assert ((tau["value"] <= 1 + 1e-12) & (tau["value"] >= -1 - 1e-12)).all()
    moves = mteb_board.sections[2]
    assert len(moves.rows) == 15
    # the table lists the largest moves, largest first
    largest = moves.data["largest_move"].tolist()
    assert largest == sorted(largest, reverse=True)
    both = ranks[["MTEB Borda", "Borda (completion)", "win rate (shared)"]]
    worst = np.maximum((both["Borda (completion)"] - both["MTEB Borda"]).abs(),
                       (both["win rate (shared)"] - both["MTEB Borda"]).abs()).max()
    assert largest[0] == worst
    pareto = next(s for s in mteb_board.sections if s.key == "incomplete-pareto")
    assert pareto.figures and not pareto.data["dominated"].all()
