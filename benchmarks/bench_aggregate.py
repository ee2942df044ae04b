"""Speed of scorebench.aggregate against pref_voting and choix, side by side in one process.

Run:  python benchmarks/bench_aggregate.py            (about 2-4 minutes on a loaded 2-core box)
      python benchmarks/bench_aggregate.py --quick    (smaller reference runs)

Targets (issue 4): exact Kemeny 12 candidates x 20 voters < 0.1 s, 20 candidates < 3 s,
40 candidates < 10 s; Borda and Copeland on 1,000 systems x 100 tasks < 0.2 s each;
Bradley-Terry on 100 systems x 100,000 battles with 1,000 bootstrap rounds < 5 s.

Every timing is printed as wall-clock seconds and process CPU seconds (the CPU figure is
less sensitive to other jobs on a shared machine); the 1-minute load average is printed
first so the noise can be judged. Reference-library timings that would take too long are
measured on a smaller size and extrapolated, and say so.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np

from scorebench.aggregate import get_method
from scorebench.aggregate.input import Battles, ScoreMatrix
from scorebench.aggregate.pairwise import bradley_terry_bootstrap, bt_fit


def timed(fn, repeat=3):
    """Best of ``repeat`` runs: (wall seconds, cpu seconds, result)."""
    best = (math.inf, math.inf, None)
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        w, c = time.perf_counter() - w0, time.process_time() - c0
        if w < best[0]:
            best = (w, c, out)
    return best


def matrix(values: np.ndarray) -> ScoreMatrix:
    n, k = values.shape
    return ScoreMatrix(values.astype(float), tuple(f"s{i}" for i in range(n)), tuple(f"t{j}" for j in range(k)),
                       np.ones(k, dtype=bool), np.ones(k))


def uniform_profile(rng, n, voters):
    """Impartial culture: every voter ranks the candidates uniformly at random (the hard case)."""
    return np.array([rng.permutation(n) for _ in range(voters)], dtype=float).T


def latent_profile(rng, n, voters):
    """Leaderboard-like: a latent quality plus per-task noise."""
    return rng.normal(size=n)[:, None] + rng.normal(size=(n, voters))


def line(label, wall, cpu, note=""):
    print(f"  {label:<58s} wall {wall:8.3f} s   cpu {cpu:8.3f} s  {note}")


def bench_kemeny(rng, quick):
    print("Kemeny-Young, exact (20 voters)")
    kem = get_method("kemeny").fn
    for n in (12, 20, 40):
        for name, gen in (("uniform", uniform_profile), ("latent", latent_profile)):
            m = matrix(gen(rng, n, 20))
            w, c, r = timed(lambda m=m: kem(m), repeat=3 if n < 40 else 1)
            solvers = sorted({s for s, _ in r.details["solvers"]})
            biggest = max(size for _, size in r.details["solvers"])
            line(f"scorebench n={n:2d} {name:8s}", w, c,
                 f"solver {'+'.join(solvers)}, largest block {biggest}, exact={r.details['exact']}")
    # pref_voting's kemeny_young enumerates all n! rankings; time it at n=8 and extrapolate.
    try:
        from pref_voting.other_methods import kemeny_young
        from pref_voting.profiles import Profile
    except ImportError:
        print("  pref_voting not installed; skipped")
        return
    n_ref = 7 if quick else 8
    rankings = [list(rng.permutation(n_ref)) for _ in range(20)]
    warm = Profile([list(range(4))] * 3)  # numba compilation outside the timing
    kemeny_young(warm)
    prof = Profile(rankings)
    w, c, winners = timed(lambda: kemeny_young(prof), repeat=1)
    ours = get_method("kemeny").fn(matrix(np.array([np.argsort(r) for r in rankings], dtype=float).T * -1.0))
    assert {int(s[1:]) for s in ours.details["winners"]} == set(winners)
    line(f"pref_voting kemeny_young n={n_ref} (brute force)", w, c)
    factor = math.factorial(12) / math.factorial(n_ref)
    print(f"  -> pref_voting at n=12 extrapolated: ~{w * factor:,.0f} s ({w * factor / 3600:.1f} h); "
          f"n=20 ~{w * math.factorial(20) / math.factorial(n_ref) / 3.15e7:.1e} years")


def bench_positional(rng, quick):
    print("Borda and Copeland, 1,000 systems x 100 tasks")
    values = latent_profile(rng, 1000, 100)
    m = matrix(values)
    for name in ("borda", "copeland"):
        fn = get_method(name).fn
        w, c, _ = timed(lambda fn=fn: fn(m), repeat=5)
        line(f"scorebench {name}", w, c)
    try:
        from pref_voting.profiles import Profile
    except ImportError:
        print("  pref_voting not installed; skipped")
        return
    n_ref = 200 if quick else 1000
    order = np.argsort(-values[:n_ref], axis=0).T  # one ranking per task
    warm = Profile([list(range(4))] * 3)
    warm.borda_scores(), warm.copeland_scores()
    w_build, c_build, prof = timed(lambda: Profile([list(map(int, r)) for r in order]), repeat=1)
    line(f"pref_voting Profile(...) n={n_ref}", w_build, c_build)
    w, c, ref = timed(lambda: prof.borda_scores(), repeat=1)
    line(f"pref_voting borda_scores n={n_ref}", w, c, "(+ Profile build above)")
    ours = get_method("borda").fn(matrix(values[:n_ref])).scores
    assert np.allclose(ours, [ref[i] for i in range(n_ref)])
    w, c, ref = timed(lambda: prof.copeland_scores(), repeat=1)
    line(f"pref_voting copeland_scores n={n_ref}", w, c)
    ours = get_method("copeland").fn(matrix(values[:n_ref])).scores
    assert np.allclose(ours, [ref[i] for i in range(n_ref)])


def bench_bradley_terry(rng, quick):
    print("Bradley-Terry, 100 systems x 100,000 battles (10% ties)")
    n, N = 100, 100_000
    strength = np.linspace(-2, 2, n)
    a = rng.integers(n, size=N)
    b = (a + rng.integers(1, n, size=N)) % n
    p = 1 / (1 + np.exp(-(strength[a] - strength[b])))
    outcome = np.where(rng.random(N) < 0.1, 0.5, (rng.random(N) < p).astype(float))
    battles = Battles(tuple(f"m{i}" for i in range(n)), a, b, outcome, np.ones(N))
    W = battles.wins()
    w, c, theta = timed(lambda: bt_fit(W), repeat=3)
    line("scorebench fit (Newton on the wins matrix)", w, c)
    w, c, boot = timed(lambda: bradley_terry_bootstrap(battles, 1000, np.random.default_rng(0)), repeat=1)
    width = np.median(np.ptp(np.quantile(boot, [0.025, 0.975], axis=0), axis=0))
    line("scorebench fit + 1,000 bootstrap rounds", w, c, f"(median CI width {width:.1f} Elo)")
    try:
        import choix
    except ImportError:
        print("  choix not installed; skipped")
        return
    decisive = outcome != 0.5  # choix has no ties: decisive battles only
    winner = np.where(outcome == 1, a, b)[decisive]
    loser = np.where(outcome == 1, b, a)[decisive]
    data = list(zip(winner.tolist(), loser.tolist()))
    w, c, ref = timed(lambda: choix.ilsr_pairwise(n, data, alpha=0.0, tol=1e-10), repeat=1)
    line("choix ilsr_pairwise (decisive battles only)", w, c)
    Wd = np.zeros((n, n))
    np.add.at(Wd, (winner, loser), 1.0)
    assert np.allclose(bt_fit(Wd), ref - ref.mean(), atol=1e-6)
    rounds = 3 if quick else 10
    idx_rng = np.random.default_rng(1)

    def choix_boot():
        for _ in range(rounds):
            pick = idx_rng.integers(len(data), size=len(data))
            choix.ilsr_pairwise(n, [data[i] for i in pick], alpha=0.0, tol=1e-8)

    w, c, _ = timed(choix_boot, repeat=1)
    line(f"choix bootstrap, {rounds} rounds", w, c, f"-> 1,000 rounds extrapolated ~{w * 1000 / rounds:,.0f} s")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller reference-library runs")
    args = parser.parse_args(argv)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, {os.cpu_count()} cpus, load average {load:.1f}")
    rng = np.random.default_rng(0)
    bench_kemeny(rng, args.quick)
    bench_positional(rng, args.quick)
    bench_bradley_terry(rng, args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
