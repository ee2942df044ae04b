"""The ``features`` table kind: reference rows, tasks, extractor fingerprints, evaluate()."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import scorebench
from scorebench.core.errors import InputError
from scorebench.metrics.generative import fid, kid, precision, vendi_score
from scorebench.core.tables import get_kind


def _block(system, x, **extra):
    frame = pd.DataFrame(x, columns=[f"f{j}" for j in range(x.shape[1])])
    frame.insert(0, "system", system)
    for key, value in extra.items():
        frame[key] = value
    return frame


@pytest.fixture
def table():
    rng = np.random.default_rng(0)
    return pd.concat([_block("real", rng.normal(size=(150, 3))),
                      _block("gan", rng.normal(0.2, 1, size=(100, 3))),
                      _block("vae", rng.normal(1.0, 1, size=(80, 3)))], ignore_index=True)


def test_features_kind_extracts_reference_and_units(table):
    inputs = get_kind("features").extract(table)
    assert inputs.n == 180 and set(inputs.frame["system"]) == {"gan", "vae"}
    assert inputs.arrays["fake_features"].shape == (180, 3)
    np.testing.assert_array_equal(inputs.consts["real_features"][0], table.iloc[:150, 1:].to_numpy())


def test_evaluate_generative_metrics_on_table(table):
    scores = scorebench.evaluate(table, ["fid", "kid", "precision", "vendi_score"], n_boot=0)
    real = table[table.system == "real"].iloc[:, 1:].to_numpy()
    for system in ("gan", "vae"):
        fake = table[table.system == system].iloc[:, 1:].to_numpy()
        got = scores.set_index(["system", "metric"])["value"]
        assert got[(system, "fid")] == pytest.approx(fid(real, fake), rel=1e-12)
        assert got[(system, "kid")] == pytest.approx(kid(real, fake), rel=1e-12)
        assert got[(system, "precision")] == pytest.approx(precision(real, fake), rel=1e-12)
        assert got[(system, "vendi_score")] == pytest.approx(vendi_score(fake), rel=1e-12)
    got = scores.set_index(["system", "metric"])["value"]
    assert got[("gan", "fid")] < got[("vae", "fid")]


def test_evaluate_bootstrap_keeps_reference_fixed(table):
    scores = scorebench.evaluate(table, "fid", n_boot=30, seed=1)
    assert (scores["ci_low"] <= scores["ci_high"]).all()
    assert list(scores["n"]) == [100, 80]


def test_reference_option_and_missing_reference(table):
    renamed = table.replace({"system": {"real": "data"}})
    with pytest.raises(InputError, match="no row has system == 'real'"):
        scorebench.evaluate(renamed, "fid", n_boot=0)
    scores = scorebench.evaluate(renamed, "fid", n_boot=0, reference="data")
    assert set(scores["system"]) == {"gan", "vae"}
    every = scorebench.evaluate(table, "vendi_score", n_boot=0, reference=None)
    assert set(every["system"]) == {"real", "gan", "vae"}


def test_tasks_have_their_own_reference():
    rng = np.random.default_rng(1)
    t = pd.concat([_block("real", rng.normal(size=(60, 2)), task="a"),
                   _block("real", rng.normal(5, 1, size=(60, 2)), task="b"),
                   _block("gan", rng.normal(size=(50, 2)), task="a"),
                   _block("gan", rng.normal(5, 1, size=(50, 2)), task="b")], ignore_index=True)
    scores = scorebench.evaluate(t, "fid", n_boot=0)
    assert len(scores) == 2 and (scores["value"] < 1).all()
    with pytest.raises(InputError, match="task"):
        scorebench.evaluate(t[~((t.system == "real") & (t.task == "b"))], "fid", n_boot=0)


def test_mixed_extractors_are_refused(table):
    t = table.assign(extractor="sha256:a")
    t.loc[t.index[-3:], "extractor"] = "sha256:b"
    with pytest.raises(InputError, match="different extractors"):
        scorebench.evaluate(t, "fid", n_boot=0)
    scores = scorebench.evaluate(table.assign(extractor="sha256:a"), "fid", n_boot=0)
    assert scores.attrs["kind_extractor"] == "sha256:a"


def test_bad_tables():
    with pytest.raises(InputError, match="f0, f1"):
        get_kind("features").extract(pd.DataFrame({"system": ["a"], "x": [1.0]}))
    bad = pd.DataFrame({"system": ["real", "gan"], "f0": [1.0, "zz"]})
    with pytest.raises(InputError, match="'f0'"):
        get_kind("features").extract(bad)
    with pytest.raises(InputError, match="every row"):
        get_kind("features").extract(pd.DataFrame({"system": ["real"], "f0": [1.0]}))


def test_inception_score_from_probability_columns():
    p = np.eye(4)[np.arange(40) % 4]
    t = pd.DataFrame(p, columns=[f"p_{c}" for c in "abcd"]).assign(system="gen")
    scores = scorebench.evaluate(t, scorebench.metric("inception_score", n_splits=1), n_boot=0)
    assert scores["value"].iloc[0] == pytest.approx(4.0)


def test_great_score_on_multiclass_table():
    t = pd.DataFrame({"system": ["clf"] * 3, "y": ["a", "b", "a"],
                      "p_a": [0.7, 0.1, 0.4], "p_b": [0.3, 0.9, 0.6]})
    scores = scorebench.evaluate(t, "great_score", n_boot=0)
    assert scores["value"].iloc[0] == pytest.approx(np.sqrt(np.pi / 2) * (0.4 + 0.8 + 0) / 3)
