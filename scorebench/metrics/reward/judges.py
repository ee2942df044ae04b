r"""LLM-as-a-judge diagnostics: swap consistency, position, length and self-preference bias.

Pairwise judgments are played in both orders (MT-bench): game 1 shows ``model_1`` first,
game 2 shows ``model_2`` first; verdicts are coded +1 (``model_1`` wins), -1 (``model_2``),
0 (tie). For row :math:`i` let :math:`F_i` count the games whose verdict picked the answer
shown *first* and :math:`S_i` those that picked the one shown *second*:
:math:`F_i = [g_1 = +1] + [g_2 = -1]`, :math:`S_i = [g_1 = -1] + [g_2 = +1]`.

* **swap consistency** — :math:`\frac1n\sum_i [g_{1i} = g_{2i}]` (Zheng et al., 2023, Table 2);
* **position bias** — :math:`\sum_i (F_i - S_i) / \sum_i (F_i + S_i)` in [-1, 1], positive
  when the judge favours the first position. Every pair is shown in both orders, so a judge
  without position bias has :math:`E(F_i - S_i) = 0` whatever the answers' quality;
* **length bias** — the same ratio with "picked the longer answer" against "picked the
  shorter answer" over decisive votes on answers of different lengths (``len_1``, ``len_2``);
* **self-preference** — the judge's score for the answer of its own family (1 win, 1/2 tie,
  0 loss, averaged over the two games) minus the other judges' score on the same
  (question, pair, turn): :math:`\bar d = \frac1m\sum_i (s^{\text{self}}_i - s^{\text{others}}_i)`
  (Zheng et al., 2023, §3.3; Panickssery et al., 2024).

:func:`judge_bias_tests` reports each with a z-score (a self-normalised sign statistic
:math:`z = \sum_i d_i / \sqrt{\sum_i d_i^2}` for the ratio diagnostics, a one-sample
:math:`z = \bar d / (s_d/\sqrt m)` for self-preference, and for consistency the excess over
the agreement expected if the two orders were judged independently with the observed
verdict frequencies) and a bootstrap interval resampling rows.

:func:`judge_agreement` reproduces FastChat's ``fastchat/llm_judge/compute_agreement.py``:
votes are keyed by (question, sorted model pair) per turn; a judge-vs-reference agreement
counts every (judge vote, reference vote) pair, a reference-vs-itself agreement every pair of
distinct reference votes; ``ties=False`` skips pairs in which either vote is a tie.

For single-answer grades (a 1-10 score per answer), use the ``rating`` kind with the judge
as ``system``, the human grade as ``y_true`` and the judge's grade as ``y_pred``, and the
agreement metrics ``qwk``, ``krippendorff_alpha``, ``spearman`` per judge.

References
----------
Zheng, L. et al. (2023). Judging LLM-as-a-Judge with MT-Bench and Chatbot Arena. NeurIPS
Datasets and Benchmarks. Panickssery, A., Bowman, S. R., Feng, S. (2024). LLM Evaluators
Recognize and Favor Their Own Generations. NeurIPS.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.core.registry import NO_EXTERNAL_REFERENCE, register
from scorebench.core.stats import interval_bounds, rng_for
from scorebench.analysis.stats_tests import proportion_interval
from scorebench.core.validation import check_level, check_positive_int, describe_rows
from scorebench.metrics.reward.kinds import extract_judgments
from scorebench.core.lazy import lazy_attr

ndtr = lazy_attr("scipy.special", "ndtr")

__all__ = ["swap_consistency", "position_bias", "judge_length_bias", "position_counts", "length_counts",
           "judge_bias_tests", "self_preference", "judge_agreement", "votes_from_judgments"]

_FAMILY = "reward"
_KIND = "judgments"
_CITE = "Zheng et al. (2023), Judging LLM-as-a-Judge with MT-Bench and Chatbot Arena, NeurIPS D&B"


def _codes(g1: Any, g2: Any) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(g1, dtype=np.float64)
    b = np.asarray(g2, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape:
        raise InputError(f"g1/g2: expected one verdict per row in each game, got shapes {a.shape} and {b.shape}")
    bad = ~np.isin(a, (-1.0, 0.0, 1.0)) & ~np.isnan(a) | ~np.isin(b, (-1.0, 0.0, 1.0)) & ~np.isnan(b)
    if bad.any():
        raise InputError("g1/g2: verdict codes must be +1 (model_1), -1 (model_2) or 0 (tie)")
    return a, b


def position_counts(g1: Any, g2: Any) -> tuple[np.ndarray, np.ndarray]:
    """Per row: games won by the answer shown first, and by the one shown second.

    Examples
    --------
    >>> [c.tolist() for c in position_counts([1, 1, -1], [-1, 1, 0])]
    [[2.0, 1.0, 0.0], [0.0, 1.0, 1.0]]
    """
    a, b = _codes(g1, g2)
    return (a == 1).astype(float) + (b == -1), (a == -1).astype(float) + (b == 1)


def length_counts(g1: Any, g2: Any, len_1: Any, len_2: Any) -> tuple[np.ndarray, np.ndarray]:
    """Per row: decisive games won by the longer answer, and by the shorter one."""
    a, b = _codes(g1, g2)
    if len_1 is None or len_2 is None:
        raise InputError("length bias needs the answer lengths len_1 and len_2")
    l1 = np.asarray(len_1, dtype=np.float64)
    l2 = np.asarray(len_2, dtype=np.float64)
    if l1.shape != a.shape or l2.shape != a.shape:
        raise InputError(f"len_1/len_2: expected one length per row ({a.size}), got {l1.shape} and {l2.shape}")
    longer = np.sign(l1 - l2)  # +1: model_1's answer is longer
    picks = (a * longer == 1).astype(float) + (b * longer == 1)
    against = (a * longer == -1).astype(float) + (b * longer == -1)
    return picks, against


def _ratio(plus: np.ndarray, minus: np.ndarray, what: str) -> float:
    total = float(plus.sum() + minus.sum())
    if total == 0:
        raise InputError(f"{what}: no decisive verdict to measure it on (every verdict is a tie or uninformative)")
    return float((plus.sum() - minus.sum()) / total)


@register("swap_consistency", family=_FAMILY, kind=_KIND, inputs=("g1", "g2"), higher_is_better=True,
          bounds=(0.0, 1.0), proportion=True, citation=_CITE, tested_against=NO_EXTERNAL_REFERENCE)
def swap_consistency(g1: Any, g2: Any, /) -> np.ndarray:
    r"""Share of pairwise judgments with the same verdict in both presentation orders.

    .. math:: \frac1n \sum_i \mathbb 1[g_{1i} = g_{2i}]

    Examples
    --------
    >>> swap_consistency([1, 1, -1, 0], [1, -1, -1, 0]).tolist()
    [1.0, 0.0, 1.0, 1.0]
    """
    a, b = _codes(g1, g2)
    out = (a == b).astype(np.float64)
    out[np.isnan(a) | np.isnan(b)] = np.nan
    return out


@register("position_bias", family=_FAMILY, kind=_KIND, inputs=("g1", "g2"), higher_is_better=None,
          bounds=(-1.0, 1.0), per_row=False, citation=_CITE, tested_against=NO_EXTERNAL_REFERENCE)
def position_bias(g1: Any, g2: Any, /) -> float:
    r"""Net preference of a judge for the answer shown first, in [-1, 1] (0 = unbiased).

    .. math:: \frac{\sum_i (F_i - S_i)}{\sum_i (F_i + S_i)}

    with :math:`F_i` / :math:`S_i` the games of row :math:`i` won by the first / second
    shown answer (see the module docstring). Raises when no verdict is decisive.

    Examples
    --------
    >>> position_bias([1, 1, -1], [-1, 1, -1])   # rows: first twice, consistent, consistent
    0.3333333333333333
    """
    first, second = position_counts(g1, g2)
    return _ratio(first, second, "position_bias")


@register("judge_length_bias", family=_FAMILY, kind=_KIND, inputs=("g1", "g2", "len_1", "len_2"),
          higher_is_better=None, bounds=(-1.0, 1.0), per_row=False,
          citation=_CITE + "; Dubois et al. (2024), Length-Controlled AlpacaEval, arXiv:2404.04475", tested_against=NO_EXTERNAL_REFERENCE)
def judge_length_bias(g1: Any, g2: Any, len_1: Any = None, len_2: Any = None, /) -> float:
    r"""Net preference of a judge for the longer answer, in [-1, 1].

    .. math:: \frac{\sum_i (L_i - H_i)}{\sum_i (L_i + H_i)}

    :math:`L_i` / :math:`H_i`: decisive games of row :math:`i` won by the longer / shorter
    answer (rows with equal lengths count in neither). Unlike position, length is not
    balanced by design: a positive value mixes a length preference with longer answers
    being better; compare with human verdicts on the same pairs.

    Examples
    --------
    >>> judge_length_bias([1, -1], [1, 1], [300, 300], [100, 100])
    0.5
    """
    longer, shorter = length_counts(g1, g2, len_1, len_2)
    return _ratio(longer, shorter, "judge_length_bias")


# --- tests with z-scores ----------------------------------------------------------------------


def _sign_test(plus: np.ndarray, minus: np.ndarray, what: str, n_boot: int, rng: np.random.Generator,
               ci: float) -> dict[str, float]:
    value = _ratio(plus, minus, what)
    d = plus - minus
    ss = float(d @ d)
    z = float(d.sum() / np.sqrt(ss)) if ss > 0 else 0.0
    out = {"value": value, "z": z, "p_value": float(2 * ndtr(-abs(z))), "n": int(d.size)}
    out.update(_boot_ratio(plus, minus, n_boot, rng, ci, value))
    return out


def _boot_ratio(plus: np.ndarray, minus: np.ndarray, n_boot: int, rng: np.random.Generator, ci: float,
                value: float) -> dict[str, float]:
    if n_boot == 0:
        return {"ci_low": np.nan, "ci_high": np.nan}
    idx = rng.integers(plus.size, size=(n_boot, plus.size))
    num = (plus - minus)[idx].sum(axis=1)
    den = (plus + minus)[idx].sum(axis=1)
    reps = np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)
    low, high = interval_bounds(value, reps, ci, "percentile")
    return {"ci_low": low, "ci_high": high}


def _consistency_test(a: np.ndarray, b: np.ndarray, ci: float) -> dict[str, float]:
    n = a.size
    same = float((a == b).sum())
    p1 = np.array([(a == v).mean() for v in (-1, 0, 1)])
    p2 = np.array([(b == v).mean() for v in (-1, 0, 1)])
    p0 = float(p1 @ p2)  # agreement expected if the two orders were judged independently
    value = same / n
    z = float((value - p0) / np.sqrt(p0 * (1 - p0) / n)) if 0 < p0 < 1 else 0.0
    low, high = proportion_interval(same, n, ci, "wilson")
    return {"value": value, "z": z, "p_value": float(2 * ndtr(-abs(z))), "n": n, "ci_low": low, "ci_high": high}


def _own_score(codes: np.ndarray, own_is_1: np.ndarray) -> np.ndarray:
    # verdict code for model_1 -> score of the own-family model (1 win, 1/2 tie, 0 loss)
    s = (codes + 1.0) / 2.0
    return np.where(own_is_1, s, 1.0 - s)


def _canonical(frame: pd.DataFrame, g1: np.ndarray, g2: np.ndarray) -> pd.DataFrame:
    """Rows keyed by (question, sorted pair, turn) with both verdicts oriented to the sorted first model."""
    m1 = frame["model_1"].astype(str).to_numpy()
    m2 = frame["model_2"].astype(str).to_numpy()
    flip = m1 > m2
    out = pd.DataFrame({"question_id": frame["question_id"].astype(str).to_numpy(),
                        "lo": np.where(flip, m2, m1), "hi": np.where(flip, m1, m2),
                        "turn": frame["turn"].astype(str).to_numpy() if "turn" in frame else "1",
                        "score_lo": (np.where(flip, -g1, g1) + np.where(flip, -g2, g2) + 2.0) / 4.0})
    return out


def self_preference(table: pd.DataFrame, *, families: Mapping[str, str] | Callable[[str], str] | None = None,
                    judge_column: str = "judge", n_boot: int = 1000, seed: int = 0, ci: float = 0.95) -> pd.DataFrame:
    r"""Self-preference of each judge against the other judges on the same comparisons.

    .. math:: \bar d_j = \frac1{m_j}\sum_{i} \bigl(s^{(j)}_i - \bar s^{(-j)}_i\bigr)

    over the comparisons :math:`i` (question, model pair, turn) in which exactly one model
    belongs to judge :math:`j`'s family and at least one other judge also voted;
    :math:`s` is the score of that model (1 win, 1/2 tie, 0 loss, averaged over both orders).
    ``families`` maps judge and model names to a family (a mapping, missing names being
    their own family, or a function); default: each name is its own family.

    Returns one row per judge with ``value``, ``z``, ``p_value``, ``n`` (comparisons) and a
    percentile bootstrap interval resampling comparisons.
    """
    check_level(ci, "ci")
    n_boot = check_positive_int(n_boot, "n_boot", minimum=0)
    family = _family_function(families)
    if not isinstance(table, pd.DataFrame) or judge_column not in table.columns:
        raise InputError(f"self_preference: expected a judgments DataFrame with a judge column {judge_column!r}")
    _no_missing(table, [judge_column], "self_preference")
    inputs = extract_judgments(table.rename(columns={judge_column: "_judge"}), nan_policy="raise")
    frame = inputs.frame
    canon = _canonical(frame, inputs.arrays["g1"], inputs.arrays["g2"])
    canon["judge"] = frame["_judge"].astype(str).to_numpy()
    key = ["question_id", "lo", "hi", "turn"]
    rows = []
    for judge in sorted(canon["judge"].unique()):
        fam = family(judge)
        mine = canon[canon["judge"] == judge]
        own_lo = mine["lo"].map(family).eq(fam).to_numpy()
        own_hi = mine["hi"].map(family).eq(fam).to_numpy()
        mine = mine[own_lo != own_hi].assign(own_lo=own_lo[own_lo != own_hi])
        others = canon[canon["judge"] != judge].groupby(key, sort=False)["score_lo"].mean().rename("others")
        merged = mine.join(others, on=key, how="inner")
        if merged.empty:
            rows.append({"judge": judge, "family": fam, "value": np.nan, "z": np.nan, "p_value": np.nan, "n": 0,
                         "ci_low": np.nan, "ci_high": np.nan})
            continue
        flip = np.where(merged["own_lo"], 1.0, -1.0)
        d = flip * (merged["score_lo"].to_numpy() - merged["others"].to_numpy())
        m = d.size
        value = float(d.mean())
        sd = float(d.std(ddof=1)) if m > 1 else 0.0
        z = value / (sd / np.sqrt(m)) if sd > 0 else 0.0
        low = high = np.nan
        if n_boot:
            rng = rng_for(seed, "self_preference", judge)
            reps = d[rng.integers(m, size=(n_boot, m))].mean(axis=1)
            low, high = interval_bounds(value, reps, ci, "percentile")
        rows.append({"judge": judge, "family": fam, "value": value, "z": float(z),
                     "p_value": float(2 * ndtr(-abs(z))), "n": m, "ci_low": low, "ci_high": high})
    return pd.DataFrame(rows)


def _no_missing(table: pd.DataFrame, columns: list[str], what: str) -> None:
    for column in columns:
        missing = table[column].isna().to_numpy()
        if missing.any():
            raise InputError(f"{what}: column {column!r} is missing in {describe_rows(missing, table.index)}")


def _family_function(families: Mapping[str, str] | Callable[[str], str] | None) -> Callable[[str], str]:
    if families is None:
        return lambda name: name
    if callable(families):
        return lambda name: str(families(name))
    if isinstance(families, Mapping):
        return lambda name: str(families.get(name, name))
    raise InputError(f"families: expected a mapping of names to families or a function, got {type(families).__name__}")


def judge_bias_tests(table: pd.DataFrame, *, judge_column: str = "judge",
                     families: Mapping[str, str] | Callable[[str], str] | None = None,
                     n_boot: int = 1000, seed: int = 0, ci: float = 0.95) -> pd.DataFrame:
    """Swap consistency, position bias, length bias and self-preference per judge, with z-scores.

    ``table`` is a ``judgments`` table with a judge column. Returns one row per (judge,
    diagnostic) with ``value``, ``z``, ``p_value``, ``n`` and ``ci_low``/``ci_high``
    (bootstrap over rows, Wilson for consistency). Length bias needs ``len_1``/``len_2``;
    self-preference needs at least two judges voting on the same comparisons (rows are
    left out otherwise).

    Examples
    --------
    >>> t = pd.DataFrame({"judge": "j", "question_id": range(6), "model_1": "a", "model_2": "b",
    ...                   "g1_winner": ["model_1"] * 6, "g2_winner": ["model_2"] * 3 + ["model_1"] * 3})
    >>> out = judge_bias_tests(t, n_boot=0).set_index("diagnostic")
    >>> float(out.loc["position_bias", "value"]), round(float(out.loc["position_bias", "z"]), 3)   # 3 rows 2-0, 3 rows 1-1
    (0.5, 1.732)
    """
    check_level(ci, "ci")
    n_boot = check_positive_int(n_boot, "n_boot", minimum=0)
    if not isinstance(table, pd.DataFrame) or judge_column not in table.columns:
        raise InputError(f"judge_bias_tests: expected a judgments DataFrame with a {judge_column!r} column")
    _no_missing(table, [judge_column], "judge_bias_tests")
    rows = []
    for judge, part in table.groupby(judge_column, sort=True):
        inputs = extract_judgments(part.reset_index(drop=True), nan_policy="raise")
        g1, g2 = inputs.arrays["g1"], inputs.arrays["g2"]
        rows.append({"judge": judge, "diagnostic": "swap_consistency", **_consistency_test(g1, g2, ci)})
        rng = rng_for(seed, "position_bias", judge)
        rows.append({"judge": judge, "diagnostic": "position_bias",
                     **_sign_test(*position_counts(g1, g2), "position_bias", n_boot, rng, ci)})
        if "len_1" in inputs.arrays:
            rng = rng_for(seed, "judge_length_bias", judge)
            longer, shorter = length_counts(g1, g2, inputs.arrays["len_1"], inputs.arrays["len_2"])
            if (longer + shorter).sum() > 0:
                rows.append({"judge": judge, "diagnostic": "length_bias",
                             **_sign_test(longer, shorter, "judge_length_bias", n_boot, rng, ci)})
    if table[judge_column].nunique() > 1:
        selfp = self_preference(table, families=families, judge_column=judge_column, n_boot=n_boot, seed=seed, ci=ci)
        for rec in selfp.to_dict("records"):
            if rec["n"] > 0:
                rows.append({"judge": rec["judge"], "diagnostic": "self_preference",
                             **{k: rec[k] for k in ("value", "z", "p_value", "n", "ci_low", "ci_high")}})
    out = pd.DataFrame(rows, columns=["judge", "diagnostic", "value", "z", "p_value", "n", "ci_low", "ci_high"])
    return out.sort_values(["judge", "diagnostic"], kind="stable").reset_index(drop=True)


# --- agreement with human judges (FastChat compute_agreement.py) ------------------------------


_VOTE_COLUMNS = ("question_id", "model_a", "model_b", "winner", "judge", "turn")


def votes_from_judgments(table: pd.DataFrame, *, judge_column: str = "judge") -> pd.DataFrame:
    """Pairwise judgments in both orders -> one vote per row (inconsistent verdicts become ties).

    MT-bench counts a verdict that flips with the order as a tie; the result has FastChat's
    vote columns ``question_id``, ``model_a``, ``model_b``, ``winner``, ``judge``, ``turn``.
    """
    inputs = extract_judgments(table.rename(columns={judge_column: "_judge"}) if judge_column in table else table)
    g1, g2 = inputs.arrays["g1"], inputs.arrays["g2"]
    code = np.where(g1 == g2, g1, 0.0)
    winner = np.select([code == 1, code == -1], ["model_a", "model_b"], "tie")
    f = inputs.frame
    return pd.DataFrame({"question_id": f["question_id"].to_numpy(), "model_a": f["model_1"].astype(str).to_numpy(),
                         "model_b": f["model_2"].astype(str).to_numpy(), "winner": winner,
                         "judge": f["_judge"].astype(str).to_numpy() if "_judge" in f else "judge",
                         "turn": f["turn"].to_numpy() if "turn" in f else 1})


def _is_tie(vote: str) -> bool:
    return "tie" in vote


def _equal(v1: str, v2: str) -> bool:
    return (_is_tie(v1) and _is_tie(v2)) or v1 == v2


def _oriented_votes(votes: pd.DataFrame) -> pd.DataFrame:
    """Validated votes, each oriented to the alphabetically first model of its pair
    (columns ``turn``, ``q``, ``lo``, ``hi``, ``judge``, ``vote``)."""
    if not isinstance(votes, pd.DataFrame):
        raise InputError(f"judge_agreement: expected a votes DataFrame, got {type(votes).__name__}")
    missing = [c for c in _VOTE_COLUMNS if c not in votes.columns]
    if missing:
        raise InputError(f"judge_agreement: missing column(s) {missing}; expected {list(_VOTE_COLUMNS)}")
    _no_missing(votes, list(_VOTE_COLUMNS), "judge_agreement")
    winner = votes["winner"].astype(str).str.strip()
    bad = ~(winner.isin(["model_a", "model_b"]) | winner.str.contains("tie"))
    if bad.any():
        raise InputError(f"column 'winner': {winner[bad].iloc[0]!r}; expected model_a, model_b or tie")
    a = votes["model_a"].astype(str).to_numpy()
    b = votes["model_b"].astype(str).to_numpy()
    flip = a > b  # FastChat keys by the sorted pair and reverts the vote (a == b cannot occur)
    revert = winner.map({"model_a": "model_b", "model_b": "model_a"}).fillna(winner)
    oriented = np.where(flip, revert, winner)
    return pd.DataFrame({"turn": votes["turn"].to_numpy(), "q": votes["question_id"].astype(str).to_numpy(),
                         "lo": np.where(flip, b, a), "hi": np.where(flip, a, b),
                         "judge": votes["judge"].astype(str).to_numpy(), "vote": oriented})


def _vote_pairs(group: pd.DataFrame, judge: str, reference: str) -> list[tuple[str, str]]:
    """The (judge, reference) vote pairs of one comparison; distinct reference pairs when
    the judge is the reference."""
    ref = group.loc[group["judge"] == reference, "vote"].tolist()
    if judge == reference:
        return [(ref[i], ref[j]) for i in range(len(ref)) for j in range(i + 1, len(ref))]
    mine = group.loc[group["judge"] == judge, "vote"].tolist()
    return [(u, v) for u in mine for v in ref]


def judge_agreement(votes: pd.DataFrame, judge: str, reference: str = "human", *, ties: bool = True,
                    ci: float = 0.95) -> pd.DataFrame:
    r"""Agreement of ``judge`` with ``reference`` votes per turn, FastChat's counting.

    .. math:: \text{agreement} = \frac{\#\{(u, v) : u \equiv v\}}{\#\{(u, v)\}}

    over pairs of votes on the same (question, model pair, turn): every (judge vote,
    reference vote) pair, or, when ``judge == reference``, every pair of two distinct
    reference votes (inter-human agreement). Votes are oriented to the alphabetically first
    model; any two ties are equal (``tie`` and ``tie (bothbad)``). ``ties=False`` drops pairs
    in which either vote is a tie ("without tie" in Zheng et al., 2023, Table 3). FastChat
    asserts a single vote by the model judge per comparison; several are all paired here.

    ``votes`` has the columns ``question_id``, ``model_a``, ``model_b``, ``winner``
    (``model_a``, ``model_b``, ``tie``, ``tie (bothbad)``), ``judge``, ``turn``. Returns one row
    per turn: ``agree``, ``total``, ``agreement`` and a Wilson interval (pairs sharing a vote
    are not independent, so read it as approximate).

    Examples
    --------
    >>> v = pd.DataFrame({"question_id": [1, 1, 1], "model_a": ["x", "y", "x"], "model_b": ["y", "x", "y"],
    ...                   "winner": ["model_a", "model_b", "tie"], "judge": ["gpt4", "human", "human"],
    ...                   "turn": [1, 1, 1]})
    >>> judge_agreement(v, "gpt4")[["turn", "agree", "total"]].values.tolist()
    [[1, 1, 2]]
    """
    check_level(ci, "ci")
    frame = _oriented_votes(votes)
    for name in {judge, reference}:
        if not (frame["judge"] == name).any():
            raise InputError(f"judge_agreement: no votes by judge {name!r}; judges present: "
                             f"{sorted(frame['judge'].unique())[:10]}")
    rows = []
    for turn, part in frame.groupby("turn", sort=True):
        agree = total = 0
        for _, group in part.groupby(["q", "lo", "hi"], sort=False):
            for u, v in _vote_pairs(group, judge, reference):
                if not ties and (_is_tie(u) or _is_tie(v)):
                    continue
                total += 1
                agree += _equal(u, v)
        low, high = proportion_interval(agree, total, ci, "wilson") if total else (np.nan, np.nan)
        rows.append({"turn": turn, "agree": agree, "total": total,
                     "agreement": agree / total if total else np.nan, "ci_low": low, "ci_high": high})
    return pd.DataFrame(rows)
