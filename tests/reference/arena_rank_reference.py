"""Reference outputs of arena-rank 0.1.1 on fixed seeded synthetic battles (issue 39 parity fixtures).

arena-rank pins ``numpy==2.3.3`` and ``jax==0.8.1``, so it cannot share scorebench's test
environment. This script runs in its own virtual environment and writes small JSON files under
``tests/fixtures/arena_rank/`` that ``tests/aggregate/test_arena_rank_parity.py`` compares against.

Regenerate (offline once the wheel is installed)::

    python -m venv /work/venvs/arena
    /work/venvs/arena/bin/pip install arena-rank==0.1.1
    /work/venvs/arena/bin/python tests/reference/arena_rank_reference.py

The battles are drawn here with NumPy's seeded generator and written into the fixture too
(``battles`` columns ``model_a``, ``model_b``, ``winner``, ``style_*``), so the test reads the
very same battles. arena-rank is run with its own definitions (deduplication to
(model_a, model_b, outcome) rows, ties as 0.5, inverse-propensity weights
``1 / max(pair count, 50)`` with ``reweighted=True``, sandwich intervals with
``hessian_reg = 1e-5`` (times the number of battles when unweighted), contextual BT with
standardised features (f_a - f_b)/(f_a + f_b + 1), as scorebench's style features, ridge ``reg = 1`` on the coefficients) but with a tight optimiser
stopping rule (``ftol = 0``, ``gtol = 1e-13``) so that its ratings are the optimum to ~1e-9 Elo
rather than to its default tolerance (the default leaves ~1e-5 Elo). The multinomial bootstrap
is reproduced from its definition with arena-rank's own JAX key and its per-sample fit
function; the resampled counts are written out so the test refits the same samples.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

import jax
import jax.numpy as jnp
from arena_rank.models.bradley_terry import BradleyTerry, fit_single_bootstrap_sample
from arena_rank.models.contextual_bradley_terry import ContextualBradleyTerry
from arena_rank.utils.data_utils import ContextualPairDataset, PairDataset

OUT = Path(__file__).resolve().parents[1] / "fixtures" / "arena_rank"
TIGHT = {"ftol": 0.0, "gtol": 1e-13, "max_iter": 20000}


def synthetic_battles(seed: int = 39, n_models: int = 7, n_battles: int = 2500) -> pd.DataFrame:
    """Battles from a Davidson-style model with ties, non-uniform pair sampling and 2 style features."""
    rng = np.random.default_rng(seed)
    models = [f"m{i}" for i in range(n_models)]
    strength = np.linspace(-1.0, 1.2, n_models)
    pairs = [(i, j) for i in range(n_models) for j in range(n_models) if i != j]
    p = rng.gamma(0.7, size=len(pairs))  # very unequal sampling: some pairs rare (IPW weights matter)
    p /= p.sum()
    pick = rng.choice(len(pairs), size=n_battles, p=p)
    a = np.array([pairs[k][0] for k in pick])
    b = np.array([pairs[k][1] for k in pick])
    len_a, len_b = rng.lognormal(6, 0.5, n_battles), rng.lognormal(6, 0.5, n_battles)
    bold_a, bold_b = rng.poisson(2, n_battles), rng.poisson(2, n_battles)
    x = 0.4 * (len_a - len_b) / (len_a + len_b) * 4
    d = strength[a] - strength[b] + x
    nu = 0.6
    pa, pb = np.exp(d / 2), np.exp(-d / 2)
    z = pa + pb + nu
    u = rng.random(n_battles)
    winner = np.where(u < pa / z, "model_a", np.where(u < (pa + pb) / z, "model_b", "tie"))
    return pd.DataFrame({"model_a": [models[i] for i in a], "model_b": [models[j] for j in b], "winner": winner,
                         "style_len_a": np.round(len_a, 3), "style_len_b": np.round(len_b, 3),
                         "style_bold_a": bold_a, "style_bold_b": bold_b})


def as_list(x) -> list:
    return np.asarray(x, dtype=np.float64).tolist()


def bt_case(df: pd.DataFrame, reweighted: bool) -> dict:
    ds = PairDataset.from_pandas(df, reweighted=reweighted)
    model = BradleyTerry(len(ds.competitors), **TIGHT)
    out = model.compute_ratings_and_cis(ds, significance_level=0.05, ci_method="sandwich")
    return {"competitors": list(out["competitors"]), "ratings": as_list(out["ratings"]),
            "rating_lower": as_list(out["rating_lower"]), "rating_upper": as_list(out["rating_upper"]),
            "variances": as_list(out["variances"]), "n_rows": int(ds.n_pairs),
            "rows": {"a": np.asarray(ds.pairs[:, 0]).tolist(), "b": np.asarray(ds.pairs[:, 1]).tolist(),
                     "outcome": as_list(ds.outcomes), "count": as_list(ds.counts), "weight": as_list(ds.weights)}}


def bootstrap_case(df: pd.DataFrame, num_bootstrap: int = 12, seed: int = 42) -> dict:
    """arena-rank's multinomial bootstrap, sample by sample (same key, counts and fit as its Pool path)."""
    ds = PairDataset.from_pandas(df, reweighted=False)
    model = BradleyTerry(len(ds.competitors), **TIGHT)
    total = jnp.sum(ds.counts)
    counts = jax.random.multinomial(key=jax.random.PRNGKey(seed), n=int(total), p=ds.counts / total,
                                    shape=(num_bootstrap, ds.counts.shape[0]), dtype=jnp.float64)
    ratings = np.array([np.asarray(fit_single_bootstrap_sample(counts[i], model, ds)["ratings"])
                        for i in range(num_bootstrap)])
    scaled = ratings * model.alpha + model.init_rating
    return {"competitors": list(ds.competitors), "boot_counts": np.asarray(counts).tolist(),
            "boot_ratings": scaled.tolist(),
            "rating_lower": as_list(np.quantile(scaled, 0.025, axis=0)),
            "rating_upper": as_list(np.quantile(scaled, 0.975, axis=0))}


def contextual_case(df: pd.DataFrame) -> dict:
    feats = pd.DataFrame({
        "len": (df["style_len_a"] - df["style_len_b"]) / (df["style_len_a"] + df["style_len_b"] + 1),
        "bold": (df["style_bold_a"] - df["style_bold_b"]) / (df["style_bold_a"] + df["style_bold_b"] + 1)})
    frame = pd.concat([df[["model_a", "model_b", "winner"]], feats], axis=1)
    ds = ContextualPairDataset.from_pandas(frame, feature_cols=["len", "bold"], reweighted=True)
    model = ContextualBradleyTerry(len(ds.competitors), 2, **TIGHT)
    out = model.compute_ratings_and_cis(ds, significance_level=0.05, ci_method="sandwich")
    return {"competitors": list(out["competitors"]), "ratings": as_list(out["ratings"]),
            "rating_lower": as_list(out["rating_lower"]), "rating_upper": as_list(out["rating_upper"]),
            "variances": as_list(out["variances"]), "coeffs": as_list(out["coeffs"]),
            "features": ["len", "bold"]}


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    df = synthetic_battles()
    df.to_csv(OUT / "battles.csv", index=False)
    result = {"arena_rank_version": "0.1.1", "jax_version": jax.__version__, "optimiser": TIGHT,
              "bt_unweighted": bt_case(df, reweighted=False), "bt_ipw": bt_case(df, reweighted=True),
              "bootstrap": bootstrap_case(df), "contextual": contextual_case(df)}
    (OUT / "reference.json").write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {OUT}: {len(df)} battles, ties {float((df['winner'] == 'tie').mean()):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
