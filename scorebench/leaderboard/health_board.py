r"""Board section kind ``[health]``: the item health report of one or more item matrices.

A spec block::

    [health]
    sources = ["answers"]           # systems x items (or items x systems) 0/1 matrices
    layout = "items_x_systems"      # or "systems_x_items" (default)
    model = "2pl"
    a_prior = [1.0, 0.5]            # optional normal prior on the IRT slopes
    max_iter = 300
    alpha = 0.05                    # false discovery rate of the BH adjustments
    min_discrimination = 0.1
    mislabel_gap = 0.2
    show = 20                       # flagged items listed per source on the page (all in the data)

gives two sections, both from :func:`scorebench.health.item_health` (see there for every
statistic, its formula and reference): the number and share of items per flag for each source,
and the flagged items with their evidence, most serious first (likely mislabelled, misfit,
duplicate, negative discrimination, low discrimination, saturated).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.leaderboard.board import Section

__all__ = ["HealthSpec", "parse_health", "health_sections"]

_SEVERITY = ("likely_mislabelled", "misfit", "duplicate", "negative_discrimination", "low_discrimination",
             "saturated")
_EVIDENCE = ["issues", "p_correct", "r_rest", "a", "acc_strong", "acc_weak", "gap", "mislabel_p", "mislabel_q",
             "sx2_rmsea", "sx2_q", "lz", "lz_q", "duplicate_of", "log10_p_identical"]


@dataclass(frozen=True)
class HealthSpec:
    """Item health of item matrices (:mod:`scorebench.leaderboard.health_board`)."""

    sources: tuple[str, ...]
    layout: str = "systems_x_items"
    model: str = "2pl"
    a_prior: tuple[float, ...] = ()
    max_iter: int = 500
    alpha: float = 0.05
    min_discrimination: float = 0.1
    mislabel_gap: float = 0.2
    show: int = 20


def parse_health(data: Any, where: str) -> HealthSpec:
    """The ``[health]`` table of a spec (errors name ``where`` and the key).

    Examples
    --------
    >>> parse_health({"sources": ["a"], "show": 5}, "b.toml: health").show
    5
    >>> parse_health({"sources": ["a"], "alpha": 2}, "b.toml: health")
    Traceback (most recent call last):
    ...
    scorebench.core.errors.InputError: b.toml: health: 'alpha' must be in (0, 1), got 2.0
    """
    from scorebench.irt import MODELS
    from scorebench.leaderboard.spec import SpecReader

    r = SpecReader(data, where)
    prior = r.get("a_prior", list, [])
    spec = HealthSpec(sources=r.strings("sources", required=True), layout=r.get("layout", str, "systems_x_items"),
                      model=r.get("model", str, "2pl"), max_iter=r.get("max_iter", int, 500),
                      a_prior=tuple(float(v) for v in prior if isinstance(v, (int, float)) and not isinstance(v, bool)),
                      alpha=float(r.get("alpha", (int, float), 0.05)),
                      min_discrimination=float(r.get("min_discrimination", (int, float), 0.1)),
                      mislabel_gap=float(r.get("mislabel_gap", (int, float), 0.2)), show=r.get("show", int, 20))
    r.done()
    if spec.layout not in ("items_x_systems", "systems_x_items"):
        raise InputError(f"{where}: layout {spec.layout!r} is not 'items_x_systems' or 'systems_x_items'")
    if prior and (len(spec.a_prior) != 2 or len(prior) != 2 or not spec.a_prior[1] > 0):
        raise InputError(f"{where}: a_prior expected [mean, sd] with sd > 0, got {prior!r}")
    if spec.model not in MODELS:
        raise InputError(f"{where}: model {spec.model!r} is not one of {list(MODELS)}")
    if spec.max_iter < 1 or spec.show < 0:
        raise InputError(f"{where}: 'max_iter' must be >= 1 and 'show' >= 0")
    if not 0 < spec.alpha < 1:
        raise InputError(f"{where}: 'alpha' must be in (0, 1), got {spec.alpha}")
    if not 0 <= spec.min_discrimination < 1 or not 0 < spec.mislabel_gap <= 1:
        raise InputError(f"{where}: 'min_discrimination' must be in [0, 1) and 'mislabel_gap' in (0, 1]")
    return spec


def _fmt(v: Any, digits: int = 3) -> str:
    if v is None or (isinstance(v, float) and not np.isfinite(v)):
        return "–"
    if isinstance(v, (float, np.floating)):
        return "< 1e-4" if 0 <= v < 1e-4 and digits == 4 else f"{v:.{digits}f}"
    return str(v)


def _dup(of: Any, log10_p: float, flagged: bool) -> str:
    if of is None or (isinstance(of, float) and np.isnan(of)) or not flagged:
        return "–"
    return f"{of} (chance 1e{log10_p:.0f})"


def _severity(report: pd.DataFrame) -> pd.DataFrame:
    flagged = report[report["issues"] != ""].copy()
    rank = np.full(len(flagged), len(_SEVERITY))
    for k, flag in reversed(list(enumerate(_SEVERITY))):
        rank = np.where(flagged[flag].to_numpy(), k, rank)
    flagged["_rank"] = rank
    return flagged.sort_values(["_rank", "gap", "r_rest"], kind="stable")


def health_sections(ctx: Any, block: HealthSpec) -> list[Section]:
    """The summary section and the flagged-items section of a ``[health]`` block."""
    from scorebench.health import FLAGS, health_summary, item_health
    from scorebench.leaderboard.items_board import response_matrix_of

    summary_rows, summary_data, item_rows, item_data, notes = [], [], [], [], []
    for name in block.sources:
        wide = response_matrix_of(ctx.table(name), block.layout)
        report = item_health(wide, model=block.model, alpha=block.alpha, min_discrimination=block.min_discrimination,
                             mislabel_gap=block.mislabel_gap, a_prior=block.a_prior or None, max_iter=block.max_iter)
        at = report.attrs
        summary = health_summary(report).set_index("flag")
        summary_rows.append((name, str(at["n_items"]), str(at["n_systems"]),
                             *(f"{summary.loc[f, 'items']} ({100 * summary.loc[f, 'share']:.1f}%)"
                               for f in (*FLAGS, "any"))))
        for flag, row in summary.iterrows():
            summary_data.append({"section": "health", "task": name, "metric": f"items_{flag}",
                                 "value": int(row["items"]), "share": float(row["share"]), "n": at["n_items"]})
        flagged = _severity(report)
        for item, r in flagged.head(block.show).iterrows():
            item_rows.append((name, str(item), r["issues"], _fmt(r["p_correct"]), _fmt(r["r_rest"]), _fmt(r["a"]),
                              f"{_fmt(r['acc_strong'], 2)} / {_fmt(r['acc_weak'], 2)}",
                              f"{_fmt(r['mislabel_p'], 4)} ({_fmt(r['mislabel_q'], 2)})",
                              _fmt(r["sx2_rmsea"]), _fmt(r["sx2_q"], 4), _fmt(r["lz_q"], 4),
                              _dup(r["duplicate_of"], r["log10_p_identical"], r["duplicate"])))
        rest = flagged[_EVIDENCE].reset_index()
        item_data.append(rest.assign(section="health-items", task=name))
        if len(flagged) > block.show:
            notes.append(f"{name}: {len(flagged) - block.show} more flagged items in the data")
        if not at["sx2"]:
            notes.append(f"{name}: S-X2 not computed ({at['n_items']} items; only the item l_z)")
        if not at["duplicates_checked"]:
            notes.append(f"{name}: duplicates not checked (only {at['n_systems']} systems)")
    k = ("top and bottom third of the systems by accuracy; strong/weak = their accuracies on the item")
    how = (f"by MAP: the marginal likelihood times a normal prior N{tuple(block.a_prior)} on the slopes"
           if block.a_prior else "by marginal maximum likelihood")
    note = (f"Item health ({block.model.upper()} fitted {how}"
            + f"). Saturated: every system right or every one wrong. Negative / low discrimination: corrected "
            f"item-total correlation r < 0 / in [0, {block.min_discrimination:g}). Misfit: Orlando–Thissen S-X2 "
            f"(with RMSEA > 0.05) or the item l_z statistic significant after Benjamini–Hochberg at FDR "
            f"{block.alpha:g}. Likely mislabelled: negative IRT slope a (Fluid Benchmarking's sign of a label "
            f"error) and strong-minus-weak accuracy ≤ −{block.mislabel_gap:g} ({k}). Duplicate: answers identical "
            "to an earlier item's on every system, with a chance of at most 1e-6 if the two were answered "
            "independently given ability (score deciles). An item may carry several flags.")
    columns = ("benchmark", "items", "systems", *(f.replace("_", " ") for f in FLAGS), "any flag")
    main = Section("health", "Item health: saturated, non-discriminating, misfitting, mislabelled and duplicate "
                   "items", note, columns, tuple(summary_rows), pd.DataFrame.from_records(summary_data))
    i_note = ("Flagged items, most serious first (likely mislabelled, misfit, duplicate, negative discrimination, "
              "low discrimination, saturated), at most "
              f"{block.show} per benchmark. Evidence: p = proportion right; r = corrected item-total correlation; "
              "a = IRT slope; strong / weak = accuracy of the strongest / weakest third of the systems; mislabel p: "
              "one-sided Fisher exact test that the strong are right less often than the weak, with its "
              "Benjamini–Hochberg adjustment q over all items (with few systems no item can reach significance); "
              "q S-X2, q l_z: BH-adjusted p-values of the fit statistics (l_z: low tail). "
              + ("; ".join(notes) + "." if notes else ""))
    i_columns = ("benchmark", "item", "issues", "p", "r", "a", "strong / weak", "mislabel p (q)", "S-X2 RMSEA",
                 "q S-X2", "q l_z", "duplicate of")
    data = pd.concat(item_data, ignore_index=True) if item_data else pd.DataFrame()
    if not data.empty:
        data = data[["section", "task", "item", *_EVIDENCE]]
    items = Section("health-items", "Flagged items and their evidence", i_note, i_columns, tuple(item_rows), data,
                    filters=(("benchmark", "cat"), ("issues", "cat")))
    return [main, items] if item_rows else [main]  # no flagged item: no empty table
