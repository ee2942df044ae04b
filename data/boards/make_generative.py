"""Generative models of digits scored on features of a small classifier trained here.

scikit-learn's 8x8 digits (1,797 images, offline) are split (stratified, seeded) into a
training set (1,197) and a held-out *real* set (600). Every generator is fitted on the
training set and draws 600 images:

* ``training_set``: 600 training images themselves (the reference a model cannot beat
  without memorising; it differs from the held-out set only by sampling),
* ``gmm``: a 10-component full-covariance Gaussian mixture,
* ``kde``: a Gaussian kernel density (bandwidth by 3-fold likelihood cross-validation),
* ``pca_gaussian``: a Gaussian on the first 20 principal components,
* ``vae``: a small variational autoencoder in torch (64-128-8 MLP encoder/decoder, Bernoulli
  likelihood, 300 epochs, CPU, seeded, deterministic algorithms, 1 thread),
* ``independent_pixels``: every pixel drawn independently from its training marginal.

Features: the 64 ReLU hidden units of an MLP classifier trained on the training set
(its held-out accuracy is printed); images are clipped to [0, 1] first.

Output: ``data/boards/generative.parquet``, a ``features`` table (``system``, ``f0..f63``;
the held-out images are ``system = "real"``). Run: ``python data/boards/make_generative.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from board_io import write_parquet  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from sklearn.decomposition import PCA  # noqa: E402
from sklearn.mixture import GaussianMixture  # noqa: E402
from sklearn.model_selection import GridSearchCV, train_test_split  # noqa: E402
from sklearn.neighbors import KernelDensity  # noqa: E402
from sklearn.neural_network import MLPClassifier  # noqa: E402

SEED = 0
N = 600
OUT = Path(__file__).resolve().parent / "generative.parquet"


def vae_samples(train: np.ndarray, n: int, seed: int) -> np.ndarray:
    """Fit a small VAE (Kingma & Welling, 2014) and decode ``n`` draws from the prior."""
    import torch
    from torch import nn

    torch.manual_seed(seed)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    latent = 8
    enc = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 2 * latent))
    dec = nn.Sequential(nn.Linear(latent, 128), nn.ReLU(), nn.Linear(128, 64))
    params = list(enc.parameters()) + list(dec.parameters())
    opt = torch.optim.Adam(params, lr=1e-3)
    x_all = torch.tensor(train, dtype=torch.float32)
    gen = torch.Generator().manual_seed(seed)
    for _ in range(300):
        for idx in torch.randperm(len(x_all), generator=gen).split(128):
            x = x_all[idx]
            mu, logvar = enc(x).chunk(2, dim=1)
            z = mu + torch.randn(mu.shape, generator=gen) * torch.exp(0.5 * logvar)
            recon = nn.functional.binary_cross_entropy_with_logits(dec(z), x, reduction="sum")
            kl = -0.5 * torch.sum(1 + logvar - mu ** 2 - logvar.exp())
            loss = (recon + kl) / len(x)
            opt.zero_grad()
            loss.backward()
            opt.step()
    with torch.no_grad():
        z = torch.randn((n, latent), generator=gen)
        return torch.sigmoid(dec(z)).numpy().astype(np.float64)


def generators(train: np.ndarray, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    out = {"training_set": train[rng.choice(len(train), N, replace=False)]}
    gmm = GaussianMixture(n_components=10, covariance_type="full", reg_covar=1e-3, random_state=seed).fit(train)
    out["gmm"] = gmm.sample(N)[0][rng.permutation(N)]
    search = GridSearchCV(KernelDensity(), {"bandwidth": [0.05, 0.1, 0.2, 0.4]}, cv=3).fit(train)
    out["kde"] = search.best_estimator_.sample(N, random_state=seed)
    pca = PCA(n_components=20, random_state=seed).fit(train)
    scores = pca.transform(train)
    draws = rng.multivariate_normal(scores.mean(0), np.cov(scores, rowvar=False), size=N)
    out["pca_gaussian"] = pca.inverse_transform(draws)
    out["vae"] = vae_samples(train, N, seed)
    out["independent_pixels"] = np.column_stack([rng.choice(train[:, j], N) for j in range(train.shape[1])])
    return {k: np.clip(v, 0.0, 1.0) for k, v in out.items()}


def main(seed: int = SEED) -> None:
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    train, real, y_train, y_real = train_test_split(X, y, test_size=N, stratify=y, random_state=seed)
    clf = MLPClassifier(hidden_layer_sizes=(64,), max_iter=1000, random_state=seed).fit(train, y_train)
    print(f"feature classifier: held-out accuracy {clf.score(real, y_real):.3f}")

    def features(images: np.ndarray) -> np.ndarray:
        return np.maximum(images @ clf.coefs_[0] + clf.intercepts_[0], 0.0)

    frames = [("real", real)] + list(generators(train, seed).items())
    table = pd.concat([pd.DataFrame(features(images), columns=[f"f{j}" for j in range(64)]).assign(system=name)
                       for name, images in frames], ignore_index=True)
    table = table[["system"] + [f"f{j}" for j in range(64)]]
    write_parquet(table, OUT)


if __name__ == "__main__":
    main()
