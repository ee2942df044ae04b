"""RBO (Webber, Moffat & Zobel 2010) and Kendall's tau between runs: the ``rbo`` package's
``rbo_ext`` values (transcribed: rbo 0.1.3 pins numpy<2, so it is not a test dependency),
closed forms, bounds, scipy for tau, the CLI and errors."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy.stats import kendalltau

from scorebench.cli import cli
from scorebench.core.errors import InputError
from scorebench.metrics.ranking.similarity import compare_runs, rbo

# rbo 0.1.3: RankingSimilarity(a, b).rbo_ext(p=p), printed with repr()
_RBO_PACKAGE = [
    ("abcdefg", "zcavwxy", 0.9, 0.28821728571428573),
    ("abcde", "bacdexyz", 0.8, 0.7999999999999999),
    ("abcdefghij", "jihgfedcba", 0.95, 0.7198213852346228),
    ("abc", "xyz", 0.5, 0.0),
    ("abcdefgh", "acbdfe", 0.7, 0.8805939999999999),
]


@pytest.mark.parametrize("a,b,p,expected", _RBO_PACKAGE)
def test_rbo_ext_matches_the_rbo_package(a, b, p, expected):
    assert rbo(list(a), list(b), p=p) == pytest.approx(expected, rel=1e-12, abs=1e-15)
    assert rbo(list(b), list(a), p=p) == pytest.approx(expected, rel=1e-12, abs=1e-15)  # symmetric


def test_closed_forms_and_bounds():
    p = 0.9
    # identical lists of length k: RBO_min = (1-p)/p [sum_d (d - k) p^d / d - k ln(1-p)] (eq. 11), ext = max = 1
    k = 6
    d = np.arange(1, k + 1)
    rbo_min = (1 - p) / p * (((d - k) * p ** d / d).sum() - k * math.log(1 - p))
    items = list("abcdef")
    assert rbo(items, items, p=p, variant="min") == pytest.approx(rbo_min, rel=1e-12)
    assert rbo(items, items, p=p) == pytest.approx(1.0, rel=1e-12)
    assert rbo(items, items, p=p, variant="max") == pytest.approx(1.0, rel=1e-12)
    # disjoint lists of length k: min = 0, max = p^(2k) (agreement possible only past depth 2k) + ...
    assert rbo(list("abc"), list("xyz"), p=0.5, variant="min") == 0.0
    # depth-1 agreement only: top items equal, the rest disjoint and lists of length 1
    assert rbo(["a"], ["a"], p=p, variant="min") == pytest.approx((1 - p) / p * (-math.log(1 - p)), rel=1e-12)
    rng = np.random.default_rng(3)
    for _ in range(200):
        a = list(rng.choice(40, size=int(rng.integers(1, 25)), replace=False))
        b = list(rng.choice(40, size=int(rng.integers(1, 25)), replace=False))
        q = float(rng.uniform(0.05, 0.99))
        low, ext, high = (rbo(a, b, p=q, variant=v) for v in ("min", "ext", "max"))
        assert 0.0 <= low <= ext + 1e-12 and ext <= high + 1e-12 and high <= 1.0 + 1e-12
        assert rbo(a, b, p=q, variant="res") == pytest.approx(high - low, abs=1e-15)


def test_compare_runs_per_query():
    a = pd.DataFrame({"qid": ["1"] * 4 + ["2"], "docid": ["a", "b", "c", "d", "x"], "score": [4, 3, 2, 1, 1.0]})
    b = pd.DataFrame({"qid": ["1"] * 3 + ["3"], "docid": ["c", "a", "b", "y"], "score": [3, 2, 1, 1.0]})
    out = compare_runs(a, b, p=0.8)
    assert out["qid"].tolist() == ["1", "2", "3"]
    row = out.iloc[0]
    assert row["rbo_ext"] == pytest.approx(rbo(list("abcd"), list("cab"), p=0.8), rel=1e-12)
    assert row["kendall_tau"] == pytest.approx(kendalltau([4, 3, 2], [2, 1, 3]).statistic, rel=1e-12)
    assert row["n_common"] == 3
    assert out.iloc[1]["rbo_ext"] == 0.0 and out.iloc[1]["rbo_res"] == pytest.approx(1.0)  # query in one run only
    # trec_eval order: ties by document id descending
    tied = pd.DataFrame({"qid": "1", "docid": ["a", "b"], "score": [1.0, 1.0]})
    assert compare_runs(tied, pd.DataFrame({"qid": "1", "docid": ["b", "a"], "score": [2.0, 1.0]}),
                        p=0.5)["rbo_ext"].iloc[0] == pytest.approx(1.0)
    assert compare_runs(a, b, p=0.8, depth=1)["n_common"].tolist() == [0, 0, 0]


def test_errors():
    with pytest.raises(InputError, match="repeats item 'a'"):
        rbo(["a", "b", "a"], ["a"])
    with pytest.raises(InputError, match="persistence p"):
        rbo(["a"], ["a"], p=1.0)
    with pytest.raises(InputError, match="variant"):
        rbo(["a"], ["a"], variant="upper")
    with pytest.raises(InputError, match="sequence"):
        rbo("abc", ["a"])
    bad = pd.DataFrame({"qid": ["1", "1"], "docid": ["a", "a"], "score": [1.0, 2.0]})
    with pytest.raises(InputError, match="twice"):
        compare_runs(bad, bad)
    with pytest.raises(InputError, match="column"):
        compare_runs(bad.drop(columns="score"), bad)


def test_cli(tmp_path):
    ra, rb = tmp_path / "a.run", tmp_path / "b.run"
    ra.write_text("1 Q0 a 1 3.0 A\n1 Q0 b 2 2.0 A\n1 Q0 c 3 1.0 A\n")
    rb.write_text("1 Q0 b 1 3.0 B\n1 Q0 a 2 2.0 B\n1 Q0 c 3 1.0 B\n")
    out = tmp_path / "sim.csv"
    result = CliRunner().invoke(cli, ["rank-similarity", str(ra), str(rb), "--p", "0.5", "-o", str(out)])
    assert result.exit_code == 0, result.output
    table = pd.read_csv(out)
    assert table["rbo_ext"].iloc[0] == pytest.approx(rbo(list("abc"), list("bac"), p=0.5), rel=1e-12)
    result = CliRunner().invoke(cli, ["rank-similarity", str(ra), str(rb), "--p", "2"])
    assert result.exit_code != 0 and "persistence p" in result.output
