"""Aggregation: one defensible ranking of systems from many per-task scores or battles.

``scorebench.aggregate`` is both this package and a function: calling the package,
``scorebench.aggregate(table, method="borda")``, is :func:`aggregate`.

Methods (see :func:`list_methods` for parameters, missing-value policies and citations):

=============  ==================================================================
family         methods
=============  ==================================================================
baseline       ``mean`` (normalise: min-max / z-score / reference), ``geometric_mean``,
               ``median``, ``win_rate`` (HELM)
positional     ``plurality``, ``borda``, ``dowdall``, ``threshold`` (and approval-k)
condorcet      ``copeland``, ``minimax``, ``schulze``, ``ranked_pairs``, ``baldwin``,
               ``nanson``, ``black``, ``kemeny``
pairwise       ``bradley_terry``, ``elo``, ``plackett_luce``, ``difficulty`` (models and
               test items rated jointly; reads a responses table), ``bradley_terry_style``
               (Chatbot Arena style control; reads a battles table with style columns),
               ``bradley_terry_contextual`` (arena-rank's contextual BT),
               ``bradley_terry_davidson``, ``bradley_terry_rao_kupper`` (ties modelled),
               ``bradley_terry_composite`` (weighted loss components)
latent         ``irt`` (registered by :mod:`scorebench.irt`, imported on first use)
=============  ==================================================================

More methods can be registered at any time with :func:`register_method`; a method whose
module lives elsewhere is listed in ``registry._PROVIDERS`` and imported on first lookup.
Also here: :func:`possible_winners` (Vote'n'Rank weight search), :func:`select_committee`
(multiwinner k-Borda / Chamberlin–Courant / PAV with group fairness),
:func:`intransitivity`, :func:`difficulty_rating`, :func:`method_agreement` and
:func:`leave_one_task_out`. Bradley–Terry-family methods register a sandwich covariance
(:func:`register_intervals`); battle prediction is in :mod:`.prediction` and the Arena
selection-bias diagnostics in :mod:`.selection_bias`.
"""

from __future__ import annotations

import sys
import types
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError, warn_user
from scorebench.core.source_conventions import refuse_mixed_metrics, source_directions
from scorebench.core.stats import check_resampling, rng_for
from scorebench.aggregate import condorcet, kemeny, means, pairwise, positional  # noqa: F401  (register methods)
from scorebench.aggregate import style_control  # noqa: F401  (registers bradley_terry_style)
from scorebench.aggregate import contextual_bt  # noqa: F401  (registers bradley_terry_contextual)
from scorebench.aggregate import tie_models  # noqa: F401  (registers bradley_terry_davidson, bradley_terry_rao_kupper)
from scorebench.aggregate import composite_bt  # noqa: F401  (registers bradley_terry_composite)
from scorebench.aggregate.coverage import MixedCoverageWarning, coverage_warning
from scorebench.aggregate.difficulty import DifficultyRating, difficulty_rating
from scorebench.aggregate.conventions import Convention, get_convention, list_conventions, register_convention
from scorebench.aggregate.input import (Battles, ScoreMatrix, as_battles, as_matrix, battles_from_matrix, kind_options, read_input,
                                        read_table_kind)
from scorebench.aggregate.items import MIN_TASKS, ItemScores, bootstrap_items, item_resample, item_scores
from scorebench.aggregate.means import MixedScaleWarning, scale_warning
from scorebench.aggregate.multiwinner import Committee, select_committee
from scorebench.aggregate.pairwise import Intransitivity, intransitivity
from scorebench.aggregate.possible_winners import possible_winners
from scorebench.aggregate.poisson_items import (DETAIL as POISSON_DETAIL, PoissonItems, is_dask_item_table,
                                                poisson_bootstrap_items, read_dask_items)
from scorebench.aggregate.ranking import Ranking, competition_ranks
from scorebench.aggregate.registry import (Method, MethodResult, all_methods, get_method, list_methods, register_bootstrap,
                       register_intervals, register_method)
from scorebench.aggregate.uncertainty import (INTERVALS, bootstrap_scores, leave_one_task_out, method_agreement, prepare,
                          sandwich_summary, summarize_bootstrap)
from scorebench.core.validation import check_choice

__all__ = [
    "aggregate", "Ranking", "ScoreMatrix", "Battles", "as_matrix", "as_battles", "read_input",
    "battles_from_matrix", "Method", "MethodResult", "register_method", "register_bootstrap", "register_intervals",
    "get_method",
    "all_methods", "list_methods", "possible_winners", "select_committee", "Committee", "intransitivity",
    "Intransitivity", "difficulty_rating", "DifficultyRating", "method_agreement", "leave_one_task_out",
    "competition_ranks", "ItemScores", "item_scores", "MIN_TASKS", "MixedScaleWarning",
    "Convention", "get_convention", "list_conventions", "register_convention",
    "MixedCoverageWarning", "coverage_warning",
]

ITEM_INTERVALS = (None, "bootstrap", "poisson")


def _item_intervals(record: Any, method: str, items: Any, params: dict[str, Any], *, n_boot: int, seed: int,
                    ci: float, resample: str | None, details: dict[str, Any],
                    intervals: str | None = None) -> tuple[str, dict[str, Any]]:
    """Bootstrap per-item scores for :func:`aggregate`: the resampling used and the interval columns.

    Multinomial item draws (:func:`~scorebench.aggregate.items.bootstrap_items`) by default; the
    Poisson item bootstrap (:mod:`scorebench.aggregate.poisson_items`) for a Dask table or with
    ``intervals="poisson"``. Records the failed rounds in ``details["n_boot_failed"]``.
    """
    if intervals not in ITEM_INTERVALS:
        raise InputError(f"intervals={intervals!r} does not apply to per-item scores (use 'bootstrap': multinomial "
                         "item draws, or 'poisson': Poisson item weights from hashes, as on Dask)")
    if isinstance(items, PoissonItems) or intervals == "poisson":
        if not isinstance(items, PoissonItems):
            items = poisson_bootstrap_items(items, n_boot=n_boot, seed=seed, method=method, resample=resample)
        replicates, failed = items.bootstrap(lambda m: record.fn(prepare(record, m), **params).scores)
        details.update(n_boot_failed=failed, bootstrap=POISSON_DETAIL)
        return items.resample, summarize_bootstrap(replicates, ci)
    used = item_resample(resample, len(items.tasks))
    rng = rng_for(seed, "aggregate", method)
    replicates, failed = bootstrap_items(items, lambda m: record.fn(prepare(record, m), **params).scores,
                                         n_boot, rng, used)
    details["n_boot_failed"] = failed
    return used, summarize_bootstrap(replicates, ci)


def aggregate(table: Any, method: str = "borda", *, weights: Any = None, higher_is_better: Any = None,
              n_boot: int = 0, seed: int = 0, ci: float = 0.95, resample: str | None = None,
              duplicates: str = "raise", system_column: str | None = None, exclude: tuple[str, ...] = (),
              intervals: str | None = None, convention: str | None = None, **params: Any) -> Ranking:
    """Rank systems with a registered aggregation method, with bootstrap rank intervals.

    Parameters
    ----------
    table : DataFrame, ScoreMatrix or Battles
        A long ``scores`` table (``system``, ``task``/``metric``, ``value``), a wide
        systems x tasks table (index = systems), a ``battles`` table (``a``, ``b``,
        ``winner``), or per-item scores (``evaluate(..., per_unit=True)``; see
        :mod:`scorebench.aggregate.items`), whose rank intervals resample items within tasks.
        A Dask DataFrame of battles is reduced to battle cells partition by partition and ranked
        by the methods with a counts record (:mod:`scorebench.aggregate.dask_aggregate`; the
        same numbers as pandas).
        A Dask DataFrame of per-item scores (``system``, ``task``/``metric``, one item column,
        ``value``) is reduced to column sums and Poisson-weighted replicate sums partition by
        partition (:mod:`scorebench.aggregate.poisson_items`) and ranked by any score-table
        method; the same numbers as ``intervals="poisson"`` on the table in pandas.
    method : str
        Registered method name (see :func:`list_methods`).
    weights, higher_is_better
        Per-column weights and directions (see :func:`~scorebench.aggregate.input.as_matrix`);
        by default directions come from the metric registry for long tables.
    n_boot : int
        Bootstrap rounds for score and rank intervals (default 0: none, as ``scorebench
        aggregate --bootstrap``; each round reruns the method, e.g. an exact Kemeny search or
        a Bradley-Terry fit, so intervals are asked for). Tasks are resampled
        for score tables, battles for battles tables, items within tasks for per-item
        scores (see ``resample``). A score table with fewer than :data:`MIN_TASKS` columns
        gets no intervals (a column bootstrap of so few tasks cannot estimate rank
        uncertainty) and ``Ranking.warning`` says so. Methods that read an item-level table
        (``irt``, ``difficulty``) are not bootstrapped here: the result has no interval
        columns and ``details["bootstrap"]`` says so.
    seed : int
        Seed of the bootstrap (streams are derived from the seed and the method name).
    ci : float
        Level of the percentile intervals.
    resample : {"tasks", "battles", "items", "tasks+items"}, optional
        What the bootstrap resamples (default: tasks for score tables, battles for battles;
        for per-item scores ``"tasks+items"`` with at least :data:`MIN_TASKS` tasks, else
        ``"items"``).
    duplicates, system_column, exclude, convention
        How to read a wide table (see :func:`~scorebench.aggregate.input.as_matrix`);
        ``convention="glue"`` reads GLUE's nine task units, so ``mean`` is GLUE's published
        Score (:mod:`scorebench.aggregate.conventions`).
    intervals : {"sandwich", "bootstrap", "poisson"}, optional
        How score intervals are computed when ``n_boot > 0``. ``"sandwich"`` (the default for
        methods with a registered covariance, e.g. ``bradley_terry``, as in arena-rank): Wald
        intervals from the robust covariance, and rank intervals from ``n_boot`` draws of the
        normal it defines (``resample="sandwich"`` in the result). ``"bootstrap"`` (the default
        otherwise): percentile intervals over resamples. ``"poisson"`` (per-item scores only; the
        default and only choice on Dask): items get Poisson(1) weights from (seed, hash of task
        and item, round) instead of multinomial draws, so the estimate does not depend on how
        the rows are split (:mod:`scorebench.aggregate.poisson_items`).
    **params
        Method parameters (e.g. ``ties="min"`` for Borda, ``prior=1.0`` for Bradley–Terry).

    Returns
    -------
    Ranking
        Scores (higher is better), competition ranks with explicit ties, and, when
        bootstrapped, ``ci_low``/``ci_high``/``rank_low``/``rank_high``/``rank_ub``.

    Examples
    --------
    >>> import pandas as pd
    >>> import scorebench
    >>> t = pd.DataFrame({"t1": [3, 2, 1], "t2": [1, 3, 2], "t3": [3, 1, 2]}, index=["a", "b", "c"])
    >>> scorebench.aggregate(t, "copeland", n_boot=0).to_frame()[["system", "score", "rank"]].values.tolist()
    [['a', 2.0, 1], ['b', 0.0, 2], ['c', -2.0, 3]]
    >>> r = scorebench.aggregate(t, "borda", n_boot=200, seed=1)  # 3 tasks: too few for intervals
    >>> r.rank_low is None, r.warning[:22]
    (True, 'only 3 task columns an')
    >>> wide = pd.concat([t, t.add_suffix("'")], axis=1)  # 6 tasks
    >>> scorebench.aggregate(wide, "borda", n_boot=200, seed=1).to_frame().columns.tolist()[:5]
    ['system', 'score', 'rank', 'ci_low', 'ci_high']
    """
    record = get_method(method)
    params = record.check_params(params)
    # any round count is accepted here: rank intervals of few rounds are only a quick look
    ci, n_boot, seed = check_resampling(ci=ci, n_boot=n_boot, seed=seed, min_boot=None)
    if type(table).__module__.split(".")[0] == "dask":
        on_items = is_dask_item_table(table)
        # the reading options the table's kind declares, as in memory (none for battles)
        given = kind_options("items" if on_items else "battles", weights=weights, higher_is_better=higher_is_better,
                             duplicates=duplicates, system_column=system_column, exclude=exclude,
                             convention=convention)
        if not on_items:  # battles on Dask: one pass to cell counts
            from scorebench.aggregate.dask_aggregate import aggregate_dask

            return aggregate_dask(table, method, n_boot=n_boot, seed=seed, ci=ci, intervals=intervals,
                                  resample=resample, params=params)
        items = _read_dask_items(record, table, n_boot=n_boot, seed=seed, resample=resample, intervals=intervals,
                                 **given)
        data = items.matrix
    else:
        refuse_mixed_metrics(table)  # a reader's table of stats of different meaning (HELM without a metric)
        if higher_is_better is None:
            higher_is_better = source_directions(table)  # directions a reader recorded (HELM's lower_is_better)
        data, items = _read(record, table, weights=weights, higher_is_better=higher_is_better, duplicates=duplicates,
                            system_column=system_column, exclude=exclude, convention=convention)
    data, unscored, params = _blank_incomplete(record, data, items, params)
    result = record.fn(prepare(record, data), **params)
    systems = _systems_of(data, result)
    details = dict(result.details)
    warnings_ = _scale_warnings(record, params, data) + _coverage_warnings(data, systems, result, details)
    if items is not None and n_boot > 0:
        used, boot = _item_intervals(record, method, items, params, n_boot=n_boot, seed=seed, ci=ci,
                                     resample=resample, details=details, intervals=intervals)
        return Ranking(systems, result.scores, method, params=params, details=details, n_boot=n_boot, seed=seed,
                       resample=used, warning="; ".join(warnings_) or None, unscored=unscored, **boot)
    n_boot = _rounds_that_apply(record, data, n_boot, resample, details, warnings_)
    boot: dict[str, Any] = {}
    used = None
    how = _interval_kind(record, intervals, resample, data, per_item=items is not None)
    if n_boot > 0 and how == "sandwich":
        rng = rng_for(seed, "aggregate", method, "sandwich")
        boot = sandwich_summary(record.intervals(prepare(record, data), **params), n_boot, rng, ci)
        used = "sandwich"
    elif n_boot > 0:
        rng = rng_for(seed, "aggregate", method)
        replicates, failed = bootstrap_scores(data, record, params, n_boot, rng, resample)
        boot = summarize_bootstrap(replicates, ci)
        used = "tasks" if isinstance(data, ScoreMatrix) else "battles"
        details["n_boot_failed"] = failed
    return Ranking(systems, result.scores, method, params=params, details=details,
                   n_boot=n_boot if n_boot > 0 else None, seed=seed if n_boot > 0 else None,
                   resample=used, warning="; ".join(warnings_) or None, unscored=unscored, **boot)


def _read_dask_items(record: Method, table: Any, *, n_boot: int, seed: int, resample: str | None,
                     intervals: str | None, weights: Any = None, higher_is_better: Any = None) -> PoissonItems:
    """An item-level Dask table read to column means and Poisson replicate sums
    (:func:`~scorebench.aggregate.poisson_items.read_dask_items`), or one line saying why not."""
    if "matrix" not in record.accepts and "battles" not in record.accepts:
        raise InputError(f"aggregate on a Dask item table: method {record.name!r} reads the raw responses; "
                         "compute() the table and run it in memory")
    if intervals not in (None, "poisson"):
        raise InputError(f"aggregate on a Dask item table: intervals={intervals!r} does not apply; items are "
                         "resampled by Poisson weights from hashes (intervals='poisson'), multinomial draws need "
                         "all items of a task together (compute() the table)")
    return read_dask_items(table, n_boot=n_boot, seed=seed, method=record.name, resample=resample, weights=weights,
                           higher_is_better=higher_is_better)


def _blank_incomplete(record: Method, data: Any, items: ItemScores | PoissonItems | None,
                      params: dict[str, Any]) -> tuple[Any, tuple[str, ...], dict[str, Any]]:
    """``missing="blank"``: rank (and bootstrap) only the systems scored on every column; the
    others are returned as unscored. Other policies pass through unchanged."""
    if params.get("missing") != "blank":
        return data, (), params
    if not isinstance(data, ScoreMatrix) or items is not None:
        raise InputError(f"method {record.name!r}: missing='blank' applies to a systems x tasks score table")
    complete = ~np.isnan(data.values[:, data.weights > 0]).any(axis=1)
    if complete.all():
        return data, (), params
    if complete.sum() < 2:
        raise InputError(f"method {record.name!r}, missing='blank': only {int(complete.sum())} system(s) are scored "
                         "on every column; need at least 2 (missing='available' averages what each system has)")
    unscored = tuple(s for s, c in zip(data.systems, complete) if not c)
    kept = ScoreMatrix(data.values[complete], tuple(s for s, c in zip(data.systems, complete) if c), data.columns,
                       data.higher_is_better, data.weights)
    return kept, unscored, params


def _interval_kind(record: Method, intervals: str | None, resample: str | None, data: Any,
                   per_item: bool = False) -> str:
    """``"sandwich"`` or ``"bootstrap"`` (or ``"poisson"``, per-item scores only): the caller's
    choice or the method's default."""
    if intervals is None:
        return "sandwich" if record.intervals is not None and resample in (None, "battles") \
            and not isinstance(data, ScoreMatrix) else "bootstrap"
    if intervals == "poisson":
        if per_item:  # per-item scores with n_boot=0: nothing to resample, the choice stands
            return intervals
        raise InputError("intervals='poisson' (Poisson item weights) applies to per-item scores "
                         "(evaluate(..., per_unit=True)), not to this table")
    check_choice(intervals, "intervals", INTERVALS)
    if intervals == "sandwich":
        if record.intervals is None:
            with_cov = sorted(m.name for m in all_methods() if m.intervals is not None)
            raise InputError(f"intervals='sandwich': method {record.name!r} has no covariance "
                             f"(methods with one: {', '.join(with_cov)}); use intervals='bootstrap'")
        if isinstance(data, ScoreMatrix):
            raise InputError("intervals='sandwich' applies to a battles table (a, b, winner), not a score table")
    return intervals


def _read(record: Method, table: Any, **how: Any) -> tuple[Any, ItemScores | None]:
    """The method's input (a score matrix, battles, or the raw table) and, for per-item
    scores, the items behind the matrix."""
    if record.accepts == ("table",):
        return table, None
    if isinstance(table, pd.DataFrame):  # read as the aggregate kind it fits
        data = read_table_kind(table, **how)
        return (data.matrix, data) if isinstance(data, ItemScores) else (data, None)
    return read_input(table, **how), None


def _scale_warnings(record: Method, params: dict[str, Any], data: Any) -> list[str]:
    """Warn (and return the text) when an unnormalised mean or median mixes scales."""
    if record.name not in ("mean", "median") or params.get("normalize") is not None \
            or not isinstance(data, ScoreMatrix):
        return []
    text = scale_warning(data)
    if not text:
        return []
    warn_user(text, MixedScaleWarning)
    return [text]


def _coverage_warnings(data: Any, systems: tuple[str, ...], result: MethodResult,
                       details: dict[str, Any]) -> list[str]:
    """Warn (and return the text) when the systems ranked (a finite score) ran different tasks."""
    if not isinstance(data, ScoreMatrix):
        return []
    scores = np.asarray(result.scores, dtype=np.float64)
    ranked = [s for s, v in zip(systems, scores) if np.isfinite(v)]
    text = coverage_warning(data, ranked)
    if not text:
        return []
    details["coverage_warning"] = text
    warn_user(text, MixedCoverageWarning)
    return [text]


def _rounds_that_apply(record: Method, data: Any, n_boot: int, resample: str | None, details: dict[str, Any],
                       warnings_: list[str]) -> int:
    """``n_boot``, or 0 where no bootstrap applies (saying why in ``details``)."""
    if (n_boot > 0 and isinstance(data, ScoreMatrix) and resample in (None, "tasks")
            and 2 <= data.n_columns < MIN_TASKS):
        text = (f"only {data.n_columns} task columns and no per-item data: a bootstrap over so few columns cannot "
                "estimate rank uncertainty, so no intervals are given; pass per-item scores "
                f"(evaluate(..., per_unit=True)) or at least {MIN_TASKS} tasks")
        details["bootstrap"] = text
        warnings_.append(text)
        return 0
    if n_boot > 0 and not isinstance(data, (ScoreMatrix, Battles)) and record.bootstrap is None \
            and record.intervals is None:
        # Methods that read item-level tables (irt, difficulty) carry model-based uncertainty
        # in ``details`` instead; there is nothing to resample at this level.
        details["bootstrap"] = "not available for this method; see its details for model-based uncertainty"
        return 0
    return n_boot


def _systems_of(data: Any, result: MethodResult) -> tuple[str, ...]:
    if isinstance(data, (ScoreMatrix, Battles)):
        return data.systems
    systems = result.details.get("systems")
    if systems is None:
        raise InputError("a method reading a raw table must report details['systems']")
    return tuple(systems)


class _CallableModule(types.ModuleType):
    """Lets ``scorebench.aggregate(...)`` call :func:`aggregate` while staying a package."""

    def __call__(self, *args: Any, **kwargs: Any) -> Ranking:
        return aggregate(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
