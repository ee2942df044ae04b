"""The registry contract: records, parameterised names, suggestions, plugins."""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap

import pytest

import scorebench
from scorebench.core.errors import InputError, UnknownMetricError
from scorebench.core.registry import NO_EXTERNAL_REFERENCE, Metric, register
from scorebench.core.table_schema import Option


def test_lookup_returns_frozen_record():
    m = scorebench.metric("brier_score")
    assert isinstance(m, Metric)
    assert m.family == "scoring_rules" and m.kind == "binary"
    assert m.higher_is_better is False and m.per_row is True and m.proper == "strict"
    with pytest.raises(AttributeError):
        m.name = "other"  # frozen


def test_unknown_name_suggests_close_matches():
    with pytest.raises(UnknownMetricError, match="did you mean 'brier_score'"):
        scorebench.metric("brier_scor")
    with pytest.raises(UnknownMetricError, match="unknown metric"):
        scorebench.metric("definitely_not_a_metric_xyz")


def test_parameterised_name_binds_value():
    @register("test_top@k", family="test", kind="binary", inputs=("y", "p"), higher_is_better=True,
              params={"k": Option("k", float, None, "rows counted")}, tested_against=NO_EXTERNAL_REFERENCE)
    def test_top(y, p, *, k):
        """Share of the first k rows with y = 1."""
        import numpy as np

        out = np.zeros(len(y))
        out[: int(k)] = y[: int(k)]
        return out

    m = scorebench.metric("test_top@3")
    assert m.name == "test_top@3" and m.params["k"] == 3
    assert m.base_name == "test_top@k"
    assert scorebench.metric("test_top@2.5").params["k"] == 2.5
    with pytest.raises(UnknownMetricError, match="missing value"):
        scorebench.metric("test_top@")
    with pytest.raises(UnknownMetricError, match="takes no '@' parameter"):
        scorebench.metric("brier_score@3")
    with pytest.raises(InputError, match="unknown parameter"):
        scorebench.metric("test_top@3", nope=1)
    def other(y, p, *, k):
        """Another definition under a taken name."""
        return y

    other.__name__ = "test_top"
    with pytest.raises(ValueError, match="already registered"):
        register("test_top@k", core=other, family="test", kind="binary", higher_is_better=True, params={"k": 1})


def test_list_metrics_has_metadata_columns():
    table = scorebench.list_metrics()
    assert {"name", "family", "kind", "higher_is_better", "lower_bound", "upper_bound", "proper",
            "per_row", "citation"} <= set(table.columns)
    assert table["name"].is_unique
    sr = scorebench.list_metrics(family="scoring_rules")
    assert (sr["family"] == "scoring_rules").all() and len(sr) >= 10
    assert math.isinf(float(sr.loc[sr.name == "crps_normal", "upper_bound"].iloc[0]))
    with pytest.raises(UnknownMetricError, match="unknown family"):
        scorebench.list_metrics(family="nope")


def test_every_registered_metric_is_documented():
    for m in scorebench.core.registry.all_metrics():
        if m.family == "test":
            continue
        assert m.description, f"{m.name} has no docstring"
        assert m.citation, f"{m.name} has no citation"
        assert m.bounds[0] <= m.bounds[1]
        assert m.proper in (None, "proper", "strict")


def test_entry_point_plugin_is_loaded(tmp_path):
    """A tiny installed plugin (a dist-info with an entry point) registers a metric."""
    (tmp_path / "sb_demo_plugin.py").write_text(textwrap.dedent('''
        import numpy as np
        from scorebench.core.registry import register

        @register("demo_abs_error", family="demo", kind="parametric", inputs=("y", "mu"),
                  higher_is_better=False, bounds=(0, float("inf")), citation="demo plugin")
        def demo_abs_error(y, mu):
            """Absolute error |y - mu|."""
            return np.abs(np.asarray(y, float) - np.asarray(mu, float))
    '''))
    info = tmp_path / "sb_demo_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: sb-demo-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[scorebench.metrics]\ndemo = sb_demo_plugin\n")
    code = ("import pandas as pd, scorebench;"
            "t = pd.DataFrame({'y': [1.0, 2.0], 'mu': [0.0, 2.5]});"
            "print(scorebench.evaluate(t, 'demo_abs_error', n_boot=0)['value'].iloc[0])")
    env = {"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"}
    import os

    env = {**os.environ, **env}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "0.75"
    listed = subprocess.run([sys.executable, "-m", "scorebench.cli", "metrics", "--family", "demo"],
                            capture_output=True, text=True, env=env, check=True)
    assert "demo_abs_error" in listed.stdout


def test_parameter_variants_have_distinct_parseable_names(rng):
    import numpy as np
    import pandas as pd

    fair = scorebench.metric("crps_ensemble", estimator="fair")
    assert fair.name == "crps_ensemble(estimator=fair)"
    assert scorebench.metric(fair.name).params["estimator"] == "fair"
    assert scorebench.metric("crps_ensemble(estimator=standard)").name == "crps_ensemble"
    ndcg = scorebench.metric("ndcg@10(gain=exponential)")
    assert ndcg.params["k"] == 10 and ndcg.params["gain"] == "exponential"
    with pytest.raises(UnknownMetricError, match="param=value"):
        scorebench.metric("crps_ensemble(fair)")
    y = rng.normal(size=50)
    t = pd.DataFrame({"y": y, **{f"m{j}": y + rng.normal(size=50) for j in range(5)}})
    scores = scorebench.evaluate(t, ["crps_ensemble", "crps_ensemble(estimator=fair)"], n_boot=0)
    assert list(scores.metric) == ["crps_ensemble", "crps_ensemble(estimator=fair)"]
    assert scores.value.iloc[1] < scores.value.iloc[0]


def test_declared_types_convert_text_and_refuse_bad_values():
    assert scorebench.metric("ndcg@10").params["k"] == 10  # integer by declaration, not by the look of "10"
    assert scorebench.metric("ece(binning=quantile,n_bins=5)").params["n_bins"] == 5
    assert scorebench.metric("log_score(clip=none)").params["clip"] is None  # "none" spells None
    with pytest.raises(InputError, match=r"metric 'ece': parameter 'n_bins' expects an integer, got 'ten'"):
        scorebench.metric("ece(n_bins=ten)")
    with pytest.raises(InputError, match=r"metric 'ndcg@k': parameter 'k' expects an integer, got 2.5"):
        scorebench.metric("ndcg", k=2.5)
    with pytest.raises(InputError, match=r"parameter 'binning' expects one of 'uniform', .*got 'nope'"):
        scorebench.metric("ece", binning="nope")
    assert scorebench.metric("ndcg@k").name == "ndcg@k"  # the listed name is the unbound metric


def test_register_is_one_call_with_or_without_decorator():
    def test_plain(y, p, *, scale=1.0):
        """Scaled difference."""
        return (y - p) * scale

    assert register("test_plain", core=test_plain, family="test", kind="binary", inputs=("y", "p"),
                    higher_is_better=None, params={"scale": 1.0}, tested_against=NO_EXTERNAL_REFERENCE) is test_plain
    m = scorebench.metric("test_plain(scale=2)")
    assert m.params["scale"] == 2.0 and [o.type for o in m.options] == [float]
    assert m.tested_against == (NO_EXTERNAL_REFERENCE,)
