"""Registry entries for the differentiable losses of :mod:`scorebench.losses` (torch).

This module is torch-free: each registered function is a thin wrapper that imports
:mod:`scorebench.losses` (and so torch) only when it is called, converts the table's arrays
to float64 tensors, and returns numpy values. The losses are registered with
``family="losses"``, ``needs_torch=True`` and ``differentiable=True``; evaluating them on a
table reports the training objective of a fixed set of scores.

Table kind ``listwise``: one row per (query, item) with ``qid``, ``score`` and ``label``
(relevance >= 0). Each query becomes one unit: a row of the padded ``[queries, list_len]``
score and label matrices that the listwise losses take (labels padded with -1). The
listwise losses are per-query (``per_row=True``); AnyLoss reads the ``binary`` kind
(set-level). The pair-weighting losses (Multi-Similarity, contrastive, triplet) are
mini-batch training objectives over all pairs of a batch and are not registered: their value
on a whole table is neither a metric nor cheap (n x n pairs); use
:mod:`scorebench.losses` directly.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.core.registry import NO_EXTERNAL_REFERENCE, register
from scorebench.core.table_schema import Option
from scorebench.core.tables import Column, Inputs, unit_frame, start_table, numeric_column, register_kind
from scorebench.core.validation import describe_rows

__all__ = ["extract_listwise", "padded_lists", "PAD"]

PAD = -1.0
_FAMILY = "losses"
_KIND = "listwise"


def padded_lists(qid: np.ndarray, score: np.ndarray, label: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Group rows by ``qid`` (order of first appearance) into padded ``[Q, L]`` matrices.

    Returns the query ids, scores (padding 0) and labels (padding :data:`PAD`).

    Examples
    --------
    >>> q, s, y = padded_lists(np.array(["a", "b", "a"]), np.array([0.1, 0.2, 0.3]), np.array([1.0, 0.0, 2.0]))
    >>> q.tolist(), s.tolist(), y.tolist()
    (['a', 'b'], [[0.1, 0.3], [0.2, 0.0]], [[1.0, 2.0], [0.0, -1.0]])
    """
    codes, uniques = pd.factorize(pd.Series(qid), sort=False)
    position = pd.Series(codes).groupby(codes).cumcount().to_numpy()
    n_queries = len(uniques)
    width = int(position.max()) + 1 if len(position) else 0
    scores = np.zeros((n_queries, width))
    labels = np.full((n_queries, width), PAD)
    scores[codes, position] = score
    labels[codes, position] = label
    return np.asarray(uniques), scores, labels


@register_kind(_KIND, columns=(Column("qid", "label", "the query (list); one row per (query, item)"),
                              Column("score", "number", "the model's score of the item"),
                              Column("label", "number", "the item's relevance (>= 0)")),
               unit_column="qid")
def extract_listwise(df: pd.DataFrame, *, nan_policy: str = "raise") -> Inputs:
    """Scored items grouped into lists by query: padded score and label matrices."""
    df, _ = start_table(df, _KIND, ["qid", "score", "label"], nan_policy)
    score = numeric_column(df, "score")
    label = numeric_column(df, "label")
    negative = label < 0
    if negative.any():
        raise InputError(f"column 'label': negative relevance {label[negative][0]!r} in "
                         f"{describe_rows(negative, df.index)}; expected labels >= 0")
    groups = [c for c in ("system", "task") if c in df.columns]
    unit = df[groups + ["qid"]].astype(str).agg("\x1f".join, axis=1).to_numpy() if groups else df["qid"].to_numpy()
    _, scores, labels = padded_lists(unit, score, label)
    first = ~pd.Series(unit).duplicated().to_numpy()
    frame = unit_frame(df.loc[first], "qid")
    return Inputs(frame, {"scores": scores, "labels": labels}, key="qid")


# --- lazy torch wrappers -----------------------------------------------------------------


def _tensors(*arrays: Any):
    import torch

    return [torch.tensor(np.asarray(a, dtype=np.float64)) for a in arrays]


def _listwise(name: str, summary: str, **fixed: Any) -> Callable[..., np.ndarray]:
    def wrapper(scores: Any, labels: Any, **params: Any) -> np.ndarray:
        import torch

        from scorebench import losses

        s, y = _tensors(scores, labels)
        with torch.no_grad():
            values = getattr(losses, name)(s, y, padding_value=PAD, reduction="none", **fixed, **params)
        return values.numpy()

    wrapper.__name__ = name
    wrapper.__qualname__ = name
    wrapper.__doc__ = (f"{summary}\n\nPer-query values of :func:`scorebench.losses.{name}` on padded "
                       f"``[queries, list_len]`` matrices (labels padded with -1); imports torch on call.")
    return wrapper


_K = Option("k", int, None, "cut-off: only the top k ranks count (None: the whole list)")
_ALLRANK = ("allRank NeuralNDCG (re-derived in tests/_allrank_reference.py)", 1e-12)
_LISTWISE = [
    # name, registry name, summary, params, bounds, citation, tested against
    ("neural_ndcg", "neural_ndcg@k", "NeuralNDCG loss: minus the NeuralSort-relaxed NDCG@k of each query.",
     {"k": _K, "temperature": 1.0, "variant": "standard", "gain": "exponential"}, (-1.0, 0.0),
     "Pobrotyn & Białobrzeski (2021), NeuralNDCG, arXiv:2102.07831", _ALLRANK),
    ("approx_ndcg", "approx_ndcg", "ApproxNDCG loss: minus NDCG with sigmoid-smoothed ranks.",
     {"alpha": 1.0, "gain": "exponential"}, (-1.0, 0.0),
     "Qin, Liu & Li (2010), Information Retrieval 13(4)", NO_EXTERNAL_REFERENCE),
    ("listnet_loss", "listnet_loss", "ListNet loss: cross-entropy of label and score softmaxes per query.",
     {}, (0.0, math.inf), "Cao, Qin, Liu, Tsai & Li (2007), ICML", NO_EXTERNAL_REFERENCE),
    ("listmle_loss", "listmle_loss", "ListMLE loss: negative Plackett-Luce log-likelihood of the label order.",
     {}, (0.0, math.inf), "Xia, Liu, Wang, Zhang & Li (2008), ICML", NO_EXTERNAL_REFERENCE),
    ("ranknet_loss", "ranknet_loss", "RankNet loss: mean logistic loss over pairs with different labels.",
     {"sigma": 1.0}, (0.0, math.inf), "Burges et al. (2005), ICML", NO_EXTERNAL_REFERENCE),
    ("lambda_loss", "lambda_loss", "LambdaLoss: metric-weighted pairwise logistic loss (NDCG-Loss2 default).",
     {"weighting": "ndcg_loss2", "k": _K, "sigma": 1.0, "mu": 10.0, "gain": "exponential"},
     (0.0, math.inf), "Wang, Li, Golbandi, Bendersky & Najork (2018), CIKM",
     ("allRank's own LambdaLoss test values (float32)", 1e-6)),
    ("rcr_loss", "rcr_loss", "Regression-compatible ranking loss: sigmoid CE plus listwise CE on sigmoids.",
     {"alpha": 0.5}, (0.0, math.inf), "Bai et al. (2023), CIKM", NO_EXTERNAL_REFERENCE),
]

for _name, _registered, _summary, _params, _bounds, _citation, _tested in _LISTWISE:
    register(_registered, core=_listwise(_name, _summary), family=_FAMILY, kind=_KIND, inputs=("scores", "labels"),
             higher_is_better=False, bounds=_bounds, per_row=True, params=_params, needs_torch=True,
             differentiable=True, citation=_citation, tested_against=_tested)

@register("anyloss_value", aliases=("anyloss",),
          family=_FAMILY, kind="binary", inputs=("y", "p"), higher_is_better=False,
          bounds=(0.0, 2.0), per_row=False, params={"metric": "f1", "beta": 1.0, "amplifier": 73.0},
          needs_torch=True, differentiable=True,
          citation="Han, Dong & Kwon (2024), AnyLoss, KDD", tested_against=('scikit-learn', 1e-12))
def anyloss_value(y: Any, p: Any, *, metric: str = "f1", beta: float = 1.0, amplifier: float = 73.0) -> float:
    """AnyLoss: 1 - a confusion-matrix metric of sigmoid-sharpened probabilities; imports torch on call."""
    import torch

    from scorebench.losses import anyloss

    y_t, p_t = _tensors(y, p)
    with torch.no_grad():
        return float(anyloss(y_t, p_t, metric=metric, beta=beta, amplifier=amplifier))
