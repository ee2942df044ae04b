"""Small-sample inference: Beta posteriors, paired differences, rank intervals, evaluate's CLT flag."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import scorebench
from scorebench.core.errors import InputError
from scorebench.analysis.small_sample import beta_posterior, paired_posterior, rank_intervals
from scorebench.analysis.stats_tests import jeffreys_interval


def test_beta_posterior_closed_form_and_jeffreys():
    post = beta_posterior(7, 20, ci=0.9)
    assert post.mean == pytest.approx(8 / 22)
    assert (post.low, post.high) == pytest.approx(tuple(stats.beta(8, 14).ppf([0.05, 0.95])))
    for k in (1, 5, 19):
        assert beta_posterior(k, 20, prior=(0.5, 0.5))[1:] == pytest.approx(jeffreys_interval(k, 20, 0.95))
    assert beta_posterior(0, 20).low == 0.0 and beta_posterior(20, 20).high == 1.0
    with pytest.raises(InputError):
        beta_posterior(21, 20)
    with pytest.raises(InputError):
        beta_posterior(3, 20, prior=(0, 1))


def _exact_coverage(interval, n, ps):
    """Coverage of an interval rule for a binomial proportion, exactly (sum over k), averaged over ps."""
    ks = np.arange(n + 1)
    bounds = np.array([interval(k, n) for k in ks])
    return float(np.mean([stats.binom.pmf(ks, n, p)[(bounds[:, 0] <= p) & (p <= bounds[:, 1])].sum() for p in ps]))


@pytest.mark.parametrize("n", [20, 50, 100])
def test_beta_posterior_covers_where_the_clt_interval_does_not(n):
    """Exact binomial coverage averaged over accuracies in [0.5, 0.99] (LLM accuracies near
    the top): the CLT (Wald) interval falls short, the uniform-prior posterior does not."""
    ps = np.linspace(0.5, 0.99, 50)
    z = stats.norm.ppf(0.975)

    def wald(k, n):
        p = k / n
        half = z * np.sqrt(p * (1 - p) / n)
        return p - half, p + half

    bayes = _exact_coverage(lambda k, n: beta_posterior(k, n)[1:], n, ps)
    clt = _exact_coverage(wald, n, ps)
    assert bayes >= 0.94 and clt < 0.93, (bayes, clt)


def test_paired_posterior_probability_is_exact_and_interval_covers():
    a = np.array([1, 1, 1, 0, 1, 1, 0, 1])
    b = np.array([1, 0, 0, 0, 1, 1, 0, 0])
    post = paired_posterior(a, b, n_draws=200_000, seed=1)
    # cells: 3 both right, 3 only A, 0 only B, 2 both wrong; posterior Dirichlet(4, 4, 1, 3)
    assert post.prob_a_better == pytest.approx(1 - stats.beta.cdf(0.5, 4, 1))
    assert post.mean == pytest.approx((4 - 1) / 12)
    draws = np.random.default_rng(0).dirichlet([4, 4, 1, 3], 200_000)
    assert np.mean(draws[:, 1] > draws[:, 2]) == pytest.approx(post.prob_a_better, abs=0.003)
    assert (post.low, post.high) == pytest.approx(tuple(np.quantile(draws[:, 1] - draws[:, 2], [0.025, 0.975])),
                                                  abs=0.01)
    # coverage of the difference at n = 40 paired items (correlated systems)
    rng = np.random.default_rng(5)
    cells = np.array([0.55, 0.15, 0.05, 0.25])  # both right, only A, only B, both wrong
    truth = cells[1] - cells[2]
    hits = 0
    for _ in range(300):
        draw = rng.choice(4, size=40, p=cells)
        a_, b_ = np.isin(draw, [0, 1]).astype(int), np.isin(draw, [0, 2]).astype(int)
        post = paired_posterior(a_, b_, n_draws=4000, seed=int(rng.integers(1 << 30)))
        hits += post.low <= truth <= post.high
    assert hits / 300 >= 0.94, hits / 300
    with pytest.raises(InputError, match="same items"):
        paired_posterior([1, 0], [1, 0, 1])


def test_rank_intervals_separate_clear_winners_and_overlap_close_ones():
    t = rank_intervals({"a": [1] * 95 + [0] * 5, "b": [1] * 50 + [0] * 50, "c": [1] * 94 + [0] * 6}, seed=3)
    assert t["system"].tolist() == ["a", "c", "b"]
    row = t.set_index("system")
    assert (row.loc["b", "rank_low"], row.loc["b", "rank_high"]) == (3, 3)
    assert row.loc["a", "rank_low"] == 1 and row.loc["a", "rank_high"] == 2
    assert t["prob_best"].sum() == pytest.approx(1.0)
    frame = pd.DataFrame({"system": np.repeat(["x", "y"], 10), "correct": [1] * 10 + [0] * 10})
    assert rank_intervals(frame, seed=0)["system"].tolist() == ["x", "y"]
    assert rank_intervals(frame, seed=0).equals(rank_intervals(frame, seed=0))
    with pytest.raises(InputError):
        rank_intervals({"a": [1, 2]})


def test_evaluate_flags_clt_intervals_of_small_or_extreme_proportions():
    small = pd.DataFrame({"system": ["a"] * 30, "correct": [1] * 29 + [0]})
    flagged = scorebench.evaluate(small, "accuracy", n_boot=100, proportion_interval="bootstrap")
    assert "accuracy" in flagged.attrs["small_sample"] and "wilson" in flagged.attrs["small_sample"]["accuracy"]
    assert "small_sample" not in scorebench.evaluate(small, "accuracy", n_boot=100).attrs  # Wilson: not flagged
    big = pd.DataFrame({"system": ["a"] * 400, "correct": np.random.default_rng(0).integers(0, 2, 400)})
    assert "small_sample" not in scorebench.evaluate(big, "accuracy", n_boot=100, proportion_interval="bootstrap").attrs


def test_cli_bayes_posteriors_pairs_and_errors(tmp_path):
    from click.testing import CliRunner

    from scorebench.cli import cli

    rng = np.random.default_rng(0)
    path = tmp_path / "correct.csv"
    pd.DataFrame({"system": np.repeat(["a", "b"], 30), "id": np.tile(range(30), 2),
                  "correct": (rng.random(60) < np.repeat([0.9, 0.5], 30)).astype(int)}).to_csv(path, index=False)
    result = CliRunner().invoke(cli, ["bayes", str(path)])
    assert result.exit_code == 0, result.output
    assert "rank_low" in result.output and "prob_best" in result.output
    result = CliRunner().invoke(cli, ["bayes", str(path), "--paired"])
    assert result.exit_code == 0 and "prob_a_better" in result.output
    pd.DataFrame({"system": ["a"], "correct": [2]}).to_csv(path, index=False)
    result = CliRunner().invoke(cli, ["bayes", str(path)])
    assert result.exit_code != 0 and "expected 0 or 1" in result.output
