"""MTEB reader, several revisions per model: the ``revisions=`` policy against mteb's own choice.

The folders are built from real result files (``reference/mteb``) copied under extra revision
folders with other ``mteb_version`` fields and changed scores, as the results repository holds them.
"""

from __future__ import annotations

import json
import shutil
import warnings

import pandas as pd
import pytest
from _mteb_package import load_mteb_results, mteb_quietly
from _paths import REFERENCE
from click.testing import CliRunner

from scorebench.cli import cli
from scorebench.core.errors import InputError
from scorebench.io.readers._mteb_revisions import parse_revisions, version_key
from scorebench.io.tables import read_results

MTEB_RESULTS = REFERENCE / "mteb" / "results"
needs_data = pytest.mark.skipif(not MTEB_RESULTS.is_dir(), reason=f"reference data not found at {MTEB_RESULTS}")
A, A_REV = "sergeyzh/rubert-tiny-turbo", "8ce0cf757446ce9bb2d5f5a4ac8103c7a1049054"
B, B_REV = "sentence-transformers/static-retrieval-mrl-en-v1", "f60985c706f192d45d218078e49e5a8b6f15283a"
NEW_A, NEW_B = "1111111aaaaaaa", "2222222bbbbbbb"


def _read(path, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return read_results(path, format="mteb", **options)


def _copy(root, model, source_rev, rev, tasks, version, factor):
    """``tasks`` of ``model`` copied as revision ``rev`` with ``mteb_version`` and main scores changed."""
    src = MTEB_RESULTS / model.replace("/", "__") / source_rev
    dst = root / model.replace("/", "__") / rev
    dst.mkdir(parents=True)
    meta = json.loads((src / "model_meta.json").read_text())
    (dst / "model_meta.json").write_text(json.dumps({**meta, "revision": rev}))
    for task in tasks:
        obj = json.loads((src / f"{task}.json").read_text())
        obj["mteb_version"] = version
        for entries in obj["scores"].values():
            for entry in entries:
                entry["main_score"] *= factor
        (dst / f"{task}.json").write_text(json.dumps(obj))


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    """A: the real revision (mteb 1.12/1.18), a newer commit with half the tasks (mteb 2.18.7) and
    ``no_revision_available`` with the newest mteb (loses: no revision). B: the real revision (1.34.26),
    a commit with a version range (unversioned for mteb) on some tasks and an older mteb on others."""
    root = tmp_path_factory.mktemp("mteb") / "results"
    for model, rev in ((A, A_REV), (B, B_REV)):
        shutil.copytree(MTEB_RESULTS / model.replace("/", "__") / rev, root / model.replace("/", "__") / rev)
    tasks_a = sorted(p.stem for p in (root / A.replace("/", "__") / A_REV).glob("*.json") if p.stem != "model_meta")
    tasks_b = sorted(p.stem for p in (root / B.replace("/", "__") / B_REV).glob("*.json") if p.stem != "model_meta")
    _copy(root, A, A_REV, NEW_A, tasks_a[::2], "2.18.7", 0.9)
    _copy(root, A, A_REV, "no_revision_available", tasks_a[:10], "2.26.0", 0.5)
    _copy(root, B, B_REV, NEW_B, tasks_b[:6], "2.3.11-2.18.7", 0.8)
    _copy(root, B, B_REV, "3333333ccccccc", tasks_b[6:12], "1.12.50", 0.7)
    return root, tasks_a, tasks_b


def _mteb_choice(root, monkeypatch, registry):
    """Per (model, task): mteb's chosen revision and score (``join_revisions``), ``registry`` standing
    for mteb's model registry of main revisions (None: mteb's own)."""
    results = load_mteb_results(root)
    from mteb.results import benchmark_results

    if registry is not None:
        monkeypatch.setattr(benchmark_results, "_get_cached_model_metas", lambda: registry)
    with mteb_quietly():
        joined = results.join_revisions()
        scores = joined.to_dataframe(aggregation_level="task", format="long")
    chosen = {(m.model_name, t.task_name): m.model_revision for m in joined for t in m.task_results}
    return chosen, scores.dropna(subset=["score"]).set_index(["model_name", "task_name"])["score"]


@needs_data
def test_latest_is_mteb_join_revisions_rule(repo, monkeypatch):
    root, tasks_a, tasks_b = repo
    theirs, scores = _mteb_choice(root, monkeypatch, registry={})
    ours = _read(root).set_index(["system", "task"])
    assert ours.attrs["revisions"] == "latest" and ours.attrs["n_results_not_kept"] == len(tasks_a[::2]) + 10 + 12
    assert set(ours.index) == set(scores.index)
    assert {key: theirs[key] for key in ours.index} == ours["revision"].to_dict()
    pd.testing.assert_series_equal(ours["value"].sort_index(), scores.reindex(ours.index).sort_index(),
                                   check_names=False, rtol=0, atol=1e-12)
    # the newer commit wins where it has the task, the real revision elsewhere; B keeps its own revision
    revs = ours["revision"]
    assert set(revs[A]) == {A_REV, NEW_A} and (revs[A][tasks_a[::2]] == NEW_A).all()
    assert set(revs[B]) == {B_REV}


@needs_data
def test_registry_main_revision_is_a_pin(repo, monkeypatch):
    """mteb first prefers its registry's main revision: the same choice is a mapping here."""
    root, _, _ = repo
    theirs, scores = _mteb_choice(root, monkeypatch, registry={A: A_REV, B: NEW_B})
    ours = _read(root, revisions={A: A_REV, B: NEW_B}).set_index(["system", "task"])
    assert {key: theirs[key] for key in ours.index} == ours["revision"].to_dict()
    assert (ours["value"] - scores.reindex(ours.index)).abs().max() < 1e-12
    # a pinned model keeps only that revision's tasks
    assert (ours.loc[B, "revision"] == NEW_B).all() and len(ours.loc[B]) == 6


@needs_data
def test_all_keeps_every_revision_as_its_own_system(repo):
    root, tasks_a, _ = repo
    table = _read(root, revisions="all")
    counts = table.groupby("system").size().to_dict()
    assert counts[f"{A}@{NEW_A}"] == len(tasks_a[::2]) and counts[f"{A}@no_revision_available"] == 10
    assert set(table["system"]) == {f"{A}@{A_REV}", f"{A}@{NEW_A}", f"{A}@no_revision_available",
                                    f"{B}@{B_REV}", f"{B}@{NEW_B}", f"{B}@3333333ccccccc"}
    assert (table["system"] == table["system"].str.split("@").str[0] + "@" + table["revision"]).all()


@needs_data
def test_one_revision_for_every_model_and_errors(repo):
    root, _, _ = repo
    with pytest.raises(InputError, match=f"model '{B}' has no revision 'no_revision_available'; revisions present: "
                                         f"'{NEW_B}', '3333333ccccccc', '{B_REV}'"):
        _read(root, revisions="no_revision_available")
    with pytest.raises(InputError, match=f"model '{A}' has no revision 'zzz'; revisions present: '{NEW_A}', "):
        _read(root, revisions={A: "zzz"})
    with pytest.raises(InputError, match="model 'org/absent' has no results of the benchmark's tasks here"):
        _read(root, revisions={"org/absent": "x"})
    with pytest.raises(InputError, match="revisions='lastest': not 'latest' or 'all', and no model has a revision"):
        _read(root, revisions="lastest")


@pytest.mark.parametrize("value", [3, ["latest"], "", {"org/a": ""}, "a=b,=c", {}])
def test_unknown_policy_is_one_line(value):
    with pytest.raises(InputError) as info:
        parse_revisions(value)
    assert str(info.value).startswith("revisions=") and "\n" not in str(info.value)


def test_version_order_is_pep440():
    ordered = ["0.0.2", "1.0.1.dev0", "1.0.1", "1.0.1.post1", "1.1.1.dev0", "1.1.1a1", "1.1.1rc2", "1.1.1",
               "1.12.0", "1.12.49", "1.18", "2.3.11", "2.18.7", "2.26.0"]
    keys = [version_key(v) for v in ordered]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    assert version_key("1.18") == version_key("1.18.0")
    assert [version_key(v) for v in ("2.3.11-2.18.7", None, "unknown", "mteb version not available")] == [None] * 4
    packaging = pytest.importorskip("packaging.version")
    assert sorted(ordered, key=packaging.Version) == ordered


@needs_data
def test_cli_passes_the_policy(repo):
    root, _, _ = repo
    out = CliRunner().invoke(cli, ["import", str(root), "--from", "mteb", "--from-option", "revisions=all",
                                   "-o", str(root.parent / "all.csv")])
    assert out.exit_code == 0, out.output
    assert pd.read_csv(root.parent / "all.csv")["system"].nunique() == 6
    out = CliRunner().invoke(cli, ["import", str(root), "--from", "mteb", "--from-option",
                                   f"revisions={A}={NEW_A}", "-o", str(root.parent / "pin.csv")])
    assert out.exit_code == 0, out.output
    pinned = pd.read_csv(root.parent / "pin.csv")
    assert set(pinned.loc[pinned["system"] == A, "revision"]) == {NEW_A}
    out = CliRunner().invoke(cli, ["import", str(root), "--from", "mteb", "--from-option", f"revisions={A}=zzz"])
    assert out.exit_code != 0 and "has no revision 'zzz'" in out.output
    assert len([line for line in out.output.splitlines() if line.strip()]) == 1


def test_experiment_folders_are_left_out_as_mteb_does(tmp_path):
    """mteb >= 2 writes runs with other settings to <revision>/experiments/<name>/ (own model_meta.json)."""
    entry = {"hf_subset": "default", "languages": ["eng-Latn"], "main_score": 0.5}
    revision = tmp_path / "org__m" / "abc1234"
    for folder, score in ((revision, 0.5), (revision / "experiments" / "pooling_cls", 0.9)):
        folder.mkdir(parents=True)
        (folder / "model_meta.json").write_text(json.dumps({"name": "org/m", "revision": "abc1234"}))
        (folder / "BIOSSES.json").write_text(json.dumps({"task_name": "BIOSSES", "mteb_version": "2.3.0",
                                                         "scores": {"test": [{**entry, "main_score": score}]}}))
    table = _read(tmp_path, revisions="all")
    assert table[["system", "value"]].values.tolist() == [["org/m@abc1234", 0.5]]
