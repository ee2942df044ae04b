r"""Board section kind ``[arena]``: Chatbot-Arena ratings from battles, plain and style-controlled.

A spec block::

    [arena]
    source = "battles"          # a battles table: model_a, model_b, winner, style_* columns
    features = "v1"             # FastChat's length, headers, lists, bold (or a list of names)
    anony = true                # optional filters: anony, language, category
    n_boot = 200                # battle resamples (default: the board's n_boot)
    anchor = "chat-gamma"       # optional: this model sits at anchor_rating (default init 1000)
    tie_model = "davidson"      # optional: a section with ties modelled ("davidson" / "rao_kupper")
    diagnostics = true          # optional: the selection-bias diagnostics section
    providers = { "chat-a" = "acme", ... }   # for the diagnostics (default: name up to "-" or "/")
    deprecated = ["chat-old"]   # for the diagnostics (default: no battle in the last quarter)
    best_of = 10                # private variants in the best-of-N inflation

gives two sections, both from :func:`scorebench.aggregate.style_control.style_control`:

* the ratings: the Bradley–Terry rating with style control (strengths and style
  coefficients fitted jointly, Elo scale 400, base 10, ridge ``reg``), its percentile
  interval over battle resamples, the Arena rank (1 + the number of models whose lower
  bound exceeds this model's upper bound), the same for the plain Bradley–Terry fit, and
  "rank Δ (style)" = plain Arena rank − style-controlled Arena rank (positive: the model
  rises once style is controlled);
* the style coefficients (log-odds per standard deviation of the standardised feature
  :math:`(f_a - f_b)/(f_a + f_b + 1)`) with their intervals;

and, on request, two more:

* ``tie_model``: ratings with ties modelled (:mod:`scorebench.aggregate.tie_models`) beside the
  plain Bradley–Terry ratings (tie = half a win), both with sandwich (robust) intervals as
  arena-rank computes them, and the tie parameter with its interval;
* ``diagnostics``: the selection-bias diagnostics of :mod:`scorebench.aggregate.selection_bias`
  (battles and sampling share per model and provider, best-of-N inflation, the rating change
  when deprecated models are removed).

Reference: Chiang et al. (2024), Chatbot Arena, ICML; Li et al. (2024), Does Style Matter?
(LMSYS blog); FastChat ``rating_systems.compute_style_control``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.leaderboard.board import Section, cell
from scorebench.io.tables import format_value

__all__ = ["ArenaSpec", "parse_arena", "arena_sections"]


@dataclass(frozen=True)
class ArenaSpec:
    """Arena ratings (plain and style-controlled Bradley–Terry) from a battles source."""

    source: str
    features: tuple[str, ...] | str = "v1"
    reg: float = 0.5
    anchor: str | None = None
    anchor_rating: float | None = None
    anony: bool | None = None
    language: str | None = None
    category: str | None = None
    n_boot: int | None = None
    title: str | None = None
    tie_model: str | None = None
    diagnostics: bool = False
    providers: tuple[tuple[str, str], ...] | None = None
    deprecated: tuple[str, ...] | None = None
    best_of: int = 10


def parse_arena(data: Any, where: str) -> ArenaSpec:
    """The ``[arena]`` table of a spec (errors name ``where`` and the key).

    Examples
    --------
    >>> parse_arena({"source": "battles", "anony": True, "n_boot": 50}, "b.toml: arena").n_boot
    50
    >>> parse_arena({"source": "battles", "reg": 0}, "b.toml: arena")
    Traceback (most recent call last):
    ...
    scorebench.core.errors.InputError: b.toml: arena: 'reg' must be > 0 (a ridge penalty), got 0.0
    """
    from scorebench.leaderboard.spec import check_rounds, SpecReader

    r = SpecReader(data, where)
    features = r.get("features", (str, list), "v1")
    if isinstance(features, list):
        if not features or not all(isinstance(f, str) and f for f in features):
            raise InputError(f"{where}: 'features' expected \"v1\", \"all\" or a non-empty list of feature names")
        features = tuple(features)
    rating = r.get("anchor_rating", (int, float), None)
    spec = ArenaSpec(source=r.get("source", str, required=True), features=features,
                     reg=float(r.get("reg", (int, float), 0.5)), anchor=r.get("anchor", str, None),
                     anchor_rating=None if rating is None else float(rating), anony=r.get("anony", bool, None),
                     language=r.get("language", str, None), category=r.get("category", str, None),
                     n_boot=r.get("n_boot", int, None), title=r.get("title", str, None),
                     tie_model=r.get("tie_model", str, None), diagnostics=r.get("diagnostics", bool, False),
                     providers=_providers(r.get("providers", dict, None), where),
                     deprecated=_names(r.get("deprecated", list, None), where),
                     best_of=r.get("best_of", int, 10))
    r.done()
    from scorebench.aggregate.tie_models import TIE_MODELS

    if spec.tie_model is not None and spec.tie_model not in TIE_MODELS:
        raise InputError(f"{where}: 'tie_model' expected one of {sorted(TIE_MODELS)}, got {spec.tie_model!r}")
    if not 1 <= spec.best_of <= 1000:
        raise InputError(f"{where}: 'best_of' expected an integer in [1, 1000], got {spec.best_of}")
    if not (spec.reg > 0 and np.isfinite(spec.reg)):
        raise InputError(f"{where}: 'reg' must be > 0 (a ridge penalty), got {spec.reg}")
    if spec.anchor_rating is not None and spec.anchor is None:
        raise InputError(f"{where}: 'anchor_rating' needs 'anchor' (the model placed at that rating)")
    if spec.n_boot is not None:
        check_rounds(spec.n_boot, f"{where} n_boot")
    return spec


def _providers(value: Any, where: str) -> tuple[tuple[str, str], ...] | None:
    if value is None:
        return None
    if not all(isinstance(k, str) and isinstance(v, str) and v for k, v in value.items()):
        raise InputError(f"{where}: 'providers' expected a table model = \"provider\" of strings")
    return tuple(sorted(value.items()))


def _names(value: Any, where: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    if not all(isinstance(v, str) and v for v in value):
        raise InputError(f"{where}: 'deprecated' expected a list of model names")
    return tuple(value)


def _battle_counts(table: pd.DataFrame, block: ArenaSpec) -> dict[str, float]:
    """Battles each model played after the block's filters (weighted when the table has weights)."""
    from scorebench.aggregate.input import as_battles
    from scorebench.aggregate.style_control import filter_battles

    battles = as_battles(filter_battles(table, block.anony, block.language, block.category))
    n = len(battles.systems)
    counts = np.bincount(battles.a, battles.weight, n) + np.bincount(battles.b, battles.weight, n)
    return dict(zip(battles.systems, counts.tolist()))


def _filters(block: ArenaSpec) -> str:
    parts = [f"{k} = {v}" for k, v in (("anony", block.anony), ("language", block.language),
                                        ("category", block.category)) if v is not None]
    return f"battles filtered by {', '.join(parts)}" if parts else "all battles"


def _rating_rows(result: Any, counts: dict[str, float], digits: int) -> tuple[list[tuple[str, ...]], list[dict]]:
    frame = result.to_frame()
    index = {s: i for i, s in enumerate(result.systems)}
    intervals = result.ci_low is not None
    nan = np.full(len(result.systems), np.nan)
    plain_lo = result.plain_low if intervals else nan
    plain_hi = result.plain_high if intervals else nan
    rows, records = [], []
    for row in frame.itertuples(index=False):
        i = index[row.system]
        delta = int(row.rank_delta)
        rows.append((str(int(row.rank)), str(row.system), cell(row.rating, row.ci_low if intervals else np.nan,
                                                              row.ci_high if intervals else np.nan, digits),
                     str(int(row.plain_rank)), cell(row.plain_rating, plain_lo[i], plain_hi[i], digits),
                     f"{delta:+d}" if delta else "0", f"{counts.get(row.system, 0.0):g}"))
        battles = counts.get(row.system, 0.0)
        battles = int(battles) if float(battles).is_integer() else battles  # an integer n, as on the other boards
        for metric, value, lo, hi, rank in (
                ("bt_style_rating", row.rating, row.ci_low, row.ci_high, row.rank),
                ("bt_plain_rating", row.plain_rating, plain_lo[i], plain_hi[i], row.plain_rank)):
            records.append({"section": "arena", "system": row.system, "metric": metric, "value": float(value),
                            "ci_low": float(lo) if intervals else None, "ci_high": float(hi) if intervals else None,
                            "n": battles, "rank": int(rank)})
        records.append({"section": "arena", "system": row.system, "metric": "rank_delta_style", "value": delta,
                        "n": battles})
    return rows, records


def _coefficient_section(result: Any, key: str, ci: float, n_boot: int, digits: int) -> Section:
    intervals = result.coef_low is not None
    rows, records = [], []
    for j, feature in enumerate(result.features):
        lo = result.coef_low[j] if intervals else np.nan
        hi = result.coef_high[j] if intervals else np.nan
        rows.append((feature, cell(result.coefficients[j], lo, hi, digits)))
        records.append({"section": f"{key}-style", "metric": feature, "value": float(result.coefficients[j]),
                        "ci_low": float(lo) if intervals else None, "ci_high": float(hi) if intervals else None,
                        "n": int(result.n_battles)})
    how = (f"{ci:.0%} percentile intervals over {n_boot} battle resamples" if intervals
           else "no intervals (n_boot = 0)")
    note = ("Coefficients of the style covariates, fitted jointly with the strengths: the change in the log-odds "
            "of winning per standard deviation of the feature's normalised difference (f_a − f_b)/(f_a + f_b + 1) "
            f"between the two answers; positive: the judges prefer more of it. Cells: coefficient [{how}]. An "
            "interval that excludes 0 says the feature moves votes beyond what the models' strengths explain."
            + (" The intervals cover the coefficient under the population of battles these were drawn from."
               if intervals else ""))
    return Section(f"{key}-style", "Arena: style coefficients", note, ("feature", "coefficient"), tuple(rows),
                   pd.DataFrame.from_records(records))


def arena_sections(ctx: Any, block: ArenaSpec) -> list[Section]:
    """The ratings section and the style-coefficient section of an ``[arena]`` block."""
    from scorebench.aggregate.style_control import style_control

    spec = ctx.spec
    n_boot = spec.n_boot if block.n_boot is None else block.n_boot
    table = ctx.table(block.source)
    features = list(block.features) if isinstance(block.features, tuple) else block.features
    result = style_control(table, features=features, reg=block.reg, anchor=block.anchor,
                           anchor_rating=block.anchor_rating, anony=block.anony, language=block.language,
                           category=block.category, n_boot=n_boot, seed=spec.seed, ci=spec.ci)
    rows, records = _rating_rows(result, _battle_counts(table, block), spec.digits)
    intervals = n_boot > 0
    anchor = (f"; {block.anchor} anchored at {block.anchor_rating or 1000.0:g}" if block.anchor
              else "; ratings centred at 1000 by the ridge penalty")
    how = (f"{spec.ci:.0%} percentile intervals over {n_boot} battle resamples (battles drawn with replacement; "
           "features standardised once, as FastChat)" if intervals else "no intervals (n_boot = 0)")
    note = (f"Bradley–Terry ratings from {result.n_battles} battles ({_filters(block)}): P(a beats b) = "
            "σ(ln 10 · (r_a − r_b)/400 + x_ab·γ), with the style covariates x_ab (features: "
            f"{', '.join(result.features)}) for the style-controlled rating and without them for the plain one; "
            f"L-BFGS with a ridge penalty {block.reg:g} on (r, γ), Elo scale 400{anchor}. Cells: "
            f"rating [{how}]. Arena rank: 1 + the number of models whose lower bound exceeds this model's upper "
            "bound" + ("" if intervals else " (without intervals: competition rank of the point ratings)")
            + ". Rank Δ (style) = plain Arena rank − style-controlled Arena rank: positive when a model rises "
            "once style is controlled, negative when its plain rating owed to answer length and markdown. "
            "Sorted by the style-controlled Arena rank, then rating."
            + (" What the intervals cover: each model's rating under the population of battles these were drawn "
               "from (the same prompts, voters and filters), not its rating under other prompts or voters."
               if intervals else ""))
    columns = ("rank (style control)", "system", "rating (style control)", "rank (plain BT)", "rating (plain BT)",
               "rank Δ (style)", "battles")
    key = "arena"
    main = Section(key, block.title or "Arena ratings: plain and style-controlled Bradley–Terry", note, columns,
                   tuple(rows), pd.DataFrame.from_records(records),
                   groups=(("rank (plain BT)", "plain Bradley–Terry"), ("rating (plain BT)", "plain Bradley–Terry")))
    out = [main, _coefficient_section(result, key, spec.ci, n_boot, spec.digits)]
    if block.tie_model is not None or block.diagnostics:
        from scorebench.aggregate.input import as_battles
        from scorebench.aggregate.style_control import filter_battles

        battles = as_battles(filter_battles(table, block.anony, block.language, block.category))
        if block.tie_model is not None:
            out.append(_ties_section(battles, block, key, spec))
        if block.diagnostics:
            out.append(_diagnostics_section(battles, block, key, spec))
    return out


def _ties_section(battles: Any, block: ArenaSpec, key: str, spec: Any) -> Section:
    """Ratings with ties modelled beside plain BT (tie = ½ win), both with sandwich intervals."""
    from scorebench.aggregate.pair_counts import normal_bounds
    from scorebench.aggregate.pairwise import bradley_terry_sandwich
    from scorebench.aggregate.tie_models import TIE_MODELS, fit_tie_model

    fit = fit_tie_model(battles, block.tie_model, ci=spec.ci)
    unit = 400.0 / np.log(10.0)
    n = battles.n_systems
    tied = 1000.0 + unit * fit.theta
    t_lo, t_hi = normal_bounds(tied, unit * np.sqrt(np.diag(fit.cov)[:n]), spec.ci)
    half, cov = bradley_terry_sandwich(battles)
    h_lo, h_hi = normal_bounds(half, np.sqrt(np.diag(cov)), spec.ci)
    arena = 1 + (t_lo[None, :] > t_hi[:, None]).sum(axis=1)
    arena_half = 1 + (h_lo[None, :] > h_hi[:, None]).sum(axis=1)
    counts = np.bincount(battles.a, battles.weight, n) + np.bincount(battles.b, battles.weight, n)
    order = np.lexsort((-tied, arena))
    rows, records = [], []
    name = {"davidson": "Davidson", "rao_kupper": "Rao–Kupper"}.get(block.tie_model, block.tie_model)
    for i in order:
        s = battles.systems[i]
        rows.append((str(int(arena[i])), s, cell(tied[i], t_lo[i], t_hi[i], spec.digits), str(int(arena_half[i])),
                     cell(half[i], h_lo[i], h_hi[i], spec.digits), f"{counts[i]:g}"))
        nb = int(counts[i]) if float(counts[i]).is_integer() else float(counts[i])
        for metric, v, lo, hi, rank in ((f"bt_{block.tie_model}_rating", tied[i], t_lo[i], t_hi[i], arena[i]),
                                        ("bt_sandwich_rating", half[i], h_lo[i], h_hi[i], arena_half[i])):
            records.append({"section": f"{key}-ties", "system": s, "metric": metric, "value": float(v),
                            "ci_low": float(lo), "ci_high": float(hi), "n": nb, "rank": int(rank)})
    tm = TIE_MODELS[block.tie_model]
    records.append({"section": f"{key}-ties", "metric": f"tie_parameter_{tm.parameter}",
                    "value": float(fit.tie_parameter), "ci_low": float(fit.tie_low), "ci_high": float(fit.tie_high),
                    "n": int(len(battles.a))})
    ties = float(battles.weight[battles.outcome == 0.5].sum() / battles.weight.sum())
    law = ("P(tie) = ν√(π_a π_b)/(π_a + π_b + ν√(π_a π_b))" if block.tie_model == "davidson"
           else "P(a) = π_a/(π_a + ϑ π_b), P(tie) = (ϑ² − 1)π_a π_b/((π_a + ϑπ_b)(π_b + ϑπ_a))")
    note = (f"Ties are {ties:.1%} of the {len(battles.a)} battles ({_filters(block)}). Left: ratings with ties "
            f"modelled ({name}: {law}, π = 10^(r/400)); tie parameter {tm.parameter} = "
            f"{format_value(fit.tie_parameter, spec.digits)} [{format_value(fit.tie_low, spec.digits)}, "
            f"{format_value(fit.tie_high, spec.digits)}]. Right: plain Bradley–Terry with a tie counted as half a "
            "win each way. Both by maximum likelihood on the (pair, outcome) counts, centred at 1000, with "
            f"{spec.ci:.0%} sandwich (robust) intervals r ± z·se, se² from H⁻¹GH⁻¹ (H the information, G the "
            "sum of per-battle squared scores; arena-rank's default). Arena rank: 1 + the number of models whose "
            "lower bound exceeds this model's upper bound. Sorted by the tie-model Arena rank, then rating.")
    columns = (f"rank ({name})", "system", f"rating ({name} ties)", "rank (BT, tie = ½)", "rating (BT, tie = ½)",
               "battles")
    return Section(f"{key}-ties", f"Arena: ties modelled ({name}) vs tie = half a win, sandwich intervals", note,
                   columns, tuple(rows), pd.DataFrame.from_records(records))


def _diagnostics_section(battles: Any, block: ArenaSpec, key: str, spec: Any) -> Section:
    """Selection-bias diagnostics: sampling shares, best-of-N inflation, deprecation refit."""
    from scorebench.aggregate.selection_bias import best_of_n_inflation, deprecation_effect, sampling_shares

    providers = dict(block.providers) if block.providers is not None else None
    shares = sampling_shares(battles, providers)
    inflation = best_of_n_inflation(battles, n_variants=block.best_of, n_sim=200, seed=spec.seed).set_index("system")
    deprecated = list(block.deprecated) if block.deprecated is not None else None
    dep = deprecation_effect(battles, deprecated)
    change = dep.set_index("system")["change"]
    gone = dep.attrs["deprecated"]
    rows, records = [], []
    for row in shares.itertuples(index=False):
        s = row.system
        inf = inflation.loc[s]
        ch = change.get(s, np.nan)
        rows.append((s, str(row.provider), f"{row.battles:g}", f"{row.share:.1%}", f"{row.provider_share:.1%}",
                     f"{row.provider_battles_per_model:g}",
                     f"{inf['inflation']:+.2f} ± {inf['inflation_se']:.2f}",
                     "deprecated" if s in gone else (f"{ch:+.2f}" if np.isfinite(ch) else "—")))
        nb = int(row.battles) if float(row.battles).is_integer() else float(row.battles)
        for metric, value in (("sampling_share", row.share), ("provider_share", row.provider_share),
                              ("best_of_n_inflation", inf["inflation"]), ("deprecation_change", ch)):
            if np.isfinite(value):
                records.append({"section": f"{key}-diagnostics", "system": s, "metric": metric,
                                "value": float(value), "n": nb})
    dep_text = (f"without the battles of the deprecated model(s) {', '.join(gone)}" if gone else
                "no model is deprecated (every model played in the last quarter of the battles), so nothing changes")
    note = ("Selection-bias diagnostics after Singh et al. (2025), The Leaderboard Illusion. Battles: the model's "
            "appearances; share: its share of all appearances (two per battle); provider share and battles per "
            f"model of its provider. Best-of-{block.best_of} inflation: the expected Elo gain if the provider had "
            f"tested {block.best_of} private variants as strong as this model, each with this model's number of "
            "battles against its observed opponents, and published only the best (simulated from the fitted "
            "Bradley–Terry model, 200 replications, ± Monte-Carlo standard error). Deprecation: the change in "
            f"the model's Bradley–Terry rating when refitted {dep_text} (both fits centred on the remaining "
            "models).")
    columns = ("system", "provider", "battles", "share", "provider share", "battles / provider model",
               f"best-of-{block.best_of} inflation (Elo)", "Δ rating without deprecated")
    return Section(f"{key}-diagnostics", "Arena: selection-bias diagnostics", note, columns, tuple(rows),
                   pd.DataFrame.from_records(records))
