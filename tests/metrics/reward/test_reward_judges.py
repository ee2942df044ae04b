"""LLM-judge diagnostics and FastChat's judge-human agreement counts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import scorebench
from scorebench.core.errors import InputError
from scorebench.metrics.reward.judges import (judge_agreement, judge_bias_tests, position_bias, self_preference,
                                              swap_consistency, votes_from_judgments)


# --- FastChat compute_agreement.py, written out for the comparison ---------------------------------


def _revert(vote):
    return {"model_a": "model_b", "model_b": "model_a"}.get(vote, vote)


def _fastchat_votes(records):
    data = [{}, {}]
    for vote in records:
        turn = vote["turn"] - 1
        if vote["model_a"] < vote["model_b"]:
            key, winner = (vote["question_id"], vote["model_a"], vote["model_b"]), vote["winner"]
        else:
            key, winner = (vote["question_id"], vote["model_b"], vote["model_a"]), _revert(vote["winner"])
        data[turn].setdefault(key, {}).setdefault(vote["judge"], []).append(winner)
    return data


def _convert(v):
    return "tie" if "tie" in v else v


def _equal(v1, v2):
    return ("tie" in v1 and "tie" in v2) or v1 == v2


def _fastchat_agreement(data, judge1, judge2, ban):
    agree = total = 0
    for votes in data.values():
        if judge1 != judge2:
            if judge1 not in votes or judge2 not in votes:
                continue
            assert len(votes[judge1]) == 1
            if _convert(votes[judge1][0]) in ban:
                continue
            for v in votes[judge2]:
                if _convert(v) in ban:
                    continue
                total += 1
                agree += _equal(votes[judge1][0], v)
        else:
            hv = votes.get("human", [])
            for i in range(len(hv) - 1):
                for j in range(i + 1, len(hv)):
                    if _convert(hv[i]) in ban or _convert(hv[j]) in ban:
                        continue
                    total += 1
                    agree += _equal(hv[i], hv[j])
    return agree, total


def _random_votes(seed=0, n_questions=25):
    rng = np.random.default_rng(seed)
    models = ["alpaca-13b", "gpt-3.5-turbo", "gpt-4", "vicuna-13b"]
    winners = ["model_a", "model_b", "tie", "tie (bothbad)"]
    rows = []
    for q in range(81, 81 + n_questions):
        for _ in range(3):
            i, j = rng.choice(4, 2, replace=False)
            for turn in (1, 2):
                # one model-judge vote per comparison (FastChat asserts it), 0-3 human votes in random orientation
                rows.append({"question_id": q, "model_a": models[i], "model_b": models[j], "turn": turn,
                             "judge": "gpt4-pair", "winner": winners[rng.integers(4)]})
                for _ in range(rng.integers(0, 4)):
                    a, b = (models[i], models[j]) if rng.uniform() < 0.5 else (models[j], models[i])
                    rows.append({"question_id": q, "model_a": a, "model_b": b, "turn": turn, "judge": "human",
                                 "winner": winners[rng.integers(4)]})
    votes = pd.DataFrame(rows)
    # a comparison drawn twice would give the model judge two votes; keep the first (as FastChat's data)
    first = ~votes[votes.judge == "gpt4-pair"].assign(
        lo=lambda d: d[["model_a", "model_b"]].min(axis=1), hi=lambda d: d[["model_a", "model_b"]].max(axis=1)
    ).duplicated(["question_id", "lo", "hi", "turn"])
    drop = first[~first].index
    return votes.drop(index=drop).reset_index(drop=True)


@pytest.mark.parametrize("judge", ["gpt4-pair", "human"])
def test_agreement_matches_fastchat(judge):
    votes = _random_votes()
    data = _fastchat_votes(votes.to_dict("records"))
    for ties, ban in ((True, []), (False, ["tie"])):
        ours = judge_agreement(votes, judge, "human", ties=ties).set_index("turn")
        for turn in (1, 2):
            agree, total = _fastchat_agreement(data[turn - 1], judge, "human", ban)
            assert (ours.loc[turn, "agree"], ours.loc[turn, "total"]) == (agree, total)
            assert total > 20


def test_agreement_hand_counted():
    votes = pd.DataFrame({
        "question_id": [1, 1, 1, 1, 2, 2, 2],
        "model_a": ["x", "y", "x", "x", "x", "x", "y"],
        "model_b": ["y", "x", "y", "y", "y", "y", "x"],
        "winner": ["model_a", "model_b", "tie", "model_a", "tie", "tie (bothbad)", "model_a"],
        "judge": ["gpt4", "human", "human", "human", "gpt4", "human", "human"],
        "turn": 1})
    # q1: gpt4 says x; humans say x (reverted), tie, x -> 2 of 3; q2: gpt4 tie; humans tie(bothbad), y -> 1 of 2
    with_ties = judge_agreement(votes, "gpt4").iloc[0]
    assert (with_ties.agree, with_ties.total) == (3, 5)
    without = judge_agreement(votes, "gpt4", ties=False).iloc[0]
    assert (without.agree, without.total) == (2, 2)  # q1 x/x twice; q2 dropped (gpt4 tie)
    humans = judge_agreement(votes, "human", "human").iloc[0]
    # q1 pairs: (x,tie) (x,x) (tie,x) -> 1 of 3; q2 pair: (tie, y) -> 0 of 1
    assert (humans.agree, humans.total) == (1, 4)
    assert 0 <= with_ties.ci_low <= with_ties.agreement <= with_ties.ci_high <= 1
    with pytest.raises(InputError, match="no votes by judge"):
        judge_agreement(votes, "claude")
    with pytest.raises(InputError, match="winner"):
        judge_agreement(votes.assign(winner="x"), "gpt4")


def _judgments(seed=0, n=400, first_bias=0.3, long_bias=0.0):
    rng = np.random.default_rng(seed)
    quality = rng.normal(size=n)  # > 0: model_1's answer is better
    len_1, len_2 = rng.integers(100, 900, n), rng.integers(100, 900, n)

    def verdict(first_is_1):
        shown_first = np.where(first_is_1, 1.0, -1.0)
        logit = 1.5 * quality + first_bias * shown_first + long_bias * np.sign(len_1 - len_2)
        u = rng.uniform(size=n)
        p1 = 1 / (1 + np.exp(-logit))
        code = np.where(u < p1 - 0.05, 1, np.where(u > p1 + 0.05, -1, 0))
        return np.array(["model_2", "tie", "model_1"])[code + 1]

    return pd.DataFrame({"system": "judge", "question_id": np.arange(n), "model_1": "a", "model_2": "b",
                         "g1_winner": verdict(True), "g2_winner": verdict(False), "turn": 1,
                         "len_1": len_1, "len_2": len_2})


def test_registered_judge_metrics_through_evaluate():
    t = _judgments()
    out = scorebench.evaluate(t, ["swap_consistency", "position_bias", "judge_length_bias"], n_boot=200)
    v = out.set_index("metric")["value"]
    g1 = t.g1_winner.to_numpy()
    g2 = t.g2_winner.to_numpy()
    assert v["swap_consistency"] == pytest.approx((g1 == g2).mean())
    first = (g1 == "model_1").sum() + (g2 == "model_2").sum()
    second = (g1 == "model_2").sum() + (g2 == "model_1").sum()
    assert v["position_bias"] == pytest.approx((first - second) / (first + second))
    assert v["position_bias"] > 0.05  # the generator favours the first position
    assert abs(v["judge_length_bias"]) < 0.1
    assert (out.ci_low <= out.value).all() and (out.value <= out.ci_high).all()


def test_bias_tests_have_z_scores_that_detect_bias_and_stay_quiet_without():
    biased = judge_bias_tests(_judgments(first_bias=0.5, long_bias=0.4).rename(columns={"system": "judge"}),
                              n_boot=200).set_index("diagnostic")
    assert biased.loc["position_bias", "z"] > 3 and biased.loc["length_bias", "z"] > 3
    fair = judge_bias_tests(_judgments(seed=1, first_bias=0.0).rename(columns={"system": "judge"}),
                            n_boot=200).set_index("diagnostic")
    assert abs(fair.loc["position_bias", "z"]) < 3 and abs(fair.loc["length_bias", "z"]) < 3
    for frame in (biased, fair):
        assert (frame.ci_low <= frame.value + 1e-12).all() and (frame.value <= frame.ci_high + 1e-12).all()
    assert biased.loc["swap_consistency", "z"] > 0  # consistent beyond chance


def test_position_bias_z_is_the_sign_statistic():
    g1 = np.array(["model_1"] * 5 + ["model_2"] * 2 + ["tie"])
    g2 = np.array(["model_2"] * 5 + ["model_1"] * 2 + ["model_1"])
    t = pd.DataFrame({"judge": "j", "question_id": range(8), "model_1": "a", "model_2": "b",
                      "g1_winner": g1, "g2_winner": g2})
    row = judge_bias_tests(t, n_boot=0).set_index("diagnostic").loc["position_bias"]
    d = np.array([2] * 5 + [-2] * 2 + [-1])  # first-minus-second counts per row
    assert row.value == pytest.approx(d.sum() / 15)
    assert row.z == pytest.approx(d.sum() / np.sqrt((d**2).sum()))


def test_self_preference_against_other_judges():
    rng = np.random.default_rng(3)
    rows = []
    for q in range(300):
        truth = rng.normal()
        for judge, boost in (("gpt-4", 0.8), ("claude-3", 0.0), ("llama-3", 0.0)):
            logit = truth + boost  # gpt-4 favours the gpt family's answer (model_1)
            w = ["model_1" if rng.uniform() < 1 / (1 + np.exp(-logit)) else "model_2" for _ in range(2)]
            rows.append({"judge": judge, "question_id": q, "model_1": "gpt-4-turbo", "model_2": "mixtral",
                         "g1_winner": w[0], "g2_winner": w[1], "turn": 1})
    t = pd.DataFrame(rows)
    fam = {"gpt-4": "openai", "gpt-4-turbo": "openai", "claude-3": "anthropic", "llama-3": "meta",
           "mixtral": "mistral"}
    out = self_preference(t, families=fam, n_boot=200).set_index("judge")
    assert out.loc["gpt-4", "value"] > 0.1 and out.loc["gpt-4", "z"] > 3
    assert out.loc["gpt-4", "ci_low"] > 0
    assert out.loc["claude-3", "n"] == 0  # no model of its family took part
    tests = judge_bias_tests(t, families=fam, n_boot=100)
    assert ((tests.judge == "gpt-4") & (tests.diagnostic == "self_preference")).sum() == 1


def test_votes_from_judgments_and_kind_errors():
    t = pd.DataFrame({"judge": "gpt4", "question_id": [1, 2], "model_1": "x", "model_2": "y",
                      "g1_winner": ["model_1", "model_1"], "g2_winner": ["model_1", "model_2"], "turn": 1})
    votes = votes_from_judgments(t)
    assert votes.winner.tolist() == ["model_a", "tie"]
    with pytest.raises(InputError, match="g1_winner"):
        scorebench.evaluate(t.assign(g1_winner="A"), "swap_consistency", n_boot=0)
    with pytest.raises(InputError, match="error"):
        scorebench.evaluate(t.assign(g2_winner="error"), "swap_consistency", n_boot=0)
    kept = scorebench.evaluate(pd.concat([t, t.assign(question_id=3, g2_winner="error")]), "swap_consistency",
                               n_boot=0, nan_policy="omit")
    assert kept.value.iloc[0] == 0.5
    with pytest.raises(InputError, match="itself"):
        scorebench.evaluate(t.assign(model_2="x"), "swap_consistency", n_boot=0)
    with pytest.raises(InputError, match="decisive"):
        position_bias(np.zeros(3), np.zeros(3))
    assert swap_consistency([1, 0], [1, -1]).tolist() == [1.0, 0.0]


def test_single_answer_grades_use_the_agreement_metrics_per_judge():
    rng = np.random.default_rng(0)
    human = rng.integers(1, 11, 120)
    t = pd.DataFrame({"system": np.repeat(["good-judge", "noisy-judge"], 120), "y_true": np.tile(human, 2),
                      "y_pred": np.concatenate([np.clip(human + rng.integers(-1, 2, 120), 1, 10),
                                                rng.integers(1, 11, 120)])})
    out = scorebench.evaluate(t, ["qwk", "krippendorff_alpha"], n_boot=0).set_index(["system", "metric"])["value"]
    assert out["good-judge", "qwk"] > 0.8 > 0.3 > out["noisy-judge", "qwk"]
    assert out["good-judge", "krippendorff_alpha"] > out["noisy-judge", "krippendorff_alpha"]


def test_evaluate_judgments_by_judge_column():
    a = _judgments(seed=5).drop(columns="system").assign(judge="gpt-4")
    b = _judgments(seed=6, first_bias=0.0).drop(columns="system").assign(judge="claude")
    out = scorebench.evaluate(pd.concat([a, b]), ["swap_consistency", "position_bias"], by="judge", n_boot=0)
    assert set(out.judge) == {"gpt-4", "claude"} and len(out) == 4


def test_missing_judge_or_vote_fields_are_refused():
    t = _judgments(seed=7).rename(columns={"system": "judge"})
    t.loc[3, "judge"] = None
    with pytest.raises(InputError, match="'judge' is missing"):
        judge_bias_tests(t, n_boot=0)
    with pytest.raises(InputError, match="'judge' is missing"):
        self_preference(t)
    votes = votes_from_judgments(_judgments(seed=8).rename(columns={"system": "judge"}))
    votes.loc[0, "turn"] = np.nan
    with pytest.raises(InputError, match="'turn' is missing"):
        judge_agreement(votes, "judge", "judge")
