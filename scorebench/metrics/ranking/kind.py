"""The ``ranking`` table kind: a run table plus qrels, turned into ranked relevance lists.

One unit per (system[, task], qid). The extraction follows trec_eval 10.0:

* documents are ordered by score descending, ties broken by docid descending (byte-wise
  string order, as ``strcmp``); the run's ``rank`` column is ignored;
* ``max_docs`` keeps the first documents of each query after that ordering (``-M``);
  ``judged_docs_only`` then drops documents the qrels do not judge (``-J``);
* queries in the run but not in the qrels are ignored; queries in the qrels missing from a
  system's run are excluded, or included with zero contributions when ``complete=True``
  (``-c``) -- the choice is recorded in ``Inputs.consts["missing_queries_policy"]``;
* a document (qid, docid) listed twice in a run, or judged twice, is an error;
* ``max_grade``, the top of the relevance scale (ERR's g_max), defaults to the
  largest relevance in the *whole* qrels; the Dask engine computes it once before it
  partitions the qrels (:func:`qrels_global_options`), so both engines agree.

Deliberate differences from trec_eval 10.0:

* without ``complete=True`` (``-c``), queries in the qrels that a run lacks are dropped
  from that run's averages, as trec_eval 9.x and pytrec_eval do (the published numbers
  most tables are compared with), not counted as zeros;
* fractional relevance grades are used as given in the gain of graded measures (nDCG,
  ERR, ...); trec_eval 10.0's ``comp_rel_gain`` casts them to integers, truncating 0.5
  to 0.

Ids are compared as strings (an integer qid 301 matches "301"). All of it is vectorised, no
Python loop per query: qids are factorised (one hash per block of a grouped column),
docids are matched through two hashes of their bytes, keyed per query (:mod:`._ids`; an exact
factorising path takes over on a hash collision), then integer sorts and binary searches.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from scorebench.core.errors import InputError
from scorebench.core.tables import GROUP_COLUMNS, Inputs, NAN_POLICIES, Option, numeric_column, register_kind, require_columns
from scorebench.core.table_schema import check_declared_columns
from scorebench.core.validation import check_choice, describe_rows
from scorebench.metrics.ranking._ids import HashCollision, argsort_u64, hash_strings, id_array, same_strings
from scorebench.metrics.ranking._lists import check_level
from scorebench.metrics.ranking._run_table import RUN_COLUMNS, judgments_frame, qrels_option
from scorebench.metrics.ranking.complete import complete_units

__all__ = ["extract_ranking", "load_qrels", "qrels_global_options"]

_RUN_COLUMNS = ("qid", "docid", "score")
_QRELS_COLUMNS = ("qid", "docid", "relevance")
#: Rows per step of the loops over rows: a step's temporaries stay in the CPU cache.
_STEP = 1 << 16


def load_qrels(qrels: Any) -> pd.DataFrame:
    """Qrels as the DataFrame ``qid, docid, relevance`` the kind reads.

    A file (TREC qrels, CSV, Parquet, ...) is read by the evaluation layer before the kind
    runs (the option declares its formats); the kind itself takes a table.
    """
    return judgments_frame(qrels, "ranking", "qrels are required (a DataFrame with qid, docid, relevance, "
                           "or the path of a TREC qrels file), e.g. evaluate(run, ..., qrels=qrels)")


def qrels_global_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """``max_grade`` of the whole qrels (a pandas or Dask DataFrame; a file has been read by the
    evaluation layer by then), unless the caller set it.

    A partitioned engine calls this once, before it splits the qrels by query, so ERR's
    default top grade is a property of the qrels, not of a partition.
    """
    qrels = options.get("qrels")
    if qrels is None or options.get("max_grade") is not None:
        return {}
    if hasattr(qrels, "npartitions"):  # a Dask DataFrame: one reduction over all partitions
        if "relevance" not in qrels.columns:
            return {}  # each partition's extraction names the missing column
        top = qrels["relevance"].map_partitions(pd.to_numeric, errors="coerce").max().compute()
    else:
        frame = load_qrels(qrels)
        require_columns(frame, list(_QRELS_COLUMNS), "ranking (qrels)")
        relevance = numeric_column(frame, "relevance")
        top = relevance.max() if len(relevance) else 0.0
    return {"max_grade": max(float(top), 0.0) if pd.notna(top) else 0.0}


@register_kind("ranking", columns=RUN_COLUMNS,
               options=(qrels_option("relevance judgements: qid, docid, relevance (TREC qrels, CSV, Parquet)",
                                     ("trec_qrels", "table")),
                        Option("relevance_level", float, 1, "minimum relevant grade (trec_eval -l)", flag=True),
                        Option("judged_docs_only", bool, False, "drop unjudged documents first (trec_eval -J)"),
                        Option("max_docs", int, None, "keep the top max_docs documents per query (trec_eval -M)"),
                        Option("complete", bool, False, "average over every query of the qrels (trec_eval -c)",
                               flag=True),
                        Option("max_grade", float, None, "top of the relevance scale (ERR's g_max); default: "
                               "the largest grade in the qrels")),
               unit_column="qid", global_options=qrels_global_options, complete_units=complete_units)
def extract_ranking(df: pd.DataFrame, *, nan_policy: str = "raise", qrels: Any = None,
                    relevance_level: float = 1, judged_docs_only: bool = False,
                    max_docs: int | None = None, complete: bool = False,
                    max_grade: float | None = None) -> Inputs:
    """Ranked retrieval runs judged against qrels (trec_eval semantics), one unit per query.

    ``max_grade`` is the top of the relevance scale (ERR's g_max; e.g. 4, as
    gdeval); by default the largest relevance in the qrels.
    """
    run, qrels_df, level, score, relevance = _checked_inputs(df, qrels, nan_policy, relevance_level, max_docs)
    groups = [c for c in GROUP_COLUMNS if c in run.columns]

    run_qr, qrels_qr, qid_sorted = _query_codes(run["qid"], qrels_df["qid"])
    n_q = len(qid_sorted)

    # --- qrels: the judged lists per query -------------------------------------------------
    in_qrels = np.zeros(n_q, dtype=bool)
    in_qrels[qrels_qr] = True
    judged_flat, judged_count_q, num_rel_q, num_nonrel_q = _judged_lists(qrels_qr, relevance, level, n_q)
    judged_start_q = np.zeros(n_q, dtype=np.int64)
    np.cumsum(judged_count_q[:-1], out=judged_start_q[1:])
    max_relevance = _max_grade(max_grade, relevance)

    # --- run: keep queries the qrels know, number the units ---------------------------------
    keep = in_qrels[run_qr]
    ignored = np.unique(run_qr[~keep])
    if not keep.all():
        run_rows = np.flatnonzero(keep)
        run_qr, score, run = run_qr[run_rows], score[run_rows], run.iloc[run_rows]
    units = _Units.number(run, groups, run_qr, n_q, in_qrels if complete else None)

    # --- ranking order (unit, score descending, docid descending), then each document's
    # relevance in that order (and the duplicate check) --------------------------------------
    run_docs, qrels_docs = id_array(run["docid"]), id_array(qrels_df["docid"])
    order, unit_sorted = _rank_order(units.unit, score, run_docs)
    run_side = _RunSide(run_docs, run_qr, order, unit_sorted, units.one_per_query, run.index)
    try:
        rel = _join(run_side, qrels_docs, qrels_qr, relevance, qrels_df.index, hashed=True)
    except HashCollision:  # two different ids share a hash: match them exactly instead
        rel = _join(run_side, qrels_docs, qrels_qr, relevance, qrels_df.index, hashed=False)
    del qrels_docs, run_side, order
    rel, counts = _cut_lists(rel, unit_sorted, units.n, max_docs, judged_docs_only)
    del unit_sorted
    start = np.zeros(units.n, dtype=np.int64)
    np.cumsum(counts[:-1], out=start[1:])

    # --- per-unit arrays and the unit frame ----------------------------------------------
    unit_q = units.keys % n_q
    frame = pd.DataFrame({"qid": qid_sorted[unit_q]})
    if units.gframe is not None:
        gcols = units.gframe.iloc[units.keys // n_q].reset_index(drop=True)
        frame = pd.concat([gcols, frame], axis=1)
    missing = ~units.seen[units.keys]
    missing_list = tuple(tuple(row) for row in frame.loc[missing].itertuples(index=False, name=None))
    arrays = {
        "start": start,
        "n_ret": counts.astype(np.int64),
        "num_rel": num_rel_q[unit_q],
        "num_nonrel": num_nonrel_q[unit_q],
        "judged_start": judged_start_q[unit_q],
        "judged_count": judged_count_q[unit_q].astype(np.int64),
    }
    consts = {
        "rel": rel,
        "judged": judged_flat,
        "relevance_level": level,
        "max_relevance": max_relevance,
        "complete": bool(complete),
        "missing_queries_policy": ("queries in the qrels missing from a run count as 0 (complete=True, "
                                   "trec_eval -c)" if complete else
                                   "queries in the qrels missing from a run are excluded (complete=False)"),
        "missing_queries": missing_list,
        "ignored_queries": tuple(qid_sorted[ignored].tolist()),
        "judged_docs_only": bool(judged_docs_only),
        "max_docs": None if max_docs is None else int(max_docs),
    }
    return Inputs(frame, arrays, consts, key="qid")


def _checked_inputs(df: Any, qrels: Any, nan_policy: str, relevance_level: Any, max_docs: Any):
    """Validate the run and the qrels: ``(run, qrels, level, score, relevance)``, rows with a
    missing value dropped or refused as ``nan_policy`` says."""
    check_choice(nan_policy, "nan_policy", NAN_POLICIES)
    if not isinstance(df, pd.DataFrame):
        raise InputError(f"kind 'ranking': expected a pandas DataFrame run, got {type(df).__name__}")
    check_declared_columns(df, RUN_COLUMNS, "ranking")
    level = check_level(relevance_level)
    if max_docs is not None and (isinstance(max_docs, bool) or not float(max_docs).is_integer() or max_docs < 1):
        raise InputError(f"max_docs: expected a positive integer (trec_eval -M), got {max_docs!r}")
    qrels_df = load_qrels(qrels)
    require_columns(qrels_df, list(_QRELS_COLUMNS), "ranking (qrels)")

    run = _drop_missing(df, nan_policy)
    if len(run) == 0:
        raise InputError("kind 'ranking': the run has no rows to evaluate")
    score = numeric_column(run, "score")
    relevance = numeric_column(qrels_df, "relevance")
    for frame, name in ((run, "run"), (qrels_df, "qrels")):
        for col in ("qid", "docid"):
            missing = frame[col].isna().to_numpy()
            if missing.any():
                raise InputError(f"{name} column {col!r}: missing ids in {describe_rows(missing, frame.index)}")
    return run, qrels_df, level, score, relevance


@dataclass(frozen=True)
class _Units:
    """The units (group x query) of a run: each row's unit, the unit keys
    ``group * n_q + query`` in unit order, which keys the run has rows for, the groups."""

    unit: np.ndarray
    keys: np.ndarray
    seen: np.ndarray
    gframe: pd.DataFrame | None

    @property
    def n(self) -> int:
        return len(self.keys)

    @property
    def one_per_query(self) -> bool:
        """Whether each query has at most one unit (no grouping, or a single group)."""
        return self.gframe is None or len(self.gframe) == 1

    @classmethod
    def number(cls, run: pd.DataFrame, groups: list[str], run_qr: np.ndarray, n_q: int,
               add_queries: np.ndarray | None) -> "_Units":
        """Number the units of ``run``; ``add_queries`` (trec_eval -c) adds those queries to
        every group even where the group has no row for them."""
        gcode, gframe = _group_codes(run, groups) if groups else (None, None)
        n_groups = 1 if gframe is None else len(gframe)
        present = np.zeros(n_groups * n_q, dtype=bool)
        unit_key = run_qr if gcode is None else gcode.astype(np.int64) * n_q + run_qr
        present[unit_key] = True
        seen = present.copy()
        if add_queries is not None:
            present.reshape(n_groups, n_q)[:, add_queries] = True
        unit_of_key = np.cumsum(present) - 1
        unit = unit_of_key.astype(np.int32 if len(unit_of_key) < 2**31 else np.int64)[unit_key]
        return cls(unit, np.flatnonzero(present), seen, gframe)


def _cut_lists(rel: np.ndarray, unit_sorted: np.ndarray, n_units: int, max_docs: int | None,
               judged_docs_only: bool) -> tuple[np.ndarray, np.ndarray]:
    """Ranked relevances and per-unit counts after trec_eval's ``-M`` (the first ``max_docs``
    of each list) and ``-J`` (judged documents only) cuts, in that order."""
    counts = _sorted_counts(unit_sorted, n_units)
    if max_docs is None and not judged_docs_only:
        return rel, counts
    offsets = np.zeros(n_units, dtype=np.int64)
    np.cumsum(counts[:-1], out=offsets[1:])
    pos = np.arange(len(rel)) - np.repeat(offsets, counts)
    keep_doc = np.ones(len(rel), dtype=bool) if max_docs is None else pos < int(max_docs)
    if judged_docs_only:
        keep_doc &= rel >= 0  # NaN (not judged) and negative (unjudged in pool) drop out
    return rel[keep_doc], np.bincount(unit_sorted[keep_doc], minlength=n_units)


def _sorted_counts(values: np.ndarray, n: int) -> np.ndarray:
    """``np.bincount(values, minlength=n)`` of sorted values, by binary search (no
    value-sized temporaries)."""
    return np.diff(np.searchsorted(values, np.arange(n + 1, dtype=values.dtype)))


def _max_grade(max_grade: Any, relevance: np.ndarray) -> float:
    """The top grade: ``max_grade`` when given (at least every judged grade), else the qrels' largest."""
    top = float(relevance.max()) if len(relevance) and relevance.max() > 0 else 0.0
    if max_grade is None:
        return top
    if isinstance(max_grade, bool) or not isinstance(max_grade, (int, float, np.integer, np.floating)) \
            or not math.isfinite(max_grade) or max_grade < 0:
        raise InputError(f"max_grade: expected a finite number >= 0 (the top relevance grade), got {max_grade!r}")
    if max_grade < top:
        raise InputError(f"max_grade {max_grade!r} is below the largest relevance in the qrels ({top!r}); "
                         "expected the top of the relevance scale")
    return float(max_grade)


def _judged_lists(q: np.ndarray, relevance: np.ndarray, level: float,
                  n_q: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per query: judged relevance values (>= 0) in decreasing order (flat), their count, and
    the numbers of relevant (>= level) and judged non-relevant documents."""
    judged = relevance >= 0
    jq, jrel = (q, relevance) if judged.all() else (q[judged], relevance[judged])
    top = float(jrel.max()) if jrel.size else 0.0
    n_levels = int(top) + 1
    code = _grade_codes(jq, jrel, top, n_levels) if jrel.size and top < 256 else None
    if code is not None:
        # small integer grades: one count per (query, grade) gives every output, no sort
        per_level = np.bincount(code, minlength=n_q * n_levels)
        del code
        levels_desc = np.arange(n_levels - 1, -1, -1, dtype=np.float64)
        flat = np.repeat(np.tile(levels_desc, n_q), per_level)
        per_level = per_level.reshape(n_q, n_levels)
        counts = per_level.sum(axis=1)
        num_rel = per_level[:, levels_desc >= level].sum(axis=1).astype(np.float64)
    else:
        counts = np.bincount(jq, minlength=n_q)
        num_rel = np.bincount(jq, weights=(jrel >= level).astype(np.float64), minlength=n_q)
        flat = jrel[np.lexsort((-jrel, jq))]
    return flat, counts, num_rel, (counts - num_rel).astype(np.float64)


def _grade_codes(q: np.ndarray, grade: np.ndarray, top: float, n_levels: int) -> np.ndarray | None:
    """``q * n_levels + (top - grade)`` for every judgment (int64, the index type of
    ``np.bincount``), built a step at a time; None when some grade is not an integer."""
    code = np.empty(len(grade), dtype=np.int64)
    for lo in range(0, len(grade), _STEP):
        part, g = code[lo:lo + _STEP], grade[lo:lo + _STEP]
        if not np.array_equal(g, np.round(g)):
            return None
        np.multiply(q[lo:lo + _STEP], n_levels, out=part)
        part += (top - g).astype(np.int64)
    return code


def _sorted_unique(key: np.ndarray, groups: np.ndarray, rows: np.ndarray | None, docs: Any, labels: Any,
                   problem: str, expected: str) -> tuple[np.ndarray, np.ndarray]:
    """Sort 64-bit (group, document) keys; equal keys are either a hash collision (the
    strings differ: switch to the exact path) or a real duplicate (an InputError).
    ``rows`` maps a key's position to its row of ``docs`` (None: the same position)."""
    order = argsort_u64(key, groups)  # groups sit in the keys' high bits
    key = key[order]
    dup = np.flatnonzero(key[1:] == key[:-1])
    if dup.size:
        a, b = order[dup], order[dup + 1]
        same_group = groups[a] == groups[b]
        if rows is not None:
            a, b = rows[a], rows[b]
        _raise_duplicates(a, b, same_group, docs, labels, problem, expected)
    return order, key


def _raise_duplicates(a: np.ndarray, b: np.ndarray, same_group: np.ndarray, docs: Any, labels: Any,
                      problem: str, expected: str) -> None:
    """Rows ``a[i]`` and ``b[i]`` matched on their keys: a real duplicate (an InputError)
    when every pair is one id of one group, else a hash collision."""
    if not (same_group & same_strings(docs, a, docs, b)).all():
        raise HashCollision
    rows = np.sort(np.concatenate([a, b]))
    raise InputError(f"{problem} in {describe_rows(rows, labels)}; expected {expected}")


@dataclass(frozen=True)
class _RunSide:
    """The run as the join reads it: its document ids, query codes and row labels, the
    ranking order, each ranked row's unit, and whether each query has one unit."""

    docs: pa.Array
    q: np.ndarray
    order: np.ndarray
    unit_sorted: np.ndarray
    one_per_query: bool
    labels: Any


_RUN_DUPLICATE = ("run: the same document is retrieved twice for one query", "each (system, qid, docid) once")


def _join(run: _RunSide, qrels_docs, qrels_q: np.ndarray, relevance: np.ndarray, qrels_labels, *,
          hashed: bool) -> np.ndarray:
    """Relevance of each run row in ranking order (NaN when not judged); raises on
    duplicate documents.

    The qrels are sorted by a 64-bit key with the query in its high bits and the
    document's hash (or exact code) below, so the sorted order stays grouped by query;
    the run's keys, taken in ranking order (grouped by unit, so by query), are looked up in
    it a cache-sized range at a time. A match needs the same query, the same high bits of
    the 64-bit hash and the same 32-bit second hash.
    """
    (run_h, run_h2), (qrels_h, qrels_h2) = _doc_keys(run.docs, qrels_docs, hashed)
    n_prefix = int(max(run.q.max(initial=0), qrels_q.max(initial=0), run.unit_sorted.max(initial=0))) + 1
    bits = max(1, (n_prefix - 1).bit_length())
    qkey = _prefixed(qrels_q, qrels_h, bits, hashed)
    del qrels_h
    order, qkey = _sorted_unique(qkey, qrels_q, None, qrels_docs, qrels_labels,
                                 "qrels: the same (qid, docid) is judged more than once", "one judgment per document")
    judgments = _Judgments(bits, hashed, qrels_h2, relevance, order, qkey)
    del order, qkey
    if run.one_per_query:  # a judgment fixes the query, so the unit: mark the judgments met
        rel, _, missed, repeated = _match_ranked(run, run_h, run_h2, judgments, keep_qi=False)
        if repeated:  # some judgment met twice: find the rows (an error either way)
            _check_judged_once(run, _match_ranked(run, run_h, run_h2, judgments, keep_qi=True)[1], len(qrels_h2))
    else:
        rel, qi, missed, _ = _match_ranked(run, run_h, run_h2, judgments, keep_qi=True)
        _check_judged_once(run, qi, len(qrels_h2))
        del qi
    _check_unjudged_once(run, run_h, missed, bits, hashed)
    return rel


@dataclass(frozen=True)
class _Judgments:
    """The qrels side of the join: the key bits given to the query, whether the keys are
    hashes, each judgment's second hash and relevance, the sorted keys and the judgment
    (row) of each."""

    bits: int
    hashed: bool
    h2: np.ndarray
    relevance: np.ndarray
    order: np.ndarray
    key: np.ndarray


def _match_ranked(run: _RunSide, run_h: np.ndarray, run_h2: np.ndarray, judgments: _Judgments, *,
                  keep_qi: bool) -> tuple[np.ndarray, np.ndarray | None, np.ndarray, bool]:
    """Look the ranked rows up in the sorted judgments, a cache-sized step at a time
    (ranked rows come grouped by unit, so by query: a step searches only the key range its
    rows span, for its keys in sorted order). Returns the relevance of each ranked row (NaN when not judged), the matched
    judgment of each (-1 when none; only with ``keep_qi``), the ranked positions without a
    match, and whether some judgment was matched twice."""
    n = len(run.order)
    rel = np.empty(n)
    qi_all = np.empty(n, dtype=np.int64) if keep_qi else None
    seen = np.zeros(len(judgments.h2), dtype=bool)
    missed, n_hits = [], 0
    for lo in range(0, n, _STEP):
        rows = run.order[lo:lo + _STEP]
        q = run.q[rows]
        keys = _prefixed(q, run_h[rows], judgments.bits, judgments.hashed)
        by_key = argsort_u64(keys, q)  # searches for sorted keys follow similar paths: faster
        qi, hit = _match_step(judgments, keys[by_key])
        rows = rows[by_key]
        if not np.array_equal(judgments.h2[qi], run_h2[rows if hit is None else rows[hit]]):
            raise HashCollision  # same query and high hash bits, another second hash: two ids collided
        seen[qi] = True
        n_hits += len(qi)
        rel[lo:lo + len(rows)][by_key] = _spread(judgments.relevance[qi], hit, np.nan)
        if keep_qi:
            qi_all[lo:lo + len(rows)][by_key] = _spread(qi, hit, -1)
        if hit is not None:
            missed.append(np.sort(by_key[~hit]) + lo)
    missed = np.concatenate(missed) if missed else np.zeros(0, dtype=np.int64)
    return rel, qi_all, missed, int(np.count_nonzero(seen)) < n_hits


def _spread(values: np.ndarray, hit: np.ndarray | None, fill: float) -> np.ndarray:
    """``values`` at the ``hit`` positions, ``fill`` elsewhere (``hit`` None: every position)."""
    if hit is None:
        return values
    out = np.full(len(hit), fill, dtype=values.dtype)
    out[hit] = values
    return out


def _match_step(judgments: _Judgments, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """The judgment of each key that has one, and which keys do (None: all of them)."""
    sorted_keys = judgments.key
    a = int(np.searchsorted(sorted_keys, keys.min())) if len(keys) else 0
    b = int(np.searchsorted(sorted_keys, keys.max(), side="right")) if len(keys) else 0
    if a == b:
        return np.zeros(0, dtype=np.int64), np.zeros(len(keys), dtype=bool)
    window = sorted_keys[a:b]
    where = np.searchsorted(window, keys)
    np.minimum(where, b - a - 1, out=where)
    hit = window[where] == keys
    if hit.all():
        return judgments.order[where + a], None
    return judgments.order[where[hit] + a], hit


def _doc_keys(run_docs: pa.Array, qrels_docs: pa.Array, hashed: bool):
    """``((run_h, run_h2), (qrels_h, qrels_h2))``: the two hashes of each document id, or
    (``hashed=False``) exact codes of the ids and their low 32 bits."""
    if hashed:
        return hash_strings(run_docs), hash_strings(qrels_docs)
    codes, _ = pd.factorize(np.concatenate([run_docs.to_numpy(zero_copy_only=False),
                                            qrels_docs.to_numpy(zero_copy_only=False)]))
    codes = codes.astype(np.uint64)
    run_h, qrels_h = codes[:len(run_docs)], codes[len(run_docs):]
    return (run_h, run_h.astype(np.uint32)), (qrels_h, qrels_h.astype(np.uint32))


def _check_judged_once(run: _RunSide, qi: np.ndarray, n_qrels: int) -> None:
    """Raise when a judged document is retrieved twice for one unit: two ranked rows of one
    unit that matched the same judgment (``qi``, per ranked row; -1 for no match)."""
    hit_at = np.flatnonzero(qi >= 0)
    unit = run.unit_sorted[hit_at]
    key = unit.astype(np.uint64) * np.uint64(n_qrels) + qi[hit_at].astype(np.uint64)
    order = argsort_u64(key, unit)
    key = key[order]
    dup = np.flatnonzero(key[1:] == key[:-1])
    if dup.size == 0:
        return
    a, b = hit_at[order[dup]], hit_at[order[dup + 1]]
    _raise_duplicates(run.order[a], run.order[b], run.unit_sorted[a] == run.unit_sorted[b], run.docs,
                      run.labels, *_RUN_DUPLICATE)


def _check_unjudged_once(run: _RunSide, run_h: np.ndarray, missed: np.ndarray, bits: int, hashed: bool) -> None:
    """Raise when a document the qrels do not judge is retrieved twice for one unit
    (``missed``: the ranked positions without a match)."""
    if missed.size < 2:
        return
    rows = run.order[missed]
    unit = run.unit_sorted[missed]
    key = _prefixed(unit, run_h[rows], bits, hashed)
    _sorted_unique(key, unit, rows, run.docs, run.labels, *_RUN_DUPLICATE)


def _prefixed(prefix: np.ndarray, h: np.ndarray, bits: int, hashed: bool) -> np.ndarray:
    """64-bit keys: ``prefix`` (< 2**bits) exactly in the high ``bits`` bits, then the
    document hash's high bits (or, for exact codes, the code itself, which fits). A hash
    array is overwritten (the caller drops it); built a cache-sized step at a time."""
    key = np.right_shift(h, np.uint64(bits), out=h) if hashed else h.copy()  # a hash is consumed in place
    shift = np.uint64(64 - bits)
    for lo in range(0, len(key), _STEP):
        key[lo:lo + _STEP] |= prefix[lo:lo + _STEP].astype(np.uint64) << shift
    return key


def _drop_missing(df: pd.DataFrame, nan_policy: str) -> pd.DataFrame:
    cols = list(_RUN_COLUMNS)
    if nan_policy == "omit":
        return df.loc[df[cols].notna().all(axis=1).to_numpy()]
    if nan_policy == "propagate":
        bad = df["score"].isna().to_numpy()
        if bad.any():
            raise InputError(f"column 'score': NaN in {describe_rows(bad, df.index)}; a ranking cannot order "
                             "missing scores (use nan_policy='omit' to drop such rows)")
    return df


def _id_strings(uniques: Any) -> np.ndarray:
    """Unique id values as strings; integral floats print as integers (301.0 -> '301')."""
    if pd.api.types.is_string_dtype(getattr(uniques, "dtype", None)) and \
            not isinstance(getattr(uniques, "dtype", None), np.dtype):
        return np.asarray(uniques, dtype=object)
    values = np.asarray(uniques)
    if values.dtype.kind == "O" and pd.api.types.infer_dtype(values, skipna=False) == "string":
        return values
    if values.dtype.kind in "iub":
        return values.astype(str).astype(object)
    if values.dtype.kind == "f":
        if np.all(values == np.round(values)):
            return values.astype(np.int64).astype(str).astype(object)
        return values.astype(str).astype(object)
    out = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        if isinstance(v, str):
            out[i] = v
        elif isinstance(v, (float, np.floating)) and float(v).is_integer():
            out[i] = str(int(v))
        else:
            out[i] = str(v)
    return out


def _query_codes(a: pd.Series, b: pd.Series) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Query codes of the rows of ``a`` and of ``b`` in one shared space, numbered in the
    string order of the ids (as trec_eval prints them), and the id strings in that order.

    Each column is factorised on its own (cheap when grouped, see :func:`_factorize_blocks`),
    the two sets of unique id strings are aligned, and the codes are expanded to rows last.
    """
    codes_a, lengths_a, uniques_a = _factorize_blocks(a)
    codes_b, lengths_b, uniques_b = _factorize_blocks(b)
    names_a, names_b = _id_strings(uniques_a), _id_strings(uniques_b)
    joint, names = pd.factorize(np.concatenate([names_a, names_b]))
    names = np.asarray(names, dtype=object)
    q_order = np.argsort(names.astype(str), kind="stable")
    q_rank = np.empty(len(names), dtype=np.int32 if len(names) < 2**31 else np.int64)
    q_rank[q_order] = np.arange(len(names))
    rank = q_rank[joint]
    return (_expand(rank[:len(names_a)][codes_a], lengths_a), _expand(rank[len(names_a):][codes_b], lengths_b),
            names[q_order])


def _expand(codes: np.ndarray, lengths: np.ndarray | None) -> np.ndarray:
    return codes if lengths is None else np.repeat(codes, lengths)


def _factorize_blocks(values: pd.Series) -> tuple[np.ndarray, np.ndarray | None, Any]:
    """``pd.factorize`` that hashes one value per block of equal neighbours: runs and qrels
    are usually grouped by query, so a column of millions of qids has few blocks. Returns
    the codes (one per block, or one per row when ``lengths`` is None), the block lengths
    and the unique values."""
    if len(values) > 1 and pd.api.types.is_string_dtype(values.dtype):
        try:
            arr = pa.array(values, type=pa.large_string(), from_pandas=True)
            if isinstance(arr, pa.ChunkedArray):
                arr = arr.combine_chunks()
            # nulls would make the comparison null: leave such a column to pd.factorize
            change = pc.not_equal(arr[1:], arr[:-1]).to_numpy(zero_copy_only=False) if arr.null_count == 0 \
                else None
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
            change = None
        if change is not None:
            firsts = np.flatnonzero(np.concatenate([[True], change.astype(bool)]))
            if len(firsts) * 4 < len(values):
                block_codes, uniques = pd.factorize(values.iloc[firsts])
                return block_codes, np.diff(np.append(firsts, len(values))), uniques
    codes, uniques = pd.factorize(values)
    return codes, None, uniques


def _group_codes(run: pd.DataFrame, groups: list[str]) -> tuple[np.ndarray, pd.DataFrame]:
    if len(groups) == 1:
        codes, uniques = pd.factorize(run[groups[0]], sort=True)
        gframe = pd.DataFrame({groups[0]: np.asarray(uniques)})
    else:
        index = pd.MultiIndex.from_frame(run[groups])
        codes, uniques = pd.factorize(index, sort=True)
        gframe = uniques.to_frame(index=False)
        gframe.columns = groups  # factorize drops the level names: without them the groups were lost
    if (codes < 0).any():
        bad = codes < 0
        raise InputError(f"columns {groups}: missing values in {describe_rows(bad, run.index)}")
    return codes.astype(np.int64), gframe


def _rank_order(unit: np.ndarray, score: np.ndarray, docs) -> tuple[np.ndarray, np.ndarray]:
    """Permutation sorting by unit, score descending, then docid descending (strcmp), and
    the units in that order."""
    n = len(unit)
    fast = _fast_order(unit, score)
    if fast is None:  # exact path: rank the scores, then sort (unit, score rank)
        by_score = np.argsort(-score, kind="stable")
        score_rank = np.empty(n, dtype=np.int64)
        score_rank[by_score] = np.arange(n)
        del by_score
        order = np.argsort(unit.astype(np.int64) * n + score_rank)
        del score_rank
        u = unit[order]
        ties = _score_neighbours(order, u, score)[1]
    else:
        order, u, ties = fast
    if ties is None:
        return order, u
    same = np.zeros(n - 1, dtype=bool)
    same[ties] = True
    tied = np.zeros(n, dtype=bool)
    tied[1:] |= same
    tied[:-1] |= same
    idx = np.flatnonzero(tied)
    group = np.cumsum(np.concatenate([[True], ~same]))[idx]
    names = np.asarray(docs.take(pa.array(order[idx], type=pa.int64())).to_pylist(), dtype=str)
    _, name_rank = np.unique(names, return_inverse=True)
    sub = np.lexsort((-name_rank.astype(np.int64), group))
    order[idx] = order[idx][sub]
    return order, u


def _score_neighbours(order: np.ndarray, u: np.ndarray, score: np.ndarray) -> tuple[bool, np.ndarray | None]:
    """Each ranked row against the next one of its unit: whether a higher score ever
    follows a lower one, and the positions i where rows i and i + 1 tie (None if none)."""
    misordered, ties = False, []
    for lo in range(0, len(order) - 1, _STEP):
        hi = min(lo + _STEP, len(order) - 1)
        s = score[order[lo:hi + 1]]
        same_unit = u[lo + 1:hi + 1] == u[lo:hi]
        misordered = misordered or bool(np.any(same_unit & (s[1:] > s[:-1])))
        tie = np.flatnonzero(same_unit & (s[1:] == s[:-1]))
        if tie.size:
            ties.append(tie + lo)
    return misordered, (np.concatenate(ties) if ties else None)


def _fast_order(unit: np.ndarray, score: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None] | None:
    """One sort of 64-bit keys ``unit << b | quantised(max - score)``: the permutation, the
    units in its order and the positions of tied scores (see :func:`_score_neighbours`);
    None when the quantisation could have misordered two different scores of a query (then
    the exact two-sort path runs). Equal scores are left for the docid tie-break."""
    n = len(score)
    if n == 0:
        return np.zeros(0, dtype=np.int64), unit[:0], None
    low, high = float(score.min()), float(score.max())
    span = high - low
    unit_bits = max(1, int(unit.max()).bit_length())
    score_bits = 64 - unit_bits
    if not np.isfinite(span) or span == 0 or score_bits < 40:
        return None
    scale = float(2 ** min(score_bits, 52) - 1) / span
    key = np.empty(n, dtype=np.uint64)
    for lo in range(0, n, _STEP):
        part = key[lo:lo + _STEP]
        part[:] = (high - score[lo:lo + _STEP]) * scale
        part |= unit[lo:lo + _STEP].astype(np.uint64) << np.uint64(score_bits)
    order = argsort_u64(key, unit)
    del key
    u = unit[order]
    misordered, ties = _score_neighbours(order, u, score)
    return None if misordered else (order, u, ties)
