r"""trec_eval's preference measures (``-m all_prefs``) and the ``prefs`` table kind they read.

The kind takes a run (``qid, docid, score``; ``system``, ``task`` optional) and preference
judgments ``qrels=``: a table ``qid, jg, jsg, docid, relevance`` (trec_eval's ``-R prefs``:
within a judgment sub-group ``jsg`` of a judgment group ``jg``, a higher ``relevance`` is
preferred), a table ``qid, jg, docid, relevance`` (``-R qrels_prefs``: each judgment group is
one sub-group), or the path of either file. One unit per (system[, task], qid) judged and
retrieved, as trec_eval without ``-c``. The run is ordered by score descending, ties by
document id *ascending* (``form_prefs_counts.c``'s ``comp_sim_docno``, unlike the other
measures' descending tie order).

With :math:`F` the fulfilled and :math:`P` the possible preferences (:mod:`.prefs_counts`)
and the suffixes *ret* (both documents retrieved), *imp* (implied: one retrieved) and
*notoccur* (neither):

* ``prefs_num_prefs_poss`` :math:`= P_{ret} + P_{imp} + P_{notoccur}`, ``prefs_num_prefs_ful``
  :math:`= F_{ret} + F_{imp}`, ``prefs_num_prefs_ful_ret`` :math:`= F_{ret}` (counts; trec_eval
  prints their sum over queries on the ``all`` line, scorebench's table value is the mean);
* ``prefs_simp`` :math:`= F/P` over all preferences, ``prefs_simp_ret`` over retrieved ones,
  ``prefs_simp_imp`` over retrieved and implied ones;
* ``prefs_pair``, ``prefs_pair_ret``, ``prefs_pair_imp``: the mean over document pairs of the
  fraction of that pair's preferences (over all judgment groups) fulfilled;
* ``prefs_avgjg``, ``prefs_avgjg_ret``, ``prefs_avgjg_imp``: :math:`F/P` per judgment group,
  averaged over groups;
* ``prefs_avgjg_Rnonrel`` (``_ret``): as ``prefs_avgjg`` with the number of non-relevant
  (level 0) documents of each group set to R, its number of relevant ones (bpref-like).

Values are trec_eval 10.0's, quirks included: ``prefs_avgjg*`` is 0 unless the sum over groups
is positive; the ``Rnonrel`` recalculation of a group with more non-relevant than relevant
documents pairs every equivalence class, the non-relevant one included, with the first R
non-relevant documents, and the ``_ret`` variant adds :math:`R_{ret}(R_{ret}-N_{ret})` to the
possible count weighted by all R; a query without preferences scores 0.

Reference: trec_eval 10.0, NIST (https://github.com/usnistgov/trec_eval), ``m_prefs_*.c``,
``form_prefs_counts.c``; its test outputs ``out.test.prefs`` and ``out.test.qrels_prefs``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.core.registry import register
from scorebench.core.tables import Inputs, numeric_column, register_kind, require_columns
from scorebench.metrics.ranking._run_table import RUN_COLUMNS, checked_run, id_frame, judgments_frame, qrels_option
from scorebench.metrics.ranking.prefs_counts import PREFS_MEASURES, query_measures

__all__ = ["extract_prefs", "load_prefs", *PREFS_MEASURES]

_COUNT_MEASURES = ("prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret")


def load_prefs(qrels: Any) -> pd.DataFrame:
    """Preference judgments as ``qid, jg, jsg, docid, relevance`` from a table.

    A table without ``jsg`` is qrels read as prefs (one sub-group per group); one without
    ``jg`` either (its ``iteration`` column, when present, is the group, else one group). A
    file (a trec_eval prefs file, or qrels read as prefs) is read by the evaluation layer
    before the kind runs.
    """
    qrels = judgments_frame(qrels, "prefs", "preference judgments are required (qrels= a DataFrame with qid, jg, "
                            "jsg, docid, relevance, or the path of a trec_eval prefs or qrels file)")
    frame = qrels
    if "jg" not in frame.columns:
        frame = frame.assign(jg=frame["iteration"] if "iteration" in frame.columns else "0")
    if "jsg" not in frame.columns:
        frame = frame.assign(jsg="0")
    return frame


def _judgments(qrels: Any) -> pd.DataFrame:
    frame = load_prefs(qrels)
    require_columns(frame, ["qid", "jg", "jsg", "docid", "relevance"], "prefs (qrels)")
    out = id_frame(frame, ("qid", "jg", "jsg", "docid"), "qrels")
    out["relevance"] = numeric_column(frame, "relevance")
    return out


@register_kind("prefs", columns=RUN_COLUMNS,
               options=(qrels_option("preference judgments: qid, jg, jsg, docid, relevance (trec_eval prefs) or "
                                     "qid, jg, docid, relevance (qrels_prefs)", ("trec_qrels_prefs", "trec_prefs")),),
               unit_column="qid")
def extract_prefs(df: pd.DataFrame, *, nan_policy: str = "raise", qrels: Any = None) -> Inputs:
    """A run judged against preference judgments (trec_eval ``-R prefs``), one unit per query."""
    ids, groups = checked_run(df, "prefs", nan_policy)
    judged = _judgments(qrels)
    by_query = {qid: block for qid, block in judged.groupby("qid", sort=True)}
    ids = ids[ids["qid"].isin(by_query)]
    if len(ids) == 0:
        raise InputError("kind 'prefs': no query of the run has preference judgments")
    ids = ids.sort_values([*groups, "qid", "score", "docid"], ascending=[True] * (len(groups) + 1) + [False, True],
                          kind="stable")
    rows, values = [], []
    for key, block in ids.groupby([*groups, "qid"], sort=True):
        key = key if isinstance(key, tuple) else (key,)
        rows.append(key)
        values.append(query_measures(block["docid"].tolist(), by_query[key[-1]], where=f"query {key[-1]!r}"))
    frame = pd.DataFrame(rows, columns=[*groups, "qid"])
    arrays = {name: np.array([v[name] for v in values], dtype=np.float64) for name in PREFS_MEASURES}
    consts = {"missing_queries_policy": "queries with judgments missing from a run are excluded (trec_eval without -c)"}
    return Inputs(frame, arrays, consts, key="qid")


# --- registered measures -----------------------------------------------------------------------

_TREC = "trec_eval 10.0, NIST (https://github.com/usnistgov/trec_eval) "
_DOCS = {
    "prefs_num_prefs_poss": "Number of possible preferences (retrieved, implied and not occurring).",
    "prefs_num_prefs_ful": "Number of fulfilled preferences (retrieved and implied).",
    "prefs_num_prefs_ful_ret": "Number of fulfilled preferences between two retrieved documents.",
    "prefs_simp": "Fulfilled over possible preferences, a preference neither of whose documents is retrieved "
                  "counting as a failure.",
    "prefs_pair": "Mean over judged document pairs of the fraction of the pair's preferences fulfilled.",
    "prefs_avgjg": "Fulfilled over possible preferences within each judgment group, averaged over groups.",
    "prefs_avgjg_Rnonrel": "prefs_avgjg with each group's number of non-relevant documents set to its number "
                           "of relevant ones R (bpref-like).",
    "prefs_simp_ret": "Fulfilled over possible preferences between two retrieved documents.",
    "prefs_pair_ret": "prefs_pair over the pairs of two retrieved documents.",
    "prefs_avgjg_ret": "prefs_avgjg over the preferences between two retrieved documents.",
    "prefs_avgjg_Rnonrel_ret": "prefs_avgjg_Rnonrel over the preferences between two retrieved documents.",
    "prefs_simp_imp": "Fulfilled over possible preferences with at least one document retrieved.",
    "prefs_pair_imp": "prefs_pair over the pairs with at least one retrieved document.",
    "prefs_avgjg_imp": "prefs_avgjg over the preferences with at least one retrieved document.",
}
#: values in the Examples (d1 > d2 > d3 by one judge; the run ranks d2 above d1, d3 unretrieved):
#: d1 > d2 fails between retrieved documents, d1 > d3 and d2 > d3 are implied and fulfilled
_EXAMPLE = {
    "prefs_num_prefs_poss": "3.", "prefs_num_prefs_ful": "2.", "prefs_num_prefs_ful_ret": "0.",
    "prefs_simp": "0.6667", "prefs_pair": "0.6667", "prefs_avgjg": "0.6667", "prefs_avgjg_Rnonrel": "0.8",
    "prefs_simp_ret": "0.", "prefs_pair_ret": "0.", "prefs_avgjg_ret": "0.", "prefs_avgjg_Rnonrel_ret": "0.8",
    "prefs_simp_imp": "0.6667", "prefs_pair_imp": "0.6667", "prefs_avgjg_imp": "0.6667",
}


def _table_fn(measure: str) -> Callable[..., np.ndarray]:
    def table_fn(arrays: Mapping[str, Any]) -> np.ndarray:
        return np.asarray(arrays[measure], dtype=np.float64)

    table_fn.__name__ = f"{measure}_table"
    return table_fn


def _public(measure: str) -> Callable[..., np.ndarray]:
    def fn(run: pd.DataFrame, qrels: Any) -> np.ndarray:
        return extract_prefs(run, qrels=qrels).arrays[measure]

    fn.__name__ = fn.__qualname__ = measure
    fn.__module__ = __name__
    fn.__doc__ = f"""trec_eval's ``{measure}`` per query. {_DOCS[measure]}

    See :mod:`scorebench.metrics.ranking.prefs_measures` for the definitions.

    Parameters
    ----------
    run : DataFrame
        ``qid, docid, score`` of one run.
    qrels : DataFrame or path
        Preference judgments (see :func:`load_prefs`).

    Returns
    -------
    ndarray
        One value per judged query the run retrieves for, in query-id order.

    Examples
    --------
    >>> import pandas as pd
    >>> prefs = pd.DataFrame({{"qid": "1", "jg": "u", "jsg": "s", "docid": ["d1", "d2", "d3"],
    ...                       "relevance": [2, 1, 0]}})
    >>> run = pd.DataFrame({{"qid": "1", "docid": ["d2", "d1"], "score": [2.0, 1.0]}})
    >>> {measure}(run, prefs).round(4)
    array([{_EXAMPLE[measure]}])
    """
    return fn


# The public functions, one per trec_eval measure (named like the measure).
prefs_simp = _public("prefs_simp")
prefs_simp_ret = _public("prefs_simp_ret")
prefs_simp_imp = _public("prefs_simp_imp")
prefs_pair = _public("prefs_pair")
prefs_pair_ret = _public("prefs_pair_ret")
prefs_pair_imp = _public("prefs_pair_imp")
prefs_avgjg = _public("prefs_avgjg")
prefs_avgjg_ret = _public("prefs_avgjg_ret")
prefs_avgjg_imp = _public("prefs_avgjg_imp")
prefs_avgjg_Rnonrel = _public("prefs_avgjg_Rnonrel")
prefs_avgjg_Rnonrel_ret = _public("prefs_avgjg_Rnonrel_ret")
prefs_num_prefs_poss = _public("prefs_num_prefs_poss")
prefs_num_prefs_ful = _public("prefs_num_prefs_ful")
prefs_num_prefs_ful_ret = _public("prefs_num_prefs_ful_ret")

_TESTED = ("trec_eval 10.0 prefs test outputs (out.test.prefs, out.test.qrels_prefs)", 5e-5)
for _fn in (prefs_simp, prefs_simp_ret, prefs_simp_imp, prefs_pair, prefs_pair_ret, prefs_pair_imp, prefs_avgjg,
            prefs_avgjg_ret, prefs_avgjg_imp, prefs_avgjg_Rnonrel, prefs_avgjg_Rnonrel_ret, prefs_num_prefs_poss,
            prefs_num_prefs_ful, prefs_num_prefs_ful_ret):
    _count = _fn.__name__ in _COUNT_MEASURES
    register(_fn.__name__, core=_fn, family="ranking", kind="prefs",
             higher_is_better=None if _count else True, bounds=(0.0, np.inf) if _count else (0.0, 1.0),
             table_fn=_table_fn(_fn.__name__), citation=_TREC + _fn.__name__ + " (m_" + _fn.__name__ + ".c)",
             tested_against=_TESTED)
del _fn, _count
