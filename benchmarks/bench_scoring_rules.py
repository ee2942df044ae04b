"""Benchmark: scorebench's ensemble CRPS and energy score against scoringrules (numba backend).

Run from the repository root::

    python benchmarks/bench_scoring_rules.py            # full size (about 5 minutes)
    python benchmarks/bench_scoring_rules.py --scale 0.1  # quick check

Targets (issue 2): CRPS of 1,000,000 x 50 ensembles at least 2x faster than scoringrules'
numba backend (warm) and at most 1.5x the cost of sorting the array; energy score of
100,000 x 50 x 10 at least 10x faster than scoringrules (numba) with peak memory under 1 GB.
Each timing is the best of ``--repeat`` interleaved runs, as wall-clock and as CPU time of
the process: on a shared, overloaded machine the CPU-time ratios are the steadier measure.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
import tracemalloc

import numpy as np


def timed(fn):
    """(wall seconds, CPU seconds of this process, result) of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def peak_rss_mib() -> float:
    """High-water resident set size of this process (VmHWM resets at exec, unlike ru_maxrss)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def race(runs, repeat):
    """Interleave the contenders ``repeat`` times; best wall and best CPU time of each."""
    wall: dict[str, float] = {}
    cpu: dict[str, float] = {}
    results = {}
    for _ in range(repeat):  # interleaved so that load spikes hit every contender
        for name, fn in runs.items():
            w, c, results[name] = timed(fn)
            wall[name] = min(w, wall.get(name, float("inf")))
            cpu[name] = min(c, cpu.get(name, float("inf")))
    return wall, cpu, results


def report(wall, cpu):
    for name in wall:
        print(f"  {name:36s} {wall[name]:8.3f} s wall {cpu[name]:8.3f} s CPU")


def traced_peak(fn):
    """Peak memory (bytes) newly allocated by ``fn`` (numpy buffers are traced)."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    fn()
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    return peak


def energy_memory_only(args) -> None:
    """Peak resident memory of a fresh process that builds the inputs and scores them."""
    from scorebench.metrics.scoring_rules import energy_score

    gen = np.random.default_rng(args.seed)
    n = int(100_000 * args.scale)
    obs, ens = gen.normal(size=(n, 10)), gen.normal(size=(n, 50, 10))
    before = peak_rss_mib()
    energy_score(obs, ens)
    print(f"{before:.0f} {peak_rss_mib():.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the full problem sizes")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--energy-memory-only", action="store_true",
                        help="internal: run scorebench's energy score alone and print the peak RSS")
    args = parser.parse_args()
    if args.energy_memory_only:
        energy_memory_only(args)
        return

    from scorebench.metrics.scoring_rules import crps_ensemble, energy_score

    gen = np.random.default_rng(args.seed)
    n_crps, members = int(1_000_000 * args.scale), 50
    n_es, es_members, dims = int(100_000 * args.scale), 50, 10
    obs = gen.normal(size=n_crps)
    ens = gen.normal(size=(n_crps, members))
    obs_mv = gen.normal(size=(n_es, dims))
    ens_mv = gen.normal(size=(n_es, es_members, dims))

    # scorebench first, before scoringrules pulls numba in
    crps_ensemble(obs[:10], ens[:10])
    assert "numba" not in sys.modules, "scorebench must not import numba"
    es_peak = traced_peak(lambda: energy_score(obs_mv, ens_mv))
    crps_peak = traced_peak(lambda: crps_ensemble(obs, ens))

    import scoringrules as sr

    sr.crps_ensemble(obs[:10], ens[:10], estimator="qd", backend="numba")  # compile (warm-up)
    sr.crps_ensemble(obs[:10], ens[:10], estimator="pwm", backend="numba")
    sr.energy_score(obs_mv[:10], ens_mv[:10], backend="numba")
    sr.energy_score(obs_mv[:10], ens_mv[:10], estimator="fair", backend="numba")

    print(f"numpy {np.__version__}, scoringrules {sr.__version__ if hasattr(sr, '__version__') else '?'}; "
          f"best of {args.repeat} interleaved runs\n")

    # --- CRPS from ensembles -----------------------------------------------------------
    runs = {
        "scorebench standard": lambda: crps_ensemble(obs, ens),
        "scorebench fair": lambda: crps_ensemble(obs, ens, estimator="fair"),
        "scoringrules numba qd (standard)": lambda: sr.crps_ensemble(obs, ens, estimator="qd", backend="numba"),
        "scoringrules numba pwm (fair)": lambda: sr.crps_ensemble(obs, ens, estimator="pwm", backend="numba"),
        "np.sort(ens, axis=-1)": lambda: np.sort(ens, axis=-1),
        "ens.copy().sort(axis=-1)": lambda: ens.copy().sort(axis=-1),
    }
    best, cpu, results = race(runs, args.repeat)
    np.testing.assert_allclose(results["scorebench standard"], results["scoringrules numba qd (standard)"], rtol=1e-10)
    np.testing.assert_allclose(results["scorebench fair"], results["scoringrules numba pwm (fair)"],
                               rtol=1e-10, atol=1e-12)
    print(f"CRPS ensemble, {n_crps:,} x {members} (float64)")
    report(best, cpu)
    for label, t in (("wall", best), ("CPU", cpu)):
        print(f"  [{label}] speed-up vs scoringrules numba: standard "
              f"{t['scoringrules numba qd (standard)'] / t['scorebench standard']:.1f}x, fair "
              f"{t['scoringrules numba pwm (fair)'] / t['scorebench fair']:.1f}x (target >= 2x); cost / np.sort "
              f"{t['scorebench standard'] / t['np.sort(ens, axis=-1)']:.2f}x, / copy + in-place sort "
              f"{t['scorebench standard'] / t['ens.copy().sort(axis=-1)']:.2f}x (target <= 1.5x)")
    print(f"  scorebench working memory: {crps_peak / 2**20:.1f} MiB beyond inputs and output\n")

    # --- energy score ------------------------------------------------------------------
    runs = {
        "scorebench standard": lambda: energy_score(obs_mv, ens_mv),
        "scorebench fair": lambda: energy_score(obs_mv, ens_mv, estimator="fair"),
        "scoringrules numba nrg (standard)": lambda: sr.energy_score(obs_mv, ens_mv, backend="numba"),
        "scoringrules numba fair": lambda: sr.energy_score(obs_mv, ens_mv, estimator="fair", backend="numba"),
    }
    best, cpu, results = race(runs, max(1, args.repeat - 1))
    np.testing.assert_allclose(results["scorebench standard"], results["scoringrules numba nrg (standard)"], rtol=1e-10)
    np.testing.assert_allclose(results["scorebench fair"], results["scoringrules numba fair"], rtol=1e-10)
    print(f"Energy score, {n_es:,} x {es_members} members x {dims} dims (float64)")
    report(best, cpu)
    for label, t in (("wall", best), ("CPU", cpu)):
        print(f"  [{label}] speed-up vs scoringrules numba: standard "
              f"{t['scoringrules numba nrg (standard)'] / t['scorebench standard']:.1f}x, fair "
              f"{t['scoringrules numba fair'] / t['scorebench fair']:.1f}x (target >= 10x)")
    print(f"  scorebench working memory: {es_peak / 2**20:.1f} MiB beyond the {ens_mv.nbytes / 2**20:.0f} MiB input "
          f"(target: peak < 1 GB)")
    import subprocess

    fresh = subprocess.run([sys.executable, __file__, "--energy-memory-only", "--scale", str(args.scale),
                            "--seed", str(args.seed)], capture_output=True, text=True, check=True)
    before, after = map(float, fresh.stdout.split())
    print(f"  peak RSS of a fresh process scoring it with scorebench: {after:.0f} MiB "
          f"({before:.0f} MiB after building the inputs; target < 1 GB)")


if __name__ == "__main__":
    main()
