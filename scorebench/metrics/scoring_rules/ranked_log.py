r"""Ranked logarithmic score of probability forecasts over ordered classes.

The logarithmic counterpart of the ranked probability score: each threshold
:math:`y \le k` is scored with the log score of the cumulative forecast probability,

.. math:: \mathrm{RLS}(P, y) = -\sum_{k=1}^{K} \log\bigl|\tilde P_k + \tilde Y_k - 1\bigr|,
          \qquad \tilde P_k = \sum_{j \le k} P_j, \quad \tilde Y_k = \mathbb 1\{y \le k\},

i.e. :math:`-\log \tilde P_k` for thresholds at or above the outcome and
:math:`-\log(1 - \tilde P_k)` below it. Reference: Todter & Ahrens (2012), "Generalization of
the ignorance score: continuous ranked version and its decomposition", Monthly Weather
Review 140(6):2005-2017; scoringrules' ``rls_score``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from scorebench.core.docstrings import fill_doc
from scorebench.core.registry import register
from scorebench.metrics.scoring_rules._common import FAMILY, PROB_CLIP
from scorebench.metrics.scoring_rules.docs import SECTIONS
from scorebench.metrics.scoring_rules.inputs import multiclass_inputs

__all__ = ["ranked_log_score"]


@register("ranked_log_score", family=FAMILY, kind="multiclass", inputs=("y", "P"), higher_is_better=False,
          bounds=(0.0, math.inf), proper="strict", per_row=True,
          citation="Todter & Ahrens (2012), Monthly Weather Review 140(6):2005-2017",
          tested_against=(('scoringrules 0.7 (numpy backend)', 1e-12),
                            ('scipy (distributions / numerical integration)', 1e-12),))
def ranked_log_score(y: Any, P: Any) -> np.ndarray:
    r"""Ranked logarithmic score for ordered classes ``0 < 1 < ... < K-1`` (scoringrules' ``rls_score``).

    .. math:: \mathrm{RLS}(P, y) = -\sum_{k} \log\bigl|\tilde P_k + \mathbb 1\{y \le k\} - 1\bigr|

    Cumulative probabilities are clipped to ``[1e-15, 1 - 1e-15]`` before the logarithm, as
    for :func:`log_score`, so a forecast that rules the outcome out scores about 34.5 per
    threshold instead of infinity. The last threshold (:math:`\tilde P_K = 1`) adds 0.

    Parameters
    ----------
    %(ordinal_classes)s

    Examples
    --------
    >>> round(float(ranked_log_score([2], [[0.25, 0.25, 0.5]])[0]), 6)
    0.980829
    """
    idx, P = multiclass_inputs(y, P)
    k = P.shape[-1]
    cum = np.cumsum(P, axis=-1)[..., :-1]  # the last threshold contributes log 1 = 0
    at_or_above = np.arange(k - 1) >= idx[..., None]
    prob = np.clip(np.where(at_or_above, cum, 1.0 - cum), PROB_CLIP, 1.0)
    return -np.sum(np.log(prob), axis=-1)


fill_doc(ranked_log_score, **SECTIONS)
