"""Retrieval / metric learning: embedding nets trained on digits with scorebench's torch losses.

scikit-learn's 8x8 digits are split (stratified, seeded) into 1,197 training and 600 test
images. Every trained system is the same MLP (64-128-32, ReLU) trained for 40 epochs with
Adam on batches of 128, differing only in the loss from :mod:`scorebench.losses`:

* ``multi_similarity``: :class:`~scorebench.losses.MultiSimilarityLoss` (alpha 2, beta 50, lambda 0.5),
* ``contrastive``: :class:`~scorebench.losses.ContrastiveLoss` (margins 1.0 / 0.5 on cosine),
* ``triplet``: :class:`~scorebench.losses.TripletLoss` (margin 0.1, all triplets),
* ``neural_ndcg``: :class:`~scorebench.losses.NeuralNDCG` on similarity lists: each image of the
  batch is a query, the other images its list, relevance 1 for the same digit (self padded),

plus three untrained baselines: ``raw_pixels``, ``pca_32`` and ``untrained_net`` (the same MLP at
its seeded initialisation). Torch runs on the CPU with one thread, seeded, with deterministic
algorithms. The test embeddings go to ``data/boards/retrieval.parquet`` (an ``embeddings``
table: ``system``, ``label``, ``f0..f63``; 32-dimensional embeddings are zero-padded). Run: ``python data/boards/make_retrieval.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from board_io import write_parquet  # noqa: E402
import torch  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from sklearn.decomposition import PCA  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

from scorebench import losses  # noqa: E402

SEED = 0
EPOCHS = 40
OUT = Path(__file__).resolve().parent / "retrieval.parquet"


def network(seed: int) -> torch.nn.Module:
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 32))


def ndcg_loss(embeddings: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """NeuralNDCG over similarity lists: query = each item, list = the batch, self padded out."""
    sims = losses.similarity_matrix(embeddings)
    rel = (labels[:, None] == labels[None, :]).to(sims.dtype)
    rel = rel.masked_fill(torch.eye(len(labels), dtype=torch.bool), -1.0)
    return losses.neural_ndcg(sims, rel, k=10, temperature=0.1, padding_value=-1.0)


def train(loss_fn, X: np.ndarray, y: np.ndarray, seed: int) -> torch.nn.Module:
    net = network(seed)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    xs, ys = torch.tensor(X, dtype=torch.float32), torch.tensor(y)
    gen = torch.Generator().manual_seed(seed)
    for _ in range(EPOCHS):
        for idx in torch.randperm(len(xs), generator=gen).split(128):
            loss = loss_fn(net(xs[idx]), ys[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    return net


def main(seed: int = SEED) -> None:
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=600, stratify=y, random_state=seed)
    systems = {"raw_pixels": X_test, "pca_32": PCA(32, random_state=seed).fit(X_train).transform(X_test)}
    with torch.no_grad():
        systems["untrained_net"] = network(seed)(torch.tensor(X_test, dtype=torch.float32)).numpy()
    trained = {
        "multi_similarity": losses.MultiSimilarityLoss(),
        "contrastive": losses.ContrastiveLoss(),
        "triplet": losses.TripletLoss(),
        "neural_ndcg": ndcg_loss,
    }
    for name, loss_fn in trained.items():
        net = train(loss_fn, X_train, y_train, seed)
        with torch.no_grad():
            systems[name] = net(torch.tensor(X_test, dtype=torch.float32)).numpy()
        print(f"trained {name}", flush=True)
    frames = []
    for name, emb in systems.items():
        emb = np.asarray(emb, dtype=np.float64)
        frame = pd.DataFrame(emb, columns=[f"f{j}" for j in range(emb.shape[1])])
        frame.insert(0, "label", y_test.astype(np.int64))
        frame.insert(0, "system", name)
        frames.append(frame)
    # 32-dimensional embeddings are padded with zeros to 64 columns: cosine similarities and
    # Euclidean distances, hence every retrieval metric, are unchanged.
    table = pd.concat(frames, ignore_index=True).fillna(0.0)
    write_parquet(table, OUT)


if __name__ == "__main__":
    main()
