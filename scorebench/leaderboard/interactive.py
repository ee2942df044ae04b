"""The interactive layer of a board's HTML page: data attributes, tooltips, one inline script.

The static page stays complete without JavaScript; this module only adds

* ``data-v`` on every cell whose text starts with a number (the sort key, so ``"10 (2–12)"``
  sorts after ``"9 (1–11)"`` and intervals do not disturb the order);
* ``title`` tooltips on metric columns from the metric registry (direction, bounds,
  citation) and on aggregation-method columns from the method registry;
* ``data-group`` (columns that are shown or hidden together) and ``data-filter`` (``cat``:
  a select of the column's values; ``num``: a "at least" box) on header cells;
* the drill-down data of every system (each of its values with interval and rank) as a JSON
  block, ``<`` ``>`` ``&`` and the two JavaScript line separators written as ``\\u`` escapes
  escapes so no text can close the block;
* the script ``assets/board.js`` inline, allowed by the page's Content-Security-Policy through
  its SHA-256 hash (no ``unsafe-inline`` for scripts, nothing loaded from anywhere).

Same board, same bytes: nothing depends on the time or the machine.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import math
import re
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from scorebench.io.tables import mark_bidi

if TYPE_CHECKING:  # pragma: no cover
    from scorebench.leaderboard.board import Board, Section

__all__ = ["script", "script_hash", "content_security_policy", "sort_value", "header_attrs", "cell_attrs",
           "data_block", "script_block", "head_block", "column_tooltip", "CSS", "NAME_COLUMNS"]

NAME_COLUMNS = ("system", "method", "model")
PAGE_ROWS = 100  # rows shown before "show all"; must match PAGE in board.js

CSS = """
th.sb-sortable{cursor:pointer}th[aria-sort=ascending]::after{content:" ▲"}th[aria-sort=descending]::after{content:" ▼"}
.sb-toolbar{font-size:.85em;margin:.4em 0;display:flex;flex-wrap:wrap;gap:.4em;align-items:center}
.sb-groups label{margin-right:.5em}td.sb-drill{cursor:pointer;text-decoration:underline dotted}
#sb-drill{position:fixed;top:5%;right:2%;max-width:48%;max-height:88%;overflow:auto;background:#fff;
border:1px solid #888;box-shadow:0 4px 16px rgba(0,0,0,.25);padding:.5em 1em;z-index:10}
#sb-drill .sb-close{float:right}
td.sb-up{background:#d4edda;color:#14532d}td.sb-down{background:#f8d7da;color:#7f1d1d}td.sb-same{color:#666}
.sb-scroll{overflow-x:auto;max-width:100%}.sb-wide th:first-child,.sb-wide td:first-child,.sb-frozen{position:sticky;
left:0;z-index:1;background:#fff;box-shadow:1px 0 0 #d0d7de}.sb-wide th:first-child,.sb-wide th.sb-frozen{background:#f6f8fa}
""".strip() + (f"\n.sb-js section>table>tbody>tr:nth-child(n+{PAGE_ROWS + 1}),"
               f".sb-js section>.sb-scroll>table>tbody>tr:nth-child(n+{PAGE_ROWS + 1}){{display:none}}")

_NUMBER = re.compile(r"^\s*(<\s*)?([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?inf)")


@lru_cache(maxsize=None)
def script() -> str:
    """The page script (``assets/board.js``), as shipped with the package."""
    return resources.files(__package__).joinpath("assets", "board.js").read_text(encoding="utf-8")


# Runs in <head>, before the table is parsed: with it the rows past the first page are not
# laid out at all (see CSS); without JavaScript the class never appears and every row shows.
HEAD_SCRIPT = 'document.documentElement.classList.add("sb-js");'


def script_hash(text: str | None = None) -> str:
    """The CSP source expression of an inline script (default: the page script): ``'sha256-<base64>'``.

    Examples
    --------
    >>> script_hash().startswith("'sha256-") and script_hash().endswith("='")
    True
    >>> script_hash("")  # the well-known digest of the empty string
    "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='"
    """
    text = script() if text is None else text
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def content_security_policy() -> str:
    """The page's CSP: nothing from the network, images as data URLs, the one hashed script.

    Examples
    --------
    >>> content_security_policy().split(";")[0]
    "default-src 'none'"
    """
    return (f"default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
            f"script-src {script_hash(HEAD_SCRIPT)} {script_hash()}")


def sort_value(text: str) -> str | None:
    """The numeric sort key of a cell (its leading number), or None for a text cell.

    ``"< 1e-4"`` sorts just below 1e-4; ``"—"`` (missing) has no key and sorts last.

    Examples
    --------
    >>> sort_value("0.8123 [0.80, 0.82]"), sort_value("10 (2–12)"), sort_value("< 1e-4"), sort_value("bert")
    ('0.8123', '10', '9.99999999e-05', None)
    """
    match = _NUMBER.match(str(text))
    if match is None:
        return None
    value = float(match.group(2))
    if match.group(1):
        value = value * (1 - 1e-9) if value > 0 else value - 1e-12
    if math.isnan(value):
        return None
    return match.group(2) if not match.group(1) else f"{value:.10g}"


#: Cell classes by the mark a cell starts with (significance matrices): coloured by CSS.
MARK_CLASSES = {"▲": "sb-up", "▼": "sb-down", "=": "sb-same"}


def cell_attrs(text: str) -> str:
    """Attributes of a body cell (the sort key; a class for a ▲ / ▼ / = mark), already escaped.

    Examples
    --------
    >>> cell_attrs("▲ 0.0123"), cell_attrs("0.5")
    (' class="sb-up"', ' data-v="0.5"')
    """
    value = sort_value(text)
    mark = MARK_CLASSES.get(str(text).strip()[:1])
    out = f' class="{mark}"' if mark else ""
    return out + ("" if value is None else f' data-v="{html.escape(value, quote=True)}"')


@lru_cache(maxsize=4096)
def column_tooltip(column: str) -> str | None:
    """Registry description of a column: a metric (``name ↑``) or an aggregation method (``name score``).

    Examples
    --------
    >>> "lower is better" in column_tooltip("brier_score ↓")
    True
    >>> "de Borda" in column_tooltip("borda rank")
    True
    >>> column_tooltip("system") is None
    True
    """
    from scorebench.aggregate import get_method
    from scorebench.core.registry import metric as lookup_metric

    name = re.sub(r"\s*[↑↓]$", "", str(column)).strip()
    record = None
    if name != str(column).strip():  # only metric columns carry the direction arrow ("p" is no metric here)
        try:
            record = lookup_metric(name)
        except Exception:  # an external board's column that happens to end in an arrow
            record = None
    if record is not None:
        doc = (record.fn.__doc__ or "").strip().splitlines()
        parts = [doc[0].strip()] if doc and doc[0].strip() else []
        hib = record.higher_is_better
        if hib is not None:
            parts.append("higher is better" if hib else "lower is better")
        lo, hi = record.bounds
        parts.append(f"range [{lo:g}, {hi:g}]")
        if record.citation:
            parts.append(record.citation)
        return f"{record.name}: " + "; ".join(parts)
    method = re.sub(r"\s+(score|rank)$", "", name)
    if method == name:
        return None
    try:
        m = get_method(method)
    except Exception:
        return None
    what = "the method's score (higher is better)" if name.endswith("score") else "rank (1 = best)"
    return f"{method} {what}; {m.citation}" + (f"; missing scores: {m.missing}" if m.missing else "")


def _group(section: Section, column: str) -> str | None:
    groups = dict(getattr(section, "groups", ()) or ())
    if groups:
        return groups.get(column)
    # by default only metric columns (arrowed) and a method's score/rank pair are toggled
    if re.search(r"\s[↑↓]$", column):
        return column
    match = re.match(r"^(.*)\s+(score|rank)$", column)
    return match.group(1) if match else None


def _filter_kind(section: Section, index: int, column: str) -> str | None:
    declared = dict(getattr(section, "filters", ()) or ())
    if column in declared:
        return declared[column]
    if column in NAME_COLUMNS or declared:
        return None
    values = {row[index] for row in section.rows}
    if 2 <= len(values) <= 30 and all(sort_value(v) is None for v in values) and len(values) < len(section.rows):
        return "cat"
    return None


def header_attrs(section: Section, index: int, column: str) -> str:
    """Attributes of a header cell: tooltip, column group, filter kind (escaped)."""
    out = ""
    tip = column_tooltip(column)
    if tip:
        out += f' title="{html.escape(tip, quote=True)}"'
    group = _group(section, column)
    if group:
        out += f' data-group="{html.escape(group, quote=True)}"'
        if group in (getattr(section, "collapsed", ()) or ()):
            out += ' data-collapsed="1"'
    kind = _filter_kind(section, index, column)
    if kind:
        out += f' data-filter="{kind}"'
    return out


def _json_value(value: Any, digits: int = 6) -> Any:
    """A JSON scalar for the page: floats to ``digits`` significant digits (the page shows 4;
    ``board.json`` keeps 10), NaN/NA/inf -> None."""
    if value is None or isinstance(value, str):
        return value
    try:
        if value != value:  # NaN; pd.NA raises
            return None
    except (TypeError, ValueError):
        return None
    if isinstance(value, bool):
        return value
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    if not math.isfinite(number):
        return None
    if number == int(number) and abs(number) < 2**53:
        return int(number)
    return float(f"{number:.{digits}g}")


def drill_data(board: Board) -> dict[str, Any]:
    """Every value of every system, compactly: ``{"sections": [[key, title], ...], "labels": [...],
    "systems": {name: [[section, task, metric, value, lo, hi, rank, rank_lo, rank_hi], ...]}}``.

    ``section`` indexes ``sections``; ``task`` and ``metric`` index ``labels`` (None: no task);
    trailing absent fields are dropped, so a record may stop after ``hi``.

    Examples
    --------
    >>> import pandas as pd
    >>> from scorebench.leaderboard.build import Board, Section
    >>> from scorebench.leaderboard.spec import BoardSpec
    >>> data = pd.DataFrame({"system": ["a"], "task": ["t"], "metric": ["m"], "value": [0.123456789],
    ...                      "ci_low": [0.1], "ci_high": [0.2]})
    >>> s = Section("k", "K", "", ("system",), (("a",),), data)
    >>> drill_data(Board(BoardSpec(path="x.toml", name="x", title="X"), (s,), ()))
    {'sections': [['k', 'K']], 'labels': ['t', 'm'], 'systems': {'a': [[0, 0, 1, 0.123457, 0.1, 0.2]]}}
    """
    systems: dict[str, list[list[Any]]] = {}
    sections: list[list[str]] = []
    labels: dict[str, int] = {}

    def label(value: Any) -> int | None:
        if value is None or (isinstance(value, float) and value != value):
            return None
        return labels.setdefault(str(value), len(labels))

    numbers = ("value", "ci_low", "ci_high", "rank", "rank_low", "rank_high")
    for section in board.sections:
        data = section.data
        if data is None or data.empty or "system" not in data.columns:
            continue
        index = len(sections)
        sections.append([section.key, section.title])
        none = [None] * len(data)
        tasks = data["task"].tolist() if "task" in data.columns else none
        metrics = data["metric"].tolist() if "metric" in data.columns else none
        cols = [data[c].tolist() if c in data.columns else none for c in numbers]
        for i, system in enumerate(data["system"].tolist()):
            if system is None or (isinstance(system, float) and system != system):
                continue
            record = [index, label(tasks[i]), label(metrics[i]), *(_json_value(c[i]) for c in cols)]
            while len(record) > 3 and record[-1] is None:
                record.pop()
            systems.setdefault(str(system), []).append(record)
    return {"sections": sections, "labels": list(labels), "systems": systems}


def _safe_json(doc: Any) -> str:
    # bidirectional controls shown as [U+hhhh], as in the table's names (they occur only in strings)
    text = mark_bidi(json.dumps(doc, ensure_ascii=False, allow_nan=False, separators=(",", ":")))
    # Inside <script> nothing may read as markup: "</script>", "<!--" all lose their "<".
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def data_block(board: Board) -> str:
    """The drill-down data as an inert ``application/json`` script element.

    Examples
    --------
    >>> _safe_json({"a": "</script><b>&"})
    '{"a":"\\\\u003c/script\\\\u003e\\\\u003cb\\\\u003e\\\\u0026"}'
    """
    return f'<script type="application/json" id="sb-data">{_safe_json(drill_data(board))}</script>'


def script_block() -> str:
    """The inline page script; its hash is in :func:`content_security_policy`."""
    return f"<script>{script()}</script>"


def head_block() -> str:
    """The one-line ``<head>`` script that marks the page as scripted (hash in the CSP)."""
    return f"<script>{HEAD_SCRIPT}</script>"
