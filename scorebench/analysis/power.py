"""Power analysis of scoring rules: how often does a rule rank the true forecast first?

A proper scoring rule is minimised *in expectation* by the true distribution, but on a
finite test set the misspecified forecast can still win. :func:`power` simulates that:
in each replication, ``N`` observations are drawn from the true distribution, the true
forecast and a misspecified one are both scored on them (as ensembles of ``M`` members
sampled from each distribution, or through their parameters for parametric rules), and
the replication counts as a success when the true forecast has the better mean score.
The fraction of successes over ``N`` traces the *region of reliability* of a rule
(Marcotte, Zantedeschi, Drouin & Chapados 2023): the sample sizes, dimensions and
ensemble sizes at which it reliably detects a given error.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.core.lazy import lazy_attr
from scorebench.core.registry import Metric, metric
from scorebench.core.validation import (
    as_float_array,
    check_finite,
    check_level,
    check_positive_int,
    check_positive_number,
)

ndtri = lazy_attr("scipy.special", "ndtri")

__all__ = ["MultivariateNormal", "misspecify", "MISSPECIFICATIONS", "power", "PowerResult"]

_CITATION = ("Marcotte, Zantedeschi, Drouin & Chapados (2023), Regions of Reliability in the Evaluation of "
             "Multivariate Probabilistic Forecasts, ICML")


# --- forecast distributions ------------------------------------------------------------


@dataclass(frozen=True)
class MultivariateNormal:
    """A d-dimensional normal forecast distribution :math:`N(\\mu, \\Sigma)`.

    Parameters
    ----------
    mean : array_like, shape (d,)
    cov : array_like, shape (d, d)
        Symmetric positive semi-definite covariance.

    Examples
    --------
    >>> mvn = MultivariateNormal.equicorrelated(3, rho=0.5)
    >>> mvn.dim, float(mvn.cov[0, 1])
    (3, 0.5)
    """

    mean: np.ndarray
    cov: np.ndarray
    _factor: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        mean = as_float_array(self.mean, "mean", ndim=1)
        cov = as_float_array(self.cov, "cov", ndim=2)
        check_finite(mean, "mean")
        check_finite(cov, "cov")
        d = mean.shape[0]
        if d == 0:
            raise InputError("mean: expected at least one dimension")
        if cov.shape != (d, d):
            raise InputError(f"cov: expected shape ({d}, {d}) to match the mean, got {cov.shape}")
        if not np.allclose(cov, cov.T, rtol=1e-10, atol=1e-12):
            raise InputError("cov: expected a symmetric matrix")
        values, vectors = np.linalg.eigh(cov)
        if values.min() < -1e-10 * max(1.0, abs(values.max())):
            raise InputError(f"cov: not positive semi-definite (smallest eigenvalue {values.min():.3g})")
        if np.any(np.diag(cov) <= 0):
            raise InputError("cov: expected positive variances on the diagonal")
        object.__setattr__(self, "mean", mean)
        object.__setattr__(self, "cov", cov)
        # A with A @ A.T == cov (eigen factor: works for singular covariances too)
        object.__setattr__(self, "_factor", vectors * np.sqrt(np.clip(values, 0.0, None)))

    @classmethod
    def equicorrelated(cls, dim: int, *, rho: float = 0.0, sigma: float = 1.0, mean: float = 0.0
                       ) -> MultivariateNormal:
        """Equal means, equal standard deviations ``sigma`` and correlation ``rho`` between all pairs.

        ``rho`` must lie in :math:`[-1/(d-1), 1]` for the matrix to be a covariance.
        """
        dim = check_positive_int(dim, "dim")
        check_positive_number(sigma, "sigma")
        low = -1.0 / (dim - 1) if dim > 1 else -1.0
        if not low <= rho <= 1.0:
            raise InputError(f"rho: expected a correlation in [{low:g}, 1] for {dim} dimensions, got {rho!r}")
        corr = np.full((dim, dim), float(rho))
        np.fill_diagonal(corr, 1.0)
        return cls(np.full(dim, float(mean)), sigma * sigma * corr)

    @property
    def dim(self) -> int:
        return int(self.mean.shape[0])

    @property
    def std(self) -> np.ndarray:
        """Marginal standard deviations."""
        return np.sqrt(np.diag(self.cov))

    @property
    def corr(self) -> np.ndarray:
        s = self.std
        return self.cov / np.outer(s, s)

    def sample(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        """Draws of shape ``shape + (d,)``."""
        z = rng.standard_normal((*shape, self.dim))
        return self.mean + z @ self._factor.T

    def describe(self) -> str:
        off = self.corr[~np.eye(self.dim, dtype=bool)]
        rho = f", corr {off.min():.3g}..{off.max():.3g}" if off.size else ""
        return (f"N(d={self.dim}, mean {self.mean.min():.3g}..{self.mean.max():.3g}, "
                f"std {self.std.min():.3g}..{self.std.max():.3g}{rho})")


def _shift_mean(truth: MultivariateNormal, size: float) -> MultivariateNormal:
    return MultivariateNormal(truth.mean + size * truth.std, truth.cov)


def _scale(truth: MultivariateNormal, size: float) -> MultivariateNormal:
    if size <= -1:
        raise InputError(f"size: a 'scale' misspecification needs size > -1 (std factor 1 + size), got {size!r}")
    return MultivariateNormal(truth.mean, (1.0 + size) ** 2 * truth.cov)


def _correlation(truth: MultivariateNormal, size: float) -> MultivariateNormal:
    if not 0.0 <= size <= 1.0:
        raise InputError(f"size: a 'correlation' misspecification needs size in [0, 1], got {size!r}")
    s = truth.std
    corr = (1.0 - size) * truth.corr + size * np.eye(truth.dim)
    return MultivariateNormal(truth.mean, corr * np.outer(s, s))


#: Misspecification kinds: name -> (builder, description).
MISSPECIFICATIONS: dict[str, tuple[Callable[[MultivariateNormal, float], MultivariateNormal], str]] = {
    "mean": (_shift_mean, "every mean shifted by size standard deviations"),
    "scale": (_scale, "every standard deviation multiplied by 1 + size (size < 0: under-dispersed)"),
    "correlation": (_correlation, "correlations shrunk towards independence: (1 - size) R + size I"),
}


def misspecify(truth: MultivariateNormal, kind: str, size: float) -> MultivariateNormal:
    """A misspecified version of ``truth``; ``size = 0`` returns the truth itself.

    ========================  =================================================================
    kind                      forecast
    ========================  =================================================================
    ``"mean"``                :math:`\\mu + \\text{size}\\,\\sigma` (bias in std units, all dims)
    ``"scale"``               :math:`(1 + \\text{size})^2\\,\\Sigma` (size > -1)
    ``"correlation"``         correlations :math:`(1 - \\text{size})R + \\text{size}\\,I`, size in [0, 1]
                              (size 1: the dependence between dimensions is ignored)
    ========================  =================================================================

    Examples
    --------
    >>> truth = MultivariateNormal.equicorrelated(2, rho=0.8)
    >>> float(misspecify(truth, "correlation", 0.5).cov[0, 1])
    0.4
    """
    if kind not in MISSPECIFICATIONS:
        raise InputError(f"misspecification: expected one of {', '.join(map(repr, MISSPECIFICATIONS))}, "
                         f"got {kind!r}")
    if isinstance(size, bool) or not isinstance(size, (int, float, np.floating)) or not math.isfinite(size):
        raise InputError(f"size: expected a finite number, got {size!r}")
    return MISSPECIFICATIONS[kind][0](truth, float(size))


# --- scoring a simulated test set --------------------------------------------------------


@dataclass(frozen=True)
class _Draws:
    obs: np.ndarray                 # (rows, d)
    ens_true: np.ndarray | None     # (rows, M, d)
    ens_wrong: np.ndarray | None


def _score_multivariate(rule: Metric, obs: np.ndarray, ens: np.ndarray) -> np.ndarray:
    return rule.compute({"y": obs, "ens": ens})


def _score_marginal_ensemble(rule: Metric, obs: np.ndarray, ens: np.ndarray) -> np.ndarray:
    rows, m, d = ens.shape
    flat = np.ascontiguousarray(ens.transpose(0, 2, 1)).reshape(rows * d, m)
    return np.asarray(rule.compute({"y": obs.reshape(-1), "ens": flat})).reshape(rows, d).sum(axis=1)


def _score_marginal_normal(rule: Metric, obs: np.ndarray, dist: MultivariateNormal) -> np.ndarray:
    rows, d = obs.shape
    arrays = {"y": obs.reshape(-1), "mu": np.tile(dist.mean, rows), "sigma": np.tile(dist.std, rows)}
    return np.asarray(rule.compute(arrays)).reshape(rows, d).sum(axis=1)


@dataclass(frozen=True)
class _Adapter:
    """How a rule of one table kind scores a simulated forecast."""

    uses_ensemble: bool
    score: Callable[[Metric, _Draws, MultivariateNormal, bool], np.ndarray]
    what: str


def _ensemble_adapter(
    fn: Callable[[Metric, np.ndarray, np.ndarray], np.ndarray],
) -> Callable[[Metric, _Draws, MultivariateNormal, bool], np.ndarray]:
    def score(rule: Metric, draws: _Draws, dist: MultivariateNormal, wrong: bool) -> np.ndarray:
        ens = draws.ens_wrong if wrong else draws.ens_true
        if ens is None:  # _Adapter.uses_ensemble makes the simulation draw ensembles for these rules
            raise RuntimeError(f"{rule.name}: an ensemble rule was scored without ensemble draws")
        return fn(rule, draws.obs, ens)

    return score


_ADAPTERS = {
    "multivariate": _Adapter(True, _ensemble_adapter(_score_multivariate),
                             "multivariate ensemble rule on the joint ensemble"),
    "ensemble": _Adapter(True, _ensemble_adapter(_score_marginal_ensemble),
                         "univariate ensemble rule summed over the marginals"),
    "parametric": _Adapter(False, lambda rule, draws, dist, wrong: _score_marginal_normal(rule, draws.obs, dist),
                           "normal parametric rule (mu, sigma) summed over the marginals"),
}


def _resolve_rule(rule: str | Metric) -> tuple[Metric, _Adapter]:
    record = rule if isinstance(rule, Metric) else metric(rule)
    adapter = _ADAPTERS.get(record.kind)
    if adapter is None:
        raise InputError(f"rule {record.name!r} reads {record.kind!r} tables; power analysis simulates "
                         f"{', '.join(_ADAPTERS)} rules only")
    if record.kind == "parametric" and set(record.inputs) != {"y", "mu", "sigma"}:
        raise InputError(f"rule {record.name!r} takes inputs {record.inputs}; parametric rules must be of a "
                         "normal forecast (y, mu, sigma)")
    if not record.per_row:
        raise InputError(f"rule {record.name!r} is a set-level metric; power analysis needs per-row scores")
    if record.higher_is_better is None:
        raise InputError(f"rule {record.name!r} has no direction (higher_is_better is None)")
    return record, adapter


def _positive_ints(values: Any, name: str, minimum: int) -> tuple[int, ...]:
    items = [values] if isinstance(values, (int, np.integer)) else list(values)
    if not items or any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < minimum
                        for v in items):
        raise InputError(f"{name}: expected integers >= {minimum}, got {values!r}")
    return tuple(sorted(set(int(v) for v in items)))


# --- the power analysis ------------------------------------------------------------------


@dataclass(frozen=True)
class PowerResult:
    """Outcome of :func:`power`.

    Attributes
    ----------
    table : DataFrame
        One row per (rule, n): ``rule``, ``n``, ``power`` (fraction of replications
        in which the true forecast has the better mean score, ties counted as half),
        ``mc_se`` (its Monte Carlo standard error :math:`\\sqrt{\\hat\\pi(1-\\hat\\pi)/R}`),
        ``test_power`` (fraction in which a one-sided paired test at level ``alpha``
        finds the true forecast significantly better), ``test_mc_se`` and
        ``mean_difference`` (mean over replications of the score gap, oriented so that
        positive favours the true forecast). ``table.attrs`` records the set-up.
    truth, forecast : MultivariateNormal
    replications, ensemble_size, seed : int
    alpha : float
    """

    table: pd.DataFrame
    truth: MultivariateNormal
    forecast: MultivariateNormal
    replications: int
    ensemble_size: int
    alpha: float
    seed: Any

    def to_frame(self) -> pd.DataFrame:
        return self.table.copy()


def power(rules: str | Metric | Iterable[str | Metric], truth: MultivariateNormal, forecast: MultivariateNormal, *,
          n: int | Sequence[int] = (10, 30, 100), ensemble_size: int = 50, replications: int = 200,
          alpha: float = 0.05, seed: int | np.random.Generator = 0, max_memory: int = 256 * 2**20) -> PowerResult:
    """Simulated power of scoring rules to rank the true forecast above a misspecified one.

    For replication :math:`r = 1..R` and sample size :math:`N`, draw observations
    :math:`y_1..y_N \\sim P` (``truth``), score the true forecast :math:`P` and the
    misspecified :math:`Q` (``forecast``) on each, orient the per-row differences
    :math:`d_i = S(Q, y_i) - S(P, y_i)` so that positive favours :math:`P` (flipped for
    positively oriented rules), and report

    .. math::

        \\widehat{\\text{power}}(N) = \\frac1R \\sum_{r=1}^R \\Bigl(1\\{\\bar d^{(r)}_N > 0\\}
        + \\tfrac12 1\\{\\bar d^{(r)}_N = 0\\}\\Bigr), \\qquad
        \\mathrm{SE} = \\sqrt{\\widehat{\\text{power}}(1 - \\widehat{\\text{power}}) / R},

    and the power of the one-sided paired test (Diebold--Mariano with i.i.d. rows)
    rejecting "no difference" when :math:`\\sqrt N \\bar d_N / s_N > \\Phi^{-1}(1 - \\alpha)`.

    Ensemble rules (table kinds ``multivariate`` and ``ensemble``) score ``ensemble_size``
    members sampled afresh, per row, from :math:`P` and from :math:`Q` -- so the true
    forecast is also an ensemble, as in the finite-sample study of Marcotte et al.
    (2023). Univariate rules (``crps_ensemble``, ``crps_normal``, ``log_score_normal``,
    ...) are applied to every marginal and summed over dimensions; parametric rules get
    the exact marginal :math:`(\\mu_j, \\sigma_j)` of each distribution.

    Parameters
    ----------
    rules : str, Metric or iterable of them
        Registered per-row scoring rules, e.g. ``["energy_score", "variogram_score"]``
        or ``metric("crps_ensemble", estimator="fair")``.
    truth, forecast : MultivariateNormal
        The data-generating (and true forecast) distribution and the misspecified one,
        e.g. ``misspecify(truth, "correlation", 1.0)``.
    n : int or sequence of int, default (10, 30, 100)
        Test-set sizes :math:`N` (each >= 2). Each replication's observations are nested
        (the first :math:`N` rows of the largest set), so the power curve over :math:`N`
        is smooth; each point is still an unbiased estimate.
    ensemble_size : int, default 50
        Members :math:`M` per ensemble forecast.
    replications : int, default 200
        Monte Carlo replications :math:`R`.
    alpha : float, default 0.05
        Level of the one-sided test behind ``test_power``.
    seed : int or numpy Generator, default 0
        Replication :math:`r` draws from its own child stream of ``seed`` (in the order:
        observations, true ensembles, misspecified ensembles), so results do not
        depend on ``max_memory`` or on which rules are analysed together.
    max_memory : int, default 256 MiB
        Approximate bytes of simulated draws (and rule work space) held at once.

    Returns
    -------
    PowerResult

    References
    ----------
    Marcotte, Zantedeschi, Drouin & Chapados (2023), Regions of Reliability in the
    Evaluation of Multivariate Probabilistic Forecasts, ICML; Diebold & Mariano (1995),
    JBES 13(3).

    Examples
    --------
    Registered rules are named (``power(["energy_score", "variogram_score"], truth,
    forecast)``); a :class:`~scorebench.core.registry.Metric` record works too, e.g. a
    squared error of the forecast mean:

    >>> from scorebench.core.registry import Metric
    >>> squared_error = Metric(name="squared_error", family="demo", kind="parametric",
    ...                        inputs=("y", "mu", "sigma"), higher_is_better=False,
    ...                        fn=lambda y, mu, sigma: (y - mu) ** 2)
    >>> truth = MultivariateNormal.equicorrelated(2, rho=0.5)
    >>> result = power(squared_error, truth, misspecify(truth, "mean", 0.3), n=[5, 40],
    ...                replications=100, seed=1)
    >>> result.table["power"].tolist()
    [0.63, 0.82]
    """
    resolved = _resolve_rules(rules)
    names = [record.name for record, _ in resolved]
    if not isinstance(truth, MultivariateNormal) or not isinstance(forecast, MultivariateNormal):
        raise InputError("truth, forecast: expected MultivariateNormal distributions")
    if truth.dim != forecast.dim:
        raise InputError(f"truth has {truth.dim} dimensions but the forecast has {forecast.dim}")
    sizes = _positive_ints(n, "n", 2)
    ensemble_size = check_positive_int(ensemble_size, "ensemble_size")
    replications = check_positive_int(replications, "replications")
    check_level(alpha, "alpha")
    check_positive_int(max_memory, "max_memory (bytes)")
    streams = _streams(seed, replications)
    diffs = _differences(resolved, streams, truth, forecast, sizes[-1], ensemble_size, max_memory)
    if not np.all(np.isfinite(diffs)):
        bad = [names[j] for j in range(len(names)) if not np.all(np.isfinite(diffs[j]))]
        raise InputError(f"rules {bad} returned non-finite scores on the simulated forecasts")
    table = _summarise(names, diffs, sizes, alpha)
    table.attrs.update({
        "method": "power: Monte Carlo fraction of replications in which the true forecast has the better mean score",
        "seed": seed if isinstance(seed, (int, np.integer)) else "generator", "replications": replications,
        "ensemble_size": ensemble_size, "alpha": float(alpha), "truth": truth.describe(),
        "forecast": forecast.describe(), "citation": _CITATION,
    })
    return PowerResult(table=table, truth=truth, forecast=forecast, replications=replications,
                       ensemble_size=ensemble_size, alpha=float(alpha), seed=seed)


def _resolve_rules(rules: str | Metric | Iterable[str | Metric]) -> list:
    """(record, adapter) of each rule, refusing none and duplicates."""
    if isinstance(rules, (str, Metric)):
        rules = [rules]
    resolved = [_resolve_rule(r) for r in rules]
    if not resolved:
        raise InputError("rules: expected at least one scoring rule")
    names = [record.name for record, _ in resolved]
    if len(set(names)) != len(names):
        raise InputError(f"rules: duplicate rule names {names}")
    return resolved


def _streams(seed: int | np.random.Generator, replications: int) -> list[np.random.Generator]:
    """One independent generator per replication, spawned from the seed (or a Generator)."""
    if isinstance(seed, np.random.Generator):
        return seed.spawn(replications)
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and seed >= 0:
        return [np.random.default_rng(s) for s in np.random.SeedSequence(int(seed)).spawn(replications)]
    raise InputError(f"seed: expected a non-negative integer or a numpy Generator, got {seed!r}")


def _differences(resolved: list, streams: list[np.random.Generator], truth: MultivariateNormal,
                 forecast: MultivariateNormal, n_max: int, m: int, max_memory: int) -> np.ndarray:
    """Oriented per-row score differences (rules x replications x n_max), positive favouring the truth;
    replications are drawn in chunks that fit in ``max_memory``."""
    d = truth.dim
    needs_ensemble = any(adapter.uses_ensemble for _, adapter in resolved)
    per_row = 8 * (d + (2 * m * d + m * m * (d + 1) if needs_ensemble else 4 * d))
    reps_per_chunk = max(1, int(max_memory // (per_row * n_max)))
    diffs = np.empty((len(resolved), len(streams), n_max))
    for start in range(0, len(streams), reps_per_chunk):
        chunk = streams[start:start + reps_per_chunk]
        draws = _draw(chunk, truth, forecast, n_max, m, needs_ensemble)
        for j, (record, adapter) in enumerate(resolved):
            s_true = np.asarray(adapter.score(record, draws, truth, False), dtype=np.float64)
            s_wrong = np.asarray(adapter.score(record, draws, forecast, True), dtype=np.float64)
            gap = s_wrong - s_true if record.higher_is_better is False else s_true - s_wrong
            diffs[j, start:start + len(chunk)] = gap.reshape(len(chunk), n_max)
    return diffs


def _draw(streams: list[np.random.Generator], truth: MultivariateNormal, forecast: MultivariateNormal,
          n_max: int, m: int, needs_ensemble: bool) -> _Draws:
    obs, ens_true, ens_wrong = [], [], []
    for rng in streams:
        obs.append(truth.sample(rng, (n_max,)))
        if needs_ensemble:
            ens_true.append(truth.sample(rng, (n_max, m)))
            ens_wrong.append(forecast.sample(rng, (n_max, m)))
    return _Draws(np.concatenate(obs), np.concatenate(ens_true) if needs_ensemble else None,
                  np.concatenate(ens_wrong) if needs_ensemble else None)


def _summarise(names: list[str], diffs: np.ndarray, sizes: tuple[int, ...], alpha: float) -> pd.DataFrame:
    z = float(ndtri(1.0 - alpha))
    replications = diffs.shape[1]
    rows = []
    for j, name in enumerate(names):
        for size in sizes:
            head = diffs[j, :, :size]
            mean = head.mean(axis=1)
            sd = head.std(axis=1, ddof=1)
            win = np.where(mean > 0, 1.0, np.where(mean == 0, 0.5, 0.0)).mean()
            with np.errstate(divide="ignore", invalid="ignore"):
                stat = np.where(sd > 0, mean * math.sqrt(size) / sd, np.where(mean > 0, np.inf, -np.inf))
            reject = float(np.mean(stat > z))
            rows.append({
                "rule": name, "n": size, "power": float(win),
                "mc_se": math.sqrt(win * (1.0 - win) / replications),
                "test_power": reject, "test_mc_se": math.sqrt(reject * (1.0 - reject) / replications),
                "mean_difference": float(mean.mean()),
            })
    return pd.DataFrame(rows, columns=["rule", "n", "power", "mc_se", "test_power", "test_mc_se",
                                       "mean_difference"])
