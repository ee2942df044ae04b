"""Condorcet-family rules on the weighted majority relation between systems.

Every rule here reads only the weighted pairwise counts (see
:func:`~scorebench.aggregate.profile.pairwise_counts`): ``P[a, b]`` = weight of the columns
(or battles) where ``a`` beats ``b``. Missing scores skip the pair in that column, so all
rules accept incomplete tables. Each result reports the Condorcet winner (the system that
beats every other by a strict weighted majority) in ``details["condorcet_winner"]``.
"""

from __future__ import annotations

import numpy as np

from scorebench.core.validation import check_choice, check_positive_int
from scorebench.aggregate.input import Battles, ScoreMatrix
from scorebench.aggregate.profile import condorcet_winner, pairwise_counts
from scorebench.aggregate.ranked_pairs_search import MAX_STATES, ranked_pairs_tb, ranked_pairs_winners
from scorebench.aggregate.registry import MethodResult, register_method

__all__ = ["pairwise", "copeland", "minimax", "schulze", "ranked_pairs", "baldwin", "nanson", "black",
           "schulze_strengths"]

_SKIP = "pairwise: a column where either system is missing is skipped for that pair"


def pairwise(data: ScoreMatrix | Battles, *, ties: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    """Weighted strict wins ``P`` and ties ``T`` from a score matrix or battles (T skipped if not ``ties``)."""
    return data.decisive() if isinstance(data, Battles) else pairwise_counts(data, ties=ties)


def _result(data: ScoreMatrix | Battles, P: np.ndarray, scores: np.ndarray, **details) -> MethodResult:
    cw = condorcet_winner(P)
    return MethodResult(np.asarray(scores, dtype=np.float64),
                        {"condorcet_winner": None if cw is None else data.systems[cw], **details})


@register_method("copeland", family="condorcet", accepts=("matrix", "battles"), missing=_SKIP,
                 citation="Copeland (1951); Rofin et al. (2023), Vote'n'Rank, EACL")
def copeland(data: ScoreMatrix | Battles) -> MethodResult:
    r"""Copeland: pairwise majority wins minus losses.

    .. math:: s_a = \#\{b: P_{ab} > P_{ba}\} - \#\{b: P_{ab} < P_{ba}\}

    Examples
    --------
    >>> import pandas as pd
    >>> from scorebench.aggregate.input import as_matrix
    >>> m = as_matrix(pd.DataFrame({"t1": [3, 2, 1], "t2": [1, 3, 2], "t3": [3, 1, 2]}, index=["a", "b", "c"]))
    >>> copeland(m).scores.tolist()
    [2.0, 0.0, -2.0]
    """
    P, _ = pairwise(data, ties=False)
    return _result(data, P, np.sign(P - P.T).sum(axis=1))


@register_method("minimax", family="condorcet", accepts=("matrix", "battles"), missing=_SKIP,
                 citation="Simpson (1969); Kramer (1977); Rofin et al. (2023)")
def minimax(data: ScoreMatrix | Battles, *, score: str = "margins") -> MethodResult:
    r"""Minimax (Simpson–Kramer): minus the worst pairwise defeat.

    .. math:: s_a = -\max_{b \ne a} d(b, a)

    with :math:`d(b,a) = P_{ba} - P_{ab}` (``score="margins"``, default),
    :math:`P_{ba}[P_{ba} > P_{ab}]` (``"winning_votes"``) or :math:`P_{ba}` (``"pairwise_opposition"``).

    Examples
    --------
    >>> import pandas as pd
    >>> from scorebench.aggregate.input import as_matrix
    >>> m = as_matrix(pd.DataFrame({"t1": [3, 2, 1], "t2": [1, 3, 2], "t3": [3, 1, 2]}, index=["a", "b", "c"]))
    >>> minimax(m).scores.tolist()
    [1.0, -1.0, -1.0]
    """
    check_choice(score, "score", ("margins", "winning_votes", "pairwise_opposition"))
    P, _ = pairwise(data, ties=False)
    if score == "margins":
        d = P.T - P
    elif score == "winning_votes":
        d = np.where(P.T > P, P.T, 0.0)
    else:
        d = P.T.copy()
    np.fill_diagonal(d, -np.inf)
    return _result(data, P, -d.max(axis=1))


def schulze_strengths(P: np.ndarray) -> np.ndarray:
    """Strongest (widest) path strengths on the margin graph (edges where the margin is positive)."""
    M = P - P.T
    p = np.where(M > 0, M, 0.0)
    for k in range(len(p)):
        np.maximum(p, np.minimum(p[:, k:k + 1], p[k:k + 1, :]), out=p)
    np.fill_diagonal(p, 0.0)
    return p


@register_method("schulze", family="condorcet", accepts=("matrix", "battles"), missing=_SKIP,
                 citation="Schulze (2011), Social Choice and Welfare 36(2) (beat-path method, margins)")
def schulze(data: ScoreMatrix | Battles) -> MethodResult:
    r"""Schulze (beat path): ``a`` ranks above ``b`` when its strongest path to ``b`` is stronger.

    With path strength the smallest margin along the path, :math:`p_{ab}` the strongest path
    strength, the score is minus the number of systems that beat ``a`` this way,
    :math:`s_a = -\#\{b: p_{ba} > p_{ab}\}`; the relation is transitive (Schulze, 2011), so the
    systems nobody beats — the Schulze winners — share the top score.

    Examples
    --------
    >>> import pandas as pd
    >>> from scorebench.aggregate.input import as_matrix
    >>> m = as_matrix(pd.DataFrame({"t1": [3, 2, 1], "t2": [1, 3, 2], "t3": [3, 1, 2]}, index=["a", "b", "c"]))
    >>> schulze(m).scores.tolist()
    [0.0, -1.0, -2.0]
    """
    P, _ = pairwise(data, ties=False)
    p = schulze_strengths(P)
    return _result(data, P, 0.0 - (p.T > p).sum(axis=1), strengths=p)


@register_method("ranked_pairs", family="condorcet", accepts=("matrix", "battles"), missing=_SKIP,
                 citation="Tideman (1987), Social Choice and Welfare 4(3); ties in margins as pref_voting's "
                          "ranked_pairs (winners over all tie-breaking orders; Brill & Fischer 2012, AAAI)")
def ranked_pairs(data: ScoreMatrix | Battles, *, max_states: int = MAX_STATES) -> MethodResult:
    r"""Ranked pairs (Tideman): lock majorities from the largest margin down, skipping cycles.

    Edges :math:`a \to b` with margin :math:`P_{ab} - P_{ba} > 0` are locked in decreasing
    order of margin; an edge that would close a cycle with the edges locked before it is
    skipped. Equal margins are ordered by a tie-breaking order, and the rule is neutral
    about it: a system is a winner if it is unbeaten in the locked graph under *some*
    tie-breaking order of the equal-margin edges (Tideman 1987; pref_voting's
    ``ranked_pairs``; Brill & Fischer 2012). Without ties in the margins this is the
    single textbook outcome.

    Score: 0 for the winners. Below them, the systems follow the resolute ranked pairs
    order with equal margins tried in input order of the systems (pref_voting's
    ``ranked_pairs_tb``): a non-winner scores minus one minus the number of non-winners
    locked above it there. Without ties in the margins this is Tideman's ranked pairs
    order (systems tied only by zero margins can share a score). Deciding who can win is
    NP-complete (Brill & Fischer 2012); the search explores locking states (see
    :mod:`~scorebench.aggregate.ranked_pairs_search`) and stops with an
    :class:`~scorebench.core.errors.InputError` after ``max_states`` of them.
    ``details["n_states"]`` counts the branching states (0: no order dependence). An earlier
    scorebench version dropped every edge of an equal-margin batch that lay on a cycle
    within the batch; that rule has no published source and is gone.

    Examples
    --------
    >>> import pandas as pd
    >>> from scorebench.aggregate.input import as_matrix
    >>> m = as_matrix(pd.DataFrame({"t1": [3, 2, 1], "t2": [1, 3, 2], "t3": [3, 1, 2]}, index=["a", "b", "c"]))
    >>> ranked_pairs(m).scores.tolist()
    [0.0, -1.0, -2.0]
    """
    check_positive_int(max_states, "max_states")
    P, _ = pairwise(data, ties=False)
    scores, n_states = _ranked_pairs_scores(P - P.T, max_states)
    return _result(data, P, scores, n_states=n_states)


def _ranked_pairs_scores(M: np.ndarray, max_states: int) -> tuple[np.ndarray, int]:
    """Ranked pairs scores from margins: 0 for the winners, then the tie-broken order."""
    win, n_states = ranked_pairs_winners(M, max_states=max_states)
    closure = ranked_pairs_tb(M)
    above = (closure & ~win[:, None]).sum(axis=0) - 1  # non-winners locked above (self excluded)
    return np.where(win, 0.0, -1.0 - above), n_states


def _borda_on(P: np.ndarray, T: np.ndarray, alive: np.ndarray, tie_value: float) -> np.ndarray:
    sub = alive[None, :]
    return (np.where(sub, P, 0.0) + tie_value * np.where(sub, T, 0.0)).sum(axis=1)


def _elimination(data: ScoreMatrix | Battles, ties: str, rule: str) -> MethodResult:
    check_choice(ties, "ties", ("average", "min", "max"))
    tie_value = {"average": 0.5, "min": 0.0, "max": 1.0}[ties]
    P, T = pairwise(data)
    n = len(P)
    alive = np.ones(n, dtype=bool)
    round_out = np.full(n, np.nan)
    borda_out = np.zeros(n)
    rounds: list[list[str]] = []
    r = 0
    while alive.any():
        b = _borda_on(P, T, alive, tie_value)
        live = b[alive]
        scale = max(1.0, np.abs(live).max())
        if np.all(np.abs(live - live.min()) <= 1e-12 * scale):
            out = alive.copy()  # everyone left is tied: they are the winners
        elif rule == "baldwin":
            out = alive & (np.abs(b - live.min()) <= 1e-12 * scale)
        else:
            out = alive & (b < live.mean() - 1e-12 * scale)
        round_out[out] = r
        borda_out[out] = b[out]
        rounds.append([data.systems[i] for i in np.flatnonzero(out)])
        alive &= ~out
        r += 1
    # Later elimination ranks higher; within a round, the Borda score at elimination decides.
    span = np.abs(borda_out).max() + 1.0
    scores = round_out * 2 * span + borda_out
    return _result(data, P, scores, eliminated=rounds)


@register_method("baldwin", family="condorcet", accepts=("matrix", "battles"), missing=_SKIP + " (pairwise Borda)",
                 citation="Baldwin (1926), Proc. Royal Society of Victoria 39; Rofin et al. (2023)")
def baldwin(data: ScoreMatrix | Battles, *, ties: str = "average") -> MethodResult:
    r"""Baldwin: repeatedly eliminate the system(s) with the lowest Borda score among those left.

    The Borda score among the remaining set :math:`R` is :math:`\sum_{b \in R} P_{ab} + \tau T_{ab}`
    (``ties`` as in :func:`~scorebench.aggregate.positional.borda`). Systems eliminated later
    rank higher; the last survivors are the winners. Systems eliminated in the same round are
    tied.

    Examples
    --------
    >>> import pandas as pd
    >>> from scorebench.aggregate.input import as_matrix
    >>> m = as_matrix(pd.DataFrame({"t1": [3, 2, 1], "t2": [1, 3, 2], "t3": [3, 1, 2]}, index=["a", "b", "c"]))
    >>> baldwin(m).details["eliminated"]
    [['c'], ['b'], ['a']]
    """
    return _elimination(data, ties, "baldwin")


@register_method("nanson", family="condorcet", accepts=("matrix", "battles"), missing=_SKIP + " (pairwise Borda)",
                 citation="Nanson (1882), Trans. Proc. Royal Society of Victoria 19; Niou (1987)")
def nanson(data: ScoreMatrix | Battles, *, ties: str = "average") -> MethodResult:
    r"""Nanson: repeatedly eliminate every system whose Borda score is below the mean of those left.

    Later elimination ranks higher; systems eliminated in the same round are ordered by
    their Borda score in that round (equal scores tie).

    Examples
    --------
    >>> import pandas as pd
    >>> from scorebench.aggregate.input import as_matrix
    >>> m = as_matrix(pd.DataFrame({"t1": [3, 2, 1], "t2": [1, 3, 2], "t3": [3, 1, 2]}, index=["a", "b", "c"]))
    >>> nanson(m).details["eliminated"]
    [['c'], ['b'], ['a']]
    """
    return _elimination(data, ties, "nanson")


@register_method("black", family="condorcet", accepts=("matrix", "battles"), missing=_SKIP + " (pairwise Borda)",
                 citation="Black (1958), The Theory of Committees and Elections")
def black(data: ScoreMatrix | Battles, *, ties: str = "average") -> MethodResult:
    r"""Black: the Condorcet winner when there is one, then everyone by (pairwise) Borda score.

    .. math:: s_a = B(a) + [a = \text{Condorcet winner}]\,(\max_b B(b) - \min_b B(b) + 1)

    Examples
    --------
    >>> import pandas as pd
    >>> from scorebench.aggregate.input import as_matrix
    >>> m = as_matrix(pd.DataFrame({"t1": [3, 2, 1], "t2": [1, 3, 2], "t3": [3, 1, 2]}, index=["a", "b", "c"]))
    >>> black(m).details["condorcet_winner"]
    'a'
    """
    check_choice(ties, "ties", ("average", "min", "max"))
    P, T = pairwise(data)
    b = _borda_on(P, T, np.ones(len(P), dtype=bool), {"average": 0.5, "min": 0.0, "max": 1.0}[ties])
    cw = condorcet_winner(P)
    if cw is not None:
        b = b.copy()
        b[cw] += b.max() - b.min() + 1.0
    return _result(data, P, b)
