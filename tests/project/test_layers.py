"""Layer tests (issue 30): the import graph of ``scorebench/`` goes down the layers.

Every module under ``scorebench/`` is parsed with :mod:`ast`; an edge is any import of a
``scorebench`` module — at the top of a file or inside a function, absolute or relative — and
any string constant that names a ``scorebench`` module (the tables of module names that lazy
loaders import by name), so a dependency cannot hide behind a deferred import. The wing of a
module is its folder under ``scorebench/`` (``core``, ``metrics``, ``losses``, ``evaluation``,
``analysis``, ``io``, ``aggregate``, ``irt``, ``health``, ``leaderboard``, ``report``, ``cli``,
``models``); the package face (``scorebench/__init__.py``, ``accessor.py``, ``_version.py``) is
outside the rules. The rules (docs/architecture.md draws them):

* ``core/`` (the ground floor) imports no wing;
* ``metrics/`` and ``losses/`` never import ``evaluation/``, ``io/``, ``aggregate/``,
  ``leaderboard/``, ``cli/``, ``report/``;
* ``evaluation/`` never imports ``leaderboard/``, ``cli/``, ``report/``;
* ``io/`` never imports ``evaluation/``, ``leaderboard/``, ``cli/``;
* ``aggregate/`` never imports ``io/``, ``leaderboard/``, ``cli/``;
* nothing but ``cli/`` imports ``cli/``;
* no import cycle between wings;
* no ``_private`` name is imported from another module (nor reached as ``module._name``); a
  private submodule imported by a sibling in its own package is fine.

Known offenders when the gate went in are listed per rule below, each as ``(file, imported
module)``. They are being removed on other branches: the lists may only shrink. A test fails
when a listed import no longer exists, so delete the entry with the import.
"""

from __future__ import annotations

import ast
import functools
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest

# the repository root, wherever under tests/ this file is moved
ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())

WINGS = ("core", "metrics", "losses", "evaluation", "analysis", "io", "aggregate", "irt", "health",
         "leaderboard", "report", "cli", "models")

# wing -> the wings it must never import (the cli rule is separate: nothing but cli/ imports cli/)
FORBIDDEN: dict[str, frozenset[str]] = {
    "core": frozenset(WINGS) - {"core"},
    "metrics": frozenset({"evaluation", "io", "aggregate", "leaderboard", "cli", "report"}),
    "losses": frozenset({"evaluation", "io", "aggregate", "leaderboard", "cli", "report"}),
    "evaluation": frozenset({"leaderboard", "cli", "report"}),
    "io": frozenset({"evaluation", "leaderboard", "cli"}),
    "aggregate": frozenset({"io", "leaderboard", "cli"}),
}

# Permanent, by design (string references only): the one start-up place that imports the
# registering packages by name so that the registries never import upward
# (scorebench/core/builtins.py), and an entry-point group that happens to read like a module.
BY_DESIGN: dict[tuple[str, str], str] = {
    ("scorebench/core/builtins.py", "scorebench.metrics"): "load_builtins imports the registering packages",
    ("scorebench/core/builtins.py", "scorebench.aggregate"): "load_builtins imports the registering packages",
    ("scorebench/core/registry.py", "scorebench.metrics"): "ENTRY_POINT_GROUP, a plugin entry-point group name",
}

# ---- Known offenders (issue 30 merge): the lists may only shrink ---------------------------------
# rule "core imports no wing"
CORE_OFFENDERS: set[tuple[str, str]] = set()
# rule "metrics/, losses/ never import evaluation/, io/, aggregate/, leaderboard/, cli/, report/"
METRICS_LOSSES_OFFENDERS: set[tuple[str, str]] = set()
# rule "evaluation/ never imports leaderboard/, cli/, report/"
EVALUATION_OFFENDERS: set[tuple[str, str]] = set()
# rule "io/ never imports evaluation/, leaderboard/, cli/"
IO_OFFENDERS: set[tuple[str, str]] = set()
# rule "aggregate/ never imports io/, leaderboard/, cli/"
AGGREGATE_OFFENDERS: set[tuple[str, str]] = set()
# rule "nothing but cli/ imports cli/"
CLI_OFFENDERS: set[tuple[str, str]] = set()
# rule "no import cycle between wings": edges left out of the wing graph
CYCLE_OFFENDERS: set[tuple[str, str]] = {
    # analysis <-> evaluation: evaluation/ uses the tests of analysis/; these two go back up
    ("scorebench/analysis/gates.py", "scorebench.evaluation.paired_units"),
    ("scorebench/analysis/confseq.py", "scorebench.evaluation.evaluate"),
    # aggregate <-> irt: the aggregation registry names the irt provider module in a string table
    ("scorebench/aggregate/registry.py", "scorebench.irt.aggregate_method"),
}
# rule "no _private name imported from another module": (file, "module._name")
PRIVATE_OFFENDERS: set[tuple[str, str]] = set()


@dataclass(frozen=True)
class Edge:
    """One reference from ``file`` (a path under the root) to the module ``target``."""

    file: str
    source: str  # dotted name of the importing module
    target: str  # dotted name of the imported module
    how: str  # "import" or "string"
    line: int


@dataclass(frozen=True)
class PrivateUse:
    file: str
    name: str  # "module._name"
    line: int


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _docstrings(tree: ast.Module) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)):
            out.add(id(body[0].value))
    return out


class Graph:
    """The import graph of the package ``root / package``."""

    def __init__(self, root: Path, package: str = "scorebench") -> None:
        self.root, self.package = root, package
        self.files = {_module_name(p, root): p for p in sorted((root / package).rglob("*.py"))}
        self.edges: list[Edge] = []
        self.private: list[PrivateUse] = []
        for module, path in self.files.items():
            self._scan(module, path)

    def resolve(self, dotted: str) -> str | None:
        """The longest prefix of ``dotted`` that is a module of the package."""
        while dotted and dotted not in self.files:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    def wing(self, module: str) -> str:
        parts = module.split(".")
        if len(parts) > 1 and (self.root / self.package / parts[1]).is_dir():
            return parts[1]
        return "face"

    def _scan(self, module: str, path: Path) -> None:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        file = path.relative_to(self.root).as_posix()
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        docs = _docstrings(tree)
        aliases: dict[str, str] = {}  # local name -> package module it is bound to
        prefix = self.package + "."

        def add(target: str | None, how: str, line: int) -> None:
            if target is not None and target != self.package:
                self.edges.append(Edge(file, module, target, how, line))

        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith(prefix):
                        add(self.resolve(alias.name), "import", node.lineno)
                        if alias.asname:
                            aliases[alias.asname] = alias.name
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                if not (source == self.package or source.startswith(prefix)):
                    continue
                for alias in node.names:
                    full = f"{source}.{alias.name}"
                    add(full if full in self.files else self.resolve(source), "import", node.lineno)
                    if full in self.files:
                        aliases[alias.asname or alias.name] = full
                    private = alias.name.startswith("_") and not alias.name.startswith("__")
                    own_submodule = full in self.files and full.rpartition(".")[0] == package
                    if private and not own_submodule:
                        self.private.append(PrivateUse(file, full, node.lineno))
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
                dotted = node.value.partition(":")[0]  # "module" or "module:function"
                if dotted.startswith(prefix) and all(part.isidentifier() for part in dotted.split(".")):
                    add(self.resolve(dotted), "string", node.lineno)
        for node in ast.walk(tree):  # module._name on an imported package module
            if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
                chain, value = [], node.value
                while isinstance(value, ast.Attribute):
                    chain.append(value.attr)
                    value = value.value
                if isinstance(value, ast.Name) and value.id in aliases:
                    target = ".".join([aliases[value.id], *reversed(chain)])
                    if target in self.files and target != module:
                        self.private.append(PrivateUse(file, f"{target}.{node.attr}", node.lineno))

    def cross_wing(self) -> list[tuple[str, str, Edge]]:
        """(from wing, to wing, edge) for every edge between two wings, by-design ones left out."""
        out = []
        for e in self.edges:
            a, b = self.wing(e.source), self.wing(e.target)
            if a != b and "face" not in (a, b) and not (e.how == "string" and (e.file, e.target) in BY_DESIGN):
                out.append((a, b, e))
        return out


@functools.lru_cache(maxsize=1)
def graph() -> Graph:
    return Graph(ROOT)


def _check(found: dict[tuple[str, str], list[int]], allowed: set[tuple[str, str]], rule: str) -> None:
    new = sorted(set(found) - allowed)
    stale = sorted(allowed - set(found))
    assert not new, f"{rule}: " + "; ".join(f"{f}:{found[(f, t)][0]} imports {t}" for f, t in new)
    assert not stale, (f"{rule}: these allowlisted imports are gone; delete their entries so the list "
                       f"only shrinks: {stale}")


def _forbidden(g: Graph, wings: set[str]) -> dict[tuple[str, str], list[int]]:
    found: dict[tuple[str, str], list[int]] = defaultdict(list)
    for a, b, e in g.cross_wing():
        if a in wings and b in FORBIDDEN[a]:
            found[(e.file, e.target)].append(e.line)
    return found


@pytest.mark.parametrize("wing", ["core", "metrics+losses", "evaluation", "io", "aggregate"])
def test_wing_imports_go_down(wing):
    g = graph()
    wings = set(wing.split("+"))
    allowed = {"core": CORE_OFFENDERS, "metrics+losses": METRICS_LOSSES_OFFENDERS,
               "evaluation": EVALUATION_OFFENDERS, "io": IO_OFFENDERS, "aggregate": AGGREGATE_OFFENDERS}[wing]
    forbidden = sorted(set().union(*(FORBIDDEN[w] for w in wings)))
    _check(_forbidden(g, wings), allowed, f"{wing}/ must not import {', '.join(forbidden)}")


def test_only_cli_imports_cli():
    g = graph()
    found: dict[tuple[str, str], list[int]] = defaultdict(list)
    for e in g.edges:
        if g.wing(e.target) == "cli" and g.wing(e.source) != "cli":
            found[(e.file, e.target)].append(e.line)
    _check(found, CLI_OFFENDERS, "nothing but cli/ imports cli/")


def _cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the directed graph ``edges`` as a list of nodes, or None."""
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for start in sorted(edges):
        if start not in state and (found := visit(start)):
            return found
    return None


def test_no_cycle_between_wings():
    g = graph()
    wing_edges: dict[str, set[str]] = defaultdict(set)
    witnesses: dict[tuple[str, str], Edge] = {}
    present = set()
    for a, b, e in g.cross_wing():
        present.add((e.file, e.target))
        if (e.file, e.target) in CYCLE_OFFENDERS:
            continue
        wing_edges[a].add(b)
        witnesses.setdefault((a, b), e)
    cycle = _cycle(wing_edges)
    assert cycle is None, "import cycle between wings " + " -> ".join(cycle) + " (" + "; ".join(
        f"{witnesses[(a, b)].file}:{witnesses[(a, b)].line} imports {witnesses[(a, b)].target}"
        for a, b in zip(cycle, cycle[1:])) + ")"
    stale = sorted(CYCLE_OFFENDERS - present)
    assert not stale, f"these allowlisted imports are gone; delete their entries: {stale}"


def test_no_private_name_crosses_modules():
    found: dict[tuple[str, str], list[int]] = defaultdict(list)
    for use in graph().private:
        found[(use.file, use.name)].append(use.line)
    _check(found, PRIVATE_OFFENDERS, "private name imported from another module (make the helper public "
                                     "in the module that owns it, with a docstring)")


def test_by_design_exceptions_still_exist():
    present = {(e.file, e.target) for e in graph().edges if e.how == "string"}
    assert set(BY_DESIGN) <= present, f"BY_DESIGN entries no longer found: {sorted(set(BY_DESIGN) - present)}"


# ---- the scanner itself, on a small made-up package -------------------------------------------


def _package(tmp_path: Path, files: dict[str, str]) -> Graph:
    for name, text in files.items():
        path = tmp_path / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return Graph(tmp_path, "pkg")


def test_scanner_sees_deferred_relative_and_string_imports(tmp_path):
    g = _package(tmp_path, {
        "__init__.py": "",
        "core/__init__.py": "",
        "core/base.py": '"""pkg.evaluation.run in a docstring is not an edge."""\n'
                        "def f():\n    from pkg.evaluation import run\n    return run\n",
        "core/names.py": 'LAZY = {"x": "pkg.evaluation.run", "y": "pkg.evaluation.run:g"}\n',
        "evaluation/__init__.py": "",
        "evaluation/run.py": "from ..core import base\nfrom ..core.base import _hidden\nimport pkg.core.names as n\n"
                             "def g():\n    return n._table\n",
    })
    edges = {(e.source, e.target, e.how) for e in g.edges}
    assert ("pkg.core.base", "pkg.evaluation.run", "import") in edges  # inside a function
    assert ("pkg.core.names", "pkg.evaluation.run", "string") in edges  # a table of module names
    assert sum(e.how == "string" for e in g.edges) == 2  # "module" and "module:function"
    assert ("pkg.evaluation.run", "pkg.core.base", "import") in edges  # relative
    assert not any(e.how == "string" and e.source == "pkg.core.base" for e in g.edges)  # docstrings skipped
    assert {u.name for u in g.private} == {"pkg.core.base._hidden", "pkg.core.names._table"}
    wing_edges: dict[str, set[str]] = defaultdict(set)
    for a, b, _ in g.cross_wing():
        wing_edges[a].add(b)
    assert _cycle(wing_edges) in (["core", "evaluation", "core"], ["evaluation", "core", "evaluation"])


def _current() -> dict[str, set[tuple[str, str]]]:
    """Today's violations per rule, in the allowlists' format (for refreshing them after a merge)."""
    g = graph()
    rules = {f"{w.upper().replace('+', '_')}_OFFENDERS": set(_forbidden(g, set(w.split("+"))))
             for w in ("core", "metrics+losses", "evaluation", "io", "aggregate")}
    rules["CLI_OFFENDERS"] = {(e.file, e.target) for e in g.edges
                              if g.wing(e.target) == "cli" and g.wing(e.source) != "cli"}
    rules["PRIVATE_OFFENDERS"] = {(u.file, u.name) for u in g.private}
    return rules


if __name__ == "__main__":
    # Prints the current offenders of each rule (cycles: see test_no_cycle_between_wings). Paste
    # only entries that were already allowed: a new offender is an upward import to fix.
    for rule, found in _current().items():
        print(f"{rule}: {len(found)}")
        for file, target in sorted(found):
            print(f'    ("{file}", "{target}"),')

