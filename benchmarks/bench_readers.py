"""Reading the MTEB(eng, v2) reference results and ranking them, end to end.

    python benchmarks/bench_readers.py

Times (wall and CPU) the command ``scorebench aggregate ../shared/reference/mteb/results
--from mteb -m mean -m borda`` in a fresh process (import included), and the reader alone
in this process, against the ``mteb`` package's own loading of the same folder.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT.parent / "shared" / "reference" / "mteb" / "results"


def _cpu_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    if not RESULTS.is_dir():
        sys.exit(f"reference data not found at {RESULTS}")
    cmd = [sys.executable, "-m", "scorebench.cli", "aggregate", str(RESULTS), "--from", "mteb", "-m", "mean",
           "-m", "borda"]
    for run in range(3):
        cpu0, t0 = _cpu_children(), time.perf_counter()
        out = subprocess.run(cmd, capture_output=True, text=True, check=True,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
        wall, cpu = time.perf_counter() - t0, _cpu_children() - cpu0
        rows = sum(1 for line in out.stdout.splitlines() if line.strip().startswith(("mean", "borda")))
        print(f"CLI aggregate run {run}: {wall:.2f} s wall, {cpu:.2f} s CPU, {rows} ranking rows, "
              f"load {os.getloadavg()[0]:.1f}")
    from scorebench.io.tables import read_results

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        table = read_results(RESULTS, format="mteb")
        print(f"read_results: {time.perf_counter() - t0:.2f} s for {table.attrs['files_read']} files, "
              f"{len(table)} rows")
        try:
            import mteb
        except ImportError:
            return
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        t0 = time.perf_counter()
        mteb.cache.ResultCache(cache_path=RESULTS.parent).load_results(
            tasks="MTEB(eng, v2)", require_model_meta=False, validate_and_filter=True)
        print(f"mteb ResultCache.load_results: {time.perf_counter() - t0:.2f} s")


if __name__ == "__main__":
    main()
