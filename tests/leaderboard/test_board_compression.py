"""The [compression] board block: IRT-selected vs random item subsets on held-out systems."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scorebench.core.errors import InputError
from scorebench.leaderboard.build import build_board
from scorebench.leaderboard.compression import compression_curve
from scorebench.leaderboard.render import board_files
from scorebench.leaderboard.spec import load_spec

EVIL = "<script>alert(1)</script>"


def _answers(n: int = 300, j: int = 60, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=n)
    a, b = rng.uniform(0.8, 2.5, j), rng.normal(size=j)
    return (rng.random((n, j)) < 1 / (1 + np.exp(-a * (theta[:, None] - b)))).astype(float)


def test_curve_is_deterministic_and_beats_random_on_2pl_data():
    y = _answers()
    one = compression_curve(y, [5, 15, 60], n_splits=2, n_random=30, seed=1, label="x")
    two = compression_curve(y, [5, 15, 60], n_splits=2, n_random=30, seed=1, label="x")
    pd.testing.assert_frame_equal(one, two)
    cell = one.set_index(["size", "selection", "scoring"])
    assert cell.loc[(5, "IRT-selected", "p-IRT"), "rmse"] < cell.loc[(5, "random", "mean"), "rmse"]
    # keeping every item, the random "subset" is the full benchmark: no error at all
    assert cell.loc[(60, "random", "mean"), "rmse"] == pytest.approx(0.0, abs=1e-15)
    assert one["n_test"].iloc[0] == 60 and one["n_train"].iloc[0] == 240


def test_curve_input_errors():
    y = _answers(n=40, j=20)
    with pytest.raises(InputError, match="between 1 and the number of items"):
        compression_curve(y, [30])
    with pytest.raises(InputError, match="test_size"):
        compression_curve(y, [5], test_size=1.5)
    with pytest.raises(InputError, match="at least 10 training"):
        compression_curve(y[:11], [5])


def _spec(tmp_path, extra: str = "") -> object:
    y = _answers(n=200, j=40, seed=2)
    frame = pd.DataFrame(y, index=[f"m{i}" for i in range(len(y))], columns=[f"i{j}" for j in range(y.shape[1])])
    frame.to_csv(tmp_path / "a.csv")
    spec = tmp_path / "c.toml"
    spec.write_text(f'name = "c"\nn_boot = 30\n[[sources]]\nname = "{EVIL}"\npath = "a.csv"\n'
                    f'[compression]\nsources = ["{EVIL}"]\nsizes = [5, 10]\nrandom = 10\nsplits = 2\n{extra}',
                    encoding="utf-8")
    return spec


def test_board_section_and_escaping(tmp_path):
    board = build_board(load_spec(_spec(tmp_path)))
    (section,) = board.sections
    assert [r[1] for r in section.rows] == ["5"] * 3 + ["10"] * 3 and section.figures
    assert [r[2] for r in section.rows[:3]] == ["IRT-selected", "anchor points", "random"]
    assert section.columns[3:7] == ("MAE, mean [range over splits]", "MAE, IRT", "MAE, p-IRT", "MAE, gp-IRT")
    assert "split-to-split variation" in section.note and "ARC 0.017" in section.note
    page = board_files(board)["index.html"].decode()
    assert EVIL not in page and "&lt;script&gt;" in page


def test_spec_validation(tmp_path):
    with pytest.raises(InputError, match="sizes"):
        _bad(tmp_path, "sizes = [0]")
    with pytest.raises(InputError, match="test_size"):
        _bad(tmp_path, "test_size = 1.0")
    with pytest.raises(InputError, match="splits"):
        _bad(tmp_path, "splits = 0")
    with pytest.raises(InputError, match="unknown source"):
        p = _spec(tmp_path)
        p.write_text(p.read_text().replace(f'sources = ["{EVIL}"]', 'sources = ["nope"]'))
        load_spec(p)


def _bad(tmp_path, line: str):
    p = _spec(tmp_path)
    text = p.read_text()
    key = line.split("=")[0].strip()
    text = "\n".join(ln for ln in text.splitlines() if not ln.startswith(key + " ")) + f"\n{line}\n"
    p.write_text(text)
    return load_spec(p)


def test_pirt_scores_both_selections_the_same_way():
    """Issue 29 item 2: every selection scored every way on the same fit; constant items still scored."""
    rng = np.random.default_rng(3)
    theta = rng.normal(size=300)
    a, b = rng.uniform(0.8, 2.5, 60), rng.normal(size=60)
    y = (rng.random((300, 60)) < 1 / (1 + np.exp(-a * (theta[:, None] - b)))).astype(float)
    y[:, 0] = 1.0  # an item every system gets right: the fit leaves it out, p-IRT still scores it
    out = compression_curve(y, [10, 30, 60], n_splits=2, n_random=20).set_index(["size", "selection", "scoring"])
    assert np.isfinite(out[["mae", "rmse"]].to_numpy()).all()
    # with every item kept p-IRT is the observed accuracy: no error at all (the IRT selection keeps the 59
    # fitted items; the constant one is scored at its training proportion, clipped to 0.999: 0.001 / 60)
    assert out.loc[(60, "IRT-selected", "p-IRT"), "rmse"] == pytest.approx(0.001 / 60, abs=1e-9)
    assert out.loc[(60, "random", "p-IRT"), "rmse"] == pytest.approx(0.0, abs=1e-9)


def test_identical_held_out_systems_are_counted():
    import numpy as np

    from scorebench.leaderboard.compression import identical_to_training

    train = np.array([[1, 0, 1, 1], [0, 0, 1, 0]], dtype=float)
    test = np.array([[1, 0, 1, 1], [0, 0, 1, 0], [1, 1, 1, 1]], dtype=float)
    assert identical_to_training(train, test) == 2
    assert identical_to_training(train, test[2:]) == 0
