"""Scoring new systems against saved polytomous item tables (API and ``scorebench irt score``),
the errors of the polytomous paths that are not supported, and fit_mirt's message for 0..K data."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from scorebench.cli import cli
from scorebench.core.errors import InputError
from scorebench.irt import fit, fit_mirt, score
from scorebench.irt.polymodels import simulate


def _scores(kind: str, n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.8, 2.0, 6) if kind != "pcm" else np.full(6, 1.3)
    d = np.sort(rng.normal(size=(6, 3)), axis=1)[:, ::-1] if kind == "graded" else rng.normal(size=(6, 3))
    y = simulate(kind, a, d, rng.normal(size=n), rng)
    return pd.DataFrame(y, columns=[f"q{j}" for j in range(6)], index=pd.Index([f"s{i}" for i in range(n)]))


@pytest.mark.parametrize("kind,model", [("graded", "grm"), ("gpcm", "gpcm"), ("pcm", "pcm")])
def test_saved_items_score_like_the_fit(kind, model):
    train, new = _scores(kind, 600, 0), _scores(kind, 40, 1)
    result = fit(train, model, warn=False)
    expected = result.score(new)
    got = score(new, result.items, sigma=result.latent_sd)
    np.testing.assert_allclose(got["theta"], expected["theta"], rtol=0, atol=2e-4)
    np.testing.assert_allclose(got["se"], expected["se"], rtol=0, atol=2e-4)
    assert got["n"].tolist() == expected["n"].tolist()
    subset = score(new[["q0", "q3"]], result.items.reset_index(), sigma=result.latent_sd)  # 'item' column
    assert (subset["n"] == 2).all()


def test_eap_by_hand_on_one_graded_item():
    items = pd.DataFrame({"model": ["graded"], "n_cat": [3], "a": [1.2], "d1": [0.7], "d2": [-0.9]}, index=["q"])
    got = score(pd.DataFrame({"q": [2.0]}), items)["theta"].iloc[0]
    grid = np.linspace(-6, 6, 20001)
    like = 1 / (1 + np.exp(-(1.2 * grid - 0.9)))  # P(X >= 2)
    w = like * np.exp(-grid**2 / 2)
    assert got == pytest.approx((grid * w).sum() / w.sum(), abs=1e-6)


def test_cli_scores_a_polytomous_items_file(tmp_path):
    train, new = _scores("graded", 400, 2), _scores("graded", 10, 3)
    train_path, new_path = tmp_path / "train.csv", tmp_path / "new.csv"
    train.rename_axis("system").reset_index().to_csv(train_path, index=False)
    new.rename_axis("system").reset_index().to_csv(new_path, index=False)
    items_path, scored = tmp_path / "items.csv", tmp_path / "scored.csv"
    runner = CliRunner()
    out = runner.invoke(cli, ["irt", "fit", str(train_path), "--model", "grm", "-o", str(items_path)])
    assert out.exit_code == 0, out.output
    out = runner.invoke(cli, ["irt", "score", str(items_path), str(new_path), "-o", str(scored)])
    assert out.exit_code == 0, out.output
    api = score(new, fit(train, "grm", warn=False).items)
    table = pd.read_csv(scored, comment="#").set_index("system")
    np.testing.assert_allclose(table.loc[api.index, "theta"], api["theta"], atol=1e-3)
    bad = runner.invoke(cli, ["irt", "score", str(items_path), str(new_path), "--scoring", "map"])
    assert bad.exit_code != 0 and "eap" in bad.output


def test_errors_name_what_is_supported():
    train = _scores("graded", 600, 0)
    items = fit(train, "grm", warn=False).items
    with pytest.raises(InputError, match="'eap' scoring only"):
        score(train, items, method="ml")
    with pytest.raises(InputError, match="no parameters"):
        score(train.rename(columns={"q0": "zz"}), items)
    with pytest.raises(InputError, match="scores 0..3"):
        score(train.replace(3.0, 5.0), items)
    with pytest.raises(InputError, match="sigma"):
        score(train, items, sigma=0.0)
    with pytest.raises(InputError, match="intercepts"):
        score(train, items.assign(d2=np.nan))
    with pytest.raises(InputError, match="model"):
        score(train, items.assign(model="nominal"))
    with pytest.raises(InputError, match="NumPy path only.*dichotomous"):
        fit(train, "grm", device="cpu", warn=False)
    with pytest.raises(InputError, match="anchors"):
        fit(train, "gpcm", anchors=items, warn=False)
    with pytest.raises(InputError, match="model='grm'"):
        fit_mirt(train, 2)
