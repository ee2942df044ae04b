"""Post-hoc OOD detector scores from a trained classifier's logits or features.

Every function returns a *confidence* score, **higher = more in-distribution**, as the
methods are published (and as OpenOOD reports them). To evaluate them with the ``ood``
metrics, whose convention is higher = more OOD, put them in a table with
``score_direction="id"`` or negate them.

Logit-based: :func:`msp_score` (maximum softmax probability), :func:`max_logit_score`,
:func:`energy_score`. Feature-based, fitted on in-distribution training features:
:func:`conjnorm_score` (the p-norm / Bregman-divergence density family),
:func:`mahalanobis_score` (class-conditional Gaussians with a shared covariance) and
:func:`knn_score` (distance to the k-th nearest normalised training feature).
:class:`MultiScaleScoreNormGMM` is the extension point for score-matching detectors that
turn a multi-scale vector of score norms into a density with a Gaussian mixture.

Everything is float64 numpy and deterministic (the GMM takes a seed).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from scorebench.core.errors import InputError
from scorebench.core.validation import (as_float_array, as_float_matrix, check_choice, check_finite, check_positive, check_positive_int,
                          check_positive_number, describe_rows)

__all__ = [
    "msp_score", "max_logit_score", "energy_score", "conjnorm_score", "mahalanobis_score",
    "knn_score", "ScoreNormExtractor", "MultiScaleScoreNormGMM", "score_norms",
]

_CHUNK_ELEMENTS = 1 << 22  # entries of a (test chunk x train) distance block held at once


def _matrix(x: Any, name: str) -> np.ndarray:
    return as_float_matrix(x, name, unit="dimensions")


def _logsumexp(z: np.ndarray, axis: int = -1) -> np.ndarray:
    top = z.max(axis=axis, keepdims=True)
    return np.squeeze(top, axis=axis) + np.log(np.exp(z - top).sum(axis=axis))


def _labels(train_labels: Any, n: int) -> tuple[np.ndarray, np.ndarray]:
    y = np.asarray(train_labels)
    if y.ndim != 1 or y.shape[0] != n:
        raise InputError(f"train_labels: expected one label per training row ({n}), got shape {y.shape}")
    classes, codes = np.unique(y, return_inverse=True)
    return classes, codes


def _feature_pair(features: Any, train_features: Any) -> tuple[np.ndarray, np.ndarray]:
    """Test and training features as finite (n, d) matrices of the same dimension d."""
    x = _matrix(features, "features")
    train = _matrix(train_features, "train_features")
    if x.shape[1] != train.shape[1]:
        raise InputError(f"features have {x.shape[1]} dimensions but train_features have "
                         f"{train.shape[1]}; expected the same feature space")
    return x, train


# --- logit scores --------------------------------------------------------------------


def msp_score(logits: Any, /, *, temperature: float = 1.0) -> np.ndarray:
    r"""Maximum softmax probability (Hendrycks & Gimpel 2017); higher = in-distribution.

    .. math:: S(x) = \max_k \frac{e^{f_k(x)/T}}{\sum_j e^{f_j(x)/T}}

    Examples
    --------
    >>> msp_score([[2.0, 0.0], [0.0, 0.0]]).round(4).tolist()
    [0.8808, 0.5]
    """
    z = _matrix(logits, "logits") / check_positive_number(temperature, "temperature")
    return 1.0 / np.exp(z - z.max(axis=1, keepdims=True)).sum(axis=1)


def max_logit_score(logits: Any, /) -> np.ndarray:
    r"""Maximum logit (Hendrycks et al. 2022, MaxLogit); higher = in-distribution.

    .. math:: S(x) = \max_k f_k(x)

    Examples
    --------
    >>> max_logit_score([[2.0, -1.0], [0.5, 3.0]]).tolist()
    [2.0, 3.0]
    """
    return _matrix(logits, "logits").max(axis=1)


def energy_score(logits: Any, /, *, temperature: float = 1.0) -> np.ndarray:
    r"""Negative free energy (Liu et al. 2020); higher = in-distribution.

    .. math:: S(x) = -E(x; f) = T \log \sum_k e^{f_k(x)/T}

    Examples
    --------
    >>> energy_score([[0.0, 0.0]]).round(6).tolist()
    [0.693147]
    """
    t = check_positive_number(temperature, "temperature")
    return t * _logsumexp(_matrix(logits, "logits") / t)


# --- feature scores ------------------------------------------------------------------


def _p_normalise(x: np.ndarray, p: float) -> np.ndarray:
    norms = np.linalg.norm(x, ord=p, axis=1, keepdims=True)
    zero = norms[:, 0] == 0
    if zero.any():
        raise InputError(f"features: {describe_rows(zero)} are all zero and cannot be "
                         "normalised; expected non-zero feature vectors")
    return x / norms


def conjnorm_score(features: Any, train_features: Any, train_labels: Any, /, *, p: float = 2.0,
                   temperature: float = 0.05, variant: str = "paper") -> np.ndarray:
    r"""ConjNorm density score (Peng et al. 2024): Bregman divergence of the p-norm family.

    Features are normalised to unit :math:`\ell_p` norm and compared with class
    prototypes :math:`\mu_k` (the :math:`\ell_p`-normalised class means of the training
    features) through the Bregman divergence of :math:`\phi(z) = \tfrac12\|z\|_q^2`,
    :math:`1/p + 1/q = 1`, whose conjugate is :math:`\tfrac12\|\cdot\|_p^2`. Dropping the
    terms that depend only on the class (absorbed by the normaliser), the class log-kernel is

    .. math:: g_k(z) = \frac{1}{T}\Big(\langle z, \nabla\phi(\mu_k)\rangle
              - \tfrac12 \|z\|_q^2\Big),
              \qquad \nabla\phi(\mu) = \operatorname{sign}(\mu)\,|\mu|^{q-1}\,\|\mu\|_q^{2-q}

    and :math:`\hat p(z \mid k) = e^{g_k(z)} / Z_k` with the partition function
    estimated on the training features, :math:`Z_k = \sum_i e^{g_k(x_i)}` (as the
    authors' implementation). The score is the log of the summed class densities,

    .. math:: S(z) = \log \sum_k e^{g_k(z)} / Z_k,

    higher = in-distribution. ``p = 2`` is the Gaussian (cosine) member; the paper
    searches ``p`` per data set.

    ``variant="authors"`` reproduces the authors' released code
    (``run_cifar10_densenet.py`` and siblings, function ``dist``): the gradient term is
    :math:`\mu_{kj} |\mu_{kj}|^{q-2} / (\lVert \mu_{\cdot j} \rVert_q + 10^{-10})^{q-2}`, with the
    :math:`q`-norm taken *across classes* for each feature :math:`j` (their prototype
    matrix is passed transposed) instead of over the features of :math:`\mu_k`, and
    the code's guards: :math:`x / (\lVert x \rVert_p + 10^{-10})`,
    :math:`(\lVert z \rVert_q + 10^{-10})^2` and :math:`\log(\cdot + 10^{-15})`. The two
    agree at ``p = 2`` up to those guards. The authors' random resampling of the
    training rows (``alpha``, with replacement) is not reproduced: all rows are used.

    Parameters
    ----------
    features : (n, d) array
        Test features.
    train_features : (m, d) array
        In-distribution training features.
    train_labels : (m,) array
        Their class labels.
    p : float
        Norm coefficient, > 1.
    temperature : float
        Temperature :math:`T`.
    variant : {"paper", "authors"}
        The paper's formula (default) or the authors' code (see above).

    References
    ----------
    Peng, B., Luo, Y., Zhang, Y., Li, Y. & Fang, Z. (2024). ConjNorm: Tractable density
    estimation for out-of-distribution detection. ICLR.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> train = np.r_[rng.normal(3, 1, (50, 4)), rng.normal(-3, 1, (50, 4))]
    >>> labels = np.repeat([0, 1], 50)
    >>> s = conjnorm_score(np.array([[3.0, 3, 3, 3], [3.0, -3, 3, -3]]), train, labels)
    >>> bool(s[0] > s[1])
    True
    """
    if not isinstance(p, (int, float)) or isinstance(p, bool) or not np.isfinite(p) or p <= 1:
        raise InputError(f"p: expected a norm coefficient > 1, got {p!r}")
    t = check_positive_number(temperature, "temperature")
    check_choice(variant, "variant", ("paper", "authors"))
    x, train = _feature_pair(features, train_features)
    _, codes = _labels(train_labels, train.shape[0])
    q = p / (p - 1.0)
    authors = variant == "authors"
    counts = np.bincount(codes).astype(np.float64)
    means = np.zeros((counts.size, train.shape[1]))
    np.add.at(means, codes, train)
    means /= counts[:, None]
    eps = 1e-10 if authors else 0.0

    def normalise(z: np.ndarray) -> np.ndarray:
        if not authors:
            return _p_normalise(z, p)
        return z / (np.linalg.norm(z, ord=p, axis=1, keepdims=True) + eps)

    protos = normalise(means)
    signed = np.sign(protos) * np.abs(protos) ** (q - 1.0)  # mu |mu|^(q-2), 0 where mu = 0
    if authors:  # q-norm across classes, one per feature (the code's axis=-1 on the transposed matrix)
        grad = signed / (np.linalg.norm(protos, ord=q, axis=0, keepdims=True) + eps) ** (q - 2.0)
    else:
        grad = signed * np.linalg.norm(protos, ord=q, axis=1, keepdims=True) ** (2.0 - q)

    def log_kernel(z: np.ndarray) -> np.ndarray:
        zn = normalise(z)
        half_sq = 0.5 * (np.linalg.norm(zn, ord=q, axis=1, keepdims=True) + eps) ** 2
        return (zn @ grad.T - half_sq) / t

    log_z = _logsumexp(log_kernel(train), axis=0)  # per class, over all training rows
    score = _logsumexp(log_kernel(x) - log_z[None, :], axis=1)
    return np.logaddexp(score, np.log(1e-15)) if authors else score


def mahalanobis_score(features: Any, train_features: Any, train_labels: Any, /, *,
                      rcond: float = 1e-10) -> np.ndarray:
    r"""Negative minimum Mahalanobis distance to the class means (Lee et al. 2018).

    Class-conditional Gaussians with a shared (tied) covariance fitted on the training
    features: :math:`\hat\mu_k` the class means and
    :math:`\hat\Sigma = \frac1m \sum_k \sum_{i: y_i = k} (x_i - \hat\mu_k)(x_i - \hat\mu_k)^\top`.

    .. math:: S(x) = -\min_k (x - \hat\mu_k)^\top \hat\Sigma^{+} (x - \hat\mu_k)

    :math:`\hat\Sigma^{+}` is the pseudo-inverse (eigenvalues below ``rcond`` times the
    largest are dropped), so fewer training rows than dimensions still work.
    Higher = in-distribution.

    References
    ----------
    Lee, K., Lee, K., Lee, H. & Shin, J. (2018). A simple unified framework for detecting
    out-of-distribution samples and adversarial attacks. NeurIPS.

    Examples
    --------
    >>> train = np.array([[0.0, 0], [2, 0], [0, 2], [2, 2]])
    >>> mahalanobis_score(np.array([[1.0, 1.0]]), train, [0, 0, 0, 0]).tolist()
    [-0.0]
    """
    x, train = _feature_pair(features, train_features)
    _, codes = _labels(train_labels, train.shape[0])
    counts = np.bincount(codes).astype(np.float64)
    means = np.zeros((counts.size, train.shape[1]))
    np.add.at(means, codes, train)
    means /= counts[:, None]
    centred = train - means[codes]
    cov = centred.T @ centred / train.shape[0]
    evals, evecs = np.linalg.eigh(cov)
    keep = evals > rcond * max(float(evals.max()), 0.0)
    if not keep.any():
        raise InputError("train_features: every class is a single point (zero within-class covariance); "
                         "expected spread within classes")
    whiten = evecs[:, keep] / np.sqrt(evals[keep])
    d2 = _sq_distances(x @ whiten, means @ whiten)
    return -d2.min(axis=1)


def _sq_distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    d2 = (a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2.0 * (a @ b.T)
    return np.maximum(d2, 0.0)


def knn_score(features: Any, train_features: Any, /, *, k: int = 50, normalize: bool = True) -> np.ndarray:
    r"""Negative distance to the k-th nearest training feature (Sun et al. 2022).

    .. math:: S(x) = -\big\lVert z - z_{(k)} \big\rVert_2, \qquad z = x / \lVert x \rVert_2

    where :math:`z_{(k)}` is the k-th nearest normalised training feature. Computed in
    chunks of test rows, so memory stays bounded. Higher = in-distribution.

    References
    ----------
    Sun, Y., Ming, Y., Zhu, X. & Li, Y. (2022). Out-of-distribution detection with deep
    nearest neighbors. ICML.

    Examples
    --------
    >>> train = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> knn_score(np.array([[2.0, 0.0]]), train, k=1).tolist()
    [-0.0]
    """
    k = check_positive_int(k, "k")
    x, train = _feature_pair(features, train_features)
    if k > train.shape[0]:
        raise InputError(f"k = {k} exceeds the {train.shape[0]} training rows")
    if normalize:
        x = x / _l2(x, "features")
        train = train / _l2(train, "train_features")
    step = max(1, _CHUNK_ELEMENTS // train.shape[0])
    out = np.empty(x.shape[0])
    for start in range(0, x.shape[0], step):
        d2 = _sq_distances(x[start:start + step], train)
        out[start:start + step] = np.partition(d2, k - 1, axis=1)[:, k - 1]
    return -np.sqrt(out)


def _l2(x: np.ndarray, name: str) -> np.ndarray:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    check_positive(norms[:, 0], f"{name} (row norms)")
    return norms


# --- multi-scale score norms + GMM (extension point) --------------------------------


@runtime_checkable
class ScoreNormExtractor(Protocol):
    """Maps inputs to their multi-scale score norms, an ``(n, L)`` array.

    For a noise-conditional score network :math:`s_\\theta(x, \\sigma)`, column ``l`` is
    :math:`\\lVert s_\\theta(x, \\sigma_l) \\rVert_2` at noise scale :math:`\\sigma_l`
    (see :func:`score_norms`). Any callable with this signature plugs in, e.g. a wrapper
    around a torch model from :mod:`scorebench.models`.
    """

    def __call__(self, inputs: Any, /) -> np.ndarray: ...


def score_norms(scores: Any, /) -> np.ndarray:
    r"""L2 norms of score estimates at L noise scales: ``(L, n, ...)`` -> ``(n, L)``.

    .. math:: v_{il} = \lVert s_\theta(x_i, \sigma_l) \rVert_2

    Examples
    --------
    >>> score_norms(np.ones((2, 3, 4))).tolist()
    [[2.0, 2.0], [2.0, 2.0], [2.0, 2.0]]
    """
    s = as_float_array(scores, "scores")
    if s.ndim < 2:
        raise InputError(f"scores: expected shape (L, n, ...) with L noise scales, got {s.shape}")
    check_finite(s.reshape(s.shape[0], -1).T, "scores")
    return np.sqrt((s.reshape(s.shape[0], s.shape[1], -1) ** 2).sum(axis=2)).T


class MultiScaleScoreNormGMM:
    r"""Multi-scale score matching OOD detector (MSMA; Mahmood et al. 2021).

    Each input is summarised by its vector of score norms at :math:`L` noise scales
    (:class:`ScoreNormExtractor`); a Gaussian mixture fitted on in-distribution vectors
    gives the density, and the detector score is the log-likelihood

    .. math:: S(x) = \log \sum_{c} \pi_c\, \mathcal N\big(v(x); m_c, C_c\big)

    (higher = in-distribution). Without an ``extractor`` the inputs of :meth:`fit` and
    :meth:`score` are the norm vectors themselves. This class is the extension point:
    bring the score network (torch) as the extractor; the density part is here.

    Parameters
    ----------
    extractor : ScoreNormExtractor, optional
        Callable mapping inputs to ``(n, L)`` score norms.
    n_components : int
        Mixture components.
    seed : int
        Seed of the mixture initialisation (deterministic results).
    log_norms : bool
        Model the logarithm of the norms (they are positive and heavy-tailed).

    References
    ----------
    Mahmood, A., Oliva, J. & Styner, M. (2021). Multiscale score matching for
    out-of-distribution detection. ICLR.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> det = MultiScaleScoreNormGMM(n_components=2, seed=0).fit(rng.gamma(5, 1, (200, 3)))
    >>> s = det.score(np.array([[5.0, 5.0, 5.0], [60.0, 60.0, 60.0]]))
    >>> bool(s[0] > s[1])
    True
    """

    def __init__(self, extractor: ScoreNormExtractor | None = None, *, n_components: int = 3,
                 seed: int = 0, log_norms: bool = True) -> None:
        if extractor is not None and not isinstance(extractor, ScoreNormExtractor):
            raise InputError(f"extractor: expected a callable returning (n, L) score norms, got {extractor!r}")
        self.extractor = extractor
        self.n_components = check_positive_int(n_components, "n_components")
        self.seed = seed
        self.log_norms = log_norms
        self._gmm = None

    def _norms(self, inputs: Any, name: str) -> np.ndarray:
        v = self.extractor(inputs) if self.extractor is not None else inputs
        v = _matrix(v, name)
        if self.log_norms:
            check_positive(v, name)
            v = np.log(v)
        return v

    def fit(self, inputs: Any, /) -> MultiScaleScoreNormGMM:
        """Fit the mixture on in-distribution inputs (or their norm vectors)."""
        from sklearn.mixture import GaussianMixture

        v = self._norms(inputs, "fit inputs")
        if v.shape[0] < max(2, self.n_components):
            raise InputError(f"fit: expected at least {max(2, self.n_components)} rows for "
                             f"{self.n_components} mixture components, got {v.shape[0]}")
        self._gmm = GaussianMixture(self.n_components, covariance_type="full", reg_covar=1e-6,
                                    random_state=self.seed).fit(v)
        self._dim = v.shape[1]
        return self

    def score(self, inputs: Any, /) -> np.ndarray:
        """Log-likelihood of each input's norm vector; higher = in-distribution."""
        if self._gmm is None:
            raise InputError("MultiScaleScoreNormGMM: call fit() on in-distribution data before score()")
        v = self._norms(inputs, "score inputs")
        if v.shape[1] != self._dim:
            raise InputError(f"score: expected {self._dim} noise scales (as fitted), got {v.shape[1]}")
        return self._gmm.score_samples(v).astype(np.float64)
