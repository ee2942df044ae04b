r"""Selection-bias diagnostics of an Arena leaderboard ("The Leaderboard Illusion").

Singh et al. (2025) show three ways an Arena-style board can mislead: providers whose models
are sampled far more often collect more data; a provider that tests :math:`N` private variants
and publishes only the best one inflates its published rating; and models deprecated silently
change the opponent pool the remaining ratings were estimated against. Three functions measure
them on a battles table:

* :func:`sampling_shares`: battles per model and per provider, and each provider's share of
  all model appearances in battles (two per battle);
* :func:`best_of_n_inflation`: the expected rating gain from publishing the best of
  :math:`N` variants of equal true strength, simulated from the fitted Bradley–Terry model.
  Each variant plays :math:`m` battles against opponents drawn from the model's observed
  opponents (at their fitted strengths); its rating is the maximum-likelihood strength against
  those fixed opponents; the published rating is the largest of the :math:`N`. The inflation is
  :math:`\mathrm E[\max_k \hat\theta_k] - \theta` on the Elo scale. For large :math:`m`,
  :math:`\hat\theta_k \approx \theta + Z_k/\sqrt{I}` with the Fisher information
  :math:`I = \sum p(1 - p)`, so the inflation approaches :math:`e_N/\sqrt I` with :math:`e_N`
  the expected maximum of :math:`N` standard normals (1.54 for :math:`N = 10`);
* :func:`deprecation_effect`: every remaining model's rating refitted without the deprecated
  models' battles (both fits centred on the remaining models), and the change.

Reference: Singh, S. et al. (2025), The Leaderboard Illusion, arXiv:2504.20879.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError
from scorebench.core.stats import rng_from_seed
from scorebench.core.validation import check_positive_int
from scorebench.aggregate.input import Battles, as_battles
from scorebench.aggregate.pair_counts import pair_counts
from scorebench.aggregate.pairwise import bt_fit, to_elo_scale

__all__ = ["provider_of", "sampling_shares", "best_of_n_inflation", "deprecation_effect", "expected_max_normal"]

_ELO = 400.0 / np.log(10.0)


def provider_of(systems: Sequence[str], providers: Mapping[str, str] | None = None) -> dict[str, str]:
    """Each system's provider: from ``providers`` (missing systems are an error) or, without a
    mapping, the name up to the first ``/`` or ``-`` (``"openai/gpt-4o"`` -> ``"openai"``,
    ``"claude-3"`` -> ``"claude"``).

    Examples
    --------
    >>> provider_of(["openai/gpt-4o", "llama-3-70b"])
    {'openai/gpt-4o': 'openai', 'llama-3-70b': 'llama'}
    """
    if providers is None:
        out = {}
        for s in systems:
            head = s.split("/", 1)[0] if "/" in s else s.split("-", 1)[0]
            out[s] = head or s
        return out
    if not isinstance(providers, Mapping):
        raise InputError(f"providers: expected a mapping model -> provider, got {type(providers).__name__}")
    missing = [s for s in systems if s not in providers]
    if missing:
        raise InputError(f"providers: no provider given for {len(missing)} model(s): {missing[:6]}")
    return {s: str(providers[s]) for s in systems}


def _battles(table: pd.DataFrame | Battles) -> Battles:
    return table if isinstance(table, Battles) else as_battles(table)


def sampling_shares(table: pd.DataFrame | Battles, providers: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Battles per model and each provider's sampling share.

    One row per model: ``system``, ``provider``, ``battles`` (weighted appearances), ``share``
    (of all appearances, summing to 1), ``provider_models``, ``provider_battles``,
    ``provider_share`` and ``provider_battles_per_model``.

    Examples
    --------
    >>> t = pd.DataFrame({"a": ["a-1", "a-2", "a-1"], "b": ["b-1", "b-1", "a-2"], "winner": ["a", "b", "tie"]})
    >>> sampling_shares(t)[["system", "battles", "provider_share"]].values.tolist()
    [['a-1', 2.0, 0.6666666666666666], ['a-2', 2.0, 0.6666666666666666], ['b-1', 2.0, 0.3333333333333333]]
    """
    b = _battles(table)
    n = b.n_systems
    per_model = np.bincount(b.a, b.weight, n) + np.bincount(b.b, b.weight, n)
    prov = provider_of(b.systems, providers)
    frame = pd.DataFrame({"system": list(b.systems), "provider": [prov[s] for s in b.systems],
                          "battles": per_model, "share": per_model / per_model.sum()})
    grouped = frame.groupby("provider")["battles"]
    frame["provider_models"] = frame["provider"].map(grouped.size())
    frame["provider_battles"] = frame["provider"].map(grouped.sum())
    frame["provider_share"] = frame["provider_battles"] / per_model.sum()
    frame["provider_battles_per_model"] = frame["provider_battles"] / frame["provider_models"]
    return frame.sort_values(["provider_share", "battles", "system"], ascending=[False, False, True],
                             kind="stable").reset_index(drop=True)


def expected_max_normal(n: int) -> float:
    r""":math:`\mathrm E[\max(Z_1, \dots, Z_n)]` for iid standard normals (numerical integration).

    Examples
    --------
    >>> round(expected_max_normal(2), 6), round(expected_max_normal(10), 4)   # 1/sqrt(pi); tables: 1.5388
    (0.56419, 1.5388)
    """
    from scipy.stats import norm

    n = check_positive_int(n, "n")
    z = np.linspace(-10.0, 10.0, 200_001)
    dens = n * norm.pdf(z) * norm.cdf(z) ** (n - 1)
    return float(np.trapezoid(z * dens, z))


def _variant_mle(theta_opp: np.ndarray, wins: np.ndarray, start: float, bound: float) -> np.ndarray:
    """Strength of each variant (row) against fixed opponents (columns) by Newton, clipped to ±bound."""
    x = np.full(wins.shape[0], start)
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-(x[:, None] - theta_opp)))
        g = (wins - p).sum(axis=1)
        h = (p * (1.0 - p)).sum(axis=1)
        step = np.clip(g / np.maximum(h, 1e-12), -1.0, 1.0)
        x = np.clip(x + step, start - bound, start + bound)
        if np.abs(step).max() < 1e-10:
            break
    return x


def best_of_n_inflation(table: pd.DataFrame | Battles, *, n_variants: int = 10, battles_per_variant: int | None = None,
                        systems: Sequence[str] | None = None, n_sim: int = 200, seed: int = 0,
                        prior: float = 0.0) -> pd.DataFrame:
    """Expected Elo inflation from publishing the best of ``n_variants`` private variants (module docstring).

    ``battles_per_variant`` defaults to each model's own number of battles. Returns one row per
    model: ``system``, ``rating``, ``battles_per_variant``, ``inflation`` (Elo), ``inflation_se``
    (Monte-Carlo standard error), ``single_variant_bias`` (the same for one variant, ~0),
    ``normal_approximation`` (:math:`e_N/\\sqrt I` in Elo).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> a = rng.integers(3, size=3000); b = (a + 1 + rng.integers(2, size=3000)) % 3
    >>> t = pd.DataFrame({"a": a.astype(str), "b": b.astype(str), "winner": np.where(rng.random(3000) < .5, "a", "b")})
    >>> out = best_of_n_inflation(t, n_variants=10, n_sim=100)
    >>> bool((abs(out["inflation"] - out["normal_approximation"]) < 4 * out["inflation_se"] + 2).all())
    True
    """
    n_variants = check_positive_int(n_variants, "n_variants")
    n_sim = check_positive_int(n_sim, "n_sim")
    b = _battles(table)
    pc = pair_counts(b)
    theta = bt_fit(pc.wins(), prior=prior)
    rng = rng_from_seed(seed)
    names = list(b.systems) if systems is None else list(systems)
    unknown = [s for s in names if s not in b.systems]
    if unknown:
        raise InputError(f"best_of_n_inflation: unknown system(s) {unknown[:6]}")
    e_n = expected_max_normal(n_variants)
    rows = []
    for name in names:
        i = b.systems.index(name)
        opponents = np.concatenate([b.b[b.a == i], b.a[b.b == i]])
        m = len(opponents) if battles_per_variant is None else check_positive_int(battles_per_variant,
                                                                                   "battles_per_variant")
        if len(opponents) == 0:
            raise InputError(f"best_of_n_inflation: {name!r} played no battles")
        opp = theta[rng.choice(opponents, size=(n_sim * n_variants, m))]
        p = 1.0 / (1.0 + np.exp(-(theta[i] - opp)))
        wins = (rng.random(p.shape) < p).astype(np.float64)
        est = _variant_mle(opp, wins, theta[i], 10.0).reshape(n_sim, n_variants)
        best = est.max(axis=1) - theta[i]
        info = float((p * (1.0 - p)).sum(axis=1).mean())
        rows.append({"system": name, "rating": float(to_elo_scale(theta[i])), "battles_per_variant": m,
                     "n_variants": n_variants, "inflation": _ELO * float(best.mean()),
                     "inflation_se": _ELO * float(best.std(ddof=1) / np.sqrt(n_sim)) if n_sim > 1 else np.nan,
                     "single_variant_bias": _ELO * float((est[:, 0] - theta[i]).mean()),
                     "normal_approximation": _ELO * e_n / np.sqrt(info)})
    return pd.DataFrame(rows)


def deprecation_effect(table: pd.DataFrame | Battles, deprecated: Sequence[str] | None = None, *,
                       active_tail: float = 0.25, prior: float = 0.0) -> pd.DataFrame:
    """Each remaining model's rating with and without the deprecated models' battles.

    ``deprecated``: the models retired; by default those with no battle in the last
    ``active_tail`` share of the battles (in table order, i.e. time order for a time-sorted
    table). Both fits are centred on the remaining models so the change is comparable.
    Returns ``system``, ``rating_all``, ``rating_without``, ``change``, ``rank_all``,
    ``rank_without``; ``attrs["deprecated"]`` lists the models removed.

    Examples
    --------
    >>> t = pd.DataFrame({"a": ["x", "x", "y", "y", "z", "z", "x", "y"], "b": ["y", "z", "z", "x", "x", "y", "y", "x"],
    ...                   "winner": ["a", "b", "a", "b", "a", "b", "b", "a"]})
    >>> out = deprecation_effect(t, ["z"])
    >>> out.attrs["deprecated"], out["system"].tolist()
    (['z'], ['y', 'x'])
    """
    b = _battles(table)
    if deprecated is None:
        if not 0.0 < active_tail < 1.0:
            raise InputError(f"active_tail: expected a share in (0, 1), got {active_tail!r}")
        tail = np.arange(len(b.a)) >= int(round((1.0 - active_tail) * len(b.a)))
        active = set(b.a[tail].tolist()) | set(b.b[tail].tolist())
        deprecated = [s for i, s in enumerate(b.systems) if i not in active]
    deprecated = list(deprecated)
    unknown = [s for s in deprecated if s not in b.systems]
    if unknown:
        raise InputError(f"deprecation_effect: unknown system(s) {unknown[:6]}")
    gone = np.isin(np.arange(b.n_systems), [b.systems.index(s) for s in deprecated])
    if (~gone).sum() < 2:
        raise InputError("deprecation_effect: fewer than 2 models remain after removing the deprecated ones")
    theta_all = bt_fit(pair_counts(b).wins(), prior=prior)
    keep = ~(gone[b.a] | gone[b.b])
    kept = b.take(np.flatnonzero(keep))
    remaining = [s for s, g in zip(b.systems, gone) if not g]
    index = {s: i for i, s in enumerate(remaining)}
    sub = Battles(tuple(remaining), np.array([index[b.systems[i]] for i in kept.a], dtype=np.int64),
                  np.array([index[b.systems[i]] for i in kept.b], dtype=np.int64), kept.outcome, kept.weight)
    theta_without = bt_fit(pair_counts(sub).wins(), prior=prior)
    base = theta_all[~gone] - theta_all[~gone].mean()
    theta_without = theta_without - theta_without.mean()
    from scorebench.aggregate.ranking import competition_ranks

    frame = pd.DataFrame({"system": remaining, "rating_all": to_elo_scale(base),
                          "rating_without": to_elo_scale(theta_without)})
    frame["change"] = frame["rating_without"] - frame["rating_all"]
    frame["rank_all"] = competition_ranks(frame["rating_all"].to_numpy())
    frame["rank_without"] = competition_ranks(frame["rating_without"].to_numpy())
    frame = frame.sort_values(["rank_all", "system"], kind="stable").reset_index(drop=True)
    frame.attrs["deprecated"] = deprecated
    return frame
