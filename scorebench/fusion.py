"""Fusion of ranked runs: CombSUM, CombMNZ and reciprocal rank fusion.

Runs are DataFrames with ``qid``, ``docid``, ``score`` (the ``ranking`` kind's run table).
Several runs are given as a list or a ``{name: run}`` mapping, or as one DataFrame whose
``system`` column tells the runs apart. Every function returns one fused run
(``qid, docid, score, rank, system``), ordered per query by fused score descending, ties
broken by docid descending -- the order trec_eval evaluates in -- so it can be written with
:func:`scorebench.io.trec.write_trec_run` or evaluated directly.

Score normalisation happens per (run, query) before CombSUM/CombMNZ:

* ``"minmax"``: :math:`(s - \\min) / (\\max - \\min)`; a query whose scores are all equal
  maps to 0 (as in ranx);
* ``"zscore"``: :math:`(s - \\bar s) / \\sigma` with the population standard deviation
  (a constant query maps to 0);
* ``None``: raw scores.

References: Fox & Shaw (1994), "Combination of multiple searches", TREC-2; Lee (1997),
SIGIR, "Analyses of multiple evidence combination"; Cormack, Clarke & Büttcher (2009),
SIGIR, "Reciprocal rank fusion outperforms Condorcet and individual rank learning methods".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.core.tables import numeric_column, require_columns
from scorebench.core.validation import describe_rows

__all__ = ["normalize_scores", "comb_sum", "comb_mnz", "reciprocal_rank_fusion", "fuse"]

RunsLike = pd.DataFrame | Sequence[pd.DataFrame] | Mapping[str, pd.DataFrame]


def _stack(runs: RunsLike) -> pd.DataFrame:
    """One long frame ``system, qid, docid, score`` with string ids and float64 scores."""
    if isinstance(runs, pd.DataFrame):
        if "system" not in runs.columns:
            raise InputError("fusion: a single DataFrame needs a 'system' column naming the runs to fuse "
                             "(or pass a list / {name: run} mapping of runs)")
        frames = [runs]
    elif isinstance(runs, Mapping):
        frames = [run.assign(system=str(name)) for name, run in runs.items()]
    elif isinstance(runs, Sequence) and not isinstance(runs, (str, bytes)):
        frames = [run if "system" in run.columns else run.assign(system=f"run{i}")
                  for i, run in enumerate(runs)]
    else:
        raise InputError(f"fusion: expected runs as a list, a mapping or a DataFrame, got {type(runs).__name__}")
    parts = []
    for i, run in enumerate(frames):
        if not isinstance(run, pd.DataFrame):
            raise InputError(f"fusion: run {i} is a {type(run).__name__}; expected a DataFrame")
        require_columns(run, ["qid", "docid", "score", "system"], "ranking (run to fuse)")
        parts.append(pd.DataFrame({"system": run["system"].astype(str).to_numpy(),
                                   "qid": run["qid"].astype(str).to_numpy(),
                                   "docid": run["docid"].astype(str).to_numpy(),
                                   "score": numeric_column(run, "score")}))
    long = pd.concat(parts, ignore_index=True)
    if long["system"].nunique() < 1 or len(long) == 0:
        raise InputError("fusion: no rows to fuse")
    dup = long.duplicated(["system", "qid", "docid"], keep=False).to_numpy()
    if dup.any():
        raise InputError(f"fusion: a run lists the same (qid, docid) twice in {describe_rows(dup)} "
                         "(positions in the stacked runs)")
    return long


def _minmax(score: pd.Series, groups: list[pd.Series]) -> np.ndarray:
    g = score.groupby(groups, sort=False)
    low, high = g.transform("min").to_numpy(), g.transform("max").to_numpy()
    span = high - low
    out = np.zeros(len(score))
    np.divide(score.to_numpy() - low, span, out=out, where=span > 0)
    return out


def _zscore(score: pd.Series, groups: list[pd.Series]) -> np.ndarray:
    g = score.groupby(groups, sort=False)
    mean, std = g.transform("mean").to_numpy(), g.transform(lambda s: s.std(ddof=0)).to_numpy()
    out = np.zeros(len(score))
    np.divide(score.to_numpy() - mean, std, out=out, where=std > 0)
    return out


_NORMALIZERS: dict[str | None, Callable[[pd.Series, list[pd.Series]], np.ndarray]] = {
    "minmax": _minmax,
    "zscore": _zscore,
    None: lambda score, groups: score.to_numpy(dtype=np.float64),
}


def normalize_scores(run: pd.DataFrame, *, method: str | None = "minmax") -> pd.DataFrame:
    """Normalise scores per query (and per ``system`` when present).

    Parameters
    ----------
    run : DataFrame
        ``qid``, ``docid``, ``score`` (optional ``system``).
    method : {"minmax", "zscore", None}
        See the module docstring for the formulas.

    Returns
    -------
    DataFrame
        A copy of ``run`` with the ``score`` column replaced.

    Examples
    --------
    >>> run = pd.DataFrame({"qid": ["1", "1", "1"], "docid": ["a", "b", "c"], "score": [1.0, 3.0, 2.0]})
    >>> normalize_scores(run)["score"].tolist()
    [0.0, 1.0, 0.5]
    """
    if method not in _NORMALIZERS:
        raise InputError(f"normalization: expected one of 'minmax', 'zscore', None, got {method!r}")
    require_columns(run, ["qid", "docid", "score"], "ranking (run)")
    score = pd.Series(numeric_column(run, "score"), index=run.index)
    groups = [run[c] for c in ("system", "qid") if c in run.columns]
    return run.assign(score=_NORMALIZERS[method](score, groups))


def _weights(long: pd.DataFrame, weights: Any) -> np.ndarray:
    systems = list(dict.fromkeys(long["system"]))
    if weights is None:
        return np.ones(len(long))
    if isinstance(weights, Mapping):
        unknown = set(systems) - {str(k) for k in weights}
        if unknown:
            raise InputError(f"fusion weights: no weight for run(s) {sorted(unknown)}")
        table = {str(k): float(v) for k, v in weights.items()}
    else:
        values = list(weights)
        if len(values) != len(systems):
            raise InputError(f"fusion weights: {len(values)} weights for {len(systems)} runs")
        table = dict(zip(systems, map(float, values)))
    w = long["system"].map(table).to_numpy(dtype=np.float64)
    if not np.all(np.isfinite(w)):
        raise InputError("fusion weights: expected finite numbers")
    return w


def _ranks(long: pd.DataFrame) -> np.ndarray:
    """1-based rank within (system, qid): score descending, docid descending."""
    order = long.sort_values(["system", "qid", "score", "docid"], ascending=[True, True, False, False],
                             kind="stable").index
    ranks = pd.Series(np.arange(len(long)), index=order).groupby(
        [long.loc[order, "system"].to_numpy(), long.loc[order, "qid"].to_numpy()], sort=False).cumcount() + 1
    return ranks.reindex(long.index).to_numpy(dtype=np.float64)


def _finish(long: pd.DataFrame, contribution: np.ndarray, name: str, *, mnz: bool = False) -> pd.DataFrame:
    parts = long[["qid", "docid"]].assign(score=contribution)
    fused = parts.groupby(["qid", "docid"], sort=False).agg(score=("score", "sum"), hits=("score", "size"))
    if mnz:
        fused["score"] = fused["score"] * fused["hits"]
    fused = fused.reset_index()[["qid", "docid", "score"]]
    fused = fused.sort_values(["qid", "score", "docid"], ascending=[True, False, False], kind="stable")
    fused["rank"] = fused.groupby("qid", sort=False).cumcount() + 1
    fused["system"] = name
    return fused.reset_index(drop=True)


def comb_sum(runs: RunsLike, *, normalization: str | None = "minmax", weights: Any = None,
             name: str = "combsum") -> pd.DataFrame:
    r"""CombSUM: :math:`s(d) = \sum_j w_j\, \tilde s_j(d)` over the runs j that retrieve d.

    ``normalization`` is applied per (run, query) first; ``weights`` (a sequence in run
    order or a ``{run: weight}`` mapping) gives the weighted sum (default 1 each).

    Examples
    --------
    >>> a = pd.DataFrame({"qid": ["1", "1"], "docid": ["x", "y"], "score": [2.0, 1.0]})
    >>> b = pd.DataFrame({"qid": ["1", "1"], "docid": ["y", "z"], "score": [5.0, 4.0]})
    >>> comb_sum([a, b])[["docid", "score", "rank"]].values.tolist()
    [['y', 1.0, 1], ['x', 1.0, 2], ['z', 0.0, 3]]
    """
    long = _stack(runs)
    normalized = normalize_scores(long, method=normalization)["score"].to_numpy()
    return _finish(long, normalized * _weights(long, weights), name)


def comb_mnz(runs: RunsLike, *, normalization: str | None = "minmax", weights: Any = None,
             name: str = "combmnz") -> pd.DataFrame:
    r"""CombMNZ: CombSUM times the number of runs that retrieve the document,
    :math:`s(d) = |\{j : d \in \text{run}_j\}| \sum_j w_j\, \tilde s_j(d)`.

    Examples
    --------
    >>> a = pd.DataFrame({"qid": ["1", "1"], "docid": ["x", "y"], "score": [2.0, 1.0]})
    >>> b = pd.DataFrame({"qid": ["1", "1"], "docid": ["y", "z"], "score": [5.0, 4.0]})
    >>> comb_mnz([a, b])[["docid", "score"]].values.tolist()
    [['y', 2.0], ['x', 1.0], ['z', 0.0]]
    """
    long = _stack(runs)
    normalized = normalize_scores(long, method=normalization)["score"].to_numpy()
    return _finish(long, normalized * _weights(long, weights), name, mnz=True)


def reciprocal_rank_fusion(runs: RunsLike, *, k: float = 60, weights: Any = None,
                           name: str = "rrf") -> pd.DataFrame:
    r"""Reciprocal rank fusion: :math:`s(d) = \sum_j w_j / (k + \mathrm{rank}_j(d))`.

    Ranks are recomputed per run and query from the scores (descending, ties by docid
    descending); a run's ``rank`` column is ignored. ``k = 60`` as in Cormack et al. (2009).

    Examples
    --------
    >>> a = pd.DataFrame({"qid": ["1", "1"], "docid": ["x", "y"], "score": [2.0, 1.0]})
    >>> b = pd.DataFrame({"qid": ["1", "1"], "docid": ["y", "z"], "score": [5.0, 4.0]})
    >>> reciprocal_rank_fusion([a, b])["docid"].tolist()
    ['y', 'x', 'z']
    """
    if not np.isfinite(k) or k < 0:
        raise InputError(f"reciprocal_rank_fusion: k must be a finite number >= 0, got {k!r}")
    long = _stack(runs)
    return _finish(long, _weights(long, weights) / (float(k) + _ranks(long)), name)


_METHODS: dict[str, Callable[..., pd.DataFrame]] = {
    "combsum": comb_sum, "combmnz": comb_mnz, "rrf": reciprocal_rank_fusion,
}


def fuse(runs: RunsLike, *, method: str = "rrf", **options: Any) -> pd.DataFrame:
    """Fuse runs with ``method`` in {"combsum", "combmnz", "rrf"}; options go to that function.

    Examples
    --------
    >>> a = pd.DataFrame({"qid": ["1"], "docid": ["x"], "score": [2.0]})
    >>> fuse([a, a.assign(score=1.0)], method="combsum", normalization=None)["score"].tolist()
    [3.0]
    """
    if method not in _METHODS:
        raise InputError(f"fuse: method must be one of {sorted(_METHODS)}, got {method!r}")
    return _METHODS[method](runs, **options)
