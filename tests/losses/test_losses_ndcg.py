"""NeuralSort and NeuralNDCG: allRank agreement, exact-NDCG limit, padding anywhere, gradients, training."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from scorebench.core.errors import InputError  # noqa: E402
from scorebench.losses import (NeuralNDCG, neural_ndcg, neural_sort, relaxed_sort,  # noqa: E402
                               sinkhorn_scaling, stochastic_neural_sort)

_spec = importlib.util.spec_from_file_location("_allrank_reference",
                                               Path(__file__).parents[1] / "_allrank_reference.py")
_ref = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_ref)
allrank_neural_ndcg = _ref.allrank_neural_ndcg

F64 = torch.float64


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    # tiny tensors: on a shared machine torch's thread pool costs far more than it gives
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def exact_ndcg(scores: np.ndarray, labels: np.ndarray, k: int | None, gain: str, pad: float = -1) -> np.ndarray:
    """Exact NDCG@k per list (numpy, written here): sort by score, padded items dropped."""
    out = []
    for s, y in zip(scores, labels):
        keep = y != pad
        s, y = s[keep], y[keep]
        g = 2.0 ** y - 1.0 if gain == "exponential" else y
        cut = len(y) if k is None else min(k, len(y))
        d = 1.0 / np.log2(np.arange(2, cut + 2))
        dcg = (g[np.argsort(-s, kind="stable")][:cut] * d).sum()
        idcg = (np.sort(g)[::-1][:cut] * d).sum()
        out.append(dcg / idcg if idcg > 0 else 0.0)
    return np.array(out)


def random_batch(seed: int, batch: int = 5, n: int = 7, pad_end: int = 2):
    g = torch.Generator().manual_seed(seed)
    scores = torch.randn(batch, n, generator=g, dtype=F64)
    labels = torch.randint(0, 4, (batch, n), generator=g).to(F64)
    labels[0, n - pad_end:] = -1  # padding at the end of some lists (where allRank is right)
    labels[2, n - 1] = -1
    return scores, labels


# --- NeuralSort ---------------------------------------------------------------------------


def test_neural_sort_rows_are_distributions_and_converge_to_the_sorting_permutation():
    s = torch.tensor([[0.3, -1.0, 2.0, 0.9]], dtype=F64)
    P = neural_sort(s, temperature=1.0)
    assert torch.allclose(P.sum(-1), torch.ones(1, 4, dtype=F64))
    hard = neural_sort(s, temperature=1e-4)
    expected = torch.zeros(4, 4, dtype=F64)
    expected[torch.arange(4), torch.argsort(s[0], descending=True)] = 1.0
    assert torch.allclose(hard[0], expected, atol=1e-12)


def test_sinkhorn_makes_the_relaxed_matrix_doubly_stochastic():
    s = torch.randn(3, 6, generator=torch.Generator().manual_seed(1), dtype=F64)
    P = neural_sort(s, temperature=2.0, sinkhorn_iters=500, sinkhorn_tol=1e-10)
    assert torch.allclose(P.sum(-1), torch.ones(3, 6, dtype=F64), atol=1e-9)
    assert torch.allclose(P.sum(-2), torch.ones(3, 6, dtype=F64), atol=1e-9)
    # the factored form equals explicit alternating normalisation of the full matrix
    K = neural_sort(s, temperature=2.0)
    M = K.clone()
    for _ in range(7):
        M = M / M.sum(-2, keepdim=True)
        M = M / M.sum(-1, keepdim=True)
    assert torch.allclose(neural_sort(s, temperature=2.0, sinkhorn_iters=7, sinkhorn_tol=0), M, atol=1e-14)
    assert torch.allclose(sinkhorn_scaling(K, max_iter=7, tol=0), M, atol=1e-14)


def test_neural_sort_padding_anywhere_uses_leading_ranks():
    s = torch.tensor([[0.5, 9.0, -0.2, 1.5]], dtype=F64)
    mask = torch.tensor([[True, False, True, True]])
    P = neural_sort(s, temperature=0.5, mask=mask, sinkhorn_iters=50)
    assert torch.all(P[0, 3] == 0) and torch.all(P[0, :, 1] == 0)  # 3 real items: rank 4 and item 1 empty
    alone = neural_sort(s[:, [0, 2, 3]], temperature=0.5, sinkhorn_iters=50)
    assert torch.allclose(P[0][:3][:, [0, 2, 3]], alone[0], atol=1e-12)


def test_stochastic_neural_sort_is_seeded_and_samples_around_the_deterministic_sort():
    s = torch.tensor([[0.0, 1.0, 3.0]], dtype=F64)
    a = stochastic_neural_sort(s, n_samples=8, generator=torch.Generator().manual_seed(3))
    b = stochastic_neural_sort(s, n_samples=8, generator=torch.Generator().manual_seed(3))
    c = stochastic_neural_sort(s, n_samples=8, generator=torch.Generator().manual_seed(4))
    assert a.shape == (8, 1, 3, 3) and torch.equal(a, b) and not torch.equal(a, c)
    tiny = stochastic_neural_sort(s, n_samples=4, beta=1e-6, generator=torch.Generator().manual_seed(0))
    assert torch.allclose(tiny, neural_sort(s).expand_as(tiny), atol=1e-5)


# --- NeuralNDCG against allRank's definitions ----------------------------------------------


@pytest.mark.parametrize("variant", ["standard", "transposed"])
@pytest.mark.parametrize("k", [None, 3])
@pytest.mark.parametrize("temperature", [0.3, 1.0])
def test_neural_ndcg_matches_allrank_with_exponential_gain(variant, k, temperature):
    scores, labels = random_batch(seed=7)
    ours = neural_ndcg(scores, labels, k=k, temperature=temperature, variant=variant)
    theirs = allrank_neural_ndcg(scores, labels, k=k, temperature=temperature, transposed=variant == "transposed")
    assert ours.item() == pytest.approx(theirs.item(), rel=1e-8, abs=1e-9)


def test_neural_ndcg_standard_linear_gain_matches_allrank():
    scores, labels = random_batch(seed=8)
    ours = neural_ndcg(scores, labels, k=4, gain="linear")
    assert ours.item() == pytest.approx(allrank_neural_ndcg(scores, labels, k=4, exponential=False).item(), rel=1e-8)


def test_transposed_linear_gain_normalises_by_the_linear_ideal_unlike_allrank():
    # A perfect ranking has NDCG 1. allRank's transposed variant divides linear-gain DCG by the
    # exponential-gain ideal DCG, so it reports far less; we use the ideal under the same gain.
    labels = torch.tensor([[3.0, 2.0, 1.0, 0.0]], dtype=F64)
    scores = torch.tensor([[4.0, 3.0, 2.0, 1.0]], dtype=F64)
    ours = -neural_ndcg(scores, labels, gain="linear", variant="transposed", temperature=1e-3)
    theirs = -allrank_neural_ndcg(scores, labels, exponential=False, transposed=True, temperature=1e-3)
    assert ours.item() == pytest.approx(1.0, abs=1e-9)
    ideal_ratio = (3 + 2 / math.log2(3) + 1 / 2) / (7 + 3 / math.log2(3) + 1 / 2)
    assert theirs.item() == pytest.approx(ideal_ratio, rel=1e-6)  # 0.507 here, not 1
    standard = -neural_ndcg(scores, labels, gain="linear", variant="standard", temperature=1e-3)
    assert standard.item() == pytest.approx(1.0, abs=1e-9)


def test_padding_anywhere_gives_the_unpadded_value_where_allrank_does_not():
    scores = torch.tensor([[0.2, 5.0, 0.1, 0.4, -3.0]], dtype=F64)
    labels = torch.tensor([[1.0, -1.0, 2.0, 0.0, -1.0]], dtype=F64)
    unpadded_s, unpadded_y = scores[:, [0, 2, 3]], labels[:, [0, 2, 3]]
    for variant in ("standard", "transposed"):
        for k in (None, 2):
            ours = neural_ndcg(scores, labels, variant=variant, k=k)
            alone = neural_ndcg(unpadded_s, unpadded_y, variant=variant, k=k)
            assert ours.item() == pytest.approx(alone.item(), abs=1e-12)
    wrong = allrank_neural_ndcg(scores, labels)
    assert abs(wrong.item() - neural_ndcg(unpadded_s, unpadded_y).item()) > 0.01


@pytest.mark.parametrize("variant", ["standard", "transposed"])
@pytest.mark.parametrize("gain", ["exponential", "linear"])
def test_padding_permutation_invariance_on_random_batches(variant, gain):
    g = torch.Generator().manual_seed(11)
    scores = torch.randn(6, 9, generator=g, dtype=F64)
    labels = torch.randint(0, 3, (6, 9), generator=g).to(F64)
    labels[torch.rand(6, 9, generator=g) < 0.3] = -1
    # a fixed Sinkhorn budget: the tolerance stop looks at the whole batch, so a list alone may stop earlier
    options = dict(variant=variant, gain=gain, k=5, reduction="none", sinkhorn_iters=30, sinkhorn_tol=0)
    base = neural_ndcg(scores, labels, **options)
    perm = torch.randperm(9, generator=g)
    moved = neural_ndcg(scores[:, perm], labels[:, perm], **options)
    assert torch.allclose(base, moved, atol=1e-12)
    for row in range(6):
        keep = labels[row] != -1
        alone = neural_ndcg(scores[row:row + 1, keep], labels[row:row + 1, keep], **options)
        assert base[row].item() == pytest.approx(alone.item(), abs=1e-12)


# --- the tau -> 0 limit is exact NDCG@k ----------------------------------------------------


@pytest.mark.parametrize("variant", ["standard", "transposed"])
@pytest.mark.parametrize("gain,k", [("exponential", None), ("exponential", 3), ("linear", 5)])
def test_converges_to_exact_ndcg_as_temperature_goes_to_zero(variant, gain, k):
    scores, labels = random_batch(seed=5, batch=6, n=8)
    exact = exact_ndcg(scores.numpy(), labels.numpy(), k, gain)
    errors = []
    for tau in (1.0, 0.1, 0.01, 1e-3, 1e-5):
        relaxed = -neural_ndcg(scores, labels, k=k, gain=gain, variant=variant, temperature=tau,
                               reduction="none").numpy()
        errors.append(np.abs(relaxed - exact).max())
    assert errors[-1] < 1e-9
    assert errors[0] > errors[-2] > errors[-1] or errors[-2] < 1e-9


def test_exact_limit_agrees_with_sklearn_ndcg_score():
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    scores, labels = random_batch(seed=9, batch=4, n=6, pad_end=0)
    labels[labels < 0] = 0.0  # no padding here
    labels[:, 0] = 3.0  # every list has a relevant item
    for gain, true in (("linear", labels.numpy()), ("exponential", 2.0 ** labels.numpy() - 1)):
        expected = sklearn_metrics.ndcg_score(true, scores.numpy(), k=4)
        relaxed = -neural_ndcg(scores, labels, k=4, gain=gain, temperature=1e-5).item()
        assert relaxed == pytest.approx(expected, abs=1e-9)


# --- gradients, reductions, stochastic variant, errors -------------------------------------


@pytest.mark.parametrize("variant", ["standard", "transposed"])
def test_gradcheck(variant):
    g = torch.Generator().manual_seed(2)
    scores = torch.randn(2, 4, generator=g, dtype=F64, requires_grad=True)
    labels = torch.tensor([[2.0, 0.0, 1.0, -1.0], [-1.0, 1.0, 3.0, 0.0]], dtype=F64)

    def fn(s):  # fixed Sinkhorn budget: a tolerance stop would change the function under perturbation
        return neural_ndcg(s, labels, k=3, temperature=0.7, variant=variant, sinkhorn_iters=10, sinkhorn_tol=0)

    assert torch.autograd.gradcheck(fn, (scores,), eps=1e-6, atol=1e-6)
    assert torch.autograd.gradcheck(lambda s: neural_sort(s, temperature=0.5), (scores,))


def test_reductions_and_lists_without_relevant_items():
    scores = torch.tensor([[0.1, 0.5, 0.3], [0.2, 0.1, 0.0]], dtype=F64)
    labels = torch.tensor([[1.0, 0.0, 2.0], [0.0, 0.0, -1.0]], dtype=F64)
    per_list = neural_ndcg(scores, labels, reduction="none")
    assert per_list[1].item() == 0.0
    assert neural_ndcg(scores, labels).item() == pytest.approx(per_list[0].item())  # mean over relevant lists
    assert neural_ndcg(scores, labels, reduction="sum").item() == pytest.approx(per_list.sum().item())
    nothing = neural_ndcg(scores, torch.zeros_like(labels))
    assert nothing.item() == 0.0


def test_stochastic_neural_ndcg_is_reproducible_and_near_deterministic_for_small_noise():
    scores, labels = random_batch(seed=3)
    a = neural_ndcg(scores, labels, stochastic=True, n_samples=16, generator=torch.Generator().manual_seed(0))
    b = neural_ndcg(scores, labels, stochastic=True, n_samples=16, generator=torch.Generator().manual_seed(0))
    assert a.item() == b.item()
    tiny = neural_ndcg(scores, labels, stochastic=True, beta=1e-7, n_samples=2,
                       generator=torch.Generator().manual_seed(0))
    assert tiny.item() == pytest.approx(neural_ndcg(scores, labels).item(), abs=1e-5)


def test_module_matches_function_and_float32_runs():
    scores, labels = random_batch(seed=4)
    module = NeuralNDCG(k=3, temperature=0.5, variant="transposed")
    assert module(scores, labels).item() == neural_ndcg(scores, labels, k=3, temperature=0.5,
                                                         variant="transposed").item()
    value32 = neural_ndcg(scores.float(), labels.float(), k=3)
    assert value32.dtype == torch.float32
    assert value32.item() == pytest.approx(neural_ndcg(scores, labels, k=3).item(), abs=1e-5)


@pytest.mark.parametrize("bad", [
    dict(variant="diagonal"), dict(gain="cubic"), dict(temperature=0.0), dict(k=0), dict(reduction="max"),
    dict(sinkhorn_iters=-1),
])
def test_bad_options_raise(bad):
    scores, labels = random_batch(seed=1)
    with pytest.raises(InputError):
        neural_ndcg(scores, labels, **bad)


def test_bad_inputs_raise():
    s = torch.zeros(2, 3, dtype=F64)
    with pytest.raises(InputError, match="shape"):
        neural_ndcg(s, torch.zeros(2, 4, dtype=F64))
    with pytest.raises(InputError, match="negative relevance"):
        neural_ndcg(s, torch.tensor([[0.0, -2.0, 1.0], [0.0, 0.0, 1.0]]))
    with pytest.raises(InputError, match="floating"):
        neural_ndcg(torch.zeros(2, 3, dtype=torch.int64), torch.zeros(2, 3))
    with pytest.raises(InputError, match="NaN"):
        neural_ndcg(torch.full((2, 3), math.nan), torch.zeros(2, 3))


def test_relaxed_sort_reports_sinkhorn_iterations():
    s = torch.randn(2, 5, generator=torch.Generator().manual_seed(0), dtype=F64)
    relaxed = relaxed_sort(s, sinkhorn_iters=200, sinkhorn_tol=1e-8)
    assert 1 <= relaxed.iterations < 200
    assert relaxed_sort(s, sinkhorn_iters=0).iterations == 0


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_runs_on_cuda_and_agrees_with_cpu():
    scores, labels = random_batch(seed=6)
    cpu = neural_ndcg(scores, labels, k=3, variant="transposed")
    gpu = neural_ndcg(scores.cuda(), labels.cuda(), k=3, variant="transposed")
    assert gpu.device.type == "cuda" and gpu.item() == pytest.approx(cpu.item(), rel=1e-9)


# --- a tiny training run ---------------------------------------------------------------------


def test_training_with_neural_ndcg_improves_exact_ndcg_at_10():
    rng = np.random.default_rng(0)
    n_queries, n_docs, dim = 48, 20, 8
    features = rng.normal(size=(n_queries, n_docs, dim))
    truth = rng.normal(size=dim)
    latent = features @ truth + 0.3 * rng.normal(size=(n_queries, n_docs))
    labels = np.digitize(latent, np.quantile(latent, [0.5, 0.75, 0.9])).astype(np.float64)  # grades 0..3
    labels[:, -3:] = -1  # padded tails
    x = torch.as_tensor(features)
    y = torch.as_tensor(labels)
    torch.manual_seed(0)
    model = torch.nn.Linear(dim, 1, dtype=F64)

    def ndcg10() -> float:
        with torch.no_grad():
            return float(exact_ndcg(model(x).squeeze(-1).numpy(), labels, 10, "exponential").mean())

    before = ndcg10()
    optimiser = torch.optim.Adam(model.parameters(), lr=0.1)
    loss_fn = NeuralNDCG(k=10, temperature=1.0)
    for _ in range(20):
        optimiser.zero_grad()
        loss = loss_fn(model(x).squeeze(-1), y)
        loss.backward()
        optimiser.step()
    after = ndcg10()
    assert after > before + 0.15  # about 0.72 -> 0.99 with this seed
    assert after > 0.9


def test_sinkhorn_backward_matches_autograd_through_the_full_matrix_loop():
    g = torch.Generator().manual_seed(12)
    scores = torch.randn(3, 6, generator=g, dtype=F64)
    mask = torch.rand(3, 6, generator=g) > 0.25
    weights = torch.randn(3, 6, 6, generator=g, dtype=F64)
    a = scores.clone().requires_grad_(True)
    (neural_sort(a, mask=mask, temperature=0.8, sinkhorn_iters=9, sinkhorn_tol=0) * weights).sum().backward()
    b = scores.clone().requires_grad_(True)
    P = neural_sort(b, mask=mask, temperature=0.8)  # row-stochastic, padded ranks and items zero
    for _ in range(9):
        P = P / P.sum(-2, keepdim=True).clamp_min(1e-10)
        P = P / P.sum(-1, keepdim=True).clamp_min(1e-10)
    (P * weights).sum().backward()
    assert torch.allclose(a.grad, b.grad, atol=1e-12)


hypothesis = pytest.importorskip("hypothesis")
st = pytest.importorskip("hypothesis.strategies")


@hypothesis.settings(max_examples=40, deadline=None, derandomize=True)
@hypothesis.given(
    data=st.lists(st.tuples(st.floats(-5, 5), st.sampled_from([-1.0, 0.0, 1.0, 2.0, 3.0])), min_size=1, max_size=9),
    variant=st.sampled_from(["standard", "transposed"]),
    gain=st.sampled_from(["exponential", "linear"]),
    k=st.sampled_from([None, 1, 3]),
    temperature=st.sampled_from([0.05, 1.0, 10.0]),
)
def test_property_value_is_minus_an_ndcg_and_padding_can_sit_anywhere(data, variant, gain, k, temperature):
    scores = torch.tensor([[s for s, _ in data]], dtype=F64)
    labels = torch.tensor([[y for _, y in data]], dtype=F64)
    options = dict(variant=variant, gain=gain, k=k, temperature=temperature, sinkhorn_iters=20, sinkhorn_tol=0,
                   reduction="none")
    value = neural_ndcg(scores, labels, **options)
    # within [-1, 0] up to how far Sinkhorn is from doubly stochastic (a convex mix of permutations);
    # nearly decomposable kernels (ties next to far-away scores) converge slowly, hence the slack
    converged = neural_ndcg(scores, labels, variant=variant, gain=gain, k=k, temperature=temperature)
    assert -1.0 - 1e-3 <= converged.item() <= 0.0
    keep = labels[0] != -1
    if keep.any():
        alone = neural_ndcg(scores[:, keep], labels[:, keep], **options)
        assert value.item() == pytest.approx(alone.item(), abs=1e-10)
    flipped = neural_ndcg(scores.flip(-1), labels.flip(-1), **options)
    assert flipped.item() == pytest.approx(value.item(), abs=1e-10)
