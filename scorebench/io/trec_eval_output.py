"""Scores as ``trec_eval -q`` prints them, so scripts that parse trec_eval's output can switch.

One line per (query, measure) and then per measure over all queries (query id ``all``),
each ``printf("%-22s\\t%s\\t%6.4f\\n", measure, qid, value)`` as trec_eval 10.0's
``meas_print_single.c`` / ``meas_print_final.c`` write them; counts (``num_ret``,
``num_rel``, ``num_rel_ret``, ``num_q``) print as integers and their ``all`` value is the
*sum* over queries, as trec_eval's (scorebench's table value is the mean per query).
Measures take trec_eval's names where one exists (``ndcg@10`` -> ``ndcg_cut_10``, ``mrr``
-> ``recip_rank``, ``p@5`` -> ``P_5``), the intent-aware measures ndeval's (``alpha_ndcg@20``
-> ``alpha-nDCG@20``, ``s_recall@5`` -> ``strec@5``, ``ap_ia`` -> ``MAP-IA``); others keep
their scorebench name. Each system
(the ``system`` column, trec_eval's run tag) is a block ending with its ``runid`` and
``num_q`` lines.

Totals are format-only on purpose. In scorebench's own output every ranking metric is the
mean of per-query contributions with a query-bootstrap interval, so ``num_ret``, ``num_rel``
and ``num_rel_ret`` (and the ``prefs_num_prefs_*`` counts) are means per query there, and the
trec_eval total is ``value * n``; trec_eval's ``num_q`` is the ``n`` column. Printing sums in
the ``value`` column of the default output would make these the only rows whose value is
not a per-query mean and whose interval could not be read on the same scale.

The format is whitespace-separated, so ids that cannot be written unambiguously are
refused rather than written: a query id or run tag that is empty or contains whitespace
(a tab or newline would forge extra lines, e.g. a fake ``map all 0.9999``), and a real query
named ``all`` (trec_eval's name of the summary lines; :func:`scorebench.evaluate` refuses it
in per-unit output too).

Reference: trec_eval 10.0, NIST (https://github.com/usnistgov/trec_eval), README and
``meas_print_single.c``, ``meas_print_final.c``.
"""

from __future__ import annotations

import math
import os
import re

import pandas as pd

from scorebench.core.errors import InputError
from scorebench.io.atomic import atomic_write, check_writable, text_writer

__all__ = ["trec_eval_name", "format_trec_eval", "write_trec_eval"]

#: scorebench base names (without the ``@`` value) -> trec_eval measure names.
_PLAIN = {
    "map": "map", "ndcg": "ndcg", "mrr": "recip_rank", "p": "set_P", "r": "set_recall", "rprec": "Rprec",
    "bpref": "bpref", "num_ret": "num_ret", "num_rel": "num_rel", "num_rel_ret": "num_rel_ret",
    "11pt_avg": "11pt_avg", "infap": "infAP", "gm_map": "gm_map", "gm_bpref": "gm_bpref",
    "ndcg_rel": "ndcg_rel", "rndcg": "Rndcg", "g": "G", "bin_g": "binG", "set_f": "set_F",
    "set_map": "set_map", "set_relative_p": "set_relative_P", "utility": "utility",
    # the diversity kind: ndeval's names
    "nrbp": "NRBP", "nnrbp": "nNRBP", "ap_ia": "MAP-IA",
}
#: parameterised names: scorebench base -> (trec_eval stem, how the value prints)
_CUT = {
    "ndcg": "ndcg_cut_{}", "map": "map_cut_{}", "p": "P_{}", "r": "recall_{}", "success": "success_{}",
    "relative_p": "relative_P_{}", "unj": "unj_{}",
    "alpha_ndcg": "alpha-nDCG@{}", "err_ia": "ERR-IA@{}", "nerr_ia": "nERR-IA@{}", "p_ia": "P-IA@{}",
    "s_recall": "strec@{}",
}
_FLOAT_CUT = {"rprec_mult": "Rprec_mult_{:.2f}", "iprec_at_recall": "iprec_at_recall_{:.2f}"}
_COUNTS = {"num_ret", "num_rel", "num_rel_ret", "num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful",
           "prefs_num_prefs_ful_ret"}
_NAME = re.compile(r"^([A-Za-z0-9_]+)(?:@([^()]+))?(\(.*\))?$")


def trec_eval_name(metric: str) -> str:
    """trec_eval's name of a resolved scorebench metric name (itself when trec_eval has none).

    Examples
    --------
    >>> [trec_eval_name(m) for m in ["ndcg@10", "mrr", "rprec_mult@0.2", "infap", "rbp"]]
    ['ndcg_cut_10', 'recip_rank', 'Rprec_mult_0.20', 'infAP', 'rbp']
    """
    match = _NAME.match(metric)
    if match is None or match.group(3):  # variants with non-default parameters keep their name
        return metric
    base, at = match.group(1), match.group(2)
    if at is None:
        return _PLAIN.get(base, metric)
    try:
        if base in _CUT and float(at).is_integer():
            return _CUT[base].format(int(float(at)))
        if base in _FLOAT_CUT:
            return _FLOAT_CUT[base].format(float(at))
    except ValueError:
        pass
    return metric


_UNSAFE = re.compile(r"\s")


def _check_id(value: object, what: str) -> str:
    """``value`` as text, refused when the whitespace-separated format cannot hold it unambiguously."""
    text = str(value)
    if not text or _UNSAFE.search(text):
        raise InputError(f"trec_eval output: {what} {text!r} is empty or contains whitespace (a space, tab or "
                         "newline would shift fields or forge lines); rename it")
    return text


def _line(measure: str, qid: str, value: float) -> str:
    if measure in _COUNTS and math.isfinite(value):
        return f"{measure:<22}\t{qid}\t{int(round(value))}"
    return f"{measure:<22}\t{qid}\t{value:6.4f}"


def format_trec_eval(scores: pd.DataFrame, *, query: str = "qid", system: str = "system") -> str:
    r"""Render :func:`scorebench.evaluate` output of a ranking table as ``trec_eval -q`` text.

    Parameters
    ----------
    scores : DataFrame
        Output of ``evaluate(..., kind="ranking")``, with ``per_unit=True`` for the per-query
        lines (without it only the ``all`` lines are written).
    query, system : str
        The query-id and run-tag columns.

    Returns
    -------
    str
        The text, one line per value, newline-terminated.

    Examples
    --------
    >>> import pandas as pd
    >>> s = pd.DataFrame({"system": ["r", "r", "r"], "qid": ["1", "2", "all"], "metric": ["map"] * 3,
    ...                   "value": [0.5, 1.0, 0.75], "n": [1, 1, 2]})
    >>> format_trec_eval(s).splitlines()
    ['map                   \t1\t0.5000', 'map                   \t2\t1.0000', 'runid                 \tall\tr', 'num_q                 \tall\t2', 'map                   \tall\t0.7500']
    """
    missing = [c for c in ("metric", "value") if c not in scores.columns]
    if missing:
        raise InputError(f"trec_eval output needs the columns {missing} of evaluate()'s scores")
    other = [c for c in scores.columns if c not in (query, system, "metric", "value", "ci_low", "ci_high", "n")]
    if other:
        raise InputError(f"trec_eval output writes one run per system; group only by {system!r} "
                         f"(found grouping columns {other})")
    frame = scores.copy()
    if query not in frame.columns:
        frame[query] = "all"
    if system not in frame.columns:
        frame[system] = None
    lines: list[str] = []
    for tag, block in frame.groupby(system, sort=False, dropna=False):
        lines += _run_lines(tag, block, query)
    return "".join(line + "\n" for line in lines)


def write_trec_eval(scores: pd.DataFrame, path: str | os.PathLike, *, query: str = "qid",
                    system: str = "system") -> str:
    """Write :func:`format_trec_eval`'s text to ``path`` atomically; returns the text.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> t = pd.DataFrame({"system": ["bm25"], "qid": ["1"], "metric": ["map"], "value": [0.5], "n": [1]})
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
    >>> write_trec_eval(t, out) == out.read_text()
    True
    """
    text = format_trec_eval(scores, query=query, system=system)
    atomic_write({check_writable(path): text_writer(text)})
    return text


def _run_lines(tag: object, block: pd.DataFrame, query: str) -> list[str]:
    """One run's lines: per query, then ``runid``, ``num_q`` and the ``all`` values."""
    lines: list[str] = []
    per_query = block[block[query].astype(str) != "all"]
    summary = block[block[query].astype(str) == "all"]
    if summary["metric"].duplicated().any():
        raise InputError("trec_eval output: a query is named 'all', trec_eval's name of the summary lines "
                         f"(two 'all' values of {summary['metric'][summary['metric'].duplicated()].iloc[0]!r}); "
                         "rename that query")
    for metric in dict.fromkeys(block["metric"]):
        _check_id(trec_eval_name(str(metric)), "measure")
    for qid, rows in per_query.groupby(query, sort=False):
        qid = _check_id(qid, "query id")
        lines += [_line(trec_eval_name(m), qid, float(v)) for m, v in zip(rows["metric"], rows["value"])]
    if tag is not None and not (isinstance(tag, float) and math.isnan(tag)):
        lines.append(f"{'runid':<22}\tall\t{_check_id(tag, 'run tag')}")
    n_q = int(summary["n"].max()) if "n" in summary.columns and len(summary) else per_query[query].nunique()
    lines.append(_line("num_q", "all", float(n_q)))
    for metric, value, n in zip(summary["metric"], summary["value"],
                                summary["n"] if "n" in summary.columns else [n_q] * len(summary)):
        name = trec_eval_name(metric)
        total = float(value) * float(n) if name in _COUNTS else float(value)  # trec_eval sums counts
        lines.append(_line(name, "all", total))
    return lines
