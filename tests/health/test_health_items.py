"""Item health report on a simulated 2PL suite with planted broken items (known answers)."""

import numpy as np
import pandas as pd
import pytest

from scorebench.core.errors import InputError
from scorebench.health import FLAGS, health_summary, item_health


@pytest.fixture(scope="module")
def planted():
    rng = np.random.default_rng(7)
    n, j = 900, 16
    theta = rng.normal(size=n)
    a = rng.uniform(1.0, 2.0, j)
    b = np.linspace(-1.2, 1.2, j)
    y = (rng.random((n, j)) < 1 / (1 + np.exp(-a * (theta[:, None] - b)))).astype(float)
    y[:, 2] = 1 - y[:, 2]                                   # miskeyed: the answers flipped
    y[:, 5] = 1.0                                           # everyone right
    y[:, 6] = 0.0                                           # everyone wrong
    y[:, 8] = (rng.random(n) < 0.5).astype(float)           # a coin: no discrimination
    y[:, 10] = (np.abs(theta) < 0.6).astype(float)          # non-monotone: the 2PL cannot fit it
    y[:, 12] = y[:, 4]                                      # a duplicate of item 4
    frame = pd.DataFrame(y, index=[f"s{i}" for i in range(n)], columns=[f"q{k}" for k in range(j)])
    return frame, item_health(frame)


def test_planted_items_are_found(planted):
    _, r = planted
    assert r.loc["q5", "saturated"] and r.loc["q6", "saturated"]
    assert r.loc["q2", "negative_discrimination"] and r.loc["q2", "likely_mislabelled"]
    assert r.loc["q2", "a"] < 0 and r.loc["q2", "gap"] < -0.3 and r.loc["q2", "mislabel_q"] < 1e-6
    assert r.loc["q8", "low_discrimination"] or r.loc["q8", "negative_discrimination"]
    assert abs(r.loc["q8", "r_rest"]) < 0.1
    assert r.loc["q10", "misfit"] and r.loc["q10", "sx2_q"] < 1e-6 and r.loc["q10", "sx2_rmsea"] > 0.05
    assert r.loc["q12", "duplicate"] and r.loc["q12", "duplicate_of"] == "q4"
    assert r.loc["q12", "log10_p_identical"] < -10             # agreement on 900 systems is no accident
    assert not r.loc["q4", "duplicate"]


def test_clean_items_are_mostly_clean(planted):
    _, r = planted
    clean = r.drop(index=["q2", "q5", "q6", "q8", "q10", "q12", "q4"])
    assert clean["issues"].eq("").mean() >= 0.8
    assert not clean["likely_mislabelled"].any() and not clean["saturated"].any()


def test_evidence_matches_definitions(planted):
    frame, r = planted
    y = frame.to_numpy()
    rest = y.sum(axis=1) - y[:, 0]
    assert r.loc["q0", "r_rest"] == pytest.approx(np.corrcoef(y[:, 0], rest)[0, 1])
    assert r.loc["q0", "p_correct"] == pytest.approx(y[:, 0].mean())
    k = r.attrs["group_size"]
    order = np.argsort(-y.mean(axis=1), kind="stable")
    assert r.loc["q0", "acc_strong"] == pytest.approx(y[order[:k], 0].mean())
    assert r.loc["q0", "acc_weak"] == pytest.approx(y[order[-k:], 0].mean())
    assert (r["sx2_q"].dropna() >= r["sx2_p"].dropna() - 1e-12).all()   # BH never lowers a p-value
    assert list(r["issues"][r["saturated"]]) == ["saturated", "saturated"]


def test_summary_counts(planted):
    _, r = planted
    s = health_summary(r).set_index("flag")
    assert list(s.index) == [*FLAGS, "any"]
    assert s.loc["saturated", "items"] == 2 and s.loc["duplicate", "items"] == 1
    assert s.loc["any", "items"] == int(r[list(FLAGS)].any(axis=1).sum())


def test_few_systems_skip_duplicates_and_large_benchmarks_skip_sx2():
    rng = np.random.default_rng(0)
    y = (rng.random((30, 8)) < 0.5).astype(float)
    y[:, 3] = y[:, 1]
    r = item_health(y, sx2_max_items=5)
    assert not r["duplicate"].any() and r["sx2"].isna().all()
    assert r.attrs["duplicates_checked"] is False and r.attrs["sx2"] is False


@pytest.mark.parametrize("data, kwargs, match", [
    (np.array([[1.0, 0.0, np.nan], [0.0, 1.0, 1.0]]), {}, "complete answers"),
    (np.array([[1.0, 0.0], [0.0, 1.0]]), {}, "at least 3 items"),
    (np.ones((5, 4)), {"alpha": 0}, "alpha"),
    (np.ones((5, 4)), {"mislabel_gap": 2}, "mislabel_gap"),
    (np.ones((5, 4)), {"group_share": 0.7}, "group_share"),
    (pd.DataFrame([[1, 0, 1], [0, 1, 1]], columns=["a", "a", "b"]), {}, "duplicate item labels"),
])
def test_bad_input(data, kwargs, match):
    with pytest.raises(InputError, match=match):
        item_health(data, **kwargs)


def test_cli_health(tmp_path, planted):
    from click.testing import CliRunner

    from scorebench.cli import cli

    frame, report = planted
    path = tmp_path / "answers.csv"
    frame.T.to_csv(path)                                    # items x systems, as ChemBench ships it
    out = tmp_path / "health.csv"
    res = CliRunner().invoke(cli, ["health", str(path), "--transpose", "--flagged-only", "-o", str(out)])
    assert res.exit_code == 0, res.output
    table = pd.read_csv(out).set_index("item")
    assert set(table.index) == set(report.index[report["issues"] != ""])
    assert table.loc["q12", "duplicate_of"] == "q4"
    long = frame.stack().rename("correct").rename_axis(["system", "item"]).reset_index()
    long_path = tmp_path / "long.csv"
    long.to_csv(long_path, index=False)
    res = CliRunner().invoke(cli, ["health", str(long_path), "-o", str(tmp_path / "h2.csv")])
    assert res.exit_code == 0, res.output
    bad = CliRunner().invoke(cli, ["health", str(path), "--transpose", "--a-prior", "1"])
    assert bad.exit_code == 2 and "--a-prior" in bad.output


def test_cli_signal(tmp_path):
    from click.testing import CliRunner

    from scorebench.cli import cli

    rows = [{"system": s, "step": t, "value": 0.4 + 0.1 * s + 0.01 * np.sin(t)} for s in range(3) for t in range(8)]
    path = tmp_path / "s.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    out = tmp_path / "o.csv"
    res = CliRunner().invoke(cli, ["signal", str(path), "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert {"signal", "noise", "snr", "monotonicity"} <= set(pd.read_csv(out).columns)
    bad = CliRunner().invoke(cli, ["signal", str(path), "--task", "nope"])
    assert bad.exit_code == 2 and "missing column" in bad.output


def test_cli_health_rejects_text_answers(tmp_path):
    from click.testing import CliRunner

    from scorebench.cli import cli

    path = tmp_path / "bad.csv"
    pd.DataFrame({"system": ["a", "b", "c"], "q1": [1, 0, 1], "q2": [0, "yes", 1], "q3": [1, 1, 0]}).to_csv(
        path, index=False)
    res = CliRunner().invoke(cli, ["health", str(path)])
    assert res.exit_code == 2 and "'yes'" in res.output and "Traceback" not in res.output
