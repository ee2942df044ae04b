"""CONTRIBUTING.md's examples run (issue 30): each "where things go" example is executed as
written, in a fresh interpreter (so the example's registrations never reach this test run's
registries), and checked to do what the page says.

An example whose API is not in this tree yet (the typed metric protocol, the format registry:
issue 30 items 2 and 3 land on other branches) is skipped with that reason until it is.
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

# the repository root, wherever under tests/ this file is moved
ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())


def _blocks(heading: str) -> list[str]:
    """The ```python blocks of the CONTRIBUTING.md section ``### heading``."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    start = text.index(f"### {heading}\n")
    following = re.search(r"\n#{2,3} ", text[start + 4:])  # the next section heading (code comments have one #)
    section = text[start:] if following is None else text[start:start + 4 + following.start()]
    return re.findall(r"```python\n(.*?)```", section, re.S)


_PRELUDE = '''
import doctest, sys
import numpy as np
import pandas as pd
import scorebench
from scorebench.core.errors import InputError

def run_doctests(obj, globs):
    runner = doctest.DocTestRunner()
    for test in doctest.DocTestFinder().find(obj, globs=globs):
        runner.run(test)
    assert runner.tries > 0 and runner.failures == 0, f"{obj.__name__}: doctest failed"

def refused(call, *words):
    try:
        call()
    except InputError as error:
        assert all(w in str(error) for w in words), str(error)
        return
    raise AssertionError(f"no InputError (expected one naming {words})")
'''


def _run(script: str, tmp_path: Path, **blocks: str) -> None:
    """Run ``script`` after the prelude, with each block's text bound to a variable."""
    bound = "".join(f"{name} = {text!r}\n" for name, text in blocks.items())
    path = tmp_path / "example.py"
    path.write_text(_PRELUDE + bound + textwrap.dedent(script), encoding="utf-8")
    import scorebench  # the child imports the same scorebench as this test run

    where = str(Path(scorebench.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [where, os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, str(path)], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env=env)
    assert done.returncode == 0, done.stdout + done.stderr


def test_metric_example(tmp_path):
    from scorebench.core.registry import register

    if "core" not in inspect.signature(register).parameters:
        pytest.skip("the register(..., core=...) protocol (issue 30 item 3) is not in this tree yet")
    (block,) = _blocks("A metric")
    _run('''
        ns = {"__name__": "contributing_metric"}
        exec(METRIC, ns)
        run_doctests(ns["binary_power_score"], ns)
        rng = np.random.default_rng(0)
        table = pd.DataFrame({"system": "a", "y": rng.integers(0, 2, 40).astype(float), "p": rng.uniform(0, 1, 40)})
        value = scorebench.evaluate(table, ["binary_power_score", "brier_score"], n_boot=0).set_index("metric")["value"]
        assert abs(value["binary_power_score"] - (1 - 2 * value["brier_score"])) < 1e-12
        refused(lambda: scorebench.evaluate(table, ["binary_power_score(alpha=abc)"], n_boot=0), "alpha")
        refused(lambda: scorebench.evaluate(table, ["binary_power_score(alpha=1)"], n_boot=0), "alpha")
        assert scorebench.metric("binary_power_score").tested_against
    ''', tmp_path, METRIC=block)


def test_kind_example(tmp_path):
    (block,) = _blocks("A table kind")
    _run('''
        exec(KIND, {"__name__": "contributing_kind"})
        from scorebench.core.tables import get_kind
        kind = get_kind("binomial")
        assert [o.name for o in kind.options] == ["min_trials"]
        table = pd.DataFrame({"system": "a", "id": [1, 2], "k": [3, 1], "n": [5, 4], "p": [0.5, 0.2]})
        units = kind.extract(table, nan_policy="raise")
        assert units.arrays["k"].tolist() == [3.0, 1.0] and units.arrays["n"].tolist() == [5.0, 4.0]
        refused(lambda: kind.extract(table.assign(k=[6, 1]), nan_policy="raise"), "k <= n", "row")
        refused(lambda: kind.extract(table.assign(p=[0.5, 1.5]), nan_policy="raise"), "p")
    ''', tmp_path, KIND=block)


def test_reader_example(tmp_path):
    if importlib.util.find_spec("scorebench.io.formats") is None:
        pytest.skip("the Format registry scorebench/io/formats.py (issue 30 item 2) is not in this tree yet")
    reader, entry = _blocks("A reader (a file format)")
    plugin = tmp_path / "contributing_plugin"
    plugin.mkdir()
    (plugin / "__init__.py").write_text("")
    (plugin / "myharness.py").write_text(reader)
    _run('''
        import dataclasses, json
        from pathlib import Path
        sys.path.insert(0, ".")
        import scorebench.io.readers as readers
        from scorebench.io.formats import detect_format, read, register_format
        record = eval("\\n".join(line for line in ENTRY.splitlines() if not line.startswith("#")).strip().rstrip(","),
                      vars(readers))
        record = dataclasses.replace(record, reader="contributing_plugin.myharness:read",
                                     detector="contributing_plugin.myharness:detect")
        register_format(record)
        path = Path("run.myharness.json")
        path.write_text(json.dumps({"model": "m1", "results": [{"task": "t", "id": 1, "correct": True},
                                                               {"task": "u", "id": 2, "correct": False}]}))
        assert detect_format(path) == "myharness"
        table = read(path)
        assert table["correct"].tolist() == [1.0, 0.0] and set(table.columns) == {"system", "task", "id", "correct"}
        assert read(path, task="u")["id"].tolist() == [2]
        refused(lambda: read(path, tsk="u"), "tsk", "task")
        bad = Path("bad.myharness.json")
        bad.write_text("[1, 2]")
        refused(lambda: read(bad), "bad.myharness.json", "results")
    ''', tmp_path, ENTRY=entry)


def test_board_section_example(tmp_path):
    module, line = _blocks("A board section")
    _run('''
        import types
        mod = types.ModuleType("scorebench.leaderboard.winrate_board")
        sys.modules[mod.__name__] = mod
        exec(MODULE, mod.__dict__)
        import scorebench.leaderboard.sections as sections
        exec(LINE, vars(sections))
        kind = sections.get_section("winrate")
        block = kind.parse({"source": "battles"}, "b.toml: winrate")
        assert kind.sources(block) == ("battles",)
        battles = pd.DataFrame({"a": ["x", "x", "y"], "b": ["y", "z", "z"], "winner": ["a", "b", "a"]})
        ctx = type("Ctx", (), {"table": lambda self, name: battles})()
        (section,) = kind.build(ctx, block)
        assert dict(section.rows) == {"x": "0.500", "y": "0.500", "z": "0.500"}
        refused(lambda: kind.parse({"sourc": "battles"}, "b.toml: winrate"), "b.toml: winrate", "source")
    ''', tmp_path, MODULE=module, LINE=line)


def test_aggregation_method_example(tmp_path):
    (block,) = _blocks("An aggregation method")
    _run('''
        ns = {"__name__": "contributing_method"}
        exec(METHOD, ns)
        run_doctests(ns["task_wins"], ns)
        wide = pd.DataFrame({"system": ["a", "b", "c"], "t1": [1.0, 3.0, 2.0], "t2": [5.0, 1.0, 0.0],
                             "t3": [2.0, 2.0, 1.0]})
        result = scorebench.aggregate(wide, "task_wins", n_boot=0)
        assert dict(zip(result.systems, result.scores)) == {"a": 1.5, "b": 1.5, "c": 0.0}
        refused(lambda: scorebench.aggregate(wide.assign(t1=[1.0, None, 2.0]), "task_wins", n_boot=0), "missing")
    ''', tmp_path, METHOD=block)
