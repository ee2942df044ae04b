r"""Decision gates on paired data: superiority, non-inferiority and equivalence (TOST).

A gate turns a paired comparison into a yes/no decision with a controlled error rate,
the form a continuous-integration check needs ("fail the pull request when the candidate
regresses by more than 1 point"). With per-unit differences :math:`d_i` oriented so that
positive favours the candidate (``candidate - baseline`` for a higher-is-better metric,
``baseline - candidate`` otherwise), mean :math:`\bar d`, standard error
:math:`s = \mathrm{sd}(d)/\sqrt n` (or the cluster-robust CR1 SE with ``G - 1`` degrees of
freedom when units come in clusters) and margin :math:`M \ge 0`:

==================  =================================  ==========================================
gate                null hypothesis (rejected: holds)  p-value
==================  =================================  ==========================================
superiority         :math:`\delta \le M`               :math:`P(T_{\nu} \ge (\bar d - M)/s)`
non-inferiority     :math:`\delta \le -M`              :math:`P(T_{\nu} \ge (\bar d + M)/s)`
equivalence (TOST)  :math:`|\delta| \ge M`             :math:`\max` of the two one-sided p-values
==================  =================================  ==========================================

The gate holds when the p-value is below ``alpha``. Equivalently, superiority and
non-inferiority hold when the one-sided :math:`1 - \alpha` lower confidence bound of
:math:`\delta` lies above :math:`M` (resp. :math:`-M`); equivalence holds when the
two-sided :math:`1 - 2\alpha` interval lies inside :math:`(-M, M)` (Schuirmann 1987).
These are ``statsmodels.stats.weightstats.ttost_paired`` and its one-sided t-tests.

When several comparisons are gated together (several candidates, several tasks), the
decision holds only when every one of them holds: an intersection-union test, which
keeps level ``alpha`` without a multiplicity correction (Berger 1982).

References
----------
Schuirmann (1987), J. Pharmacokinetics and Biopharmaceutics 15(6); Berger (1982),
Technometrics 24(4); Cameron & Miller (2015), J. Human Resources 50(2) (CR1 SEs).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from scorebench._version import __version__
from scorebench.analysis.stats_tests import cluster_robust_se
from scorebench.core.errors import InputError
from scorebench.core.registry import Metric
from scorebench.core.validation import check_choice, check_level
from scorebench.evaluation.paired_units import paired_units

__all__ = ["GATES", "GateResult", "paired_gate", "gate", "gate_verdict"]

GATES = ("superiority", "non-inferiority", "equivalence")


@dataclass(frozen=True)
class GateResult:
    """Outcome of one gate: the estimate, its bounds, the test and the decision."""

    gate: str
    margin: float
    alpha: float
    n: int
    mean_diff: float
    se: float
    df: float
    ci_low: float   # equivalence: 1 - 2 alpha interval; otherwise one-sided 1 - alpha lower bound
    ci_high: float  # (+inf for the one-sided gates)
    statistic: float
    p_value: float
    holds: bool
    method: str


def _margin(margin: Any, gate: str) -> float:
    if isinstance(margin, bool) or not isinstance(margin, (int, float, np.integer, np.floating)) \
            or not np.isfinite(margin) or margin < 0:
        raise InputError(f"margin: expected a finite number >= 0 (in the metric's units), got {margin!r}")
    if gate == "equivalence" and margin == 0:
        raise InputError("margin: equivalence needs a margin > 0 (no difference is within a zero margin)")
    return float(margin)


def _upper_p(t: float, df: float) -> float:
    """P(T_df >= t), with t = +-inf handled."""
    from scipy import stats

    return float(stats.t.sf(t, df))


def _shifted_t(mean: float, shift: float, se: float) -> float:
    diff = mean - shift
    if se > 0:
        return diff / se
    return np.inf if diff > 0 else -np.inf if diff < 0 else 0.0


def paired_gate(d: ArrayLike, gate: str, margin: float = 0.0, *, alpha: float = 0.05,
                clusters: ArrayLike | None = None) -> GateResult:
    r"""Decide a gate from paired differences ``d`` (positive favours the candidate).

    Parameters
    ----------
    d : sequence of float
        Per-unit differences, candidate minus baseline on a higher-is-better scale.
    gate : {"superiority", "non-inferiority", "equivalence"}
    margin : float
        :math:`M \ge 0` in the metric's units (0.01 is one point of accuracy); > 0 for equivalence.
    alpha : float
        Level of the test (each one-sided test of TOST at ``alpha``).
    clusters : sequence, optional
        Cluster of each unit: the cluster-robust (CR1) SE with ``G - 1`` degrees of freedom.

    Returns
    -------
    GateResult

    Examples
    --------
    >>> d = [0.0, 0.01, -0.02, 0.01, 0.0, 0.02, -0.01, 0.0]
    >>> r = paired_gate(d, "equivalence", 0.05)
    >>> r.holds, round(r.p_value, 6)
    (True, 5e-06)
    >>> paired_gate(d, "superiority").holds
    False
    """
    from scipy import stats

    check_choice(gate, "gate", GATES)
    check_level(alpha, "alpha")
    margin = _margin(margin, gate)
    d = np.asarray(d, dtype=np.float64)
    if d.ndim != 1 or d.size < 2:
        raise InputError(f"a gate needs at least 2 paired differences, got {d.size}")
    if not np.isfinite(d).all():
        raise InputError("a gate needs finite differences; drop undefined units first")
    mean = float(d.mean())
    if clusters is not None:
        se, g = cluster_robust_se(d, clusters)
        df = float(g - 1)
        method = f"cluster-robust (CR1) t, {g} clusters, df={g - 1}"
    else:
        se = float(d.std(ddof=1) / np.sqrt(d.size))
        df = float(d.size - 1)
        method = f"paired t, df={d.size - 1}"
    if gate == "equivalence":
        t_low = _shifted_t(mean, -margin, se)
        t_high = _shifted_t(mean, margin, se)
        p = max(_upper_p(t_low, df), _upper_p(-t_high, df))
        stat = t_low if _upper_p(t_low, df) >= _upper_p(-t_high, df) else t_high
        q = float(stats.t.ppf(1 - alpha, df))
        low, high = mean - q * se, mean + q * se
        method = "TOST, " + method
    else:
        shift = margin if gate == "superiority" else -margin
        stat = _shifted_t(mean, shift, se)
        p = _upper_p(stat, df)
        low, high = mean - float(stats.t.ppf(1 - alpha, df)) * se, np.inf
        method = "one-sided " + method
    return GateResult(gate, margin, float(alpha), int(d.size), mean, se, df, float(low), float(high), float(stat),
                      float(p), bool(p < alpha), method)


def gate_verdict(results: pd.DataFrame) -> str:
    """One line saying whether the gate holds, with the worst comparison.

    Examples
    --------
    >>> r = pd.DataFrame({"gate": ["non-inferiority"], "margin": [0.01], "alpha": [0.05], "system": ["new"],
    ...                   "baseline": ["old"], "task": [None], "mean_diff": [0.002], "ci_low": [-0.004],
    ...                   "p_value": [0.001], "holds": [True]})
    >>> gate_verdict(r)
    'PASS non-inferiority (margin 0.01, alpha 0.05): new vs old: diff +0.002, lower bound -0.004, p = 0.001'
    """
    if results.empty:
        raise InputError("no comparison to gate")
    first = results.iloc[0]
    failed = results[~results["holds"].astype(bool)]
    worst = (failed if not failed.empty else results).sort_values("p_value", ascending=False).iloc[0]
    task = worst.get("task")
    where = f" [{task}]" if task is not None and task == task else ""
    bound = (f"interval [{worst['ci_low']:+.4g}, {worst['ci_high']:+.4g}]" if first["gate"] == "equivalence"
             else f"lower bound {worst['ci_low']:+.4g}")
    head = "PASS" if failed.empty else f"FAIL ({len(failed)} of {len(results)} comparisons)"
    return (f"{head} {first['gate']} (margin {first['margin']:g}, alpha {first['alpha']:g}): "
            f"{worst['system']} vs {worst['baseline']}{where}: diff {worst['mean_diff']:+.4g}, {bound}, "
            f"p = {worst['p_value']:.4g}")


def _direction(record: Metric, higher_is_better: bool | None) -> bool:
    """Whether higher is better for ``record``: its declared direction, or the one given for a
    metric without one; a given direction that contradicts the declared one is refused."""
    direction = record.higher_is_better
    if higher_is_better is not None:
        if direction is not None and bool(higher_is_better) != direction:
            raise InputError(f"metric {record.name!r} is {'higher' if direction else 'lower'}-is-better; "
                             "the direction given contradicts it")
        direction = bool(higher_is_better)
    if direction is None:
        raise InputError(f"metric {record.name!r} has no direction; say whether higher is better "
                         "(higher_is_better=, --direction higher|lower)")
    return direction


def gate(table: Any, metric: str | Metric, *, baseline: str, gate: str = "non-inferiority", margin: float = 0.0,
         alpha: float = 0.05, candidates: Sequence[str] | None = None, kind: str | None = None,
         cluster: str | None = None, nan_policy: str = "raise", higher_is_better: bool | None = None,
         **kind_options: Any) -> pd.DataFrame:
    """Gate every candidate system against ``baseline`` on paired units, per task.

    The differences are oriented by the metric's direction (positive favours the candidate),
    so a non-inferiority margin of 0.01 on ``brier_score`` allows the candidate a Brier score
    at most 0.01 higher. See :func:`paired_gate` for the tests.

    Parameters
    ----------
    table : DataFrame or path
        A result table (any per-row metric's kind, e.g. ``correct`` or a reader's ``samples``).
    metric : str or Metric
        A per-row metric with a direction (``higher_is_better`` set).
    baseline : str
        The reference system.
    gate : {"superiority", "non-inferiority", "equivalence"}
    margin : float
        In the metric's units (0.01 = one point of accuracy).
    candidates : list of str, optional
        Systems to gate (default: every system but the baseline).
    cluster : str, optional
        Column of unit clusters (cluster-robust SE).
    higher_is_better : bool, optional
        The direction of a metric that declares none (``sample_mean@COL`` of a harness's
        score column); refused when it contradicts the metric's own.

    Returns
    -------
    DataFrame
        One row per (task, candidate): ``[task,] system, baseline, metric, gate, margin, alpha,
        n, mean_diff, se, df, ci_low, ci_high, statistic, p_value, holds, method``.
        ``attrs["holds"]`` is the overall decision (every row holds) and ``attrs["verdict"]``
        its one-line summary.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"system": ["old"] * 200 + ["new"] * 200, "id": list(range(200)) * 2,
    ...                   "correct": [1, 0] * 100 + [1, 0] * 100})
    >>> out = gate(t, "accuracy", baseline="old", gate="non-inferiority", margin=0.05)
    >>> out.attrs["holds"], out["mean_diff"].item()
    (True, 0.0)
    """
    check_choice(gate, "gate", GATES)
    check_level(alpha, "alpha")
    margin = _margin(margin, gate)
    record, groups = paired_units(table, metric, kind=kind, cluster=cluster, nan_policy=nan_policy, **kind_options)
    sign = 1.0 if _direction(record, higher_is_better) else -1.0
    rows = []
    for units in groups:
        if baseline not in units.systems:
            raise InputError(f"baseline {baseline!r} is not among the systems {units.systems}")
        chosen = [s for s in units.systems if s != baseline] if candidates is None else list(candidates)
        if not chosen:
            raise InputError("gate: no candidate system besides the baseline")
        for system in chosen:
            d = sign * (units.column(system) - units.column(baseline))
            result = paired_gate(d, gate, margin, alpha=alpha, clusters=units.clusters)
            rows.append({"task": units.task, "system": system, "baseline": baseline, "metric": record.name,
                         **asdict(result)})
    out = pd.DataFrame(rows)
    if all(u.task is None for u in groups):
        out = out.drop(columns="task")
    out.attrs.update({"scorebench_version": __version__, "holds": bool(out["holds"].all()),
                      "verdict": gate_verdict(out),
                      "orientation": ("mean_diff = system - baseline" if sign > 0 else
                                      "mean_diff = baseline - system (lower is better), so positive favours system"),
                      "decision": "holds when every row holds (intersection-union test at level alpha)"})
    return out
