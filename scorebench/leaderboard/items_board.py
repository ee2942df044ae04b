r"""Board sections for a systems x items right/wrong matrix (e.g. ChemBench's 2,854 questions).

* accuracy with Wilson score intervals (:func:`scorebench.analysis.stats_tests.wilson_interval`);
* pairwise McNemar tests between all systems, Holm-adjusted over every pair
  (:func:`scorebench.aggregate.ties.pairwise_p_values`), shown as a significance matrix and
  turned into tie bands (:func:`scorebench.aggregate.ties.tie_classes`);
* IRT abilities (:func:`scorebench.irt.fit`, EAP with posterior sd) beside accuracy, and the
  test information function :math:`I(\theta) = \sum_j I_j(\theta)` of the fitted items with
  the systems' abilities marked (:func:`scorebench.irt.item_information`).

References: Wilson (1927), JASA 22:209; McNemar (1947), Psychometrika 12:153; Holm (1979),
Scand. J. Statist. 6:65; Birnbaum (1968) for the 2PL and its item information.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.io.tables import format_value

__all__ = ["response_matrix_of", "items_sections"]

Z95 = 1.959963984540054


def response_matrix_of(table: pd.DataFrame, layout: str) -> pd.DataFrame:
    """Systems x items 0/1 frame from a wide CSV table (first column: the row labels when unnamed).

    Examples
    --------
    >>> t = pd.DataFrame({"Unnamed: 0": [0, 1], "m1": [1.0, 0.0], "m2": [1.0, 1.0]})
    >>> response_matrix_of(t, "items_x_systems").to_dict(orient="index")
    {'m1': {'0': 1.0, '1': 0.0}, 'm2': {'0': 1.0, '1': 1.0}}
    """
    first = str(table.columns[0])
    if first.startswith("Unnamed") or first in ("", "item", "system", "model"):
        table = table.set_index(table.columns[0])
    table.index = table.index.map(str)
    table.columns = table.columns.map(str)
    wide = table.T if layout == "items_x_systems" else table
    values = wide.apply(pd.to_numeric, errors="coerce")
    bad = ~values.isin([0.0, 1.0])
    if bad.to_numpy().any():
        r, c = np.argwhere(bad.to_numpy())[0]
        raise InputError(f"items board: every answer must be 0 or 1 (no missing); system {values.index[r]!r}, "
                         f"item {values.columns[c]!r} holds {wide.iat[r, c]!r}")
    if values.index.duplicated().any():
        raise InputError(f"items board: duplicate system names {sorted(set(values.index[values.index.duplicated()]))}")
    if values.shape[0] < 2 or values.shape[1] < 2:
        raise InputError(f"items board: need at least 2 systems and 2 items, got {values.shape}")
    return values.astype(np.float64)


def _p_text(p: float) -> str:
    return "< 1e-4" if p < 1e-4 else f"{p:.4f}"


def items_sections(ctx: Any, block: Any) -> list:
    """Sections of an ``[items]`` block (see the module docstring)."""
    from scorebench import irt
    from scorebench.aggregate import competition_ranks
    from scorebench.aggregate.ties import TIE_RULE, pairwise_p_values, tie_classes
    from scorebench.analysis.stats_tests import wilson_interval
    from scorebench.leaderboard.board import Figure, Section

    spec = ctx.spec
    wide = response_matrix_of(ctx.table(block.source), block.layout)
    systems = list(wide.index)
    values = wide.to_numpy()
    n_items = values.shape[1]
    right = values.sum(axis=1)
    acc = right / n_items
    ci = np.array([wilson_interval(k, n_items, spec.ci) for k in right])
    p = pairwise_p_values(values.T)
    alpha = 1.0 - spec.ci
    rank = competition_ranks(acc)
    order = np.lexsort((np.array(systems, dtype=object).astype(str), rank))
    bands = tie_classes(order, p, alpha)
    priors = {"a": tuple(block.a_prior)} if block.a_prior else None
    fit = irt.fit(wide, block.model, priors=priors, max_iter=block.max_iter, warn=False)
    ab = fit.abilities.reindex(systems)
    theta, se_known = ab["theta"].to_numpy(), ab["se"].to_numpy()
    sandwich = block.model in ("2pl", "1pl", "rasch")
    se = (irt.ability_sandwich(wide, fit, ci=0.95, a_prior=tuple(block.a_prior) if block.a_prior else None)
          .reindex(systems)["se"].to_numpy() if sandwich else se_known)
    d = spec.digits
    rows, records = [], []
    for pos, i in enumerate(order):
        rows.append((str(bands[pos]), str(int(rank[i])), systems[i],
                     f"{format_value(acc[i], d)} [{format_value(ci[i, 0], d)}, {format_value(ci[i, 1], d)}]",
                     f"{int(right[i])}/{n_items}",
                     f"{format_value(theta[i], 3)} [{format_value(theta[i] - Z95 * se[i], 3)}, "
                     f"{format_value(theta[i] + Z95 * se[i], 3)}]", format_value(se[i], 3)))
        records.append({"section": "items", "system": systems[i], "task": None, "metric": "accuracy",
                        "value": acc[i], "ci_low": ci[i, 0], "ci_high": ci[i, 1], "n": n_items,
                        "rank": int(rank[i]), "band": int(bands[pos])})
        records.append({"section": "items", "system": systems[i], "task": None, "metric": f"{block.model} ability",
                        "value": theta[i], "ci_low": theta[i] - Z95 * se[i], "ci_high": theta[i] + Z95 * se[i],
                        "n": n_items})
    flags = fit.items["flag"].fillna("").astype(str)
    informative = int((flags != "constant").sum())
    how = (f"by MAP: the marginal likelihood times a normal prior N{tuple(block.a_prior)} on the slopes "
           "(marginal posterior modes, not maximum likelihood)" if block.a_prior else "by marginal maximum likelihood")
    note = (f"{len(systems)} systems on {n_items} items. Accuracy with {spec.ci:.0%} Wilson score intervals "
            "(they cover the accuracy over a population of similar questions); rank by accuracy. The "
            f"{TIE_RULE.format(alpha=alpha)}. Ability: {block.model.upper()} model fitted {how} "
            f"({informative} items answered differently by at least two systems), EAP estimate; converged: "
            f"{fit.converged} after {fit.n_iter} iterations (max_iter {block.max_iter}). "
            + (f"What the ability band covers: θ ± 1.96 item-cluster sandwich se (scorebench.irt.ability_sandwich: "
               "the infinitesimal jackknife of resampling the items and refitting items and abilities together, "
               "plus the N(0, 1) scale identification), so it includes the uncertainty of the item parameters, "
               f"which are estimated from these same {len(systems)} systems; the sd column is that se. In simulation "
               "at 20 systems x 150 items it covered the true θ 94% of the time where the posterior-sd band (item "
               "parameters treated as known) covered 68%. Much of the width is the uncertainty of the scale's location "
               "and spread, which all systems share and which cancels in a difference, so overlapping bands do not "
               "mean a pair is indistinguishable. " if sandwich else
               "What the ability band covers: θ ± 1.96 posterior sd given the fitted item parameters, treated as "
               "known, so it is too narrow. ")
            + "Non-overlapping bands are still no test of a difference: use the McNemar matrix for that. With few "
            "systems the item parameters are weakly identified: read abilities as a re-scaling of accuracy that "
            "weights items by their estimated slope, "
            "not as calibrated measurements." + _disagreements(systems, acc, theta, se, p, alpha, se_known))
    main = Section("items", "Accuracy, significance bands and IRT ability", note,
                   ("band", "rank", "system", "accuracy [95% Wilson]", "right", f"ability θ ({block.model}) [95%]",
                    "sd"), tuple(rows), pd.DataFrame.from_records(records),
                   groups=(("ability θ (" + block.model + ") [95%]", "IRT"), ("sd", "IRT")))
    # significance matrix in ranking order
    names = [systems[i] for i in order]
    m_rows = []
    for i in order:
        cells = [systems[i]]
        for j in order:
            if i == j:
                cells.append("·")
            else:
                mark = ("▲" if acc[i] > acc[j] else "▼") if p[i, j] < alpha else "="
                cells.append(f"{mark} {_p_text(p[i, j])}")
        m_rows.append(tuple(cells))
    m_data = pd.DataFrame([{"section": "items-mcnemar", "system": systems[i], "other": systems[j],
                            "p_holm": p[i, j], "significant": bool(p[i, j] < alpha)}
                           for i in order for j in order if i != j])
    m_note = (f"Pairwise McNemar tests (exact binomial below 25 discordant items, else chi-square with continuity "
              f"correction), Holm-adjusted over all {len(systems) * (len(systems) - 1) // 2} pairs. Cell: ▲ the row "
              f"system is significantly more accurate than the column system at alpha {alpha:g}, ▼ less, = no "
              "significant difference; then the adjusted p-value.")
    sections = [main, Section("items-mcnemar", "Which differences are significant (McNemar, Holm)", m_note,
                              ("system", *names), tuple(m_rows), m_data,
                              groups=tuple((n, "systems") for n in names),
                              filters=(("system", "none"),))]  # no dropdown per matrix column
    # test information
    finite = theta[np.isfinite(theta)]
    lo = min(-4.0, float(np.floor(finite.min() - 0.5))) if finite.size else -4.0
    hi = max(4.0, float(np.ceil(finite.max() + 0.5))) if finite.size else 4.0
    grid = np.linspace(lo, hi, int(round((hi - lo) * 20)) + 1)  # reaches every plotted ability
    usable = np.isfinite(fit.params).all(axis=1)
    info = irt.item_information(fit.params[usable], grid).sum(axis=0)
    fig = Figure("test-information", f"Test information I(θ) of the {int(usable.sum())} fitted items "
                 f"({block.model.upper()}); ticks: the systems' abilities", _information_plot(grid, info, theta, systems))
    i_data = pd.DataFrame({"section": "items-information", "theta": grid, "information": info})
    sections.append(Section("items-information", "Item information", "", (), (), i_data, (fig,)))
    return sections


def _disagreements(systems: list[str], acc: np.ndarray, theta: np.ndarray, se: np.ndarray, p: np.ndarray,
                   alpha: float, se_known: np.ndarray | None = None) -> str:
    """Sentences on where the IRT order contradicts the paired tests beside it (empty when it does not)."""
    k = len(systems)
    reversed_pairs, not_diff, separated, separated_known = [], 0, 0, 0
    for i in range(k):
        for j in range(i + 1, k):
            apart = abs(theta[i] - theta[j]) > Z95 * (se[i] + se[j])
            if p[i, j] >= alpha:
                not_diff += 1
                separated += bool(apart)
                if se_known is not None:
                    separated_known += bool(abs(theta[i] - theta[j]) > Z95 * (se_known[i] + se_known[j]))
            elif (acc[i] - acc[j]) * (theta[i] - theta[j]) < 0:
                hi, lo = (i, j) if acc[i] > acc[j] else (j, i)
                reversed_pairs.append(f"{systems[hi]} is significantly more accurate than {systems[lo]} "
                                      f"({acc[hi]:.4f} vs {acc[lo]:.4f}, Holm p = {p[i, j]:.2g}) yet has the lower "
                                      f"ability ({theta[hi]:.2f} vs {theta[lo]:.2f})")
    out = ""
    if reversed_pairs:
        out += (f" The IRT order contradicts a significant McNemar test in {len(reversed_pairs)} pair(s): "
                + "; ".join(reversed_pairs) + ". Why: the 2PL weights each item by its estimated slope, so a "
                "system that gets many low-slope items right and misses high-slope ones ranks lower on θ than on "
                "accuracy; the McNemar test counts every question once.")
    if separated or se_known is not None:
        out += f" {separated} of the {not_diff} pairs McNemar finds not different have non-overlapping ability bands"
        out += (f" ({separated_known} with posterior-sd bands that treat the item parameters as known)."
                if se_known is not None else " (the bands leave out the item parameters' uncertainty).")
    return out


def _information_plot(grid: np.ndarray, info: np.ndarray, theta: np.ndarray, systems: list[str]) -> str:
    from scorebench.leaderboard.plots import figure_svg, label

    def draw(fig):
        ax = fig.add_subplot(1, 1, 1)
        ax.plot(grid, info, color="#1f77b4")
        top = float(np.nanmax(info)) if np.isfinite(info).any() else 1.0
        for t, s in sorted(zip(theta, systems)):
            ax.plot([t, t], [0, 0.05 * top], color="#d62728", lw=1)
        ax.set_xlabel("ability θ")
        ax.set_ylabel("test information")
        ax.set_ylim(bottom=0)
        ax.set_title(label(f"{len(systems)} systems (red ticks)"), fontsize=9)

    return figure_svg(draw, figsize=(7, 3.5))
