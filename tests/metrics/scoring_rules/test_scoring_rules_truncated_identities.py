"""The identities that tie the truncated, censored and gtc scores to each other and to the
untruncated CRPS (stated once in the :mod:`scorebench.metrics.scoring_rules.crps_truncated`
docstring), for all three families."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import scorebench.metrics.scoring_rules as S

RNG = np.random.default_rng(20261204)
Y = RNG.normal(0.0, 2.0, 40)
MU = RNG.normal(0.0, 1.0, 40)
SCALE = RNG.uniform(0.3, 2.5, 40)
LOWER = np.minimum(Y, MU) - RNG.uniform(0.1, 2.0, 40)
UPPER = np.maximum(Y, MU) + RNG.uniform(0.1, 2.0, 40)

# (name, base CRPS, gtc, truncated, censored, base distribution) with the shape parameters bound.
FAMILIES = [
    ("normal", S.crps_normal, S.crps_gtcnormal, S.crps_tnormal, S.crps_cnormal, stats.norm),
    ("logistic", S.crps_logistic, S.crps_gtclogistic, S.crps_tlogistic, S.crps_clogistic, stats.logistic),
    ("t4", lambda y, m, s: S.crps_t(y, 4.0, m, s), lambda y, *a: S.crps_gtct(y, 4.0, *a),
     lambda y, *a: S.crps_tt(y, 4.0, *a), lambda y, *a: S.crps_ct(y, 4.0, *a), stats.t(4.0)),
]
IDS = [f[0] for f in FAMILIES]


@pytest.mark.parametrize(("name", "base", "gtc", "trunc", "cens", "dist"), FAMILIES, ids=IDS)
def test_without_bounds_every_form_is_the_base_crps(name, base, gtc, trunc, cens, dist):
    expected = base(Y, MU, SCALE)
    for form in (gtc, trunc, cens):
        np.testing.assert_allclose(form(Y, MU, SCALE), expected, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize(("name", "base", "gtc", "trunc", "cens", "dist"), FAMILIES, ids=IDS)
def test_truncated_is_gtc_without_masses(name, base, gtc, trunc, cens, dist):
    np.testing.assert_array_equal(trunc(Y, MU, SCALE, LOWER, UPPER), gtc(Y, MU, SCALE, LOWER, UPPER, 0.0, 0.0))


@pytest.mark.parametrize(("name", "base", "gtc", "trunc", "cens", "dist"), FAMILIES, ids=IDS)
def test_censored_is_gtc_with_the_tail_masses(name, base, gtc, trunc, cens, dist):
    lmass = dist.cdf((LOWER - MU) / SCALE)
    umass = dist.sf((UPPER - MU) / SCALE)
    np.testing.assert_allclose(cens(Y, MU, SCALE, LOWER, UPPER), gtc(Y, MU, SCALE, LOWER, UPPER, lmass, umass),
                               rtol=1e-11, atol=1e-14)


@pytest.mark.parametrize(("name", "base", "gtc", "trunc", "cens", "dist"), FAMILIES, ids=IDS)
def test_censored_differs_from_base_by_a_constant_inside_the_bounds(name, base, gtc, trunc, cens, dist):
    # Between l and u: CRPS(F_c, y) = CRPS(F, y) - int_{-inf}^l F^2 - int_u^inf (1 - F)^2.
    ys = np.linspace(-0.9, 1.9, 8)
    diff = base(ys, 0.3, 1.2) - cens(ys, 0.3, 1.2, -1.0, 2.0)
    np.testing.assert_allclose(diff, diff[0], rtol=1e-10)
    assert diff[0] > 0
