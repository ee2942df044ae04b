r"""Abilities of systems against a saved table of polytomous (or mixed) item parameters.

The table is what ``scorebench irt fit --model grm|gpcm|pcm|rsm|...`` prints and
:attr:`PolyIRTFit.items` holds: one row per item with ``model`` (``graded``, ``gpcm``,
``pcm``, ``rsm`` or ``2pl``), ``n_cat`` (:math:`K_j + 1`), the reported slope ``a`` and the
intercepts ``d1 .. dK`` (mirt's slope-intercept form, :mod:`.polymodels`). On the reported
scale the category probabilities use :math:`a\theta + d_k` with
:math:`\theta \sim N(\mu, \sigma^2)`; ``sigma`` is the fit's ``latent_sd`` (1 unless every
item is pcm/rsm, whose Rasch scaling frees it). The EAP is the posterior mean over
``quadpts`` equally spaced nodes on :math:`\mu \pm 6\sigma`, its SD the standard error.

Reference: Bock & Mislevy (1982), *Applied Psychological Measurement* 6(4) (EAP);
Chalmers (2012), mirt, *Journal of Statistical Software* 48(6), ``fscores(method="EAP")``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError

__all__ = ["score_poly", "is_poly_items"]


def is_poly_items(items: pd.DataFrame) -> bool:
    """Whether a saved items table holds polytomous parameters (``model`` and ``d1`` columns)."""
    return "model" in items.columns and "d1" in items.columns


def _layout(table: pd.DataFrame):
    from scorebench.irt.polyem import ItemLayout
    from scorebench.irt.polyfit import POLY_NAMES

    kinds = []
    for item, name in zip(table.index, table["model"]):
        key = str(name).lower()
        if key not in POLY_NAMES:
            raise InputError(f"items: item {item!r} has model {name!r}; expected one of "
                             f"{', '.join(map(repr, POLY_NAMES))}")
        kinds.append(POLY_NAMES[key])
    n_cat = pd.to_numeric(table["n_cat"], errors="coerce").to_numpy(np.float64) if "n_cat" in table.columns \
        else None
    d_cols = sorted((c for c in table.columns if isinstance(c, str) and c[:1] == "d" and c[1:].isdigit()),
                    key=lambda c: int(c[1:]))
    d = table[d_cols].apply(pd.to_numeric, errors="coerce").to_numpy(np.float64)
    counted = (~np.isnan(d)).sum(axis=1) + 1
    if n_cat is None:
        n_cat = counted.astype(np.float64)
    bad = ~np.isfinite(n_cat) | (n_cat != counted) | (n_cat < 2)
    if bad.any():
        item = table.index[int(np.flatnonzero(bad)[0])]
        raise InputError(f"items: item {item!r} needs n_cat - 1 finite intercepts d1..dK in order "
                         f"(n_cat {n_cat[bad][0]!r}, {int(counted[bad][0]) - 1} intercepts given)")
    return ItemLayout(tuple(kinds), n_cat.astype(int)), d


def _check_options(method: str, mu: float, sigma: float, quadpts: int) -> None:
    if method != "eap":
        raise InputError(f"scoring: polytomous items support 'eap' scoring only, got {method!r}")
    for name, value in (("mu", mu), ("sigma", sigma)):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
                or not np.isfinite(value) or (name == "sigma" and value <= 0):
            raise InputError(f"{name}: expected a finite number{' > 0' if name == 'sigma' else ''}, got {value!r}")
    if isinstance(quadpts, bool) or not isinstance(quadpts, (int, np.integer)) or quadpts < 11:
        raise InputError(f"quadpts: expected an integer >= 11, got {quadpts!r}")


def score_poly(responses: Any, items: pd.DataFrame, *, method: str = "eap", mu: float = 0.0, sigma: float = 1.0,
               quadpts: int = 121) -> pd.DataFrame:
    """EAP abilities (``theta``, ``se``, ``n``) of the systems in ``responses`` against ``items``.

    Parameters
    ----------
    responses : DataFrame, ndarray or ResponseMatrix
        Scores 0..K per (system, item): wide (columns = items, a subset is fine) or long.
    items : DataFrame
        The polytomous items table (indexed by item, or with an ``item`` column).
    method : {"eap"}
        Only EAP scoring is available for polytomous items.
    mu, sigma : float
        Mean and SD of the latent distribution on the reported scale (the fit's
        ``latent_mean``/``latent_sd``).
    quadpts : int
        Number of quadrature nodes.

    Returns
    -------
    DataFrame
        Indexed by system.

    Examples
    --------
    >>> import pandas as pd
    >>> # symmetric items: the middle category of both says theta = 0
    >>> items = pd.DataFrame({"model": ["graded", "gpcm"], "n_cat": [3, 3], "a": [1.0, 1.0],
    ...                       "d1": [1.0, 0.0], "d2": [-1.0, 0.0]}, index=["q1", "q2"])
    >>> bool(abs(score_poly(pd.DataFrame({"q1": [1.0], "q2": [1.0]}), items)["theta"].iloc[0]) < 1e-12)
    True
    """
    from scorebench.metrics.irt_kind import response_matrix
    from scorebench.irt.polyem import onehot, poly_estep

    _check_options(method, mu, sigma, quadpts)
    table = items.set_index("item") if "item" in items.columns else items
    layout, d = _layout(table)
    a = pd.to_numeric(table["a"], errors="coerce").to_numpy(np.float64)
    if not np.isfinite(a).all():
        raise InputError("items: column 'a' must hold a finite slope for every item")
    rm = response_matrix(responses, ordinal=True)
    names = pd.Index([str(i) for i in table.index])  # ids read back from a file may be numbers
    if not names.is_unique:
        raise InputError("items: the items table lists an item twice")
    position = names.get_indexer([str(i) for i in rm.items])
    if (position < 0).any():
        unknown = [i for i, p in zip(rm.items, position) if p < 0]
        raise InputError(f"responses: item(s) {unknown[:5]} have no parameters in the items table")
    values = np.full((len(rm.systems), len(table)), np.nan)
    values[:, position] = rm.values
    too_high = values > (layout.n_cat - 1)[None, :]
    if too_high.any():
        j = int(np.argwhere(too_high)[0, 1])
        raise InputError(f"responses: item {table.index[j]!r} has scores 0..{int(layout.n_cat[j]) - 1} in the "
                         f"items table, got {values[too_high][0]:g}")
    z = np.linspace(-6.0, 6.0, int(quadpts))
    nodes = float(mu) + float(sigma) * z
    log_w = -0.5 * z**2 - np.log(np.exp(-0.5 * z**2).sum())
    post = poly_estep(onehot(values, layout), layout, a, np.nan_to_num(d), nodes, log_w).post
    eap = post @ nodes
    se = np.sqrt(np.maximum(post @ nodes**2 - eap**2, 0.0))
    return pd.DataFrame({"theta": eap, "se": se, "n": (~np.isnan(values)).sum(axis=1)},
                        index=pd.Index(rm.systems, name="system"))
