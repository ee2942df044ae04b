"""The ``features`` table kind: per-sample feature vectors of generated and real samples.

Columns
-------
``system``
    Which generator produced the row; the rows of the *reference* system (kind option
    ``reference``, default ``"real"``) are the real samples that two-sample metrics (FID,
    KID, precision, ...) compare every other system against. With ``reference=None`` (or
    no such system in the table) every row is evaluated and only one-sample metrics
    (``vendi_score``, ``inception_score``) apply.
``task`` (optional)
    Each task (dataset) has its own reference rows; two-sample metrics compare a system's
    rows with the reference rows of the same task.
``f0, f1, ..., f{d-1}``
    Feature vector (e.g. Inception pool3). ``s0, s1, ...``: spatial features for ``sfid``.
    ``p_<class>``: class probabilities for ``inception_score``.
``extractor`` (optional)
    Fingerprint of the feature extractor (written by ``scorebench run``); a table mixing
    extractors is refused, so features from different networks are never compared.

The evaluated units are the non-reference rows. The interval rule of the two-sample metrics
(``half_sampling``) draws half of the evaluated rows and, independently, half of the
reference rows in each round, without replacement (duplicated rows would inflate FID and
KID and shrink k-NN balls).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.core.tables import GROUP_COLUMNS, Column, Inputs, Option, drop_nan_rows, numeric_column, register_kind
from scorebench.core.table_schema import check_declared_columns
from scorebench.core.validation import check_choice, describe_rows
from scorebench.metrics.generative.stats import FeatureStats

__all__ = ["extract_features", "reference_features", "two_sample"]

_FEATURE = re.compile(r"^f(\d+)$")
_SPATIAL = re.compile(r"^s(\d+)$")
_PROB = re.compile(r"^p_(.+)$")
_MISSING = "_reference_missing"


def _numbered(df: pd.DataFrame, pattern: re.Pattern) -> list[str]:
    cols = [c for c in df.columns if isinstance(c, str) and pattern.match(c)]
    return sorted(cols, key=lambda c: int(pattern.match(c).group(1)))


def _matrix(df: pd.DataFrame, cols: list[str], nan_ok: bool) -> np.ndarray:
    if not cols:
        return np.empty((len(df), 0))
    block = df[cols]
    if all(pd.api.types.is_float_dtype(t) or pd.api.types.is_integer_dtype(t) for t in block.dtypes):
        values = block.to_numpy(dtype=np.float64)
        bad = np.isinf(values) | (np.isnan(values) if not nan_ok else False)
        if not bad.any():
            return values
    # Slow path: per column, for a precise error message.
    return np.column_stack([numeric_column(df, c, nan_ok=nan_ok) for c in cols])


_COLUMNS = (Column("system", "label", "the generator; the reference system's rows are the real samples",
                   required=False),
            Column("f<i>", "number", "feature i (f0 .. f{d-1})", required=False, pattern=_FEATURE.pattern[1:-1]),
            Column("s<i>", "number", "spatial feature i (sFID)", required=False, pattern=_SPATIAL.pattern[1:-1]),
            Column("p_<class>", "probability", "class probabilities (Inception score)", required=False,
                   pattern=_PROB.pattern[1:-1]),
            Column("extractor", "label", "the feature extractor (one per task)", required=False))


_REFERENCE_SETS = ("real_features", "real_spatial")  # per-task reference samples held as constants


def halve_reference(arrays: dict[str, Any], half: Callable[[int], np.ndarray]) -> dict[str, Any]:
    """The kind's ``side_data`` hook: the reference samples half-sampled with the evaluated rows.

    Under the half-sampling interval rules both samples vary in a fresh draw, so each
    replicate halves the reference set of the evaluated rows' task as well (``half(n)``:
    the positions of a half-sample of ``n``, drawn by the engine); other tasks' sets stay
    whole, and the per-replicate cache of reference statistics starts empty.

    Examples
    --------
    >>> arrays = {"_task": np.array([0]), "real_features": [np.arange(4.0)[:, None]]}
    >>> halve_reference(arrays, lambda n: np.arange(n // 2))["real_features"][0].ravel().tolist()
    [0.0, 1.0]
    """
    out = {**arrays, "_stats_cache": {}}
    tasks = set(np.unique(arrays["_task"]).tolist()) if "_task" in arrays else None
    for name in _REFERENCE_SETS:
        if arrays.get(name) is not None:
            out[name] = [x[half(len(x))] if tasks is None or i in tasks else x for i, x in enumerate(arrays[name])]
    return out


@register_kind("features", columns=_COLUMNS,
               options=(Option("reference", str, "real", "the system whose rows are the real samples "
                               "(None: no reference rows)"),), side_data=halve_reference)
def extract_features(df: pd.DataFrame, *, nan_policy: str = "raise", reference: str | None = "real") -> Inputs:
    """Feature vectors per sample; the reference system's rows are the real samples."""
    groups = _feature_groups(df, nan_policy)
    used = [c for cols in groups.values() for c in cols]
    df = drop_nan_rows(df, used, nan_policy)
    if len(df) == 0:
        raise InputError("kind 'features': the table has no rows to evaluate")
    # the reference samples are half-sampled with the evaluated rows by the half-sampling
    # interval rules through the kind's side_data hook (halve_reference)
    consts: dict[str, Any] = {"extractor": _extractor(df), "_stats_cache": {}}
    nan_ok = nan_policy == "propagate"
    is_ref = _reference_rows(df, reference)
    if not is_ref.any():
        consts[_MISSING] = _no_reference_reason(df, reference)
    if is_ref.all():
        raise InputError(f"kind 'features': every row belongs to the reference system {reference!r}; "
                         "expected rows of at least one other system to evaluate")
    units = df.loc[~is_ref]
    has_task = "task" in df.columns
    task_codes, tasks = (pd.factorize(units["task"].astype(str), sort=True) if has_task
                         else (np.zeros(len(units), dtype=np.int64), pd.Index([""])))
    arrays: dict[str, np.ndarray] = {"_task": np.asarray(task_codes, dtype=np.int64)}
    for name, cols in groups.items():
        if cols:
            arrays[name] = _matrix(units, cols, nan_ok)
    consts["_tasks"] = list(tasks)
    if is_ref.any():
        consts.update(_reference_consts(df.loc[is_ref], groups, tasks, has_task, reference, nan_ok))
    keep = [c for c in units.columns if c in GROUP_COLUMNS]
    return Inputs(units[keep].reset_index(drop=True), arrays, consts)


def _feature_groups(df: pd.DataFrame, nan_policy: str) -> dict[str, list[str]]:
    """Validate the table and options; the feature, spatial and probability columns."""
    check_declared_columns(df, _COLUMNS, "features")
    check_choice(nan_policy, "nan_policy", ("raise", "omit", "propagate"))
    groups = {"fake_features": _numbered(df, _FEATURE), "fake_spatial": _numbered(df, _SPATIAL),
              "probs": [c for c in df.columns if isinstance(c, str) and _PROB.match(c)]}
    if not any(groups.values()):
        raise InputError("kind 'features': expected feature columns f0, f1, ... (or spatial features "
                         "s0, s1, ..., or class probabilities p_<class>); found none")
    return groups


def _reference_rows(df: pd.DataFrame, reference: str | None) -> np.ndarray:
    """Mask of the reference system's rows (none without a ``system`` column or with reference=None)."""
    if reference is None or "system" not in df.columns:
        return np.zeros(len(df), dtype=bool)
    return (df["system"].astype(str) == str(reference)).to_numpy()


def _no_reference_reason(df: pd.DataFrame, reference: str | None) -> str:
    """Why the table has no reference rows (shown when a two-sample metric needs them)."""
    if reference is None:
        return "no reference rows: the kind option reference=None was given"
    if "system" not in df.columns:
        return "no reference rows: the table has no 'system' column"
    return (f"no reference rows: no row has system == {reference!r} (systems: "
            f"{', '.join(map(str, pd.unique(df['system'])[:8]))})")


def _reference_consts(ref: pd.DataFrame, groups: dict[str, list[str]], tasks: pd.Index, has_task: bool,
                      reference: str | None, nan_ok: bool) -> dict[str, Any]:
    """Per task, the reference features (``real_features``/``real_spatial``); notes tasks without any."""
    out: dict[str, Any] = {}
    ref_tasks = ref["task"].astype(str).to_numpy() if has_task else np.full(len(ref), "")
    for name in ("fake_features", "fake_spatial"):
        if groups[name]:
            values = _matrix(ref, groups[name], nan_ok)
            out[name.replace("fake", "real")] = [values[ref_tasks == t] for t in tasks]
    missing = sorted(set(map(str, tasks)) - set(ref_tasks))
    if missing:
        out[_MISSING] = f"no reference rows (system == {reference!r}) for task(s) {missing}"
    return out


def _extractor(df: pd.DataFrame) -> str | None:
    if "extractor" not in df.columns:
        return None
    values = df["extractor"].astype(str)
    distinct = pd.unique(values)
    if len(distinct) > 1:
        first = (values != distinct[0]).to_numpy()
        raise InputError(f"column 'extractor': features from different extractors ({', '.join(distinct[:4])}) "
                         f"in {describe_rows(first, df.index)}; expected one extractor per table")
    return str(distinct[0])


def reference_features(arrays: dict[str, Any], name: str = "real_features") -> np.ndarray:
    """The reference (real) features matching the task of the evaluated rows in ``arrays``."""
    codes = np.unique(arrays["_task"])
    if codes.size > 1:
        raise InputError("kind 'features': the evaluated rows span several tasks; evaluate by task")
    code = int(codes[0]) if codes.size else 0
    per_task = arrays.get(name)
    if per_task is None and _MISSING not in arrays:
        raise InputError(f"kind 'features': the table has no columns for {name!r} "
                         f"({'s0, s1, ...' if 'spatial' in name else 'f0, f1, ...'})")
    if per_task is None or len(per_task[code]) == 0:
        reason = arrays.get(_MISSING, "no reference rows")
        raise InputError(f"kind 'features': this metric compares with real samples, but {reason}; "
                         "add them, or name the reference system with the kind option reference=...")
    return per_task[code]


def two_sample(fn, real: str = "real_features", fake: str = "fake_features", *, stats: bool = False):
    """A ``table_fn`` applying ``fn(real, fake, **params)`` with the task's reference rows.

    With ``stats=True`` the reference :class:`FeatureStats` are computed once per task and
    reused across bootstrap replicates.
    """

    def table_fn(arrays: dict[str, Any], **params: Any) -> float:
        ref = reference_features(arrays, real)
        if fake not in arrays:
            raise InputError(f"kind 'features': the table has no columns for {fake!r}")
        if stats:
            cache = arrays["_stats_cache"]
            key = (real, int(arrays["_task"][0]))
            if key not in cache:
                cache[key] = FeatureStats.from_features(ref, extractor=arrays.get("extractor"))
            ref = cache[key]
        return fn(ref, arrays[fake], **params)

    return table_fn
