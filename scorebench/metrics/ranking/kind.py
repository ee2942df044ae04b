"""The ``ranking`` table kind: a run table plus qrels, turned into ranked relevance lists.

One unit per (system[, task], qid). The extraction follows trec_eval 10.0:

* documents are ordered by score descending, ties broken by docid descending (byte-wise
  string order, as ``strcmp``); the run's ``rank`` column is ignored;
* ``max_docs`` keeps the first documents of each query after that ordering (``-M``);
  ``judged_docs_only`` then drops documents the qrels do not judge (``-J``);
* queries in the run but not in the qrels are ignored; queries in the qrels missing from a
  system's run are excluded, or included with zero contributions when ``complete=True``
  (``-c``) -- the choice is recorded in ``Inputs.consts["missing_queries_policy"]``;
* a document (qid, docid) listed twice in a run, or judged twice, is an error.

Ids are compared as strings (an integer qid 301 matches "301"). All of it is vectorised:
one joint factorisation of the ids, integer sorts and searches, no Python loop per query.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pandas as pd

from ...errors import InputError
from ...tables import GROUP_COLUMNS, Inputs, NAN_POLICIES, numeric_column, register_kind, require_columns
from ...validation import check_choice, describe_rows
from ._lists import _check_level

__all__ = ["extract_ranking", "load_qrels"]

_RUN_COLUMNS = ("qid", "docid", "score")
_QRELS_COLUMNS = ("qid", "docid", "relevance")


def load_qrels(qrels: Any) -> pd.DataFrame:
    """Qrels as a DataFrame ``qid, docid, relevance`` from a DataFrame or a file path.

    A path is read as a TREC qrels file (``qid iter docid rel``) unless it has a table
    extension (``.csv``, ``.parquet``, ``.jsonl``, ...), which :func:`scorebench.io.read_table`
    reads when available.
    """
    if isinstance(qrels, pd.DataFrame):
        return qrels
    if isinstance(qrels, (str, os.PathLike)):
        path = os.fspath(qrels)
        if not os.path.exists(path):
            raise InputError(f"qrels: file not found: {path!r}")
        from ...io_trec import looks_like_trec, read_trec_qrels

        table_ext = (".csv", ".tsv", ".parquet", ".pq", ".json", ".jsonl", ".feather")
        if path.lower().endswith(table_ext) and looks_like_trec(path) != "qrels":
            try:
                from ...io import read_table  # the lead's generic reader, when present
            except ImportError:
                read_table = None
            if read_table is not None:
                return read_table(path)
            if path.lower().endswith((".csv", ".tsv")):
                return pd.read_csv(path, sep="\t" if path.lower().endswith(".tsv") else ",")
            if path.lower().endswith((".parquet", ".pq")):
                return pd.read_parquet(path)
        return read_trec_qrels(path)
    if qrels is None:
        raise InputError("kind 'ranking': qrels are required (a DataFrame with qid, docid, relevance, "
                         "or the path of a TREC qrels file), e.g. evaluate(run, ..., qrels=qrels)")
    raise InputError(f"qrels: expected a DataFrame or a file path, got {type(qrels).__name__}")


@register_kind("ranking", columns="run: qid, docid, score (system, task optional; rank ignored) "
                                  "+ qrels=: qid, docid, relevance",
               options=("qrels", "relevance_level", "judged_docs_only", "max_docs", "complete"),
               unit_column="qid")
def extract_ranking(df: pd.DataFrame, *, nan_policy: str = "raise", qrels: Any = None,
                    relevance_level: float = 1, judged_docs_only: bool = False,
                    max_docs: int | None = None, complete: bool = False) -> Inputs:
    """Ranked retrieval runs judged against qrels (trec_eval semantics), one unit per query."""
    check_choice(nan_policy, "nan_policy", NAN_POLICIES)
    if not isinstance(df, pd.DataFrame):
        raise InputError(f"kind 'ranking': expected a pandas DataFrame run, got {type(df).__name__}")
    if df.columns.duplicated().any():
        dups = sorted(set(map(str, df.columns[df.columns.duplicated()])))
        raise InputError(f"duplicate column name(s) {dups}; expected unique column names")
    require_columns(df, list(_RUN_COLUMNS), "ranking")
    level = _check_level(relevance_level)
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
    groups = [c for c in GROUP_COLUMNS if c in run.columns]

    n_run = len(run)
    qcode, qnames = _joint_codes(run["qid"], qrels_df["qid"])
    dcode, dnames = _joint_codes(run["docid"], qrels_df["docid"])
    run_q, qrels_q = qcode[:n_run], qcode[n_run:]
    run_d, qrels_d = dcode[:n_run], dcode[n_run:]
    del qcode, dcode
    n_docs = len(dnames)

    # queries numbered in string order, as trec_eval prints them
    q_order = np.argsort(np.asarray(qnames, dtype=object), kind="stable")
    q_rank = np.empty(len(qnames), dtype=np.int64)
    q_rank[q_order] = np.arange(len(qnames))
    n_q = len(qnames)

    # --- qrels: relevance lookup and the judged lists per query ------------------------
    qrels_key = q_rank[qrels_q] * n_docs + qrels_d
    key_order = np.argsort(qrels_key, kind="stable")
    qrels_key_sorted = qrels_key[key_order]
    dup = qrels_key_sorted[1:] == qrels_key_sorted[:-1]
    if dup.any():
        rows = np.sort(np.concatenate([key_order[1:][dup], key_order[:-1][dup]]))
        raise InputError(f"qrels: the same (qid, docid) is judged more than once in "
                         f"{describe_rows(rows, qrels_df.index)}; expected one judgment per document")
    rel_sorted = relevance[key_order]
    in_qrels = np.zeros(n_q, dtype=bool)
    in_qrels[q_rank[qrels_q]] = True

    judged_mask = relevance >= 0
    jq = q_rank[qrels_q[judged_mask]]
    jrel = relevance[judged_mask]
    levels, level_code = np.unique(-jrel, return_inverse=True)
    jorder = np.argsort(jq * max(len(levels), 1) + level_code, kind="stable")
    judged_flat = jrel[jorder]
    judged_count_q = np.bincount(jq, minlength=n_q)
    judged_start_q = np.zeros(n_q, dtype=np.int64)
    np.cumsum(judged_count_q[:-1], out=judged_start_q[1:])
    num_rel_q = np.bincount(jq, weights=(jrel >= level).astype(np.float64), minlength=n_q)
    num_nonrel_q = np.bincount(jq, weights=(jrel < level).astype(np.float64), minlength=n_q)
    max_relevance = float(relevance.max()) if len(relevance) and relevance.max() > 0 else 0.0

    # --- run: keep queries the qrels know, number the units -----------------------------
    run_qr = q_rank[run_q]
    keep = in_qrels[run_qr]
    ignored = np.unique(run_qr[~keep])
    if not keep.all():
        run_qr, run_d, score = run_qr[keep], run_d[keep], score[keep]
        run_rows = np.flatnonzero(keep)
    else:
        run_rows = None
    if groups:
        gcode, gframe = _group_codes(run, groups)
        if run_rows is not None:
            gcode = gcode[run_rows]
    else:
        gcode, gframe = np.zeros(len(run_qr), dtype=np.int64), None
    n_groups = 1 if gframe is None else len(gframe)
    present = np.zeros(n_groups * n_q, dtype=bool)
    unit_key = gcode * n_q + run_qr
    present[unit_key] = True
    seen = present.copy()
    if complete:
        present.reshape(n_groups, n_q)[:, in_qrels] = True
    unit_of_key = np.cumsum(present) - 1
    unit = unit_of_key[unit_key]
    del unit_key
    unit_keys = np.flatnonzero(present)
    n_units = len(unit_keys)

    # duplicate documents within a unit; relevance of each retrieved document
    doc_key = unit * n_docs + run_d
    perm = np.argsort(doc_key, kind="stable")
    doc_key = doc_key[perm]
    dup = doc_key[1:] == doc_key[:-1]
    if dup.any():
        pos = np.sort(np.concatenate([perm[1:][dup], perm[:-1][dup]]))
        labels = run.index if run_rows is None else run.index[run_rows]
        raise InputError(f"run: the same document is retrieved twice for one query in "
                         f"{describe_rows(pos, labels)}; expected each (system, qid, docid) once")
    del doc_key
    lookup = (run_qr * n_docs + run_d)[perm]
    where = np.searchsorted(qrels_key_sorted, lookup)
    np.minimum(where, max(len(qrels_key_sorted) - 1, 0), out=where)
    rel = np.full(len(lookup), np.nan)
    if len(qrels_key_sorted):
        hit = qrels_key_sorted[where] == lookup
        rel[perm[hit]] = rel_sorted[where[hit]]
    del lookup, where, perm

    # --- ranking order: unit, score descending, docid descending -------------------------
    order = _rank_order(unit, score, run_d, dnames)
    rel = rel[order]
    unit_sorted = unit[order]
    del order
    counts = np.bincount(unit_sorted, minlength=n_units)
    if max_docs is not None or judged_docs_only:
        offsets = np.zeros(n_units, dtype=np.int64)
        np.cumsum(counts[:-1], out=offsets[1:])
        pos = np.arange(len(rel)) - np.repeat(offsets, counts)
        keep_doc = np.ones(len(rel), dtype=bool) if max_docs is None else pos < int(max_docs)
        if judged_docs_only:
            keep_doc &= rel >= 0  # NaN (not judged) and negative (unjudged in pool) drop out
        rel, unit_sorted = rel[keep_doc], unit_sorted[keep_doc]
        counts = np.bincount(unit_sorted, minlength=n_units)
    start = np.zeros(n_units, dtype=np.int64)
    np.cumsum(counts[:-1], out=start[1:])

    # --- per-unit arrays and the unit frame ----------------------------------------------
    unit_q = unit_keys % n_q
    unit_g = unit_keys // n_q
    qid_sorted = np.asarray(qnames, dtype=object)[q_order]
    frame = pd.DataFrame({"qid": qid_sorted[unit_q]})
    if gframe is not None:
        gcols = gframe.iloc[unit_g].reset_index(drop=True)
        frame = pd.concat([gcols, frame], axis=1)
    missing = ~seen[unit_keys]
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
    values = np.asarray(uniques)
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


def _joint_codes(a: pd.Series, b: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes of the ids of ``a`` then ``b`` in one shared space, and the id strings."""
    if a.dtype == b.dtype or (a.dtype.kind in "OUT" and b.dtype.kind in "OUT"):
        both = pd.concat([a, b], ignore_index=True)
    else:
        both = pd.concat([a.astype(object), b.astype(object)], ignore_index=True)
    codes, uniques = pd.factorize(both)
    names = _id_strings(uniques)
    if np.asarray(uniques).dtype == object and pd.api.types.infer_dtype(uniques, skipna=False) != "string":
        recodes, names2 = pd.factorize(names)
        if len(names2) < len(names):  # e.g. 301 and "301" in the same column
            codes = recodes[codes]
            names = np.asarray(names2, dtype=object)
    return codes.astype(np.int64, copy=False), names


def _group_codes(run: pd.DataFrame, groups: list[str]) -> tuple[np.ndarray, pd.DataFrame]:
    if len(groups) == 1:
        codes, uniques = pd.factorize(run[groups[0]], sort=True)
        gframe = pd.DataFrame({groups[0]: np.asarray(uniques)})
    else:
        index = pd.MultiIndex.from_frame(run[groups])
        codes, uniques = pd.factorize(index, sort=True)
        gframe = uniques.to_frame(index=False)
    if (codes < 0).any():
        bad = codes < 0
        raise InputError(f"columns {groups}: missing values in {describe_rows(bad, run.index)}")
    return codes.astype(np.int64), gframe


def _rank_order(unit: np.ndarray, score: np.ndarray, doc: np.ndarray, dnames: np.ndarray) -> np.ndarray:
    """Permutation sorting by unit, score descending, then docid descending (strcmp)."""
    n = len(unit)
    by_score = np.argsort(-score, kind="stable")
    score_rank = np.empty(n, dtype=np.int64)
    score_rank[by_score] = np.arange(n)
    del by_score
    order = np.argsort(unit * n + score_rank, kind="stable")
    del score_rank
    u, s = unit[order], score[order]
    tied = np.zeros(n, dtype=bool)
    same = (u[1:] == u[:-1]) & (s[1:] == s[:-1])
    tied[1:] |= same
    tied[:-1] |= same
    if not tied.any():
        return order
    idx = np.flatnonzero(tied)
    group = np.cumsum(np.concatenate([[True], ~same]))[idx]
    names = np.asarray(dnames, dtype=object)[doc[order[idx]]]
    _, name_rank = np.unique(names.astype(str), return_inverse=True)
    sub = np.lexsort((-name_rank.astype(np.int64), group))
    order[idx] = order[idx][sub]
    return order
