"""OpenOOD score pickles (``scores/<postprocessor>.pkl``) -> an ``ood`` table.

OpenOOD v1.5 saves, per postprocessor, ``{"id": {"train", "val", "test"}, "csid": {dataset},
"ood": {"val", "near": {dataset}, "far": {dataset}}}``, each entry ``[pred, conf, gt]``
(NumPy arrays; ``gt = -1`` marks OOD samples, ``conf`` is higher for in-distribution).

Loading a pickle can run arbitrary code. By default the file is read with a restricted
unpickler that builds only NumPy arrays, dtypes and plain containers and refuses any other
class (one line naming the file and the class); ``trust_pickle=True`` uses :mod:`pickle`
itself, for files you made.

The table has one task per OOD dataset (``near/<dataset>``, ``far/<dataset>``, and
``val`` when present): the ID test samples (``is_ood = 0``) followed by the dataset's
samples (``is_ood = 1``), as OpenOOD pairs them; ``score = -conf`` (higher = more OOD, the
``ood`` kind's convention), with ``conf``, ``pred`` and ``gt`` kept; ``system`` = the
postprocessor (file stem). ``auroc`` on a task equals OpenOOD's AUROC for that dataset
(its ROC of the OOD indicator against ``-conf``). OpenOOD's metric conventions are the
format's defaults (``attrs["metric_defaults"]``, applied by ``evaluate`` to metrics named
without parameters): ``fpr_at_95_tpr(convention=openood)`` and the ``aupr*`` metrics with
``method=trapezoid``, so the numbers equal OpenOOD's.

Reference: Zhang et al. (2023), OpenOOD v1.5: Enhanced Benchmark for Out-of-Distribution
Detection, arXiv:2306.09301.
"""

from __future__ import annotations

import pickle
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.core.validation import parse_bool
from scorebench.io.readers._common import Provenance, field_error, is_regular_file, regular_files

__all__ = ["read", "detect", "safe_load", "METRIC_DEFAULTS"]

#: OpenOOD v1.5's conventions (``openood/evaluators/metrics.py``): FPR@95 with OOD as the positive
#: class, AUPR as the trapezoid area of the precision-recall points. ``evaluate`` applies them to
#: these metrics named without parameters (the result rows carry them in the metric's name).
METRIC_DEFAULTS = {"fpr_at_95_tpr": {"convention": "openood"}, "aupr": {"method": "trapezoid"},
                   "aupr_in": {"method": "trapezoid"}, "aupr_out": {"method": "trapezoid"}}

# The globals a pickle of NumPy arrays needs (NumPy 1.x and 2.x module names).
_ALLOWED = {("numpy", "ndarray"), ("numpy", "dtype"),
            ("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
            ("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "scalar"),
            ("numpy.core.numeric", "_frombuffer"), ("numpy._core.numeric", "_frombuffer")}


class _Refused(pickle.UnpicklingError):
    """A global outside the allowed NumPy names."""


class _ArraysOnly(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _ALLOWED or module == "numpy" and name.endswith("DType"):
            return super().find_class(module, name)
        raise _Refused(f"refusing to load {module}.{name}")


def safe_load(path: Path, data: bytes, *, trust_pickle: bool = False, pickle_sha256: str | None = None) -> Any:
    """Unpickle ``data`` (read from ``path``): NumPy arrays only, unless ``trust_pickle``.

    ``trust_pickle`` is parsed strictly (``"no"`` is false); with ``pickle_sha256`` the bytes
    must have that SHA-256 before the full unpickler may run on them.
    """
    import hashlib
    import io

    trust_pickle = parse_bool(trust_pickle, "trust_pickle")
    if pickle_sha256 is not None:
        digest = hashlib.sha256(data).hexdigest()
        if digest != str(pickle_sha256).strip().lower():
            raise InputError(f"{path}: SHA-256 {digest} differs from the pinned pickle_sha256 {pickle_sha256}; "
                             "not loading it")
    try:
        return pickle.loads(data) if trust_pickle else _ArraysOnly(io.BytesIO(data)).load()
    except _Refused as exc:
        raise InputError(f"{path}: {exc}; the restricted unpickler builds only NumPy arrays "
                         "(pass trust_pickle=True for a file you trust)") from None
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, ImportError,
            IndexError) as exc:
        raise InputError(f"{path}: not a readable pickle ({type(exc).__name__}: {exc}; truncated?)") from None


_SEED = re.compile(r"^s(\d+)$")


def _seed_folders(path: Path) -> list[tuple[int, Path]]:
    """``[(seed, <run>/s<seed>/scores)]`` of OpenOOD's seed layout, sorted by seed (empty if not that layout)."""
    if not path.is_dir():
        return []
    found = []
    for child in path.iterdir():
        match = _SEED.match(child.name)
        if match and child.is_dir() and (child / "scores").is_dir() and any((child / "scores").glob("*.pkl")):
            found.append((int(match.group(1)), child / "scores"))
    return sorted(found)


def detect(path: Path) -> bool:
    """True for a ``.pkl`` file, a folder (or its ``scores/``) of them, or a run of ``s<seed>/scores/`` folders."""
    if path.is_file():
        return path.suffix == ".pkl" and is_regular_file(path)
    folder = path / "scores" if (path / "scores").is_dir() else path
    return bool(regular_files(folder.glob("*.pkl"))) or bool(_seed_folders(path))


def read(path: Path, *, trust_pickle: bool = False, pickle_sha256: str | None = None) -> pd.DataFrame:
    """Read OpenOOD score pickles: one file, every ``*.pkl`` of a folder or its ``scores/``, or the
    seed layout ``<run>/s0|s1|s2/scores/*.pkl`` as one table with a ``seed`` column (OpenOOD
    reports the mean and standard deviation over seeds: evaluate ``by="system,task,seed"``).

    ``pickle_sha256`` pins the file (one file only): its bytes must have that SHA-256 before
    anything is unpickled. A leaderboard spec may set ``trust_pickle = true`` only together
    with ``pickle_sha256`` (a pickle is code, like a model).
    """
    trust_pickle = parse_bool(trust_pickle, "trust_pickle")
    if pickle_sha256 is not None and not path.is_file():
        raise InputError(f"{path}: pickle_sha256 pins one file; name the .pkl file, not a folder")
    seeds = _seed_folders(path)
    if seeds:
        prov = Provenance("openood", path)
        frames = []
        for seed, folder in seeds:
            for file in sorted(regular_files(folder.glob("*.pkl"))):
                for frame in _frames(safe_load(file, prov.read(file), trust_pickle=trust_pickle), file):
                    frames.append(frame.assign(seed=seed))
        table = pd.concat(frames, ignore_index=True)
        return prov.stamp(table, [], trust_pickle=trust_pickle, n_systems=int(table["system"].nunique()),
                          seeds=[s for s, _ in seeds], metric_defaults=METRIC_DEFAULTS)
    folder = path.parent if path.is_file() else (path / "scores" if (path / "scores").is_dir() else path)
    files = [path] if path.is_file() else sorted(regular_files(folder.glob("*.pkl")))
    if not files:
        raise InputError(f"{path}: no OpenOOD score pickles (*.pkl) found")
    prov = Provenance("openood", folder)
    frames = []
    for file in files:
        scores = safe_load(file, prov.read(file), trust_pickle=trust_pickle, pickle_sha256=pickle_sha256)
        frames.extend(_frames(scores, file))
    table = pd.concat(frames, ignore_index=True)
    return prov.stamp(table, [], trust_pickle=trust_pickle, n_systems=int(table["system"].nunique()),
                      metric_defaults=METRIC_DEFAULTS)


def _triple(value: Any, file: Path, field: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if not isinstance(value, (list, tuple)) or len(value) != 3:
        raise field_error(file, field, "expected [pred, conf, gt]")
    pred, conf, gt = (np.asarray(v) for v in value)
    if not (pred.ndim == conf.ndim == gt.ndim == 1 and len(pred) == len(conf) == len(gt)) or len(conf) == 0:
        raise field_error(file, field, f"expected three 1-d arrays of one length, got shapes "
                                       f"{pred.shape}, {conf.shape}, {gt.shape}")
    if conf.dtype.kind not in "fiu" or not np.isfinite(conf.astype(np.float64)).all():
        raise field_error(file, f"{field}[1]", "expected finite confidence scores")
    return pred, conf.astype(np.float64), gt


def _frames(scores: Any, file: Path) -> list[pd.DataFrame]:
    if not isinstance(scores, dict) or "id" not in scores or "ood" not in scores:
        raise field_error(file, "(top level)", "expected {'id': ..., 'ood': ...} (OpenOOD v1.5 scores)")
    ids = scores["id"]
    if not isinstance(ids, dict) or ids.get("test") is None:
        raise field_error(file, "id.test", "missing")
    id_pred, id_conf, id_gt = _triple(ids["test"], file, "id.test")
    if (id_gt == -1).any():
        raise field_error(file, "id.test[2]", "in-distribution labels contain -1 (the OOD marker)")
    ood = scores["ood"]
    if not isinstance(ood, dict):
        raise field_error(file, "ood", "expected an object")
    sets: list[tuple[str, Any]] = []
    if ood.get("val") is not None:
        sets.append(("val", ood["val"]))
    for group in ("near", "far"):
        block = ood.get(group) or {}
        if not isinstance(block, dict):
            raise field_error(file, f"ood.{group}", "expected {dataset: [pred, conf, gt]}")
        sets.extend((f"{group}/{name}", value) for name, value in block.items())
    if not sets:
        raise field_error(file, "ood", "no OOD dataset")
    frames = []
    for task, value in sets:
        pred, conf, gt = _triple(value, file, "ood." + task.replace("/", "."))
        if not (gt == -1).all():
            raise field_error(file, "ood." + task.replace("/", ".") + "[2]", "OOD labels must all be -1")
        n_id, n_ood = len(id_conf), len(conf)
        frames.append(pd.DataFrame({
            "system": file.stem, "task": task,
            "id": [f"id:{i}" for i in range(n_id)] + [f"{task}:{i}" for i in range(n_ood)],
            "score": -np.concatenate([id_conf, conf]), "is_ood": np.r_[np.zeros(n_id, int), np.ones(n_ood, int)],
            "conf": np.concatenate([id_conf, conf]), "pred": np.concatenate([id_pred, pred]),
            "gt": np.concatenate([id_gt, gt])}))
    return frames
