r"""Item health: which items of a benchmark are broken, and the evidence for each verdict.

From a systems x items 0/1 matrix :math:`y_{ij}` (complete), with a unidimensional IRT model
fitted by :func:`scorebench.irt.fit` (abilities :math:`\hat\theta_i` by EAP, item curves
:math:`P_j(\theta)`), each item gets evidence columns and flags:

* **saturated** — :math:`\bar y_j \in \{0, 1\}` (every system right, or every system wrong):
  the item cannot separate any two systems.
* **discrimination** — the corrected item–total (rest-score) correlation
  :math:`r_j = \operatorname{corr}_i(y_{ij}, \sum_{k\ne j} y_{ik})` (classical test theory) and
  the IRT slope :math:`a_j`. Flags: ``negative_discrimination`` when :math:`r_j < 0`,
  ``low_discrimination`` when :math:`0 \le r_j < r_{\min}` (default 0.1).
* **misfit** — two item-fit statistics, each turned into a p-value and adjusted over the items
  by Benjamini–Hochberg (false discovery rate ``alpha``):

  - Orlando–Thissen :math:`S\text{-}X^2_j` (:func:`scorebench.irt.s_x2`), p from
    :math:`\chi^2_{\mathrm{df}}` (computed when the benchmark has at most ``sx2_max_items``
    items: its cost grows with the cube of the number of items);
  - the item log-likelihood statistic :math:`l_{z,j}`, Drasgow et al.'s (1985) :math:`l_z`
    (:func:`scorebench.irt.lz`) summed over the systems instead of the items,

    .. math::

        l_{z,j} = \frac{\sum_i [y_{ij}\log P_{ij} + (1-y_{ij})\log(1-P_{ij})] - E_j}{\sqrt{V_j}},

    with :math:`E_j = \sum_i P_{ij}\log P_{ij} + (1-P_{ij})\log(1-P_{ij})` and
    :math:`V_j = \sum_i P_{ij}(1-P_{ij})\log^2\frac{P_{ij}}{1-P_{ij}}` at
    :math:`P_{ij} = P_j(\hat\theta_i)`; one-sided p :math:`\Phi(l_{z,j})` (low values: answers the
    model does not explain).

  Flag ``misfit`` when the adjusted p of :math:`l_{z,j}` is below ``alpha``, or when that of
  S-X2 is and its RMSEA :math:`\sqrt{\max(X^2/\mathrm{df} - 1, 0)/(N - 1)}` exceeds
  ``rmsea_min`` (0.05, the usual limit of close fit): with thousands of systems S-X2 detects
  departures too small to matter.
* **likely mislabelled** — strong systems systematically wrong while weak ones are right.
  Systems are ranked by their accuracy on the whole benchmark; the top and bottom
  ``group_share`` of them are the strong and weak groups, with accuracies
  :math:`p^{s}_j, p^{w}_j` on item :math:`j`. Evidence: the gap :math:`p^{s}_j - p^{w}_j`, the
  one-sided hypergeometric (Fisher exact) p-value of "strong right less often than weak" and its
  BH adjustment. Fluid Benchmarking (Hofmann et al., 2025) reads a negative IRT discrimination
  :math:`a_j < 0` (stronger models less likely right) as the sign of a mislabelled item; the
  flag requires both :math:`a_j < 0` and a gap of at most :math:`-g` (``mislabel_gap``,
  default 0.2).
* **duplicate** — an item whose answers are identical, system by system, to an earlier item's
  (non-saturated, with at least ``duplicate_min_systems`` systems so that agreement is
  unlikely by chance) and whose agreement would have a chance of at most
  :math:`10^{-6}` (``duplicate_log10_p``) under conditional independence. Evidence:
  ``duplicate_of`` and ``log10_p_identical``, the log10
  probability that two items answered independently given ability agree on every system,
  :math:`\sum_i \log_{10}[p_{g(i)j}\,p_{g(i)k} + (1-p_{g(i)j})(1-p_{g(i)k})]`, with ability
  proxied by the decile :math:`g(i)` of the system's score on the other items and
  :math:`p_{gj}` the item's proportion right in that decile (the fitted IRT model cannot
  serve: a duplicated pair inflates both slopes until the pair's agreement looks certain).

References: Orlando, M., & Thissen, D. (2000). *Applied Psychological Measurement* 24, 50-64.
Drasgow, F., Levine, M. V., & Williams, E. A. (1985). *British Journal of Mathematical and
Statistical Psychology* 38, 67-86. Benjamini, Y., & Hochberg, Y. (1995). *JRSS B* 57, 289-300.
Hofmann, V., Heineman, D., Magnusson, I., et al. (2025). Fluid Language Model Benchmarking.
arXiv:2509.11106. Crocker, L., & Algina, J. (1986). *Introduction to Classical and Modern Test
Theory* (corrected item-total correlation).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import hypergeom, norm

from scorebench.core.errors import InputError
from scorebench.core.stats import benjamini_hochberg

__all__ = ["FLAGS", "item_health", "health_summary"]

#: The flags of :func:`item_health`, in the order they are listed.
FLAGS = ("saturated", "negative_discrimination", "low_discrimination", "misfit", "likely_mislabelled", "duplicate")


def _matrix(responses: Any) -> tuple[np.ndarray, pd.Index, pd.Index]:
    from scorebench.metrics.irt_kind import complete_response_matrix

    if isinstance(responses, pd.DataFrame) and responses.columns.duplicated().any():
        dup = sorted(map(str, set(responses.columns[responses.columns.duplicated()])))
        raise InputError(f"item health: duplicate item labels {dup[:5]}; each item must be one column")
    rm = complete_response_matrix(responses, "item health")
    values = rm.values
    if values.shape[1] < 3:
        raise InputError(f"item health: need at least 3 items, got {values.shape[1]}")
    return values, rm.systems, rm.items


def _rest_correlation(values: np.ndarray) -> np.ndarray:
    total = values.sum(axis=1, keepdims=True)
    rest = total - values
    yc = values - values.mean(axis=0)
    rc = rest - rest.mean(axis=0)
    den = np.sqrt((yc ** 2).sum(axis=0) * (rc ** 2).sum(axis=0))
    out = np.full(values.shape[1], np.nan)
    np.divide((yc * rc).sum(axis=0), den, out=out, where=den > 0)
    return out


def _item_lz(values: np.ndarray, params: np.ndarray, theta: np.ndarray) -> np.ndarray:
    from scorebench.irt.models import log_prob

    usable = np.isfinite(params).all(axis=1)
    out = np.full(values.shape[1], np.nan)
    if not usable.any():
        return out
    log_p, log_q = log_prob(params[usable], theta)  # (J_u, N)
    p = np.exp(log_p)
    y = values[:, usable].T
    l0 = (y * log_p + (1 - y) * log_q).sum(axis=1)
    e = (p * log_p + (1 - p) * log_q).sum(axis=1)
    v = (p * (1 - p) * (log_p - log_q) ** 2).sum(axis=1)
    z = np.full(v.shape, np.nan)
    np.divide(l0 - e, np.sqrt(v), out=z, where=v > 0)
    out[usable] = z
    return out


def _adjust(p: np.ndarray) -> np.ndarray:
    q = np.full(p.shape, np.nan)
    ok = np.isfinite(p)
    q[ok] = benjamini_hochberg(p[ok])
    return q


def _groups(values: np.ndarray, share: float) -> tuple[np.ndarray, np.ndarray]:
    n = values.shape[0]
    k = max(1, int(np.floor(share * n)))
    order = np.argsort(-values.mean(axis=1), kind="stable")  # strongest first; ties in input order
    return order[:k], order[n - k:]


def _duplicates(values: np.ndarray, items: pd.Index, saturated: np.ndarray,
                groups: int = 10) -> tuple[list[Any], np.ndarray]:
    dup_of: list[Any] = [None] * values.shape[1]
    log10_p = np.full(values.shape[1], np.nan)
    first: dict[bytes, int] = {}
    total = values.sum(axis=1)
    for j in range(values.shape[1]):
        if saturated[j]:
            continue
        key = values[:, j].astype(np.uint8).tobytes()
        if key not in first:
            first[key] = j
            continue
        k = first[key]
        dup_of[j] = items[k]
        rest = total - values[:, j] - values[:, k]
        band = np.searchsorted(np.quantile(rest, np.linspace(0, 1, groups + 1)[1:-1]), rest, side="right")
        agree = np.empty(len(rest))
        for g in np.unique(band):
            m = band == g
            pj, pk = values[m, j].mean(), values[m, k].mean()
            agree[m] = pj * pk + (1 - pj) * (1 - pk)
        log10_p[j] = float(np.log10(np.clip(agree, 1e-300, 1.0)).sum())
    return dup_of, log10_p


def _check_options(alpha: float, min_discrimination: float, mislabel_gap: float, group_share: float) -> None:
    for name, value, lo, hi in (("alpha", alpha, 0.0, 1.0), ("mislabel_gap", mislabel_gap, 0.0, 1.0),
                                ("group_share", group_share, 0.0, 0.5)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not lo < value <= hi:
            raise InputError(f"{name}: expected a number in ({lo:g}, {hi:g}], got {value!r}")
    if isinstance(min_discrimination, bool) or not isinstance(min_discrimination, (int, float)) \
            or not 0 <= min_discrimination < 1:
        raise InputError(f"min_discrimination: expected a number in [0, 1), got {min_discrimination!r}")


def item_health(responses: Any, *, model: str = "2pl", alpha: float = 0.05, min_discrimination: float = 0.1,
                mislabel_gap: float = 0.2, group_share: float = 1 / 3, sx2_max_items: int = 400,
                duplicate_min_systems: int = 50, duplicate_log10_p: float = -6.0, rmsea_min: float = 0.05,
                a_prior: tuple[float, float] | None = None,
                max_iter: int = 500) -> pd.DataFrame:
    """Item health report: one row per item with evidence columns and flags (see the module docstring).

    Parameters
    ----------
    responses : DataFrame, ndarray or ResponseMatrix
        Systems x items 0/1 answers (wide, or a long ``system``/``item``/``correct`` table); complete.
    model : str
        IRT model fitted for the slopes, abilities and fit statistics (``"1pl"``, ``"2pl"``, ...).
    alpha : float
        False discovery rate of the Benjamini–Hochberg adjustments.
    min_discrimination : float
        Rest-score correlations in ``[0, min_discrimination)`` are flagged ``low_discrimination``.
    mislabel_gap : float
        Strong-minus-weak accuracy at or below ``-mislabel_gap`` (with :math:`a < 0`) flags
        ``likely_mislabelled``.
    group_share : float
        Share of systems in each of the strong and weak groups.
    sx2_max_items : int
        S-X2 is computed only for benchmarks with at most this many items (NaN otherwise).
    duplicate_min_systems : int
        Identical answer columns count as duplicates only with at least this many systems.
    duplicate_log10_p : float
        Identical columns are flagged only when ``log10_p_identical`` is at most this (default:
        agreement with a chance below one in a million; near-saturated items agree by chance).
    rmsea_min : float
        Smallest S-X2 RMSEA that counts as misfit (besides significance).
    a_prior : (mean, sd), optional
        Normal prior on the IRT slopes (helps with few systems).
    max_iter : int
        EM iterations of the IRT fit.

    Returns
    -------
    DataFrame
        Indexed by item: ``p_correct``, ``r_rest``, ``a``, ``b``, ``infit``, ``outfit``,
        ``sx2``, ``sx2_df``, ``sx2_p``, ``sx2_rmsea``, ``sx2_q``, ``lz``, ``lz_p``, ``lz_q``, ``acc_strong``,
        ``acc_weak``, ``gap``, ``mislabel_p``, ``mislabel_q``, ``duplicate_of``,
        ``log10_p_identical``, one boolean column per flag in :data:`FLAGS`, and ``issues`` (the
        raised flags joined by ``", "``). ``attrs`` records the settings.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> theta = rng.normal(size=300)
    >>> b = np.linspace(-1.5, 1.5, 12)
    >>> y = (rng.random((300, 12)) < 1 / (1 + np.exp(-1.5 * (theta[:, None] - b)))).astype(float)
    >>> y[:, 3] = 1 - y[:, 3]          # a miskeyed item: the answers flipped
    >>> y[:, 7] = 1.0                  # an item everyone gets right
    >>> report = item_health(y)
    >>> report.loc[3, "issues"], report.loc[7, "issues"]
    ('negative_discrimination, likely_mislabelled', 'saturated')
    """
    from scorebench.irt import fit as irt_fit
    from scorebench.irt import s_x2

    _check_options(alpha, min_discrimination, mislabel_gap, group_share)
    values, systems, items = _matrix(responses)
    n, j_items = values.shape
    p_correct = values.mean(axis=0)
    saturated = (p_correct == 0) | (p_correct == 1)
    r_rest = _rest_correlation(values)
    frame = pd.DataFrame(values, index=systems, columns=items)
    priors = {"a": tuple(a_prior)} if a_prior else None
    fit = irt_fit(frame, model, priors=priors, max_iter=max_iter, warn=False)
    params = fit.params
    theta = fit.abilities["theta"].reindex(systems).to_numpy() / fit.theta_scale
    table = fit.items.reindex(items)
    out = pd.DataFrame({"p_correct": p_correct, "r_rest": r_rest}, index=pd.Index(items, name="item"))
    for col in ("a", "b", "infit", "outfit"):
        out[col] = table[col].to_numpy(dtype=np.float64) if col in table.columns else np.nan
    out[["sx2", "sx2_df", "sx2_p", "sx2_rmsea"]] = np.nan
    if j_items <= sx2_max_items and not saturated.all():
        keep = ~saturated
        sub_fit = fit if keep.all() else irt_fit(frame.loc[:, keep], model, priors=priors, max_iter=max_iter,
                                                 warn=False)
        sx = s_x2(sub_fit, frame.loc[:, keep])
        out.loc[items[keep], ["sx2", "sx2_df", "sx2_p", "sx2_rmsea"]] = sx[["S_X2", "df", "p", "RMSEA"]].to_numpy()
    out["sx2_q"] = _adjust(out["sx2_p"].to_numpy())
    lz = _item_lz(values, params, theta)
    out["lz"] = lz
    out["lz_p"] = norm.cdf(lz)
    out["lz_q"] = _adjust(out["lz_p"].to_numpy())
    strong, weak = _groups(values, group_share)
    k = len(strong)
    right_s = values[strong].sum(axis=0)
    right_w = values[weak].sum(axis=0)
    out["acc_strong"] = right_s / k
    out["acc_weak"] = right_w / k
    out["gap"] = out["acc_strong"] - out["acc_weak"]
    # P(X <= right_s), X ~ Hypergeom(2k balls, right_s + right_w marked, k drawn): Fisher's exact, one-sided
    out["mislabel_p"] = hypergeom.cdf(right_s, 2 * k, right_s + right_w, k)
    out["mislabel_q"] = _adjust(out["mislabel_p"].to_numpy())
    dup_of, log10_p = (_duplicates(values, items, saturated) if n >= duplicate_min_systems
                       else ([None] * j_items, np.full(j_items, np.nan)))
    out["duplicate_of"] = pd.Series(dup_of, index=out.index, dtype=object)
    out["log10_p_identical"] = log10_p
    out["saturated"] = saturated
    out["negative_discrimination"] = ~saturated & (r_rest < 0)
    out["low_discrimination"] = ~saturated & (r_rest >= 0) & (r_rest < min_discrimination)
    sx2_misfit = (out["sx2_q"] < alpha).to_numpy() & (out["sx2_rmsea"] > rmsea_min).to_numpy()
    out["misfit"] = sx2_misfit | (out["lz_q"] < alpha).to_numpy()
    out["likely_mislabelled"] = (out["a"] < 0).to_numpy() & (out["gap"] <= -mislabel_gap).to_numpy()
    out["duplicate"] = (out["duplicate_of"].notna().to_numpy()
                        & (out["log10_p_identical"] <= duplicate_log10_p).to_numpy())
    flag_frame = out[list(FLAGS)]
    out["issues"] = [", ".join(f for f, on in zip(FLAGS, row) if on) for row in flag_frame.itertuples(index=False)]
    out.attrs.update({"model": model, "alpha": alpha, "min_discrimination": min_discrimination,
                      "mislabel_gap": mislabel_gap, "rmsea_min": rmsea_min, "group_share": group_share, "n_systems": n,
                      "n_items": j_items, "group_size": k, "sx2": bool(j_items <= sx2_max_items),
                      "duplicates_checked": bool(n >= duplicate_min_systems), "converged": bool(fit.converged)})
    return out


def health_summary(report: pd.DataFrame) -> pd.DataFrame:
    """Count and share of items per flag of an :func:`item_health` report.

    Examples
    --------
    >>> r = pd.DataFrame({f: [True, False] for f in FLAGS})
    >>> health_summary(r)["items"].tolist()
    [1, 1, 1, 1, 1, 1, 1]
    """
    missing = [f for f in FLAGS if f not in report.columns]
    if missing:
        raise InputError(f"health_summary: not an item health report (missing {missing})")
    n = len(report)
    rows = [{"flag": f, "items": int(report[f].sum()), "share": float(report[f].mean()) if n else np.nan}
            for f in FLAGS]
    any_flag = report[list(FLAGS)].any(axis=1)
    rows.append({"flag": "any", "items": int(any_flag.sum()), "share": float(any_flag.mean()) if n else np.nan})
    return pd.DataFrame(rows)
