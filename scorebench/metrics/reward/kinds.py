"""Table kinds of reward models and LLM judges: ``preferences`` and ``judgments``.

``preferences`` — one row per (reward model, prompt): the reward model's score of the
chosen (preferred) response and of the rejected one(s).

=======================  ===========================================================
column                   meaning
=======================  ===========================================================
``system``               the reward model (grouping column)
``id``                   the prompt (optional; pairs rows across reward models)
``subset``               the prompt's subset (RewardBench subsets such as
                         ``mt-bench-hard``); falls back to ``task`` when absent (the
                         RewardBench reader writes the subset there)
``score_chosen``         reward of the chosen response
``score_rejected``       reward of the rejected response; several rejected responses
                         (RewardBench 2's best-of-4) as ``score_rejected_1``,
                         ``score_rejected_2``, ... (``score_rejected`` optional then)
``margin``               instead of the two scores: chosen minus rejected reward
``len_chosen``,          lengths of the two responses (optional, for length-bias
``len_rejected``         diagnostics); or the texts ``chosen`` and ``rejected``, whose
                         lengths in characters are used
=======================  ===========================================================

``judgments`` — one row per pairwise judgment played in both orders (MT-bench's
``model_judgment/*_pair.jsonl``): ``question_id``, ``model_1``, ``model_2``, ``g1_winner``
(game 1 shows ``model_1`` first), ``g2_winner`` (game 2 shows ``model_2`` first), each in
{``model_1``, ``model_2``, ``tie``} (``tie (bothbad)`` counts as a tie; ``error`` is a
missing verdict), optional ``turn`` and answer lengths ``len_1``/``len_2``. The judge is
the system: name it ``system`` or evaluate ``by="judge"``.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.core.tables import Column, Inputs, numeric_column, register_kind, start_table, unit_frame
from scorebench.core.validation import describe_rows, show_value

__all__ = ["extract_preferences", "extract_judgments", "WINNER_CODES"]

_REJECTED = re.compile(r"^score_rejected(?:_(\d+))?$")
_TEXT = ("chosen", "rejected", "prompt")
WINNER_CODES = {"model_1": 1.0, "model_2": -1.0, "tie": 0.0, "tie (bothbad)": 0.0}


def _rejected_columns(df: pd.DataFrame) -> list[str]:
    cols = [c for c in df.columns if isinstance(c, str) and _REJECTED.match(c)]
    return sorted(cols, key=lambda c: int(_REJECTED.match(c).group(1) or 0))


def _subset_codes(df: pd.DataFrame) -> tuple[np.ndarray, tuple[str, ...]]:
    column = "subset" if "subset" in df.columns else ("task" if "task" in df.columns else None)
    if column is None:
        return np.zeros(len(df), dtype=np.int64), ("all",)
    labels = df[column]
    missing = labels.isna().to_numpy()
    if missing.any():
        raise InputError(f"column {column!r}: missing subset names in {describe_rows(missing, df.index)}")
    codes, names = pd.factorize(labels.astype(str), sort=True)
    return codes.astype(np.int64), tuple(names)


def _lengths(df: pd.DataFrame, nan_ok: bool) -> dict[str, np.ndarray]:
    if "len_chosen" in df.columns and "len_rejected" in df.columns:
        out = {"len_chosen": numeric_column(df, "len_chosen", nan_ok=nan_ok),
               "len_rejected": numeric_column(df, "len_rejected", nan_ok=nan_ok)}
        for name, values in out.items():
            bad = values < 0
            if bad.any():
                raise InputError(f"column {name!r}: negative length {show_value(values[bad][0])} in "
                                 f"{describe_rows(bad, df.index)}; expected lengths >= 0")
        return out
    if "chosen" in df.columns and "rejected" in df.columns:
        out = {}
        for name in ("chosen", "rejected"):
            text = df[name]
            bad = text.isna().to_numpy() | ~text.map(lambda v: isinstance(v, str)).to_numpy()
            if bad.any():
                raise InputError(f"column {name!r}: expected response texts, got "
                                 f"{show_value(text.to_numpy()[bad][0])} in {describe_rows(bad, df.index)}")
            out[f"len_{name}"] = text.str.len().to_numpy(dtype=np.float64)
        return out
    return {}


@register_kind("preferences", columns=(
    Column("score_chosen", "number", "the reward of the chosen response", required=False),
    Column("score_rejected", "number", "the reward of the rejected response (or score_rejected_1, "
           "score_rejected_2, ... for best-of-N)", required=False, pattern=r"score_rejected(?:_\d+)?"),
    Column("margin", "number", "score_chosen - score_rejected, instead of both", required=False),
    Column("subset", "label", "the benchmark subset of the prompt", required=False),
    Column("len_chosen", "number", "response lengths for length-controlled metrics (also len_rejected, or "
           "the texts chosen/rejected)", required=False)))
def extract_preferences(df: pd.DataFrame, *, nan_policy: str = "raise") -> Inputs:
    """Reward-model scores of the chosen and the rejected response(s) of each prompt."""
    rejected = _rejected_columns(df) if isinstance(df, pd.DataFrame) else []
    if isinstance(df, pd.DataFrame) and "score_chosen" not in df.columns and "margin" in df.columns:
        if rejected:
            raise InputError("kind 'preferences': give either margin or score_chosen with score_rejected, not both")
        df, key = start_table(df, "preferences", ["margin"], nan_policy)
        chosen = numeric_column(df, "margin", nan_ok=nan_policy == "propagate")
        rejected_values = np.zeros((len(df), 1))
    else:
        if isinstance(df, pd.DataFrame) and not rejected:
            raise InputError("kind 'preferences': expected score_chosen and score_rejected columns (or "
                             "score_rejected_1, score_rejected_2, ... for best-of-N, or a margin column); "
                             f"the table has: {', '.join(map(str, list(df.columns)[:12]))}")
        df, key = start_table(df, "preferences", ["score_chosen", *rejected], nan_policy)
        nan_ok = nan_policy == "propagate"
        chosen = numeric_column(df, "score_chosen", nan_ok=nan_ok)
        rejected_values = np.column_stack([numeric_column(df, c, nan_ok=nan_ok) for c in rejected])
    codes, names = _subset_codes(df)
    arrays = {"chosen": chosen, "rejected": rejected_values, "subset": codes,
              **_lengths(df, nan_policy == "propagate")}
    frame = unit_frame(df.drop(columns=[c for c in _TEXT if c in df.columns]), key)
    return Inputs(frame, arrays, {"subsets": names}, key=key)


def winner_codes(values: pd.Series, column: str, nan_ok: bool) -> np.ndarray:
    """``model_1`` -> 1, ``model_2`` -> -1, ``tie`` -> 0; ``error``/missing -> NaN (refused unless ``nan_ok``)."""
    text = values.astype("string").str.strip().str.lower()
    codes = text.map(WINNER_CODES).to_numpy(dtype=np.float64, na_value=np.nan)
    missing = text.isna().to_numpy() | (text == "error").fillna(False).to_numpy()
    unknown = np.isnan(codes) & ~missing
    if unknown.any():
        raise InputError(f"column {column!r}: verdict {show_value(values.to_numpy()[unknown][0])} in "
                         f"{describe_rows(unknown, values.index)}; expected model_1, model_2 or tie")
    if missing.any() and not nan_ok:
        raise InputError(f"column {column!r}: missing or 'error' verdicts in {describe_rows(missing, values.index)}; "
                         "expected model_1, model_2 or tie (use nan_policy='omit' to drop such rows)")
    return codes


@register_kind("judgments", columns=(
    Column("question_id", "label", "the question"), Column("model_1", "label", "the first model"),
    Column("model_2", "label", "the second model"),
    Column("g1_winner", "label", "the verdict with model_1 shown first: model_1, model_2 or tie"),
    Column("g2_winner", "label", "the verdict with the order swapped"),
    Column("turn", "label", "the turn of a multi-turn question", required=False),
    Column("len_1", "number", "answer lengths for style control (also len_2)", required=False)))
def extract_judgments(df: pd.DataFrame, *, nan_policy: str = "raise") -> Inputs:
    """Pairwise LLM-judge verdicts with both presentation orders (MT-bench pair judgments)."""
    needed = ["question_id", "model_1", "model_2", "g1_winner", "g2_winner"]
    if isinstance(df, pd.DataFrame) and nan_policy == "omit" and {"g1_winner", "g2_winner"} <= set(df.columns):
        keep = ~(df["g1_winner"].astype("string").str.strip().str.lower().eq("error").fillna(False)
                 | df["g2_winner"].astype("string").str.strip().str.lower().eq("error").fillna(False))
        df = df.loc[keep.to_numpy()]
    df, key = start_table(df, "judgments", needed, nan_policy)
    same = (df["model_1"].astype(str) == df["model_2"].astype(str)).to_numpy()
    if same.any():
        raise InputError(f"columns 'model_1'/'model_2': a model judged against itself in {describe_rows(same, df.index)}")
    nan_ok = nan_policy == "propagate"
    arrays = {"g1": winner_codes(df["g1_winner"], "g1_winner", nan_ok),
              "g2": winner_codes(df["g2_winner"], "g2_winner", nan_ok)}
    if "len_1" in df.columns and "len_2" in df.columns:
        arrays["len_1"] = numeric_column(df, "len_1", nan_ok=nan_ok)
        arrays["len_2"] = numeric_column(df, "len_2", nan_ok=nan_ok)
    frame = unit_frame(df.drop(columns=["g1_winner", "g2_winner"]), key)
    for column in ("question_id", "turn"):  # labels even when numeric: they identify the comparison
        if column in df.columns and column not in frame.columns:
            frame[column] = df[column].to_numpy()
    return Inputs(frame, arrays, key=key)
