"""Real leaderboards: Vote'n'Rank's published rankings, Colombo et al. / Himmi et al. tables.

The expected numbers below are the outputs printed in Vote'n'Rank's own case-study notebook
(PragmaticsLab/vote_and_rank, "case studies/CS1 - Reranking Leaderboards.ipynb"), produced
with their conventions, which scorebench exposes as parameters:
Borda ``ties="min"`` (n - max rank), Dowdall ``ties="min"`` (1 / min rank), plurality
``ties="none"`` (a shared first place scores nothing), Minimax ``score="winning_votes"``.
Copeland (wins - losses) and the weighted mean need no option. Pair columns ("F1/acc")
are split into two half-weight columns and AX / AX-b / AX-g get weight 0, as Vote'n'Rank does.

For Colombo et al. (2022) and Himmi et al. (2023) we found no machine-readable published
scores for these exact tables, so those tests check self-consistency (every method runs or
refuses clearly, malformed files are rejected, missing-data completion behaves).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from scorebench.aggregate import aggregate, all_methods, as_matrix, possible_winners
from scorebench.core.errors import InputError, ScorebenchError
from scorebench.io.tables import read_table

REF = Path(__file__).resolve().parents[2].parent / "shared" / "reference" / "aggregation"
pytestmark = pytest.mark.skipif(not REF.is_dir(), reason=f"reference data not found at {REF}")

VNR = {"borda": {"ties": "min"}, "dowdall": {"ties": "min"}, "plurality": {"ties": "none"},
       "minimax": {"score": "winning_votes"}}


def top(m, method, k=None, **params):
    frame = aggregate(m, method, n_boot=0, **{**VNR.get(method, {}), **params}).to_frame()
    frame = frame if k is None else frame.head(k)
    return [(s, round(float(v), 2)) for s, v in zip(frame["system"], frame["score"])]


@pytest.fixture(scope="module")
def glue30():
    table = pd.read_csv(REF / "votenrank" / "GLUE.csv").head(30)
    return as_matrix(table, system_column="Model", exclude=["Rank", "Name", "URL", "Score"],
                     duplicates="suffix", weights={"AX": 0})


@pytest.fixture(scope="module")
def superglue():
    table = pd.read_csv(REF / "votenrank" / "SuperGLUE.csv")
    m = as_matrix(table, system_column="Model", exclude=["Rank", "Name", "URL", "Score"], duplicates="suffix",
                  weights={"AX-b": 0, "AX-g": 0})
    return m.complete_systems()


@pytest.fixture(scope="module")
def value():
    table = pd.read_csv(REF / "votenrank" / "VALUE.csv")
    table["Model"] = ["Human", "craig.starr", "DuKG", "HERO 1", "HERO 2", "HERO 3", "HERO 4"]
    return table


def test_glue_votenrank_published(glue30):
    assert glue30.n_systems == 30 and not glue30.has_missing
    assert glue30.weights.tolist() == [1, 1, .5, .5, .5, .5, .5, .5, 1, 1, 1, 1, 1, 0]
    assert top(glue30, "plurality", 6) == [("ERNIE", 2.0), ("GLUE Human Baselines", 2.0), ("DeBERTa + CLEVER", 1.5),
                                           ("StructBERT + CLEVER", 1.0), ("MacALBERT + DKM", 1.0),
                                           ("ALBERT + DAAF + NAS", 0.5)]
    assert top(glue30, "copeland", 3) == [("ERNIE", 29.0), ("DeBERTa + CLEVER", 25.0), ("StructBERT + CLEVER", 24.0)]
    assert top(glue30, "minimax", 3) == [("ERNIE", 0.0), ("DeBERTa + CLEVER", -5.5), ("DeBERTa / TuringNLRv4", -6.0)]
    assert top(glue30, "borda", 5) == [("ERNIE", 260.5), ("StructBERT + CLEVER", 256.0), ("DeBERTa + CLEVER", 247.5),
                                       ("DeBERTa / TuringNLRv4", 241.5), ("ALBERT + DAAF + NAS", 233.5)]
    assert top(glue30, "dowdall", 3) == [("ERNIE", 4.95), ("GLUE Human Baselines", 4.08), ("DeBERTa + CLEVER", 3.82)]
    assert top(glue30, "mean", 3) == [("ERNIE", 91.18), ("StructBERT + CLEVER", 91.07), ("DeBERTa + CLEVER", 90.88)]
    # Published winners: Baldwin, Condorcet -> ERNIE; Threshold -> StructBERT + CLEVER.
    assert aggregate(glue30, "baldwin", n_boot=0, ties="min").winners == ("ERNIE",)
    assert aggregate(glue30, "copeland", n_boot=0).details["condorcet_winner"] == "ERNIE"
    assert aggregate(glue30, "threshold", n_boot=0).winners == ("StructBERT + CLEVER",)
    # Geometric mean: Vote'n'Rank prints NaN for distilRoBERTa+GAL, whose AX score is 0.0 on
    # the zero-weight AX column (0 * log 0); scorebench leaves zero-weight columns out.
    gm = aggregate(glue30, "geometric_mean", n_boot=0)
    assert top(glue30, "geometric_mean", 2) == [("ERNIE", 90.89), ("StructBERT + CLEVER", 90.78)]
    assert np.isfinite(gm.scores).all()
    # AX weighted 1: distilRoBERTa+GAL's AX of 0.0 makes its geometric mean 0 (its limit), not an error
    with_ax = as_matrix(glue30.to_frame())
    gm_ax = aggregate(with_ax, "geometric_mean", n_boot=0)
    zero = with_ax.values[:, with_ax.columns.index("AX")] == 0
    assert zero.sum() == 1 and gm_ax.scores[zero].tolist() == [0.0] and (gm_ax.scores[~zero] > 0).all()
    # the whole GLUE table has negative AX scores (MCC): refused, naming one
    full = as_matrix(pd.read_csv(REF / "votenrank" / "GLUE.csv"), system_column="Model",
                     exclude=["Rank", "Name", "URL", "Score"], duplicates="suffix")
    with pytest.raises(InputError, match="non-negative scores, got .* on column 'AX'"):
        aggregate(full, "geometric_mean", n_boot=0)


def test_superglue_votenrank_published(superglue):
    assert superglue.n_systems == 22
    # CBoW (and few-shot WARP) score MultiRC (F1a/EM) = 0.0/0.5: their geometric mean is 0, the others' positive
    gm = aggregate(superglue, "geometric_mean", n_boot=0)
    zero = superglue.values[:, superglue.columns.index("MultiRC-a")] == 0
    assert zero[superglue.systems.index("CBoW")]
    assert zero.sum() == 2 and (gm.scores[zero] == 0).all() and (gm.scores[~zero] > 0).all()
    human, ernie, udg = "SuperGLUE Human Baselines", "ERNIE 3.0", "T5 + UDG, Single Model (Google Brain)"
    assert top(superglue, "plurality", 4) == [(human, 4.0), (ernie, 2.5), (udg, 1.0), ("DeBERTa / TuringNLRv4", 0.5)]
    assert top(superglue, "copeland", 3) == [(human, 20.0), (ernie, 19.0), (udg, 18.0)]
    r = aggregate(superglue, "minimax", n_boot=0, score="winning_votes")
    assert set(r.winners) == {ernie, human} and r.score_of(udg) == -4.5  # a published tie at -0.00
    assert top(superglue, "borda", 4) == [(ernie, 155.0), (udg, 154.5), ("DeBERTa / TuringNLRv4", 153.0), (human, 145.5)]
    assert top(superglue, "dowdall", 2) == [(human, 4.98), (ernie, 4.25)]
    assert top(superglue, "mean", 3) == [(ernie, 90.62), (udg, 90.39), ("DeBERTa / TuringNLRv4", 90.29)]
    assert aggregate(superglue, "copeland", n_boot=0).details["condorcet_winner"] is None


def test_value_votenrank_published(value):
    with_human = as_matrix(value, exclude=["Mean-Rank", "Meta-Ave"])
    assert with_human.has_missing  # the human row has "-" cells
    assert top(with_human, "copeland") == [("Human", 6.0), ("craig.starr", 4.0), ("DuKG", 2.0), ("HERO 1", 0.0),
                                           ("HERO 3", -2.0), ("HERO 2", -4.0), ("HERO 4", -6.0)]
    mm = dict(top(with_human, "minimax"))
    assert mm == {"Human": 0.0, "craig.starr": -6.0, "DuKG": -10.0, "HERO 1": -10.0, "HERO 2": -11.0,
                  "HERO 3": -11.0, "HERO 4": -11.0}
    for method in ["borda", "plurality", "dowdall", "threshold", "mean"]:
        with pytest.raises(InputError, match="missing"):
            aggregate(with_human, method, n_boot=0)
    models = as_matrix(value.iloc[1:], exclude=["Mean-Rank", "Meta-Ave"])
    assert top(models, "plurality", 3) == [("craig.starr", 9.0), ("DuKG", 1.0), ("HERO 1", 1.0)]
    assert top(models, "copeland") == [("craig.starr", 5.0), ("DuKG", 3.0), ("HERO 1", 1.0), ("HERO 3", -1.0),
                                       ("HERO 2", -3.0), ("HERO 4", -5.0)]
    assert top(models, "borda") == [("craig.starr", 53.0), ("DuKG", 39.0), ("HERO 1", 30.0), ("HERO 2", 20.0),
                                    ("HERO 3", 18.0), ("HERO 4", 5.0)]
    assert top(models, "dowdall") == [("craig.starr", 10.0), ("DuKG", 5.17), ("HERO 1", 4.08), ("HERO 2", 2.87),
                                      ("HERO 3", 2.82), ("HERO 4", 2.02)]
    assert top(models, "mean") == [("craig.starr", 62.87), ("DuKG", 60.0), ("HERO 1", 57.58), ("HERO 3", 56.96),
                                   ("HERO 2", 56.07), ("HERO 4", 52.59)]
    assert top(models, "geometric_mean", 2) == [("craig.starr", 49.96), ("DuKG", 46.3)]
    for method in ["threshold", "baldwin", "kemeny", "schulze"]:
        assert aggregate(models, method, n_boot=0).winners == ("craig.starr",), method


def test_duplicate_system_names_are_explicit():
    table = pd.read_csv(REF / "votenrank" / "GLUE.csv")
    with pytest.raises(InputError, match="duplicate system names: 'RefBERT' x4"):
        as_matrix(table, system_column="Model", exclude=["Rank", "Name", "URL", "Score"])
    m = as_matrix(table, system_column="Model", exclude=["Rank", "Name", "URL", "Score"], duplicates="suffix")
    assert {"RefBERT_1", "RefBERT_4", "force_SEM_3"} <= set(m.systems)
    first = as_matrix(table, system_column="Model", exclude=["Rank", "Name", "URL", "Score"], duplicates="first")
    assert first.n_systems == m.n_systems - 3 - 2
    # "NaN/99.8" (a pair with a missing half) and "-" are missing, never errors.
    assert m.has_missing and np.isnan(m.values).sum() > 0


def test_every_method_on_every_table(glue30, superglue, value):
    tables = {
        "glue30": glue30, "superglue": superglue,
        "value": as_matrix(value.iloc[1:], exclude=["Mean-Rank", "Meta-Ave"]),
        "xtreme": as_matrix(read_table(REF / "himmi_missingdata" / "data_task" / "xtrem.csv"), exclude=["Score"]),
        "gem": as_matrix(read_table(REF / "himmi_missingdata" / "data_task" / "gem.csv")),
        "colombo_glue": as_matrix(read_table(REF / "colombo_rankingnlp" / "glue.data", format="csv"), exclude=["Score"]),
    }
    for name, m in tables.items():
        for method in all_methods():
            if "table" in method.accepts and "matrix" not in method.accepts:
                continue
            try:
                r = aggregate(m, method.name, n_boot=0)
            except ScorebenchError as exc:  # refusals must be clear, never a traceback
                assert str(exc), (name, method.name)
                continue
            assert len(r.scores) == m.n_systems and np.isfinite(r.scores).all(), (name, method.name)
            assert r.ranks.min() == 1


def test_colombo_and_himmi_tables():
    # The malformed XTREME file (an extra leading field per row) is rejected, not misaligned.
    with pytest.raises(InputError, match="malformed"):
        read_table(REF / "colombo_rankingnlp" / "xtrem.data", format="csv")
    glue = as_matrix(read_table(REF / "colombo_rankingnlp" / "glue.data", format="csv"), exclude=["Score"])
    assert glue.n_systems == 105 and glue.columns[:4] == ("CoLA", "SST-2", "MRPC-a", "MRPC-b")
    same = as_matrix(read_table(REF / "himmi_missingdata" / "data_task" / "glue.csv"), exclude=["Score"])
    np.testing.assert_array_equal(glue.values, same.values)
    # Self-consistency: Borda over tasks and the mean disagree at the top of GLUE (Colombo
    # et al.'s point), while rank-based rules agree with each other far more than with the mean.
    borda = aggregate(glue, "borda", n_boot=0)
    kemeny = aggregate(glue, "kemeny", n_boot=0)
    mean = aggregate(glue, "mean", n_boot=0)
    from scipy.stats import kendalltau

    assert kendalltau(borda.scores, kemeny.scores).statistic > kendalltau(borda.scores, mean.scores).statistic - 0.05
    assert kemeny.details["exact"]


def test_missing_data_completion_on_xtreme():
    full = as_matrix(read_table(REF / "himmi_missingdata" / "data_task" / "xtrem.csv"), exclude=["Score"])
    holed = as_matrix(read_table(REF / "himmi_missingdata" / "example_data_cli" / "xtreme_missing.csv"),
                      exclude=["Score"])
    assert np.isnan(holed.values).sum() == 7 and holed.n_systems == full.n_systems
    with pytest.raises(InputError, match="missing='complete'"):
        aggregate(holed, "borda", n_boot=0)
    a = aggregate(full, "borda", n_boot=0)
    b = aggregate(holed, "borda", n_boot=0, missing="complete")
    # The files spell the systems differently (tabs vs spaces); rows are in the same order.
    assert np.argmax(a.scores) == np.argmax(b.scores) == 0
    assert np.corrcoef(a.scores, b.scores)[0, 1] > 0.95
    # Pairwise rules skip the missing pairs and still agree at the top.
    assert np.argmax(aggregate(holed, "copeland", n_boot=0).scores) == 0


def test_possible_winners_on_value(value):
    models = as_matrix(value.iloc[1:], exclude=["Mean-Rank", "Meta-Ave"])
    out = possible_winners(models)
    got = dict(zip(out["system"], out["possible"]))
    assert got["craig.starr"]
    # A system that some other system beats on every task can never be the Condorcet winner.
    x = models.values
    for i, s in enumerate(models.systems):
        dominated = any((x[j] > x[i]).all() for j in range(len(x)) if j != i)
        if dominated:
            assert not got[s], s
    row = out.set_index("system").loc["craig.starr"]
    assert abs(sum(row["weights"].values()) - 1) < 1e-9 and row["margin"] > 0


# Vote'n'Rank's published "prospective" models (case studies/CS2 - Condorcet Search.ipynb, its
# printed output), found by a linear program with non-strict margins: weak Condorcet winners.
VNR_PROSPECTIVE = {
    "SuperGLUE.csv": ["ERNIE 3.0", "T5 + UDG, Single Model (Google Brain)", "DeBERTa / TuringNLRv4",
                      "SuperGLUE Human Baselines", "T5", "AILabs Team, Transformers", "ADAPET (ALBERT) - few-shot",
                      "Most Frequent Class", "CBoW", "WARP (ALBERT-XXL-V2) - Few-Shot (32 Examples)"],
    "GLUE.csv": ["ERNIE", "StructBERT + CLEVER", "DeBERTa / TuringNLRv4", "DeBERTa + CLEVER", "MacALBERT + DKM",
                 "ALBERT + DAAF + NAS", "T5", "MT-DNN-SMART", "GLUE Human Baselines"],
}


@pytest.mark.parametrize("name", sorted(VNR_PROSPECTIVE))
def test_weak_possible_winners_reproduce_votenrank_condorcet_search(name):
    m = as_matrix(pd.read_csv(REF / "votenrank" / name), system_column="Model",
                  exclude=["Rank", "Name", "URL", "Score"], duplicates="suffix").complete_systems()
    weak = possible_winners(m, weak=True)
    strict = possible_winners(m)
    assert sorted(weak.loc[weak["possible"], "system"]) == sorted(VNR_PROSPECTIVE[name])
    # strict winners are weak winners; the extra weak ones only tie their best rival
    assert set(strict.loc[strict["possible"], "system"]) < set(weak.loc[weak["possible"], "system"])
    extra = weak["possible"] & ~strict["possible"]
    assert (weak.loc[extra, "margin"].abs() < 1e-9).all()
    with pytest.raises(InputError, match="weak"):
        possible_winners(m, weak="yes")
