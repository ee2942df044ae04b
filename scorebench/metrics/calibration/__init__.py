"""Calibration: binned, adaptive and smooth ECE, the Balance score, reliability diagrams,
the Murphy decomposition of the Brier score and skill scores.

Importing this package registers its metrics (family ``"calibration"``):

==========================  ==========  ==========================================
name                        kind        what
==========================  ==========  ==========================================
``ece``                     binary      binned ECE (``n_bins``, ``binning``)
``mce``                     binary      maximum calibration error
``l2_calibration_error``    binary      binned l2 error, debiased (Kumar et al.)
``adaptive_ece``            binary      ECE over equal-count bins
``smooth_ece``              binary      kernel ECE with a reflected Gaussian kernel
``balance_score``           binary      accuracy minus confidence (per row)
``brier_reliability``       binary      Murphy reliability term
``brier_resolution``        binary      Murphy resolution term
``ece_top_label``           multiclass  confidence (top-label) ECE
``classwise_ece``           multiclass  mean one-vs-rest ECE over classes
``balance_score_top_label`` multiclass  top-label Balance score (per row)
==========================  ==========  ==========================================
"""

from __future__ import annotations

from scorebench.metrics.calibration._common import BINNINGS, BinStats, bin_stats
from scorebench.metrics.calibration.balance import balance_score, balance_score_top_label
from scorebench.metrics.calibration.binned import (ReliabilityDiagram, adaptive_ece, classwise_ece, ece, ece_top_label, l2_calibration_error, mce,
                     reliability_diagram)
from scorebench.metrics.calibration.murphy import BrierDecomposition, brier_decomposition, brier_reliability, brier_resolution
from scorebench.metrics.calibration.skill import skill_score
from scorebench.metrics.calibration.smooth import smooth_ece, smooth_ece_at

__all__ = [
    "BINNINGS", "BinStats", "bin_stats", "ece", "mce", "l2_calibration_error", "adaptive_ece", "ece_top_label",
    "classwise_ece",
    "smooth_ece", "smooth_ece_at", "balance_score", "balance_score_top_label", "reliability_diagram",
    "ReliabilityDiagram", "brier_decomposition", "BrierDecomposition", "brier_reliability", "brier_resolution",
    "skill_score",
]
