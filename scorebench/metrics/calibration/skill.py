"""Skill scores: a score relative to a reference forecast's score."""

from __future__ import annotations

from typing import Any

import numpy as np

from scorebench.core.errors import InputError
from scorebench.core.validation import as_float_array, broadcast_arrays, check_finite, describe_rows

__all__ = ["skill_score"]


def skill_score(score: Any, reference: Any, *, perfect: float = 0.0) -> float | np.ndarray:
    """Skill of a score relative to a reference forecast's score.

    .. math::

        \\mathrm{SS} = \\frac{S - S_{\\mathrm{ref}}}{S_{\\mathrm{perfect}} - S_{\\mathrm{ref}}}
        \\;=\\; 1 - \\frac{S}{S_{\\mathrm{ref}}} \\quad (S_{\\mathrm{perfect}} = 0),

    e.g. the Brier skill score against climatology or the CRPS skill score against a
    persistence forecast. 1 is a perfect forecast, 0 no better than the reference,
    negative worse. Works for negatively oriented scores (lower is better) and, with
    ``perfect`` set to the best attainable value, for positively oriented ones.

    Parameters
    ----------
    score, reference : float or array_like
        Mean scores of the forecast and of the reference (broadcast together).
    perfect : float, default 0.0
        Score of a perfect forecast.

    Returns
    -------
    float or ndarray
        A float for scalar inputs, otherwise an array of the broadcast shape.

    Raises
    ------
    InputError
        NaN or infinite scores, shapes that do not broadcast, or a reference equal to
        the perfect score (the skill is undefined).

    References
    ----------
    Murphy (1988), Skill scores based on the mean square error and their relationships
    to the correlation coefficient, Monthly Weather Review 116(12);
    Gneiting & Raftery (2007), JASA 102(477), section 2.3.

    Examples
    --------
    >>> skill_score(0.15, 0.25)
    0.4
    """
    s = as_float_array(score, "score")
    ref = as_float_array(reference, "reference")
    check_finite(s, "score")
    check_finite(ref, "reference")
    if isinstance(perfect, bool) or not isinstance(perfect, (int, float, np.floating)) or not np.isfinite(perfect):
        raise InputError(f"perfect: expected a finite number, got {perfect!r}")
    s, ref = broadcast_arrays(score=s, reference=ref)
    degenerate = ref == perfect
    if degenerate.any():
        where = f" in {describe_rows(degenerate)}" if degenerate.ndim else ""
        raise InputError(f"reference: equals the perfect score {perfect!r}{where}; the skill score is "
                         "undefined when the reference forecast is already perfect")
    result = (s - ref) / (perfect - ref)
    return float(result) if result.ndim == 0 else result
