r"""Reward-model accuracy on preference pairs (RewardBench) and best-of-N sets (RewardBench 2).

A reward model :math:`r` is right on a prompt when it scores the chosen response above
every rejected one. **Ties** are the one convention that differs between tools:
RewardBench v1 counts ``score_chosen > score_rejected`` strictly (a tie is a loss,
``ties="loss"``); ``ties="half"`` shares the credit evenly among the tied maxima, so a
tied pair scores 1/2 and a chosen response tied with two rejected ones at the top scores
1/3 — the expected accuracy of breaking ties at random, and RewardBench 2's best-of-N
convention. ``rm_accuracy`` defaults to ``"half"``; the metrics named after RewardBench
(``rewardbench_score``, ``rewardbench_section``) reproduce RewardBench by default, so they
default to ``"loss"`` (the half-tie variant stays an option).

Section scores follow RewardBench's published convention: within a section, subset
accuracies are averaged with weights equal to the subsets' **official example counts**
(:data:`scorebench.io.readers.rewardbench.EXAMPLE_COUNTS`, with ``math-prm`` counted as 984 so
that math weighs as much as the six HumanEvalPack code subsets), and the RewardBench score
is the mean of the four section scores.

References
----------
Lambert, N. et al. (2024). RewardBench: Evaluating Reward Models for Language Modeling.
arXiv:2403.13787. Malik, S. et al. (2025). RewardBench 2. arXiv:2506.01937.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from scorebench.core.errors import InputError
from scorebench.core.registry import NO_EXTERNAL_REFERENCE, register
from scorebench.core.validation import check_choice
from scorebench.core.rewardbench_subsets import EXAMPLE_COUNTS, SECTIONS

__all__ = ["rm_accuracy", "rewardbench_score", "rewardbench_section", "credit", "subset_accuracy",
           "SECTION_SLUGS"]

_FAMILY = "reward"
_KIND = "preferences"
_TIES = ("half", "loss")
_CITE = "Lambert et al. (2024), RewardBench, arXiv:2403.13787; Malik et al. (2025), RewardBench 2, arXiv:2506.01937"
SECTION_SLUGS = {name.lower().replace(" ", "_"): name for name in SECTIONS}
_SECTION_OF = {subset: section for section, subsets in SECTIONS.items() for subset in subsets}


def _scores(chosen: Any, rejected: Any) -> tuple[np.ndarray, np.ndarray]:
    c = np.asarray(chosen, dtype=np.float64)
    r = np.asarray(rejected, dtype=np.float64)
    if c.ndim != 1:
        raise InputError(f"chosen: expected one score per prompt (1-D), got shape {c.shape}")
    if r.ndim == 1:
        r = r[:, None]
    if r.ndim != 2 or r.shape[0] != c.size or r.shape[1] < 1:
        raise InputError(f"rejected: expected shape ({c.size},) or ({c.size}, N) with N >= 1, got {r.shape}")
    return c, r


def credit(chosen: Any, rejected: Any, *, ties: str = "half") -> np.ndarray:
    r"""Per-prompt credit of a reward model: 1 right, 0 wrong, 1/k for a k-way tie at the top.

    .. math::
        c_i = \begin{cases} 1 & s^+_i > \max_j s^-_{ij} \\
                            1/(1 + \#\{j : s^-_{ij} = s^+_i\}) & s^+_i = \max_j s^-_{ij}
                            \text{ and ties = half} \\
                            0 & \text{otherwise} \end{cases}

    NaN scores give NaN credit (so ``nan_policy="propagate"`` shows them).

    Examples
    --------
    >>> credit([2.0, 1.0, 1.0], [1.0, 1.0, 3.0]).tolist()
    [1.0, 0.5, 0.0]
    >>> credit([5.0], [[5.0, 5.0, 1.0]]).tolist()    # best-of-4 with a 3-way tie at the top
    [0.3333333333333333]
    """
    check_choice(ties, "ties", _TIES)
    c, r = _scores(chosen, rejected)
    best = r.max(axis=1)
    out = (c > best).astype(np.float64)
    if ties == "half":
        at_top = c == best
        n_tied = (r == best[:, None]).sum(axis=1)
        out[at_top] = 1.0 / (1.0 + n_tied[at_top])
    out[np.isnan(c) | np.isnan(r).any(axis=1)] = np.nan
    return out


@register("rm_accuracy", family=_FAMILY, kind=_KIND, inputs=("chosen", "rejected"), higher_is_better=True,
          bounds=(0.0, 1.0), params={"ties": "half"}, citation=_CITE, tested_against=NO_EXTERNAL_REFERENCE)
def rm_accuracy(chosen: Any, rejected: Any, /, *, ties: str = "half") -> np.ndarray:
    r"""Reward-model accuracy: share of prompts whose chosen response scores highest.

    .. math:: \mathrm{acc} = \frac1n \sum_i c_i

    with the per-prompt credit :math:`c_i` of :func:`credit` (pairwise: ``score_chosen >
    score_rejected``; several rejected responses: best-of-N, RewardBench 2). ``ties="half"``
    (default) gives a k-way tie at the top 1/k; ``ties="loss"`` is RewardBench v1's strict
    ``>``. Returns the per-prompt credits, whose mean is the accuracy; the interval resamples
    prompts.

    Examples
    --------
    >>> float(rm_accuracy([2.0, 1.0, 0.0, 3.0], [1.0, 1.0, 1.0, 2.0]).mean())
    0.625
    >>> float(rm_accuracy([2.0, 1.0, 0.0, 3.0], [1.0, 1.0, 1.0, 2.0], ties="loss").mean())
    0.5
    """
    return credit(chosen, rejected, ties=ties)


def subset_accuracy(chosen: Any, rejected: Any, subset: Any, subsets: Sequence[str], *,
                    ties: str = "half") -> dict[str, float]:
    """Accuracy per subset name (subsets without prompts are left out).

    Examples
    --------
    >>> subset_accuracy([1.0, 0.0, 2.0], [0.0, 1.0, 1.0], [0, 0, 1], ["a", "b"])
    {'a': 0.5, 'b': 1.0}
    """
    c = credit(chosen, rejected, ties=ties)
    codes = np.asarray(subset, dtype=np.int64)
    if codes.shape != c.shape:
        raise InputError(f"subset: expected one code per prompt ({c.size}), got shape {codes.shape}")
    sums = np.bincount(codes, weights=c, minlength=len(subsets))
    counts = np.bincount(codes, minlength=len(subsets))
    return {str(subsets[k]): float(sums[k] / counts[k]) for k in range(len(subsets)) if counts[k] > 0}


def _section_scores(acc: dict[str, float], counts: dict[str, int], weights: str,
                    missing: str = "available") -> dict[str, float]:
    unknown = sorted(s for s in acc if s not in _SECTION_OF)
    if unknown:
        raise InputError(f"subset(s) {unknown} are not RewardBench subsets; section scores need the subsets "
                         f"{sorted(_SECTION_OF)} (column 'subset', or 'task')")
    out = {}
    for section, members in SECTIONS.items():
        present = [s for s in members if s in acc]
        if present:
            w = np.array([EXAMPLE_COUNTS[s] if weights == "official" else counts[s] for s in present], dtype=float)
            out[section] = float(w @ np.array([acc[s] for s in present]) / w.sum())
        elif missing == "zero":
            out[section] = 0.0
        elif missing == "raise":
            raise InputError(f"rewardbench_score: no prompt of section {section!r} (subsets {list(members)}); "
                             "RewardBench counts a missing section as 0 (missing='zero'), or average the "
                             "sections present with missing='available'")
    return out


def _counts(subset: Any, subsets: Sequence[str]) -> dict[str, int]:
    counts = np.bincount(np.asarray(subset, dtype=np.int64), minlength=len(subsets))
    return {str(subsets[k]): int(counts[k]) for k in range(len(subsets))}


@register("rewardbench_score", family=_FAMILY, kind=_KIND, inputs=("chosen", "rejected", "subset", "subsets"),
          higher_is_better=True, bounds=(0.0, 1.0), per_row=False,
          params={"ties": "loss", "weights": "official", "missing": "zero"},
          citation=_CITE + "; section weighting as in allenai/reward-bench rewardbench/utils.py calculate_scores_per_section", tested_against=NO_EXTERNAL_REFERENCE)
def rewardbench_score(chosen: Any, rejected: Any, subset: Any, subsets: Sequence[str], /, *, ties: str = "loss",
                      weights: str = "official", missing: str = "zero") -> float:
    r"""RewardBench score: the mean of the section scores, each an example-count-weighted mean.

    .. math::
        S_k = \frac{\sum_{s \in k} n_s\,\mathrm{acc}_s}{\sum_{s \in k} n_s}, \qquad
        \mathrm{score} = \frac{1}{|K|}\sum_{k \in K} S_k

    over the four sections :math:`K` (Chat, Chat Hard, Safety, Reasoning). The defaults
    reproduce RewardBench's own number: ``ties="loss"`` (its strict ``chosen > rejected``;
    ``"half"`` gives a tie 1/2), ``weights="official"`` takes :math:`n_s` from RewardBench's
    official example counts whatever the table holds (``math-prm`` = 984; ``"observed"``
    uses the table's prompt counts), and ``missing="zero"`` scores a section with no prompt
    in the group 0, as ``calculate_scores_per_section`` does (``"available"`` averages the
    sections present, ``"raise"`` refuses). Subsets that are not RewardBench subsets raise.

    Examples
    --------
    >>> subsets = ("hep-go", "math-prm")
    >>> chosen, rejected = [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]
    >>> round(rewardbench_score(chosen, rejected, [0, 0, 1], subsets, missing="available"), 4)  # 164 / 1148
    0.1429
    >>> round(rewardbench_score(chosen, rejected, [0, 0, 1], subsets), 4)  # three sections absent: 0
    0.0357
    """
    check_choice(weights, "weights", ("official", "observed"))
    check_choice(missing, "missing", ("zero", "available", "raise"))
    acc = subset_accuracy(chosen, rejected, subset, subsets, ties=ties)
    scores = _section_scores(acc, _counts(subset, subsets), weights, missing)
    return float(np.mean(list(scores.values())))


@register("rewardbench_section", family=_FAMILY, kind=_KIND, inputs=("chosen", "rejected", "subset", "subsets"),
          higher_is_better=True, bounds=(0.0, 1.0), per_row=False,
          params={"section": None, "ties": "loss", "weights": "official"}, citation=_CITE, tested_against=NO_EXTERNAL_REFERENCE)
def rewardbench_section(chosen: Any, rejected: Any, subset: Any, subsets: Sequence[str], /, *,
                        section: str | None = None, ties: str = "loss", weights: str = "official") -> float:
    r"""One RewardBench section score (``chat``, ``chat_hard``, ``safety``, ``reasoning``).

    .. math:: S_k = \frac{\sum_{s \in k} n_s\,\mathrm{acc}_s}{\sum_{s \in k} n_s}

    with :math:`n_s` the official example counts (see :func:`rewardbench_score`; ties
    count as a loss by default, as in RewardBench). ``section=None`` (default) scores the
    one section the group's prompts belong to, so ``evaluate(..., by="system,section")``
    on the RewardBench reader's table gives each section's official score with a bootstrap
    interval; a group spanning several sections then raises. Raises when the group holds no
    subset of the section.

    Examples
    --------
    >>> subsets = ("alpacaeval-easy", "mt-bench-easy")
    >>> round(rewardbench_section([1.0, 0.0], [0.0, 1.0], [0, 1], subsets, section="chat"), 4)  # 100 / 128
    0.7812
    >>> round(rewardbench_section([1.0, 0.0], [0.0, 1.0], [0, 1], subsets), 4)  # the group's one section
    0.7812
    """
    if section is not None:
        check_choice(section, "section", tuple(SECTION_SLUGS))
    check_choice(weights, "weights", ("official", "observed"))
    acc = subset_accuracy(chosen, rejected, subset, subsets, ties=ties)
    scores = _section_scores(acc, _counts(subset, subsets), weights)
    if section is None:
        if len(scores) != 1:
            raise InputError(f"rewardbench_section: the group spans sections {sorted(scores)}; name one with "
                             "section= (chat, chat_hard, safety, reasoning) or group by section "
                             "(by='system,section')")
        return next(iter(scores.values()))
    name = SECTION_SLUGS[section]
    if name not in scores:
        raise InputError(f"rewardbench_section: no prompt of section {name!r} (subsets {list(SECTIONS[name])}) "
                         "in this group")
    return scores[name]
