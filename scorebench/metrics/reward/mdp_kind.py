r"""Table kind ``mdp``: reward functions of a finite MDP as a long table, and their distances to a reference.

One row per (system, :math:`s`, :math:`a`, :math:`s'`) — every triple of the MDP once per
system (reward function):

=========================  ===========================================================
column                     meaning
=========================  ===========================================================
``system``                 the reward function being evaluated (grouping column)
``s``, ``a``, ``s_next``   state, action and next state (labels: numbers or text; the
                           states are the union of ``s`` and ``s_next``)
``reward``                 the system's reward :math:`R(s, a, s')`
``reference``              the reference reward :math:`R^*(s, a, s')` it is compared with
``transition``             :math:`\tau(s' \mid s, a)`: for each (s, a) the rows sum to 1;
                           impossible transitions are rows with 0
``policy``                 optional :math:`\pi(a \mid s)` (the same on every row of an
                           (s, a)); default uniform — the policy of the value-adjusted
                           canonicalisation
``gamma``                  the discount (a column constant over the table, or the kind
                           option ``gamma=``)
=========================  ===========================================================

Registered metrics (family ``reward``, lower is better, in [0, 1]): ``reward_starc`` (STARC
with the value-adjusted canonicalisation, needs :math:`\gamma < 1`), ``reward_starc_epic``
(STARC with the EPIC canonicalisation), ``reward_epic`` (EPIC) and ``reward_dard`` (DARD);
each is :math:`d(R, R^*)` of :mod:`scorebench.metrics.reward.starc` on the dense arrays
rebuilt from the group's rows.

Intervals: **none** (interval rule ``"none"``). The rows of an MDP table are not a sample
from a population: they are the cells of one reward function, and a row bootstrap would
drop and duplicate cells of :math:`R` and :math:`\tau`, which changes the MDP itself (a
resample is not even a complete MDP). The distance is a deterministic function of the two
rewards; its uncertainty, if any, lives in how the rewards were learned, which the table
does not carry. So ``evaluate`` reports the value with empty interval columns, whatever
``n_boot`` is.

Reference: Skalse et al. (2024), STARC, ICLR; Gleave et al. (2021), EPIC, ICLR; Wulfe et al.
(2022), DARD, ICLR.

Examples
--------
>>> import numpy as np, pandas as pd, scorebench
>>> rng = np.random.default_rng(0)
>>> S, A = 3, 2
>>> tau = rng.dirichlet(np.ones(S), size=(S, A))
>>> R = rng.normal(size=(S, A, S))
>>> s, a, s2 = (g.ravel() for g in np.meshgrid(range(S), range(A), range(S), indexing="ij"))
>>> phi = rng.normal(size=S)
>>> shaped = 2.0 * R + 0.9 * phi[None, None, :] - phi[:, None, None]   # scaling and potential shaping
>>> rows = lambda name, reward: pd.DataFrame({"system": name, "s": s, "a": a, "s_next": s2, "reward": reward.ravel(),
...                                           "reference": R.ravel(), "transition": tau.ravel()})
>>> t = pd.concat([rows("scaled", shaped), rows("negated", -R)])
>>> out = scorebench.evaluate(t, ["reward_starc", "reward_epic"], kind="mdp", gamma=0.9, n_boot=200)
>>> [(r.system, r.metric, round(r.value, 9)) for r in out.itertuples()]
[('negated', 'reward_starc', 1.0), ('negated', 'reward_epic', 1.0), ('scaled', 'reward_starc', 0.0), ('scaled', 'reward_epic', 0.0)]
>>> bool(out["ci_low"].isna().all())
True
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.core.registry import NO_EXTERNAL_REFERENCE, register
from scorebench.core.tables import Column, Inputs, Option, numeric_column, register_kind, start_table, unit_frame
from scorebench.core.validation import describe_rows
from scorebench.metrics.reward.starc import dard_distance, epic_distance, starc_distance

__all__ = ["extract_mdp", "mdp_arrays", "reward_starc", "reward_starc_epic", "reward_epic", "reward_dard"]

_NEEDED = ["s", "a", "s_next", "reward", "reference", "transition"]
_INPUTS = ("s", "a", "s_next", "reward", "reference", "transition", "policy", "states", "actions", "gamma")
_CITE = ("Skalse et al. (2024), STARC: A General Framework For Quantifying Differences Between Reward Functions, "
         "ICLR; Gleave et al. (2021), Quantifying Differences in Reward Functions (EPIC), ICLR; Wulfe et al. (2022), "
         "Dynamics-Aware Comparison of Learned Reward Functions (DARD), ICLR")


def _labels(series: pd.Series) -> list[str]:
    return series.astype(str).tolist()


def _gamma_of(df: pd.DataFrame, gamma: Any) -> float:
    """The discount: the kind option, or a ``gamma`` column constant over the table."""
    if "gamma" in df.columns:
        values = numeric_column(df, "gamma")
        if np.unique(values).size != 1:
            raise InputError(f"column 'gamma': expected one discount for the whole MDP, got {np.unique(values)[:5]}")
        if gamma is not None and float(gamma) != values[0]:
            raise InputError(f"gamma: the option ({gamma}) and the 'gamma' column ({values[0]}) disagree")
        gamma = values[0]
    if gamma is None:
        raise InputError("kind 'mdp': the discount is missing; give a 'gamma' column or the option gamma=<0..1> "
                         "(CLI: -O gamma=0.9)")
    try:
        g = float(gamma)
    except (TypeError, ValueError):
        raise InputError(f"gamma: expected a number in [0, 1], got {gamma!r}") from None
    if not 0.0 <= g <= 1.0:
        raise InputError(f"gamma: expected a discount in [0, 1], got {gamma!r}")
    return g


@register_kind("mdp", columns=(Column("s", "label", "the state"), Column("a", "label", "the action"),
                              Column("s_next", "label", "the next state"),
                              Column("reward", "number", "the system's reward R(s, a, s')"),
                              Column("reference", "number", "the reference reward"),
                              Column("transition", "probability", "P(s' | s, a)"),
                              Column("policy", "probability", "pi(a | s) of the comparison policy", required=False),
                              Column("gamma", "probability", "the discount (or the gamma option)", required=False)),
               options=(Option("gamma", float, None, "the discount factor in [0, 1] (else the gamma column)"),),
               whole_groups=True)
def extract_mdp(df: pd.DataFrame, *, nan_policy: str = "raise", gamma: Any = None) -> Inputs:
    """Reward functions of a finite MDP, one row per (system, s, a, s'), with a reference reward."""
    df, key = start_table(df, "mdp", _NEEDED, nan_policy)
    nan_ok = nan_policy == "propagate"
    states = sorted(set(_labels(df["s"])) | set(_labels(df["s_next"])))
    actions = sorted(set(_labels(df["a"])))
    s_code = {v: i for i, v in enumerate(states)}
    a_code = {v: i for i, v in enumerate(actions)}
    arrays = {"s": np.array([s_code[v] for v in _labels(df["s"])], dtype=np.int64),
              "a": np.array([a_code[v] for v in _labels(df["a"])], dtype=np.int64),
              "s_next": np.array([s_code[v] for v in _labels(df["s_next"])], dtype=np.int64),
              **{c: numeric_column(df, c, nan_ok=nan_ok) for c in ("reward", "reference", "transition")}}
    arrays["policy"] = (numeric_column(df, "policy", nan_ok=nan_ok) if "policy" in df.columns
                        else np.full(len(df), np.nan))
    for column in ("transition", "policy"):
        bad = (arrays[column] < 0) | (arrays[column] > 1)
        if bad.any():
            raise InputError(f"column {column!r}: probabilities must lie in [0, 1]; got "
                             f"{arrays[column][bad][0]!r} in {describe_rows(bad, df.index)}")
    frame = unit_frame(df, key)
    consts = {"states": tuple(states), "actions": tuple(actions), "gamma": _gamma_of(df, gamma)}
    return Inputs(frame, arrays, consts, key=key)


def mdp_arrays(s: Any, a: Any, s_next: Any, reward: Any, reference: Any, transition: Any, policy: Any,
               states: tuple[str, ...], actions: tuple[str, ...]) -> dict[str, Any]:
    """Dense ``R``, ``reference`` and ``transition`` of shape (S, A, S) and ``policy`` (S, A) or None.

    Every (s, a, s') triple must appear exactly once.

    Examples
    --------
    >>> out = mdp_arrays([0, 0, 1, 1], [0, 0, 0, 0], [0, 1, 0, 1], [1., 2, 3, 4], [0.] * 4, [.5] * 4,
    ...                  [np.nan] * 4, ("x", "y"), ("go",))
    >>> out["R"][:, 0, :].tolist(), out["policy"] is None
    ([[1.0, 2.0], [3.0, 4.0]], True)
    """
    S, A = len(states), len(actions)
    s, a, s_next = (np.asarray(v, dtype=np.int64) for v in (s, a, s_next))
    flat = (s * A + a) * S + s_next
    counts = np.bincount(flat, minlength=S * A * S)
    for what, cells in (("appears more than once", np.flatnonzero(counts > 1)),
                        ("is missing", np.flatnonzero(counts == 0))):
        if cells.size:
            i, k = np.unravel_index(cells[0], (S, A, S)), cells.size
            raise InputError(f"kind 'mdp': (s, a, s_next) = ({states[i[0]]}, {actions[i[1]]}, {states[i[2]]}) {what} "
                             f"for a system ({k} such triple(s)); each of the {S}x{A}x{S} triples needs exactly one row "
                             "per system (transition 0 for impossible ones)")
    out = {}
    for name, values in (("R", reward), ("reference", reference), ("transition", transition)):
        dense = np.empty(S * A * S)
        dense[flat] = np.asarray(values, dtype=np.float64)
        out[name] = dense.reshape(S, A, S)
    out["policy"] = _policy(np.asarray(policy, dtype=np.float64), flat, S, A)
    return out


def _policy(policy: np.ndarray, flat: np.ndarray, S: int, A: int) -> np.ndarray | None:
    if np.isnan(policy).all():
        return None
    if np.isnan(policy).any():
        raise InputError("column 'policy': missing for some rows; give pi(a|s) on every row or leave the column out")
    dense = np.empty(S * A * S)
    dense[flat] = policy
    dense = dense.reshape(S, A, S)
    if np.ptp(dense, axis=2).max() > 1e-12:
        raise InputError("column 'policy': pi(a|s) must be the same on every row of an (s, a) pair (it does not "
                         "depend on s_next)")
    return dense[:, :, 0]


@register("reward_starc", family="reward", kind="mdp", inputs=_INPUTS, higher_is_better=False, bounds=(0.0, 1.0),
          per_row=False, interval="none", citation=_CITE, tested_against=NO_EXTERNAL_REFERENCE)
def reward_starc(s: Any, a: Any, s_next: Any, reward: Any, reference: Any, transition: Any, policy: Any,
                 states: tuple[str, ...], actions: tuple[str, ...], gamma: float, /) -> float:
    r"""STARC distance (value-adjusted canonicalisation, L2 normalisation) between the reward and the reference.

    .. math:: d = \tfrac12 \lVert s(R) - s(R^*) \rVert_2,\quad s(R) = C_{VAL}(R) / \lVert C_{VAL}(R) \rVert_2

    with :math:`C_{VAL}` under the table's transition function and policy (default uniform);
    needs :math:`\gamma < 1`. See :func:`scorebench.metrics.reward.starc.starc_distance`.
    """
    d = mdp_arrays(s, a, s_next, reward, reference, transition, policy, states, actions)
    return starc_distance(d["R"], d["reference"], gamma, transition=d["transition"], policy=d["policy"])


@register("reward_starc_epic", family="reward", kind="mdp", inputs=_INPUTS, higher_is_better=False,
          bounds=(0.0, 1.0), per_row=False, interval="none", citation=_CITE, tested_against=NO_EXTERNAL_REFERENCE)
def reward_starc_epic(s: Any, a: Any, s_next: Any, reward: Any, reference: Any, transition: Any, policy: Any,
                      states: tuple[str, ...], actions: tuple[str, ...], gamma: float, /) -> float:
    r"""STARC distance with the EPIC canonicalisation (uniform state and action distributions).

    .. math:: d = \tfrac12 \lVert s(R) - s(R^*) \rVert_2,\quad s(R) = C_{EPIC}(R) / \lVert C_{EPIC}(R) \rVert_2
    """
    d = mdp_arrays(s, a, s_next, reward, reference, transition, policy, states, actions)
    return starc_distance(d["R"], d["reference"], gamma, canonical="epic")


@register("reward_epic", family="reward", kind="mdp", inputs=_INPUTS, higher_is_better=False, bounds=(0.0, 1.0),
          per_row=False, interval="none", citation=_CITE, tested_against=NO_EXTERNAL_REFERENCE)
def reward_epic(s: Any, a: Any, s_next: Any, reward: Any, reference: Any, transition: Any, policy: Any,
                states: tuple[str, ...], actions: tuple[str, ...], gamma: float, /) -> float:
    r"""EPIC distance: the Pearson distance :math:`\sqrt{(1 - \rho)/2}` of the EPIC-canonical rewards.

    Coverage :math:`D_S \times D_A \times D_S` with uniform state and action distributions.
    """
    d = mdp_arrays(s, a, s_next, reward, reference, transition, policy, states, actions)
    return epic_distance(d["R"], d["reference"], gamma)


@register("reward_dard", family="reward", kind="mdp", inputs=_INPUTS, higher_is_better=False, bounds=(0.0, 1.0),
          per_row=False, interval="none", citation=_CITE, tested_against=NO_EXTERNAL_REFERENCE)
def reward_dard(s: Any, a: Any, s_next: Any, reward: Any, reference: Any, transition: Any, policy: Any,
                states: tuple[str, ...], actions: tuple[str, ...], gamma: float, /) -> float:
    r"""DARD distance: the Pearson distance of the DARD-canonical rewards under the transition dynamics.

    Coverage: uniform states, uniform actions, next state from the table's transition function.
    """
    d = mdp_arrays(s, a, s_next, reward, reference, transition, policy, states, actions)
    return dard_distance(d["R"], d["reference"], gamma, transition=d["transition"])
