"""Read a large Inspect AI .eval log with scorebench's streaming reader: wall time and peak memory.

    python benchmarks/bench_inspect_streaming.py --samples 50000 --message-bytes 4000

Writes a synthetic .eval archive (header.json, summaries.json, reductions.json and one
``samples/<id>_epoch_<n>.json`` member per sample, each carrying a transcript of
``--message-bytes`` characters, so the log has the shape and size of a real one; members are
deflate-compressed, so it needs no Inspect installation), then reads it in a fresh process
(``scorebench.read_results(path)``) and reports the read's wall time, CPU time and peak
resident memory (``ru_maxrss`` of that child process). Issue 37's target: a 200k-sample ~1 GB
log in < 2 min with < 1.5 GB peak memory (Inspect #2873 reports hours and 11 GB for a 4 GB log).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def write_log(path: Path, n: int, message_bytes: int, epochs: int, seed: int = 0) -> int:
    rng = random.Random(seed)
    filler = "".join(rng.choice("abcdefghij klmnop") for _ in range(997))
    header = {"version": 2, "status": "success",
              "eval": {"task": "synthetic", "model": "mockllm/big", "task_id": "t", "config": {"epochs": epochs}},
              "plan": {}, "results": {"total_samples": n * epochs, "completed_samples": n * epochs, "scores": []}}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        archive.writestr("header.json", json.dumps(header))
        for i in range(n):
            for epoch in range(1, epochs + 1):
                text = (filler * (message_bytes // len(filler) + 1))[:message_bytes]
                sample = {"id": f"s{i}", "epoch": epoch, "input": f"question {i}", "target": "C",
                          "messages": [{"role": "user", "content": text[: message_bytes // 2]},
                                       {"role": "assistant", "content": text[message_bytes // 2:]}],
                          "scores": {"match": {"value": rng.choice("CIP"), "answer": "x"}},
                          "metadata": {"subject": f"c{i % 57}"}}
                archive.writestr(f"samples/s{i}_epoch_{epoch}.json", json.dumps(sample))
        archive.writestr("summaries.json", "[]")
        archive.writestr("reductions.json", "[]")
    return path.stat().st_size


def child(path: str) -> None:
    sys.path.insert(0, str(ROOT))
    import scorebench

    start, cpu = time.perf_counter(), time.process_time()
    table = scorebench.read_results(path, format="inspect")
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB -> MiB on Linux
    print(json.dumps({"rows": len(table), "wall_s": wall, "cpu_s": cpu, "peak_mib": peak,
                      "mean_match": float(table["match"].mean())}))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=50000)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--message-bytes", type=int, default=4000)
    parser.add_argument("--child", default=None)
    args = parser.parse_args()
    if args.child:
        return child(args.child)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.eval"
        start = time.perf_counter()
        size = write_log(path, args.samples, args.message_bytes, args.epochs)
        with zipfile.ZipFile(path) as archive:
            raw = sum(i.file_size for i in archive.infolist())
        print(f"wrote {args.samples} samples x {args.epochs} epochs: {size / 2**20:.0f} MiB on disk, "
              f"{raw / 2**20:.0f} MiB uncompressed ({time.perf_counter() - start:.1f} s)")
        out = subprocess.run([sys.executable, __file__, "--child", str(path)], capture_output=True, text=True,
                             env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True)
        result = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"read {result['rows']} rows: {result['wall_s']:.1f} s wall, {result['cpu_s']:.1f} s CPU, "
              f"peak RSS {result['peak_mib']:.0f} MiB (load average {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
