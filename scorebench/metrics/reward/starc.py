r"""Distances between reward functions of a finite MDP: STARC, EPIC and DARD.

Two reward functions that induce the same preferences over policies should be at distance
0, however they differ numerically (potential shaping, positive scaling). The metrics here
*canonicalise* a reward :math:`R(s, a, s')` to remove potential shaping, then compare the
canonical rewards up to positive scaling.

* **EPIC canonicalisation** (Gleave et al., 2021), with :math:`S, S' \sim D_S`,
  :math:`A \sim D_A` independent:

  .. math:: C_{EPIC}(R)(s,a,s') = R(s,a,s') + \mathbb E[\gamma R(s',A,S') - R(s,A,S') - \gamma R(S,A,S')]

* **value-adjusted canonicalisation** (Skalse et al., 2024), with :math:`V^\pi` the value of
  policy :math:`\pi` (default uniform) under :math:`R` and transitions :math:`\tau`:

  .. math:: C_{VAL}(R)(s,a) = \mathbb E_{S' \sim \tau(s,a)}[R(s,a,S') - V^\pi(s) + \gamma V^\pi(S')]

  (also invariant to changes of :math:`R` on transitions that cannot occur);
* **DARD canonicalisation** (Wulfe et al., 2022), with :math:`A \sim D_A`,
  :math:`S' \sim \tau(s, A)`, :math:`S'' \sim \tau(s', A)`:

  .. math:: C_{DARD}(R)(s,a,s') = R(s,a,s') + \mathbb E[\gamma R(s',A,S'') - R(s,A,S') - \gamma R(S',A,S'')]

Distances:

* **STARC**: :math:`d(R_1, R_2) = \tfrac12 \lVert s(R_1) - s(R_2) \rVert_2` with
  :math:`s(R) = C(R)/\lVert C(R)\rVert_2`, or :math:`s(R) = 0` when :math:`\lVert C(R)\rVert_2`
  is (numerically) zero — a reward that makes every policy equally good. The factor 1/2
  puts the distance in [0, 1] (1 for :math:`R_2 = -R_1`); Skalse et al. define STARC
  metrics up to such a constant.
* **EPIC** and **DARD**: the Pearson distance :math:`\sqrt{(1 - \rho)/2}` in [0, 1] between
  the canonical rewards under a coverage distribution :math:`D(s, a, s')` (EPIC default
  :math:`D_S \times D_A \times D_S`, DARD default uniform :math:`s`, :math:`D_A`, then
  :math:`\tau`). A canonical reward that is constant under :math:`D` has no correlation;
  it is treated as the zero vector of the standardised rewards, so its distance is 0 to
  another constant one and 1/2 to any other (the Pearson distance is half the weighted L2
  distance of standardised rewards, so this keeps the triangle inequality).

All three are pseudometrics: symmetric, satisfying the triangle inequality, and 0 between
:math:`R` and :math:`\alpha R + \gamma\Phi(s') - \Phi(s)` for :math:`\alpha > 0`.

References
----------
Skalse, J., Farnik, L., Motwani, S. R., Jenner, E., Gleave, A., Abate, A. (2024). STARC: A
General Framework For Quantifying Differences Between Reward Functions. ICLR.
Gleave, A., Dennis, M., Legg, S., Russell, S., Leike, J. (2021). Quantifying Differences in
Reward Functions. ICLR. Wulfe, B. et al. (2022). Dynamics-Aware Comparison of Learned Reward
Functions. ICLR.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from scorebench.core.errors import InputError
from scorebench.core.validation import check_choice

__all__ = ["epic_canonical", "value_canonical", "dard_canonical", "starc_distance", "epic_distance",
           "dard_distance", "reward_distances", "ZERO_TOL"]

ZERO_TOL = 1e-9  # a canonical reward with norm below ZERO_TOL * ||R|| is the zero reward


def _reward(R: Any, name: str = "R") -> np.ndarray:
    arr = np.asarray(R, dtype=np.float64)
    if arr.ndim != 3 or arr.shape[0] != arr.shape[2] or min(arr.shape) < 1:
        raise InputError(f"{name}: expected an array R[s, a, s'] of shape (S, A, S), got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise InputError(f"{name}: expected finite rewards")
    return arr


def _gamma(gamma: Any, *, strict: bool = False) -> float:
    try:
        g = float(gamma)
    except (TypeError, ValueError):
        raise InputError(f"gamma: expected a number in [0, 1], got {gamma!r}") from None
    if not (0.0 <= g < 1.0 if strict else 0.0 <= g <= 1.0):
        raise InputError(f"gamma: expected a discount in [0, {'1)' if strict else '1]'}, got {gamma!r}")
    return g


def _dist(p: Any, size: int, name: str) -> np.ndarray:
    if p is None:
        return np.full(size, 1.0 / size)
    arr = np.asarray(p, dtype=np.float64)
    if arr.shape != (size,) or not np.isfinite(arr).all() or (arr < 0).any() or abs(arr.sum() - 1) > 1e-8:
        raise InputError(f"{name}: expected a probability vector of length {size} (non-negative, summing to 1)")
    return arr


def _transition(tau: Any, shape: tuple[int, ...]) -> np.ndarray:
    if tau is None:
        raise InputError("this canonicalisation needs the transition function tau[s, a, s']")
    arr = np.asarray(tau, dtype=np.float64)
    if arr.shape != shape:
        raise InputError(f"transition: expected shape {shape} like the reward, got {arr.shape}")
    if not np.isfinite(arr).all() or (arr < 0).any():
        raise InputError("transition: expected non-negative finite probabilities")
    bad = np.abs(arr.sum(axis=2) - 1.0) > 1e-8
    if bad.any():
        s, a = np.argwhere(bad)[0]
        raise InputError(f"transition: tau[{s}, {a}, :] sums to {arr[s, a].sum():.6g}; expected 1")
    return arr


def _policy(policy: Any, S: int, A: int) -> np.ndarray:
    if policy is None:
        return np.full((S, A), 1.0 / A)
    arr = np.asarray(policy, dtype=np.float64)
    if arr.shape != (S, A) or not np.isfinite(arr).all() or (arr < 0).any() \
            or (np.abs(arr.sum(axis=1) - 1) > 1e-8).any():
        raise InputError(f"policy: expected pi[s, a] of shape ({S}, {A}) with rows summing to 1")
    return arr


def epic_canonical(R: Any, gamma: float, *, state_dist: Any = None, action_dist: Any = None) -> np.ndarray:
    r"""EPIC canonicalisation of ``R[s, a, s']`` (shape (S, A, S)); see the module docstring.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> phi = rng.normal(size=3)
    >>> shaping = 0.9 * phi[None, None, :] - phi[:, None, None] + np.zeros((3, 2, 3))
    >>> bool(np.allclose(epic_canonical(shaping, 0.9), 0))
    True
    """
    R = _reward(R)
    g = _gamma(gamma)
    S, A, _ = R.shape
    ds = _dist(state_dist, S, "state_dist")
    da = _dist(action_dist, A, "action_dist")
    m = np.einsum("xay,a,y->x", R, da, ds)  # E[R(x, A, S')]
    return R + g * m[None, None, :] - m[:, None, None] - g * float(ds @ m)


def _values(R: np.ndarray, tau: np.ndarray, gamma: float, pi: np.ndarray) -> np.ndarray:
    r_pi = np.einsum("sa,sax,sax->s", pi, tau, R)
    P = np.einsum("sa,sax->sx", pi, tau)
    return np.linalg.solve(np.eye(len(r_pi)) - gamma * P, r_pi)


def value_canonical(R: Any, transition: Any, gamma: float, *, policy: Any = None) -> np.ndarray:
    r"""Value-adjusted canonicalisation :math:`C_{VAL}(R)(s, a)`, shape (S, A); needs ``gamma < 1``.

    Examples
    --------
    >>> tau = np.full((2, 2, 2), 0.5)
    >>> value_canonical(np.ones((2, 2, 2)), tau, 0.5)   # a constant reward is trivial
    array([[0., 0.],
           [0., 0.]])
    """
    R = _reward(R)
    g = _gamma(gamma, strict=True)
    tau = _transition(transition, R.shape)
    V = _values(R, tau, g, _policy(policy, R.shape[0], R.shape[1]))
    return np.einsum("sax,sax->sa", tau, R + g * V[None, None, :]) - V[:, None]


def dard_canonical(R: Any, transition: Any, gamma: float, *, action_dist: Any = None) -> np.ndarray:
    r"""DARD canonicalisation of ``R[s, a, s']`` (shape (S, A, S)); see the module docstring.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> tau = rng.dirichlet(np.ones(3), size=(3, 2))
    >>> phi = rng.normal(size=3)
    >>> shaping = 0.9 * phi[None, None, :] - phi[:, None, None] + np.zeros((3, 2, 3))
    >>> bool(np.allclose(dard_canonical(shaping, tau, 0.9), 0))
    True
    """
    R = _reward(R)
    g = _gamma(gamma)
    tau = _transition(transition, R.shape)
    da = _dist(action_dist, R.shape[1], "action_dist")
    u = np.einsum("a,yax,yax->y", da, tau, R)  # E[R(y, A, S')] with S' ~ tau(y, A)
    cross = np.einsum("a,sax,yaz,xaz->sy", da, tau, tau, R, optimize=True)  # E[R(S', A, S'')]
    return R + g * u[None, None, :] - u[:, None, None] - g * cross[:, None, :]


def _unit(c: np.ndarray, scale: float) -> np.ndarray:
    norm = float(np.linalg.norm(c))
    return np.zeros_like(c) if norm <= ZERO_TOL * max(scale, np.finfo(float).tiny) else c / norm


def starc_distance(R1: Any, R2: Any, gamma: float, *, transition: Any = None, canonical: str = "value",
                   policy: Any = None, state_dist: Any = None, action_dist: Any = None) -> float:
    r"""STARC distance :math:`\tfrac12\lVert C(R_1)/\lVert C(R_1)\rVert - C(R_2)/\lVert C(R_2)\rVert\rVert_2`.

    ``canonical="value"`` (default; needs ``transition`` and ``gamma < 1``, optional
    ``policy``) or ``"epic"`` (optional ``state_dist``, ``action_dist``). In [0, 1]; 0 for
    rewards equal up to potential shaping and positive scaling, 1 for :math:`R_2 = -R_1`
    (non-trivial), 1/2 between a trivial and a non-trivial reward.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> tau = rng.dirichlet(np.ones(4), size=(4, 2))
    >>> R = rng.normal(size=(4, 2, 4))
    >>> phi = rng.normal(size=4)
    >>> R2 = 3.0 * R + 0.9 * phi[None, None, :] - phi[:, None, None]
    >>> round(starc_distance(R, R2, 0.9, transition=tau), 9), round(starc_distance(R, -R, 0.9, transition=tau), 9)
    (0.0, 1.0)
    """
    check_choice(canonical, "canonical", ("value", "epic"))
    R1, R2 = _reward(R1, "R1"), _reward(R2, "R2")
    if R1.shape != R2.shape:
        raise InputError(f"R1 and R2 must have the same shape, got {R1.shape} and {R2.shape}")
    if canonical == "value":
        c1 = value_canonical(R1, transition, gamma, policy=policy)
        c2 = value_canonical(R2, transition, gamma, policy=policy)
    else:
        c1 = epic_canonical(R1, gamma, state_dist=state_dist, action_dist=action_dist)
        c2 = epic_canonical(R2, gamma, state_dist=state_dist, action_dist=action_dist)
    d = 0.5 * float(np.linalg.norm(_unit(c1, np.linalg.norm(R1)) - _unit(c2, np.linalg.norm(R2))))
    return min(max(d, 0.0), 1.0)


def _coverage(coverage: Any, shape: tuple[int, ...], default: np.ndarray) -> np.ndarray:
    if coverage is None:
        return default
    arr = np.asarray(coverage, dtype=np.float64)
    if arr.shape != shape or not np.isfinite(arr).all() or (arr < 0).any() or abs(arr.sum() - 1) > 1e-8:
        raise InputError(f"coverage: expected a distribution D[s, a, s'] of shape {shape} summing to 1")
    return arr


def _pearson_distance(c1: np.ndarray, c2: np.ndarray, w: np.ndarray, scales: tuple[float, float]) -> float:
    z = []
    for c, scale in zip((c1, c2), scales):
        centred = c - float((w * c).sum())
        sd = float(np.sqrt((w * centred**2).sum()))
        z.append(np.zeros_like(c) if sd <= ZERO_TOL * max(scale, np.finfo(float).tiny) else centred / sd)
    d = 0.5 * float(np.sqrt((w * (z[0] - z[1]) ** 2).sum()))
    return min(max(d, 0.0), 1.0)


def epic_distance(R1: Any, R2: Any, gamma: float, *, state_dist: Any = None, action_dist: Any = None,
                  coverage: Any = None) -> float:
    r"""EPIC distance: Pearson distance :math:`\sqrt{(1-\rho)/2}` of the EPIC-canonical rewards under ``coverage``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> R = rng.normal(size=(3, 2, 3))
    >>> round(epic_distance(R, 2.0 * R + 1.0, 0.9), 12), round(epic_distance(R, -R, 0.9), 12)
    (0.0, 1.0)
    """
    R1, R2 = _reward(R1, "R1"), _reward(R2, "R2")
    if R1.shape != R2.shape:
        raise InputError(f"R1 and R2 must have the same shape, got {R1.shape} and {R2.shape}")
    S, A, _ = R1.shape
    ds = _dist(state_dist, S, "state_dist")
    da = _dist(action_dist, A, "action_dist")
    w = _coverage(coverage, R1.shape, ds[:, None, None] * da[None, :, None] * ds[None, None, :])
    c1 = epic_canonical(R1, gamma, state_dist=ds, action_dist=da)
    c2 = epic_canonical(R2, gamma, state_dist=ds, action_dist=da)
    return _pearson_distance(c1, c2, w, (float(np.linalg.norm(R1)), float(np.linalg.norm(R2))))


def dard_distance(R1: Any, R2: Any, gamma: float, *, transition: Any, action_dist: Any = None,
                  coverage: Any = None) -> float:
    r"""DARD distance: Pearson distance of the DARD-canonical rewards under ``coverage``.

    Default coverage: uniform states, ``action_dist`` actions, next state from ``transition``.

    Examples
    --------
    >>> rng = np.random.default_rng(2)
    >>> tau = rng.dirichlet(np.ones(3), size=(3, 2))
    >>> R = rng.normal(size=(3, 2, 3))
    >>> round(dard_distance(R, 0.5 * R, 0.9, transition=tau), 12)
    0.0
    """
    R1, R2 = _reward(R1, "R1"), _reward(R2, "R2")
    if R1.shape != R2.shape:
        raise InputError(f"R1 and R2 must have the same shape, got {R1.shape} and {R2.shape}")
    tau = _transition(transition, R1.shape)
    S, A, _ = R1.shape
    da = _dist(action_dist, A, "action_dist")
    w = _coverage(coverage, R1.shape, (1.0 / S) * da[None, :, None] * tau)
    c1 = dard_canonical(R1, tau, gamma, action_dist=da)
    c2 = dard_canonical(R2, tau, gamma, action_dist=da)
    return _pearson_distance(c1, c2, w, (float(np.linalg.norm(R1)), float(np.linalg.norm(R2))))


def reward_distances(mdp: Any, *, policy: Any = None) -> "Any":
    """All pairwise STARC (value and EPIC canonical), EPIC and DARD distances of an MDP file.

    ``mdp`` is a mapping or an ``.npz`` path with ``rewards`` (shape (K, S, A, S): K reward
    functions), ``gamma``, optional ``transition`` (S, A, S), ``names`` (K,) and ``policy``
    (S, A). Returns a long DataFrame ``reward_1``, ``reward_2``, ``distance``, ``value``;
    distances that need the transition function are left out without one.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> R = rng.normal(size=(3, 2, 3))
    >>> out = reward_distances({"rewards": np.stack([R, 2 * R]), "gamma": 0.9})
    >>> out["value"].round(12).tolist()
    [0.0, 0.0]
    """
    import pandas as pd

    if isinstance(mdp, (str, Path)):
        path = Path(mdp)
        try:
            with np.load(path, allow_pickle=False) as data:
                mdp = {k: data[k] for k in data.files}
        except (OSError, ValueError) as exc:
            raise InputError(f"{path}: cannot read an .npz MDP file ({exc})") from None
    if "rewards" not in mdp or "gamma" not in mdp:
        raise InputError(f"MDP: expected arrays 'rewards' (K, S, A, S) and 'gamma'; got {sorted(mdp)}")
    rewards = np.asarray(mdp["rewards"], dtype=np.float64)
    if rewards.ndim != 4 or rewards.shape[0] < 2:
        raise InputError(f"rewards: expected shape (K, S, A, S) with K >= 2 reward functions, got {rewards.shape}")
    gamma = float(np.asarray(mdp["gamma"]))
    names = [str(n) for n in np.asarray(mdp.get("names", np.arange(rewards.shape[0])))]
    if len(names) != rewards.shape[0]:
        raise InputError(f"names: expected {rewards.shape[0]} names, got {len(names)}")
    tau = mdp.get("transition")
    policy = mdp.get("policy", policy)
    rows = []
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            R1, R2 = rewards[i], rewards[j]
            values = {"starc_epic": starc_distance(R1, R2, gamma, canonical="epic"),
                      "epic": epic_distance(R1, R2, gamma)}
            if tau is not None:
                if gamma < 1:
                    values["starc_value"] = starc_distance(R1, R2, gamma, transition=tau, policy=policy)
                values["dard"] = dard_distance(R1, R2, gamma, transition=tau)
            rows += [{"reward_1": names[i], "reward_2": names[j], "distance": k, "value": v}
                     for k, v in values.items()]
    return pd.DataFrame(rows)
