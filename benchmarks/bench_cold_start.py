"""Cold start (issue 18): wall and CPU time of fresh processes, median of several runs.

* ``python -c "import scorebench"``
* ``scorebench --help``            (``python -m scorebench.cli --help``)
* ``scorebench evaluate`` on a 10-row CSV (brier_score, 200 bootstrap rounds)

Each command runs in a new interpreter (``subprocess``); CPU time is the child's user +
system time (``resource.getrusage(RUSAGE_CHILDREN)``), which the load of a shared machine
distorts far less than wall time. Goal: under 1.0 s wall on an idle machine.

Run:  python benchmarks/bench_cold_start.py [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOAL_S = 1.0


def _one(cmd: list[str], env: dict) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def commands(tmp: Path) -> dict[str, list[str]]:
    table = tmp / "ten.csv"
    rows = ["system,task,item,p,y"] + [f"s{i % 2},t,{i},{0.1 + 0.08 * i:.2f},{i % 3 == 0:d}"
                                                 for i in range(10)]
    table.write_text("\n".join(rows) + "\n")
    py = sys.executable
    return {
        "import scorebench": [py, "-c", "import scorebench"],
        "scorebench --help": [py, "-m", "scorebench.cli", "--help"],
        "scorebench evaluate (10 rows)": [py, "-m", "scorebench.cli", "evaluate", str(table), "-m",
                                          "brier_score", "--bootstrap", "200"],
        "python -c pass (interpreter floor)": [py, "-c", "pass"],
    }


def run(runs: int = 5, verbose: bool = True) -> dict[str, tuple[float, float]]:
    """Median (wall, cpu) seconds per command over ``runs`` fresh processes."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        cmds = commands(Path(tmp))
        for name, cmd in cmds.items():
            _one(cmd, env)  # warm the file cache
            times = [_one(cmd, env) for _ in range(runs)]
            out[name] = (statistics.median(t[0] for t in times), statistics.median(t[1] for t in times))
            if verbose:
                print(f"{name:<36} median of {runs}: {out[name][0]:6.3f} s wall {out[name][1]:6.3f} s cpu "
                      f"(goal < {GOAL_S} s)")
    if verbose:
        print(f"load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    run(parser.parse_args().runs)


if __name__ == "__main__":
    main()
