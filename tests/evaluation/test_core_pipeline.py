"""The evaluation core: mergeable partials, the shared pipeline, the engine registry."""

from __future__ import annotations

import ast
import pathlib

import numpy as np
import pandas as pd
import pytest

import scorebench
from scorebench.evaluation.engines import engine_for, register_engine
from scorebench.evaluation.partial import Partial, RowSums, SetStats, merge
from scorebench.evaluation.pipeline import group_labels, resolve_kind, resolve_metrics, unit_partials
from scorebench.core.errors import InputError
from scorebench.core.registry import all_metrics
from scorebench.core.tables import get_kind

ROOT = pathlib.Path(scorebench.__file__).parent
WING = ROOT / "evaluation"


def _binary_table(n: int = 300, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"system": rng.choice(["a", "b", "c"], n), "y": rng.integers(0, 2, n),
                         "p": rng.uniform(0, 1, n)})


def _partials(table: pd.DataFrame, names: list[str], n_boot: int = 40) -> Partial:
    records = resolve_metrics(names)
    inputs = get_kind("binary").extract(table, nan_policy="raise")
    return unit_partials(inputs, [m for m in records if m.mergeable], ["system"], "raise", n_boot, 7)


def test_partials_of_any_split_add_up_to_the_whole():
    table = _binary_table()
    names = ["brier_score", "log_score", "ece"]
    whole = _partials(table, names)
    cuts = [0, 17, 120, 121, 300]
    parts = [_partials(table.iloc[a:b], names) for a, b in zip(cuts, cuts[1:])]
    merged = merge(parts)
    assert set(merged.entries) == set(whole.entries)
    for key, entry in whole.entries.items():
        got = merged.entries[key]
        assert got.n == entry.n
        if isinstance(entry, RowSums):
            np.testing.assert_allclose([got.total, *got.sums, *got.totals],
                                       [entry.total, *entry.sums, *entry.totals], rtol=1e-12)
        else:
            np.testing.assert_allclose(got.stats, entry.stats, rtol=1e-12)
            np.testing.assert_allclose(got.boot, entry.boot, rtol=1e-12)
    # associative and commutative: another order, another tree
    again = (parts[3] + parts[1]) + (parts[0] + parts[2])
    for key, entry in merged.entries.items():
        assert again.entries[key].n == entry.n


def test_partial_addition_keeps_operands_unchanged_and_unions_units():
    a = Partial({(("x",), "m"): RowSums(1.0, 1, np.ones(2), np.ones(2))}, {("x",): {"q1"}})
    b = Partial({(("x",), "m"): RowSums(3.0, 1, np.ones(2), np.ones(2))}, {("x",): {"q2"}, ("y",): {"q3"}})
    c = a + b
    assert c.entries[(("x",), "m")].value() == 2.0
    assert a.entries[(("x",), "m")].total == 1.0 and a.units == {("x",): {"q1"}}
    assert c.units == {("x",): {"q1", "q2"}, ("y",): {"q3"}}
    assert (Partial() + a).units == a.units and not Partial()
    s = SetStats(np.array([1.0, 2.0]), 2, 0.0) + SetStats(np.array([1.0, 0.0]), 1, np.ones((3, 2)))
    np.testing.assert_array_equal(s.stats, [2.0, 2.0])
    assert s.n == 3 and s.boot.shape == (3, 2)


def test_row_sums_value_and_replicates_drop_empty_rounds():
    e = RowSums(0.0, 0, np.array([1.0, 0.0, 3.0]), np.array([2.0, 0.0, 3.0]))
    assert np.isnan(e.value())
    np.testing.assert_array_equal(e.replicates(), [0.5, 1.0])


def test_pandas_poisson_equals_partials_finished():
    """The pandas engine (one partition) and the merged partials give the same value and interval."""
    table = _binary_table(200)
    expected = scorebench.evaluate(table, "brier_score", by="system", n_boot=200, seed=7, bootstrap="poisson")
    from scorebench.evaluation.pipeline import finish
    from scorebench.core.stats import interval_bounds

    total = merge(_partials(table.iloc[a:b], ["brier_score"], n_boot=200) for a, b in [(0, 55), (55, 200)])
    record = resolve_metrics("brier_score")[0]
    for _, row in expected.iterrows():
        value, reps = finish(record, total.entries[((row["system"],), "brier_score")], 200)
        low, high = interval_bounds(value, reps, 0.95, record.interval_method, record.bounds)
        np.testing.assert_allclose([value, low, high], [row["value"], row["ci_low"], row["ci_high"]], rtol=1e-10)


def test_group_labels_keep_numbers_and_text():
    frame = pd.DataFrame({"system": ["b", "a", "b"], "task": [2, 1, 2]})
    codes, labels = group_labels(frame, ["system", "task"])
    assert labels == [("a", 1), ("b", 2)] and codes.tolist() == [1, 0, 1]
    assert group_labels(frame, [])[1] == [()]


def test_resolve_kind_refuses_foreign_options():
    records = resolve_metrics(["brier_score"])
    with pytest.raises(InputError, match=r"option\(s\) \['qrels'\] do not apply to kind 'binary'"):
        resolve_kind(records, None, {"qrels": None})
    with pytest.raises(InputError, match="requested more than once"):
        resolve_metrics(["brier_score", "brier_score"])


def test_engine_registry_is_lazy_and_pandas_has_none():
    assert engine_for(pd.DataFrame()) is None
    with pytest.raises(ValueError, match="module:function"):
        register_engine("nothing", "no_colon")


def test_ranking_kind_declares_its_complete_hook():
    hook = get_kind("ranking").complete_units
    assert hook({"complete": False}) is None
    options, missing = hook({"complete": True, "qrels": None})
    assert options["complete"] is False
    assert missing({}, [], "raise") is None  # no qrels: nothing to complete


def _names_in(path: pathlib.Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)} | \
        {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | \
        {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}


def test_dask_engine_holds_no_metric_or_kind_specific_code():
    code = _names_in(WING / "dask_engine.py")
    kinds = {"ranking", "binary", "ensemble", "embeddings", "qrels", "qid", "complete"}
    assert not code & kinds
    metric_names = {m.name.split("@")[0] for m in all_metrics()} - {"p", "r", "n"}
    assert not code & metric_names


def test_nothing_below_the_engines_imports_them():
    for path in ROOT.rglob("*.py"):
        # the engines themselves: evaluate's Dask engine, compare's and aggregate's item-level Dask
        # path (both co-partition units with the engine's co_partition)
        if path.name in ("dask_engine.py", "dask_compare.py", "poisson_items.py") or "cli" in path.parts:
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.endswith("dask_engine"), f"{path} imports the Dask engine"


def _imports(path: pathlib.Path) -> list[tuple[str, list[str]]]:
    """Every ``from X import a, b`` of a module, in-function imports included."""
    tree = ast.parse(path.read_text())
    return [(node.module, [a.name for a in node.names]) for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module]


def test_pipeline_never_imports_an_engine_or_the_api():
    """plan -> reduce -> score -> pipeline: none of them reaches up into evaluate.py or an engine
    (the runtime cycle evaluate -> engines -> dask_engine -> evaluate is gone)."""
    steps = ("plan", "resample", "score", "reduce", "pipeline", "partial")
    upward = ("scorebench.evaluation.evaluate", "scorebench.evaluation.engines", "scorebench.evaluation.dask_engine",
              "scorebench.evaluation.comparison", "scorebench.evaluation.dask_compare")
    for step in steps:
        for module, _ in _imports(WING / f"{step}.py"):
            assert module not in upward, f"{step}.py imports {module}"
    for module, _ in _imports(WING / "dask_engine.py"):
        assert module != "scorebench.evaluation.evaluate", "the Dask engine imports the API (a cycle)"


def test_no_private_name_crosses_modules_of_the_wing():
    for path in WING.glob("*.py"):
        for module, names in _imports(path):
            if module.startswith("scorebench"):
                private = [n for n in names if n.startswith("_") and n != "__version__"]
                assert not private, f"{path.name} imports {private} from {module}"


def test_metrics_never_import_the_evaluation_wing():
    for path in (ROOT / "metrics").rglob("*.py"):
        for module, _ in _imports(path):
            assert not module.startswith("scorebench.evaluation"), f"{path} imports {module}"


def test_no_engine_names_a_kinds_internals():
    """Generative reference sets reach the engine through the kind's side_data hook."""
    for path in WING.glob("*.py"):
        code = _names_in(path)
        assert not code & {"_sample_sets", "_task", "real_features"}, path.name
    assert get_kind("features").side_data is not None


def test_resampler_draws_reproduce_and_follow_the_scheme():
    from scorebench.evaluation.resample import Resampler

    idx = np.arange(10, 20)
    a = [r.tolist() for r in Resampler(5, np.random.default_rng(1)).resamples(idx)]
    b = [r.tolist() for r in Resampler(5, np.random.default_rng(1)).resamples(idx)]
    assert a == b and all(len(r) == 10 and set(r) <= set(idx.tolist()) for r in a)
    hashes = np.arange(10, dtype=np.uint64)
    poisson = Resampler(5, np.random.default_rng(1), seed=3, hashes=hashes)
    assert poisson.scheme == "poisson"
    blocks = np.vstack([w for _, w in poisson.weight_blocks(10)])
    again = np.vstack([w for _, w in Resampler(5, np.random.default_rng(9), seed=3, hashes=hashes).weight_blocks(10)])
    np.testing.assert_array_equal(blocks, again)  # hash-based: the stream plays no part
    counts = np.vstack([w for _, w in Resampler(4, np.random.default_rng(2)).weight_blocks(6)])
    assert counts.shape == (4, 6) and (counts.sum(axis=1) == 6).all()
    halves = list(Resampler(3, np.random.default_rng(0)).half_samples(idx))
    assert all(h.size == 5 and len(set(h.tolist())) == 5 for h in halves)
    clustered = Resampler(50, np.random.default_rng(0), clusters=np.repeat([0, 1], 5))
    means, method = clustered.means(np.r_[np.zeros(5), np.ones(5)])
    assert method == "cluster bootstrap (2 clusters)" and set(np.round(means, 12)) <= {0.0, 0.5, 1.0}


def test_score_entry_applies_every_interval_rule():
    from scorebench.evaluation.partial import Replicates
    from scorebench.evaluation.plan import make_plan
    from scorebench.evaluation.score import score_entry

    brier, acc = resolve_metrics(["brier_score", "accuracy"])
    reps = np.linspace(0.1, 0.3, 101)
    plan = make_plan(["brier_score"], n_boot=101)
    s = score_entry(brier, Replicates(0.2, 50, reps, "multinomial"), plan)
    expected = (pytest.approx(np.quantile(reps, 0.025)), pytest.approx(np.quantile(reps, 0.975)), "multinomial")
    assert (s.low, s.high, s.method) == expected
    assert score_entry(brier, Replicates(np.inf, 5, None, "none"), plan).method == "none (infinite mean)"
    assert np.isnan(score_entry(brier, Replicates(0.2, 5, reps, "x"), make_plan(["brier_score"], n_boot=0)).low)
    wilson = score_entry(acc, RowSums(30.0, 50, np.ones(3), np.ones(3)), make_plan(["accuracy"], kind="correct"))
    assert wilson.method == "wilson score interval" and wilson.low < 0.6 < wilson.high
    boot = score_entry(acc, RowSums(30.0, 50, np.array([25.0, 30.0, 35.0]), np.full(3, 50.0)),
                       make_plan(["accuracy"], kind="correct", proportion_interval="bootstrap"))
    assert boot.method == "poisson" and boot.low < 0.6 < boot.high
