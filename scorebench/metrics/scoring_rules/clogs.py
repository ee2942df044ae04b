r"""Censored and conditional likelihood scores of an ensemble's Gaussian KDE (Diks, Panchenko & van Dijk 2011).

With :math:`f` the Gaussian kernel density estimate of the members (bandwidth :math:`h`),
:math:`F` its CDF and the region of interest :math:`A = (a, b)`:

* censored likelihood (``cens=True``): :math:`-\log f(y)` for :math:`y \in A`, else
  :math:`-\log(1 - F(b) + F(a))` (the forecast's mass outside :math:`A`);
* conditional likelihood (``cens=False``): :math:`-\log f(y) + \log(F(b) - F(a))` for
  :math:`y \in A`, else 0.

As scoringrules' ``clogs_ensemble``. Every log is evaluated from log-densities and
log-CDFs with log-sum-exp over the members, so observations far from every member and
windows far in the tails give large finite scores, where the direct formula returns
``inf`` or ``-log 0``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from scorebench.core.lazy import lazy_module
from scorebench.core.errors import InputError
from scorebench.core.registry import register
from scorebench.core.table_schema import Option
from scorebench.core.validation import as_float_array
from scorebench.metrics.scoring_rules._common import FAMILY, chunk_slices
from scorebench.metrics.scoring_rules.crps_ensemble import kde_bandwidth
from scorebench.metrics.scoring_rules.crps_closed import log_ndtr_diff
from scorebench.metrics.scoring_rules.inputs import broadcast_rows, ensemble_inputs

special = lazy_module("scipy.special")

__all__ = ["clogs_ensemble"]

DIKS = "Diks, Panchenko & van Dijk (2011), J. Econometrics 163(2):215-230"


def _window(x: Any, name: str, batch: tuple[int, ...]) -> np.ndarray:
    arr = as_float_array(x, name)
    if np.isnan(arr).any():
        raise InputError(f"{name}: expected a number (or -inf/inf), got NaN")
    return broadcast_rows(arr, name, batch)


@register("clogs_ensemble", family=FAMILY, kind="ensemble", inputs=("y", "ens"),
          higher_is_better=False, bounds=(-math.inf, math.inf), proper=None, per_row=True,
          params={"a": Option("a", float, -math.inf, "lower end of the window"),
                  "b": Option("b", float, math.inf, "upper end of the window"),
                  "bandwidth": Option("bandwidth", float, None, "kernel bandwidth (None: Silverman's rule)"),
                  "cens": True},
          citation=DIKS + "; Silverman (1986)", tested_against=('scoringrules 0.7 (numpy backend)', 1e-10))
def clogs_ensemble(obs: Any, ens: Any, *, a: Any = -math.inf, b: Any = math.inf, bandwidth: Any = None,
                   cens: bool = True) -> np.ndarray:
    r"""Censored (or conditional) likelihood score of the Gaussian KDE of an ensemble, for the region ``(a, b)``.

    .. math:: \mathrm{CSL}(f, y) = -\mathbb 1\{y \in A\}\log f(y)
              - \mathbb 1\{y \notin A\}\log\bigl(1 - F(b) + F(a)\bigr),

    .. math:: \mathrm{CoLS}(f, y) = -\mathbb 1\{y \in A\}\bigl(\log f(y) - \log(F(b) - F(a))\bigr),

    with :math:`A = (a, b)` (open, as scoringrules),
    :math:`f(y) = \frac1M \sum_i \frac1h\varphi\bigl(\frac{y - x_i}{h}\bigr)` and
    :math:`F(z) = \frac1M\sum_i \Phi\bigl(\frac{z - x_i}{h}\bigr)`. With the whole line as
    :math:`A` both equal :func:`~scorebench.metrics.scoring_rules.crps_ensemble.log_score_ensemble`.
    The censored likelihood score is proper for densities (Diks et al. 2011); like the KDE
    log score, this plug-in estimate from a finite sample is not registered as proper.

    Parameters
    ----------
    obs : array_like, shape (...)
    ens : array_like, shape (..., M)
    a, b : float or array_like, shape (...)
        The region of interest, ``a < b`` (``-inf``/``inf`` for one-sided regions).
    bandwidth : float or array_like, shape (...), optional
        Kernel bandwidth(s) > 0; Silverman's rule
        (:func:`~scorebench.metrics.scoring_rules.crps_ensemble.silverman_bandwidth`, as
        scoringrules) by default.
    cens : bool, default True
        ``True``: censored likelihood; ``False``: conditional likelihood.

    References
    ----------
    Diks, C., Panchenko, V. & van Dijk, D. (2011). Likelihood-based scoring rules for
    comparing density forecasts in tails. *J. Econometrics* 163(2), 215-230.

    Examples
    --------
    >>> round(float(clogs_ensemble(0.0, [-1.0, 1.0], bandwidth=1.0)), 6)
    1.418939
    >>> round(float(clogs_ensemble(-3.0, [-1.0, 1.0], a=0.0, bandwidth=1.0)), 6)  # -log F(0)
    0.693147
    >>> float(clogs_ensemble(-3.0, [-1.0, 1.0], a=0.0, bandwidth=1.0, cens=False))
    0.0
    """
    if not isinstance(cens, (bool, np.bool_)):
        raise InputError(f"cens: expected True or False, got {cens!r}")
    obs_f, ens_f, batch = ensemble_inputs(obs, ens)
    lo, hi = _window(a, "a", batch), _window(b, "b", batch)
    if not (lo < hi).all():
        raise InputError(f"a, b: expected a < b in every row, got a={a!r}, b={b!r}")
    h = kde_bandwidth(bandwidth, ens_f, batch)
    m = ens_f.shape[-1]
    inside = (obs_f > lo) & (obs_f < hi)
    out = np.empty(obs_f.shape)
    with np.errstate(divide="ignore", invalid="ignore"):  # log 0 only in the branch np.where discards
        for sl in chunk_slices(out.size, 6 * 8 * m):
            out[sl] = _clogs_chunk(obs_f[sl], ens_f[sl], h[sl], lo[sl], hi[sl], inside[sl], cens)
    out[np.isnan(obs_f)] = np.nan
    return out.reshape(batch)


def _clogs_chunk(obs: np.ndarray, ens: np.ndarray, h: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                 inside: np.ndarray, cens: bool) -> np.ndarray:
    """Score of one chunk of rows (flattened inputs)."""
    m = ens.shape[-1]
    hh = h[:, None]
    z = (obs[:, None] - ens) / hh
    logf = special.logsumexp(-0.5 * z * z, axis=-1) - np.log(m * h) - 0.5 * math.log(2 * math.pi)
    za, zb = (lo[:, None] - ens) / hh, (hi[:, None] - ens) / hh
    if cens:  # log of the mass outside (a, b): F(a) + (1 - F(b))
        outside = special.logsumexp(np.concatenate([special.log_ndtr(za), special.log_ndtr(-zb)], axis=-1),
                                    axis=-1) - math.log(m)
        return np.where(inside, -logf, 0.0 - outside)  # 0.0 - x: no -0.0 for a window holding all mass
    mass = special.logsumexp(log_ndtr_diff(zb, za)[1], axis=-1) - math.log(m)
    return np.where(inside, mass - logf, 0.0)
