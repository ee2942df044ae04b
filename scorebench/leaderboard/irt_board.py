"""IRT section of a board: abilities from the systems x items right/wrong matrix.

An item is answered right when the system's most probable class is the label (ties go to
the first class, as :func:`numpy.argmax`). Abilities come from :func:`scorebench.irt.fit`
(EAP scores with posterior standard deviations); the table shows them beside raw accuracy,
and the figure plots one against the other.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from scorebench.io.tables import format_value
from scorebench.leaderboard.board import Figure, Section
from scorebench.leaderboard.board import split_tasks
from scorebench.leaderboard.plots import class_probabilities, ability_plot

__all__ = ["responses_from_predictions", "irt_section", "irt_sections"]


def responses_from_predictions(table: pd.DataFrame) -> pd.DataFrame:
    """Long ``responses`` table (``system``, ``item``, ``correct``) from a classification table.

    Items are ``<task>:<id>`` (or the row position within a system when there is no ``id``).
    """
    frames = []
    for task, sub in split_tasks(table):
        for system, rows in sub.groupby("system", sort=True):
            y, P = class_probabilities(rows)
            ids = rows["id"].astype(str).to_numpy() if "id" in rows.columns else np.arange(len(rows)).astype(str)
            prefix = f"{task}:" if task is not None else ""
            frames.append(pd.DataFrame({"system": str(system), "item": [prefix + i for i in ids],
                                        "correct": (P.argmax(axis=1) == y).astype(np.int64)}))
    return pd.concat(frames, ignore_index=True)


def irt_section(ctx: Any) -> Section:
    """Fit the spec's IRT model and lay out abilities (with a +-1.96 sd band) and accuracy."""
    from scorebench import irt

    spec = ctx.spec
    responses = responses_from_predictions(ctx.table(spec.irt.source))
    result = irt.fit(responses, spec.irt.model, warn=False)
    ab = result.abilities.sort_values(["theta"], ascending=False, kind="stable")
    systems = [str(s) for s in ab.index]
    theta, se, acc = ab["theta"].to_numpy(), ab["se"].to_numpy(), ab["accuracy"].to_numpy()
    z = 1.959963984540054
    rows = tuple((s, f"{format_value(t, 3)} [{format_value(t - z * e, 3)}, {format_value(t + z * e, 3)}]",
                  format_value(e, 3), format_value(a, spec.digits))
                 for s, t, e, a in zip(systems, theta, se, acc))
    info = result.summary()
    informative = int((result.items["flag"] != "constant").sum())
    note = (f"{result.model.upper()} model fitted by {result.method.upper()} to {info['items']} items "
            f"({informative} answered differently by at least two systems; the rest carry no information "
            f"about ability) and {info['systems']} systems; abilities are EAP estimates with a "
            f"±1.96 posterior-sd band; converged: {result.converged}. What the band covers: the ability "
            "given the fitted item parameters (treated as known, so it is narrower than an interval that also "
            "carries their estimation error). Log-likelihood "
            f"{result.loglik:.2f}, AIC {result.aic:.1f}.")
    data = pd.DataFrame({"section": "irt", "system": systems, "metric": "irt_ability", "value": theta,
                         "se": se, "accuracy": acc})
    fig = Figure("irt-ability", "IRT ability (EAP, ±1.96 sd) against accuracy, one point per system",
                 ability_plot(systems, theta, theta - z * se, theta + z * se, acc))
    return Section("irt", "Item response theory: system abilities", note,
                   ("system", "ability θ [95% band]", "sd", "accuracy"), rows, data, (fig,))


def irt_sections(ctx: Any, block: Any) -> list[Section]:
    """The board's ``[irt]`` block (section kind ``irt``): one section."""
    return [irt_section(ctx)]
