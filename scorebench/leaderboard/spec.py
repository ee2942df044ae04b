"""Leaderboard specs: a TOML file read into frozen dataclasses, validated once.

A spec declares where a board's numbers come from and how they are shown::

    name = "classification"                 # output folder under the spec's directory
    title = "Probabilistic classification zoo"
    description = "Out-of-fold probabilities of scikit-learn classifiers."
    script = "data/boards/make_classification.py"   # how the source tables were made
    seed = 0
    ci = 0.95
    n_boot = 1000
    digits = 4

    [[sources]]                              # result tables (paths relative to the spec file)
    name = "predictions"
    path = "../data/boards/classification.parquet"
    # wide systems x tasks tables (external boards) also take: system_column, exclude,
    # complete_only (drop systems with a missing score), higher_is_better,
    # convention (a leaderboard's task units, e.g. "glue": scorebench.aggregate.conventions)
    # a harness's result files: from = "mteb" (see scorebench.io.readers) and the reader's
    # options, e.g. path = "results", from = "mteb", benchmark = "MTEB(eng, v2)"

    [[evaluate]]                             # one table per task: systems x metrics
    source = "predictions"
    kind = "multiclass"
    metrics = ["log_score_multiclass", "brier_score_multiclass", "ece_top_label"]
    rank_by = "log_score_multiclass"         # default: the first metric
    show = true                              # false: scores feed [aggregate] only
    n_boot = 200                             # optional: this block's bootstrap rounds
    params = { ece_top_label = { n_bins = 10 } }   # optional per-metric parameters
    where = { h = 1 }                        # optional row filter (column = value)

    [[compare]]                              # paired tests against the best system
    source = "predictions"
    metric = "log_score_multiclass"
    test = "diebold_mariano"

    [irt]                                    # abilities from right/wrong (argmax == y)
    source = "predictions"
    model = "rasch"

    [aggregate]                              # one ranking across tasks per method
    metrics = ["brier_score_multiclass"]     # from the evaluated scores ...
    source = "glue"                          # ... or a wide systems x tasks table
    methods = ["mean", "borda", "copeland", "kemeny", "win_rate"]

    [incomplete]                             # a benchmark with missing cells (MTEB result files):
    source = "mteb"                          # leaderboard columns + missing-aware rankings
    n_boot = 200                             # stratified task resamples (default: n_boot)

    [items]                                  # a right/wrong matrix (items x systems CSV):
    source = "answers"                       # Wilson accuracy, McNemar-Holm matrix, IRT abilities
    model = "2pl"                            # a_prior = [1.0, 0.5]: normal prior on the slopes

    [arena]                                  # battles (model_a, model_b, winner, style_* columns):
    source = "battles"                       # plain and style-controlled Bradley-Terry ratings,
    features = "v1"                          # Arena ranks, rank delta (style), style coefficients
    anony = true                             # optional filters: anony, language, category
    n_boot = 200                             # battle resamples (default: n_boot); also reg, anchor

    [sampling]                               # repeated attempts (system, item, attempt, correct):
    source = "attempts"                      # pass@k at each k with two-level bootstrap bands
    ks = [1, 2, 4, 8, 16]                    # optional (default: powers of 2 up to the attempts)

    [[plots]]
    type = "reliability"                     # see PLOT_TYPES
    source = "predictions"

The section blocks (``[aggregate]``, ``[incomplete]``, ``[items]``, ``[compression]``,
``[irt]``, ``[arena]``, ``[sampling]``) are section kinds declared in :mod:`scorebench.leaderboard.sections`:
each names its parser and its builder, so a new block is one declaration.

Paths are resolved against the spec's folder. ``requires`` lists paths that must exist
for the board to be built (external data); when one is missing the board is skipped with a
message instead of failing.

Specs are not trusted to read anywhere: every path (sources, ``requires``, models) must lie,
after resolving links, inside the spec's folder, its repository (the folder holding
``pyproject.toml`` or ``.git`` above the spec), a folder that the ``pyproject.toml`` of the
repository *the user runs in* (the current folder or the nearest one above it holding
``pyproject.toml`` or ``.git``) lists under ``[tool.scorebench.leaderboard] trusted-paths``,
or a folder passed as ``--trusted-path`` / ``trusted_paths=``; otherwise the spec is refused
with the same message whether the path exists or not (``--allow-outside`` /
``allow_outside=True`` lifts this). A ``pyproject.toml`` beside the spec grants nothing: a
spec cannot vouch for itself. The same rule holds for every file a reader opens while the
board is built (:func:`scorebench.io.readers._common.confine_reads`): a symbolic link inside a
results folder is checked at its resolved path.

A harness source (``from = "openood"``) may set ``trust_pickle = true`` (the full unpickler,
which runs the pickle's code) only with ``sha256 = "<64 hex digits>"`` pinning the ``.pkl``
file, like a model. A source may run a model over its ``path`` (model inputs) to make a
features table::

    [[sources]]
    name = "features"
    path = "samples.npy"
    model = "extractor.pt"                   # or module:callable / file.py:callable
    sha256 = "<64 hex digits>"               # required: a model is code, so it is pinned
    output = "features"                      # optional (see scorebench run --what)
    system = "real"                          # optional system column
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from scorebench.core.errors import InputError, UnknownMetricError
from scorebench.io.tables import mark_bidi

__all__ = ["BoardSpec", "SourceSpec", "EvaluateSpec", "CompareSpec", "AggregateSpec", "PlotSpec",
           "IRTSpec", "IncompleteSpec", "ItemsSpec", "CompressionSpec", "load_spec", "parse_spec", "PLOT_TYPES", "DERIVED"]

PLOT_TYPES = ("reliability", "rank_intervals", "critical_difference", "irt", "roc", "pr")
DERIVED = ("correct",)  # derived columns a source may ask for


@dataclass(frozen=True)
class SourceSpec:
    """A result table on disk; ``format`` as :func:`scorebench.read_table` (default: suffix)."""

    name: str
    path: Path
    format: str | None = None
    system_column: str | None = None
    exclude: tuple[str, ...] = ()
    complete_only: bool = False
    higher_is_better: bool | None = None
    convention: str | None = None  # wide tables: a leaderboard's task units (scorebench.aggregate.conventions)
    source_format: str | None = None  # ``from``: a harness's result files (scorebench.io.tables.read_results)
    read_options: tuple[tuple[str, Any], ...] = ()  # the reader's options (e.g. benchmark)
    model: str | None = None  # run this model over ``path`` (a TorchScript file or module:callable)
    model_sha256: str | None = None  # its pinned SHA-256 (required with ``model``)
    model_output: str = "features"
    model_system: str | None = None


@dataclass(frozen=True)
class EvaluateSpec:
    """Metrics evaluated on a source, grouped by system (and task when present)."""

    source: str
    metrics: tuple[str, ...]
    kind: str | None = None
    rank_by: str | None = None
    where: tuple[tuple[str, Any], ...] = ()
    title: str | None = None
    options: tuple[tuple[str, Any], ...] = ()
    show: bool = True
    n_boot: int | None = None
    params: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = ()


@dataclass(frozen=True)
class CompareSpec:
    """Paired tests of every system against the best one on ``metric`` (per task)."""

    source: str
    metric: str
    kind: str | None = None
    test: str = "bootstrap"
    horizon: int = 1
    where: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True)
class AggregateSpec:
    """Rankings across tasks, one per method, with bootstrap rank intervals."""

    methods: tuple[str, ...]
    metrics: tuple[str, ...] = ()
    source: str | None = None
    n_boot: int | None = None


@dataclass(frozen=True)
class IRTSpec:
    """IRT abilities from the right/wrong matrix derived from a source (argmax == y)."""

    source: str
    model: str = "rasch"


@dataclass(frozen=True)
class IncompleteSpec:
    """An incomplete benchmark (MTEB-style result files): the leaderboard's own columns next to
    missing-aware rankings (:mod:`scorebench.leaderboard.incomplete`)."""

    source: str
    n_boot: int | None = None
    top: int = 15


@dataclass(frozen=True)
class ItemsSpec:
    """A systems x items right/wrong matrix: accuracy, McNemar significance, IRT abilities
    (:mod:`scorebench.leaderboard.items_board`)."""

    source: str
    layout: str = "items_x_systems"
    model: str = "2pl"
    a_prior: tuple[float, ...] = ()
    max_iter: int = 500


@dataclass(frozen=True)
class CompressionSpec:
    """Benchmark compression curves on held-out systems (:mod:`scorebench.leaderboard.compression`)."""

    sources: tuple[str, ...]
    sizes: tuple[int, ...] = (10, 25, 50, 100)
    model: str = "2pl"
    test_size: float = 0.2
    random: int = 100
    layout: str = "systems_x_items"
    splits: int = 10


@dataclass(frozen=True)
class PlotSpec:
    """One figure; ``source``/``metric``/``task`` as the plot type needs."""

    type: str
    source: str | None = None
    metric: str | None = None
    task: str | None = None
    title: str | None = None


@dataclass(frozen=True)
class BoardSpec:
    """A validated leaderboard spec."""

    path: Path
    name: str
    title: str
    description: str = ""
    script: str | None = None
    seed: int = 0
    ci: float = 0.95
    n_boot: int = 1000
    digits: int = 4
    external: bool = False
    requires: tuple[Path, ...] = ()
    sources: tuple[SourceSpec, ...] = ()
    evaluate: tuple[EvaluateSpec, ...] = ()
    compare: tuple[CompareSpec, ...] = ()
    aggregate: AggregateSpec | None = None
    irt: IRTSpec | None = None
    incomplete: IncompleteSpec | None = None
    items: ItemsSpec | None = None
    compression: CompressionSpec | None = None
    arena: Any = None  # an ArenaSpec (scorebench.leaderboard.arena)
    health: Any = None  # a HealthSpec (scorebench.leaderboard.health_board)
    adaptive: Any = None  # an AdaptiveSpec (scorebench.leaderboard.adaptive_board)
    sampling: Any = None  # a SamplingSpec (scorebench.leaderboard.sampling_board)
    plots: tuple[PlotSpec, ...] = ()
    out_dir: Path = field(default=Path("."))
    # resolved folders the build's readers may open files in; None when --allow-outside
    read_roots: tuple[Path, ...] | None = None

    def source(self, name: str) -> SourceSpec:
        for s in self.sources:
            if s.name == name:
                return s
        raise InputError(f"{self.path}: unknown source {name!r}; declared: {[s.name for s in self.sources]}")

    @property
    def command_path(self) -> str:
        """The spec's path as typed from the project root (the folder holding ``pyproject.toml``
        or ``.git`` above the spec; else the spec's own folder), for the boards' regenerate hint.

        The text depends only on where the spec sits in its project, not on the current folder,
        so the same board gives the same bytes wherever it was built from.
        """
        import os

        spec = Path(os.path.abspath(self.path))
        for root in spec.parents:
            if (root / "pyproject.toml").is_file() or (root / ".git").exists():
                return spec.relative_to(root).as_posix()
        return spec.name

    @property
    def missing_requirements(self) -> tuple[Path, ...]:
        return tuple(p for p in self.requires if not p.exists())


def load_spec(path: str | Path, *, allow_outside: bool = False,
              trusted_paths: tuple[str | os.PathLike, ...] = ()) -> BoardSpec:
    """Read and validate a TOML leaderboard spec.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "b.toml"
    >>> _ = p.write_text('name = "b"\\ntitle = "B"\\n[[sources]]\\nname = "s"\\npath = "s.csv"\\n'
    ...              '[[evaluate]]\\nsource = "s"\\nmetrics = ["brier_score"]\\n')
    >>> spec = load_spec(p)
    >>> spec.name, spec.evaluate[0].metrics, spec.sources[0].path.name
    ('b', ('brier_score',), 's.csv')
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: leaderboard spec not found")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path}: invalid TOML: {exc}") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text") from None
    return parse_spec(data, path, allow_outside=allow_outside, trusted_paths=trusted_paths)


class SpecReader:
    """Pops typed keys from a TOML table, naming the spec and key in every error."""

    def __init__(self, data: Any, where: str) -> None:
        if not isinstance(data, dict):
            raise InputError(f"{where}: expected a table, got {type(data).__name__}")
        self.data = dict(data)
        self.where = where

    def get(self, key: str, types: type | tuple[type, ...], default: Any = None, *, required: bool = False) -> Any:
        if key not in self.data:
            if required:
                raise InputError(f"{self.where}: missing required key {key!r}")
            return default
        value = self.data.pop(key)
        if isinstance(value, bool) and bool not in (types if isinstance(types, tuple) else (types,)):
            raise InputError(f"{self.where}: {key!r} expected {_names(types)}, got a boolean")
        if not isinstance(value, types):
            raise InputError(f"{self.where}: {key!r} expected {_names(types)}, got {type(value).__name__} {value!r}")
        if isinstance(value, str) and "\x00" in value:
            raise InputError(f"{self.where}: {key!r} contains a null character (\\u0000); remove it")
        return value

    def strings(self, key: str, *, required: bool = False) -> tuple[str, ...]:
        value = self.get(key, (list, str), None, required=required)
        if value is None:
            return ()
        value = [value] if isinstance(value, str) else value
        if not value or not all(isinstance(v, str) and v for v in value):
            raise InputError(f"{self.where}: {key!r} expected a non-empty list of non-empty strings")
        if any("\x00" in v for v in value):
            raise InputError(f"{self.where}: {key!r} contains a null character (\\u0000); remove it")
        return tuple(value)

    def table(self, key: str) -> tuple[tuple[str, Any], ...]:
        value = self.get(key, dict, {})
        for k, v in value.items():
            if not isinstance(v, (str, int, float, bool)):
                raise InputError(f"{self.where}: {key}.{k} expected a string, number or boolean")
        return tuple(sorted(value.items()))

    def done(self) -> None:
        if self.data:
            raise InputError(f"{self.where}: unknown key(s) {sorted(self.data)}")


def _names(types: type | tuple[type, ...]) -> str:
    types = types if isinstance(types, tuple) else (types,)
    return " or ".join({"str": "a string", "int": "an integer", "float": "a number", "list": "a list",
                        "dict": "a table", "bool": "a boolean"}.get(t.__name__, t.__name__) for t in types)


def _entries(root: SpecReader, key: str) -> list[Any]:
    value = root.get(key, list, [])
    return list(value)


def parse_spec(data: dict[str, Any], path: Path, *, allow_outside: bool = False,
               trusted_paths: tuple[str | os.PathLike, ...] = ()) -> BoardSpec:
    """Validate a parsed TOML document (see the module docstring for the keys).

    ``allow_outside=True`` lets the spec read paths outside its folder and repository;
    ``trusted_paths`` adds folders it may read (the explicit form of ``trusted-paths``).
    Section blocks (``[aggregate]``, ``[incomplete]``, ``[arena]``, ...) are read by the
    parsers declared in :mod:`scorebench.leaderboard.sections`.
    """
    path = Path(path)
    base = path.parent
    r = SpecReader(data, str(path))
    settings = _settings(r, path)
    sources = _sources(r, base, path)
    evaluate = tuple(_evaluate(e, f"{path}: evaluate[{i}]") for i, e in enumerate(_entries(r, "evaluate")))
    compare = tuple(_compare(c, f"{path}: compare[{i}]") for i, c in enumerate(_entries(r, "compare")))
    blocks = _section_blocks(r, path)
    plots = tuple(_plot(p, f"{path}: plots[{i}]") for i, p in enumerate(_entries(r, "plots")))
    spec = BoardSpec(
        path=path, **settings, external=r.get("external", bool, False),
        requires=tuple((base / p).resolve() for p in r.strings("requires")),
        sources=sources, evaluate=evaluate, compare=compare, plots=plots, out_dir=base / settings["name"], **blocks)
    r.done()
    roots = None if allow_outside else tuple(trusted_roots(path, trusted_paths))
    spec = replace(spec, read_roots=roots)
    _confine_paths(spec)
    _check_spec(spec, blocks)
    return spec


def _sources(r: SpecReader, base: Path, path: Path) -> tuple[SourceSpec, ...]:
    sources = tuple(_source(s, base, f"{path}: sources[{i}]") for i, s in enumerate(_entries(r, "sources")))
    names = [s.name for s in sources]
    dups = sorted({n for n in names if names.count(n) > 1})
    if dups:
        raise InputError(f"{path}: duplicate source name(s) {dups}")
    return sources


def _section_blocks(r: SpecReader, path: Path) -> dict[str, Any]:
    """The spec's section blocks, each read by its declared parser (block name -> frozen block)."""
    from scorebench.leaderboard.sections import section_kinds

    raw = {k: r.get(k.block, dict, None) for k in section_kinds()}
    return {k.block: k.parse(value, f"{path}: {k.block}") for k, value in raw.items() if value is not None}


def _check_spec(spec: BoardSpec, blocks: dict[str, Any]) -> None:
    """Checks across keys: bootstrap rounds, something to show, every named source declared."""
    from scorebench.leaderboard.sections import section_kinds

    for block in spec.evaluate:
        if block.n_boot is not None:
            check_rounds(block.n_boot, f"{spec.path}: evaluate n_boot")
    kinds = [k for k in section_kinds() if k.block in blocks]
    if not (spec.evaluate or any(k.standalone for k in kinds)):
        tables = [f"[{k.block}]" for k in section_kinds() if k.standalone]
        raise InputError(f"{spec.path}: a board needs at least one [[evaluate]] block, "
                         f"{', '.join(tables[:-1])} or {tables[-1]} table")
    refs = [*(e.source for e in spec.evaluate), *(c.source for c in spec.compare),
            *(p.source for p in spec.plots if p.source), *(s for k in kinds for s in k.sources(blocks[k.block]))]
    for ref in refs:
        spec.source(ref)


def _settings(r: SpecReader, path: Path) -> dict[str, Any]:
    """The board-wide keys: name, title, description, script, seed, ci, n_boot, digits."""
    name = r.get("name", str, required=True)
    if (not name or any(c in name for c in "/\\") or name.startswith(".")
            or any(ord(c) < 32 or ord(c) == 127 for c in name)):
        raise InputError(f"{path}: 'name' must be a plain folder name, got {name!r}")
    title = r.get("title", str, name)
    from scorebench.core.stats import check_resampling

    seed, ci, n_boot = r.get("seed", int, 0), r.get("ci", (int, float), 0.95), r.get("n_boot", int, 1000)
    ci, n_boot, seed = check_resampling(ci=ci, n_boot=n_boot, seed=seed, where=f"{path}: ")
    digits = r.get("digits", int, 4)
    if not 0 <= digits <= 12:
        raise InputError(f"{path}: 'digits' must be in 0..12, got {digits}")
    check_rounds(n_boot, f"{path}: n_boot")
    # bidirectional controls made visible, as in every data-derived name (build._mark_bidi)
    return dict(name=name, title=mark_bidi(title), description=mark_bidi(r.get("description", str, "")),
                script=r.get("script", str, None), seed=seed, ci=ci, n_boot=n_boot, digits=digits)


def check_rounds(n_boot: int, where: str) -> None:
    from scorebench.core.validation import check_count

    try:
        check_count(n_boot, "n_boot", itemsize=16, minimum=0)
    except InputError as exc:
        raise InputError(f"{where}: {exc}") from None


def _source(data: Any, base: Path, where: str) -> SourceSpec:
    r = SpecReader(data, where)
    spec = SourceSpec(name=r.get("name", str, required=True), path=(base / r.get("path", str, required=True)),
                      format=r.get("format", str, None), system_column=r.get("system_column", str, None),
                      exclude=r.strings("exclude"), complete_only=r.get("complete_only", bool, False),
                      higher_is_better=r.get("higher_is_better", bool, None),
                      convention=r.get("convention", str, None),
                      source_format=r.get("from", str, None))
    if spec.convention is not None:
        from scorebench.aggregate.conventions import get_convention

        try:
            get_convention(spec.convention)
        except InputError as exc:
            raise InputError(f"{where}: {exc}") from None
    model = r.get("model", str, None)
    if model is not None:
        if spec.source_format is not None:
            raise InputError(f"{where}: 'model' and 'from' exclude each other")
        sha = r.get("sha256", str, None)
        if sha is None:
            raise InputError(f"{where}: a source that runs a model must pin it with sha256 = \"<64 hex digits>\" "
                             "(a model is code: for a file, its SHA-256; for module:callable, the module's file)")
        _check_sha256(sha, where)
        file = _model_file(model)
        spec = replace(spec, model=str(base / model) if file is not None and ":" not in model
                       else (f"{base / file}:{model.rsplit(':', 1)[1]}" if file is not None else model),
                       model_sha256=sha.lower(), model_output=r.get("output", str, "features"),
                       model_system=r.get("system", str, None))
    if spec.source_format is not None:  # the other keys are the reader's options
        spec = replace(spec, read_options=tuple(sorted(_reader_options(r.data, where).items())))
        r.data.clear()
    r.done()
    return spec


def _check_sha256(sha: str, where: str) -> None:
    if len(sha) != 64 or any(c not in "0123456789abcdefABCDEF" for c in sha):
        raise InputError(f"{where}: sha256 expected 64 hexadecimal digits, got {sha!r}")


def _reader_options(data: dict[str, Any], where: str) -> dict[str, Any]:
    """A harness source's reader options; a trusted pickle only with its file's SHA-256 pinned.

    ``trust_pickle`` is parsed strictly (``"no"`` is false); when true, ``sha256`` must pin
    the ``.pkl`` file and is passed to the reader as ``pickle_sha256`` (checked on the bytes
    before anything is unpickled).
    """
    from scorebench.core.validation import parse_bool

    options = dict(data)
    if "pickle_sha256" in options:
        raise InputError(f"{where}: pin a pickle with sha256 = \"<64 hex digits>\" (not pickle_sha256)")
    sha = options.pop("sha256", None)
    if sha is not None:
        if not isinstance(sha, str):
            raise InputError(f"{where}: sha256 expected 64 hexadecimal digits, got {sha!r}")
        _check_sha256(sha, where)
        options["pickle_sha256"] = sha.lower()
    if "trust_pickle" in options:
        options["trust_pickle"] = parse_bool(options["trust_pickle"], f"{where}: trust_pickle")
        if options["trust_pickle"] and sha is None:
            raise InputError(f"{where}: trust_pickle = true runs the pickle's code; a spec may do that only "
                             "when it pins the file with sha256 = \"<64 hex digits>\" (the .pkl file's SHA-256)")
    return options


def _evaluate(data: Any, where: str) -> EvaluateSpec:
    r = SpecReader(data, where)
    metrics = r.strings("metrics", required=True)
    spec = EvaluateSpec(source=r.get("source", str, required=True), metrics=metrics, kind=r.get("kind", str, None),
                        rank_by=r.get("rank_by", str, None), where=r.table("where"), title=r.get("title", str, None),
                        options=r.table("options"), show=r.get("show", bool, True),
                        n_boot=r.get("n_boot", int, None), params=_params(r, metrics))
    r.done()
    names = _resolved_names(spec, where)
    if spec.rank_by is not None and spec.rank_by not in metrics and spec.rank_by not in names:
        raise InputError(f"{where}: rank_by {spec.rank_by!r} is not one of the metrics {list(metrics)}"
                         + (f" (with parameters: {names})" if names != list(metrics) else ""))
    return spec


def _resolved_names(spec: EvaluateSpec, where: str) -> list[str]:
    """The names ``evaluate`` will report for a block's metrics (parameters bound), checked now."""
    from scorebench.core.registry import metric as lookup_metric

    params = dict(spec.params)
    names = []
    for m in spec.metrics:
        try:
            names.append(lookup_metric(m, **dict(params.get(m, ()))).name)
        except UnknownMetricError as exc:
            raise InputError(f"{where}: {exc.args[0]}") from None
        except InputError as exc:
            raise InputError(f"{where}: {exc}") from None
        except TypeError as exc:
            raise InputError(f"{where}: params for {m!r}: {exc}") from None
    return names


def _params(r: SpecReader, metrics: tuple[str, ...]) -> tuple[tuple[str, tuple[tuple[str, Any], ...]], ...]:
    """``params = { kid = { n_subsets = 10 } }``: per-metric parameter overrides."""
    value = r.get("params", dict, {})
    out = []
    for name, table in sorted(value.items()):
        if name not in metrics:
            raise InputError(f"{r.where}: params for {name!r}, which is not one of the metrics {list(metrics)}")
        if not isinstance(table, dict):
            raise InputError(f"{r.where}: params.{name} expected a table of parameter = value")
        out.append((name, tuple(sorted(table.items()))))
    return tuple(out)


def _compare(data: Any, where: str) -> CompareSpec:
    r = SpecReader(data, where)
    spec = CompareSpec(source=r.get("source", str, required=True), metric=r.get("metric", str, required=True),
                       kind=r.get("kind", str, None), test=r.get("test", str, "bootstrap"),
                       horizon=r.get("horizon", int, 1), where=r.table("where"))
    r.done()
    from scorebench.evaluation.comparison import COMPARE_TESTS

    if spec.test not in COMPARE_TESTS:
        raise InputError(f"{where}: test {spec.test!r} is not one of {list(COMPARE_TESTS)}")
    return spec


def _aggregate(data: Any, where: str) -> AggregateSpec:
    r = SpecReader(data, where)
    spec = AggregateSpec(methods=r.strings("methods", required=True), metrics=r.strings("metrics"),
                         source=r.get("source", str, None), n_boot=r.get("n_boot", int, None))
    r.done()
    if spec.n_boot is not None:
        check_rounds(spec.n_boot, f"{where.rsplit(': ', 1)[0]}: aggregate n_boot")
    if bool(spec.metrics) == bool(spec.source):
        raise InputError(f"{where} needs either 'metrics' (of the evaluated scores) or 'source' "
                         "(a wide systems x tasks table), not both")
    return spec


def _irt(data: Any, where: str) -> IRTSpec:
    r = SpecReader(data, where)
    spec = IRTSpec(source=r.get("source", str, required=True), model=r.get("model", str, "rasch"))
    r.done()
    return spec


def _incomplete(data: Any, where: str) -> IncompleteSpec:
    r = SpecReader(data, where)
    spec = IncompleteSpec(source=r.get("source", str, required=True), n_boot=r.get("n_boot", int, None),
                          top=r.get("top", int, 15))
    r.done()
    if (spec.n_boot is not None and spec.n_boot < 0) or spec.top < 1:
        raise InputError(f"{where}: 'n_boot' must be >= 0 and 'top' >= 1")
    return spec


def _check_irt_model(model: str, where: str) -> None:
    """Refuse an IRT model name that :mod:`scorebench.irt` does not fit."""
    from scorebench.irt import MODELS

    if model not in MODELS:
        raise InputError(f"{where}: model {model!r} is not one of {list(MODELS)}")


def _items(data: Any, where: str) -> ItemsSpec:
    r = SpecReader(data, where)
    prior = r.get("a_prior", list, [])
    spec = ItemsSpec(source=r.get("source", str, required=True), layout=r.get("layout", str, "items_x_systems"),
                     model=r.get("model", str, "2pl"), max_iter=r.get("max_iter", int, 500),
                     a_prior=tuple(float(v) for v in prior if isinstance(v, (int, float)) and not isinstance(v, bool)))
    r.done()
    if spec.layout not in ("items_x_systems", "systems_x_items"):
        raise InputError(f"{where}: layout {spec.layout!r} is not 'items_x_systems' or 'systems_x_items'")
    if prior and (len(spec.a_prior) != 2 or len(prior) != 2 or not spec.a_prior[1] > 0):
        raise InputError(f"{where}: a_prior expected [mean, sd] with sd > 0, got {prior!r}")
    if spec.max_iter < 1:
        raise InputError(f"{where}: max_iter must be >= 1")
    _check_irt_model(spec.model, where)
    return spec


def _compression(data: Any, where: str) -> CompressionSpec:
    r = SpecReader(data, where)
    sizes = r.get("sizes", list, [10, 25, 50, 100])
    if not sizes or not all(isinstance(k, int) and not isinstance(k, bool) and k >= 1 for k in sizes):
        raise InputError(f"{where}: 'sizes' expected a non-empty list of positive integers, got {sizes!r}")
    spec = CompressionSpec(sources=r.strings("sources", required=True), sizes=tuple(sorted(set(sizes))),
                           model=r.get("model", str, "2pl"), test_size=float(r.get("test_size", (int, float), 0.2)),
                           random=r.get("random", int, 100), layout=r.get("layout", str, "systems_x_items"),
                           splits=r.get("splits", int, 10))
    r.done()
    if not 0 < spec.test_size < 1 or spec.random < 1 or spec.splits < 1:
        raise InputError(f"{where}: 'test_size' must be in (0, 1), 'random' >= 1 and 'splits' >= 1")
    if spec.layout not in ("items_x_systems", "systems_x_items"):
        raise InputError(f"{where}: layout {spec.layout!r} is not 'items_x_systems' or 'systems_x_items'")
    _check_irt_model(spec.model, where)
    return spec


def _plot(data: Any, where: str) -> PlotSpec:
    r = SpecReader(data, where)
    spec = PlotSpec(type=r.get("type", str, required=True), source=r.get("source", str, None),
                    metric=r.get("metric", str, None), task=r.get("task", str, None), title=r.get("title", str, None))
    r.done()
    if spec.type not in PLOT_TYPES:
        raise InputError(f"{where}: plot type {spec.type!r} is not one of {list(PLOT_TYPES)}")
    if spec.type in ("reliability", "roc", "pr") and spec.source is None:
        raise InputError(f"{where}: a {spec.type!r} plot needs 'source'")
    return spec


def _model_file(model: str) -> Path | None:
    """The file a model spec runs (``x.pt``, ``x.py:build``), or None for ``package.module:callable``."""
    if ":" not in model:
        return Path(model)
    target = model.rsplit(":", 1)[0]
    return Path(target) if target.endswith(".py") else None


def _project_root(path: Path) -> Path | None:
    for root in Path(os.path.abspath(path)).parents:
        if (root / "pyproject.toml").is_file() or (root / ".git").exists():
            return root
    return None


def trusted_roots(spec_path: Path, trusted_paths: tuple[str | os.PathLike, ...] = (),
                  cwd: Path | None = None) -> list[Path]:
    """Folders a spec may read (resolved): its folder, its repository, the working repository's
    ``trusted-paths`` and the explicit ``trusted_paths``.

    ``trusted-paths`` are read only from the ``pyproject.toml`` of the repository the user
    runs in (``cwd`` or the nearest folder above it holding ``pyproject.toml`` or ``.git``),
    never from one beside the spec (not even when that folder is the current one): a
    downloaded spec folder that ships its own ``pyproject.toml`` with ``trusted-paths = ["/"]``
    gains nothing by it.
    """
    spec_path = Path(spec_path)
    roots = [Path(os.path.realpath(spec_path.parent))]
    root = _project_root(spec_path)
    if root is not None:
        roots.append(Path(os.path.realpath(root)))
    here = Path(os.path.abspath(cwd if cwd is not None else Path.cwd()))
    work = _project_root(here / "_")  # the current folder first, then its parents
    if work is not None and Path(os.path.realpath(work)) != roots[0]:  # never a pyproject.toml beside the spec
        try:
            config = tomllib.loads((work / "pyproject.toml").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            config = {}
        extra = config.get("tool", {}).get("scorebench", {}).get("leaderboard", {}).get("trusted-paths", [])
        if isinstance(extra, list):
            roots += [Path(os.path.realpath(work / str(p))) for p in extra if isinstance(p, str) and "\x00" not in p]
    for p in trusted_paths:
        if "\x00" in str(p):
            raise InputError(f"trusted path {str(p)!r} contains a null character")
        roots.append(Path(os.path.realpath(p)))
    return roots


def _confine_paths(spec: BoardSpec) -> None:
    """Refuse paths outside the trusted folders, without revealing whether they exist."""
    if spec.read_roots is None:
        return
    roots = spec.read_roots
    named = [(f"sources[{s.name}].path", s.path) for s in spec.sources]
    named += [(f"sources[{s.name}].model", _model_file(s.model)) for s in spec.sources
              if s.model and _model_file(s.model) is not None]
    named += [("requires", p) for p in spec.requires]
    for key, p in named:
        real = Path(os.path.realpath(p))
        if not any(real == root or root in real.parents for root in roots):
            raise InputError(f"{spec.path}: {key} {str(p)!r} is outside the spec's folder and its repository; "
                             "specs may only read there (pass --allow-outside to read it anyway, or list the "
                             "folder under [tool.scorebench.leaderboard] trusted-paths in the pyproject.toml "
                             "of the repository you run in, or pass --trusted-path)")
