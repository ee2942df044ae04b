"""Render a :class:`~scorebench.leaderboard.build.Board` to Markdown, HTML, CSV and JSON.

Names come from untrusted result tables, so every string is escaped for its target:
:func:`scorebench.io.tables.escape_markdown` for Markdown cells (HTML-escaped, pipes escaped, one
line), :func:`html.escape` for HTML. The HTML page is self-contained: inline CSS, figures
as ``data:image/svg+xml;base64`` images (an image cannot run scripts), one inline script
allowed by its CSP hash (:mod:`.interactive`: sorting, search, filters, drill-down), no
external resources. Nothing depends on the time or the machine: same board, same bytes.
"""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path

import pandas as pd

from scorebench.io.tables import escape_markdown, safe_csv_table
from scorebench.leaderboard import interactive
from scorebench.leaderboard.board import Board, Section, pin

__all__ = ["render_markdown_board", "render_html", "render_csv", "render_json", "write_board", "OUTPUT_FILES"]

OUTPUT_FILES = ("README.md", "index.html", "board.csv", "board.json")

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;max-width:1200px;margin:2em auto;
padding:0 1em;color:#1b1b1b;line-height:1.45}
h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ddd}
.badge{display:inline-block;background:#fff3cd;border:1px solid #e0c36a;border-radius:4px;padding:.1em .5em;
font-size:.85em}
table{border-collapse:collapse;font-size:.85em;margin:.6em 0;font-variant-numeric:tabular-nums}
th,td{border:1px solid #d0d7de;padding:.25em .55em;text-align:right;white-space:nowrap}
th{background:#f6f8fa;white-space:normal}td.name,th.name{text-align:left;white-space:pre-wrap}
tr.band-odd td{background:#ffffff}tr.band-even td{background:#f3f7fb}
p.note{font-size:.85em;color:#444}figure{margin:1em 0}figure img{max-width:100%;height:auto}
figcaption{font-size:.85em;color:#444}footer{margin-top:3em;font-size:.8em;color:#555;border-top:1px solid #ddd}
footer code{word-break:break-all}
""".strip()

_NAME_COLUMNS = ("system", "method", "band")

#: A table with more columns than this scrolls sideways inside the page with its first
#: column (the system) frozen (the MTEB board has 60; its per-task groups start collapsed,
#: ``Section.collapsed``).
WIDE_COLUMNS = 20


def _md_table(section: Section) -> list[str]:
    if not section.columns:
        return []
    lines = ["| " + " | ".join(escape_markdown(c) for c in section.columns) + " |",
             "| " + " | ".join("---" for _ in section.columns) + " |"]
    lines += ["| " + " | ".join(escape_markdown(c) for c in row) + " |" for row in section.rows]
    return lines


def render_markdown_board(board: Board, *, figure_dir: str = "plots", regenerate: str | None = None) -> str:
    """Markdown page; figures are linked as ``plots/<name>.svg`` files next to it.

    ``regenerate``: the command shown in the footer (default: the board's build command).
    """
    spec = board.spec
    out = [f"# {escape_markdown(spec.title)}", ""]
    if spec.external:
        out += ["> **External leaderboard**: numbers re-ranked from a published snapshot (see sources below), "
                "not produced by this project.", ""]
    if spec.description:
        out += [escape_markdown(" ".join(spec.description.split())), ""]
    for section in board.sections:
        if section.title:
            out += [f"## {escape_markdown(section.title)}", ""]
        if section.note:
            out += [escape_markdown(section.note), ""]
        table = _md_table(section)
        if table:
            out += table + [""]
        for fig in section.figures:
            out += [f"![{escape_markdown(fig.caption)}]({figure_dir}/{fig.name}.svg)", "",
                    f"*{escape_markdown(fig.caption)}*", ""]
    out += ["## Provenance", ""]
    out += [f"- {escape_markdown(k)}: {escape_markdown(v)}" for k, v in board.provenance]
    if regenerate is None:
        out += ["", f"Regenerate with `scorebench leaderboard build {escape_markdown(spec.command_path)}`; "
                "`--check` verifies the committed files.", ""]
    else:
        out += ["", f"Regenerate with `{escape_markdown(regenerate)}`.", ""]
    return "\n".join(out)


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _html_table(section: Section) -> list[str]:
    if not section.columns:
        return []
    names = {i for i, c in enumerate(section.columns) if c in _NAME_COLUMNS}
    name_cls = ' class="name"'
    head = "".join(f'<th scope="col"{name_cls if i in names else ""}{interactive.header_attrs(section, i, c)}>'
                   f'{_e(c)}</th>' for i, c in enumerate(section.columns))
    band_col = section.columns.index("band") if "band" in section.columns else None
    # every table scrolls sideways inside the page rather than widening it; a wide one keeps
    # its columns up to the system name in view while it scrolls (board.js freeze())
    wide = len(section.columns) > WIDE_COLUMNS
    out = [f'<div class="{"sb-scroll sb-wide" if wide else "sb-scroll"}">']
    out.append(f'<table id="{_e(section.key)}"><thead><tr>{head}</tr></thead><tbody>')
    for row in section.rows:
        cls = ""
        if band_col is not None and row[band_col].isdigit():
            cls = f' class="band-{"odd" if int(row[band_col]) % 2 else "even"}"'
        cells = "".join(f'<td{name_cls if i in names else interactive.cell_attrs(v)}>{_e(v)}</td>'
                        for i, v in enumerate(row))
        out.append(f"<tr{cls}>{cells}</tr>")
    out.append("</tbody></table>")
    out.append("</div>")
    return out


def render_html(board: Board, *, regenerate: str | None = None) -> str:
    """A self-contained HTML page (inline CSS, inline SVG images, one hashed inline script).

    ``regenerate``: the command shown in the footer (default: the board's build command).
    """
    spec = board.spec
    out = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           f'<meta http-equiv="Content-Security-Policy" content="{interactive.content_security_policy()}">',
           f"<title>{_e(spec.title)}</title>", f"<style>{_CSS}\n{interactive.CSS}</style>", interactive.head_block(), "</head>", "<body>",
           f"<h1>{_e(spec.title)}</h1>"]
    if spec.external:
        out.append('<p><span class="badge">External leaderboard</span> numbers re-ranked from a published '
                   "snapshot (see sources below), not produced by this project.</p>")
    if spec.description:
        out.append(f"<p>{_e(' '.join(spec.description.split()))}</p>")
    for section in board.sections:
        out.append(f'<section id="section-{_e(section.key)}">')
        if section.title:
            out.append(f"<h2>{_e(section.title)}</h2>")
        if section.note:
            out.append(f'<p class="note">{_e(section.note)}</p>')
        out += _html_table(section)
        for fig in section.figures:
            data = base64.b64encode(fig.svg.encode("utf-8")).decode("ascii")
            out.append(f'<figure id="figure-{_e(fig.name)}"><img alt="{_e(fig.caption)}" '
                       f'src="data:image/svg+xml;base64,{data}"><figcaption>{_e(fig.caption)}</figcaption></figure>')
        out.append("</section>")
    out.append("<footer><h2>Provenance</h2><ul>")
    out += [f"<li>{_e(k)}: <code>{_e(v)}</code></li>" for k, v in board.provenance]
    command = f"scorebench leaderboard build {spec.command_path}" if regenerate is None else regenerate
    out.append(f"</ul><p>Regenerate with <code>{_e(command)}</code>.</p></footer>")
    out += [interactive.data_block(board), interactive.script_block()]  # sort, filter, drill-down
    out += ["</body>", "</html>", ""]
    return "\n".join(out)


def _records(board: Board) -> pd.DataFrame:
    frames = [s.data for s in board.sections if not s.data.empty]
    if not frames:
        return pd.DataFrame()
    data = pd.concat(frames, ignore_index=True)
    front = [c for c in ("section", "task", "system") if c in data.columns]
    return data[front + [c for c in data.columns if c not in front]]


def render_csv(board: Board) -> str:
    """All numbers of the board as one long CSV (floats to 10 significant digits, no comment lines)."""
    # Plain CSV, header first (every CSV reader takes it); provenance is in board.json.
    # Text cells starting with = + - @ get a leading ' (spreadsheets would run them as formulas).
    return safe_csv_table(_records(board).map(pin)).to_csv(index=False, lineterminator="\n")


def render_json(board: Board) -> str:
    """The board as JSON: title, sections (columns, display rows, numbers), provenance."""
    spec = board.spec
    doc = {
        "name": spec.name, "title": spec.title, "external": spec.external, "description": spec.description,
        "sections": [{
            "key": s.key, "title": s.title, "note": s.note, "columns": list(s.columns),
            "rows": [list(r) for r in s.rows],
            "data": [{k: pin(v) for k, v in rec.items()} for rec in s.data.to_dict(orient="records")],
            "figures": [{"name": f.name, "caption": f.caption, "file": f"plots/{f.name}.svg"} for f in s.figures],
        } for s in board.sections],
        "provenance": dict(board.provenance),
    }
    return json.dumps(_clean(doc), indent=1, ensure_ascii=False, allow_nan=False) + "\n"


def _clean(value):
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    if isinstance(value, float) and value != value:
        return None
    if value is pd.NA or value is pd.NaT:
        return None
    return value


def board_files(board: Board) -> dict[str, bytes]:
    """Relative path -> content of every output file of a board."""
    files = {
        "README.md": render_markdown_board(board), "index.html": render_html(board),
        "board.csv": render_csv(board), "board.json": render_json(board),
    }
    files.update({f"plots/{f.name}.svg": f.svg for f in board.figures})
    return {k: v.encode("utf-8") for k, v in files.items()}


def write_board(board: Board, out_dir: str | Path, *, overwrite_foreign: bool = False) -> list[Path]:
    """Write every output file into ``out_dir``, all or nothing (see :mod:`.output`).

    An existing non-empty ``out_dir`` that scorebench did not write (no manifest) is refused
    unless ``overwrite_foreign=True``.
    """
    from scorebench.leaderboard.output import write_board_files

    return write_board_files(board_files(board), out_dir, overwrite_foreign=overwrite_foreign)
