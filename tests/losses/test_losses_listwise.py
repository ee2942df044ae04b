"""ListNet, ListMLE, RankNet, LambdaLoss, RCR, ApproxNDCG and AnyLoss: definitions, padding, gradients, registry."""

from __future__ import annotations

import importlib.util
import itertools
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

torch = pytest.importorskip("torch")

import scorebench  # noqa: E402
from scorebench.core.errors import InputError  # noqa: E402
from scorebench.core.registry import metric_aliases  # noqa: E402
from scorebench.losses import (AnyLoss, ApproxNDCG, LambdaLoss, ListMLE, ListNet, RankNet, RCRLoss,  # noqa: E402
                               anyloss, approx_ndcg, lambda_loss, listmle_loss, listnet_loss, neural_ndcg,
                               ranknet_loss, rcr_loss, soft_confusion)

_spec = importlib.util.spec_from_file_location("_allrank_reference",
                                               Path(__file__).parents[1] / "_allrank_reference.py")
_ref = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_ref)

F64 = torch.float64
LISTWISE = [listnet_loss, listmle_loss, ranknet_loss, lambda_loss, approx_ndcg, rcr_loss]


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def padded_batch(seed: int, binary: bool = False):
    g = torch.Generator().manual_seed(seed)
    scores = torch.randn(5, 8, generator=g, dtype=F64)
    labels = torch.randint(0, 2 if binary else 4, (5, 8), generator=g).to(F64)
    labels[torch.rand(5, 8, generator=g) < 0.3] = -1
    labels[:, 0] = 1.0  # every list keeps a relevant item
    return scores, labels


# --- definitions, by brute force ------------------------------------------------------------


def test_listnet_is_softmax_cross_entropy():
    s = torch.tensor([[0.5, -1.0, 2.0]], dtype=F64)
    y = torch.tensor([[2.0, 0.0, 1.0]], dtype=F64)
    expected = -(torch.softmax(y, -1) * torch.log_softmax(s, -1)).sum()
    assert listnet_loss(s, y).item() == pytest.approx(expected.item())


def test_listmle_is_the_plackett_luce_negative_log_likelihood():
    s = torch.tensor([[0.3, 1.2, -0.4, 0.9]], dtype=F64)
    y = torch.tensor([[1.0, 3.0, 0.0, 2.0]], dtype=F64)
    w = torch.exp(s[0])
    order = [1, 3, 0, 2]
    likelihood = math.prod((w[order[i]] / w[order[i:]].sum()).item() for i in range(4))
    assert listmle_loss(s, y).item() == pytest.approx(-math.log(likelihood))
    # tied labels: positional order by default, a seeded shuffle when a generator is given
    tied = torch.tensor([[1.0, 1.0, 0.0, 0.0]], dtype=F64)
    a = listmle_loss(s, tied, generator=torch.Generator().manual_seed(0))
    b = listmle_loss(s, tied, generator=torch.Generator().manual_seed(0))
    assert a.item() == b.item()
    options = set()
    for first in itertools.permutations([0, 1]):
        for second in itertools.permutations([2, 3]):
            o = list(first) + list(second)
            options.add(round(-sum(math.log((w[o[i]] / w[o[i:]].sum()).item()) for i in range(4)), 10))
    assert round(a.item(), 10) in options


def test_ranknet_averages_logistic_loss_over_ordered_pairs():
    s = torch.tensor([[0.3, 1.2, -0.4]], dtype=F64)
    y = torch.tensor([[1.0, 0.0, 1.0]], dtype=F64)
    pairs = [(0, 1), (2, 1)]
    expected = sum(math.log1p(math.exp(-2.0 * (s[0, i] - s[0, j]).item())) for i, j in pairs) / 2
    assert ranknet_loss(s, y, sigma=2.0).item() == pytest.approx(expected)


@pytest.mark.parametrize("weighting", ["ndcg_loss2", "lambda_rank", "ndcg_loss2pp", "none"])
@pytest.mark.parametrize("k", [None, 3])
def test_lambda_loss_matches_a_loop_over_pairs(weighting, k):
    s = torch.tensor([[0.3, 1.2, -0.4, 0.9, 0.1]], dtype=F64)
    y = torch.tensor([[1.0, 3.0, 0.0, 2.0, 2.0]], dtype=F64)
    order = torch.argsort(s[0], descending=True).tolist()
    rank = {item: r + 1 for r, item in enumerate(order)}
    gains = 2.0 ** y[0] - 1
    cut = 5 if k is None else k
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(sorted(gains.tolist(), reverse=True)[:cut]))
    D = lambda r: math.log2(1 + r)  # noqa: E731
    total = 0.0
    for i, j in itertools.permutations(range(5), 2):
        if y[0, i] <= y[0, j] or (k is not None and (rank[i] > k or rank[j] > k)):
            continue
        gap = abs(gains[i] - gains[j]).item() / idcg
        d = abs(rank[i] - rank[j])
        delta = abs(1 / D(d) - 1 / D(d + 1))
        lam = abs(1 / D(rank[i]) - 1 / D(rank[j]))
        weight = {"ndcg_loss2": delta * gap, "lambda_rank": lam * gap, "ndcg_loss2pp": (10 * delta + lam) * gap,
                  "none": 1.0}[weighting]
        total += -weight * math.log2(1 / (1 + math.exp(-(s[0, i] - s[0, j]).item())))
    assert lambda_loss(s, y, weighting=weighting, k=k).item() == pytest.approx(total, rel=1e-12)


@pytest.mark.parametrize(("key", "weighting"), [(("ndcgLoss2PP_scheme", "binary"), "ndcg_loss2pp"),
                                                (("rankNet_scheme", "natural"), "none")])
def test_lambda_loss_matches_allranks_own_test_values(key, weighting):
    # allRank's tests run in float32, hence rel=1e-6. NDCG-Loss2++ weights pairs by mu * NDCG-Loss2
    # + LambdaRank (delta + mu * LambdaRank, as before, gave 1.35972 instead of 1.12441)
    s = torch.tensor(_ref.LAMBDALOSS_TEST_SLATE, dtype=F64)
    value = lambda_loss(s, s, weighting=weighting, reduction="sum").item()
    if key[1] == "natural":  # ours is in bits
        value *= math.log(2.0)
    assert value == pytest.approx(_ref.LAMBDALOSS_TEST_VALUES[key], rel=1e-6)


def test_approx_ndcg_tends_to_exact_ndcg_for_large_alpha():
    s = torch.tensor([[0.3, 1.2, -0.4, 0.9]], dtype=F64)
    y = torch.tensor([[1.0, 3.0, 0.0, 2.0]], dtype=F64)
    exact = -neural_ndcg(s, y, temperature=1e-6).item()
    assert -approx_ndcg(s, y, alpha=500.0).item() == pytest.approx(exact, abs=1e-9)
    assert -approx_ndcg(s, y, alpha=1.0).item() < exact


def test_rcr_loss_definition_and_calibration_compatibility():
    s = torch.tensor([[0.3, -1.2, 0.8]], dtype=F64)
    y = torch.tensor([[1.0, 0.0, 1.0]], dtype=F64)
    p = torch.sigmoid(s[0])
    point = torch.nn.functional.binary_cross_entropy(p, y[0]).item()
    listwise = -(y[0] / y[0].sum() * torch.log(p / p.sum())).sum().item()
    assert rcr_loss(s, y, alpha=0.3).item() == pytest.approx(0.7 * point + 0.3 * listwise)
    # regression compatibility: with soft labels q, the logits of q minimise both terms at once
    q = torch.tensor([[0.2, 0.5, 0.7]], dtype=F64)
    logits = torch.log(q / (1 - q)).requires_grad_(True)
    rcr_loss(logits, q, alpha=0.5).backward()
    assert torch.allclose(logits.grad, torch.zeros_like(logits.grad), atol=1e-12)
    with pytest.raises(InputError, match=r"\[0, 1\]"):
        rcr_loss(s, torch.tensor([[2.0, 0.0, 1.0]]))


# --- padding anywhere, reductions, gradients -------------------------------------------------


@pytest.mark.parametrize("fn", LISTWISE, ids=lambda f: f.__name__)
def test_padding_anywhere_equals_each_list_alone(fn):
    scores, labels = padded_batch(3, binary=fn is rcr_loss)
    per_list = fn(scores, labels, reduction="none")
    for row in range(scores.shape[0]):
        keep = labels[row] != -1
        alone = fn(scores[row:row + 1, keep], labels[row:row + 1, keep], reduction="none")
        assert per_list[row].item() == pytest.approx(alone.item(), rel=1e-12, abs=1e-14)


@pytest.mark.parametrize("fn", LISTWISE, ids=lambda f: f.__name__)
def test_gradcheck_listwise(fn):
    scores, labels = padded_batch(4, binary=fn is rcr_loss)
    scores = scores[:2, :5].clone().requires_grad_(True)
    labels = labels[:2, :5]
    assert torch.autograd.gradcheck(lambda s: fn(s, labels), (scores,))


def test_modules_match_functions():
    scores, labels = padded_batch(5)
    binary = (labels > 1).to(F64).masked_fill(labels == -1, -1)
    for module, fn, y in [(ListNet(), listnet_loss, labels), (ListMLE(), listmle_loss, labels),
                          (RankNet(sigma=2.0), lambda s, t: ranknet_loss(s, t, sigma=2.0), labels),
                          (LambdaLoss(weighting="lambda_rank"), lambda s, t: lambda_loss(s, t, weighting="lambda_rank"),
                           labels), (ApproxNDCG(alpha=2.0), lambda s, t: approx_ndcg(s, t, alpha=2.0), labels),
                          (RCRLoss(alpha=0.2), lambda s, t: rcr_loss(s, t, alpha=0.2), binary)]:
        assert module(scores, y).item() == fn(scores, y).item()


# --- AnyLoss ---------------------------------------------------------------------------------


def test_anyloss_recovers_hard_metrics_for_confident_predictions():
    skm = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 60)
    hard = np.where(rng.uniform(size=60) < 0.75, y, 1 - y)
    p = np.where(hard == 1, 0.97, 0.03)
    yt, pt = torch.as_tensor(y, dtype=F64), torch.as_tensor(p)
    tpr = ((hard == 1) & (y == 1)).sum() / (y == 1).sum()
    tnr = ((hard == 0) & (y == 0)).sum() / (y == 0).sum()
    expected = {"f1": skm.f1_score(y, hard), "f_beta": skm.fbeta_score(y, hard, beta=2.0),
                "balanced_accuracy": skm.balanced_accuracy_score(y, hard),
                "mcc": skm.matthews_corrcoef(y, hard), "g_mean": math.sqrt(tpr * tnr),
                "accuracy": skm.accuracy_score(y, hard)}
    for metric, value in expected.items():
        assert 1 - anyloss(yt, pt, metric=metric, beta=2.0).item() == pytest.approx(value, abs=1e-6)


def test_anyloss_gradients_and_module():
    y = torch.tensor([1.0, 0.0, 1.0, 0.0, 1.0], dtype=F64)
    p = torch.tensor([0.45, 0.52, 0.6, 0.3, 0.49], dtype=F64, requires_grad=True)
    for metric in ("f1", "balanced_accuracy", "mcc", "g_mean"):
        assert torch.autograd.gradcheck(lambda q: anyloss(y, q, metric=metric, amplifier=5.0), (p,))
    logits = torch.tensor([2.0, -1.0, 0.5], dtype=F64)
    module = AnyLoss("mcc", from_logits=True)
    assert module(logits, torch.tensor([1.0, 0.0, 1.0])).item() == pytest.approx(
        anyloss(torch.tensor([1.0, 0.0, 1.0]), torch.sigmoid(logits), metric="mcc").item())
    counts = soft_confusion(y, p.detach())
    assert (counts.tp + counts.fn + counts.fp + counts.tn).item() == pytest.approx(5.0)
    with pytest.raises(InputError):
        anyloss(y, p.detach() + 1.0)
    with pytest.raises(InputError):
        anyloss(torch.tensor([2.0, 0, 1, 0, 1]), p.detach())


# --- registry and tables ---------------------------------------------------------------------


def test_import_scorebench_does_not_import_torch():
    code = "import sys, scorebench; scorebench.metric('neural_ndcg@10'); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_registry_metadata():
    m = scorebench.metric("neural_ndcg@10", variant="transposed")
    assert (m.family, m.kind, m.needs_torch, m.differentiable, m.per_row) == ("losses", "listwise", True, True, True)
    assert m.params["k"] == 10 and m.params["variant"] == "transposed"
    assert scorebench.metric("anyloss").kind == "binary"
    names = set(scorebench.list_metrics(family="losses")["name"])
    assert {"neural_ndcg@k", "approx_ndcg", "listnet_loss", "listmle_loss", "ranknet_loss", "lambda_loss",
            "rcr_loss", "anyloss_value"} <= names
    assert metric_aliases()["anyloss"] == "anyloss_value"  # the torch loss owns the plain name


def test_evaluate_listwise_table_matches_direct_calls():
    rng = np.random.default_rng(1)
    rows = []
    for system in ("a", "b"):
        for q in range(6):
            for d in range(rng.integers(3, 7)):
                rows.append({"system": system, "qid": f"q{q}", "score": rng.normal(), "label": int(rng.integers(0, 3))})
    df = pd.DataFrame(rows)
    df.loc[df.groupby(["system", "qid"]).head(1).index, "label"] = 2
    out = scorebench.evaluate(df, ["neural_ndcg@5", "listnet_loss"], n_boot=50)
    for system, part in df.groupby("system"):
        lists = [g for _, g in part.groupby("qid", sort=False)]
        width = max(len(g) for g in lists)
        s = torch.zeros(len(lists), width, dtype=F64)
        y = torch.full((len(lists), width), -1.0, dtype=F64)
        for i, g in enumerate(lists):
            s[i, :len(g)] = torch.tensor(g["score"].to_numpy(dtype=float))
            y[i, :len(g)] = torch.tensor(g["label"].to_numpy(dtype=float))
        got = out.set_index(["system", "metric"])["value"]
        assert got[(system, "neural_ndcg@5")] == pytest.approx(neural_ndcg(s, y, k=5).item())
        assert got[(system, "listnet_loss")] == pytest.approx(listnet_loss(s, y).item())
    assert set(out["n"]) == {6}


def test_listwise_kind_refuses_negative_labels():
    df = pd.DataFrame({"qid": [1, 1], "score": [0.1, 0.2], "label": [1, -1]})
    with pytest.raises(InputError, match="label"):
        scorebench.evaluate(df, ["listnet_loss"], n_boot=20)
