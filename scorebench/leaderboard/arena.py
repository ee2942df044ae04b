r"""Board section kind ``[arena]``: Chatbot-Arena ratings from battles, plain and style-controlled.

A spec block::

    [arena]
    source = "battles"          # a battles table: model_a, model_b, winner, style_* columns
    features = "v1"             # FastChat's length, headers, lists, bold (or a list of names)
    anony = true                # optional filters: anony, language, category
    n_boot = 200                # battle resamples (default: the board's n_boot)
    anchor = "chat-gamma"       # optional: this model sits at anchor_rating (default init 1000)

gives two sections, both from :func:`scorebench.aggregate.style_control.style_control`:

* the ratings: the Bradley–Terry rating with style control (strengths and style
  coefficients fitted jointly, Elo scale 400, base 10, ridge ``reg``), its percentile
  interval over battle resamples, the Arena rank (1 + the number of models whose lower
  bound exceeds this model's upper bound), the same for the plain Bradley–Terry fit, and
  "rank Δ (style)" = plain Arena rank − style-controlled Arena rank (positive: the model
  rises once style is controlled);
* the style coefficients (log-odds per standard deviation of the standardised feature
  :math:`(f_a - f_b)/(f_a + f_b + 1)`) with their intervals.

Reference: Chiang et al. (2024), Chatbot Arena, ICML; Li et al. (2024), Does Style Matter?
(LMSYS blog); FastChat ``rating_systems.compute_style_control``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError
from .board import Section, cell

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


def parse_arena(data: Any, where: str) -> ArenaSpec:
    """The ``[arena]`` table of a spec (errors name ``where`` and the key).

    Examples
    --------
    >>> parse_arena({"source": "battles", "anony": True, "n_boot": 50}, "b.toml: arena").n_boot
    50
    >>> parse_arena({"source": "battles", "reg": 0}, "b.toml: arena")
    Traceback (most recent call last):
    ...
    scorebench.errors.InputError: b.toml: arena: 'reg' must be > 0 (a ridge penalty), got 0.0
    """
    from .spec import _check_rounds, _Reader

    r = _Reader(data, where)
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
                     n_boot=r.get("n_boot", int, None), title=r.get("title", str, None))
    r.done()
    if not (spec.reg > 0 and np.isfinite(spec.reg)):
        raise InputError(f"{where}: 'reg' must be > 0 (a ridge penalty), got {spec.reg}")
    if spec.anchor_rating is not None and spec.anchor is None:
        raise InputError(f"{where}: 'anchor_rating' needs 'anchor' (the model placed at that rating)")
    if spec.n_boot is not None:
        _check_rounds(spec.n_boot, f"{where} n_boot")
    return spec


def _battle_counts(table: pd.DataFrame, block: ArenaSpec) -> dict[str, float]:
    """Battles each model played after the block's filters (weighted when the table has weights)."""
    from ..aggregate.input import as_battles
    from ..aggregate.style_control import filter_battles

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
    from ..aggregate.style_control import style_control

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
    return [main, _coefficient_section(result, key, spec.ci, n_boot, spec.digits)]
