"""The ranking kind's ``complete_units`` hook: trec_eval ``-c`` on a partitioned engine.

With ``complete=True`` a query judged in the qrels but absent from a group's run counts
(nothing retrieved: most measures are 0, but ``num_rel`` is the query's count of relevant
documents). A partition sees only some queries, so a partitioned engine extracts each
partition with ``complete=False``, collects the queries each group retrieved, and after
merging asks this hook for the units of the queries each group lacks; they are scored by
the kind and the metrics themselves, as the in-memory engine scores them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.groups import group_labels
from scorebench.core.tables import Inputs, get_kind, label_text

__all__ = ["complete_units", "missing_units"]

_PLACEHOLDER = "\x00scorebench-placeholder"  # a query id no qrels holds


def complete_units(options: Mapping[str, Any]) -> tuple[dict[str, Any], Any] | None:
    """``None`` unless ``complete=True``; else the options for each partition (not complete)
    and the function giving the missing units (:func:`missing_units` with these options).

    Examples
    --------
    >>> complete_units({"complete": False}) is None
    True
    >>> complete_units({"complete": True, "qrels": None})[0]
    {'complete': False, 'qrels': None}
    """
    if not options.get("complete"):
        return None
    return {**options, "complete": False}, partial(missing_units, dict(options))


def missing_units(options: Mapping[str, Any], seen: Mapping[tuple, set] | None, by_cols: Sequence[str],
                  nan_policy: str) -> Inputs | None:
    """The units of the queries judged in the qrels that each group's run lacks.

    ``seen`` maps each group (its ``by`` values, as the engine's partials key them) to the
    query ids it retrieved. The kind extracts, with ``complete=True``, a run holding one
    placeholder query per group against the qrels of the missing queries; the placeholder
    and the queries a group did retrieve are dropped. ``None`` when nothing is missing.
    """
    qrels = options.get("qrels")
    if qrels is None or seen is None:
        return None
    qids = qrels["qid"].astype(str).unique()
    judged = set(qids.compute() if hasattr(qids, "compute") else qids)
    missing = {key: judged - units for key, units in seen.items()}
    wanted = sorted(set().union(*missing.values()))
    if not wanted:
        return None
    rows = qrels[qrels["qid"].astype(str).isin(wanted)]
    rows = rows.compute() if hasattr(rows, "compute") else rows
    rows = rows[["qid", "docid", "relevance"]].assign(qid=lambda f: label_text(f["qid"]).astype(str))
    placeholder = pd.DataFrame({"qid": [_PLACEHOLDER], "docid": [_PLACEHOLDER], "relevance": [0]})
    run = pd.DataFrame([{**dict(zip(by_cols, key)), "qid": _PLACEHOLDER, "docid": _PLACEHOLDER, "score": 0.0}
                        for key in missing])
    extract_options = {**options, "qrels": pd.concat([rows, placeholder], ignore_index=True), "complete": True}
    inputs = get_kind("ranking").extract(run, nan_policy=nan_policy, **extract_options)
    codes, labels = group_labels(inputs.frame, by_cols)
    qid = inputs.frame["qid"].astype(str).to_numpy()
    kept = np.flatnonzero([q in missing.get(labels[c], ()) for q, c in zip(qid, codes)])
    if kept.size == 0:
        return None
    return Inputs(inputs.frame.iloc[kept].reset_index(drop=True), {k: v[kept] for k, v in inputs.arrays.items()},
                  inputs.consts, inputs.key)
