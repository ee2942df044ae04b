"""The [items] board block: Wilson accuracy, McNemar-Holm matrix and bands, IRT abilities, escaping."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from scorebench.core.errors import InputError
from scorebench.leaderboard.build import build_board
from scorebench.leaderboard.items_board import response_matrix_of
from scorebench.leaderboard.render import board_files
from scorebench.leaderboard.spec import load_spec

EVIL = "<script>alert(1)</script>"


def _spec(tmp_path, body: str = 'model = "rasch"\n', matrix: pd.DataFrame | None = None):
    if matrix is None:
        rng = np.random.default_rng(3)
        skill = {"strong": 0.85, "mid": 0.6, EVIL: 0.58, "weak": 0.2}
        matrix = pd.DataFrame({s: (rng.random(400) < p).astype(float) for s, p in skill.items()})
    matrix.to_csv(tmp_path / "answers.csv")
    spec = tmp_path / "items.toml"
    spec.write_text('name = "it"\nn_boot = 0\n[[sources]]\nname = "a"\npath = "answers.csv"\n'
                    f'[items]\nsource = "a"\n{body}', encoding="utf-8")
    return spec


def test_items_board_numbers(tmp_path):
    board = build_board(load_spec(_spec(tmp_path)))
    main, matrix, info = board.sections
    frame = pd.DataFrame(main.rows, columns=main.columns)
    assert frame["system"].tolist()[0] == "strong" and frame["system"].tolist()[-1] == "weak"
    data = main.data[main.data["metric"] == "accuracy"].set_index("system")
    answers = pd.read_csv(tmp_path / "answers.csv", index_col=0)
    for system, row in data.iterrows():
        k, n = answers[system].sum(), len(answers)
        assert row["value"] == pytest.approx(k / n, rel=1e-12)
        # Wilson interval: the roots of (p - k/n)^2 = z^2 p (1 - p) / n
        z = stats.norm.ppf(0.975)
        for bound in (row["ci_low"], row["ci_high"]):
            assert (bound - k / n) ** 2 == pytest.approx(z**2 * bound * (1 - bound) / n, rel=1e-9)
    # mid and EVIL differ by ~2 points on 400 items: same band; strong and weak differ from everyone
    bands = dict(zip(frame["system"], frame["band"].astype(int)))
    assert bands["mid"] == bands[EVIL] and len(set(bands.values())) == 3
    m = matrix.data.set_index(["system", "other"])["p_holm"]
    assert m[("strong", "weak")] < 1e-4 and m[("mid", EVIL)] > 0.05
    assert m[("mid", EVIL)] == m[(EVIL, "mid")]
    abilities = main.data[main.data["metric"] == "rasch ability"].set_index("system")["value"]
    assert abilities["strong"] > abilities["mid"] > abilities["weak"]
    assert info.figures and np.all(info.data["information"] >= 0)
    page = board_files(board)["index.html"].decode()
    assert page.count(EVIL) == 0 and "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_items_spec_and_input_validation(tmp_path):
    with pytest.raises(InputError, match="layout"):
        load_spec(_spec(tmp_path, 'layout = "sideways"\n'))
    with pytest.raises(InputError, match="a_prior"):
        load_spec(_spec(tmp_path, "a_prior = [1.0]\n"))
    with pytest.raises(InputError, match="model"):
        load_spec(_spec(tmp_path, 'model = "9pl"\n'))
    bad = pd.DataFrame({"a": [1.0, 0.5, 0.0], "b": [1.0, 1.0, 0.0]})
    with pytest.raises(InputError, match="0 or 1"):
        build_board(load_spec(_spec(tmp_path, matrix=bad)))
    missing = pd.DataFrame({"a": [1.0, np.nan, 0.0], "b": [1.0, 1.0, 0.0]})
    with pytest.raises(InputError, match="system 'a', item '1'"):
        build_board(load_spec(_spec(tmp_path, matrix=missing)))


def test_response_matrix_layouts():
    t = pd.DataFrame({"Unnamed: 0": ["i1", "i2", "i3"], "m1": [1, 0, 1], "m2": [0, 0, 1]})
    wide = response_matrix_of(t.copy(), "items_x_systems")
    assert wide.index.tolist() == ["m1", "m2"] and wide.columns.tolist() == ["i1", "i2", "i3"]
    t2 = pd.DataFrame({"system": ["m1", "m2"], "i1": [1, 0], "i2": [0, 1]})
    assert response_matrix_of(t2, "systems_x_items").loc["m2", "i2"] == 1.0
    with pytest.raises(InputError, match="at least 2"):
        response_matrix_of(pd.DataFrame({"system": ["m1"], "i1": [1]}), "systems_x_items")
