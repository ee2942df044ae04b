"""The ``attempts`` table kind: one row per (system, task, item, attempt) of a repeated-sampling run.

(``samples`` is taken by per-sample harness scores, :mod:`scorebench.metrics.sample_scores`.)
The unit is the item: its attempts become one row of an ``(items, n_max)`` outcome array
(left-packed, NaN-padded where an item has fewer attempts), and of an answer-code array when
the table has an ``answer`` column (equal extracted answers of one item share a code). The
kind declares those arrays *nested* (its ``nested`` hook, :class:`~scorebench.core.tables.NestedUnits`):
the pandas engine's default
bootstrap then resamples items and, within each drawn item, its attempts (two-level
bootstrap, :func:`scorebench.core.stats.two_level_draws`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.core.tables import (GROUP_COLUMNS, Column, Inputs, NestedUnits, declared_column, label_text, register_kind,
                                    require_columns)
from scorebench.core.validation import check_choice, describe_rows

__all__ = ["extract_attempts", "KIND", "NESTED"]

KIND = "attempts"
#: The per-item arrays whose second axis holds the item's attempts (resampled within items).
NESTED = ("outcomes", "answers")


@register_kind(KIND, columns=(Column("item", "label", "the item (question) each attempt answers; pairs systems",
                                     aliases=("id",)),
                              Column("correct", "binary", "1 = the attempt is correct, 0 = wrong"),
                              Column("attempt", "label", "the attempt's number within its item (checked unique)",
                                     required=False),
                              Column("answer", "label", "the extracted final answer, for majority voting (maj@k)",
                                     required=False)),
               unit_column="item", nested=NestedUnits(NESTED, "n_attempts"))
def extract_attempts(df: pd.DataFrame, *, nan_policy: str = "raise") -> Inputs:
    """Repeated attempts per item (pass@k, pass^k, maj@k, G-Pass@k, Bayes@N)."""
    check_choice(nan_policy, "nan_policy", ("raise", "omit", "propagate"))
    if "item" not in df.columns:
        df = df.rename(columns={"id": "item"})
    require_columns(df, ["item", "correct"], KIND)
    if nan_policy == "omit":
        df = df.loc[df["correct"].notna().to_numpy()]
    if len(df) == 0:
        raise InputError(f"kind {KIND!r}: the table has no rows to evaluate")
    missing = df["item"].isna().to_numpy()
    if missing.any():
        raise InputError(f"column 'item': missing item labels in {describe_rows(missing, df.index)}")
    groups = [c for c in GROUP_COLUMNS if c in df.columns]
    keys = [*groups, "item"]
    # units and attempts in label order, so the bootstrap does not depend on the order of the rows
    order = pd.DataFrame({c: label_text(df[c]).astype(str) for c in [*keys, "attempt"] if c in df.columns})
    df = df.iloc[np.lexsort([order[c].to_numpy() for c in reversed(order.columns)])]
    correct = declared_column(df, KIND, "correct", nan_policy)
    labelled = df[keys].assign(item=label_text(df["item"]).astype(str))
    unit = labelled.groupby(keys, sort=False, dropna=False).ngroup().to_numpy()
    slot = labelled.groupby(keys, sort=False, dropna=False).cumcount().to_numpy()
    if "attempt" in df.columns:
        dup = pd.concat([labelled, label_text(df["attempt"]).rename("attempt")], axis=1).duplicated(keep=False)
        if dup.to_numpy().any():
            raise InputError(f"column 'attempt': the same ({', '.join(keys)}, attempt) appears twice in "
                             f"{describe_rows(dup.to_numpy(), df.index)}; expected each attempt once")
    m, width = int(unit.max()) + 1, int(slot.max()) + 1
    outcomes = np.full((m, width), np.nan)
    outcomes[unit, slot] = correct
    sizes = np.bincount(unit, minlength=m)
    # nan_policy="propagate": an item with a missing outcome has no estimate (NaN)
    outcomes[(np.isnan(outcomes) & (np.arange(width)[None, :] < sizes[:, None])).any(axis=1)] = np.nan
    arrays = {"outcomes": outcomes, "n_attempts": sizes.astype(np.int64)}
    if "answer" in df.columns:
        arrays["answers"] = _answer_codes(df, labelled, unit, slot, correct, (m, width))
    first = np.unique(unit, return_index=True)[1]
    frame = labelled.iloc[first].reset_index(drop=True)
    for column in df.columns:  # other labels constant within an item (e.g. a dataset, a cluster) stay groupable
        if column not in frame.columns and column not in ("correct", "attempt", "answer") \
                and not pd.api.types.is_numeric_dtype(df[column]) \
                and (df[column].groupby(unit).nunique(dropna=False) <= 1).all():
            frame[column] = df[column].to_numpy()[first]
    return Inputs(frame, arrays, {}, key="item")


def _answer_codes(df: pd.DataFrame, labelled: pd.DataFrame, unit: np.ndarray, slot: np.ndarray,
                  correct: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """Answer codes per attempt (-1 padding); one answer of one item must be right or wrong throughout."""
    text = label_text(df["answer"]).astype(str).where(df["answer"].notna(), None)
    codes = pd.factorize(text, use_na_sentinel=True)[0].astype(np.int64)
    # a missing answer is its own (wrong or right) vote: a unique code per attempt
    lone = codes < 0
    codes[lone] = codes.max(initial=-1) + 1 + np.arange(int(lone.sum()))
    clash = pd.Series(correct).groupby([unit, codes]).nunique(dropna=True) > 1
    if clash.any():
        u, code = clash[clash].index[0]
        rows = (unit == u) & (codes == code)
        raise InputError(f"column 'answer': answer {text[rows].iloc[0]!r} of item {labelled['item'][rows].iloc[0]!r} "
                         f"is marked both correct and wrong in {describe_rows(rows, df.index)}; expected one "
                         "correctness per extracted answer")
    out = np.full(shape, -1, dtype=np.int64)
    out[unit, slot] = codes
    return out
