"""Rank uncertainty for every method: bootstrap intervals, agreement between methods, stability.

* :func:`bootstrap_scores` resamples tasks (columns of a score matrix, with their weights)
  or battles (rows of a battles table) with replacement, seeded, and re-runs the method;
  methods with a registered fast path (Bradley–Terry) use it for battles.
* :func:`method_agreement` is the Kendall tau-b matrix between methods' rankings.
* :func:`leave_one_task_out` re-runs a method without each task in turn and reports the
  winners and the rank correlation with the full ranking.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError, ScorebenchError
from scorebench.core.validation import check_choice, check_level, check_positive_int
from scorebench.aggregate.input import Battles, ScoreMatrix, read_input
from scorebench.aggregate.ranking import competition_ranks
from scorebench.aggregate.registry import Method, get_method

__all__ = ["bootstrap_scores", "summarize_bootstrap", "sandwich_summary", "INTERVALS", "method_agreement", "leave_one_task_out",
           "RESAMPLE", "prepare", "run_method"]

RESAMPLE = ("tasks", "battles")
INTERVALS = ("sandwich", "bootstrap")


def prepare(method: Method, data: Any) -> Any:
    """Hand the method the container it accepts (a score matrix becomes battles if needed)."""
    if "table" in method.accepts and not isinstance(data, (ScoreMatrix, Battles)):
        return data
    if isinstance(data, ScoreMatrix):
        if "matrix" in method.accepts:
            return data
        if "battles" in method.accepts:
            from scorebench.aggregate.input import battles_from_matrix

            return battles_from_matrix(data)
    if isinstance(data, Battles) and "battles" in method.accepts:
        return data
    if isinstance(data, Battles):
        raise InputError(f"method {method.name!r} reads a score table (systems x tasks) and cannot rank a battles "
                         "table; use bradley_terry, elo, plackett_luce or a Condorcet rule (copeland, kemeny, ...)")
    raise InputError(f"method {method.name!r} accepts {', '.join(method.accepts)} input, "
                     f"not a {type(data).__name__}")


def run_method(method: Method, data: Any, params: dict[str, Any]):
    """Run ``method`` on ``data`` (a ScoreMatrix, Battles or raw table) with ``params``."""
    return method.fn(prepare(method, data), **params)


def bootstrap_scores(data: ScoreMatrix | Battles, method: Method, params: dict[str, Any], n_boot: int,
                     rng: np.random.Generator, resample: str | None = None) -> tuple[np.ndarray, int]:
    """Bootstrap replicates of a method's scores, shape ``(n_ok, n_systems)``, and the failures.

    ``resample="tasks"`` draws columns with replacement (their weights travel with them);
    ``"battles"`` draws battles with replacement, in random order (which matters to Elo).
    Replicates in which the method cannot run (e.g. a Bradley–Terry resample where one
    system never loses) are dropped and counted.
    """
    n_boot = check_positive_int(n_boot, "n_boot")
    if not isinstance(data, (ScoreMatrix, Battles)) and method.bootstrap is not None and resample in (None, "battles"):
        # a method reading a raw table (battles with covariates) resamples its own rows
        return method.bootstrap(data, int(n_boot), rng, **params), 0
    default = "tasks" if isinstance(data, ScoreMatrix) else "battles"
    resample = default if resample is None else check_choice(resample, "resample", RESAMPLE)
    if resample != default:
        raise InputError(f"resample={resample!r} does not apply to a {type(data).__name__} "
                         f"(use {default!r})")
    if isinstance(data, Battles):
        if method.bootstrap is not None:
            return method.bootstrap(data, int(n_boot), rng, **params), 0
        size = len(data.a)
        draw = lambda: data.take(rng.integers(size, size=size))  # noqa: E731
    elif isinstance(data, ScoreMatrix):
        if data.n_columns < 2:
            raise InputError("bootstrapping tasks needs at least 2 columns; pass n_boot=0")
        m = data.n_columns
        if method.column_parts is not None:
            return column_bootstrap(data, method, params, int(n_boot), rng)
        draw = lambda: data.take_columns(rng.integers(m, size=m))  # noqa: E731
    else:
        raise InputError(f"method {method.name!r} reads a raw table and has no bootstrap; pass n_boot=0")
    out = []
    failed = 0
    for _ in range(int(n_boot)):
        replicate = draw()
        try:
            out.append(run_method(method, replicate, params).scores)
        except ScorebenchError:
            failed += 1
    if not out:
        raise InputError(f"method {method.name!r} failed on every bootstrap replicate")
    return np.array(out), failed


def column_bootstrap(data: ScoreMatrix, method: Method, params: dict[str, Any], n_boot: int,
                     rng: np.random.Generator) -> tuple[np.ndarray, int]:
    r"""Task-resampling replicates of a column-additive method, all at once.

    The same column draws as the replicate-by-replicate loop (``n_boot`` times
    ``rng.integers(m, size=m)``), turned into counts ``c_bj``; replicate ``b`` of system ``a``
    is :math:`\sum_j c_{bj} w_j N_{aj} / \sum_j c_{bj} w_j D_{aj}`, one matrix product for all
    replicates. A replicate where some system's denominator is 0 fails, as the method would.
    """
    from scorebench.core.stats import weighted_sums

    m = data.n_columns
    counts = np.empty((n_boot, m))
    for b in range(n_boot):
        counts[b] = np.bincount(rng.integers(m, size=m), minlength=m)
    numer, denom = method.column_parts(data, **params)
    w = counts * data.weights[None, :]
    scores = weighted_sums(w, numer.T)  # replicates x systems
    if denom is None:
        return scores, 0
    totals = weighted_sums(w, denom.T)
    ok = (totals > 0).all(axis=1)
    if not ok.any():
        raise InputError(f"method {method.name!r} failed on every bootstrap replicate")
    return scores[ok] / totals[ok], int((~ok).sum())


def summarize_bootstrap(boot: np.ndarray, ci: float) -> dict[str, np.ndarray]:
    """Percentile intervals of scores and ranks from bootstrap replicates.

    A system whose replicates are discrete — all on the half-integer lattice (Borda points,
    Copeland counts) or taking at most a fifth as many distinct values as there are
    replicates (a Kemeny score's few possible averages) — gets the lower / higher order
    statistic as its interval ends and the lower median, so every printed end is a value the
    statistic can take (interpolation printed ``5.9875`` for a count, ``-4.7512`` for a Kemeny
    score); other systems get the usual linearly interpolated percentiles. Ranks always use
    the lower / higher order statistics.
    """
    check_level(ci, "ci")
    alpha = (1.0 - ci) / 2.0
    ranks = competition_ranks(boot)
    boot = np.asarray(boot, dtype=np.float64)
    low = np.quantile(boot, alpha, axis=0)
    high = np.quantile(boot, 1.0 - alpha, axis=0)
    median = np.median(boot, axis=0)
    finite = np.all(np.isfinite(boot), axis=0)
    lattice = np.all(2 * boot == np.round(2 * boot), axis=0)
    few = np.array([np.unique(col).size * 5 <= col.size for col in boot.T], dtype=bool) if boot.ndim == 2 \
        else np.zeros(0, bool)
    discrete = finite & (lattice | few)
    if discrete.any():
        sub = boot[:, discrete]
        low[discrete] = np.quantile(sub, alpha, axis=0, method="lower")
        high[discrete] = np.quantile(sub, 1.0 - alpha, axis=0, method="higher")
        median[discrete] = np.quantile(sub, 0.5, axis=0, method="lower")
    return {
        "ci_low": low,
        "ci_high": high,
        "score_median": median,
        "rank_low": np.quantile(ranks, alpha, axis=0, method="lower").astype(np.int64),
        "rank_high": np.quantile(ranks, 1.0 - alpha, axis=0, method="higher").astype(np.int64),
    }


def sandwich_summary(fit: tuple[np.ndarray, np.ndarray], n_draws: int, rng: np.random.Generator,
                     ci: float) -> dict[str, np.ndarray]:
    r"""Wald score intervals from a covariance and rank intervals from normal draws.

    ``fit`` is ``(scores, cov)``. Scores: :math:`s_i \pm z\sqrt{\Sigma_{ii}}`; ranks: percentile
    intervals of the competition ranks of ``n_draws`` draws from :math:`N(s, \Sigma)`.

    Examples
    --------
    >>> out = sandwich_summary((np.array([0.0, 10.0]), np.eye(2)), 200, np.random.default_rng(0), 0.95)
    >>> np.round(out["ci_low"], 2).tolist(), out["rank_high"].tolist()
    ([-1.96, 8.04], [2, 1])
    """
    from scorebench.aggregate.pair_counts import normal_bounds

    check_level(ci, "ci")
    scores, cov = (np.asarray(x, dtype=np.float64) for x in fit)
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    low, high = normal_bounds(scores, se, ci)
    draws = rng.multivariate_normal(scores, cov, size=int(n_draws), method="eigh")
    ranks = competition_ranks(draws)
    alpha = (1.0 - ci) / 2.0
    return {"ci_low": low, "ci_high": high, "score_median": scores.copy(),
            "rank_low": np.quantile(ranks, alpha, axis=0, method="lower").astype(np.int64),
            "rank_high": np.quantile(ranks, 1.0 - alpha, axis=0, method="higher").astype(np.int64)}


def _default_methods(data: ScoreMatrix | Battles) -> list[str]:
    from scorebench.aggregate.registry import all_methods

    kind = "matrix" if isinstance(data, ScoreMatrix) else "battles"
    return [m.name for m in all_methods() if kind in m.accepts or (kind == "matrix" and "battles" in m.accepts)]


def method_agreement(table: Any, methods: Sequence[str] | None = None, *, weights: Any = None,
                     higher_is_better: Any = None, **read_options: Any) -> pd.DataFrame:
    """Kendall tau-b between the rankings of several methods on the same table.

    Methods that cannot run on this table (e.g. ``geometric_mean`` on negative scores, a
    positional rule on missing scores) are left out and listed in ``attrs["skipped"]``
    with the reason.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"t1": [3, 2, 1], "t2": [1, 3, 2], "t3": [3, 1, 2]}, index=["a", "b", "c"])
    >>> tau = method_agreement(t, ["mean", "borda", "copeland"])
    >>> float(tau.loc["borda", "copeland"])
    1.0
    """
    from scipy.stats import kendalltau  # lazy: keeps `import scorebench` light

    data = read_input(table, weights=weights, higher_is_better=higher_is_better, **read_options)
    names = list(methods) if methods is not None else _default_methods(data)
    scores: dict[str, np.ndarray] = {}
    skipped: dict[str, str] = {}
    for name in names:
        method = get_method(name)
        try:
            scores[name] = run_method(method, data, {}).scores
        except ScorebenchError as exc:
            if methods is not None:
                raise
            skipped[name] = str(exc)
    keys = list(scores)
    tau = np.ones((len(keys), len(keys)))
    for i, a in enumerate(keys):
        for j in range(i + 1, len(keys)):
            t = kendalltau(scores[a], scores[keys[j]]).statistic
            tau[i, j] = tau[j, i] = np.nan if np.isnan(t) else t
    frame = pd.DataFrame(tau, index=keys, columns=keys)
    frame.attrs["skipped"] = skipped
    return frame


def leave_one_task_out(table: Any, method: str, *, weights: Any = None, higher_is_better: Any = None,
                       params: dict[str, Any] | None = None, **read_options: Any) -> pd.DataFrame:
    """Re-run ``method`` without each column in turn.

    Returns one row per removed column: ``removed``, ``winners`` (tuple), ``same_winner``
    (the winner set equals the full table's) and ``kendall_tau`` with the full ranking.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"t1": [3, 2, 1], "t2": [1, 3, 2], "t3": [3, 1, 2]}, index=["a", "b", "c"])
    >>> out = leave_one_task_out(t, "borda")
    >>> out["same_winner"].tolist()
    [False, True, False]
    """
    from scipy.stats import kendalltau  # lazy: keeps `import scorebench` light

    from scorebench.aggregate.ranking import Ranking

    params = dict(params or {})
    record = get_method(method)
    params = record.check_params(params)
    data = read_input(table, weights=weights, higher_is_better=higher_is_better, **read_options)
    if not isinstance(data, ScoreMatrix):
        raise InputError("leave_one_task_out needs a score table (systems x tasks), not battles")
    if data.n_columns < 2:
        raise InputError("leave_one_task_out needs at least 2 columns")
    full = Ranking(data.systems, run_method(record, data, params).scores, method)
    rows = []
    for j in range(data.n_columns):
        reduced = data.drop_columns(j)
        if not (reduced.weights > 0).any():
            continue
        try:
            r = Ranking(data.systems, run_method(record, reduced, params).scores, method)
        except ScorebenchError as exc:
            rows.append({"removed": data.columns[j], "winners": None, "same_winner": None,
                         "kendall_tau": np.nan, "error": str(exc)})
            continue
        rows.append({"removed": data.columns[j], "winners": r.winners,
                     "same_winner": set(r.winners) == set(full.winners),
                     "kendall_tau": float(kendalltau(full.scores, r.scores).statistic), "error": None})
    frame = pd.DataFrame(rows)
    frame.attrs.update(method=method, full_winners=full.winners)
    return frame
