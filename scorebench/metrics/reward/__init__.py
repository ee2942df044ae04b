"""Evaluating the models that score other models: reward models and LLM judges.

* :mod:`.kinds` — table kinds ``preferences`` (reward-model scores of chosen and rejected
  responses) and ``judgments`` (pairwise LLM-judge verdicts in both presentation orders);
* :mod:`.accuracy` — RewardBench accuracy (ties half or lost), best-of-N accuracy,
  RewardBench's section-weighted score;
* :mod:`.length_bias` — length baselines and the reward margin's dependence on length;
* :mod:`.judges` — swap consistency, position / length / self-preference bias with
  z-scores, and FastChat's judge–human agreement counts;
* :mod:`.starc` — STARC, EPIC and DARD distances between reward functions of a finite MDP;
* :mod:`.mdp_kind` — table kind ``mdp`` and the registered distances to a reference reward
  (``reward_starc``, ``reward_starc_epic``, ``reward_epic``, ``reward_dard``; no intervals).

Arena ratings with style control live in :mod:`scorebench.aggregate.style_control`.
"""

from __future__ import annotations

from scorebench.metrics.reward import accuracy, judges, kinds, length_bias, length_controlled, mdp_kind, starc  # noqa: F401  (register metrics and kinds)
