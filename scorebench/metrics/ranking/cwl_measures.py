r"""User-model measures of the C/W/L framework: ``inst``, ``insq``, ``bpm@k``, ``sdcg@k`` and
the NERR family (``nerr8@k``, ``nerr9@k``, ``nerr10``, ``nerr11``).

In C/W/L (Moffat, Bailey, Scholer & Thomas 2017; Azzopardi, Thomas & Moffat 2019) a user
reading rank i continues to rank i+1 with probability :math:`C_i`; the weight of rank i is

.. math::

    W_i = \frac{\prod_{j<i} C_j}{\sum_{m=1}^{N} \prod_{j<m} C_j}, \qquad
    \mathrm{EU} = \sum_{i=1}^{N} W_i\, g_i ,

the expected utility per document examined, which every measure here reports. Gains are
relevance grades scaled into [0, 1]: :math:`g = (\mathrm{clip}(r, r_{\min}, r_{\max}) -
r_{\min}) / (r_{\max} - r_{\min})` (``min_rel`` default 0, ``max_rel`` default the largest
grade of the qrels); documents the qrels do not judge gain 0 (cwl_eval's "worse case"), and
every list is padded with zero gains (or truncated) to ``depth`` ranks (cwl_eval's
``max_n``, 1000), which the normalisation of W depends on.

Reference: cwl_eval 1.0.12 (https://github.com/ireval/cwl), the C/W/L provider of
ir_measures; the per-measure citations are in each docstring.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from scorebench.core.errors import InputError
from scorebench.metrics.ranking._lists import RankedLists
from scorebench.metrics.ranking.measures import TREC_EVAL_TESTS, TREC_TESTED, check_k, measure

__all__ = ["inst", "insq", "bpm", "sdcg", "nerr8", "nerr9", "nerr10", "nerr11"]

_CWL = "cwl_eval 1.0.12 (Azzopardi, Thomas & Moffat 2019, SIGIR, 'cwl_eval: an evaluation tool for information retrieval')"


def _number(value: Any, name: str, what: str, *, low: float = 0.0, strict: bool = True) -> float:
    ok = not isinstance(value, bool) and isinstance(value, (int, float, np.integer, np.floating)) \
        and math.isfinite(float(value)) and (float(value) > low if strict else float(value) >= low)
    if not ok:
        raise InputError(f"{name}: {what} must be a finite number {'>' if strict else '>='} {low:g}, got {value!r}")
    return float(value)


def _gain_matrix(lists: RankedLists, name: str, depth: Any, min_rel: Any,
                 max_rel: Any) -> tuple[np.ndarray, np.ndarray]:
    """Scaled gains, one row per query, padded with zeros / truncated to ``depth`` ranks, and
    the ranks 1..depth (the i of the continuation probabilities)."""
    depth = check_k(depth, f"{name} depth")
    low = _number(min_rel, name, "min_rel", low=-math.inf)
    high = lists.max_relevance if max_rel is None else _number(max_rel, name, "max_rel", low=-math.inf)
    if not high > low:
        raise InputError(f"{name}: max_rel ({high!r}) must exceed min_rel ({low!r}); the qrels' top grade is "
                         f"{lists.max_relevance!r}")
    rel = np.where(np.isnan(lists.rel), low, np.maximum(lists.rel, 0.0))  # negative grades clip to 0, as cwl_eval
    gain = (np.clip(rel, low, high) - low) / (high - low)
    out = np.zeros((lists.n, depth))
    keep = lists.pos < depth
    out[lists.seg[keep], lists.pos[keep]] = gain[keep]
    return out, np.arange(1, depth + 1, dtype=np.float64)


def _target_gains(lists: RankedLists, name: str, T: Any, depth: Any, min_rel: Any,
                  max_rel: Any) -> tuple[float, np.ndarray, np.ndarray]:
    """The checked desired gain T, then :func:`_gain_matrix`'s gains and ranks (the T-based measures)."""
    t = _number(T, name, "T (the desired gain)")
    gains, i = _gain_matrix(lists, name, depth, min_rel, max_rel)
    return t, gains, i


def _insq_patience(i: np.ndarray, t: float) -> np.ndarray:
    """INSQ's continuation probability :math:`((i + 2T - 1)/(i + 2T))^2` at ranks ``i`` (INSQ, NERR eq. 11)."""
    return ((i + 2.0 * t - 1.0) / (i + 2.0 * t)) ** 2


def _expected_utility(gains: np.ndarray, cont: np.ndarray) -> np.ndarray:
    """Expected utility per document from continuation probabilities C (rows = queries)."""
    reach = np.ones_like(cont)
    if cont.shape[1] > 1:
        reach[:, 1:] = np.cumprod(cont[:, :-1], axis=1)
    return (reach * gains).sum(axis=1) / reach.sum(axis=1)


def _cut_at_k(lists: RankedLists, name: str, k: Any, depth: Any, min_rel: Any, max_rel: Any,
              cont: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    """Expected utility of a measure cut at rank k: continuation ``cont(gains, i)`` before
    rank ``k`` (the required cutoff), 0 from it on (SDCG@k, NERR eq. 8 and 9)."""
    k = check_k(k, name, required=True)
    gains, i = _gain_matrix(lists, name, depth, min_rel, max_rel)
    return _expected_utility(gains, np.broadcast_to(np.where(i < k, cont(gains, i), 0.0), gains.shape))


_SCALE = {"depth": 1000, "min_rel": 0.0, "max_rel": None}


@measure("inst", higher_is_better=True, bounds=(0.0, 1.0),
         params={"T": 1.0, **_SCALE},
         citation="Moffat, Bailey, Scholer & Thomas (2015), ADCS, 'INST: an adaptive metric for information "
                  "retrieval evaluation'; " + _CWL, tested_against=((TREC_EVAL_TESTS, 5e-05), ('ir_measures', 1e-12),))
def inst(lists: RankedLists, *, T: float = 1.0, depth: int = 1000, min_rel: float = 0.0,
         max_rel: float | None = None) -> np.ndarray:
    r"""INST, the adaptive user model of Moffat et al. (2015), as C/W/L expected utility.

    .. math::

        C_i = \left(\frac{i + T + T_i - 1}{i + T + T_i}\right)^2,\qquad
        T_i = T - \sum_{j \le i} g_j

    (T: the gain the user wants; see the module docstring for W, the gains and ``depth``).

    Examples
    --------
    >>> inst([[1, 0]], [[1]], depth=2).round(4)
    array([0.8])
    """
    t, gains, i = _target_gains(lists, "inst", T, depth, min_rel, max_rel)
    left = t - np.cumsum(gains, axis=1)  # T_i, gain still wanted after rank i
    return _expected_utility(gains, ((i + t + left - 1.0) / (i + t + left)) ** 2)


@measure("insq", higher_is_better=True, bounds=(0.0, 1.0),
         params={"T": 1.0, **_SCALE},
         citation="Moffat, Scholer & Thomas (2012), ADCS, 'Models and metrics: IR evaluation as a user "
                  "process'; " + _CWL, tested_against=TREC_TESTED)
def insq(lists: RankedLists, *, T: float = 1.0, depth: int = 1000, min_rel: float = 0.0,
         max_rel: float | None = None) -> np.ndarray:
    r"""INSQ, INST's gain-independent predecessor: :math:`C_i = ((i + 2T - 1)/(i + 2T))^2`.

    Examples
    --------
    >>> insq([[1, 0]], [[1]], depth=2).round(4)
    array([0.6923])
    """
    t, gains, i = _target_gains(lists, "insq", T, depth, min_rel, max_rel)
    cont = np.broadcast_to(_insq_patience(i, t), gains.shape)
    return _expected_utility(gains, cont)


@measure("bpm@k", higher_is_better=True, bounds=(0.0, 1.0),
         params={"k": None, "T": 1.0, **_SCALE},
         citation="Zhang, Liu, Li, Zhang, Xu & Ma (2017), SIGIR, 'Evaluating web search with a bejeweled "
                  "player model'; " + _CWL, tested_against=TREC_TESTED)
def bpm(lists: RankedLists, *, k: int | None = None, T: float = 1.0, depth: int = 1000, min_rel: float = 0.0,
        max_rel: float | None = None) -> np.ndarray:
    r"""Static Bejewelled Player Model: the user stops once the gain reaches T or after k
    documents, :math:`C_i = [\sum_{j \le i} g_j < T]\,[i < k]`; the value is the mean gain
    of the documents read.

    Examples
    --------
    >>> bpm([[0, 0, 1, 1]], [[1, 1]], k=3).round(4)
    array([0.3333])
    """
    k = check_k(k, "bpm@k", required=True)
    t, gains, i = _target_gains(lists, "bpm@k", T, depth, min_rel, max_rel)
    # static BPM: read on while both the gain (< T) and the document (< k) budgets last
    cont = ((np.cumsum(gains, axis=1) < t) & (i < k)).astype(np.float64)
    return _expected_utility(gains, cont)


@measure("sdcg@k", higher_is_better=True, bounds=(0.0, 1.0),
         params={"k": None, **_SCALE},
         citation="Moffat, Bailey, Scholer & Thomas (2017), ACM TOIS 35(3), 'Incorporating user expectations "
                  "and behavior into the measurement of search effectiveness'; " + _CWL + " NDCG-k", tested_against=TREC_TESTED)
def sdcg(lists: RankedLists, *, k: int | None = None, depth: int = 1000, min_rel: float = 0.0,
         max_rel: float | None = None) -> np.ndarray:
    r"""Scaled DCG at k: DCG@k over the DCG@k of k documents of full gain,

    .. math::

        \mathrm{SDCG@k} = \frac{\sum_{i \le k} g_i / \log_2(i+1)}{\sum_{i \le k} 1 / \log_2(i+1)},

    an NDCG that assumes enough unlabelled fully relevant documents exist (C/W/L with
    :math:`C_i = \log_2(i+1)/\log_2(i+2)` for i < k).

    Examples
    --------
    >>> sdcg([[1, 0]], [[1]], k=2).round(4)
    array([0.6131])
    """
    return _cut_at_k(lists, "sdcg@k", k, depth, min_rel, max_rel, lambda gains, i: np.log2(i + 1.0) / np.log2(i + 2.0))


_NERR = "Azzopardi, Mackenzie & Moffat (2021), ICTIR, 'ERR is not C/W/L: exploring the relationship between " \
        "expected reciprocal rank and other metrics'; " + _CWL


@measure("nerr8@k", higher_is_better=True, bounds=(0.0, 1.0),
         params={"k": None, **_SCALE}, citation=_NERR + " NERR eq. 8", tested_against=TREC_TESTED)
def nerr8(lists: RankedLists, *, k: int | None = None, depth: int = 1000, min_rel: float = 0.0,
          max_rel: float | None = None) -> np.ndarray:
    r"""Not-but-nearly ERR, eq. 8 (truncated cascade): :math:`C_i = 1 - g_i` for i < k, else 0.

    Examples
    --------
    >>> nerr8([[0, 1]], [[1]], k=2).round(4)
    array([0.5])
    """
    return _cut_at_k(lists, "nerr8@k", k, depth, min_rel, max_rel, lambda gains, i: 1.0 - gains)


@measure("nerr9@k", higher_is_better=True, bounds=(0.0, 1.0),
         params={"k": None, **_SCALE}, citation=_NERR + " NERR eq. 9", tested_against=TREC_TESTED)
def nerr9(lists: RankedLists, *, k: int | None = None, depth: int = 1000, min_rel: float = 0.0,
          max_rel: float | None = None) -> np.ndarray:
    r"""Not-but-nearly ERR, eq. 9 (cascade with a reciprocal-rank patience):
    :math:`C_i = \frac{i}{i+1}(1 - g_i)` for i < k, else 0.

    Examples
    --------
    >>> nerr9([[0, 1]], [[1]], k=2).round(4)
    array([0.3333])
    """
    return _cut_at_k(lists, "nerr9@k", k, depth, min_rel, max_rel, lambda gains, i: i / (i + 1.0) * (1.0 - gains))


@measure("nerr10", higher_is_better=True, bounds=(0.0, 1.0),
         params={"p": 0.9, **_SCALE}, citation=_NERR + " NERR eq. 10", tested_against=TREC_TESTED)
def nerr10(lists: RankedLists, *, p: float = 0.9, depth: int = 1000, min_rel: float = 0.0,
           max_rel: float | None = None) -> np.ndarray:
    r"""Not-but-nearly ERR, eq. 10 (cascade with RBP patience): :math:`C_i = p\,(1 - g_i)`.

    Examples
    --------
    >>> nerr10([[1]], [[1]], depth=1).round(4)
    array([1.])
    """
    p = _number(p, "nerr10", "persistence p")
    if p >= 1.0:
        raise InputError(f"nerr10: persistence p must lie in (0, 1), got {p!r}")
    gains, _ = _gain_matrix(lists, "nerr10", depth, min_rel, max_rel)
    return _expected_utility(gains, p * (1.0 - gains))


@measure("nerr11", higher_is_better=True, bounds=(0.0, 1.0),
         params={"T": 1.0, **_SCALE}, citation=_NERR + " NERR eq. 11/12", tested_against=('cwl_eval through ir_measures', 1e-12))
def nerr11(lists: RankedLists, *, T: float = 1.0, depth: int = 1000, min_rel: float = 0.0,
           max_rel: float | None = None) -> np.ndarray:
    r"""Not-but-nearly ERR with INSQ patience (cwl_eval ``NERReq11``; ir_measures ``NERR11``):
    :math:`C_i = ((i + 2T - 1)/(i + 2T))^2 (1 - g_i)`.

    Examples
    --------
    >>> nerr11([[1]], [[1]], depth=1).round(4)
    array([1.])
    """
    t, gains, i = _target_gains(lists, "nerr11", T, depth, min_rel, max_rel)
    return _expected_utility(gains, _insq_patience(i, t) * (1.0 - gains))
