"""Proper scoring rules: categorical, parametric (closed-form CRPS), ensemble, quantile,
multivariate and task-specific, as float64 numpy functions registered in the registry.

Every score here is a loss (lower is better), returned per row (per observation); the
score of a table is the mean of the rows. Axis conventions: ensemble members on the last
axis; multivariate ensembles ``(..., M, d)`` with members on axis -2 and variables on
axis -1; multiclass probabilities ``(..., K)`` with classes on the last axis.

Input rules shared by all functions: integers convert to float64 exactly (never
truncated); infinities raise :class:`~scorebench.core.errors.InputError`; ``NaN`` propagates to
the score of its row (table kinds apply ``nan_policy`` first); invalid parameters
(``sigma <= 0``, probabilities outside [0, 1], unsorted quantile levels, mismatched
shapes) raise :class:`~scorebench.core.errors.InputError` naming the argument and rows.
"""

from __future__ import annotations

from scorebench.metrics.scoring_rules.categorical import (GENERATORS, BregmanGenerator, bregman_score, brier_score,
                          brier_score_multiclass, capm_matrix, capm_score, log_score,
                          log_score_multiclass, rps, spherical_score)
from scorebench.metrics.scoring_rules.crps_closed import (crps_beta, crps_exponential, crps_gamma, crps_laplace, crps_logistic,
                          crps_lognormal, crps_mixnorm, crps_normal, crps_t, crps_uniform,
                          dawid_sebastiani_score, log_score_normal)
from scorebench.metrics.scoring_rules.crps_truncated import (crps_2pnormal, crps_clogistic, crps_cnormal, crps_ct, crps_gtclogistic,
                              crps_gtcnormal, crps_gtct, crps_tlogistic, crps_tnormal, crps_tt)
from scorebench.metrics.scoring_rules.crps_extreme import crps_2pexponential, crps_expm, crps_gev, crps_gpd
from scorebench.metrics.scoring_rules.crps_positive import crps_csg0, crps_loglaplace, crps_loglogistic
from scorebench.metrics.scoring_rules.crps_discrete import crps_binomial, crps_hypergeometric, crps_negbinom, crps_poisson
from scorebench.metrics.scoring_rules.crps_approx import crps_quadrature, crps_quantile, threshold_brier_score
from scorebench.metrics.scoring_rules.ranked_log import ranked_log_score
from scorebench.metrics.scoring_rules import log_scores
from scorebench.metrics.scoring_rules.log_scores import *  # noqa: F403  (log_score_<dist> for every closed form with a density)
from scorebench.metrics.scoring_rules.crps_ensemble import (crps_ensemble, dawid_sebastiani_ensemble, log_score_ensemble,
                            silverman_bandwidth, twcrps_ensemble)
from scorebench.metrics.scoring_rules.ipw import ipw_inverse_link, ipw_link, ipw_score
from scorebench.metrics.scoring_rules.multivariate import energy_score, variogram_score
from scorebench.metrics.scoring_rules.quantile import interval_score, pinball_loss, quantile_score, weighted_interval_score
from scorebench.metrics.scoring_rules.weighted import owcrps_ensemble, vrcrps_ensemble  # noqa: F401  (registers the weighted CRPS)
from scorebench.metrics.scoring_rules.kernel import gksmv_ensemble, gksuv_ensemble  # noqa: F401  (registers the Gaussian kernel scores)
from scorebench.metrics.scoring_rules.weighted_kernel import (owgksmv_ensemble, owgksuv_ensemble, twgksmv_ensemble,  # noqa: F401
                              twgksuv_ensemble, vrgksmv_ensemble, vrgksuv_ensemble)
from scorebench.metrics.scoring_rules.error_spread import error_spread_score  # noqa: F401  (registers it)
from scorebench.metrics.scoring_rules.weighted_mv import twenergy_score, twvariogram_score  # noqa: F401  (registers them)
from scorebench.metrics.scoring_rules.weighted_mv_outcome import (owenergy_score, owvariogram_score, vrenergy_score,  # noqa: F401
                                  vrvariogram_score)
from scorebench.metrics.scoring_rules.weighted_members import crps_ensemble_w, energy_score_w, variogram_score_w  # noqa: F401  (kinds + metrics)
from scorebench.metrics.scoring_rules.clogs import clogs_ensemble  # noqa: F401  (registers it)
from scorebench.metrics.scoring_rules.dss_mv import dawid_sebastiani_mv, dssmv_ensemble  # noqa: F401  (registers dssmv_ensemble)
from scorebench.metrics.scoring_rules.weighted_closed import (owcrps_logistic, owcrps_normal, owcrps_t, twcrps_logistic,  # noqa: F401
                              twcrps_normal, twcrps_t, vrcrps_logistic, vrcrps_normal, vrcrps_t)

__all__ = [
    "brier_score", "log_score", "brier_score_multiclass", "log_score_multiclass",
    "spherical_score", "rps", "BregmanGenerator", "GENERATORS", "bregman_score", "capm_matrix",
    "capm_score",
    "crps_normal", "crps_logistic", "crps_laplace", "crps_exponential", "crps_gamma",
    "crps_lognormal", "crps_uniform", "crps_beta", "crps_t", "crps_mixnorm",
    "log_score_normal", "dawid_sebastiani_score",
    "crps_gtcnormal", "crps_tnormal", "crps_cnormal", "crps_gtclogistic", "crps_tlogistic",
    "crps_clogistic", "crps_gtct", "crps_tt", "crps_ct", "crps_2pnormal",
    "crps_gev", "crps_gpd", "crps_expm", "crps_2pexponential", "crps_csg0", "crps_loglaplace",
    "crps_loglogistic", "crps_poisson", "crps_negbinom", "crps_binomial", "crps_hypergeometric",
    "crps_quantile", "crps_quadrature", "threshold_brier_score", *log_scores.__all__,
    "ranked_log_score",
    "crps_ensemble", "twcrps_ensemble", "log_score_ensemble", "dawid_sebastiani_ensemble",
    "owcrps_ensemble", "vrcrps_ensemble", "twcrps_normal", "owcrps_normal", "vrcrps_normal",
    "twcrps_logistic", "owcrps_logistic", "vrcrps_logistic", "twcrps_t", "owcrps_t", "vrcrps_t",
    "silverman_bandwidth",
    "pinball_loss", "quantile_score", "interval_score", "weighted_interval_score",
    "energy_score", "variogram_score",
    "ipw_score", "ipw_link", "ipw_inverse_link",
]
