"""``scorebench irt fit|score|select`` end to end on small files."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from scorebench.cli import cli
from scorebench.io.tables import read_table


@pytest.fixture()
def wide(tmp_path):
    rng = np.random.default_rng(0)
    theta = rng.normal(size=300)
    a, b = rng.uniform(0.5, 2, 25), rng.normal(size=25)
    y = (rng.random((300, 25)) < 1 / (1 + np.exp(-a * (theta[:, None] - b)))).astype(int)
    frame = pd.DataFrame(y, columns=[f"q{j}" for j in range(25)])
    frame.insert(0, "model", [f"m{i}" for i in range(300)])
    path = tmp_path / "wide.csv"
    frame.to_csv(path, index=False)
    return path


def test_fit_then_score_round_trip(wide, tmp_path):
    runner = CliRunner()
    items, abilities = tmp_path / "items.csv", tmp_path / "abilities.parquet"
    out = runner.invoke(cli, ["irt", "fit", str(wide), "-o", str(items), "--abilities-out", str(abilities)])
    assert out.exit_code == 0, out.output
    table = read_table(items)
    assert list(table.columns[:3]) == ["item", "a", "b"] and len(table) == 25
    fitted = read_table(abilities)
    scored = tmp_path / "scored.csv"
    out = runner.invoke(cli, ["irt", "score", str(items), str(wide), "-o", str(scored)])
    assert out.exit_code == 0, out.output
    again = read_table(scored)
    np.testing.assert_allclose(again["theta"], fitted["theta"], atol=1e-4)
    assert list(again["system"][:2]) == ["m0", "m1"]


def test_long_input_prior_and_select(wide, tmp_path):
    frame = pd.read_csv(wide).set_index("model")
    long = frame.stack().rename("correct").reset_index()
    long.columns = ["system", "item", "correct"]
    path = tmp_path / "long.csv"
    long.to_csv(path, index=False)
    runner = CliRunner()
    out = runner.invoke(cli, ["irt", "fit", str(path), "--model", "1pl", "--prior", "d=0,5"])
    assert out.exit_code == 0, out.output
    assert "converged: True" in out.output
    out = runner.invoke(cli, ["irt", "select", str(wide), "--sizes", "5,10", "--cv", "2", "-o",
                              str(tmp_path / "sel.csv")])
    assert out.exit_code == 0, out.output
    assert len(read_table(tmp_path / "sel.csv")) in (5, 10)


def test_bad_input_is_one_line(tmp_path):
    path = tmp_path / "bad.csv"
    pd.DataFrame({"system": ["a", "b"], "item": ["q", "q"], "correct": [1, 3]}).to_csv(path, index=False)
    out = CliRunner().invoke(cli, ["irt", "fit", str(path)])
    assert out.exit_code == 2
    assert "expected answers scored 0" in out.output
    out = CliRunner().invoke(cli, ["irt", "fit", str(path), "--prior", "a=1"])
    assert out.exit_code == 2 and "--prior" in out.output
