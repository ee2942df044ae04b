"""STARC, EPIC and DARD distances: invariances, metric axioms, bounds."""

from __future__ import annotations

import numpy as np
import pytest

from scorebench.core.errors import InputError
from scorebench.metrics.reward.starc import (dard_canonical, dard_distance, epic_canonical, epic_distance,
                                             reward_distances, starc_distance, value_canonical)

S, A, GAMMA = 5, 3, 0.9


@pytest.fixture(scope="module")
def mdp():
    rng = np.random.default_rng(0)
    tau = rng.dirichlet(np.ones(S) * 0.5, size=(S, A))
    rewards = rng.normal(size=(8, S, A, S))
    return tau, rewards, rng


def _shaped(R, rng, alpha):
    phi = rng.normal(size=S) * 3
    return alpha * R + GAMMA * phi[None, None, :] - phi[:, None, None]


def _all_distances(R1, R2, tau):
    return {"starc_value": starc_distance(R1, R2, GAMMA, transition=tau),
            "starc_epic": starc_distance(R1, R2, GAMMA, canonical="epic"),
            "epic": epic_distance(R1, R2, GAMMA),
            "dard": dard_distance(R1, R2, GAMMA, transition=tau)}


def test_zero_for_identical_and_shaped_scaled_rewards(mdp):
    tau, rewards, rng = mdp
    for R in rewards:
        for alpha in (1.0, 0.01, 37.0):
            R2 = _shaped(R, rng, alpha)
            for name, d in _all_distances(R, R2, tau).items():
                assert d == pytest.approx(0.0, abs=1e-9), name
            for name, d in _all_distances(R, R, tau).items():
                assert d == pytest.approx(0.0, abs=1e-12), name


def test_negation_is_maximal_and_values_bounded(mdp):
    tau, rewards, _ = mdp
    for R in rewards:
        for name, d in _all_distances(R, -R, tau).items():
            assert d == pytest.approx(1.0, abs=1e-12), name
    for i in range(len(rewards)):
        for j in range(len(rewards)):
            for name, d in _all_distances(rewards[i], rewards[j], tau).items():
                assert 0.0 <= d <= 1.0, name


def test_symmetric_and_triangle_inequality(mdp):
    tau, rewards, rng = mdp
    for _ in range(30):
        i, j, k = rng.choice(len(rewards), 3, replace=False)
        # mix in a trivial (shaping-only) reward sometimes: the zero guard must keep the axioms
        R = [rewards[i], rewards[j], _shaped(np.zeros((S, A, S)), rng, 1.0) if rng.uniform() < 0.3 else rewards[k]]
        d = {}
        for x in range(3):
            for y in range(3):
                d[x, y] = _all_distances(R[x], R[y], tau)
        for name in d[0, 1]:
            assert d[0, 1][name] == pytest.approx(d[1, 0][name], abs=1e-12)
            for x, y, z in ((0, 1, 2), (0, 2, 1), (1, 0, 2)):
                assert d[x, z][name] <= d[x, y][name] + d[y, z][name] + 1e-12


def test_trivial_reward_zero_guard(mdp):
    tau, rewards, rng = mdp
    trivial = _shaped(np.zeros((S, A, S)), rng, 1.0)
    assert starc_distance(trivial, np.zeros((S, A, S)), GAMMA, transition=tau) == 0.0
    assert starc_distance(trivial, rewards[0], GAMMA, transition=tau) == pytest.approx(0.5)
    assert epic_distance(trivial, rewards[0], GAMMA) == pytest.approx(0.5)
    assert np.isfinite(dard_distance(np.ones((S, A, S)), rewards[0], GAMMA, transition=tau))


def test_value_canonical_ignores_impossible_transitions_and_matches_definition(mdp):
    tau, rewards, rng = mdp
    sparse = tau.copy()
    sparse[:, :, 0] = 0.0
    sparse /= sparse.sum(axis=2, keepdims=True)
    R = rewards[0]
    R2 = R.copy()
    R2[:, :, 0] += 100.0  # only on transitions that never happen
    assert starc_distance(R, R2, GAMMA, transition=sparse) == pytest.approx(0.0, abs=1e-12)
    assert starc_distance(R, R2, GAMMA, canonical="epic") > 0.05  # EPIC does not know the dynamics
    # definition: E_{S'}[R(s,a,S') - V(s) + gamma V(S')] with V the uniform policy's value
    pi = np.full((S, A), 1 / A)
    P = np.einsum("sa,sax->sx", pi, tau)
    r = np.einsum("sa,sax,sax->s", pi, tau, R)
    V = np.linalg.solve(np.eye(S) - GAMMA * P, r)
    expected = np.array([[tau[s, a] @ (R[s, a] + GAMMA * V) - V[s] for a in range(A)] for s in range(S)])
    np.testing.assert_allclose(value_canonical(R, tau, GAMMA), expected, rtol=1e-12, atol=1e-12)


def test_epic_and_dard_canonical_by_sampling_definitions(mdp):
    tau, rewards, _ = mdp
    R = rewards[1]
    # EPIC with uniform D_S, D_A: brute-force expectation
    s, a, s2 = 1, 2, 3
    term = np.mean([GAMMA * R[s2, x, y] - R[s, x, y] for x in range(A) for y in range(S)]) \
        - GAMMA * R.mean()
    assert epic_canonical(R, GAMMA)[s, a, s2] == pytest.approx(R[s, a, s2] + term, rel=1e-12)
    # DARD: E[gamma R(s', A, S'') - R(s, A, S') - gamma R(S', A, S'')], S' ~ tau(s, A), S'' ~ tau(s', A)
    total = 0.0
    for x in range(A):
        total += GAMMA * tau[s2, x] @ R[s2, x] - tau[s, x] @ R[s, x]
        total -= GAMMA * sum(tau[s, x, u] * tau[s2, x, v] * R[u, x, v] for u in range(S) for v in range(S))
    assert dard_canonical(R, tau, GAMMA)[s, a, s2] == pytest.approx(R[s, a, s2] + total / A, rel=1e-12)


def test_epic_matches_pearson_distance_formula(mdp):
    _, rewards, _ = mdp
    c1, c2 = epic_canonical(rewards[2], GAMMA), epic_canonical(rewards[3], GAMMA)
    rho = np.corrcoef(c1.ravel(), c2.ravel())[0, 1]  # uniform coverage
    assert epic_distance(rewards[2], rewards[3], GAMMA) == pytest.approx(np.sqrt((1 - rho) / 2), rel=1e-12)


def test_input_errors(mdp):
    tau, rewards, _ = mdp
    with pytest.raises(InputError, match="shape"):
        starc_distance(np.zeros((3, 2)), np.zeros((3, 2)), GAMMA, canonical="epic")
    with pytest.raises(InputError, match="transition"):
        starc_distance(rewards[0], rewards[1], GAMMA)
    with pytest.raises(InputError, match="sums to"):
        starc_distance(rewards[0], rewards[1], GAMMA, transition=tau * 2)
    with pytest.raises(InputError, match="gamma"):
        starc_distance(rewards[0], rewards[1], 1.0, transition=tau)
    with pytest.raises(InputError, match="finite"):
        epic_distance(np.full((S, A, S), np.nan), rewards[1], GAMMA)
    with pytest.raises(InputError, match="policy"):
        starc_distance(rewards[0], rewards[1], GAMMA, transition=tau, policy=np.ones((S, A)))


def test_npz_cli(tmp_path, mdp):
    from click.testing import CliRunner

    from scorebench.cli import cli

    tau, rewards, rng = mdp
    stack = np.stack([rewards[0], _shaped(rewards[0], rng, 2.0), rewards[1]])
    path = tmp_path / "mdp.npz"
    np.savez(path, rewards=stack, transition=tau, gamma=GAMMA, names=np.array(["r", "r_shaped", "other"]))
    table = reward_distances(path)
    zero = table[(table.reward_1 == "r") & (table.reward_2 == "r_shaped")]
    assert len(zero) == 4 and (zero.value.abs() < 1e-9).all()
    out = tmp_path / "d.csv"
    result = CliRunner().invoke(cli, ["reward-distance", str(path), "--output", str(out)])
    assert result.exit_code == 0, result.output
    assert out.exists()
    bad = CliRunner().invoke(cli, ["reward-distance", str(tmp_path / "missing.npz")])
    assert bad.exit_code != 0 and "Traceback" not in bad.output
