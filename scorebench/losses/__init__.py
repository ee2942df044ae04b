"""Differentiable (torch) counterparts of scorebench's metrics, for training.

Importing this package imports torch; ``import scorebench`` does not. The losses are also
listed in the metric registry (family ``"losses"``) through torch-free lazy wrappers.

* Relaxed sorting: :func:`neural_sort`, :func:`stochastic_neural_sort`, :func:`sinkhorn_scaling`.
* Listwise ranking on padded batches ``[batch, list_len]`` (label padding value anywhere in a
  list): :func:`neural_ndcg` / :class:`NeuralNDCG`, :func:`approx_ndcg`, :func:`listnet_loss`,
  :func:`listmle_loss`, :func:`ranknet_loss`, :func:`lambda_loss`, :func:`rcr_loss`.
* General Pair Weighting (metric learning): :class:`MultiSimilarityLoss`,
  :class:`MultiSimilarityMiner`, :class:`ContrastiveLoss`, :class:`TripletLoss`,
  :func:`gpw_pair_weights`.
* Confusion-matrix losses: :func:`anyloss` / :class:`AnyLoss`.
"""

from __future__ import annotations

from scorebench.losses.anyloss import ANYLOSS_METRICS, AnyLoss, SoftConfusion, anyloss, soft_confusion
from scorebench.losses.listwise import (LambdaLoss, ListMLE, ListNet, RankNet, RCRLoss, lambda_loss, listmle_loss,
                       listnet_loss, ranknet_loss, rcr_loss)
from scorebench.losses.ndcg import ApproxNDCG, NeuralNDCG, approx_ndcg, neural_ndcg
from scorebench.losses.neuralsort import RelaxedSort, neural_sort, relaxed_sort, sinkhorn_scaling, stochastic_neural_sort
from scorebench.losses.pair_weighting import (ContrastiveLoss, MinedPairs, MultiSimilarityLoss, MultiSimilarityMiner,
                             TripletLoss, contrastive_loss, gpw_pair_weights, multi_similarity_loss,
                             similarity_matrix, triplet_loss)

__all__ = [
    "neural_sort", "stochastic_neural_sort", "sinkhorn_scaling", "relaxed_sort", "RelaxedSort",
    "neural_ndcg", "NeuralNDCG", "approx_ndcg", "ApproxNDCG",
    "listnet_loss", "ListNet", "listmle_loss", "ListMLE", "ranknet_loss", "RankNet",
    "lambda_loss", "LambdaLoss", "rcr_loss", "RCRLoss",
    "multi_similarity_loss", "MultiSimilarityLoss", "MultiSimilarityMiner", "MinedPairs",
    "contrastive_loss", "ContrastiveLoss", "triplet_loss", "TripletLoss", "gpw_pair_weights",
    "similarity_matrix",
    "anyloss", "AnyLoss", "soft_confusion", "SoftConfusion", "ANYLOSS_METRICS",
]
