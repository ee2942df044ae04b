r"""Generalizability theory: where the variance of a score comes from, and how to spend samples.

An evaluation score is a mean over a **fully crossed random design**: every item is answered
with every seed (epoch), every prompt variant and every judge. Each facet adds variance;
a standard error computed over items alone misses the facets shared by all items (one bad
prompt variant moves every item), which is why naive standard errors come out 40–60% too
small (Madaan et al. 2024; Messing 2026).

**G-study** (:func:`g_study`). With facets :math:`f = 1..k` of :math:`n_f` levels and one
observation per cell, the random-effects model

.. math:: X_{i_1 \dots i_k} = \mu + \sum_{\emptyset \ne S \subseteq F} \nu_S(i_S)

has one variance component :math:`\sigma^2_S` per non-empty set of facets :math:`S` (main
effects and interactions; the highest interaction is confounded with residual error). The
ANOVA (expected-mean-squares) estimators solve

.. math:: E[MS_S] = \sum_{T \supseteq S} \sigma^2_T \prod_{f \notin T} n_f, \qquad
          \hat\sigma^2_S = \frac{1}{\prod_{f \notin S} n_f}\sum_{T \supseteq S} (-1)^{|T|-|S|} MS_T,

with :math:`MS_S = SS_S / \prod_{f \in S}(n_f - 1)` from the balanced effect sums. Negative
estimates are set to zero (Brennan 2001, sec. 3.4; the raw value is kept). The interval of a
component uses Satterthwaite's approximation: :math:`\hat\sigma^2 = \sum_T c_T MS_T` is
treated as :math:`\sigma^2 \chi^2_\nu / \nu` with
:math:`\nu = (\sum c_T MS_T)^2 / \sum (c_T MS_T)^2 / df_T` (Brennan 2001, sec. 6.1).

**D-study** (:meth:`GStudy.project`). The score averaged over :math:`n'_f` levels of each
facet has absolute error variance

.. math:: \sigma^2(\bar X) = \sum_{\emptyset \ne S \subseteq F} \frac{\sigma^2_S}{\prod_{f \in S} n'_f},

so the standard error for any numbers of items, seeds, prompts and judges follows from one
G-study ("three prompt variants halve the error at the same cost").

References
----------
Cronbach, Gleser, Nanda & Rajaratnam (1972), The Dependability of Behavioral
Measurements; Brennan (2001), Generalizability Theory, Springer; Satterthwaite (1946),
Biometrics Bulletin 2(6); Madaan et al. (2024), arXiv:2406.10229.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations, product

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.core.validation import check_level

__all__ = ["GStudy", "g_study", "variance_components"]


def _subsets(k: int) -> list[tuple[int, ...]]:
    return [s for r in range(1, k + 1) for s in combinations(range(k), r)]


def variance_components(cube: np.ndarray, *, ci: float = 0.95) -> pd.DataFrame:
    """ANOVA variance components of a fully crossed array (one facet per axis).

    Returns one row per effect (a tuple of axes): ``effect, df, ms, variance_raw, variance,
    nu, ci_low, ci_high``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> cube = rng.normal(0, 1, (200, 1)) + rng.normal(0, 0.5, (200, 10))   # items x seeds
    >>> out = variance_components(cube)
    >>> [(e, round(v, 2)) for e, v in zip(out.effect, out.variance)]
    [((0,), 0.94), ((1,), 0.0), ((0, 1), 0.25)]
    """
    from scipy import stats

    check_level(ci, "ci")
    x = np.asarray(cube, dtype=np.float64)
    k = x.ndim
    sizes = x.shape
    if any(n < 2 for n in sizes):
        raise InputError(f"each facet needs at least 2 levels for a G-study; sizes {sizes}")
    subsets = _subsets(k)
    marg = {}
    for r in range(0, k + 1):
        for s in combinations(range(k), r):
            others = tuple(a for a in range(k) if a not in s)
            marg[s] = x.mean(axis=others, keepdims=True) if others else x
    ms, df = {}, {}
    for s in subsets:
        effect = sum(((-1) ** (len(s) - len(t))) * marg[t] for r in range(len(s) + 1) for t in combinations(s, r))
        ss = float(np.sum(np.broadcast_to(effect, sizes) ** 2))
        df[s] = int(np.prod([sizes[a] - 1 for a in s]))
        ms[s] = ss / df[s]
    rows = []
    for s in subsets:
        outside = float(np.prod([sizes[a] for a in range(k) if a not in s])) if len(s) < k else 1.0
        supersets = [t for t in subsets if set(s) <= set(t)]
        coef = {t: (-1) ** (len(t) - len(s)) / outside for t in supersets}
        raw = sum(c * ms[t] for t, c in coef.items())
        denom = sum((c * ms[t]) ** 2 / df[t] for t, c in coef.items())
        nu = raw * raw / denom if denom > 0 and raw > 0 else math.nan
        low = high = math.nan
        if raw > 0 and nu > 0:
            q_high, q_low = stats.chi2.ppf(0.5 + ci / 2, nu), stats.chi2.ppf(0.5 - ci / 2, nu)
            low = nu * raw / q_high if q_high > 0 else 0.0
            high = nu * raw / q_low if q_low > 0 else math.inf
        elif raw <= 0:
            low = 0.0
        rows.append({"effect": s, "df": df[s], "ms": ms[s], "variance_raw": raw, "variance": max(raw, 0.0),
                     "nu": nu, "ci_low": low, "ci_high": high})
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class GStudy:
    """Variance components of one or more systems and the sizes they were estimated at.

    Attributes
    ----------
    components : DataFrame
        ``[system,] effect, df, ms, variance_raw, variance, ci_low, ci_high, share`` (effect:
        facet names joined by ``×``; share: the component's part of the total variance).
    facets : tuple of str
    sizes : dict
        Levels of each facet in the data.
    """

    components: pd.DataFrame
    facets: tuple[str, ...]
    sizes: dict[str, int]

    def project(self, **sizes: int | Sequence[int]) -> pd.DataFrame:
        r"""D-study: the standard error of the mean score for other numbers of levels.

        Each keyword is a facet with one or more sizes (default: the observed size); every
        combination gets a row ``[system,] <facet sizes>, se, se_items_only`` where
        ``se_items_only`` is what a standard error over the first facet (the items) alone
        would claim: :math:`\sqrt{\sum_{S \ni f_1} \sigma^2_S / \prod_{f \in S} n'_f}`.

        Examples
        --------
        >>> rng = np.random.default_rng(1)
        >>> frame = pd.DataFrame([(i, p, rng.normal()) for i in range(30) for p in range(3)],
        ...                      columns=["id", "prompt", "score"])
        >>> g = g_study(frame, ["id", "prompt"], "score")
        >>> g.project(prompt=[1, 3, 9]).columns.tolist()
        ['id', 'prompt', 'se', 'se_items_only']
        """
        unknown = sorted(set(sizes) - set(self.facets))
        if unknown:
            raise InputError(f"unknown facet(s) {unknown}; the facets are {list(self.facets)}")
        grid = {}
        for f in self.facets:
            values = sizes.get(f, self.sizes[f])
            values = [values] if isinstance(values, (int, np.integer)) else list(values)
            if not values or any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1
                                 for v in values):
                raise InputError(f"{f}: expected positive integers, got {sizes.get(f)!r}")
            grid[f] = [int(v) for v in values]
        comps = self.components
        groups = [(None, comps)] if "system" not in comps.columns else list(comps.groupby("system", sort=False))
        rows = []
        for system, sub in groups:
            effects = [(tuple(e.split(" × ")), v) for e, v in zip(sub["effect"], sub["variance"])]
            for combo in product(*(grid[f] for f in self.facets)):
                n = dict(zip(self.facets, combo))
                var = sum(v / np.prod([n[f] for f in e]) for e, v in effects)
                items = sum(v / np.prod([n[f] for f in e]) for e, v in effects if self.facets[0] in e)
                rows.append({**({"system": system} if system is not None else {}), **n, "se": math.sqrt(var),
                             "se_items_only": math.sqrt(items)})
        return pd.DataFrame(rows)


def _cube(frame: pd.DataFrame, facets: list[str], score: str, where: str) -> tuple[np.ndarray, dict[str, int]]:
    levels = {f: sorted(frame[f].unique().tolist(), key=str) for f in facets}
    shape = tuple(len(levels[f]) for f in facets)
    dup = frame.duplicated(facets)
    if dup.any():
        first = frame.loc[dup, facets].iloc[0].tolist()
        raise InputError(f"{where}two rows for the same cell {dict(zip(facets, first))}; a crossed design has one "
                         "observation per (facet levels) cell (average repeats first, or add the facet)")
    expected = int(np.prod(shape))
    if len(frame) != expected:
        raise InputError(f"{where}the design is not fully crossed: {len(frame)} rows for {expected} cells "
                         f"({' x '.join(f'{len(levels[f])} {f}' for f in facets)}); every combination needs a score")
    codes = [pd.Categorical(frame[f], categories=levels[f]).codes for f in facets]
    cube = np.empty(shape)
    cube[tuple(codes)] = frame[score].to_numpy(dtype=np.float64)
    return cube, {f: len(levels[f]) for f in facets}


def g_study(table: pd.DataFrame, facets: Sequence[str], score: str, *, by: str | None = "system",
            ci: float = 0.95) -> GStudy:
    """Variance components of a fully crossed design (items x seeds x prompts x judges ...).

    Parameters
    ----------
    table : DataFrame
        One row per cell: a column per facet and the ``score`` column (e.g. ``correct``).
    facets : list of str
        The facet columns, items first (e.g. ``["id", "seed", "prompt", "judge"]``).
    score : str
        The numeric score column.
    by : str, optional
        A G-study per value of this column (default ``system`` when present).
    ci : float
        Level of the Satterthwaite intervals.

    Returns
    -------
    GStudy

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> item, prompt = rng.normal(0, 1, 100), rng.normal(0, 0.5, 4)
    >>> t = pd.DataFrame([(i, p, item[i] + prompt[p] + rng.normal(0, 0.3)) for i in range(100) for p in range(4)],
    ...                  columns=["id", "prompt", "score"])
    >>> g = g_study(t, ["id", "prompt"], "score")
    >>> g.components[["effect", "variance"]].round(2).values.tolist()
    [['id', 0.89], ['prompt', 0.2], ['id × prompt', 0.09]]
    """
    if not isinstance(table, pd.DataFrame):
        from scorebench.io.tables import read_table

        table = read_table(table)
    facets = list(facets)
    if not facets:
        raise InputError("facets: expected at least one facet column (items first)")
    if len(set(facets)) != len(facets):
        raise InputError(f"facets: duplicate names {facets}")
    missing = [c for c in [*facets, score] if c not in table.columns]
    if missing:
        raise InputError(f"column(s) {missing} not found; the table has {list(table.columns)}")
    if not pd.api.types.is_numeric_dtype(table[score]) or table[score].isna().any():
        raise InputError(f"column {score!r}: expected numeric scores without missing values")
    if not np.isfinite(table[score].to_numpy(dtype=np.float64)).all():
        raise InputError(f"column {score!r}: scores must be finite")
    use_by = by is not None and by in table.columns and by not in facets
    groups = list(table.groupby(by, sort=True)) if use_by else [(None, table)]
    frames: list[pd.DataFrame] = []
    sizes: dict[str, int] = {}
    for name, sub in groups:
        where = f"system {name!r}: " if name is not None else ""
        cube, sizes = _cube(sub, facets, score, where)
        comps = variance_components(cube, ci=ci)
        comps["effect"] = [" × ".join(facets[a] for a in e) for e in comps["effect"]]
        total = comps["variance"].sum()
        comps["share"] = comps["variance"] / total if total > 0 else math.nan
        if name is not None:
            comps.insert(0, "system", name)
        frames.append(comps.drop(columns="nu"))
    out = pd.concat(frames, ignore_index=True)
    out.attrs.update({"method": "ANOVA (expected mean squares) estimators of a fully crossed random design; "
                      "negative estimates set to 0; Satterthwaite intervals", "ci": ci})
    return GStudy(out, tuple(facets), dict(sizes))
