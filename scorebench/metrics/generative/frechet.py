r"""Fréchet distances between Gaussian fits of feature sets: FID, sFID and MiFID.

One engine, :func:`frechet_distance`, computes

.. math::

    d^2 = \lVert\mu_1 - \mu_2\rVert^2 + \operatorname{tr}\Sigma_1 + \operatorname{tr}\Sigma_2
          - 2\operatorname{tr}\bigl(\Sigma_1^{1/2}\Sigma_2\Sigma_1^{1/2}\bigr)^{1/2}

from means and covariances. The trace term is the sum of the singular values (the nuclear norm) of
:math:`F_1^\top F_2` for factors :math:`\Sigma_i = F_iF_i^\top` (Cholesky when positive
definite, else ``V diag(sqrt(w))`` from the symmetric eigendecomposition), after dropping the
coordinates whose variance is exactly 0 in either set: singular values are perturbation-stable,
whereas square roots of small eigenvalues amplify rounding (which moved FID intervals by ~4e-7
relative between numpy/BLAS builds). No non-symmetric ``sqrtm`` (whose imaginary parts
``pytorch-fid`` has to discard) is involved. When both sets are given as features and have
fewer samples than dimensions, the trace term is the nuclear norm of :math:`A B^\top`
with :math:`A, B` the centred, scaled feature matrices (:math:`\Sigma_1 = A^\top A`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from scorebench.core.lazy import lazy_attr, lazy_module
from scorebench.core.errors import InputError
from scorebench.core.registry import NO_EXTERNAL_REFERENCE, register
from scorebench.metrics.generative._common import as_features, check_same_dim, same_extractor
from scorebench.metrics.generative.kind import two_sample
from scorebench.metrics.generative.stats import FeatureStats, resolve_precision

scipy_linalg = lazy_module("scipy.linalg")

__all__ = ["FIDResult", "frechet_distance", "fid", "fid_details", "sfid", "mifid",
           "memorization_distance"]

_CITATION_FID = "Heusel et al. (2017), GANs trained by a two time-scale update rule..., NeurIPS"


@dataclass(frozen=True)
class FIDResult:
    """A Fréchet distance and its parts.

    Attributes
    ----------
    value : float
        The squared Fréchet distance (what papers report as FID).
    mean_term : float
        :math:`\\lVert\\mu_1-\\mu_2\\rVert^2`.
    trace_term : float
        :math:`\\operatorname{tr}\\Sigma_1+\\operatorname{tr}\\Sigma_2-2\\operatorname{tr}(\\cdot)^{1/2}`.
    n_real, n_fake : int
        Sample counts behind the two Gaussian fits.
    extractor : str or None
        Fingerprint of the feature extractor (``None`` when the features carried none).
    """

    value: float
    mean_term: float
    trace_term: float
    n_real: int
    n_fake: int
    extractor: str | None = None


def _factor(s: np.ndarray) -> np.ndarray:
    """A factor ``F`` with ``s = F F^T``: Cholesky, else ``V diag(sqrt(w))`` (eigenvalues within
    ``d eps`` of the largest set to 0: a rank-deficient covariance's zero directions)."""
    try:
        return scipy_linalg.cholesky(s, lower=True, check_finite=False)
    except np.linalg.LinAlgError:
        w, v = scipy_linalg.eigh(s, check_finite=False)
        w = np.where(w > w.size * np.finfo(np.float64).eps * max(float(w.max(initial=0.0)), 0.0), w, 0.0)
        return v * np.sqrt(w)


def _trace_sqrt_product(s1: np.ndarray, s2: np.ndarray) -> float:
    r""":math:`\operatorname{tr}(\Sigma_1^{1/2}\Sigma_2\Sigma_1^{1/2})^{1/2}` as the nuclear norm of
    :math:`F_1^\top F_2` (:math:`\Sigma_i = F_i F_i^\top`).

    :math:`\Sigma_1^{1/2}\Sigma_2\Sigma_1^{1/2}` has the eigenvalues of
    :math:`(F_1^\top F_2)(F_1^\top F_2)^\top`, so the trace of its square root is the sum of the
    singular values of :math:`F_1^\top F_2`. Singular values move by at most the norm of a
    perturbation (Weyl), whereas the square root of a small *eigenvalue* amplifies its
    rounding error by :math:`1/(2\sqrt\lambda)`: summing square roots of eigenvalues made FID
    interval bounds move by ~4e-7 relative between numpy/BLAS builds on half-samples with
    near-singular covariances; this route keeps the change at rounding level (< 1e-11 on the
    generative board, ``tests/metrics/generative/test_generative_determinism.py``). Coordinates whose variance is
    exactly 0 in either set (a dead ReLU feature) are dropped first: they add nothing to the
    trace, and the eigendecomposition of a singular covariance would put rounding noise there.
    """
    keep = (np.diagonal(s1) > 0) & (np.diagonal(s2) > 0)
    if not keep.any():
        return 0.0
    if not keep.all():
        s1, s2 = s1[np.ix_(keep, keep)], s2[np.ix_(keep, keep)]
    product = _factor(s1).T @ _factor(s2)
    values = scipy_linalg.svdvals(product, check_finite=False)
    return float(math.fsum(values.tolist()))  # correctly rounded: no summation-order dependence


def _check_cov(cov: Any, name: str, dim: int) -> np.ndarray:
    arr = np.asarray(cov, dtype=np.float64)
    if arr.shape != (dim, dim):
        raise InputError(f"{name}: expected a ({dim}, {dim}) covariance matrix, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise InputError(f"{name}: expected finite numbers")
    scale = max(float(np.abs(arr).max()), 1e-300)
    if not np.allclose(arr, arr.T, rtol=0.0, atol=1e-8 * scale):
        raise InputError(f"{name}: expected a symmetric matrix")
    return arr


def frechet_distance(mu1: Any, sigma1: Any, mu2: Any, sigma2: Any) -> float:
    r"""Squared Fréchet (2-Wasserstein) distance between two Gaussians.

    .. math::

        d^2 = \lVert\mu_1-\mu_2\rVert^2 + \operatorname{tr}\Sigma_1 + \operatorname{tr}\Sigma_2
              - 2\operatorname{tr}\bigl(\Sigma_1^{1/2}\Sigma_2\Sigma_1^{1/2}\bigr)^{1/2}

    Parameters
    ----------
    mu1, mu2 : array_like of shape (d,)
    sigma1, sigma2 : array_like of shape (d, d)
        Symmetric positive semi-definite covariances.

    Returns
    -------
    float
        Clipped at 0 (rounding can make identical Gaussians come out at ``-1e-13``).

    References
    ----------
    Dowson & Landau (1982), J. Multivariate Analysis 12(3); Heusel et al. (2017), NeurIPS.

    Examples
    --------
    >>> import numpy as np
    >>> round(frechet_distance([0, 0], np.eye(2), [3, 4], 4 * np.eye(2)), 12)
    27.0
    """
    m1 = np.asarray(mu1, dtype=np.float64).ravel()
    m2 = np.asarray(mu2, dtype=np.float64).ravel()
    if m1.shape != m2.shape:
        raise InputError(f"mu1 has {m1.size} dimension(s) but mu2 has {m2.size}")
    if not (np.all(np.isfinite(m1)) and np.all(np.isfinite(m2))):
        raise InputError("mu1/mu2: expected finite numbers")
    s1 = _check_cov(sigma1, "sigma1", m1.size)
    s2 = _check_cov(sigma2, "sigma2", m1.size)
    diff = m1 - m2
    value = float(diff @ diff) + float(np.trace(s1) + np.trace(s2)) - 2.0 * _trace_sqrt_product(s1, s2)
    return max(value, 0.0)


def _as_stats(x: Any, name: str, precision: str = "auto") -> FeatureStats:
    if isinstance(x, FeatureStats):
        if x.n < 2:
            raise InputError(f"{name}: a covariance needs at least 2 samples, got {x.n}")
        return x
    return FeatureStats.from_features(as_features(x, name, min_rows=2), precision=precision)


def _float_features(x: Any) -> np.ndarray | None:
    """``x`` (or ``x.features``) unchanged when it is a 2-D float32/float64 array, else ``None``."""
    arr = x.features if hasattr(x, "features") and not isinstance(x, np.ndarray) else x
    if isinstance(arr, np.ndarray) and arr.ndim == 2 and arr.dtype in (np.float32, np.float64):
        return arr
    return None


def _centred_scaled(x: np.ndarray) -> np.ndarray:
    return (x - x.mean(axis=0)) / math.sqrt(x.shape[0] - 1)


def fid_details(real_features: Any, fake_features: Any, *, precision: str = "auto") -> FIDResult:
    """FID with its mean and trace terms, sample counts and the extractor identity.

    Each argument is an ``(n, d)`` feature array, a
    :class:`~scorebench.metrics.generative.stats.FeatureStats` (e.g. reference statistics
    published with a dataset, via :meth:`FeatureStats.from_moments`), or features carrying an
    ``extractor`` fingerprint. See :func:`fid` (and ``precision`` there).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> r = fid_details(rng.normal(size=(500, 3)), rng.normal(1.0, 1.0, size=(500, 3)))
    >>> r.n_real, r.n_fake, round(r.mean_term)
    (500, 500, 3)
    """
    fp = same_extractor(("real_features", real_features), ("fake_features", fake_features))
    resolve_precision(precision, np.empty((0, 0)))  # validate the name early
    small = (not isinstance(real_features, FeatureStats) and not isinstance(fake_features, FeatureStats))
    raw_r, raw_f = (_float_features(real_features), _float_features(fake_features)) if small else (None, None)
    if (raw_r is not None and raw_f is not None and min(raw_r.shape[0], raw_f.shape[0]) >= 2
            and raw_r.shape[1] == raw_f.shape[1] and max(raw_r.shape[0], raw_f.shape[0]) >= raw_r.shape[1] >= 1):
        # float arrays go to FeatureStats as they are (no float64 copy; float32 can take the
        # mixed route); non-finite values are caught there from the block sums
        s_real = FeatureStats.from_features(raw_r, precision=precision)
        s_fake = FeatureStats.from_features(raw_f, precision=precision)
    elif small:
        real = as_features(real_features, "real_features", min_rows=2)
        fake = as_features(fake_features, "fake_features", min_rows=2)
        check_same_dim(real, fake, ("real_features", "fake_features"))
        if max(real.shape[0], fake.shape[0]) < real.shape[1]:
            # Fewer samples than dimensions: tr sqrt(S1^1/2 S2 S1^1/2) = ||A B^T||_* exactly.
            a, b = _centred_scaled(real), _centred_scaled(fake)
            diff = real.mean(axis=0) - fake.mean(axis=0)
            nuclear = float(scipy_linalg.svdvals(a @ b.T, check_finite=False).sum())
            trace = float(np.einsum("ij,ij->", a, a) + np.einsum("ij,ij->", b, b)) - 2.0 * nuclear
            mean_term = float(diff @ diff)
            return FIDResult(max(mean_term + trace, 0.0), mean_term, trace, real.shape[0], fake.shape[0], fp)
        s_real = FeatureStats.from_features(real, precision=precision)
        s_fake = FeatureStats.from_features(fake, precision=precision)
    else:
        s_real = _as_stats(real_features, "real_features", precision)
        s_fake = _as_stats(fake_features, "fake_features", precision)
        if s_real.dim != s_fake.dim:
            raise InputError(f"real_features has {s_real.dim} feature dimension(s) but fake_features has "
                             f"{s_fake.dim}; expected features from the same extractor")
    diff = s_real.mean - s_fake.mean
    mean_term = float(diff @ diff)
    c1, c2 = s_real.cov, s_fake.cov
    trace = float(np.trace(c1) + np.trace(c2)) - 2.0 * _trace_sqrt_product(c1, c2)
    return FIDResult(max(mean_term + trace, 0.0), mean_term, trace, s_real.n, s_fake.n, fp)


@register("fid", family="generative", kind="features", inputs=("real_features", "fake_features"),
          higher_is_better=False, bounds=(0.0, math.inf), per_row=False, interval="half_sampling", citation=_CITATION_FID,
          table_fn=two_sample(lambda real, fake: fid(real, fake), stats=True), tested_against=('pytorch-fid calculate_frechet_distance (re-derived in tests/metrics/generative/test_generative.py)', 1e-09))
def fid(real_features: Any, fake_features: Any, *, precision: str = "auto") -> float:
    r"""Fréchet Inception Distance between real and generated feature sets (lower is better).

    .. math::

        \mathrm{FID} = \lVert\mu_r-\mu_g\rVert^2 + \operatorname{tr}\bigl(\Sigma_r+\Sigma_g
                       - 2(\Sigma_r^{1/2}\Sigma_g\Sigma_r^{1/2})^{1/2}\bigr)

    with unbiased (``n - 1``) covariances, as ``pytorch-fid`` and the TTUR code compute them.

    Parameters
    ----------
    real_features, fake_features : array_like of shape (n, d), or FeatureStats
        Features of real and generated samples (Inception pool3 for the standard FID), or
        their :class:`~scorebench.metrics.generative.stats.FeatureStats`.
    precision : {"auto", "mixed", "float64"}
        How feature arrays are summarised (statistics given as ``FeatureStats`` are used
        as they are). ``"float64"``: float64 blocks throughout. ``"mixed"``: each block's
        scatter matrix in float32 (BLAS ``ssyrk``, half the time) on rows centred on the
        block mean, blocks combined in float64; the distance itself (Cholesky, triangular
        products, symmetric eigenvalues) is always float64. Accuracy cost: covariance
        entries carry ~2e-7 relative error instead of ~1e-15; on 2 x 50,000 x 2,048 random
        features the FID changed by ~5e-9 relative, on ill-conditioned features (offsets,
        scales over 4 decades) by < 1e-6 (``tests/metrics/generative/test_generative_precision.py``), but a
        distance that is tiny next to :math:`\operatorname{tr}\Sigma` or hinges on
        near-zero covariance eigenvalues loses more. ``"auto"`` (default): ``"mixed"`` for
        float32 features with ``n * d >= 2**24``, else ``"float64"``.

    Returns
    -------
    float

    References
    ----------
    Heusel, Ramsauer, Unterthiner, Nessler & Hochreiter (2017), "GANs trained by a two
    time-scale update rule converge to a local Nash equilibrium", NeurIPS.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(0).normal(size=(200, 4))
    >>> fid(x, x)
    0.0
    >>> round(fid(x, x + 2.0), 6)
    16.0
    """
    return fid_details(real_features, fake_features, precision=precision).value


@register("sfid", family="generative", kind="features", inputs=("real_spatial", "fake_spatial"),
          higher_is_better=False, bounds=(0.0, math.inf), per_row=False, interval="half_sampling",
          citation="Nash, Menick, Dieleman & Battaglia (2021), Generating images with sparse "
                   "representations, ICML",
          table_fn=two_sample(lambda real, fake: sfid(real, fake), "real_spatial", "fake_spatial", stats=True), tested_against=NO_EXTERNAL_REFERENCE)
def sfid(real_spatial: Any, fake_spatial: Any, *, precision: str = "auto") -> float:
    r"""Spatial FID: the Fréchet distance on spatial (intermediate) features.

    Nash et al. use the first 7 channels of Inception's ``mixed_6/conv`` feature map,
    flattened (7 x 17 x 17 = 2023 dimensions), which keep spatial structure that the pooled
    features average away. Given those features, sFID is :func:`fid` on them:

    .. math:: \mathrm{sFID} = \mathrm{FID}(s_r, s_g).

    In a ``features`` table, spatial features are the columns ``s0, s1, ...``. ``precision``:
    as for :func:`fid`.

    Examples
    --------
    >>> import numpy as np
    >>> s = np.random.default_rng(1).normal(size=(100, 5))
    >>> round(sfid(s, s + 1.0), 6)
    5.0
    """
    return fid_details(real_spatial, fake_spatial, precision=precision).value


def memorization_distance(real_features: Any, fake_features: Any, *, chunk_size: int = 2048) -> float:
    r"""Mean over generated samples of the minimum cosine distance to any real sample.

    .. math:: d = \frac{1}{m}\sum_j \min_i \Bigl(1 - \frac{|\langle g_j, r_i\rangle|}{\lVert g_j\rVert\lVert r_i\rVert}\Bigr)

    Computed in chunks of ``chunk_size`` generated samples (memory ``chunk_size x n``).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(0).normal(size=(50, 4))
    >>> memorization_distance(x, x) < 1e-12
    True
    """
    real = as_features(real_features, "real_features")
    fake = as_features(fake_features, "fake_features")
    check_same_dim(real, fake, ("real_features", "fake_features"))
    rn, fn = np.linalg.norm(real, axis=1), np.linalg.norm(fake, axis=1)
    if (rn == 0).any() or (fn == 0).any():
        raise InputError("memorization distance: zero feature vectors have no cosine distance")
    real_u = real / rn[:, None]
    fake_u = fake / fn[:, None]
    total = 0.0
    for start in range(0, fake_u.shape[0], chunk_size):
        sims = np.abs(fake_u[start:start + chunk_size] @ real_u.T)
        total += float(np.clip(1.0 - sims.max(axis=1), 0.0, None).sum())
    return total / fake_u.shape[0]


@register("mifid", family="generative", kind="features", inputs=("real_features", "fake_features"),
          higher_is_better=False, bounds=(0.0, math.inf), per_row=False, interval="half_sampling", params={"eps": 0.1},
          citation="Bai et al. (2021), On training sample memorization: lessons from benchmarking "
                   "generative modeling with a large-scale competition, KDD",
          table_fn=two_sample(lambda real, fake, **p: mifid(real, fake, **p)), tested_against=NO_EXTERNAL_REFERENCE)
def mifid(real_features: Any, fake_features: Any, *, eps: float = 0.1) -> float:
    r"""Memorization-informed FID: FID divided by a thresholded memorization distance.

    .. math::

        \mathrm{MiFID} = \frac{\mathrm{FID}}{d_\varepsilon}, \qquad
        d_\varepsilon = \begin{cases} d & d < \varepsilon \\ 1 & \text{otherwise}\end{cases}

    with :math:`d` the :func:`memorization_distance` of the generated samples to the real
    ones; ``eps = 0.1`` as in the Kaggle "Generative Dog Images" competition, where it was
    introduced (a tiny constant, 1e-15, is added to :math:`d_\varepsilon` as there).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> real, fake = rng.normal(size=(300, 3)), rng.normal(size=(300, 3))
    >>> mifid(real, fake) > fid(real, fake)   # low-dimensional sets sit close: penalised
    True
    """
    if not (isinstance(eps, (int, float)) and 0 < eps <= 1):
        raise InputError(f"eps: expected a threshold in (0, 1], got {eps!r}")
    value = fid(real_features, fake_features)
    d = memorization_distance(real_features, fake_features)
    return value / ((d if d < eps else 1.0) + 1e-15)
