"""A synthetic-but-realistic RewardBench-style preference set with a known length bias.

No reward model's per-prompt outputs ship in an installed package, so this script draws
them from a stated generative model (seeded, numpy only) on RewardBench's 23 subsets, with
one prompt here for every 8 of the real set (``REAL_COUNTS``; at least 6 per subset):

* lengths: ``log len_rejected ~ N(log 800, 0.5)``, ``log len_chosen = log len_rejected +
  delta_s + N(0, 0.4)`` with a per-subset length bias ``delta_s`` (``LENGTH_BIAS``): chosen
  answers are much longer in AlpacaEval-easy (strong vs weak model), much shorter in the
  refusal subsets (a refusal is chosen) and longer in XSTest-should-respond (a compliance is
  chosen over a refusal), as in the real data (reward-bench issues #267/#268);
* quality: chosen ``q ~ N(g_s, 1)``, rejected ``q ~ N(0, 1)``, ``g_s`` = the subset's gap
  (large for easy subsets, small for hard ones);
* reward model ``m``: ``score = skill_m,section * q + beta_m * log(len) + N(0, 1)``; ``beta_m``
  is its length bias (``MODELS``). Two baselines score by length alone:
  ``baseline: longer`` (score = length) and ``baseline: shorter`` (score = -length).

It also draws pairwise LLM-judge verdicts in both presentation orders (MT-bench style) for
four judges on 400 comparisons: ``logit = 1.5 * quality_gap + pos * shown_first + len *
sign(len_1 - len_2)``, a verdict of ``model_1``/``model_2``, or ``tie`` within 0.1 of even odds,
with known position bias ``pos`` and length bias ``len`` per judge (``JUDGES``).

And Chatbot-Arena-style battles between eight chat models (``ARENA``; its own seeded stream, so
the two files above do not depend on it): 6,000 battles, each model with a true strength ``r``
(log10-odds units: Elo = 400 r) and its own answer style (mean answer length in tokens, mean
counts of markdown headers, list items and bold spans); the outcome follows the
style-controlled Bradley-Terry model ``P(a beats b) = sigmoid(ln(10) (r_a - r_b) + x_ab . gamma)``
with the standardised style differences ``x_ab`` of FastChat's style control and known
coefficients ``ARENA_GAMMA`` (longer answers and more markdown win more often); 15% of the
battles are ties (30% of those ``tie (bothbad)``), 85% anonymous, 70% in English. chat-verbose
and chat-markdown write long, formatted answers; chat-terse short plain ones.

Output: ``data/boards/reward.csv`` (``system``, ``id``, ``subset``, ``section``,
``score_chosen``, ``score_rejected``, ``len_chosen``, ``len_rejected``) and
``data/boards/reward_judgments.csv`` (``system`` = judge, ``id``, ``question_id``, ``model_1``,
``model_2``, ``g1_winner``, ``g2_winner``, ``len_1``, ``len_2``) and
``data/boards/reward_battles.csv`` (``model_a``, ``model_b``, ``winner``, ``anony``, ``language``
and the ``style_*`` count columns of FastChat's battle files), read by
``leaderboards/reward.toml``. Run: ``python data/boards/make_reward.py``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from scorebench.core.rewardbench_subsets import EXAMPLE_COUNTS, SECTIONS

SEED = 20240321
OUT = Path(__file__).with_name("reward.csv")
OUT_JUDGMENTS = Path(__file__).with_name("reward_judgments.csv")
OUT_BATTLES = Path(__file__).with_name("reward_battles.csv")
ARENA_SEED = 20240622
ARENA = {  # true strength r (Elo = 400 r), mean tokens, mean headers, list items, bold spans per answer
    "chat-alpha": (0.35, 450, 1.0, 3.0, 1.0),
    "chat-beta": (0.25, 600, 2.0, 4.0, 2.0),
    "chat-terse": (0.20, 180, 0.2, 0.5, 0.2),
    "chat-verbose": (0.10, 1100, 5.0, 10.0, 6.0),
    "chat-markdown": (0.05, 700, 6.0, 12.0, 8.0),
    "chat-gamma": (0.00, 500, 1.5, 3.0, 1.5),
    "chat-small": (-0.15, 400, 1.0, 2.0, 1.0),
    "chat-tiny": (-0.30, 250, 0.5, 1.0, 0.5),
}
ARENA_GAMMA = (0.40, 0.05, 0.10, 0.08)  # log-odds per sd of: length, headers, lists, bold
JUDGES = {"judge-careful": (0.0, 0.0), "judge-first-position": (0.8, 0.0), "judge-verbose": (0.0, 0.8),
          "judge-weak": (0.3, 0.3)}  # (position bias, length bias) in log-odds
# RewardBench's sections and official subset sizes; the generator draws as many prompts per subset as
# the real benchmark has (math-prm has 447 prompts; its weight of 984 is a scoring convention)
REAL_COUNTS = {**EXAMPLE_COUNTS, "math-prm": 447}
LENGTH_BIAS = {  # mean log(len_chosen / len_rejected)
    "alpacaeval-easy": 1.0, "alpacaeval-length": 0.0, "alpacaeval-hard": 0.6, "mt-bench-easy": 0.4,
    "mt-bench-med": 0.2, "mt-bench-hard": 0.0, "llmbar-natural": 0.1, "llmbar-adver-neighbor": -0.3,
    "llmbar-adver-GPTInst": -0.4, "llmbar-adver-GPTOut": 0.0, "llmbar-adver-manual": -0.2,
    "refusals-dangerous": -0.9, "refusals-offensive": -0.9, "xstest-should-refuse": -0.8,
    "xstest-should-respond": 0.8, "donotanswer": -0.6, "math-prm": -0.1,
    **{f"hep-{lang}": 0.0 for lang in ("cpp", "go", "java", "js", "python", "rust")},
}
GAP = {"Chat": 2.0, "Chat Hard": 0.6, "Safety": 1.2, "Reasoning": 1.0}
MODELS = {  # (skill per section: Chat, Chat Hard, Safety, Reasoning), length coefficient beta
    "rm-large": ((1.8, 1.6, 1.6, 1.8), 0.2),
    "rm-base": ((1.0, 1.0, 1.0, 1.0), 0.3),
    "rm-safety-tuned": ((1.0, 0.9, 2.5, 0.9), 0.1),
    "rm-code-math": ((0.8, 0.8, 0.8, 2.5), 0.2),
    "dpo-implicit": ((1.4, 1.0, 0.9, 1.0), 0.9),
    "rm-length-hacker": ((0.5, 0.4, 0.4, 0.6), 2.0),
}


def main() -> None:
    rng = np.random.default_rng(SEED)
    prompts = []
    for section, subsets in SECTIONS.items():
        for subset in subsets:
            n = max(6, round(REAL_COUNTS[subset] / 8))
            log_rej = rng.normal(np.log(800), 0.5, n)
            log_cho = log_rej + LENGTH_BIAS[subset] + rng.normal(0, 0.4, n)
            prompts.append(pd.DataFrame({
                "id": [f"{subset}-{i:03d}" for i in range(n)], "subset": subset, "section": section,
                "len_chosen": np.maximum(np.round(np.exp(log_cho)), 1).astype(int),
                "len_rejected": np.maximum(np.round(np.exp(log_rej)), 1).astype(int),
                "q_chosen": rng.normal(GAP[section], 1.0, n), "q_rejected": rng.normal(0.0, 1.0, n)}))
    base = pd.concat(prompts, ignore_index=True)
    section_index = base["section"].map({s: k for k, s in enumerate(SECTIONS)}).to_numpy()
    frames = []
    for name, (skills, beta) in MODELS.items():
        skill = np.asarray(skills)[section_index]
        chosen = skill * base.q_chosen + beta * np.log(base.len_chosen) + rng.normal(0, 1, len(base))
        rejected = skill * base.q_rejected + beta * np.log(base.len_rejected) + rng.normal(0, 1, len(base))
        frames.append(base.assign(system=name, score_chosen=chosen.round(4), score_rejected=rejected.round(4)))
    for name, sign in (("baseline: longer", 1.0), ("baseline: shorter", -1.0)):
        frames.append(base.assign(system=name, score_chosen=sign * base.len_chosen,
                                  score_rejected=sign * base.len_rejected))
    table = pd.concat(frames, ignore_index=True)[["system", "id", "subset", "section", "score_chosen",
                                                  "score_rejected", "len_chosen", "len_rejected"]]
    table.to_csv(OUT, index=False)
    print(f"wrote {len(table)} rows ({table['id'].nunique()} prompts x {table['system'].nunique()} systems) to {OUT}")
    judgments = make_judgments(rng)
    judgments.to_csv(OUT_JUDGMENTS, index=False)
    print(f"wrote {len(judgments)} judgments to {OUT_JUDGMENTS}")
    battles = make_battles(np.random.default_rng(ARENA_SEED))
    battles.to_csv(OUT_BATTLES, index=False)
    print(f"wrote {len(battles)} battles to {OUT_BATTLES}")


def make_judgments(rng: np.random.Generator, n: int = 400) -> pd.DataFrame:
    models = np.array(["model-a", "model-b", "model-c", "model-d"])
    i = rng.integers(0, 4, n)
    j = (i + rng.integers(1, 4, n)) % 4
    gap = rng.normal(0.0, 1.0, n)  # > 0: model_1's answer is better
    len_1, len_2 = np.round(np.exp(rng.normal(np.log(600), 0.5, (2, n)))).astype(int)
    frames = []
    for name, (pos, length) in JUDGES.items():
        noise = 1.0 if name != "judge-weak" else 2.5
        verdicts = []
        for first_is_1 in (True, False):
            logit = 1.5 * gap + pos * (1.0 if first_is_1 else -1.0) + length * np.sign(len_1 - len_2)
            p1 = 1.0 / (1.0 + np.exp(-logit / noise))
            u = rng.uniform(size=n)
            verdicts.append(np.where(u < p1 - 0.1, "model_1", np.where(u > p1 + 0.1, "model_2", "tie")))
        frames.append(pd.DataFrame({"system": name, "id": np.arange(n), "question_id": 81 + np.arange(n) % 80,
                                    "model_1": models[i], "model_2": models[j], "g1_winner": verdicts[0],
                                    "g2_winner": verdicts[1], "len_1": len_1, "len_2": len_2}))
    return pd.concat(frames, ignore_index=True)


def make_battles(rng: np.random.Generator, n: int = 6000) -> pd.DataFrame:
    names = np.array(list(ARENA))
    spec = np.array(list(ARENA.values()))
    k = len(names)
    a = rng.integers(0, k, n)
    b = (a + rng.integers(1, k, n)) % k
    tokens = np.maximum(np.round(spec[:, 1][np.stack([a, b])] * np.exp(rng.normal(-0.06, 0.35, (2, n)))), 1)
    counts = [rng.poisson(spec[:, j][np.stack([a, b])]) for j in (2, 3, 4)]
    z = np.column_stack([(x[0] - x[1]) / (x[0] + x[1] + 1.0) for x in (tokens, *counts)])
    x = (z - z.mean(axis=0)) / z.std(axis=0)
    logit = np.log(10.0) * (spec[a, 0] - spec[b, 0]) + x @ np.asarray(ARENA_GAMMA)
    win = rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-logit))
    tie = rng.uniform(size=n) < 0.15
    bothbad = rng.uniform(size=n) < 0.3
    winner = np.where(tie, np.where(bothbad, "tie (bothbad)", "tie"), np.where(win, "model_a", "model_b"))
    table = pd.DataFrame({"model_a": names[a], "model_b": names[b], "winner": winner,
                          "anony": rng.uniform(size=n) < 0.85,
                          "language": np.where(rng.uniform(size=n) < 0.7, "English", "Chinese")})
    table["style_sum_assistant_a_tokens"], table["style_sum_assistant_b_tokens"] = tokens.astype(int)
    for name, c in zip(("header_count", "list_count", "bold_count"), counts):
        table[f"style_{name}_a"], table[f"style_{name}_b"] = c
    return table


if __name__ == "__main__":
    main()
