"""irt.ability_sandwich: coverage of true abilities by simulation (items as resampling units)."""

import numpy as np
import pandas as pd
import pytest

from scorebench import irt
from scorebench.core.errors import InputError

PRIOR = (1.0, 0.5)


def _sim(seed, n_sys=20, n_items=150):
    rng = np.random.default_rng(seed)
    th = rng.normal(size=n_sys)
    a, b = rng.lognormal(0, 0.3, n_items), rng.normal(size=n_items)
    y = pd.DataFrame((rng.random((n_sys, n_items)) < 1 / (1 + np.exp(-a * (th[:, None] - b)))) * 1.0)
    return th, y


def test_sandwich_covers_true_abilities_where_posterior_sd_does_not():
    sand, known = [], []
    for seed in range(6):
        th, y = _sim(seed)
        f = irt.fit(y, "2pl", priors={"a": PRIOR}, warn=False)
        out = irt.ability_sandwich(y, f, a_prior=PRIOR)
        sand.append(((out.ci_low <= th) & (th <= out.ci_high)).mean())
        known.append((np.abs(out.theta - th) <= 1.96 * f.abilities["se"].to_numpy()).mean())
        assert (out["se"] > out["se_known"]).all()
    # 120 system-replicates; nominal 0.95. The known-items band covers ~0.7 here.
    assert np.mean(sand) >= 0.88
    assert np.mean(sand) > np.mean(known) + 0.1


def test_sandwich_errors():
    th, y = _sim(0, 8, 30)
    f = irt.fit(y, "2pl", priors={"a": PRIOR}, warn=False)
    with pytest.raises(InputError, match="ci"):
        irt.ability_sandwich(y, f, ci=1.5)
    with pytest.raises(InputError, match="fit"):
        irt.ability_sandwich(y, "not a fit")
    with pytest.raises(InputError, match="responses"):
        irt.ability_sandwich(y.iloc[:, :5], f)


def test_item_part_matches_a_small_full_item_bootstrap():
    th, y = _sim(1, 20, 100)
    f = irt.fit(y, "2pl", priors={"a": PRIOR}, warn=False)
    sand = irt.ability_sandwich(y, f, a_prior=PRIOR, scale_term=False)["se"].to_numpy()
    rng = np.random.default_rng(7)
    boots = []
    for _ in range(25):
        yb = y.iloc[:, rng.integers(0, y.shape[1], y.shape[1])].copy()
        yb.columns = range(y.shape[1])
        boots.append(irt.fit(yb, "2pl", priors={"a": PRIOR}, warn=False).abilities["theta"].to_numpy())
    ratio = np.median(sand / np.std(boots, axis=0, ddof=1))
    assert 0.75 < ratio < 1.33
