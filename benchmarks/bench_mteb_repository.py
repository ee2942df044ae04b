"""MTEB results repository at scale: our reader vs ``mteb``'s ResultCache on N copies of the reference folder.

Usage::

    python benchmarks/bench_mteb_repository.py --copies 10      # 2,700 model folders, ~89,000 files
    python benchmarks/bench_mteb_repository.py --copies 5 --revisions 3   # 3 revisions per model, ~134,000 files

The full public repository (all benchmarks, all revisions) cannot be fetched here, so the
270-model MTEB(eng, v2) folder in ``../shared/reference/mteb/results`` is multiplied: each copy
of a model folder gets a new model name (hard links for the result files, a rewritten
``model_meta.json``). As in the real repository, a model can hold several revisions:
``--revisions K`` gives every model K revision folders (the real one plus hard-linked copies under
new commit names, every third one ``no_revision_available``), so the read must choose one per
(model, task) (``revisions="latest"``, mteb's rule) or keep them all (``--policy all``). Each reader runs in a
fresh subprocess (``ru_maxrss`` is its own peak): ``scorebench.io.tables.read_results(folder,
format="mteb")`` and, if ``mteb`` is importable, ``mteb.cache.ResultCache(...).load_results(
require_model_meta=False, validate_and_filter=False)`` (all tasks, all revisions) followed by
``join_revisions()`` (the step mteb's leaderboard applies when a model has several revisions).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT.parent / "shared" / "reference" / "mteb" / "results"

_CHILD = r"""
import json, os, resource, sys, time, warnings
warnings.simplefilter("ignore")
which, folder, policy = sys.argv[1], sys.argv[2], sys.argv[3]
w0, c0 = time.perf_counter(), time.process_time()
if which == "scorebench":
    from scorebench.io.tables import read_results
    t = read_results(folder, format="mteb", revisions=policy)
    size = f"{t.attrs.get('files_read')} files, {len(t)} rows, {t.attrs['n_results_not_kept']} results not kept"
else:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import mteb
    res = mteb.cache.ResultCache(cache_path=os.path.dirname(folder)).load_results(
        require_model_meta=False, validate_and_filter=False)
    n_loaded = len(res.model_results)
    if policy == "latest":
        res = res.join_revisions()
    size = f"{n_loaded} model results loaded, {len(res.model_results)} after join_revisions"
print(json.dumps({"reader": which, "seconds": round(time.perf_counter() - w0, 1),
                  "cpu_seconds": round(time.process_time() - c0, 1),
                  "peak_rss_gib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2), "read": size}))
"""


def build(copies: int, target: Path, revisions: int = 1) -> int:
    results = target / "results"
    results.mkdir(parents=True)
    n = 0
    for model in sorted(RESULTS.iterdir()):
        for i in range(copies):
            dest = results / (model.name if i == 0 else f"{model.name}-copy{i}")
            shutil.copytree(model, dest, copy_function=os.link)
            for meta in dest.glob("*/model_meta.json") if i else ():  # a new model id (the reader's system)
                _rewrite(meta, name=f"{json.loads(meta.read_text())['name']}-copy{i}")
            _add_revisions(dest, revisions - 1)
            n += sum(len(files) for _, _, files in os.walk(dest))
    return n


def _rewrite(meta: Path, **fields: str) -> None:
    obj = {**json.loads(meta.read_text()), **fields}
    meta.unlink()  # a hard link: replace it, never write through it
    meta.write_text(json.dumps(obj))


def _add_revisions(model: Path, extra: int) -> None:
    """``extra`` more revision folders of ``model`` (hard-linked copies of its first one)."""
    first = sorted(p for p in model.iterdir() if p.is_dir())[0]
    for k in range(1, extra + 1):
        name = "no_revision_available" if k % 3 == 0 else f"{k:02d}{hashlib.sha1(model.name.encode()).hexdigest()[:38]}"
        dest = model / name
        if dest.exists():
            continue
        shutil.copytree(first, dest, copy_function=os.link)
        if (dest / "model_meta.json").exists():
            _rewrite(dest / "model_meta.json", revision=name)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--copies", type=int, default=10)
    ap.add_argument("--revisions", type=int, default=1, help="revision folders per model (default 1)")
    ap.add_argument("--policy", default="latest", choices=["latest", "all"],
                    help="scorebench: revisions= policy; mteb: 'latest' adds join_revisions()")
    ap.add_argument("--readers", default="scorebench,mteb")
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench_mteb_repo_"))
    try:
        files = build(a.copies, tmp, a.revisions)
        print(f"{a.copies} copies of {RESULTS}, {a.revisions} revision(s) per model: {files:,} files", flush=True)
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        for which in a.readers.split(","):
            command = [sys.executable, "-c", _CHILD, which, str(tmp / "results"), a.policy]
            run = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
            line = run.stdout.strip().splitlines()[-1] if run.returncode == 0 else run.stderr.strip()[-300:]
            print(json.loads(line) if run.returncode == 0 else f"{which}: failed: {line}", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
