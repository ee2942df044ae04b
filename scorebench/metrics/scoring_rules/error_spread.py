r"""Error-spread score of an ensemble (Christensen, Moroz & Palmer 2015)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from scorebench.core.errors import InputError
from scorebench.core.registry import register
from scorebench.core.validation import describe_rows
from scorebench.metrics.scoring_rules._common import FAMILY
from scorebench.metrics.scoring_rules.inputs import ensemble_inputs

__all__ = ["error_spread_score"]


@register("error_spread_score", family=FAMILY, kind="ensemble", inputs=("y", "ens"),
          higher_is_better=False, bounds=(0.0, math.inf), proper="proper", per_row=True,
          citation="Christensen, Moroz & Palmer (2015), QJRMS 141:538-549",
          tested_against=('scoringrules 0.7 (numpy backend)', 1e-10))
def error_spread_score(obs: Any, ens: Any) -> np.ndarray:
    r"""Error-spread score: how well the ensemble spread (and skewness) matches the error.

    .. math:: \mathrm{ESS} = \big(s^2 - e^2 - e\, s\, g\big)^2, \qquad e = \bar x - y,

    with :math:`\bar x` the ensemble mean, :math:`s^2 = \frac{1}{M-1}\sum_i (x_i - \bar x)^2`
    and :math:`g = \frac{1}{(M-1)(M-2)} \sum_i \big((x_i - \bar x)/s\big)^3`, as
    scoringrules' ``error_spread_score`` (its skewness estimator lacks the factor
    :math:`M` of the usual adjusted sample skewness; kept for agreement). Proper for the
    first three moments of the forecast (Christensen et al. 2015). Needs at least 3
    members and a non-zero spread in every row.

    Parameters
    ----------
    obs : array_like, shape (...)
    ens : array_like, shape (..., M)

    Examples
    --------
    >>> float(error_spread_score(0.0, [-1.0, 0.0, 1.0]))
    1.0
    """
    obs_f, ens_f, batch = ensemble_inputs(obs, ens)
    m = ens_f.shape[1]
    if m < 3:
        raise InputError(f"ens: the error-spread score needs at least 3 members (its skewness term), got {m}")
    mean = ens_f.mean(axis=1)
    dev = ens_f - mean[:, None]
    s = np.sqrt((dev**2).sum(axis=1) / (m - 1))
    flat = s == 0
    if flat.any():
        raise InputError(f"ens: {describe_rows(np.flatnonzero(flat))} have all members equal (zero spread); "
                         "the skewness term of the error-spread score is undefined there")
    g = ((dev / s[:, None]) ** 3).sum(axis=1) / ((m - 1) * (m - 2))
    e = mean - obs_f
    return ((s**2 - e**2 - e * s * g) ** 2).reshape(batch)
