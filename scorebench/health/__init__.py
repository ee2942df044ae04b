"""Benchmark health: can a benchmark separate the models it ranks, and which of its items are broken.

* :mod:`scorebench.health.signal` — signal, noise, SNR (Heineman et al., 2025), decision
  accuracy, monotonicity over checkpoints (Madaan et al., 2024), noisy sub-tasks.
* :mod:`scorebench.health.items` — the item health report: saturated items, negative or
  near-zero discrimination, IRT misfit (S-X2, item l_z) after Benjamini–Hochberg, likely
  mislabelled items, duplicate items.
"""

from __future__ import annotations

from scorebench.health.items import FLAGS, health_summary, item_health
from scorebench.health.signal import (decision_accuracy, monotonicity, relative_dispersion, relative_std, signal_noise,
                     signal_to_noise)

__all__ = ["FLAGS", "item_health", "health_summary", "signal_noise", "relative_dispersion", "relative_std",
           "signal_to_noise", "decision_accuracy", "monotonicity"]
