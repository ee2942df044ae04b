"""Repeated-sampling metrics (attempts kind): closed forms, scorio, brute force, coverage, CLI."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import scorebench
from scorebench.core.errors import InputError
from scorebench.metrics.sampling import (avg_at_n, bayes_at_n, bayes_at_n_posterior, g_pass_at_k_tau, majority_at_k,
                                         mg_pass_at_k, pass_at_k, pass_at_k_curve, pass_hat_k)
from scorebench.core.stats import two_level_draws


def _outcomes(n: int, c: int, width: int | None = None) -> np.ndarray:
    row = np.full(width or n, np.nan)
    row[:n] = 0.0
    row[:c] = 1.0
    return row


def _matrix(pairs, width=None):
    width = width or max(n for n, _ in pairs)
    return np.vstack([_outcomes(n, c, width) for n, c in pairs])


@pytest.mark.parametrize("n", [1, 5, 16, 64, 200])
def test_pass_at_k_and_pass_hat_k_equal_their_exact_binomial_closed_forms(n):
    pairs = [(n, c) for c in range(n + 1)]
    out = _matrix(pairs)
    for k in sorted(k for k in {1, 2, n // 2 or 1, n} if k <= n):
        exact = [1 - Fraction(math.comb(n - c, k), math.comb(n, k)) for _, c in pairs]
        np.testing.assert_allclose(pass_at_k(out, k=k), [float(f) for f in exact], rtol=1e-12, atol=1e-15)
        hat = [Fraction(math.comb(c, k), math.comb(n, k)) for _, c in pairs]
        np.testing.assert_allclose(pass_hat_k(out, k=k), [float(f) for f in hat], rtol=1e-11, atol=1e-15)


def test_items_with_different_attempt_counts_are_each_estimated_from_their_own_n():
    out = _matrix([(4, 1), (8, 3), (6, 0)], width=8)
    expected = [1 - math.comb(3, 2) / math.comb(4, 2), 1 - math.comb(5, 2) / math.comb(8, 2), 0.0]
    np.testing.assert_allclose(pass_at_k(out, k=2), expected, rtol=1e-12)
    np.testing.assert_allclose(avg_at_n(out), [0.25, 3 / 8, 0.0])


def test_g_pass_and_mg_pass_against_the_hypergeometric_sums():
    n, k = 10, 4
    out = _matrix([(n, c) for c in range(n + 1)])
    for tau in (0.0, 0.25, 0.5, 0.7, 1.0):
        j0 = max(1, math.ceil(tau * k - 1e-12))
        exact = [sum(Fraction(math.comb(c, j) * math.comb(n - c, k - j), math.comb(n, k)) for j in range(j0, k + 1))
                 for c in range(n + 1)]
        np.testing.assert_allclose(g_pass_at_k_tau(out, k=k, tau=tau), [float(f) for f in exact], atol=1e-12)
    np.testing.assert_allclose(g_pass_at_k_tau(out, k=k, tau=1.0), pass_hat_k(out, k=k), atol=1e-12)
    np.testing.assert_allclose(g_pass_at_k_tau(out, k=k, tau=0.0), pass_at_k(out, k=k), atol=1e-12)
    m = math.ceil(k / 2)
    exact = [sum(Fraction(2 * (j - m), k) * Fraction(math.comb(c, j) * math.comb(n - c, k - j), math.comb(n, k))
                 for j in range(m + 1, k + 1)) for c in range(n + 1)]
    np.testing.assert_allclose(mg_pass_at_k(out, k=k), [float(f) for f in exact], atol=1e-12)


def test_agrees_with_scorio_on_random_runs():
    ev = pytest.importorskip("scorio.eval")
    rng = np.random.default_rng(3)
    for M, N in [(7, 5), (30, 16), (12, 64)]:
        R = (rng.random((M, N)) < rng.beta(1, 1.5, (M, 1))).astype(int)
        for k in (1, 2, N // 2, N):
            assert pass_at_k(R, k=k).mean() == pytest.approx(ev.pass_at_k(R, k), abs=1e-12)
            assert pass_hat_k(R, k=k).mean() == pytest.approx(ev.pass_hat_k(R, k), abs=1e-12)
            assert mg_pass_at_k(R, k=k).mean() == pytest.approx(ev.mg_pass_at_k(R, k), abs=1e-12)
            for tau in (0.0, 0.3, 0.5, 0.75, 1.0):
                assert g_pass_at_k_tau(R, k=k, tau=tau).mean() == pytest.approx(ev.g_pass_at_k_tau(R, k, tau),
                                                                                 abs=1e-12)
            if k % 2:  # two answers (right/wrong) and odd k: no ties, so the vote is scorio's strict majority
                answers = R.copy()
                assert majority_at_k(answers, R, k=k).mean() == pytest.approx(ev.maj_at_k(R, k), abs=1e-12)
        mu, sigma = ev.bayes(R, np.array([0.0, 1.0]))
        assert bayes_at_n_posterior(R) == pytest.approx((mu, sigma), abs=1e-12)
        assert bayes_at_n(R).mean() == pytest.approx(mu, abs=1e-12)
        assert avg_at_n(R).mean() == pytest.approx(ev.avg(R)[0], abs=1e-12)


def test_majority_vote_equals_brute_force_over_all_subsets_with_even_tie_split():
    rng = np.random.default_rng(5)
    for _ in range(15):
        n = int(rng.integers(3, 8))
        answers = rng.integers(0, 4, n)
        right = int(rng.integers(0, 4))
        outcomes = (answers == right).astype(float)
        for k in range(1, n + 1):
            total = Fraction(0)
            for subset in itertools.combinations(range(n), k):
                votes = np.bincount(answers[list(subset)], minlength=4)
                top = np.flatnonzero(votes == votes.max())
                total += Fraction(int(right in top), len(top))
            expected = total / math.comb(n, k)
            got = majority_at_k(answers[None, :], outcomes[None, :], k=k)[0]
            assert got == pytest.approx(float(expected), abs=1e-12), (answers, right, k)


def test_pass_at_k_curve_has_every_k_and_is_increasing():
    R = (np.random.default_rng(0).random((10, 8)) < 0.3).astype(float)
    curve = pass_at_k_curve(R)
    assert curve[:, 0].tolist() == list(range(1, 9))
    assert (np.diff(curve[:, 1]) >= -1e-12).all()
    np.testing.assert_allclose(curve[3, 1], pass_at_k(R, k=4).mean())


def _run(rng, systems, items, attempts, a=0.7, b=1.3, answers=False):
    p = rng.beta(a, b, (systems, items))
    ok = rng.random((systems, items, attempts)) < p[..., None]
    frame = pd.DataFrame({"system": np.repeat(np.arange(systems), items * attempts).astype(str),
                          "item": np.tile(np.repeat(np.arange(items), attempts), systems),
                          "attempt": np.tile(np.arange(attempts), systems * items),
                          "correct": ok.ravel().astype(int)})
    if answers:
        frame["answer"] = np.where(frame["correct"] == 1, "right", rng.integers(0, 3, len(frame)).astype(str))
    return frame


def test_evaluate_reads_the_attempts_kind_and_pairs_items_across_systems():
    t = _run(np.random.default_rng(1), 2, 6, 4, answers=True)
    s = scorebench.evaluate(t, ["pass@2", "maj@3", "avg_at_n"], n_boot=50, seed=1)
    assert s["n"].tolist() == [6] * 6
    assert s.attrs["bootstrap"].count("two-level") == 3
    wide = t.pivot_table(index=["system", "item"], values="correct", aggfunc="mean").reset_index()
    assert s.loc[s["metric"] == "avg_at_n", "value"].to_numpy() == pytest.approx(
        wide.groupby("system")["correct"].mean().to_numpy())
    again = scorebench.evaluate(t.sample(frac=1.0, random_state=3), ["pass@2", "maj@3", "avg_at_n"], n_boot=50, seed=1)
    pd.testing.assert_frame_equal(s.sort_values(["system", "metric"]).reset_index(drop=True),
                                  again.sort_values(["system", "metric"]).reset_index(drop=True), rtol=1e-12)


@pytest.mark.parametrize("bad, message", [
    (lambda t: t.assign(correct=t["correct"] * 2), "correct"),
    (lambda t: pd.concat([t, t.iloc[:1]]), "attempt"),
    (lambda t: t.assign(answer="same"), "answer"),
])
def test_bad_attempt_tables_raise_one_clear_error(bad, message):
    t = _run(np.random.default_rng(2), 1, 3, 4, answers=True)
    with pytest.raises(InputError, match=message):
        scorebench.evaluate(bad(t), "pass@2", n_boot=0)


def test_k_larger_than_the_attempts_is_refused():
    t = _run(np.random.default_rng(2), 1, 3, 4)
    with pytest.raises(InputError, match="n >= k"):
        scorebench.evaluate(t, "pass@5", n_boot=0)
    with pytest.raises(InputError, match="needs input"):
        scorebench.evaluate(t, "maj@3", n_boot=0)


def test_two_level_draws_keep_padding_and_stay_within_each_item():
    sizes = np.array([1, 3, 5])
    for units, attempts in two_level_draws(sizes, 50, np.random.default_rng(0), width=5):
        n_i = sizes[units][..., None]
        pos = np.arange(5)
        assert ((attempts < n_i) | (attempts == pos)).all()
        assert (attempts[..., :][(pos < n_i)] < np.broadcast_to(n_i, attempts.shape)[(pos < n_i)]).all()


def test_two_level_interval_covers_where_the_naive_iid_interval_does_not():
    """200 simulated runs (30 items x 8 attempts, heterogeneous items): the naive Wilson interval
    over the 240 attempts as if independent misses the population pass@1 far more than 5%; the
    two-level bootstrap covers pass@1 and pass@4 at >= 0.94 (nominal 0.95)."""
    a, b, k = 0.7, 1.3, 4
    rng = np.random.default_rng(11)
    t = _run(rng, 200, 30, 8, a, b)
    s = scorebench.evaluate(t, ["pass@1", f"pass@{k}"], n_boot=300, seed=2)
    truth = {"pass@1": a / (a + b), f"pass@{k}": 1 - math.exp(math.lgamma(b + k) + math.lgamma(a + b)
                                                             - math.lgamma(b) - math.lgamma(a + b + k))}
    cover = {m: float(((g["ci_low"] <= truth[m]) & (truth[m] <= g["ci_high"])).mean()) for m, g in s.groupby("metric")}
    assert cover["pass@1"] >= 0.94 and cover[f"pass@{k}"] >= 0.94, cover
    from scorebench.analysis.stats_tests import proportion_interval

    counts = t.groupby("system")["correct"].agg(["sum", "size"])
    naive = np.array([proportion_interval(float(x), int(m), 0.95, "wilson") for x, m in counts.to_numpy()])
    naive_cover = float(((naive[:, 0] <= truth["pass@1"]) & (truth["pass@1"] <= naive[:, 1])).mean())
    assert naive_cover < 0.85, naive_cover


def test_cli_evaluates_an_attempts_table(tmp_path):
    from scorebench.cli import cli as main

    path = tmp_path / "attempts.csv"
    _run(np.random.default_rng(4), 2, 5, 4, answers=True).to_csv(path, index=False)
    result = CliRunner().invoke(main, ["evaluate", str(path), "-m", "pass@2", "-m", "maj@3", "-m", "bayes_at_n",
                                       "--seed", "0"])
    assert result.exit_code == 0, result.output
    assert "pass@2" in result.output and "bayes_at_n" in result.output
    bad = tmp_path / "bad.csv"
    pd.read_csv(path).assign(correct=3).to_csv(bad, index=False)
    result = CliRunner().invoke(main, ["evaluate", str(bad), "-m", "pass@2"])
    assert result.exit_code != 0 and "correct" in result.output


def test_board_sampling_section_matches_evaluate_and_draws_the_curves(tmp_path):
    from scorebench.leaderboard.build import build_board
    from scorebench.leaderboard.spec import load_spec

    table = _run(np.random.default_rng(6), 3, 8, 4)
    table["system"] = table["system"].replace({"2": "<b>x</b>"})
    table.to_csv(tmp_path / "attempts.csv", index=False)
    spec = tmp_path / "s.toml"
    spec.write_text('name = "s"\nn_boot = 40\n[[sources]]\nname = "a"\npath = "attempts.csv"\n'
                    '[sampling]\nsource = "a"\n', encoding="utf-8")
    (section,) = build_board(load_spec(spec)).sections
    assert section.columns == ("system", "items", "pass@1", "pass@2", "pass@4")
    expected = scorebench.evaluate(table, ["pass@1", "pass@2", "pass@4"], by="system", n_boot=40, seed=0)
    got = section.data.set_index(["system", "metric"])
    for row in expected.itertuples(index=False):
        assert got.loc[(row.system, row.metric), "value"] == pytest.approx(row.value, rel=1e-12)
        assert got.loc[(row.system, row.metric), "ci_high"] == pytest.approx(row.ci_high, rel=1e-12)
    (figure,) = section.figures
    assert figure.svg.startswith("<?xml") and "<script" not in figure.svg
    spec.write_text('name = "s"\n[[sources]]\nname = "a"\npath = "attempts.csv"\n[sampling]\nsource = "a"\nks = [0]\n',
                    encoding="utf-8")
    with pytest.raises(InputError, match="ks"):
        load_spec(spec)


def test_the_kind_declares_its_nested_arrays_and_the_engine_asks_it():
    from scorebench.core.tables import NestedUnits, get_kind

    spec = get_kind("attempts")
    assert spec.nested == NestedUnits(("outcomes", "answers"), "n_attempts")
    table = pd.DataFrame({"item": ["a", "a", "b", "b", "c", "c"], "correct": [1, 0, 1, 1, 0, 0]})
    inputs = spec.extract(table, nan_policy="raise")
    assert not any(k.startswith("_") for k in inputs.consts)  # no private keys for the engine to read
    assert spec.nested.present(inputs.arrays) == ["outcomes"]  # no answer column: no answers array
    scores = scorebench.evaluate(table, "pass@1", n_boot=50, seed=0)
    assert "two-level" in scores.attrs["bootstrap"]
