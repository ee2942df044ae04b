"""The ``judged`` table kind: a judge's label on every row, a human label on a subset.

One row per (system, task, item): ``judge`` is the LLM judge's score (a 0/1 verdict, a
{0, 0.5, 1} preference, or any number), ``human`` the gold label where a person labelled
the row and NaN elsewhere; ``stratum`` optionally names the row's stratum (for stratified
PPI). The labelled rows are assumed a random subset of the rows (within each stratum).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.core.tables import Column, Inputs, label_text, numeric_column, register_kind, start_table, unit_frame

__all__ = ["extract_judged", "KIND"]

KIND = "judged"


@register_kind(KIND, columns=(Column("judge", "number", "the judge's score of the row (every row)"),
                              Column("human", "number", "the human (gold) score; NaN where the row is unlabelled"),
                              Column("stratum", "label", "the row's stratum, for stratified PPI", required=False),
                              Column("id", "label", "the item; pairs systems", required=False)))
def extract_judged(df: pd.DataFrame, *, nan_policy: str = "raise") -> Inputs:
    """A judge's score on every row and a human score on a random subset (PPI, Rogan-Gladen)."""
    df, key = start_table(df, KIND, ["judge"], nan_policy)
    judge = numeric_column(df, "judge", nan_ok=nan_policy == "propagate")
    human = numeric_column(df, "human", nan_ok=True)
    if np.isinf(human).any():
        raise InputError("column 'human': infinite values; expected a number or NaN (unlabelled)")
    arrays = {"judge": judge, "human": human}
    if "stratum" in df.columns:
        if df["stratum"].isna().any():
            raise InputError("column 'stratum': missing stratum labels; every row needs one")
        arrays["stratum"] = pd.factorize(label_text(df["stratum"]).astype(str), sort=True)[0].astype(np.float64)
    return Inputs(unit_frame(df, key), arrays, key=key)
