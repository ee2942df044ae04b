"""Catalogue pages generated from scorebench's registries when the site builds.

Nothing here lists a metric, kind, method, reader, board section or command by hand: each
page is made from the registry that the code itself reads (``scorebench.core.registry``,
``scorebench.core.tables``, ``scorebench.aggregate``, ``scorebench.io.readers``,
``scorebench.leaderboard.spec``/``sections`` and the click group of ``scorebench.cli``), so a
metric registered on another branch appears once the branches merge. ``pages()`` returns
``{relative path: reStructuredText}``; the Sphinx hook writes them under ``docs/generated/``
and ``tests/project/test_docs.py`` checks that every registered name has its entry.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import math
import re
import typing
from collections import defaultdict
from pathlib import Path
from typing import Any

import click

GENERATED = "generated"


def anchor(prefix: str, name: str) -> str:
    """The label of one catalogue entry (``metric-ndcg-k`` for ``ndcg@k``)."""
    return f"{prefix}-" + re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def _title(text: str, char: str = "=") -> str:
    return f"{text}\n{char * len(text)}\n"


def _lit(value: Any) -> str:
    return "``" + str(value).replace("`", "'") + "``" if str(value) else "(none)"


def _bound(x: float) -> str:
    if isinstance(x, float) and math.isinf(x):
        return "∞" if x > 0 else "-∞"
    return f"{x:g}" if isinstance(x, float) else str(x)


def _first_line(obj: Any) -> str:
    doc = inspect.getdoc(obj) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def _field_list(rows: list[tuple[str, str]]) -> str:
    return "".join(f":{k}: {v}\n" for k, v in rows) + "\n"


# --- metrics -----------------------------------------------------------------------------

def _direction(m: Any) -> str:
    return {True: "higher is better", False: "lower is better"}.get(m.higher_is_better, "no order (signed)")


def _interval(m: Any) -> tuple[str, str]:
    from scorebench.core import registry

    rule = m.interval_method
    if m.proportion:
        rule = f"Wilson score interval for a proportion (bootstrap rule otherwise: {rule})"
    covers = getattr(m, "covers", None)
    what = getattr(m, "interval_covers", None) or covers
    text = getattr(registry, "COVERS_TEXT", {}).get(what, what or "")
    if covers is None and what:
        text += " (derived: " + ("mean of per-row contributions" if m.per_row else "set-level metric") + ")"
    return rule, text


def _param(option: Any) -> str:
    """A declared parameter as ``name`` (type {choices}, default): doc."""
    from scorebench.core.table_schema import OPTION_TYPES

    choices = " {" + ", ".join(map(str, option.choices)) + "}" if option.choices else ""
    default = "" if option.default is None else f", default ``{option.default!r}``"
    doc = f": {option.doc}" if option.doc else ""
    return f"``{option.name}`` ({OPTION_TYPES[option.type]}{choices}{default}){doc}"


def _tested(m: Any) -> str:
    """What the test suite compares the metric with, and at which tolerance."""
    return "; ".join(ref if tol is None else f"{ref}, tolerance {tol:g}" for ref, tol in m.tested_against)


def metric_entry(m: Any) -> str:
    rule, covers = _interval(m)
    params = "; ".join(_param(o) for o in m.options) or "none"
    fn = m.fn
    target = f"{fn.__module__}.{fn.__qualname__}"
    rows = [
        ("Family", m.family),
        ("Also spelled", ", ".join(f"``{a}``" for a in m.aliases) or "-"),
        ("Table kind", f":ref:`{m.kind} <{anchor('kind', m.kind)}>`"),
        ("Inputs", ", ".join(f"``{i}``" for i in m.inputs) or "the kind's arrays"),
        ("Direction", _direction(m)),
        ("Bounds", f"[{_bound(m.bounds[0])}, {_bound(m.bounds[1])}]"),
        ("Propriety", {"strict": "strictly proper", "proper": "proper"}.get(m.proper, "not a scoring rule")),
        ("Value", "mean of per-row contributions" if m.per_row else "set-level (one number per table)"),
        ("Parameters", params + (f" (``@{m.at_param}`` in the name)" if m.at_param else "")),
        ("Interval rule", rule),
        ("Interval covers", covers),
        ("Needs torch", "yes" if m.needs_torch else "no"),
        ("Citation", m.citation or "see the docstring"),
        ("Tested against", _tested(m)),
        ("Python", f":func:`{target}`"),
        ("Command line", f"``scorebench evaluate TABLE -m {m.base_name.replace('@' + (m.at_param or ''), '@10') if m.at_param else m.name}``"),
    ]
    out = [f".. _{anchor('metric', m.base_name)}:\n\n", _title(m.base_name, "-"), "\n",
           summary(m.fn) + "\n\n", _field_list(rows)]
    if _resolves(fn):
        out.append(f".. autofunction:: {target}\n   :no-index:\n\n")
    else:  # a lazy wrapper (torch losses): its docstring as it is
        doc = inspect.getdoc(fn) or ""
        out.append(".. code-block:: text\n\n" + "".join(f"   {line}\n" for line in doc.splitlines()) + "\n")
    return "".join(out)


def _resolves(fn: Any) -> bool:
    """Whether autodoc can import ``fn`` by its module and qualified name."""
    try:
        obj: Any = importlib.import_module(fn.__module__)
        for part in fn.__qualname__.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        return False
    return obj is fn


def summary(obj: Any) -> str:
    """The docstring's first paragraph, on one line (math roles kept whole)."""
    doc = (inspect.getdoc(obj) or "").strip()
    return " ".join(doc.split("\n\n", 1)[0].split()) if doc else ""


def metrics_pages() -> dict[str, str]:
    from scorebench.core.registry import all_metrics

    by_family: dict[str, list[Any]] = defaultdict(list)
    for m in all_metrics():
        by_family[m.family].append(m)
    pages = {}
    index = [_title("Metric catalogue"), "\n",
             f"{sum(map(len, by_family.values()))} metrics registered in :mod:`scorebench.core.registry`, "
             "generated from their registry records and docstrings when this site was built. "
             "``scorebench metrics`` prints the same list.\n\n",
             ".. toctree::\n   :maxdepth: 1\n\n"]
    for family in sorted(by_family):
        index.append(f"   metrics/{family}\n")
        ms = sorted(by_family[family], key=lambda m: m.base_name)
        body = [_title(f"{family} ({len(ms)} metrics)"), "\n"]
        body.append(".. list-table::\n   :header-rows: 1\n\n"
                    "   * - metric\n     - kind\n     - direction\n     - summary\n")
        for m in ms:
            body.append(f"   * - :ref:`{m.base_name} <{anchor('metric', m.base_name)}>`\n     - {m.kind}\n"
                        f"     - {_direction(m)}\n     - {summary(m.fn) or '-'}\n")
        body.append("\n")
        body += [metric_entry(m) for m in ms]
        pages[f"metrics/{family}.rst"] = "".join(body)
    pages["metrics.rst"] = "".join(index)
    return pages


# --- table kinds -------------------------------------------------------------------------

def kinds_page() -> str:
    from scorebench.core.registry import all_metrics
    from scorebench.core.tables import all_kinds

    users: dict[str, list[str]] = defaultdict(list)
    for m in all_metrics():
        users[m.kind].append(m.base_name)
    out = [_title("Table kinds"), "\n",
           "Every table kind declared with :func:`scorebench.core.tables.register_kind` (its columns and "
           "options are the declaration; the command line's flags and validation come from the same "
           "record). ``scorebench kinds`` prints the same.\n\n"]
    for k in sorted(all_kinds(), key=lambda k: k.name):
        rows = [("Stage", k.stage), ("Columns", k.column_text or "-")]
        if k.options:
            rows.append(("Options", "; ".join(f"``{o.name}``" + (f": {o.doc}" if getattr(o, "doc", "") else "")
                                              for o in k.options)))
        if users.get(k.name):
            rows.append(("Metrics", ", ".join(f":ref:`{n} <{anchor('metric', n)}>`" for n in sorted(users[k.name]))))
        out += [f".. _{anchor('kind', k.name)}:\n\n", _title(k.name, "-"), "\n", (k.description or "") + "\n\n",
                _field_list(rows)]
    return "".join(out)


# --- aggregation methods -----------------------------------------------------------------

def methods_page() -> str:
    from scorebench.aggregate.registry import all_methods

    out = [_title("Aggregation methods"), "\n",
           "Every method registered with :func:`scorebench.aggregate.registry.register_method`; "
           "``scorebench aggregate --method NAME`` and :func:`scorebench.aggregate` run them.\n\n"]
    for m in all_methods():
        params = ", ".join(f"``{k}={v!r}``" for k, v in m.params.items()) or "none"
        rows = [("Family", m.family or "-"), ("Accepts", ", ".join(m.accepts)), ("Missing scores", m.missing or "-"),
                ("Parameters", params), ("Fast bootstrap", "yes" if m.bootstrap is not None else "no"),
                ("Model-based intervals", "yes (default)" if m.intervals is not None else "no"),
                ("Citation", m.citation or "-"), ("Python", f":func:`{m.fn.__module__}.{m.fn.__qualname__}`")]
        out += [f".. _{anchor('method', m.name)}:\n\n", _title(m.name, "-"), "\n", (m.description or "") + "\n\n",
                _field_list(rows)]
    return "".join(out)


# --- readers -----------------------------------------------------------------------------

def readers_page() -> str:
    from scorebench.io.formats import all_formats

    out = [_title("File formats"), "\n",
           "Every format of the format registry (:mod:`scorebench.io.formats`): the harness formats "
           ":func:`scorebench.read_results` reads (``scorebench import`` on the command line; "
           "``format=\"auto\"`` detects them), the table and TREC files :func:`scorebench.io.tables.read_table` "
           "reads, and what scorebench writes.\n\n"]
    for record in all_formats():
        rows = [("Family", record.family), ("Files", record.files), ("Yields", record.yields or "- (written only)"),
                ("Detected", "yes" if record.auto else "no: name it")]
        if record.readable:
            reader = record.function("reader")
            bound = dict(record.bound)
            options = [f"``{p.name}={p.default!r}``" for p in inspect.signature(reader).parameters.values()
                       if p.kind is p.KEYWORD_ONLY and p.name not in bound]
            rows += [("Reader", f":func:`{reader.__module__}.{reader.__qualname__}`"),
                     ("Options", ", ".join(options) or "none"),
                     ("Python", f"``scorebench.io.formats.read(path, format={record.name!r})``")]
        if record.writable:
            writer = record.function("writer")
            rows.append(("Writer", f":func:`{writer.__module__}.{writer.__qualname__}`"))
        doc = inspect.getdoc(importlib.import_module(record.module)) if record.family == "harness" else ""
        out += [f".. _{anchor('reader', record.name)}:\n\n", _title(record.name, "-"), "\n", record.doc + "\n\n",
                _field_list(rows)]
        if doc:
            out.append(".. code-block:: text\n\n" + "".join(f"   {line}\n" for line in doc.splitlines()) + "\n")
    return "".join(out)


# --- board spec ----------------------------------------------------------------------------

def _dataclass_rows(cls: type) -> str:
    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # forward references the docs cannot resolve: fall back to the text
        hints = {}
    lines = [".. list-table::\n   :header-rows: 1\n\n   * - field\n     - type\n     - default\n"]
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            default = _lit(repr(f.default))
        elif f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
            default = _lit(repr(f.default_factory()))  # type: ignore[misc]
        else:
            default = "required"
        kind = hints.get(f.name, f.type)
        kind = kind if isinstance(kind, str) else getattr(kind, "__name__", None) or str(kind)
        lines.append(f"   * - ``{f.name}``\n     - {_lit(str(kind).replace('typing.', ''))}\n     - {default}\n")
    return "".join(lines) + "\n"


def _block_class(kind: Any) -> type | None:
    module, _, name = kind.parse_path.partition(":")
    fn = getattr(importlib.import_module(module), name)
    try:
        ret = typing.get_type_hints(fn).get("return")
    except Exception:
        ret = None
    if ret is None:
        from scorebench.leaderboard.spec import BoardSpec

        for f in dataclasses.fields(BoardSpec):
            if f.name == kind.block and not isinstance(f.type, str):
                ret = f.type
    args = [a for a in typing.get_args(ret) if dataclasses.is_dataclass(a)] if ret is not None else []
    if dataclasses.is_dataclass(ret):
        return ret
    return args[0] if args else None


def board_spec_page() -> str:
    from scorebench.leaderboard import spec
    from scorebench.leaderboard.sections import section_kinds

    out = [_title("Board spec keys"), "\n",
           "A board is a TOML file read by :func:`scorebench.leaderboard.spec.load_spec` into frozen "
           "dataclasses; the tables below are generated from those dataclasses and from the section "
           "kinds declared in :mod:`scorebench.leaderboard.sections`. TOML keys are the field names, "
           "except ``from`` (``source_format``) and ``sha256`` (``model_sha256``) of a source, and "
           "``output``/``system`` (``model_output``/``model_system``).\n\n",
           "The format, as the spec module documents it:\n\n.. code-block:: toml\n\n"]
    doc = inspect.getdoc(spec) or ""
    example = doc.split("::", 1)[1].split("\n\n", 1)[1] if "::" in doc else ""
    example = example.split("\n\nThe section blocks", 1)[0]
    out.append("".join(f"{line}\n" for line in example.splitlines()) + "\n")
    out += [f".. _{anchor('spec', 'board')}:\n\n", _title("Top level", "-"), "\n", _dataclass_rows(spec.BoardSpec)]
    for name in ("SourceSpec", "EvaluateSpec", "CompareSpec", "PlotSpec"):
        cls = getattr(spec, name)
        header = f"[[{name[:-4].lower()}s]]" if name in ("SourceSpec", "PlotSpec") else f"[[{name[:-4].lower()}]]"
        out += [f".. _{anchor('spec', name)}:\n\n", _title(header, "-"), "\n",
                (_first_line(cls) or "") + "\n\n", _dataclass_rows(cls)]
    out += [_title("Section blocks", "-"), "\n",
            "Declared with :func:`scorebench.leaderboard.sections.register_section`, in the order their "
            "sections appear on a board.\n\n"]
    for kind in section_kinds():
        cls = _block_class(kind)
        out += [f".. _{anchor('section', kind.block)}:\n\n", _title(f"[{kind.block}]", "~"), "\n",
                _field_list([("Parser", f"``{kind.parse_path}``"), ("Builder", f"``{kind.build_path}``"),
                             ("Standalone", "yes" if kind.standalone else "no (needs another section)")])]
        if cls is not None:
            out += [(_first_line(cls) or "") + "\n\n", _dataclass_rows(cls)]
    return "".join(out)


# --- command line --------------------------------------------------------------------------

def _command_text(cmd: click.Command, path: str) -> list[str]:
    with click.Context(cmd, info_name=path.split()[-1]) as ctx:
        text = cmd.get_help(ctx)
    text = text.replace("Usage: " + path.split()[-1], "Usage: " + path, 1)
    out = [f".. _{anchor('cli', path)}:\n\n", _title(path, "-"), "\n", ".. code-block:: text\n\n",
           "".join(f"   {line}\n" for line in text.splitlines()), "\n"]
    if isinstance(cmd, click.Group):
        for name in sorted(cmd.list_commands(ctx)):
            out += _command_text(cmd.get_command(ctx, name), f"{path} {name}")
    return out


def cli_page() -> str:
    from scorebench.cli import cli

    out = [_title("Command line"), "\n", "Generated from the click group in :mod:`scorebench.cli` "
           "(``scorebench COMMAND --help`` prints the same).\n\n"]
    with click.Context(cli, info_name="scorebench") as ctx:
        for name in sorted(cli.list_commands(ctx)):
            out += _command_text(cli.get_command(ctx, name), f"scorebench {name}")
    return "".join(out)


# --- board gallery -------------------------------------------------------------------------

def gallery_page(root: Path) -> str:
    out = [_title("Board gallery"), "\n",
           "The committed boards in ``leaderboards/``, each a self-contained page (``index.html``) "
           "regenerated by ``scorebench leaderboard build``. The pages are copied into this site.\n\n"]
    for spec_file in sorted((root / "leaderboards").glob("*.toml")):
        import tomllib

        data = tomllib.loads(spec_file.read_text(encoding="utf-8"))
        name = data.get("name", spec_file.stem)
        page = root / "leaderboards" / name / "index.html"
        out += [_title(data.get("title", name), "-"), "\n", (data.get("description", "") or "").strip() + "\n\n"]
        if page.is_file():
            out.append(f"`Open the board <../_static/boards/{name}/index.html>`__ · "
                       f"spec ``leaderboards/{spec_file.name}``\n\n")
        else:
            out.append(f"(not built here: ``scorebench leaderboard build leaderboards/{spec_file.name}``)\n\n")
    return "".join(out)


def pages(root: Path) -> dict[str, str]:
    """Every generated page, ``{path relative to docs/generated: text}``."""
    out = metrics_pages()
    out.update(api_pages())
    out["kinds.rst"] = kinds_page()
    out["methods.rst"] = methods_page()
    out["readers.rst"] = readers_page()
    out["board_spec.rst"] = board_spec_page()
    out["cli.rst"] = cli_page()
    out["gallery.rst"] = gallery_page(root)
    return out


def write_pages(docs: Path) -> None:
    """Write :func:`pages` under ``docs/generated`` (only files whose text changed) and remove the
    pages a previous build wrote that no longer exist (a moved or renamed module would otherwise
    leave a page that fails to import)."""
    target = docs / GENERATED
    wanted = pages(docs.parent)
    for rel, text in wanted.items():
        path = target / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
    if target.is_dir():
        for path in target.rglob("*.rst"):
            if path.relative_to(target).as_posix() not in wanted:
                path.unlink()


# --- API reference -------------------------------------------------------------------------

def public_modules() -> list[str]:
    """Every importable public module of the package (no ``_private`` part, not the CLI)."""
    import pkgutil

    import scorebench

    names = ["scorebench"]
    for info in pkgutil.walk_packages(scorebench.__path__, "scorebench."):
        parts = info.name.split(".")
        if any(p.startswith("_") for p in parts) or parts[1] == "cli":
            continue
        names.append(info.name)
    return sorted(names)


def public_objects(module_name: str) -> list[tuple[str, str]]:
    """``(name, "function"|"class"|"data")`` for each name in the module's ``__all__`` that the
    module itself defines (re-exports are documented where they are defined)."""
    try:
        module = importlib.import_module(module_name)
    except ImportError:  # an optional dependency (torch) is missing
        return []
    out = []
    for name in getattr(module, "__all__", ()):
        obj = getattr(module, name, None)
        if obj is None or inspect.ismodule(obj):
            continue
        if getattr(obj, "__module__", None) != module_name:
            continue
        if inspect.isclass(obj):
            out.append((name, "class"))
        elif callable(obj):
            out.append((name, "function"))
    return out


def api_pages() -> dict[str, str]:
    index = [_title("API reference"), "\n",
             "Every public module of the package and every function and class in its ``__all__`` "
             "(generated from the modules when the site is built; the docstrings are numpydoc).\n\n",
             ".. toctree::\n   :maxdepth: 1\n\n"]
    pages = {}
    for module_name in public_modules():
        objects = public_objects(module_name)
        if not objects:
            continue
        index.append(f"   api/{module_name}\n")
        body = [_title(module_name), "\n", f".. automodule:: {module_name}\n   :no-members:\n\n"]
        for name, kind in objects:
            members = "   :members:\n" if kind == "class" else ""
            body.append(f".. auto{kind}:: {module_name}.{name}\n{members}\n")
        pages[f"api/{module_name}.rst"] = "".join(body)
    pages["api.rst"] = "".join(index)
    return pages
