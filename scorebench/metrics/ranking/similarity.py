r"""Similarity of two rankings: rank-biased overlap (RBO) and Kendall's tau, per query.

:func:`rbo` compares two ranked lists of distinct items (possibly of different lengths,
possibly disjoint); :func:`compare_runs` applies RBO and Kendall's tau to every query two
TREC-style runs share, ordering each run as trec_eval does (score descending, ties by
document id descending).

RBO (Webber, Moffat & Zobel 2010) with persistence p weights the agreement
:math:`A_d = X_d / d` at depth d (:math:`X_d` = size of the overlap of the two top-d
prefixes) by :math:`(1-p)p^{d-1}`: :math:`\mathrm{RBO} = (1-p)\sum_{d \ge 1} p^{d-1} A_d`.
On finite lists, of lengths :math:`s \le l`, it is known only within bounds:

* ``min`` -- every unseen item disagrees (eq. 11, generalised to uneven lengths):
  :math:`(1-p)\sum_d p^{d-1} X^{\min}_d / d` with :math:`X^{\min}_d` the overlap of
  :math:`S_{:\min(d,s)}` and :math:`L_{:\min(d,l)}` (the tail in closed form,
  :math:`\sum_{d>l} p^d/d = -\ln(1-p) - \sum_{d \le l} p^d/d`);
* ``res`` -- the residual :math:`\mathrm{RBO_{max}} - \mathrm{RBO_{min}}` (eq. 12), where
  RBO_max lets every unseen item agree as early as possible:
  :math:`X^{\max}_d = X^{\min}_d + (d - s)` for :math:`s < d \le l` and
  :math:`\min(d, X_l + 2d - s - l)` beyond;
* ``ext`` -- the point estimate extrapolating the agreement seen (eq. 32):

  .. math::

      \mathrm{RBO_{ext}} = \frac{1-p}{p}\Big(\sum_{d=1}^{l} \frac{X_d}{d} p^d
      + \sum_{d=s+1}^{l} \frac{X_s (d-s)}{s\,d} p^d\Big)
      + \Big(\frac{X_l - X_s}{l} + \frac{X_s}{s}\Big) p^l .

Reference: Webber, Moffat & Zobel (2010), ACM TOIS 28(4), 'A similarity measure for
indefinite rankings'; Kendall (1938), Biometrika 30, 'A new measure of rank correlation'.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError

__all__ = ["rbo", "compare_runs", "RBO_VARIANTS"]

RBO_VARIANTS = ("ext", "min", "res", "max")


def _check_list(items: Any, name: str) -> list:
    if isinstance(items, (str, bytes)) or not isinstance(items, (Sequence, np.ndarray, pd.Series)):
        raise InputError(f"rbo: {name} must be a sequence of item ids in ranked order, got {type(items).__name__}")
    out = list(items)
    if len(set(out)) != len(out):
        seen, dup = set(), None
        for item in out:
            if item in seen:
                dup = item
                break
            seen.add(item)
        raise InputError(f"rbo: {name} repeats item {dup!r}; a ranking lists each item once")
    return out


def _overlaps(short: list, long: list) -> np.ndarray:
    """X_d for d = 1..l: overlap of short[:min(d, s)] and long[:d]."""
    s, l = len(short), len(long)
    pos_long = {item: i for i, item in enumerate(long)}
    pos_short = {item: i for i, item in enumerate(short)}
    # an item shared by both lists enters the overlap at depth max(rank in S, rank in L)
    enters = np.zeros(l + 1, dtype=np.int64)
    for item, i in pos_short.items():
        j = pos_long.get(item)
        if j is not None:
            enters[max(i, j) + 1] += 1
    del s
    return np.cumsum(enters)[1:].astype(np.float64)


def rbo(first: Sequence, second: Sequence, *, p: float = 0.9, variant: str = "ext") -> float:
    """Rank-biased overlap of two rankings (see the module docstring for the variants).

    Parameters
    ----------
    first, second : sequence
        Item ids in ranked order, each listed once; the lists may differ in length.
    p : float
        Persistence in (0, 1): the weight of the top d ranks is :math:`1 - p^d`.
    variant : {"ext", "min", "res", "max"}
        Extrapolated point estimate, lower bound, residual (max - min), upper bound.

    Returns
    -------
    float
        In [0, 1]; two empty lists score 1, one empty list 0 (ext), as the ``rbo`` package.

    Examples
    --------
    >>> round(rbo(list("abcdefg"), list("zcavwxy"), p=0.9), 4)
    0.2882
    >>> rbo(list("abc"), list("abc"), p=0.5, variant="min") <= 1.0
    True
    """
    if variant not in RBO_VARIANTS:
        raise InputError(f"rbo: variant must be one of {', '.join(RBO_VARIANTS)}, got {variant!r}")
    if isinstance(p, bool) or not isinstance(p, (int, float, np.floating)) or not 0.0 < float(p) < 1.0:
        raise InputError(f"rbo: persistence p must lie in (0, 1), got {p!r}")
    p = float(p)
    a, b = _check_list(first, "first"), _check_list(second, "second")
    short, long = (a, b) if len(a) <= len(b) else (b, a)
    s, l = len(short), len(long)
    if l == 0:
        return {"res": 0.0}.get(variant, 1.0)
    x = _overlaps(short, long)
    d = np.arange(1, l + 1, dtype=np.float64)
    pd_ = np.power(p, d)
    if variant == "ext":
        if s == 0:
            return 0.0
        xs, xl = x[s - 1], x[-1]
        tail = (xs * (d[s:] - s) / (s * d[s:]) * pd_[s:]).sum()
        return float((1 - p) / p * ((x / d * pd_).sum() + tail) + ((xl - xs) / l + xs / s) * p ** l)
    low = _rbo_min(x, d, pd_, p)
    if variant == "min":
        return low
    high = _rbo_max(x, s, l, p)
    return high if variant == "max" else high - low


def _rbo_min(x: np.ndarray, d: np.ndarray, pd_: np.ndarray, p: float) -> float:
    xl = x[-1]
    head = (x / d * pd_).sum()
    tail = xl * (-math.log1p(-p) - (pd_ / d).sum())  # unseen depths keep the overlap X_l
    return float((1 - p) / p * (head + tail))


def _rbo_max(x: np.ndarray, s: int, l: int, p: float) -> float:
    xl = x[-1]
    full = int(s + l - xl)  # from this depth on the prefixes can agree completely
    depth = np.arange(1, full + 1, dtype=np.float64)
    best = np.empty(full)
    best[:l] = x + np.maximum(depth[:l] - s, 0.0)
    best[l:] = np.minimum(depth[l:], xl + 2 * depth[l:] - s - l)
    return float((1 - p) * (np.power(p, depth - 1) * best / depth).sum() + p ** full)


def _kendall_tau(a: pd.Series, b: pd.Series) -> float:
    from scipy.stats import kendalltau

    if len(a) < 2:
        return math.nan
    return float(kendalltau(a.to_numpy(), b.to_numpy()).statistic)


def _ordered(run: pd.DataFrame, name: str) -> pd.DataFrame:
    missing = [c for c in ("qid", "docid", "score") if c not in run.columns]
    if missing:
        raise InputError(f"compare_runs: {name} lacks the column(s) {missing} (expected qid, docid, score)")
    out = run[["qid", "docid", "score"]].copy()
    out["qid"], out["docid"] = out["qid"].astype(str), out["docid"].astype(str)
    out["score"] = pd.to_numeric(out["score"], errors="coerce")
    if out["score"].isna().any():
        raise InputError(f"compare_runs: {name} has non-numeric or missing scores in column 'score'")
    dup = out.duplicated(["qid", "docid"])
    if dup.any():
        q, doc = out.loc[dup, ["qid", "docid"]].iloc[0]
        raise InputError(f"compare_runs: {name} lists document {doc!r} twice for query {q!r}")
    return out.sort_values(["qid", "score", "docid"], ascending=[True, False, False], kind="stable")


def compare_runs(run_a: pd.DataFrame, run_b: pd.DataFrame, *, p: float = 0.9, depth: int | None = None) -> pd.DataFrame:
    """Per-query similarity of two runs: RBO (ext, min, res) and Kendall's tau.

    Parameters
    ----------
    run_a, run_b : DataFrame
        Runs with columns ``qid``, ``docid``, ``score`` (as :func:`scorebench.io.trec.read_trec_run`
        gives); each ordered by score descending, ties by document id descending (trec_eval).
    p : float
        RBO persistence.
    depth : int, optional
        Compare only the top ``depth`` documents of each run.

    Returns
    -------
    DataFrame
        One row per query of either run: ``qid``, ``rbo_ext``, ``rbo_min``, ``rbo_res``,
        ``kendall_tau`` (tau-b of the two runs' scores over the documents both retrieved; NaN
        with fewer than two), ``n_common``. A query in only one run has RBO 0 (residual 1).

    Examples
    --------
    >>> import pandas as pd
    >>> a = pd.DataFrame({"qid": "1", "docid": list("abc"), "score": [3.0, 2.0, 1.0]})
    >>> b = pd.DataFrame({"qid": "1", "docid": list("acb"), "score": [3.0, 2.0, 1.0]})
    >>> compare_runs(a, b, p=0.5)[["rbo_ext", "kendall_tau"]].round(4).to_numpy().tolist()
    [[0.875, 0.3333]]
    """
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 1):
        raise InputError(f"compare_runs: depth must be a positive integer, got {depth!r}")
    a, b = _ordered(run_a, "run_a"), _ordered(run_b, "run_b")
    groups_a, groups_b = dict(tuple(a.groupby("qid", sort=False))), dict(tuple(b.groupby("qid", sort=False)))
    empty = a.iloc[:0]
    rows = []
    for qid in sorted(set(groups_a) | set(groups_b)):
        qa, qb = groups_a.get(qid, empty), groups_b.get(qid, empty)
        if depth is not None:
            qa, qb = qa.head(depth), qb.head(depth)
        la, lb = qa["docid"].tolist(), qb["docid"].tolist()
        common = qa.merge(qb, on="docid", suffixes=("_a", "_b"))
        rows.append({"qid": qid, "rbo_ext": rbo(la, lb, p=p) if la and lb else 0.0,
                     "rbo_min": rbo(la, lb, p=p, variant="min"), "rbo_res": rbo(la, lb, p=p, variant="res"),
                     "kendall_tau": _kendall_tau(common["score_a"], common["score_b"]), "n_common": len(common)})
    return pd.DataFrame(rows, columns=["qid", "rbo_ext", "rbo_min", "rbo_res", "kendall_tau", "n_common"])
