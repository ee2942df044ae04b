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
# The registry keywords every rule here shares; the elimination rules and Black also read ties (pairwise Borda).
_MAJORITY = dict(family="condorcet", accepts=("matrix", "battles"), missing=_SKIP)
_PAIRWISE_BORDA = dict(_MAJORITY, missing=_SKIP + " (pairwise Borda)")
_TIE_VALUES = {"average": 0.5, "min": 0.0, "max": 1.0}  # what a tie counts in a pairwise Borda score


def pairwise(data: ScoreMatrix | Battles, *, ties: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    """Weighted strict wins ``P`` and ties ``T`` from a score matrix or battles (T skipped if not ``ties``)."""
    return data.decisive() if isinstance(data, Battles) else pairwise_counts(data, ties=ties)


def _result(data: ScoreMatrix | Battles, P: np.ndarray, scores: np.ndarray, **details) -> MethodResult:
    cw = condorcet_winner(P)
    return MethodResult(np.asarray(scores, dtype=np.float64),
                        {"condorcet_winner": None if cw is None else data.systems[cw], **details})


@register_method("copeland", **_MAJORITY,
                 citation="Copeland (1951); Rofin et al. (2023), Vote'n'Rank, EACL")
def copeland(data: ScoreMatrix | Battles) -> MethodResult:
    r"""Copeland: pairwise majority wins minus losses.

    .. math:: s_a = \#\{b: P_{ab} > P_{ba}\} - \#\{b: P_{ab} < P_{ba}\}

    Examples
    --------
    ``a`` beats both others on two of the three columns, so it is the Condorcet winner:

    >>> from scorebench.aggregate import as_matrix
    >>> m = as_matrix({"t1": [3, 2, 1], "t2": [1, 3, 2], "t3": [3, 1, 2]}, systems=["a", "b", "c"])
    >>> copeland(m).scores.tolist(), copeland(m).details["condorcet_winner"]
    ([2.0, 0.0, -2.0], 'a')

    Copeland counts majorities, not their size: in a majority cycle every system wins once
    and loses once, whatever the column weights (:func:`minimax`, :func:`schulze` and
    :func:`ranked_pairs` break this cycle by its margins):

    >>> cycle = as_matrix({"t1": [3, 2, 1], "t2": [1, 3, 2], "t3": [2, 1, 3]}, systems=["a", "b", "c"],
    ...                   weights=[4, 3, 2])
    >>> copeland(cycle).scores.tolist()
    [0.0, 0.0, 0.0]
    """
    P, _ = pairwise(data, ties=False)
    return _result(data, P, np.sign(P - P.T).sum(axis=1))


@register_method("minimax", **_MAJORITY,
                 citation="Simpson (1969); Kramer (1977); Rofin et al. (2023)")
def minimax(data: ScoreMatrix | Battles, *, score: str = "margins") -> MethodResult:
    r"""Minimax (Simpson–Kramer): minus the worst pairwise defeat.

    .. math:: s_a = -\max_{b \ne a} d(b, a)

    with :math:`d(b,a) = P_{ba} - P_{ab}` (``score="margins"``, default),
    :math:`P_{ba}[P_{ba} > P_{ab}]` (``"winning_votes"``) or :math:`P_{ba}` (``"pairwise_opposition"``).

    Examples
    --------
    A weighted majority cycle: ``a`` beats ``b`` 6 to 3, ``b`` beats ``c`` 7 to 2 and ``c``
    beats ``a`` 5 to 4. ``a``'s worst defeat is the narrowest, so ``a`` wins; by winning votes
    the defeats weigh 5, 6 and 7:

    >>> from scorebench.aggregate import as_matrix
    >>> cycle = as_matrix({"t1": [3, 2, 1], "t2": [1, 3, 2], "t3": [2, 1, 3]}, systems=["a", "b", "c"],
    ...                   weights=[4, 3, 2])
    >>> minimax(cycle).scores.tolist(), minimax(cycle, score="winning_votes").scores.tolist()
    ([-1.0, -3.0, -5.0], [-5.0, -6.0, -7.0])
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


@register_method("schulze", **_MAJORITY,
                 citation="Schulze (2011), Social Choice and Welfare 36(2) (beat-path method, margins)")
def schulze(data: ScoreMatrix | Battles) -> MethodResult:
    r"""Schulze (beat path): ``a`` ranks above ``b`` when its strongest path to ``b`` is stronger.

    With path strength the smallest margin along the path, :math:`p_{ab}` the strongest path
    strength, the score is minus the number of systems that beat ``a`` this way,
    :math:`s_a = -\#\{b: p_{ba} > p_{ab}\}`; the relation is transitive (Schulze, 2011), so the
    systems nobody beats — the Schulze winners — share the top score.

    Examples
    --------
    In the weighted cycle of :func:`minimax` (margins ``a`` > ``b`` 3, ``b`` > ``c`` 5,
    ``c`` > ``a`` 1), ``a`` reaches ``c`` through ``b`` with strength min(3, 5) = 3, stronger
    than ``c``'s direct path of 1 back to ``a``; ``details["strengths"]`` holds :math:`p`:

    >>> from scorebench.aggregate import as_matrix
    >>> result = schulze(as_matrix({"t1": [3, 2, 1], "t2": [1, 3, 2], "t3": [2, 1, 3]},
    ...                            systems=["a", "b", "c"], weights=[4, 3, 2]))
    >>> result.scores.tolist(), result.details["strengths"].tolist()
    ([0.0, -1.0, -2.0], [[0.0, 3.0, 3.0], [1.0, 0.0, 5.0], [1.0, 1.0, 0.0]])
    """
    P, _ = pairwise(data, ties=False)
    p = schulze_strengths(P)
    return _result(data, P, 0.0 - (p.T > p).sum(axis=1), strengths=p)


@register_method("ranked_pairs", **_MAJORITY,
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
    The weighted cycle of :func:`minimax`: ``b`` > ``c`` (margin 5) is locked first, then
    ``a`` > ``b`` (3); ``c`` > ``a`` (1) would close a cycle and is skipped, giving the order
    ``a``, ``b``, ``c`` with no tie-breaking needed (``n_states`` 0):

    >>> from scorebench.aggregate import as_matrix
    >>> locked = ranked_pairs(as_matrix({"t1": [3, 2, 1], "t2": [1, 3, 2], "t3": [2, 1, 3]},
    ...                                 systems=["a", "b", "c"], weights=[4, 3, 2]))
    >>> locked.scores.tolist(), locked.details["n_states"]
    ([0.0, -1.0, -2.0], 0)
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


def _tie_value(ties: str) -> float:
    """What a tie counts in a pairwise Borda score (``ties`` as in :func:`~scorebench.aggregate.positional.borda`)."""
    check_choice(ties, "ties", tuple(_TIE_VALUES))
    return _TIE_VALUES[ties]


def _elimination(data: ScoreMatrix | Battles, ties: str, rule: str) -> MethodResult:
    tie_value = _tie_value(ties)
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


@register_method("baldwin", **_PAIRWISE_BORDA,
                 citation="Baldwin (1926), Proc. Royal Society of Victoria 39; Rofin et al. (2023)")
def baldwin(data: ScoreMatrix | Battles, *, ties: str = "average") -> MethodResult:
    r"""Baldwin: repeatedly eliminate the system(s) with the lowest Borda score among those left.

    The Borda score among the remaining set :math:`R` is :math:`\sum_{b \in R} P_{ab} + \tau T_{ab}`
    (``ties`` as in :func:`~scorebench.aggregate.positional.borda`). Systems eliminated later
    rank higher; the last survivors are the winners. Systems eliminated in the same round are
    tied.

    Examples
    --------
    Four systems on three columns of weights 2, 2, 1; the first round's Borda scores are
    ``a`` 10, ``b`` 7, ``c`` 6, ``d`` 7. Baldwin drops only ``c``; among the three left
    ``b`` scores lowest (4, to ``a``'s 6 and ``d``'s 5), and ``d`` then beats ``a`` 3 to 2.
    :func:`nanson` drops every system below the mean 7.5 at once, ``d`` included, and
    elects ``a``:

    >>> from scorebench.aggregate import as_matrix
    >>> m = as_matrix({"t1": [4, 3, 2, 1], "t2": [3, 1, 2, 4], "t3": [1, 4, 3, 2]},
    ...               systems=["a", "b", "c", "d"], weights=[2, 2, 1])
    >>> baldwin(m).details["eliminated"], nanson(m).details["eliminated"]
    ([['c'], ['b'], ['a'], ['d']], [['b', 'c', 'd'], ['a']])
    """
    return _elimination(data, ties, "baldwin")


@register_method("nanson", **_PAIRWISE_BORDA,
                 citation="Nanson (1882), Trans. Proc. Royal Society of Victoria 19; Niou (1987)")
def nanson(data: ScoreMatrix | Battles, *, ties: str = "average") -> MethodResult:
    r"""Nanson: repeatedly eliminate every system whose Borda score is below the mean of those left.

    Later elimination ranks higher; systems eliminated in the same round are ordered by
    their Borda score in that round (equal scores tie).

    Examples
    --------
    On :func:`baldwin`'s example Nanson ends in two rounds: ``b``, ``c`` and ``d`` fall
    together below the mean, ranked among themselves by their Borda scores 7, 6 and 7
    (``b`` and ``d`` tie), all below ``a``:

    >>> from scorebench.aggregate import as_matrix
    >>> two_rounds = nanson(as_matrix({"t1": [4, 3, 2, 1], "t2": [3, 1, 2, 4], "t3": [1, 4, 3, 2]},
    ...                               systems=["a", "b", "c", "d"], weights=[2, 2, 1]))
    >>> two_rounds.details["eliminated"], two_rounds.scores.tolist()
    ([['b', 'c', 'd'], ['a']], [16.0, 7.0, 6.0, 7.0])
    """
    return _elimination(data, ties, "nanson")


@register_method("black", **_PAIRWISE_BORDA,
                 citation="Black (1958), The Theory of Committees and Elections")
def black(data: ScoreMatrix | Battles, *, ties: str = "average") -> MethodResult:
    r"""Black: the Condorcet winner when there is one, then everyone by (pairwise) Borda score.

    .. math:: s_a = B(a) + [a = \text{Condorcet winner}]\,(\max_b B(b) - \min_b B(b) + 1)

    Examples
    --------
    A column of weight 3 ranks ``a`` > ``b`` > ``c``, one of weight 2 ``b`` > ``c`` > ``a``.
    ``a`` wins both its majorities 3 to 2, yet ``b`` has the higher Borda score (7 to 6):
    Black puts the Condorcet winner first and ranks the others by Borda score.

    >>> from scorebench.aggregate import as_matrix
    >>> m = as_matrix({"t1": [3, 2, 1], "t2": [1, 3, 2]}, systems=["a", "b", "c"], weights=[3, 2])
    >>> black(m).details["condorcet_winner"], black(m).scores.tolist()
    ('a', [12.0, 7.0, 2.0])

    Without a Condorcet winner (the majority cycle of :func:`minimax`) the score is the Borda score:

    >>> black(as_matrix({"t1": [3, 2, 1], "t2": [1, 3, 2], "t3": [2, 1, 3]}, systems=["a", "b", "c"],
    ...                 weights=[4, 3, 2])).scores.tolist()
    [10.0, 10.0, 7.0]
    """
    tie_value = _tie_value(ties)
    P, T = pairwise(data)
    b = _borda_on(P, T, np.ones(len(P), dtype=bool), tie_value)
    cw = condorcet_winner(P)
    if cw is not None:
        b = b.copy()
        b[cw] += b.max() - b.min() + 1.0
    return _result(data, P, b)
