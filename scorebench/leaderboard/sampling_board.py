r"""Board section kind ``[sampling]``: pass@k curves with bands from one repeated-sampling run.

A spec block::

    [sampling]
    source = "attempts"   # an attempts table: system, item, attempt, correct (see the attempts kind)
    ks = [1, 2, 4, 8, 16] # optional: the k values (default: powers of 2 up to the fewest attempts per item)
    n_boot = 500          # optional: bootstrap rounds (default: the board's n_boot)

gives one section: a row per system with pass@k at each k (unbiased, Chen et al. 2021) and its
two-level bootstrap interval (items, then attempts within items), sorted by the largest k's
pass@k; and a figure of the curves with their bands (x on a log2 scale).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.leaderboard.board import Figure, Section, cell

__all__ = ["SamplingSpec", "parse_sampling", "sampling_sections"]


@dataclass(frozen=True)
class SamplingSpec:
    """pass@k curves of an attempts source."""

    source: str
    ks: tuple[int, ...] = ()
    n_boot: int | None = None
    title: str | None = None


def parse_sampling(data: Any, where: str) -> SamplingSpec:
    """The ``[sampling]`` table of a spec (errors name ``where`` and the key).

    Examples
    --------
    >>> parse_sampling({"source": "attempts", "ks": [1, 4, 16]}, "b.toml: sampling").ks
    (1, 4, 16)
    >>> parse_sampling({"source": "attempts", "ks": [0]}, "b.toml: sampling")
    Traceback (most recent call last):
    ...
    scorebench.core.errors.InputError: b.toml: sampling: 'ks' expected distinct integers >= 1, got [0]
    """
    from scorebench.leaderboard.spec import check_rounds, SpecReader

    r = SpecReader(data, where)
    ks = r.get("ks", list, [])
    if not all(isinstance(k, int) and not isinstance(k, bool) and k >= 1 for k in ks) or len(set(ks)) != len(ks):
        raise InputError(f"{where}: 'ks' expected distinct integers >= 1, got {ks!r}")
    spec = SamplingSpec(source=r.get("source", str, required=True), ks=tuple(sorted(ks)),
                        n_boot=r.get("n_boot", int, None), title=r.get("title", str, None))
    r.done()
    if spec.n_boot is not None:
        check_rounds(spec.n_boot, f"{where} n_boot")
    return spec


def _default_ks(table: pd.DataFrame) -> tuple[int, ...]:
    from scorebench.core.tables import get_kind

    sizes = get_kind("attempts").extract(table, nan_policy="raise").arrays["n_attempts"]
    fewest = int(sizes.min())
    return tuple(2 ** j for j in range(int(np.log2(fewest)) + 1))


def _curves_svg(frame: pd.DataFrame, ci: float) -> str:
    from scorebench.leaderboard.plots import figure_svg, label

    def draw(fig):
        ax = fig.subplots()
        for system, g in frame.groupby("system", sort=False):
            g = g.sort_values("k")
            line, = ax.plot(g["k"], g["value"], marker="o", ms=3, lw=1.2, label=label(system, 24))
            if g["ci_low"].notna().all():
                ax.fill_between(g["k"], g["ci_low"], g["ci_high"], color=line.get_color(), alpha=0.15, lw=0)
        ax.set_xscale("log", base=2)
        ks = sorted(frame["k"].unique())
        ax.set_xticks(ks, [str(k) for k in ks])
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("k (attempts per trial)")
        ax.set_ylabel(f"pass@k (bands: {ci:.0%} two-level bootstrap)")
        ax.legend(loc="lower right", fontsize=7, frameon=False)

    return figure_svg(draw, figsize=(6.0, 4.2))


def sampling_sections(ctx: Any, block: SamplingSpec) -> list[Section]:
    """The pass@k table and figure of a ``[sampling]`` block."""
    import scorebench

    spec = ctx.spec
    n_boot = spec.n_boot if block.n_boot is None else block.n_boot
    table = ctx.table(block.source)
    ks = block.ks or _default_ks(table)
    scores = scorebench.evaluate(table, [f"pass@{k}" for k in ks], kind="attempts", by="system", ci=spec.ci,
                                 n_boot=n_boot, seed=spec.seed)
    scores["k"] = scores["metric"].str.split("@").str[1].astype(int)
    last = scores[scores["k"] == max(ks)].sort_values(["value", "system"], ascending=[False, True])
    order = last["system"].tolist()
    scores = scores.set_index("system").loc[order].reset_index()
    rows, records = [], []
    for system in order:
        g = scores[scores["system"] == system].sort_values("k")
        rows.append((str(system), str(int(g["n"].iloc[0])),
                     *(cell(v, lo, hi, spec.digits) for v, lo, hi in zip(g["value"], g["ci_low"], g["ci_high"]))))
        for r in g.itertuples(index=False):
            records.append({"section": "sampling", "system": system, "metric": r.metric, "value": float(r.value),
                            "ci_low": None if np.isnan(r.ci_low) else float(r.ci_low),
                            "ci_high": None if np.isnan(r.ci_high) else float(r.ci_high), "n": int(r.n)})
    how = (f"{spec.ci:.0%} two-level bootstrap intervals over {n_boot} rounds (items resampled, then attempts "
           "within each drawn item; centred on the estimate)" if n_boot else "no intervals (n_boot = 0)")
    note = ("pass@k for every k from one run of n attempts per item: the unbiased estimator "
            "1 − C(n − c, k)/C(n, k) per item (Chen et al. 2021, product form), averaged over items. "
            f"Cells: pass@k [{how}]; n = items. Sorted by pass@{max(ks)}. The figure draws the curves with "
            "their bands.")
    figure = Figure("pass_at_k_curves", f"pass@k curves with {spec.ci:.0%} bands", _curves_svg(scores, spec.ci))
    columns = ("system", "items", *(f"pass@{k}" for k in ks))
    return [Section("sampling", block.title or "Repeated sampling: pass@k curves", note, columns, tuple(rows),
                    pd.DataFrame.from_records(records), (figure,))]
