r"""Scoring rules for binary and categorical forecasts.

All scores are *losses* (lower is better) computed per row in float64.

Shapes: binary rules take ``y`` (0/1 outcomes) and ``p`` (probability of ``y = 1``) that
broadcast together. Multiclass rules take ``y`` (integer class indices ``0..K-1``, shape
``(...)``) and ``P`` (shape ``(..., K)``, probabilities on the last axis summing to 1).

Every rule here is a Bregman divergence between the one-hot outcome :math:`e_y` and the
forecast :math:`p` for a strictly convex generator :math:`G` on the simplex,

.. math:: S(p, y) = G(e_y) - G(p) - \langle \nabla G(p), e_y - p \rangle ,

which is zero for a perfect deterministic forecast and strictly proper (Savage 1971;
Gneiting & Raftery 2007, Thm. 2). :func:`bregman_score` exposes the family for any
generator; Brier, log and the class-aware quadratic score are instances.

Log-score clipping rule: by default (``clip=1e-15``) probabilities are clipped to
``[clip, 1 - clip]`` in float64 before the logarithm, whatever dtype the input had, so a
forecast of 0 for the outcome that happened scores :math:`-\log(10^{-15}) \approx 34.54`
instead of infinity. :func:`scorebench.evaluate` counts the rows whose score was capped
(``attrs["clipped_rows"]``) and warns; ``clip=None`` (``log_score(clip=none)`` on the
command line) keeps the strictly proper rule: an infinite score.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from scorebench.core.errors import InputError
from scorebench.core.registry import NO_EXTERNAL_REFERENCE, register
from scorebench.core.validation import as_float_array
from scorebench.metrics.scoring_rules._common import FAMILY, GNEITING_RAFTERY, PROB_CLIP, binary_inputs
from scorebench.metrics.scoring_rules.inputs import multiclass_inputs
from scorebench.core.docstrings import fill_doc
from scorebench.metrics.scoring_rules.docs import SECTIONS

__all__ = [
    "brier_score", "log_score", "brier_score_multiclass", "log_score_multiclass",
    "spherical_score", "rps", "BregmanGenerator", "GENERATORS", "bregman_score", "capm_matrix",
    "capm_score",
]



def _onehot(idx: np.ndarray, k: int) -> np.ndarray:
    return (idx[..., None] == np.arange(k)).astype(np.float64)


@register("brier_score", family=FAMILY, kind="binary", inputs=("y", "p"), higher_is_better=False,
          bounds=(0.0, 1.0), proper="strict", per_row=True,
          citation="Brier (1950), Monthly Weather Review 78(1):1-3", tested_against=(('scoringrules 0.7 (numpy backend)', 1e-10), ('properscoring 0.1', 1e-10),))
def brier_score(y: Any, p: Any) -> np.ndarray:
    r"""Brier score of a probability forecast of a binary event (per row).

    .. math:: \mathrm{BS}(p, y) = (p - y)^2, \qquad y \in \{0, 1\}.

    Parameters
    ----------
    y : array_like
        Outcomes, 0 or 1.
    p : array_like
        Forecast probability that ``y = 1``; broadcasts with ``y``.

    Returns
    -------
    ndarray
        One score per row, in ``[0, 1]``; lower is better.

    References
    ----------
    Brier, G. W. (1950). Verification of forecasts expressed in terms of probability.
    *Monthly Weather Review* 78(1), 1-3.

    Examples
    --------
    >>> brier_score([1, 0], [0.8, 0.4]).tolist()
    [0.03999999999999998, 0.16000000000000003]
    """
    y, p = binary_inputs(y, p)
    return (p - y) ** 2


def _clip_level(clip: Any) -> float | None:
    """``clip`` as a float in (0, 0.5), or None for no clipping (also spelled "none")."""
    if clip is None or (isinstance(clip, str) and clip.strip().lower() == "none"):
        return None
    if isinstance(clip, bool) or not isinstance(clip, (int, float)) or not 0.0 < float(clip) < 0.5:
        raise InputError(f"clip: expected a probability in (0, 0.5) or None (no clipping), got {clip!r}")
    return float(clip)


def _neg_log(q: np.ndarray, clip: Any) -> np.ndarray:
    """-log of the probability of the outcome, clipped to [clip, 1 - clip] unless clip is None."""
    level = _clip_level(clip)
    if level is None:
        with np.errstate(divide="ignore"):
            return -np.log(q)
    return -np.log(np.clip(q, level, 1.0 - level))


def _clip_note(q: np.ndarray, clip: Any) -> dict[str, Any]:
    level = _clip_level(clip)
    if level is None:
        return {}
    capped = int(np.count_nonzero(q < level))
    if not capped:
        return {"clipped_rows": 0}
    return {"clipped_rows": capped,
            "message": f"{capped} row(s) gave the outcome probability below clip={level:g}; their score is capped at "
                       f"{-math.log(level):.2f} (the unclipped score is up to infinity; clip=none keeps it)"}


def _binary_clip_note(arrays: Any, clip: Any = PROB_CLIP) -> dict[str, Any]:
    y, p = np.asarray(arrays["y"], dtype=np.float64), np.asarray(arrays["p"], dtype=np.float64)
    return _clip_note(np.where(y == 1, p, 1.0 - p), clip)


def _multiclass_clip_note(arrays: Any, clip: Any = PROB_CLIP) -> dict[str, Any]:
    idx, P = multiclass_inputs(arrays["y"], arrays["P"])
    return _clip_note(np.take_along_axis(P, idx[..., None], axis=-1)[..., 0], clip)


@register("log_score", family=FAMILY, kind="binary", inputs=("y", "p"), higher_is_better=False,
          bounds=(0.0, math.inf), proper="strict", per_row=True, params={"clip": PROB_CLIP},
          citation="Good (1952), JRSS B 14(1):107-114", note=_binary_clip_note, tested_against=(('scoringrules 0.7 (numpy backend)', 1e-10), ('properscoring 0.1', 1e-10),))
def log_score(y: Any, p: Any, *, clip: float | None = PROB_CLIP) -> np.ndarray:
    r"""Logarithmic score (negative log-likelihood) of a binary probability forecast.

    .. math:: \mathrm{LS}(p, y) = -y \log \tilde p - (1 - y) \log(1 - \tilde p),
              \qquad \tilde p = \min(\max(p, c), 1 - c),\ c = \mathrm{clip}.

    The clipping constant is applied in float64 and does not depend on the input dtype.

    Parameters
    ----------
    y : array_like
        Outcomes, 0 or 1.
    p : array_like
        Forecast probability that ``y = 1``.
    clip : float or None, default 1e-15
        Probabilities are clipped to ``[clip, 1 - clip]`` (scikit-learn's ``log_loss``
        clips to the float's eps instead). ``None`` (or ``"none"``): no clipping, so a
        probability of 0 for what happened scores ``inf`` — the strictly proper rule.

    Returns
    -------
    ndarray
        One score per row, in ``[0, -log(clip)]`` (``[0, inf]`` without clipping); lower
        is better.

    References
    ----------
    Good, I. J. (1952). Rational decisions. *JRSS B* 14(1), 107-114.

    Examples
    --------
    >>> np.round(log_score([1, 0, 1], [0.5, 0.5, 0.0]), 4).tolist()
    [0.6931, 0.6931, 34.5388]
    >>> log_score([1], [0.0], clip=None).tolist()
    [inf]
    """
    y, p = binary_inputs(y, p)
    return _neg_log(np.where(y == 1, p, 1.0 - p), clip)


@register("brier_score_multiclass", family=FAMILY, kind="multiclass", inputs=("y", "P"),
          higher_is_better=False, bounds=(0.0, 2.0), proper="strict", per_row=True,
          citation="Brier (1950), Monthly Weather Review 78(1):1-3", tested_against=(('scoringrules 0.7 (numpy backend)', 1e-10), ('properscoring 0.1', 1e-10),))
def brier_score_multiclass(y: Any, P: Any) -> np.ndarray:
    r"""Multiclass Brier (quadratic) score.

    .. math:: \mathrm{BS}(P, y) = \sum_{k=1}^K (P_k - \mathbb 1\{y = k\})^2 \in [0, 2].

    Parameters
    ----------
    %(classes)s

    Returns
    -------
    ndarray, shape (...)

    Examples
    --------
    >>> brier_score_multiclass([0, 2], [[0.5, 0.25, 0.25], [0.0, 0.0, 1.0]]).tolist()
    [0.375, 0.0]
    """
    idx, P = multiclass_inputs(y, P)
    return quadratic_form_score(idx, P, None)


@register("log_score_multiclass", family=FAMILY, kind="multiclass", inputs=("y", "P"),
          higher_is_better=False, bounds=(0.0, math.inf), proper="strict", per_row=True,
          params={"clip": PROB_CLIP}, citation="Good (1952), JRSS B 14(1):107-114", note=_multiclass_clip_note, tested_against=(('scoringrules 0.7 (numpy backend)', 1e-10), ('properscoring 0.1', 1e-10),))
def log_score_multiclass(y: Any, P: Any, *, clip: float | None = PROB_CLIP) -> np.ndarray:
    r"""Multiclass logarithmic score (cross-entropy of the observed class).

    .. math:: \mathrm{LS}(P, y) = -\log \min(\max(P_y, c), 1 - c),\ c = \mathrm{clip}

    ``clip`` as in :func:`log_score` (``None``: no clipping, infinite score for
    :math:`P_y = 0`).

    Examples
    --------
    >>> np.round(log_score_multiclass([1], [[0.25, 0.5, 0.25]]), 6).tolist()
    [0.693147]
    """
    idx, P = multiclass_inputs(y, P)
    return _neg_log(np.take_along_axis(P, idx[..., None], axis=-1)[..., 0], clip)


@register("spherical_score", family=FAMILY, kind="multiclass", inputs=("y", "P"),
          higher_is_better=False, bounds=(0.0, 1.0), proper="strict", per_row=True,
          citation="Good (1971); " + GNEITING_RAFTERY, tested_against=NO_EXTERNAL_REFERENCE)
def spherical_score(y: Any, P: Any) -> np.ndarray:
    r"""Spherical score, oriented as a loss.

    The classical spherical score :math:`P_y / \lVert P \rVert_2` is positively oriented
    (higher is better, in ``[0, 1]``). scorebench reports it as a loss so that every
    scoring rule shares one direction:

    .. math:: \mathrm{SphS}(P, y) = 1 - \frac{P_y}{\lVert P \rVert_2} \in [0, 1].

    It is strictly proper and zero for a perfect deterministic forecast.

    Examples
    --------
    >>> np.round(spherical_score([0, 1], [[0.5, 0.5], [1.0, 0.0]]), 6).tolist()
    [0.292893, 1.0]
    """
    idx, P = multiclass_inputs(y, P)
    py = np.take_along_axis(P, idx[..., None], axis=-1)[..., 0]
    return 1.0 - py / np.sqrt(np.einsum("...k,...k->...", P, P))


@register("rps", family=FAMILY, kind="multiclass", inputs=("y", "P"), higher_is_better=False,
          bounds=(0.0, math.inf), proper="strict", per_row=True, params={"normalize": False},
          citation="Epstein (1969), J. Applied Meteorology 8:985-987", tested_against=(('scoringrules 0.7 (numpy backend)', 1e-10), ('properscoring 0.1', 1e-10),))
def rps(y: Any, P: Any, *, normalize: bool = False) -> np.ndarray:
    r"""Ranked probability score for ordered classes ``0 < 1 < ... < K-1``.

    .. math:: \mathrm{RPS}(P, y) = c \sum_{k=1}^{K} \Bigl(\sum_{j \le k} P_j - \mathbb 1\{y \le k\}\Bigr)^2,
              \qquad c = 1 \text{ or } \tfrac{1}{K - 1} \text{ (normalize)}.

    Parameters
    ----------
    %(ordinal_classes)s
    normalize : bool, default False
        Divide by ``K - 1`` so that the score lies in ``[0, 1]``.

    Examples
    --------
    >>> rps([2], [[0.25, 0.25, 0.5]]).tolist()
    [0.3125]
    """
    idx, P = multiclass_inputs(y, P)
    k = P.shape[-1]
    diff = np.cumsum(P, axis=-1) - (np.arange(k) >= idx[..., None])
    out = np.einsum("...k,...k->...", diff, diff)
    return out / (k - 1) if normalize else out


# --- the Bregman family -----------------------------------------------------------------


@dataclass(frozen=True)
class BregmanGenerator:
    """A strictly convex generator :math:`G` on the simplex, with its gradient.

    Attributes
    ----------
    name : str
    value : callable
        ``value(P) -> G(P)`` over the last axis.
    gradient : callable
        ``gradient(P) -> grad G(P)``, same shape as ``P``.
    """

    name: str
    value: Callable[[np.ndarray], np.ndarray]
    gradient: Callable[[np.ndarray], np.ndarray]


def _xlogx(P: np.ndarray) -> np.ndarray:
    Q = np.clip(P, PROB_CLIP, 1.0)
    return np.sum(Q * np.log(Q), axis=-1)


def _tsallis(gamma: float) -> BregmanGenerator:
    return BregmanGenerator(
        name=f"tsallis({gamma:g})",
        value=lambda P: (np.sum(P ** gamma, axis=-1) - 1.0) / (gamma - 1.0),
        gradient=lambda P: gamma * P ** (gamma - 1.0) / (gamma - 1.0),
    )


#: Built-in generators: ``quadratic`` gives the Brier score, ``entropy`` the log score
#: (with the documented clipping), ``tsallis2`` / ``tsallis3`` the power scores.
GENERATORS: dict[str, BregmanGenerator] = {
    "quadratic": BregmanGenerator("quadratic", lambda P: np.sum(P * P, axis=-1), lambda P: 2.0 * P),
    "entropy": BregmanGenerator("entropy", _xlogx, lambda P: np.log(np.clip(P, PROB_CLIP, 1.0)) + 1.0),
    "tsallis2": _tsallis(2.0),
    "tsallis3": _tsallis(3.0),
}


@register("bregman_score", family=FAMILY, kind="multiclass", inputs=("y", "P"),
          higher_is_better=False, bounds=(0.0, math.inf), proper="strict", per_row=True,
          params={"generator": "quadratic"},
          citation="Savage (1971), JASA 66(336):783-801; " + GNEITING_RAFTERY, tested_against=NO_EXTERNAL_REFERENCE)
def bregman_score(y: Any, P: Any, *, generator: str | BregmanGenerator = "quadratic") -> np.ndarray:
    r"""Scoring rule of the Bregman family for a strictly convex generator :math:`G`.

    .. math:: S_G(P, y) = G(e_y) - G(P) - \langle \nabla G(P), e_y - P \rangle
              = d_G(e_y, P) \ge 0.

    Any strictly convex :math:`G` gives a strictly proper score (Savage's representation);
    the expected score under the truth :math:`Q` exceeds its minimum by :math:`d_G(Q, P)`.

    Parameters
    ----------
    %(classes)s
    generator : str or BregmanGenerator, default "quadratic"
        A name from :data:`GENERATORS` (``quadratic`` = Brier, ``entropy`` = log score,
        ``tsallis2``, ``tsallis3``) or your own :class:`BregmanGenerator`.

    Examples
    --------
    >>> P = [[0.2, 0.5, 0.3]]
    >>> bool(np.allclose(bregman_score([1], P), brier_score_multiclass([1], P)))
    True
    >>> bool(np.allclose(bregman_score([1], P, generator="entropy"), log_score_multiclass([1], P)))
    True
    """
    if isinstance(generator, str):
        if generator not in GENERATORS:
            raise InputError(f"generator: expected one of {', '.join(map(repr, GENERATORS))} "
                             f"or a BregmanGenerator, got {generator!r}")
        generator = GENERATORS[generator]
    elif not isinstance(generator, BregmanGenerator):
        raise InputError(f"generator: expected a name or a BregmanGenerator, got {type(generator).__name__}")
    idx, P = multiclass_inputs(y, P)
    E = _onehot(idx, P.shape[-1])
    grad = generator.gradient(P)
    return generator.value(E) - generator.value(P) - np.sum(grad * (E - P), axis=-1)


def quadratic_form_score(idx: np.ndarray, P: np.ndarray, A: np.ndarray | None) -> np.ndarray:
    r"""Quadratic Bregman score :math:`(e_y - P)^\top A (e_y - P)` (``A=None``: identity)."""
    D = P.copy()
    np.put_along_axis(D, idx[..., None], np.take_along_axis(D, idx[..., None], axis=-1) - 1.0, axis=-1)
    if A is None:
        return np.einsum("...k,...k->...", D, D)
    return np.einsum("...k,kl,...l->...", D, A, D)


def capm_matrix(n_classes: int, *, weights: Any = None, similarity: Any = None,
                strength: float = 1.0) -> np.ndarray:
    r"""The matrix :math:`A = \operatorname{diag}(w) + \lambda L(W)` of the class-aware score.

    ``weights`` (length K, > 0) are per-class costs; ``similarity`` is a symmetric,
    non-negative ``(K, K)`` class-similarity (or confusion) graph ``W`` whose Laplacian
    :math:`L = \operatorname{diag}(W 1) - W` penalises probability mass moved between
    related classes; ``strength`` is :math:`\lambda \ge 0`.
    """
    k = int(n_classes)
    w = np.ones(k) if weights is None else as_float_array(weights, "weights", check_inf=True)
    if w.shape != (k,):
        raise InputError(f"weights: expected {k} class weights, got shape {w.shape}")
    if np.isnan(w).any() or (w <= 0).any():
        raise InputError("weights: expected positive class weights")
    A = np.diag(w)
    if similarity is not None:
        W = as_float_array(similarity, "similarity", check_inf=True)
        if W.shape != (k, k):
            raise InputError(f"similarity: expected a ({k}, {k}) matrix, got shape {W.shape}")
        if np.isnan(W).any() or (W < 0).any() or not np.allclose(W, W.T, rtol=0, atol=1e-12):
            raise InputError("similarity: expected a symmetric matrix of non-negative weights")
        if not (isinstance(strength, (int, float)) and math.isfinite(strength) and strength >= 0):
            raise InputError(f"strength: expected a finite number >= 0, got {strength!r}")
        A = A + float(strength) * (np.diag(W.sum(axis=1)) - W)
    return A


@register("capm_score", family=FAMILY, kind="multiclass", inputs=("y", "P"), higher_is_better=False,
          bounds=(0.0, math.inf), proper="strict", per_row=True,
          params={"weights": None, "similarity": None, "strength": 1.0},
          citation="Structured Proper Loss Geometries for Multiclass Classification (2026), arXiv:2606.29471", tested_against=NO_EXTERNAL_REFERENCE)
def capm_score(y: Any, P: Any, *, weights: Any = None, similarity: Any = None,
               strength: float = 1.0) -> np.ndarray:
    r"""Class-aware quadratic Bregman score (CAPM).

    The quadratic member of the Bregman family with generator
    :math:`G(p) = p^\top A p` and a class-aware matrix
    :math:`A = \operatorname{diag}(w) + \lambda L(W)` (see :func:`capm_matrix`):

    .. math:: \mathrm{CAPM}(P, y) = (e_y - P)^\top A \,(e_y - P).

    With unit weights and no graph it is the multiclass Brier score. It is strictly proper
    because :math:`A` is positive definite (diagonal part positive, Laplacian positive
    semi-definite); the expected excess score of a forecast :math:`P` under the truth
    :math:`Q` is :math:`(Q - P)^\top A (Q - P)`. The paper treats CAPM as a structured
    instance of quadratic scoring-rule theory; this implementation follows that
    description (class weights on the diagonal, a class graph's Laplacian as the
    coupling).

    Parameters
    ----------
    %(classes)s
    weights : array_like, shape (K,), optional
        Positive per-class weights (default all ones).
    similarity : array_like, shape (K, K), optional
        Symmetric non-negative class-similarity graph.
    strength : float, default 1.0
        Multiplier :math:`\lambda` of the graph Laplacian.

    References
    ----------
    arXiv:2606.29471, "Structured Proper Loss Geometries for Multiclass Classification:
    Theory and Controlled Empirical Evaluation" (2026).

    Examples
    --------
    >>> P = [[0.7, 0.2, 0.1]]
    >>> float(capm_score([0], P)[0]) == float(brier_score_multiclass([0], P)[0])
    True
    >>> W = [[0, 1, 0], [1, 0, 0], [0, 0, 0]]
    >>> round(float(capm_score([0], P, similarity=W, strength=0.5)[0]), 6)
    0.265
    """
    idx, P = multiclass_inputs(y, P)
    A = capm_matrix(P.shape[-1], weights=weights, similarity=similarity, strength=strength)
    return quadratic_form_score(idx, P, A)


fill_doc(brier_score_multiclass, rps, bregman_score, capm_score, **SECTIONS)
