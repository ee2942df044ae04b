r"""Summed-score machinery: the Lord–Wingersky recursion, EAP-by-sum-score tables, S-X2 item fit.

**Lord–Wingersky.** For items with category probabilities :math:`P_{jk}(\theta)`, the
probability of summed score :math:`s` at :math:`\theta` is built item by item,

.. math::

    L^{(j)}_s(\theta) = \sum_{k=0}^{K_j} L^{(j-1)}_{s-k}(\theta)\,P_{jk}(\theta),
    \qquad L^{(0)}_0 = 1,

and integrated over the latent density on a grid (Lord & Wingersky, 1984; Thissen,
Pommerich, Billeaud & Williams, 1995, for polytomous items).

**EAP by sum score** (:func:`eap_sum_table`): :math:`E[\theta \mid s] = \int\theta L_s g /
\int L_s g` with its posterior SD, the observed and expected (:math:`N\int L_s g`) number of
systems with each score; the table's ``rxx`` is the empirical reliability of the sum-score
EAPs over the observed systems (R mirt's ``fscores(method="EAPsum")``).

**S-X2** (:func:`s_x2`; Orlando & Thissen, 2000; Kang & Chen, 2008 for polytomous items): for
each non-extreme summed score :math:`s` and category :math:`k` of item :math:`j`,
the expected proportion is

.. math::

    E_{jk}(s) = \frac{\int P_{jk}(\theta) L^{(-j)}_{s-k}(\theta) g(\theta)\,d\theta}
                     {\int L_s(\theta) g(\theta)\,d\theta},

where :math:`L^{(-j)}` omits item :math:`j`, and
:math:`S\text{-}X^2_j = \sum_s\sum_k N_s (O_{jk}(s) - E_{jk}(s))^2 / E_{jk}(s)`, with
:math:`\mathrm{df} = \sum_s (\text{possible categories at } s - 1) - (\text{item parameters})`
(minus the estimated latent variance for Rasch scalings, as mirt). Score groups whose
expected count in some cell is below ``mincell`` are merged with their neighbour towards the
middle of the score range (Orlando & Thissen's collapsing; R mirt's rule differs in detail for
polytomous items, so sparse tables can differ). RMSEA: :math:`\sqrt{\max(X^2/\mathrm{df} - 1,
0)/(N - 1)}`.

References: Lord, F. M., & Wingersky, M. S. (1984). *Applied Psychological Measurement* 8,
453-461. Orlando, M., & Thissen, D. (2000). Likelihood-based item-fit indices for dichotomous
item response theory models. *Applied Psychological Measurement* 24, 50-64. Kang, T., & Chen,
T. T. (2008). Performance of the generalized S-X2 item fit index for polytomous IRT models.
*Journal of Educational Measurement* 45, 391-406.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import chi2

from scorebench.core.errors import InputError
from scorebench.irt.reliability import empirical_reliability

__all__ = ["lord_wingersky", "eap_sum_table", "s_x2", "model_curves"]


def lord_wingersky(curves: list[np.ndarray]) -> np.ndarray:
    """Summed-score likelihoods :math:`L_s(\\theta_q)`, shape (S + 1, Q), from per-item
    category probabilities ``curves[j]`` of shape (K_j + 1, Q).

    Examples
    --------
    >>> import numpy as np
    >>> p = np.array([[0.5], [0.5]])
    >>> lord_wingersky([p, p]).ravel().tolist()
    [0.25, 0.5, 0.25]
    """
    Q = curves[0].shape[1] if curves else 1
    L = np.ones((1, Q))
    for P in curves:
        K = P.shape[0] - 1
        new = np.zeros((L.shape[0] + K, Q))
        for k in range(K + 1):
            new[k:k + L.shape[0]] += L * P[k]
        L = new
    return L


def model_curves(fit: Any, responses: Any = None) -> tuple[list[np.ndarray], np.ndarray, np.ndarray, np.ndarray, list[int]]:
    """Per-item category curves on a grid, the normalised prior weights, the responses and the
    number of estimated parameters of each item, for an :class:`IRTFit` or a ``PolyIRTFit``.

    Returns ``(curves, nodes, weights, values, n_item_params)``; ``values`` is (N, J) with
    integer scores. A latent variance estimated by the fit (Rasch scaling) adds one parameter,
    reported as ``n_item_params[-1]`` beyond the items (popped by the callers).
    """
    from scorebench.irt.polyfit import PolyIRTFit

    if isinstance(fit, PolyIRTFit):
        from scorebench.irt.polymodels import category_probs

        values = fit.values if responses is None else _as_values(responses, fit.items.index, ordinal=True)
        nodes = fit.nodes
        curves: list[np.ndarray] = [None] * len(fit.items)  # type: ignore[list-item]
        for (kind, K), idx in fit.layout.groups().items():
            P = category_probs(kind, fit.a[idx], fit.d[idx, :K], nodes)
            for x, j in enumerate(idx):
                curves[j] = P[x]
        own = {"2pl": lambda K: K + 1, "graded": lambda K: K + 1, "gpcm": lambda K: K + 1,
               "pcm": lambda K: K, "rsm": lambda K: 1}
        npar = [own[k](int(c) - 1) for k, c in zip(fit.layout.kinds, fit.layout.n_cat)]
        extra = 1 if any(k in ("pcm", "rsm") for k in fit.layout.kinds) else 0  # the shared slope
        log_w = -0.5 * nodes**2
    else:
        from scorebench.irt.models import get_model, prob

        if fit.params is None or np.isnan(fit.params).any():
            raise InputError("fit: some items have no estimates (constant answers); refit without them")
        if responses is None:
            raise InputError("responses: an IRTFit does not keep the data; pass the responses it was fitted to")
        values = _as_values(responses, fit.items.index, ordinal=False)
        nodes = np.linspace(-6.0, 6.0, 61 if values.shape[1] <= 50 else 241)
        P = prob(fit.params, nodes)
        curves = [np.vstack([1.0 - p, p]) for p in P]
        spec = get_model(fit.model)
        npar = [len(spec.free)] * len(curves)
        extra = 1 if spec.common_slope else 0
        sigma = fit.latent_sd / fit.theta_scale
        log_w = -0.5 * ((nodes - fit.latent_mean) / sigma) ** 2
    w = np.exp(log_w - log_w.max())
    w /= w.sum()
    return curves, nodes, w, values, npar + [extra]


def _as_values(responses: Any, items: pd.Index, *, ordinal: bool) -> np.ndarray:
    from scorebench.metrics.irt_kind import response_matrix

    rm = response_matrix(responses, ordinal=ordinal)
    if len(rm.items) != len(items) or not (isinstance(rm.items, pd.RangeIndex) or (rm.items == items).all()):
        raise InputError(f"responses: expected the {len(items)} fitted items as columns, in the fitted order")
    return rm.values


def complete_responses(values: np.ndarray, what: str) -> np.ndarray:
    """``values`` as integer categories, refusing missing answers (``what`` names the caller)."""
    if np.isnan(values).any():
        raise InputError(f"{what} needs complete data: {int(np.isnan(values).any(axis=1).sum())} system(s) "
                         "have missing answers; drop them (or items) first")
    return values.astype(int)


def eap_sum_table(fit: Any, responses: Any = None) -> pd.DataFrame:
    """EAP ability by summed score, posterior SD, observed and expected counts.

    Returns a DataFrame indexed by ``sum_score`` with columns ``theta``, ``se``,
    ``observed``, ``expected``, ``std_res`` (:math:`(O - E)/\\sqrt E`); ``attrs["rxx"]`` is the
    empirical reliability of the sum-score EAPs over the observed systems, and ``attrs["X2"]``,
    ``attrs["df"]``, ``attrs["p"]`` the Pearson test of the sum-score distribution (adjacent
    scores with expected counts below 1 merged, as mirt). ``theta`` is on the fit's reported
    scale.

    Examples
    --------
    >>> from scorebench.irt import fit, simulate_2pl
    >>> y = simulate_2pl(300, 6, seed=0)
    >>> t = eap_sum_table(fit(y, "2pl"), y)
    >>> list(t.index), bool(t["theta"].is_monotonic_increasing), t.attrs["df"]
    ([0, 1, 2, 3, 4, 5, 6], True, 6)
    """
    curves, nodes, w, values, _ = model_curves(fit, responses)
    values = complete_responses(values, "eap_sum_table")
    L = lord_wingersky(curves)
    scale = getattr(fit, "latent_sd", 1.0) if hasattr(fit, "layout") else getattr(fit, "theta_scale", 1.0)
    joint = L * w[None, :]
    ps = joint.sum(axis=1)
    eap = joint @ nodes / ps
    sd = np.sqrt(np.maximum(joint @ nodes**2 / ps - eap**2, 0.0))
    N = values.shape[0]
    obs = np.bincount(values.sum(axis=1), minlength=len(ps)).astype(float)
    exp_ = N * ps
    table = pd.DataFrame({"theta": eap * scale, "se": sd * scale, "observed": obs, "expected": exp_,
                          "std_res": (obs - exp_) / np.sqrt(exp_)},
                         index=pd.Index(np.arange(len(ps)), name="sum_score"))
    scores = values.sum(axis=1)
    table.attrs["rxx"] = empirical_reliability(eap[scores], sd[scores]) if N > 1 else float("nan")
    O, E = list(obs), list(exp_)
    while len(E) > 1 and min(E) < 1.0:  # mirt's collapseTotals: merge small cells upwards
        i = int(np.argmin(np.array(E) >= 1.0) if E[0] < 1.0 else np.flatnonzero(np.array(E) < 1.0)[0])
        j = i + 1 if i + 1 < len(E) else i - 1
        E[j] += E[i]
        O[j] += O[i]
        del E[i], O[i]
    X2 = float(sum((o - e) ** 2 / e for o, e in zip(O, E)))
    df = len(O) - 1
    table.attrs.update(X2=X2, df=df, p=float(chi2.sf(X2, df)) if df > 0 else float("nan"))
    return table


def _collapse(O: np.ndarray, E: np.ndarray, possible: np.ndarray, mincell: float):
    """Merge score groups (rows) with an expected count below ``mincell`` towards the middle."""
    O, E, possible = [list(x) for x in (O, E, possible)]
    while len(E) > 1:
        small = [bool(np.any(np.asarray(e)[np.asarray(p)] < mincell)) for e, p in zip(E, possible)]
        if not any(small):
            break
        i = small.index(True)
        mid = (len(E) - 1) / 2.0
        j = i + 1 if i < mid or i == 0 else i - 1
        j = min(max(j, 0), len(E) - 1)
        E[j] = np.asarray(E[j]) + np.asarray(E[i])
        O[j] = np.asarray(O[j]) + np.asarray(O[i])
        possible[j] = np.asarray(possible[j]) | np.asarray(possible[i])
        del E[i], O[i], possible[i]
    return [np.asarray(x) for x in O], [np.asarray(x) for x in E], [np.asarray(x) for x in possible]


def s_x2(fit: Any, responses: Any = None, *, mincell: float = 1.0) -> pd.DataFrame:
    """Orlando–Thissen S-X2 item fit for every item (see the module docstring).

    Parameters
    ----------
    fit : IRTFit or PolyIRTFit
    responses : optional
        The responses the fit was made on (needed for an ``IRTFit``, which keeps no data);
        complete data only.
    mincell : float
        Smallest expected count allowed in a cell before score groups are merged.

    Returns
    -------
    DataFrame indexed by item with ``S_X2``, ``df``, ``RMSEA``, ``p``.

    Examples
    --------
    Eight 2PL items whose slopes range from 0.3 to 3: under the 2PL no item misfits at the
    1% level; the Rasch model's common slope misfits the items far from it.

    >>> from scorebench.irt import fit, simulate_2pl
    >>> y = simulate_2pl(500, 8, seed=1, slopes=(0.3, 3.0))
    >>> table = s_x2(fit(y, "2pl"), y)
    >>> list(table.columns), table.index[table["p"] < 0.01].tolist()
    (['S_X2', 'df', 'RMSEA', 'p'], [])
    >>> rasch = s_x2(fit(y, "rasch"), y)
    >>> rasch.index[rasch["p"] < 0.01].tolist()
    [0, 2, 6, 7]
    """
    curves, nodes, w, values, npar = model_curves(fit, responses)
    extra = npar.pop()
    values = complete_responses(values, "s_x2")
    N, J = values.shape
    L = lord_wingersky(curves)
    S = L.shape[0] - 1
    denom = L @ w                                                         # P(s)
    scores = values.sum(axis=1)
    rows = np.arange(1, S)                                                 # non-extreme scores
    Ns = np.bincount(scores, minlength=S + 1)[rows].astype(float)
    out = np.full((J, 4), np.nan)
    for j in range(J):
        P = curves[j]
        K = P.shape[0] - 1
        Lm = lord_wingersky([curves[i] for i in range(J) if i != j])     # (S - K + 1, Q)
        E = np.zeros((len(rows), K + 1))
        for k in range(K + 1):
            s_minus = rows - k
            ok = (s_minus >= 0) & (s_minus < Lm.shape[0])
            E[ok, k] = (Lm[s_minus[ok]] * P[k][None, :]) @ w / denom[rows[ok]]
        possible = E > 0
        O = np.zeros((len(rows), K + 1))
        for x, s in enumerate(rows):
            sel = scores == s
            if sel.any():
                O[x] = np.bincount(values[sel, j], minlength=K + 1)[:K + 1]
        O_, E_, poss_ = _collapse(O, E * Ns[:, None], possible, mincell)
        stat = sum(float(((o - e)[p] ** 2 / e[p]).sum()) for o, e, p in zip(O_, E_, poss_))
        df = sum(int(p.sum()) - 1 for p in poss_) - npar[j] - extra
        if df <= 0:
            out[j] = [np.nan, max(df, 0), np.nan, np.nan]
            continue
        rmsea = np.sqrt(max(stat / df - 1.0, 0.0) / (N - 1))
        out[j] = [stat, df, rmsea, chi2.sf(stat, df)]
    table = pd.DataFrame(out, columns=["S_X2", "df", "RMSEA", "p"], index=fit.items.index)
    table["df"] = table["df"].astype(int)
    return table
