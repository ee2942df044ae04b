r"""Per-sample scores a harness already computed (lm-evaluation-harness ``samples_*.jsonl``).

The ``samples`` kind: one row per (system, task, item ``id``) and one numeric column per
score (``acc,none``, ``exact_match,strict-match``: the harness's ``metric,filter`` names).
``sample_mean@<column>`` is the mean of a column, so :func:`scorebench.evaluate` puts a
bootstrap interval on the harness's headline number and :func:`scorebench.compare` runs
paired tests on it, rows of two systems paired by ``id``:

.. math:: \bar s = \frac{1}{n}\sum_{i=1}^{n} s_i

Its direction is not known to the registry (accuracy is higher-better, perplexity is not):
the harness's ``higher_is_better`` travels in the table's ``attrs``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.core.registry import register
from scorebench.core.table_schema import Option
from scorebench.core.tables import GROUP_COLUMNS, Column, Inputs, numeric_column, register_kind, start_table, unit_frame

__all__ = ["extract_samples", "sample_mean"]

_KIND = "samples"


@register_kind(_KIND, columns=(Column("id", "label", "the item each row scores, e.g. lm-eval's doc_hash; pairs "
                                     "systems"),
                              Column("<score>", "number", "one column per per-sample score (e.g. 'acc,none'); NaN "
                                     "where a task lacks that score", required=False)))
def extract_samples(df: pd.DataFrame, *, nan_policy: str = "raise") -> Inputs:
    """Per-sample scores computed by a harness, one numeric column per score."""
    df, key = start_table(df, _KIND, [], nan_policy)
    columns = [c for c in df.columns if c not in GROUP_COLUMNS and c != key
               and pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c])]
    if not columns:
        raise InputError(f"kind {_KIND!r}: no numeric score column besides {list(GROUP_COLUMNS)} and 'id'")
    # NaN is legitimate here (a task without that score); sample_mean refuses it for its own column.
    arrays = {c: numeric_column(df, c, nan_ok=True) for c in columns}
    return Inputs(unit_frame(df, key), arrays, key=key)


def _sample_mean_table(arrays: Mapping[str, Any], *, column: str | None = None) -> np.ndarray:
    if column is None:
        raise InputError("sample_mean needs the score column, e.g. sample_mean@acc,none")
    if column not in arrays:
        raise InputError(f"sample_mean@{column}: no numeric column {column!r} in the table "
                         f"(score columns: {sorted(k for k in arrays if isinstance(k, str))})")
    values = np.asarray(arrays[column], dtype=np.float64)
    if np.isnan(values).any():
        raise InputError(f"sample_mean@{column}: {int(np.isnan(values).sum())} row(s) have no {column!r} value "
                         "(a task without that score?); evaluate the tasks that have it (evaluate per task)")
    return values


@register("sample_mean@column", family="harness", kind=_KIND, higher_is_better=None,
          params={"column": Option("column", str, None, "the score column to average")},
          table_fn=_sample_mean_table,
          citation="Gao et al. (2024), The Language Model Evaluation Harness (lm-evaluation-harness), Zenodo",
          tested_against=('statsmodels', 1e-10))
def sample_mean(values: np.ndarray) -> np.ndarray:
    """Per-sample scores as contributions: their mean is the harness's value.

    Examples
    --------
    >>> sample_mean(np.array([1.0, 0.0, 1.0])).mean()
    np.float64(0.6666666666666666)
    """
    return np.asarray(values, dtype=np.float64)
