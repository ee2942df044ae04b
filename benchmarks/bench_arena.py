"""Arena-scale Bradley–Terry with sandwich intervals: scorebench vs arena-rank 0.1.1, one run.

Draws ``--battles`` seeded battles among ``--models`` models (BT strengths, 30% ties), writes
them once to a Parquet file, then times

* scorebench: ``as_battles`` (strings -> codes), ``pair_counts`` + Newton ``bt_fit`` +
  ``bt_sandwich`` (what ``aggregate(battles, "bradley_terry")`` does for sandwich intervals);
* arena-rank 0.1.1 in its own virtual environment, as a subprocess of this script:
  ``PairDataset.from_pandas`` + ``BradleyTerry.compute_ratings_and_cis(ci_method="sandwich")``
  (default tolerances; JAX compile time included, as a user pays it once per process).

and prints the times, their ratio and the largest rating / bound difference (Elo). Peak memory
of the scorebench part is measured with ``tracemalloc``. Run::

    python benchmarks/bench_arena.py --battles 1000000          # ~1 min on 2 shared cores
    python benchmarks/bench_arena.py --battles 6000000 --models 400
    python benchmarks/bench_arena.py --battles 100000 --no-arena-rank --dask-battles 100000000
    python benchmarks/bench_arena.py --battles 1000 --no-arena-rank --style-battles 6000000 --style-rounds 4

The arena-rank side needs ``/work/venvs/arena`` (``python -m venv /work/venvs/arena &&
/work/venvs/arena/bin/pip install arena-rank==0.1.1``); ``--arena-python`` points elsewhere,
``--no-arena-rank`` skips it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ARENA_SCRIPT = r"""
import json, sys, time
import numpy as np, pandas as pd
t0 = time.perf_counter()
from arena_rank.models.bradley_terry import BradleyTerry
from arena_rank.utils.data_utils import PairDataset
t_import = time.perf_counter() - t0
df = pd.read_parquet(sys.argv[1])
t0 = time.perf_counter(); c0 = time.process_time()
ds = PairDataset.from_pandas(df)
t_data = time.perf_counter() - t0
model = BradleyTerry(len(ds.competitors))
out = model.compute_ratings_and_cis(ds, ci_method="sandwich")
r = np.asarray(out["ratings"]); lo = np.asarray(out["rating_lower"])
wall = time.perf_counter() - t0; cpu = time.process_time() - c0
json.dump({"wall": wall, "cpu": cpu, "dedup": t_data, "import": t_import, "competitors": list(ds.competitors),
           "ratings": r.tolist(), "lower": lo.tolist()}, sys.stdout)
"""


ARENA_STYLE_SCRIPT = r"""
import json, sys, time
import numpy as np, pandas as pd
from arena_rank.models.contextual_bradley_terry import ContextualBradleyTerry
from arena_rank.utils.data_utils import ContextualPairDataset
df = pd.read_parquet(sys.argv[1])
feats = [c for c in df.columns if c.startswith("x_")]
t0 = time.perf_counter(); c0 = time.process_time()
ds = ContextualPairDataset.from_pandas(df, feature_cols=feats, reweighted=True)
model = ContextualBradleyTerry(len(ds.competitors), len(feats))
out = model.compute_ratings_and_cis(ds, ci_method="sandwich")
r = np.asarray(out["ratings"])
json.dump({"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0, "competitors": list(ds.competitors),
           "ratings": r.tolist()}, sys.stdout)
"""


def simulate(n_battles: int, n_models: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    strength = rng.normal(0.0, 0.8, n_models)
    a = rng.integers(n_models, size=n_battles)
    b = (a + rng.integers(1, n_models, size=n_battles)) % n_models
    d = strength[a] - strength[b]
    pa, pb = np.exp(d / 2), np.exp(-d / 2)
    u = rng.random(n_battles) * (pa + pb + 0.85)  # Davidson ties, ~30%
    winner = np.where(u < pa, 0, np.where(u < pa + pb, 1, 2))
    names = np.array([f"model-{i:03d}" for i in range(n_models)])
    labels = np.array(["model_a", "model_b", "tie"])
    return pd.DataFrame({"model_a": pd.Categorical(names[a]), "model_b": pd.Categorical(names[b]),
                         "winner": pd.Categorical(labels[winner])})


def run_scorebench(df: pd.DataFrame) -> dict:
    from scorebench.aggregate.input import as_battles
    from scorebench.aggregate.pair_counts import bt_sandwich, normal_bounds, pair_counts
    from scorebench.aggregate.pairwise import bt_fit, to_elo_scale

    tracemalloc.start()
    t0 = time.perf_counter()
    c0 = time.process_time()
    battles = as_battles(df)
    t_read = time.perf_counter() - t0
    t1 = time.perf_counter()
    pc = pair_counts(battles)
    t_dedup = time.perf_counter() - t1
    theta = bt_fit(pc.wins(), tol=1e-10)
    cov = bt_sandwich(pc, theta)
    unit = to_elo_scale(1.0, init=0.0)
    ratings = to_elo_scale(theta)
    lower, _ = normal_bounds(ratings, unit * np.sqrt(np.diag(cov)), 0.95)
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0
    fit_wall = time.perf_counter() - t1
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"wall": wall, "cpu": cpu, "read": t_read, "dedup": t_dedup, "fit_from_codes": fit_wall,
            "peak_mib": peak / 2 ** 20, "systems": list(battles.systems), "ratings": ratings, "lower": lower,
            "cells": len(pc.count)}


def run_style(n_battles: int, n_models: int, seed: int, rounds: int, mean_count: float,
              arena_python: str | None = None) -> None:
    """Contextual (style) BT with 6 features: cells, fit + sandwich, then ``rounds`` bootstrap rounds.

    Style counts per answer are Poisson(``mean_count``): small means give few distinct style rows
    (discrete features, real deduplication), large means nearly one cell per battle (continuous).
    """
    from scorebench.aggregate.contextual_bt import bradley_terry_contextual_bootstrap, bradley_terry_contextual_sandwich
    from scorebench.aggregate.input import as_battles
    from scorebench.aggregate.style_cells import style_cells
    from scorebench.aggregate.style_control import style_features

    df = simulate(n_battles, n_models, seed)
    rng = np.random.default_rng(seed + 1)
    features = [f"f{j}" for j in range(6)]
    for f in features:
        df[f"style_{f}_a"] = rng.poisson(mean_count, n_battles)
        df[f"style_{f}_b"] = rng.poisson(mean_count, n_battles)
    b = as_battles(df)
    n_cells = style_cells(b.a, b.b, b.outcome, style_features(df, features)[0], b.weight).n_cells
    t0, c0 = time.perf_counter(), time.process_time()
    bradley_terry_contextual_sandwich(df, features=features)
    fit, fit_cpu = time.perf_counter() - t0, time.process_time() - c0
    if arena_python and Path(arena_python).exists():  # arena-rank's contextual BT + sandwich on the same battles
        X = style_features(df, features)[0]
        frame = df[["model_a", "model_b", "winner"]].astype(str)
        for j in range(X.shape[1]):  # raw (unstandardised) differences: arena-rank standardises them itself
            fa = df[f"style_f{j}_a"].to_numpy(float)
            fb = df[f"style_f{j}_b"].to_numpy(float)
            frame[f"x_{j}"] = (fa - fb) / (fa + fb + 1.0)
        with tempfile.TemporaryDirectory() as tmp:
            frame.to_parquet(Path(tmp) / "style.parquet")
            proc = subprocess.run([arena_python, "-c", ARENA_STYLE_SCRIPT, str(Path(tmp) / "style.parquet")],
                                  capture_output=True, text=True, check=False)
        if proc.returncode == 0:
            ref = json.loads(proc.stdout)
            ours = bradley_terry_contextual_sandwich(df, features=features)[0]
            diff = float(np.abs(np.asarray(ref["ratings"]) - ours).max())
            print(f"  arena-rank 0.1.1 contextual BT + sandwich: {ref['wall']:.1f} s wall, {ref['cpu']:.1f} s CPU "
                  f"(ratio to scorebench: {ref['wall'] / fit:.1f}x wall, {ref['cpu'] / fit_cpu:.1f}x CPU); "
                  f"max |rating difference| {diff:.1e} Elo")
        else:
            print("  arena-rank contextual failed:", proc.stderr.strip().splitlines()[-1:])

    def boot(k: int) -> tuple[float, float]:
        t, c = time.perf_counter(), time.process_time()
        bradley_terry_contextual_bootstrap(df, k, np.random.default_rng(0), features=features)
        return time.perf_counter() - t, time.process_time() - c

    one_wall, one_cpu = boot(1)  # prepare + cells + full fit + 1 round
    boot_wall, boot_cpu = boot(rounds)
    per_round_cpu = (boot_cpu - one_cpu) / max(rounds - 1, 1)
    per_round_wall = (boot_wall - one_wall) / max(rounds - 1, 1)
    print(f"style: {n_battles:,} battles x {n_models} models x 6 features (Poisson({mean_count:g}) counts) -> "
          f"{n_cells:,} cells; load {os.getloadavg()[0]:.1f}\n"
          f"  prepare + cells + fit + sandwich: {fit:.1f} s wall, {fit_cpu:.1f} s CPU\n"
          f"  bootstrap call, {rounds} rounds (incl. its prepare + full fit): {boot_wall:.1f} s wall, "
          f"{boot_cpu:.1f} s CPU;"
          f" 1 round: {one_wall:.1f} s wall, {one_cpu:.1f} s CPU\n"
          f"  -> {per_round_cpu:.2f} s CPU ({per_round_wall:.2f} s wall) per round; fit + sandwich + 200 rounds "
          f"~{fit_cpu + one_cpu + 199 * per_round_cpu:.0f} s CPU")


def run_dask(n_battles: int, n_models: int, seed: int, part: int = 2_000_000) -> None:
    """Write ``n_battles`` in Parquet parts, then pair_counts_dask (threaded scheduler) + fit in memory."""
    import dask
    import dask.dataframe as dd

    from scorebench.aggregate.pair_counts_dask import bt_from_counts, pair_counts_dask

    with tempfile.TemporaryDirectory() as tmp:
        for k, start in enumerate(range(0, n_battles, part)):
            simulate(min(part, n_battles - start), n_models, seed + k).to_parquet(Path(tmp) / f"part-{k:04d}.parquet")
        t0 = time.perf_counter()
        c0 = time.process_time()
        with dask.config.set(scheduler="threads", num_workers=2):
            pc = pair_counts_dask(dd.read_parquet(str(Path(tmp) / "*.parquet")))
        t_counts = time.perf_counter() - t0
        ratings, cov = bt_from_counts(pc)
        wall = time.perf_counter() - t0
    print(f"dask: {n_battles:,} battles in {-(-n_battles // part)} Parquet parts -> {len(pc.count):,} cells in "
          f"{t_counts:.1f} s wall; + BT + sandwich in memory: {wall:.1f} s wall, {time.process_time() - c0:.1f} s "
          f"CPU (client process only; threaded scheduler, 2 threads)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--battles", type=int, default=1_000_000)
    ap.add_argument("--models", type=int, default=400)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--arena-python", default="/work/venvs/arena/bin/python")
    ap.add_argument("--no-arena-rank", action="store_true")
    ap.add_argument("--style-arena-rank", action="store_true", help="also time arena-rank's contextual BT + sandwich")
    ap.add_argument("--dask-battles", type=int, default=0,
                    help="also write this many battles as Parquet parts and reduce them to counts on Dask")
    ap.add_argument("--style-battles", type=int, default=0,
                    help="also time contextual BT with 6 style features: fit + sandwich + --style-rounds bootstrap")
    ap.add_argument("--style-rounds", type=int, default=20)
    ap.add_argument("--style-mean-count", type=float, default=5.0,
                    help="mean of the Poisson style counts (small: discrete features, few cells)")
    args = ap.parse_args()
    if args.style_battles:
        run_style(args.style_battles, args.models, args.seed, args.style_rounds, args.style_mean_count,
                  args.arena_python if args.style_arena_rank else None)
    if args.dask_battles:
        run_dask(args.dask_battles, args.models, args.seed)
    df = simulate(args.battles, args.models, args.seed)
    print(f"{args.battles:,} battles x {args.models} models, ties {float((df['winner'] == 'tie').mean()):.1%}, "
          f"load {os.getloadavg()[0]:.1f}")
    ours = run_scorebench(df)
    print(f"scorebench: {ours['wall']:.2f} s wall / {ours['cpu']:.2f} s CPU (as_battles {ours['read']:.2f} s; "
          f"dedup {ours['dedup']:.2f} s; dedup + fit + sandwich {ours['fit_from_codes']:.2f} s; "
          f"{ours['cells']:,} cells); peak {ours['peak_mib']:.0f} MiB (tracemalloc)")
    if args.no_arena_rank or not Path(args.arena_python).exists():
        print("arena-rank: skipped")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "battles.parquet"
        df.astype(str).to_parquet(path)
        proc = subprocess.run([args.arena_python, "-c", ARENA_SCRIPT, str(path)], capture_output=True, text=True,
                              check=False)
    if proc.returncode != 0:
        print("arena-rank failed:", proc.stderr.strip().splitlines()[-1:])
        return 1
    ref = json.loads(proc.stdout)
    assert ref["competitors"] == ours["systems"]
    diff = float(np.abs(np.asarray(ref["ratings"]) - ours["ratings"]).max())
    diff_lo = float(np.abs(np.asarray(ref["lower"]) - ours["lower"]).max())
    print(f"arena-rank 0.1.1: {ref['wall']:.2f} s wall / {ref['cpu']:.2f} s CPU (from_pandas {ref['dedup']:.2f} s; "
          f"import {ref['import']:.2f} s not counted)")
    print(f"ratio arena-rank / scorebench: {ref['wall'] / ours['wall']:.2f}x wall, {ref['cpu'] / ours['cpu']:.2f}x CPU")
    print(f"max |rating difference| {diff:.2e} Elo, max |lower bound difference| {diff_lo:.2e} Elo "
          "(arena-rank's default stopping tolerance)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
