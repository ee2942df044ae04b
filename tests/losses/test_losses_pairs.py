"""General Pair Weighting losses: Multi-Similarity loss and miner against pytorch-metric-learning."""

from __future__ import annotations

import itertools

import pytest

torch = pytest.importorskip("torch")
pml_losses = pytest.importorskip("pytorch_metric_learning.losses")
pml_miners = pytest.importorskip("pytorch_metric_learning.miners")

from scorebench.core.errors import InputError  # noqa: E402
from scorebench.losses import (ContrastiveLoss, MultiSimilarityLoss, MultiSimilarityMiner,  # noqa: E402
                               TripletLoss, contrastive_loss, gpw_pair_weights, multi_similarity_loss,
                               similarity_matrix, triplet_loss)

F64 = torch.float64


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def batch(seed: int, n: int = 24, dim: int = 6, classes: int = 5):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, dim, generator=g, dtype=F64), torch.randint(0, classes, (n,), generator=g)


def pair_set(a, b):
    return set(zip(a.tolist(), b.tolist()))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("alpha,beta,base", [(2.0, 50.0, 0.5), (1.0, 10.0, 0.2)])
def test_ms_loss_value_and_gradient_match_pytorch_metric_learning(seed, alpha, beta, base):
    x, y = batch(seed)
    ours_x = x.clone().requires_grad_(True)
    theirs_x = x.clone().requires_grad_(True)
    ours = MultiSimilarityLoss(alpha=alpha, beta=beta, base=base)(ours_x, y)
    theirs = pml_losses.MultiSimilarityLoss(alpha=alpha, beta=beta, base=base)(theirs_x, y)
    assert ours.item() == pytest.approx(theirs.item(), rel=1e-10, abs=1e-12)
    ours.backward()
    theirs.backward()
    assert torch.allclose(ours_x.grad, theirs_x.grad, rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("seed", [0, 3, 4])
@pytest.mark.parametrize("epsilon", [0.1, 0.3])
def test_ms_miner_selects_the_same_pairs_as_pytorch_metric_learning(seed, epsilon):
    x, y = batch(seed, n=30, classes=4)
    ours = MultiSimilarityMiner(epsilon=epsilon)(x, y)
    a1, p, a2, n = pml_miners.MultiSimilarityMiner(epsilon=epsilon)(x, y)
    assert pair_set(ours.a1, ours.p) == pair_set(a1, p)
    assert pair_set(ours.a2, ours.n) == pair_set(a2, n)
    assert len(ours.a1) > 0 and len(ours.a2) > 0


def test_ms_loss_on_mined_pairs_matches_pytorch_metric_learning():
    x, y = batch(5, n=30, classes=4)
    mined = MultiSimilarityMiner()(x, y)
    ours = MultiSimilarityLoss()(x, y, pairs=mined)
    theirs = pml_losses.MultiSimilarityLoss()(x, y, indices_tuple=pml_miners.MultiSimilarityMiner()(x, y))
    assert ours.item() == pytest.approx(theirs.item(), rel=1e-10)
    assert ours.item() != pytest.approx(MultiSimilarityLoss()(x, y).item())


def test_ms_loss_empty_sets_contribute_zero_and_the_mean_runs_over_all_anchors():
    x, _ = batch(6, n=6)
    distinct = torch.arange(6)  # no positives: only negative terms
    per_anchor = multi_similarity_loss(x, distinct, reduction="none")
    S = similarity_matrix(x)
    off = ~torch.eye(6, dtype=torch.bool)
    expected = torch.stack([torch.log1p(torch.exp(50 * (S[i][off[i]] - 0.5)).sum()) / 50 for i in range(6)])
    assert torch.allclose(per_anchor, expected, rtol=1e-12)
    same = torch.zeros(6, dtype=torch.long)  # no negatives: only positive terms
    assert multi_similarity_loss(x, same).item() == pytest.approx(
        pml_losses.MultiSimilarityLoss()(x, same).item(), rel=1e-12)
    lone = torch.tensor([0, 0, 1, 1, 2, 3])
    values = multi_similarity_loss(x, lone, reduction="none")
    assert multi_similarity_loss(x, lone).item() == pytest.approx(values.mean().item())  # all 6 anchors


def test_gpw_weights_of_ms_loss_follow_the_closed_form():
    x, y = batch(7, n=12, classes=3)
    alpha, beta, base = 2.0, 50.0, 0.5
    w = gpw_pair_weights(x, y, alpha=alpha, beta=beta, base=base)
    S = similarity_matrix(x)
    same = y[:, None] == y[None, :]
    for i, j in itertools.product(range(12), range(12)):
        if i == j:
            assert w[i, j] == 0
            continue
        if same[i, j]:
            others = [k for k in range(12) if k != i and same[i, k]]
            expected = torch.exp(-alpha * (S[i, j] - base)) / (1 + torch.exp(-alpha * (S[i, others] - base)).sum())
        else:
            others = [k for k in range(12) if not same[i, k]]
            expected = torch.exp(beta * (S[i, j] - base)) / (1 + torch.exp(beta * (S[i, others] - base)).sum())
        assert w[i, j].item() == pytest.approx(expected.item(), rel=1e-9)


def test_gpw_weights_of_contrastive_and_triplet_losses():
    x, y = batch(8, n=10, classes=3)
    S = similarity_matrix(x)
    same = (y[:, None] == y[None, :]) & ~torch.eye(10, dtype=torch.bool)
    w = gpw_pair_weights(x, y, loss="contrastive", pos_margin=0.9, neg_margin=0.3)
    expected = (same & (S < 0.9)) | (~(y[:, None] == y[None, :]) & (S > 0.3))
    assert torch.equal(w, expected.to(F64))
    wt = gpw_pair_weights(x, y, loss="triplet", margin=0.2)
    for a, p in zip(*torch.nonzero(same, as_tuple=True)):
        active = sum(1 for n in range(10) if y[n] != y[a] and S[a, n] - S[a, p] + 0.2 > 0)
        assert wt[a, p].item() == active


def test_contrastive_and_triplet_toy_values_and_modules():
    x = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, 0.2]], dtype=F64)
    y = torch.tensor([0, 0, 1, 1])
    S = similarity_matrix(x)
    pos = [(0, 1), (1, 0), (2, 3), (3, 2)]
    neg = [(i, j) for i in range(4) for j in range(4) if y[i] != y[j]]
    expected = (sum(max(1 - S[i, j].item(), 0) for i, j in pos)
                + sum(max(S[i, j].item() - 0.5, 0) for i, j in neg)) / (len(pos) + len(neg))
    assert contrastive_loss(x, y).item() == pytest.approx(expected)
    assert ContrastiveLoss()(x, y).item() == pytest.approx(expected)
    triplets = [(a, p, n) for a, p in pos for n in range(4) if y[n] != y[a]]
    expected_t = sum(max(S[a, n].item() - S[a, p].item() + 0.1, 0) for a, p, n in triplets) / len(triplets)
    assert triplet_loss(x, y).item() == pytest.approx(expected_t)
    assert TripletLoss(margin=0.1)(x, y).item() == pytest.approx(expected_t)


def test_gradcheck_pair_losses():
    x, y = batch(9, n=8, dim=3, classes=3)
    x = x.requires_grad_(True)
    assert torch.autograd.gradcheck(lambda e: multi_similarity_loss(e, y, beta=10.0), (x,))
    assert torch.autograd.gradcheck(lambda e: multi_similarity_loss(e, y, similarity="dot"), (x,))
    assert torch.autograd.gradcheck(lambda e: contrastive_loss(e, y), (x,))
    assert torch.autograd.gradcheck(lambda e: triplet_loss(e, y, margin=0.3), (x,))


def test_bad_inputs_raise():
    x, y = batch(0, n=5)
    with pytest.raises(InputError, match="one label per embedding"):
        multi_similarity_loss(x, y[:3])
    with pytest.raises(InputError, match="floating"):
        multi_similarity_loss(x.long(), y)
    with pytest.raises(InputError):
        multi_similarity_loss(x, y, alpha=0)
    with pytest.raises(InputError):
        gpw_pair_weights(x, y, loss="lifted")
    with pytest.raises(InputError):
        MultiSimilarityMiner(epsilon=-1)
