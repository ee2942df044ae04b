r"""k-NN manifold metrics: precision/recall (Kynkäänniemi) and density/coverage (Naeem).

Each real sample :math:`r_i` gets a ball of radius :math:`\rho_k(r_i)`, the distance to its
:math:`k`-th nearest other real sample (likewise :math:`\rho_k(g_j)` for generated ones):

.. math::

    \mathrm{precision} &= \tfrac{1}{m}\sum_j 1\bigl[\exists i: \lVert g_j - r_i\rVert \le \rho_k(r_i)\bigr] \\
    \mathrm{recall} &= \tfrac{1}{n}\sum_i 1\bigl[\exists j: \lVert r_i - g_j\rVert \le \rho_k(g_j)\bigr] \\
    \mathrm{density} &= \tfrac{1}{km}\sum_j\sum_i 1\bigl[\lVert g_j - r_i\rVert \le \rho_k(r_i)\bigr] \\
    \mathrm{coverage} &= \tfrac{1}{n}\sum_i 1\bigl[\min_j \lVert r_i - g_j\rVert \le \rho_k(r_i)\bigr]

One engine, :func:`manifold_metrics`, computes what is asked for in one streaming pass over
row blocks of the distance matrices (squared distances, float64), so memory stays at
``chunk_size x max(n, m)`` numbers instead of three full ``n x m`` matrices. Balls are
closed (``<=``) as in Kynkäänniemi et al.'s code; the ``prdc`` package uses ``<``, which
differs only on exact ties -- e.g. a point with more than ``k`` exact copies has radius 0,
and its copies lie in its closed ball but not in ``prdc``'s open one. Distances of exact
(and near-) duplicates are computed exactly, so the results do not depend on
``chunk_size`` or on a common offset of the data (see :class:`_Rows`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from scorebench.core.errors import InputError
from scorebench.core.registry import register
from scorebench.metrics.generative.kind import two_sample
from scorebench.metrics.generative._common import as_features, check_positive_int, check_same_dim, same_extractor

__all__ = ["PRDC", "manifold_metrics", "knn_radii", "precision", "recall", "density", "coverage"]

_CHUNK = 1024
_WHAT = ("precision", "recall", "density", "coverage")


@dataclass(frozen=True)
class PRDC:
    """Precision, recall, density and coverage (``nan`` for those not computed)."""

    precision: float
    recall: float
    density: float
    coverage: float
    k: int
    extractor: str | None = None


class _Rows:
    """Rows augmented so one GEMM yields squared distances: ``[x, |x|^2, 1] . [-2y, 1, |y|^2]``.

    Folding the norms into the product saves three passes over every distance block, but
    it rounds: :math:`|x|^2 + |y|^2 - 2x\\cdot y` is off by about
    :math:`\\epsilon(|x|^2 + |y|^2)`, so an exact duplicate can come out :math:`10^{-15}` instead
    of 0 (and that error grows with an offset of the data and depends on the BLAS blocking,
    hence on ``chunk_size``). So the rows are centred first (at ``center``, shared by both
    sets) and every entry within the rounding bound of 0 is recomputed as
    :math:`\\sum_l (x_l - y_l)^2` directly: duplicates are exactly 0 and a radius of 0 (more
    than ``k`` copies of a point) is a closed ball holding its copies.
    """

    def __init__(self, x: np.ndarray, center: np.ndarray) -> None:
        self.x = x - center
        self.sq = np.einsum("ij,ij->i", self.x, self.x)
        col = self.sq[:, None]
        ones = np.ones_like(col)
        self.left = np.hstack([self.x, col, ones])
        self.right = np.hstack([-2.0 * self.x, ones, col])

    def __len__(self) -> int:
        return self.left.shape[0]

    def sq_dist(self, start: int, stop: int, other: _Rows) -> np.ndarray:
        d = self.left[start:stop] @ other.right.T
        # Rounding bound of the GEMM form (a generous multiple of (dim + 2) ulps of the norms).
        # One bound per row (with the other set's largest norm) keeps this to a boolean pass.
        tol = (4.0 * (self.x.shape[1] + 2) * np.finfo(np.float64).eps) * (self.sq[start:stop] + other.sq.max())
        rows, cols = np.nonzero(d <= tol[:, None])
        step = max(1, 2 ** 20 // max(1, self.x.shape[1]))  # bounded memory for many duplicates
        for i in range(0, rows.size, step):
            r, c = rows[i:i + step], cols[i:i + step]
            diff = self.x[start + r] - other.x[c]
            d[r, c] = np.einsum("ij,ij->i", diff, diff)
        return d


def knn_radii(x: np.ndarray, k: int, *, chunk_size: int = _CHUNK) -> np.ndarray:
    r"""Squared distance of each row of ``x`` to its ``k``-th nearest other row.

    Examples
    --------
    >>> import numpy as np
    >>> knn_radii(np.array([[0.0], [1.0], [3.0]]), 1).tolist()
    [1.0, 1.0, 4.0]
    """
    x = np.asarray(x, dtype=np.float64)
    return _radii(_Rows(x, np.median(x, axis=0)), k, chunk_size)


def _radii(rows: _Rows, k: int, chunk_size: int) -> np.ndarray:
    n = len(rows)
    if k >= n:
        raise InputError(f"k = {k} nearest neighbours need more than {k} samples, got {n}")
    out = np.empty(n)
    for start in range(0, n, chunk_size):
        stop = min(start + chunk_size, n)
        d = rows.sq_dist(start, stop, rows)
        d[np.arange(stop - start), np.arange(start, stop)] = -np.inf  # self always ranks first
        d.partition(k, axis=1)
        out[start:stop] = d[:, k]
    return np.maximum(out, 0.0)


def manifold_metrics(real_features: Any, fake_features: Any, *, k: int = 5,
                     which: tuple[str, ...] = _WHAT, chunk_size: int = _CHUNK) -> PRDC:
    """Precision, recall, density and coverage with ``k`` nearest neighbours, in one pass.

    Parameters
    ----------
    real_features : array_like of shape (n, d)
    fake_features : array_like of shape (m, d)
    k : int, default 5
    which : tuple of str
        Subset of ``("precision", "recall", "density", "coverage")`` to compute; the
        others are ``nan`` (recall alone needs the generated samples' radii).
    chunk_size : int, default 1024
        Rows per block; memory is about ``8 * chunk_size * max(n, m)`` bytes per block.

    References
    ----------
    Kynkäänniemi, Karras, Laine, Lehtinen & Aila (2019), "Improved precision and recall
    metric for assessing generative models", NeurIPS; Naeem, Oh, Uh, Choi & Yoo (2020),
    "Reliable fidelity and diversity metrics for generative models", ICML.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(0).normal(size=(200, 2))
    >>> r = manifold_metrics(x, x, k=5)
    >>> r.precision, r.recall, r.coverage
    (1.0, 1.0, 1.0)
    """
    fp = same_extractor(("real_features", real_features), ("fake_features", fake_features))
    real = as_features(real_features, "real_features", min_rows=2)
    fake = as_features(fake_features, "fake_features", min_rows=1)
    check_same_dim(real, fake, ("real_features", "fake_features"))
    k = check_positive_int(k, "k")
    chunk_size = check_positive_int(chunk_size, "chunk_size")
    unknown = [w for w in which if w not in _WHAT]
    if unknown or not which:
        raise InputError(f"which: expected a non-empty subset of {_WHAT}, got {which!r}")
    want = set(which)
    # Distances are translation invariant; centring keeps the norms (and the GEMM error) small.
    # The coordinate-wise median is a data value for odd n, so integer-valued data stay exact.
    center = np.median(real, axis=0)
    real_rows, fake_rows = _Rows(real, center), _Rows(fake, center)
    real_r = _radii(real_rows, k, chunk_size) if want & {"precision", "density", "coverage"} else None
    fake_r = _radii(fake_rows, k, chunk_size) if "recall" in want else None
    n, m = real.shape[0], fake.shape[0]
    in_any = np.zeros(m, dtype=bool)        # precision: generated sample inside some real ball
    ball_counts = np.zeros(m)               # density: number of real balls containing it
    covered = np.zeros(n, dtype=bool)       # coverage: real ball holds a generated sample
    recalled = np.zeros(n, dtype=bool)      # recall: real sample inside some generated ball
    for start in range(0, n, chunk_size):
        stop = min(start + chunk_size, n)
        d = real_rows.sq_dist(start, stop, fake_rows)
        if real_r is not None:
            inside = d <= real_r[start:stop, None]
            if "precision" in want:
                in_any |= inside.any(axis=0)
            if "density" in want:
                ball_counts += np.count_nonzero(inside, axis=0)
            if "coverage" in want:
                covered[start:stop] = inside.any(axis=1)
        if fake_r is not None:
            recalled[start:stop] = (d <= fake_r[None, :]).any(axis=1)
    nan = float("nan")
    return PRDC(
        precision=float(in_any.mean()) if "precision" in want else nan,
        recall=float(recalled.mean()) if "recall" in want else nan,
        density=float(ball_counts.sum() / (k * m)) if "density" in want else nan,
        coverage=float(covered.mean()) if "coverage" in want else nan,
        k=k, extractor=fp,
    )


def _one(name: str, real_features: Any, fake_features: Any, k: int) -> float:
    return getattr(manifold_metrics(real_features, fake_features, k=k, which=(name,)), name)


_KYN = ("Kynkaanniemi, Karras, Laine, Lehtinen & Aila (2019), Improved precision and recall "
        "metric for assessing generative models, NeurIPS")
_NAEEM = ("Naeem, Oh, Uh, Choi & Yoo (2020), Reliable fidelity and diversity metrics for "
          "generative models, ICML")


def _prdc_entry(name: str) -> dict[str, Any]:
    """The registry keywords the four k-NN manifold metrics share; ``name`` picks the statistic."""
    return {"family": "generative", "kind": "features", "inputs": ("real_features", "fake_features"),
            "higher_is_better": True, "per_row": False, "tested_against": ('prdc', 1e-12),
            "table_fn": two_sample(lambda real, fake, **p: _one(name, real, fake, **p))}


@register("precision", bounds=(0.0, 1.0), interval="half_sampling_symmetric", params={"k": 3}, citation=_KYN,
          **_prdc_entry("precision"))
def precision(real_features: Any, fake_features: Any, *, k: int = 3) -> float:
    r"""Fraction of generated samples inside the real k-NN manifold (fidelity).

    .. math:: \frac{1}{m}\sum_j 1\bigl[\exists i: \lVert g_j - r_i\rVert \le \rho_k(r_i)\bigr]

    See :func:`manifold_metrics`.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> precision(rng.normal(size=(300, 2)), rng.normal(10, 1, size=(50, 2)))   # far away
    0.0
    """
    return _one("precision", real_features, fake_features, k)


@register("recall", bounds=(0.0, 1.0), interval="half_sampling_symmetric", params={"k": 3}, citation=_KYN,
          **_prdc_entry("recall"))
def recall(real_features: Any, fake_features: Any, *, k: int = 3) -> float:
    r"""Fraction of real samples inside the generated k-NN manifold (diversity).

    .. math:: \frac{1}{n}\sum_i 1\bigl[\exists j: \lVert r_i - g_j\rVert \le \rho_k(g_j)\bigr]

    Examples
    --------
    Mode collapse: generated samples from only one of two real clusters are all plausible
    (high precision) but reach only about half of the real samples (recall near 0.5); the
    real samples themselves reach all of them.

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> real = np.r_[rng.normal(size=(200, 2)), rng.normal(8, 1, size=(200, 2))]
    >>> fake = rng.normal(size=(200, 2))                   # the first cluster only
    >>> recall(real, fake), precision(real, fake)
    (0.495, 0.985)
    >>> recall(real, real)
    1.0
    """
    return _one("recall", real_features, fake_features, k)


@register("density", bounds=(0.0, math.inf), interval="half_sampling", params={"k": 5}, citation=_NAEEM,
          **_prdc_entry("density"))
def density(real_features: Any, fake_features: Any, *, k: int = 5) -> float:
    r"""Mean number of real k-NN balls holding each generated sample, over ``k`` (about 1 when matched).

    .. math:: \frac{1}{km}\sum_j\sum_i 1\bigl[\lVert g_j - r_i\rVert \le \rho_k(r_i)\bigr]

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> 0.7 < density(rng.normal(size=(1000, 2)), rng.normal(size=(1000, 2))) < 1.3
    True
    """
    return _one("density", real_features, fake_features, k)


@register("coverage", bounds=(0.0, 1.0), interval="half_sampling_symmetric", params={"k": 5}, citation=_NAEEM,
          **_prdc_entry("coverage"))
def coverage(real_features: Any, fake_features: Any, *, k: int = 5) -> float:
    r"""Fraction of real k-NN balls that contain at least one generated sample.

    .. math:: \frac{1}{n}\sum_i 1\bigl[\min_j \lVert r_i - g_j\rVert \le \rho_k(r_i)\bigr]

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(0).normal(size=(100, 2))
    >>> coverage(x, x[:3] + 0.01)      # three generated samples fall in few real balls
    0.17
    """
    return _one("coverage", real_features, fake_features, k)
