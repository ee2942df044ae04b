"""Make the simulated LLM-evaluation tables in data/examples/ (seeded, offline, a second).

Run: ``python data/make_llm_examples.py``.

- ``llm_attempts.csv``: a repeated-sampling run, 5 systems x 30 items x 16 attempts (kind
  ``attempts``: system, item, attempt, answer, correct). Item difficulty and system ability
  follow a Rasch model, P(correct) = 1 / (1 + exp(difficulty - ability)); a wrong attempt
  gives one of three distractor answers (the first most often), so majority votes can fail.
- ``llm_judged.csv``: pairwise comparisons of 5 systems against one baseline on 200 prompts
  each (kind ``judged``: system, id, judge, human). ``human`` is the preference of a person
  (1 win, 0.5 tie, 0 loss) on 40 random prompts per system and missing elsewhere; ``judge``
  is an LLM judge's preference on every prompt, biased towards the candidate (it turns 30%
  of losses and ties into wins).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

OUT = Path(__file__).resolve().parent / "examples"
SEED = 33
SYSTEMS = {"atlas-70b": 1.2, "birch-8b": -0.4, "cedar-32b": 0.6, "dune-3b": -1.2, "ember-14b": 0.1}


def llm_attempts(items: int = 30, attempts: int = 16) -> pd.DataFrame:
    rng = np.random.default_rng(SEED)
    difficulty = rng.normal(0.0, 1.6, items)
    rows = []
    for system, ability in SYSTEMS.items():
        p = 1.0 / (1.0 + np.exp(difficulty - ability))
        for i in range(items):
            right = rng.random(attempts) < p[i]
            wrong = rng.choice(3, size=attempts, p=[0.6, 0.25, 0.15])
            for a in range(attempts):
                answer = f"q{i}-right" if right[a] else f"q{i}-wrong{wrong[a]}"
                rows.append((system, f"q{i:02d}", a, answer, int(right[a])))
    return pd.DataFrame(rows, columns=["system", "item", "attempt", "answer", "correct"])


def llm_judged(prompts: int = 200, labelled: int = 40) -> pd.DataFrame:
    rng = np.random.default_rng(SEED + 1)
    frames = []
    for system, ability in SYSTEMS.items():
        p_win = 1.0 / (1.0 + np.exp(-0.8 * ability))
        u = rng.random(prompts)
        human = np.where(u < p_win * 0.9, 1.0, np.where(u < p_win * 0.9 + 0.1, 0.5, 0.0))
        agree = rng.random(prompts) < 0.8
        judge = np.where(agree, human, rng.choice([0.0, 0.5, 1.0], prompts))
        judge = np.where((judge < 1.0) & (rng.random(prompts) < 0.3), 1.0, judge)  # leans to the candidate
        shown = np.zeros(prompts, dtype=bool)
        shown[rng.choice(prompts, labelled, replace=False)] = True
        frames.append(pd.DataFrame({"system": system, "id": np.arange(prompts), "judge": judge,
                                    "human": np.where(shown, human, np.nan), "human_all": human}))
    return pd.concat(frames, ignore_index=True)


def main() -> None:
    OUT.mkdir(exist_ok=True)
    llm_attempts().to_csv(OUT / "llm_attempts.csv", index=False)
    judged = llm_judged()
    judged.drop(columns="human_all").to_csv(OUT / "llm_judged.csv", index=False, float_format="%g")
    print(judged.groupby("system")[["judge", "human_all"]].mean().round(3))  # judge-only vs true win rates


if __name__ == "__main__":
    main()
