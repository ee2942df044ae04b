"""Preference counts of one query, as trec_eval 10.0's ``form_prefs_counts.c`` forms them.

Judgments are preferences between documents: within a judgment sub-group (JSG) of a
judgment group (JG), a document with a higher ``rel_level`` is preferred to one with a lower
level. A JG with one JSG is a set of equivalence classes (ECs) of equal level, every pair of
documents in different ECs a preference (counted once per pair of judgment lines); a JG with
several JSGs is a preference array (PA) closed under transitivity, each document pair counted
once. Judged documents are numbered by retrieved rank first (``0 .. njr - 1``, the judged
documents the run retrieves, in rank order), then the unretrieved ones in document-id order.

A preference A > B is *fulfilled* when A ranks above B; *retrieved* when both are retrieved,
*implied* when one is, *not occurring* when neither is. :func:`query_measures` turns the
counts into the values of the 14 ``prefs_*`` measures, with trec_eval's quirks kept so that
the values agree with it line for line (see :mod:`.prefs_measures`).

Reference: trec_eval 10.0, NIST (https://github.com/usnistgov/trec_eval),
``form_prefs_counts.c`` and ``m_prefs_*.c``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError

__all__ = ["JudgmentGroup", "query_groups", "query_measures", "PREFS_MEASURES"]

PREFS_MEASURES = (
    "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret", "prefs_simp", "prefs_pair",
    "prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret", "prefs_avgjg_ret",
    "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp",
)


@dataclass
class JudgmentGroup:
    """Counts of one JG and what its two ``Rnonrel`` recalculations need."""

    ful_ret: int
    poss_ret: int  # includes the fulfilled ones, as trec_eval's num_prefs_possible_ret
    ful_imp: int
    poss_imp: int
    notoccur: int
    num_rel: int
    num_rel_ret: int
    num_nonrel: int
    num_nonrel_ret: int
    recalc: tuple[int, int] = (0, 0)  # (ful, poss) of prefs_avgjg_Rnonrel when N > R
    recalc_ret: tuple[int, int] = (0, 0)  # the same for prefs_avgjg_Rnonrel_ret


def _ec_group(ranks: np.ndarray, levels: np.ndarray, njr: int, counts: np.ndarray, where: str) -> JudgmentGroup:
    """An equivalence-class JG: ``ranks``/``levels`` sorted by level descending, rank ascending."""
    higher = levels[:, None] > levels[None, :]
    ra, rb = ranks[:, None], ranks[None, :]
    if (higher & (ra == rb)).any():
        raise InputError(f"{where}: a document has two different rel_levels in one judgment sub-group")
    np.add.at(counts, (np.broadcast_to(ra, higher.shape)[higher], np.broadcast_to(rb, higher.shape)[higher]), 1)
    ful, miss = higher & (ra < rb), higher & (ra > rb)
    rel, ret = levels > 0, ranks < njr
    group = JudgmentGroup(
        ful_ret=int((ful & (rb < njr)).sum()), ful_imp=int((ful & (rb >= njr) & (ra < njr)).sum()),
        poss_ret=int((miss & (ra < njr)).sum()), poss_imp=int((miss & (ra >= njr) & (rb < njr)).sum()),
        notoccur=int((ful & (ra >= njr)).sum() + (miss & (rb >= njr)).sum()),
        num_rel=int(rel.sum()), num_rel_ret=int((rel & ret).sum()),
        num_nonrel=int((~rel).sum()), num_nonrel_ret=int((~rel & ret).sum()))
    group.poss_ret += group.ful_ret
    group.poss_imp += group.ful_imp
    ecs = [ranks[levels == level] for level in pd.unique(levels)]
    if group.num_nonrel > group.num_rel:
        group.recalc = _ec_recalc(ecs, ecs[-1][:group.num_rel], njr, retrieved_only=False)
    if group.num_nonrel_ret > group.num_rel_ret:
        group.recalc_ret = _ec_recalc(ecs, ecs[-1][:group.num_rel_ret], njr, retrieved_only=True)
    return group


def _ec_recalc(ecs: list[np.ndarray], nonrel: np.ndarray, njr: int, retrieved_only: bool) -> tuple[int, int]:
    """trec_eval's ``recalculate`` for an EC JG: the preferences among the ECs but the last, and of
    every EC (the last included, as trec_eval does) against the first R documents of the last EC."""
    if retrieved_only:
        ecs, nonrel = [ec[ec < njr] for ec in ecs], nonrel[nonrel < njr]
    pairs = [(ecs[a], ecs[b]) for a in range(len(ecs)) for b in range(a + 1, len(ecs) - 1)]
    pairs += [(ec, nonrel) for ec in ecs]
    ful = poss = 0
    for first, second in pairs:
        p1, p2 = first[:, None], second[None, :]
        hit = (p1 < p2) if retrieved_only else (p1 < p2) & (p1 < njr)
        ful += int(hit.sum())
        poss += int(hit.size - hit.sum())
    return ful, poss + ful


def _closure(pa: np.ndarray, where: str) -> np.ndarray:
    reach = pa | np.eye(len(pa), dtype=bool)
    while True:
        step = (reach.astype(np.int64) @ reach.astype(np.int64)) > 0
        if np.array_equal(step, reach):
            break
        reach = step
    np.fill_diagonal(reach, False)
    if (reach & reach.T).any():
        raise InputError(f"{where}: the preferences of a judgment group are inconsistent (a document is both "
                         "preferred to and below another); put conflicting judges in different groups")
    return reach


def _pa_group(rows: pd.DataFrame, njr: int, nj: int, counts: np.ndarray, where: str) -> JudgmentGroup:
    """A preference-array JG (several JSGs): ``rows`` sorted by jsg, level descending, rank ascending."""
    rel = np.full(nj, -1.0)
    pa = np.zeros((nj, nj), dtype=bool)
    ranks, levels = rows["rank"].to_numpy(), rows["relevance"].to_numpy()
    for rank, level in zip(ranks, levels):  # trec_eval's check, against the level set last
        if (rel[rank] > 0 and level == 0) or (rel[rank] == 0 and level > 0):
            raise InputError(f"{where}: a document has both 0 and non-0 rel_level in one judgment group")
        rel[rank] = level
    for _, sub in rows.groupby("jsg", sort=False):
        r, lev = sub["rank"].to_numpy(), sub["relevance"].to_numpy()
        higher = lev[:, None] > lev[None, :]
        pa[np.broadcast_to(r[:, None], higher.shape)[higher], np.broadcast_to(r[None, :], higher.shape)[higher]] = True
    a = _closure(pa, where)
    counts += a
    ret = slice(0, njr)
    group = JudgmentGroup(
        ful_ret=int(np.triu(a[ret, ret], 1).sum()), poss_ret=int(np.tril(a[ret, ret], -1).sum()),
        ful_imp=int(a[:njr, njr:].sum()), poss_imp=int(a[njr:, :njr].sum()), notoccur=int(a[njr:, njr:].sum()),
        num_rel=int((rel > 0).sum()), num_rel_ret=int((rel[:njr] > 0).sum()),
        num_nonrel=int((rel == 0).sum()), num_nonrel_ret=int((rel[:njr] == 0).sum()))
    group.poss_ret += group.ful_ret
    group.poss_imp += group.ful_imp
    if group.num_nonrel > group.num_rel:
        keep = _kept(rel, nj, group.num_rel)
        b = a & keep[:, None] & keep[None, :]
        ful = int(np.triu(b[:njr, :njr], 1).sum() + b[:njr, njr:].sum())
        group.recalc = (ful, ful + int(np.tril(b[:njr, :njr], -1).sum() + b[njr:, :].sum()))
    if group.num_nonrel_ret > group.num_rel_ret:
        keep = _kept(rel, njr, group.num_rel)  # trec_eval scans the retrieved ones against num_rel
        b = a[:njr, :njr] & keep[:njr, None] & keep[None, :njr]
        ful = int(np.triu(b, 1).sum())
        group.recalc_ret = (ful, ful + int(np.tril(b, -1).sum()))
    return group


def _kept(rel: np.ndarray, scan: int, num_rel: int) -> np.ndarray:
    """Documents kept by ``recalculate``: all but the non-relevant ones from the (num_rel + 1)-th
    non-relevant document found among the first ``scan`` on."""
    seen = np.cumsum(rel[:scan] == 0)
    hits = np.flatnonzero(seen == num_rel + 1)
    first_discarded = int(hits[0]) if hits.size else scan
    return ~((np.arange(len(rel)) >= first_discarded) & (rel == 0))


def query_groups(ranked: list[str], prefs: pd.DataFrame, where: str = "prefs") -> tuple[list[JudgmentGroup],
                                                                                        np.ndarray, int]:
    """The JGs of one query, the summed count array and the number of judged retrieved documents.

    ``ranked``: the run's document ids in rank order; ``prefs``: the query's ``jg, jsg, docid,
    relevance`` rows.
    """
    judged = sorted(set(prefs["docid"]))
    judged_set = set(judged)
    retrieved = [doc for doc in ranked if doc in judged_set]
    njr = len(retrieved)
    rank = {doc: i for i, doc in enumerate(retrieved)}
    for doc in judged:
        rank.setdefault(doc, len(rank))
    nj = len(judged)
    rows = prefs.assign(rank=prefs["docid"].map(rank).astype(np.int64))
    rows = rows.sort_values(["jg", "jsg", "relevance", "rank"], ascending=[True, True, False, True], kind="stable")
    counts = np.zeros((nj, nj), dtype=np.int64)
    groups = []
    for _, block in rows.groupby("jg", sort=True):
        if block["jsg"].nunique() > 1:
            groups.append(_pa_group(block, njr, nj, counts, where))
        else:
            groups.append(_ec_group(block["rank"].to_numpy(), block["relevance"].to_numpy(dtype=np.float64),
                                    njr, counts, where))
    return groups, counts, njr


def _ratio(num: float, den: float) -> float:
    return num / den if den else 0.0


def _avg(parts: list[tuple[float, float]], n_groups: int, *, skip_empty: bool) -> float:
    """trec_eval's average over JGs: sum of ful/poss (a JG with poss = 0 skipped, or 0/0 = NaN
    where trec_eval divides unguarded), over the number of JGs; 0 unless the sum is > 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        total = sum(float(np.float64(f) / np.float64(p)) for f, p in parts if p or not skip_empty)
    return total / n_groups if total > 0 else 0.0


def _pairs(counts: np.ndarray, njr: int) -> tuple[float, float, float]:
    total = counts + counts.T
    upper = np.triu(total > 0, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(upper, counts / np.where(total > 0, total, 1), 0.0)
    rr = (float(ratio[:njr, :njr].sum()), int(upper[:njr, :njr].sum()))
    ru = (float(ratio[:njr, njr:].sum()), int(upper[:njr, njr:].sum()))
    uu = int(upper[njr:, njr:].sum())
    return (_ratio(rr[0] + ru[0], rr[1] + ru[1] + uu), _ratio(rr[0], rr[1]), _ratio(rr[0] + ru[0], rr[1] + ru[1]))


def _rnonrel(g: JudgmentGroup, retrieved: bool) -> tuple[int, int]:
    if retrieved:
        r, n = g.num_rel_ret, g.num_nonrel_ret
        if r >= n:
            return g.ful_ret + g.num_rel_ret * (r - n), g.poss_ret + g.num_rel * (r - n)
        return g.recalc_ret
    r, n = g.num_rel, g.num_nonrel
    if r >= n:
        return (g.ful_ret + g.ful_imp + g.num_rel_ret * (r - n),
                g.poss_ret + g.poss_imp + g.notoccur + g.num_rel * (r - n))
    return g.recalc


def query_measures(ranked: list[str], prefs: pd.DataFrame, where: str = "prefs") -> dict[str, float]:
    """The 14 ``prefs_*`` values of one query (trec_eval ``-m all_prefs``)."""
    groups, counts, njr = query_groups(ranked, prefs, where)
    ful_ret = sum(g.ful_ret for g in groups)
    ful = ful_ret + sum(g.ful_imp for g in groups)
    poss_ret = sum(g.poss_ret for g in groups)
    poss_imp = poss_ret + sum(g.poss_imp for g in groups)
    poss = poss_imp + sum(g.notoccur for g in groups)
    pair, pair_ret, pair_imp = _pairs(counts, njr)
    n = len(groups)
    return {
        "prefs_num_prefs_poss": float(poss), "prefs_num_prefs_ful": float(ful),
        "prefs_num_prefs_ful_ret": float(ful_ret), "prefs_simp": _ratio(ful, poss), "prefs_pair": pair,
        "prefs_avgjg": _avg([(g.ful_ret + g.ful_imp, g.poss_ret + g.poss_imp + g.notoccur) for g in groups], n,
                            skip_empty=True),
        "prefs_avgjg_Rnonrel": _avg([_rnonrel(g, False) for g in groups], n, skip_empty=False),
        "prefs_simp_ret": _ratio(ful_ret, poss_ret), "prefs_pair_ret": pair_ret,
        "prefs_avgjg_ret": _avg([(g.ful_ret, g.poss_ret) for g in groups], n, skip_empty=True),
        "prefs_avgjg_Rnonrel_ret": _avg([_rnonrel(g, True) for g in groups], n, skip_empty=False),
        "prefs_simp_imp": _ratio(ful, poss_imp), "prefs_pair_imp": pair_imp,
        "prefs_avgjg_imp": _avg([(g.ful_ret + g.ful_imp, g.poss_ret + g.poss_imp) for g in groups], n,
                                skip_empty=True),
    }
