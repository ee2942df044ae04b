"""Generalizability theory: recovery of known components on simulated crossed designs, D-study SEs
against simulation, mean squares against statsmodels' ANOVA."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scorebench.core.errors import InputError
from scorebench.analysis.gtheory import g_study, variance_components

TRUE = {"id": 0.04, "seed": 0.002, "prompt": 0.006, "id × seed": 0.01, "id × prompt": 0.02,
        "seed × prompt": 0.001, "id × seed × prompt": 0.03}
AXES = {"id": 0, "seed": 1, "prompt": 2}


def _simulate(rng, sizes, comps=TRUE):
    """A crossed items x seeds x prompts cube with the given variance components."""
    shape = tuple(sizes)
    x = np.full(shape, 0.6)
    for effect, var in comps.items():
        axes = [AXES[f] for f in effect.split(" × ")]
        sub = tuple(shape[a] if a in axes else 1 for a in range(3))
        x = x + rng.normal(0, np.sqrt(var), sub)
    return x


def _frame(cube):
    i, s, p = np.indices(cube.shape)
    return pd.DataFrame({"id": i.ravel(), "seed": s.ravel(), "prompt": p.ravel(), "score": cube.ravel()})


def test_recovers_known_components_on_average():
    rng = np.random.default_rng(0)
    estimates = []
    for _ in range(40):
        g = g_study(_frame(_simulate(rng, (60, 4, 5))), ["id", "seed", "prompt"], "score")
        estimates.append(g.components.set_index("effect")["variance_raw"])
    mean = pd.concat(estimates, axis=1).mean(axis=1)
    for effect, var in TRUE.items():  # the ANOVA estimators are unbiased
        se = pd.concat(estimates, axis=1).loc[effect].std() / np.sqrt(40)
        assert abs(mean[effect] - var) < 4 * se + 1e-4, (effect, mean[effect], var)


def test_satterthwaite_intervals_cover():
    rng = np.random.default_rng(1)
    hits, reps = 0, 150
    for _ in range(reps):
        comps = variance_components(_simulate(rng, (40, 3, 3)))
        row = comps[comps["effect"] == (0,)].iloc[0]
        hits += row["ci_low"] <= TRUE["id"] <= row["ci_high"]
    assert hits / reps > 0.88  # nominal 0.95; Satterthwaite is approximate


def test_mean_squares_match_statsmodels_two_way_anova():
    import statsmodels.formula.api as smf
    from statsmodels.stats.anova import anova_lm

    rng = np.random.default_rng(2)
    cube = rng.normal(0, 1, (12, 1)) + rng.normal(0, 0.5, (1, 5)) + rng.normal(0, 0.7, (12, 5))
    comps = variance_components(cube)
    ours = dict(zip(comps["effect"], comps["ms"]))
    i, p = np.indices(cube.shape)
    frame = pd.DataFrame({"i": i.ravel(), "p": p.ravel(), "y": cube.ravel()})
    table = anova_lm(smf.ols("y ~ C(i) + C(p)", frame).fit())
    np.testing.assert_allclose(ours[(0,)], table.loc["C(i)", "mean_sq"], rtol=1e-10)
    np.testing.assert_allclose(ours[(1,)], table.loc["C(p)", "mean_sq"], rtol=1e-10)
    np.testing.assert_allclose(ours[(0, 1)], table.loc["Residual", "mean_sq"], rtol=1e-10)


def test_projected_standard_errors_match_simulation():
    """The D-study SE for other numbers of items/seeds/prompts equals the spread of simulated means."""
    rng = np.random.default_rng(3)
    g = g_study(_frame(_simulate(rng, (80, 4, 5))), ["id", "seed", "prompt"], "score")
    truth = g_study(_frame(_simulate(rng, (80, 4, 5))), ["id", "seed", "prompt"], "score")
    truth.components["variance"] = [TRUE[e] for e in truth.components["effect"]]
    for sizes in ((30, 1, 1), (30, 2, 6), (100, 1, 3)):
        means = np.array([_simulate(rng, sizes).mean() for _ in range(600)])
        projected = truth.project(id=sizes[0], seed=sizes[1], prompt=sizes[2])["se"].item()
        assert abs(means.std(ddof=1) / projected - 1) < 0.12, (sizes, means.std(ddof=1), projected)
        estimated = g.project(id=sizes[0], seed=sizes[1], prompt=sizes[2])["se"].item()
        assert abs(estimated / projected - 1) < 0.5, (sizes, estimated, projected)
    naive = truth.project()  # an SE over items alone misses the shared prompt and seed variance
    assert (naive["se_items_only"] < naive["se"]).all()


def test_per_system_and_errors():
    rng = np.random.default_rng(4)
    frames = [_frame(_simulate(rng, (10, 2, 3))).assign(system=s) for s in ("a", "b")]
    g = g_study(pd.concat(frames), ["id", "seed", "prompt"], "score")
    assert g.components["system"].unique().tolist() == ["a", "b"]
    assert len(g.project(prompt=[1, 2])) == 4
    t = frames[0]
    with pytest.raises(InputError, match="not fully crossed"):
        g_study(t.iloc[1:], ["id", "seed", "prompt"], "score")
    with pytest.raises(InputError, match="same cell"):
        g_study(pd.concat([t, t.iloc[:1]]), ["id", "seed", "prompt"], "score")
    with pytest.raises(InputError, match="not found"):
        g_study(t, ["id", "judge"], "score")
    with pytest.raises(InputError, match="unknown facet"):
        g.project(judge=3)


def test_cli(tmp_path):
    from click.testing import CliRunner

    from scorebench.cli import cli

    path = tmp_path / "g.csv"
    _frame(_simulate(np.random.default_rng(5), (20, 2, 3))).to_csv(path, index=False)
    runner = CliRunner()
    comps = runner.invoke(cli, ["gstudy", str(path), "--facet", "id", "--facet", "seed", "--facet", "prompt",
                                "--score", "score", "-o", str(tmp_path / "c.csv")])
    assert comps.exit_code == 0, comps.output
    assert len(pd.read_csv(tmp_path / "c.csv", comment="#")) == 7
    proj = runner.invoke(cli, ["gstudy", str(path), "--facet", "id", "--facet", "seed", "--facet", "prompt",
                               "--score", "score", "--project", "prompt=1,3,9", "-o", str(tmp_path / "p.csv")])
    assert proj.exit_code == 0, proj.output
    se = pd.read_csv(tmp_path / "p.csv", comment="#")["se"].to_numpy()
    assert len(se) == 3 and se[0] > se[1] > se[2]
    bad = runner.invoke(cli, ["gstudy", str(path), "--facet", "id", "--score", "score", "--project", "prompt=x"])
    assert bad.exit_code == 2
