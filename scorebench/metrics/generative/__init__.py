"""Generative-model metrics computed from features or class probabilities (float64).

========================  =====================================================================
metric                    what it measures
========================  =====================================================================
``fid``, ``sfid``         Fréchet distance of Gaussian fits (pooled / spatial features)
``mifid``                 FID divided by a memorisation penalty (Kaggle MiFID)
``fid_infinity``          FID extrapolated to infinite samples (Chong & Forsyth, 2020): its
                          interval covers the population distance, the plug-in FID's does not
``kid``                   unbiased MMD² with a cubic polynomial kernel over seeded subsets
``inception_score``       exp of the mean KL between p(y|x) and p(y), over seeded splits
``precision``/``recall``  k-NN manifold fidelity / diversity (Kynkäänniemi et al., k = 3)
``density``/``coverage``  k-NN density and coverage (Naeem et al., k = 5)
``vendi_score``           effective number of distinct samples (order q)
``great_score``           global robustness of a classifier from generated samples
========================  =====================================================================

Importing this package registers the metrics and the ``features`` table kind
(:mod:`scorebench.metrics.generative.kind`). Inputs may be plain arrays, mergeable
:class:`FeatureStats`, or features carrying an ``extractor`` fingerprint (from
:mod:`scorebench.models`); two inputs with different fingerprints are refused.
"""

from __future__ import annotations

from scorebench.metrics.generative.frechet import FIDResult, fid, fid_details, frechet_distance, memorization_distance, mifid, sfid
from scorebench.metrics.generative.fid_infinity import FIDInfinityResult, fid_infinity, fid_infinity_details
from scorebench.metrics.generative.great import great_score
from scorebench.metrics.generative.inception import ISResult, inception_score, inception_score_details
from scorebench.metrics.generative.kid import KIDResult, kid, kid_details, mmd2_unbiased
from scorebench.metrics.generative.manifold import PRDC, coverage, density, knn_radii, manifold_metrics, precision, recall
from scorebench.metrics.generative.stats import FeatureStats
from scorebench.metrics.generative.vendi import vendi_from_eigenvalues, vendi_score

__all__ = [
    "FeatureStats", "FIDResult", "KIDResult", "ISResult", "PRDC",
    "frechet_distance", "fid", "fid_details", "fid_infinity", "fid_infinity_details", "FIDInfinityResult", "sfid", "mifid", "memorization_distance",
    "kid", "kid_details", "mmd2_unbiased", "inception_score", "inception_score_details",
    "manifold_metrics", "knn_radii", "precision", "recall", "density", "coverage",
    "vendi_score", "vendi_from_eigenvalues", "great_score",
]
