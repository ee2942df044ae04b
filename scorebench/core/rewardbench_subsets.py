"""RewardBench's subsets: the four sections and each subset's official example count.

Data shared by the reward metrics (:func:`scorebench.metrics.reward.accuracy.rewardbench_score`
weights subsets by these counts) and the RewardBench reader
(:mod:`scorebench.io.readers.rewardbench`): it lives on the ground floor so that neither
``metrics/`` imports ``io/`` nor ``io/`` imports ``metrics/`` (which would close the cycle
io -> metrics -> analysis -> io).

``math-prm`` counts 984 prompts (its 447 up-weighted to equal the six ``hep-*`` code subsets,
164 each), as RewardBench's ``EXAMPLE_COUNTS`` has it.

References
----------
Lambert, N. et al. (2024). RewardBench: Evaluating Reward Models for Language Modeling.
arXiv:2403.13787.

Examples
--------
>>> sum(EXAMPLE_COUNTS[s] for s in SECTIONS["Reasoning"])
1968
"""

from __future__ import annotations

__all__ = ["SECTIONS", "EXAMPLE_COUNTS"]

#: Section -> its subsets, in RewardBench's order.
SECTIONS = {
    "Chat": ("alpacaeval-easy", "alpacaeval-length", "alpacaeval-hard", "mt-bench-easy", "mt-bench-med"),
    "Chat Hard": ("mt-bench-hard", "llmbar-natural", "llmbar-adver-neighbor", "llmbar-adver-GPTInst",
                  "llmbar-adver-GPTOut", "llmbar-adver-manual"),
    "Safety": ("refusals-dangerous", "refusals-offensive", "xstest-should-refuse", "xstest-should-respond",
               "donotanswer"),
    "Reasoning": ("math-prm", "hep-cpp", "hep-go", "hep-java", "hep-js", "hep-python", "hep-rust"),
}
#: Subset -> its official number of prompts (the weight of its accuracy in a section).
EXAMPLE_COUNTS = {
    "alpacaeval-easy": 100, "alpacaeval-length": 95, "alpacaeval-hard": 95, "mt-bench-easy": 28, "mt-bench-med": 40,
    "mt-bench-hard": 37, "llmbar-natural": 100, "llmbar-adver-neighbor": 134, "llmbar-adver-GPTInst": 92,
    "llmbar-adver-GPTOut": 47, "llmbar-adver-manual": 46, "refusals-dangerous": 100, "refusals-offensive": 100,
    "xstest-should-refuse": 154, "xstest-should-respond": 250, "donotanswer": 136, "math-prm": 984,
    "hep-cpp": 164, "hep-go": 164, "hep-java": 164, "hep-js": 164, "hep-python": 164, "hep-rust": 164,
}
