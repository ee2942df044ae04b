"""``compare`` on a Dask DataFrame: all system pairs from per-partition sums, as in memory.

The paired tests of :func:`scorebench.compare` on independent units need, per task, only the
sums of :class:`scorebench.evaluation.pairwise.PairSums` over units (column sums, the Gram matrix, the
Poisson-weighted and sign-flipped column sums per round), and each unit's weights and signs
derive from the hash of its key and the seed. So the rows of one unit are brought into one
partition (hash of the ``id`` text, with ``task``), each partition reduces to its
``PairSums`` per task, the partials add in a tree, and the pairs are finished on the client
by the same code as in memory. Discordant counts, sums and weighted sums are partial sums;
the result equals ``compare`` on the whole table (up to the order of floating-point
additions), however the table is partitioned.

Two passes over the table: the systems and unit counts per task (the permutation test's
rounds depend on the number of units), then the partials. Not on this engine: cluster=,
repeats= and Diebold–Mariano (time order), which need the units together.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from scorebench.evaluation.comparison import (check_finite, choose_tests, finish_pairs, pair_frame, pair_positions,
                         unit_hashes, unit_matrix)
from scorebench.evaluation.pipeline import contributions, resolve_kind, resolve_metrics
from scorebench.evaluation.dask_engine import co_partition
from scorebench.core.dask_tree import tree_reduce
from scorebench.core.errors import InputError
from scorebench.evaluation.pairwise import PairSums, pair_sums, pair_tests, permutation_rounds
from scorebench.core.registry import Metric
from scorebench.core.stats import check_resampling, check_sign_flips
from scorebench.core.tables import NAN_POLICIES, get_kind
from scorebench.core.validation import check_choice, check_level

__all__ = ["compare_dask", "compare_partials"]

_SMALL = 16  # tasks with this many units or fewer keep their matrix (exact sign-flip enumeration)


def compare_dask(ddf: Any, metric: str | Metric, *, baseline: str | None = None, kind: str | None = None,
                 tests: Sequence[str] | None = None, ci: float = 0.95, n_boot: int = 1000, n_perm: int = 10000,
                 seed: int = 0, nan_policy: str = "raise", alpha: float = 0.05, power: float = 0.8,
                 **kind_options: Any) -> pd.DataFrame:
    """:func:`scorebench.compare` for a ``dask.dataframe.DataFrame`` keyed by ``id``.

    Same arguments and output as :func:`scorebench.compare` on independent units (``horizon``,
    ``cluster``, ``repeats`` do not apply); ``attrs["engine"]`` is ``"dask"``.

    Examples
    --------
    >>> import dask.dataframe as dd, numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> t = pd.DataFrame({"system": np.repeat(["a", "b"], 100), "id": np.tile(np.arange(100), 2),
    ...                   "correct": rng.integers(0, 2, 200)})
    >>> out = compare_dask(dd.from_pandas(t, npartitions=3), "accuracy", tests=["mcnemar"])
    >>> out.loc[0, "detail"]
    'chi-square with continuity correction; discordant 28 vs 27'
    """
    check_resampling(ci=ci, n_boot=n_boot, seed=seed)
    check_level(alpha, "alpha")
    check_level(power, "power")
    check_choice(nan_policy, "nan_policy", NAN_POLICIES)
    record = resolve_metrics(metric)[0]
    if not record.per_row:
        raise InputError(f"metric {record.name!r} is set-level; paired comparison needs a per-row "
                         "metric (one contribution per row or query)")
    if "id" not in ddf.columns:
        raise InputError(f"compare on a Dask table needs an 'id' column pairing rows across systems; the table has "
                         f"{list(ddf.columns)}")
    if tests is not None and "diebold_mariano" in tests:
        raise InputError("test 'diebold_mariano' needs the rows in time order; run compare on a pandas table")
    spec, kind_options = resolve_kind([record], kind, kind_options)
    has_task = "task" in ddf.columns
    plan = _layout(ddf, has_task)
    for task, (_, n) in plan.items():
        if n > _SMALL and (tests is None or "permutation" in tests):
            check_sign_flips(n_perm, n, "paired rows")  # 0 draws cannot stand in for an enumeration
    flips = {task: (permutation_rounds(n, n_perm) if n > _SMALL else 0) for task, (_, n) in plan.items()}
    draws = max(n_boot, 1)  # rounds for the interval, and for the bootstrap test (as in memory)
    moved = co_partition(ddf, ["id", "task"] if has_task else ["id"])
    systems = {task: names for task, (names, _) in plan.items()}
    total = _reduce(moved, record, spec.name, systems, flips, draws, seed, nan_policy, kind_options)
    binary = all(s.binary for s, _ in total.values())
    tests = choose_tests(record, tests, binary, None, None)
    tests = [t for t in tests if t != "diebold_mariano"]
    frames = []
    for task, (names, _) in plan.items():
        sums, small = total[task]
        pairs, ia, ib = pair_positions(names, baseline)
        res = pair_tests(sums, ia, ib, tests, ci=ci, alpha=alpha, power=power, matrix=small, n_boot=n_boot)
        frames.append(pair_frame(record, task, pairs, res, tests))
    out = finish_pairs(frames, tests, not has_task, seed=seed, ci=ci, n_boot=n_boot, n_perm=n_perm, alpha=alpha,
                       power=power, design="independent units")
    out.attrs["engine"] = "dask"
    return out


def _layout(ddf: Any, has_task: bool) -> dict[Any, tuple[list[str], int]]:
    """Per task (``None`` without one), its systems (sorted) and units (rows of its largest system)."""
    cols = ["system", "task"] if has_task else ["system"]
    sizes = ddf[cols].assign(system=ddf["system"].astype(str)).groupby(cols).size().compute().sort_index()
    if sizes.empty:
        raise InputError("the table has no rows to compare")
    frame = sizes.reset_index(name="rows")
    if not has_task:
        frame["task"] = None
    out: dict[Any, tuple[list[str], int]] = {}
    for task in frame["task"].unique().tolist():
        sub = frame[frame["task"].isna()] if task is None else frame[frame["task"] == task]
        out[task] = (sorted(sub["system"].astype(str)), int(sub["rows"].max()))
    return out


def compare_partials(part: pd.DataFrame, record: Metric, kind: str, systems: dict[Any, list[str]],
                     flips: dict[Any, int], n_boot: int, seed: int, nan_policy: str,
                     kind_options: dict[str, Any]) -> dict[Any, tuple[PairSums, np.ndarray | None]]:
    """The :class:`~scorebench.evaluation.pairwise.PairSums` of one partition per task (its whole units only),
    with the matrix itself for tasks of at most 16 units."""
    if len(part) == 0:
        return {}
    inputs = get_kind(kind).extract(part, nan_policy=nan_policy, **kind_options)
    contrib = contributions(record, inputs, nan_policy)
    frame = inputs.frame
    present = frame["task"].unique().tolist() if "task" in frame.columns else [None]
    out = {}
    for task in present:
        um = unit_matrix(frame, contrib, inputs.key, task, systems[task])
        check_finite(um.matrix)
        sums = pair_sums(um.matrix, unit_hashes(um.units), seed=seed, n_boot=n_boot, n_perm=flips[task])
        out[task] = (sums, um.matrix if flips[task] == 0 else None)
    return out


def _merge(parts: Sequence[dict]) -> dict:
    total: dict = {}
    for part in parts:
        for task, (sums, small) in part.items():
            if task in total:
                old_sums, old_small = total[task]
                both = None if small is None else np.vstack([old_small, small])
                total[task] = (old_sums + sums, both)
            else:
                total[task] = (sums, small)
    return total


def _reduce(ddf: Any, record: Metric, kind: str, systems: dict, flips: dict, n_boot: int, seed: int,
            nan_policy: str, kind_options: dict) -> dict:
    """Partials of every partition, merged in a tree of tasks (32 at a time)."""
    total = tree_reduce(ddf, compare_partials, _merge, record, kind, systems, flips, n_boot, seed, nan_policy,
                        kind_options, fan_in=32)
    missing = [t for t in systems if t not in total]
    if missing:
        raise InputError(f"no rows to compare for task(s) {missing[:5]}")
    return total

