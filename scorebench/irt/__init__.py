"""Item response theory: fit, score, inform and compress benchmarks of systems x items.

* :func:`fit` — 1PL / Rasch / 2PL / 3PL / 4PL by marginal ML (EM on an adaptive dense grid,
  PX-EM accelerated) or penalised joint ML; item SEs from the observed information;
  infit/outfit; log-likelihood, AIC, BIC; a ``converged`` flag and warnings.
* :meth:`IRTFit.score` — abilities of new systems against fixed item parameters (EAP/MAP/ML).
* :func:`fit_by_topic` — one model per topic with topic-wise ability profiles (MedIRT).
* :func:`fit_mirt` — multidimensional 2PL with a few factors.
* :func:`lz` — person fit (standardised log-likelihood of each system's answer pattern).
* :func:`empirical_reliability` — reliability of the ability estimates (mirt `empirical_rxx`).
* polytomous models (``fit(..., model="grm"|"gpcm"|"pcm"|"rsm"|[per item])``) for scores 0..K.
* :func:`s_x2` (Orlando–Thissen item fit), :func:`m2` (limited-information test fit, RMSEA),
  :func:`marginal_reliability`, :func:`eap_sum_table` (EAP by summed score).
* :func:`select` — benchmark compression: a small informative item subset that reconstructs
  full-benchmark scores, with cross-validated size and held-out RMSE.
* :func:`irt_estimate`, :func:`pirt_estimate`, :func:`gpirt_estimate` (:func:`gp_weight`) —
  tinyBenchmarks' estimators of a full score from a few answered items (Maia Polo et al., 2024).

NumPy is the default path; ``device="cpu"|"cuda"`` runs the E-step products in torch.
The submodules load on first use, so ``import scorebench.irt`` is cheap.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "fit": "api", "fit_by_topic": "api", "score": "api", "TopicFit": "api", "METHODS": "api",
    "select": "compress", "Selection": "compress", "informative_items": "compress",
    "adaptive_test": "adaptive", "adaptive_replay": "adaptive", "AdaptiveRun": "adaptive",
    "IRTFit": "result", "IRTWarning": "result", "Priors": "em",
    "MODELS": "models", "item_information": "models", "prob": "models",
    "score_abilities": "scoring", "response_matrix": "scorebench.metrics.irt_kind", "ResponseMatrix": "scorebench.metrics.irt_kind",
    "fit_mirt": "mirt", "MIRTFit": "mirt", "lz": "personfit", "empirical_reliability": "reliability",
    "PolyIRTFit": "polyfit", "s_x2": "sumscore", "eap_sum_table": "sumscore", "lord_wingersky": "sumscore",
    "m2": "limited", "marginal_reliability": "limited", "lz_poly": "polypersonfit",
    "irt_estimate": "tiny", "pirt_estimate": "tiny", "gpirt_estimate": "tiny", "gp_weight": "tiny",
    "ability_from_seen": "tiny", "ability_sandwich": "sandwich",
    "anchor_points": "tiny", "anchor_estimate": "tiny", "score_draws": "tiny", "complete_params": "tiny",
    "simulate_2pl": "simulate",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    target = _EXPORTS[name]
    module = import_module(target if "." in target else f"{__name__}.{target}")
    value = getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
