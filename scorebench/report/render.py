"""Write a :class:`~scorebench.report.build.ComparisonReport` as HTML, Markdown or LaTeX.

HTML and Markdown reuse the leaderboard page writer (:func:`scorebench.leaderboard.render.render_html`):
the same escaping of untrusted names, the same Content-Security-Policy (nothing from the
network, one hashed script for sorting), complete and readable without JavaScript. LaTeX is
a standalone ``article`` with ``booktabs`` + ``longtable`` tables (significance marks on the
adjusted p-values, tie bands as a column) that a stock TeX Live compiles. Same report, same
bytes: nothing depends on the time or the machine.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import pandas as pd

from scorebench.core.errors import InputError
from scorebench.io.tables import format_value
from scorebench.leaderboard.board import Board, Section, cell
from scorebench.leaderboard.render import render_html, render_markdown_board
from scorebench.leaderboard.spec import BoardSpec
from scorebench.report.build import ComparisonReport

__all__ = ["REPORT_FORMATS", "report_board", "render_report", "write_report", "render_latex"]

REPORT_FORMATS = {".html": "html", ".htm": "html", ".md": "markdown", ".tex": "latex"}
MAX_FLIPS = 2000  # flipped items listed in the page (all of them stay in the data)


def _p(p: Any) -> str:
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return ""
    return "< 1e-4" if p < 1e-4 else f"{p:.4f}"


def _num(x: Any, digits: int = 4) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    if isinstance(x, (int,)) or (isinstance(x, float) and x.is_integer() and abs(x) >= 1000):
        return str(int(x))
    return format_value(float(x), digits)


def _stars(p: float, alpha: float) -> str:
    if not p < alpha:
        return ""
    return "***" if p < 0.001 else "**" if p < 0.01 else "*"


def _section(key: str, title: str, note: str, columns: list[str], rows: list[list[str]], data: pd.DataFrame) -> Section:
    return Section(key, title, note, tuple(columns), tuple(tuple(r) for r in rows), data)


def _scores_section(rep: ComparisonReport, digits: int) -> Section:
    s = rep.scores
    arrow = "" if rep.higher_is_better is None else (" ↑" if rep.higher_is_better else " ↓")
    rows = [[str(r["rank"]), str(r["band"]), str(r["system"]), cell(r["value"], r["ci_low"], r["ci_high"], digits),
             str(r["n"])] for _, r in s.iterrows()]
    note = (f"{rep.metric} with its {rep.settings['ci']:.0%} interval (the metric's own rule: Wilson for accuracy, "
            "percentile bootstrap for means; cluster bootstrap with clusters). Band: a system joins the band of "
            f"the system above it unless the {rep.settings['correction']}-adjusted paired test against the band's "
            f"leader is significant at {rep.settings['alpha']:g}.")
    return _section("scores", "Scores", note, ["rank", "band", "system", f"{rep.metric}{arrow}", "n"], rows, s)


def _pair_rows(p: pd.DataFrame, alpha: float, digits: int, task: bool) -> list[list[str]]:
    rows = []
    for _, r in p.iterrows():
        row = [str(r["task"])] if task else []
        row += [str(r["system_a"]), str(r["system_b"]), str(r["n"]),
                cell(r["mean_diff"], r["ci_low"], r["ci_high"], digits), str(r["test"]),
                _num(r["statistic"]), _p(r["p_value"]), _p(r["p_adj"]) + _stars(r["p_adj"], alpha), str(r["better"]),
                str(r["detail"])]
        if "design_effect" in p.columns:
            row.insert(len(row) - 1, _num(r["design_effect"], 3))
        rows.append(row)
    return rows


def _pair_columns(p: pd.DataFrame, correction: str, task: bool) -> list[str]:
    cols = (["task"] if task else []) + ["system", "vs", "n", "difference [CI]", "test", "statistic", "p",
                                         f"p ({correction})", "better", "detail"]
    if "design_effect" in p.columns:
        cols.insert(len(cols) - 1, "design effect")
    return cols


def _pairs_section(rep: ComparisonReport, digits: int, key: str, title: str, p: pd.DataFrame, task: bool) -> Section:
    st = rep.settings
    note = (f"Paired difference system − vs on the same items, {st['ci']:.0%} paired-bootstrap interval "
            "(whole clusters resampled when items are clustered); test: "
            f"{st['test']}; p-values adjusted by {st['correction']} over all rows; * p < {st['alpha']:g}, "
            "** < 0.01, *** < 0.001 (adjusted). 'better' is named only when significant.")
    rows = _pair_rows(p, st["alpha"], digits, task)
    return _section(key, title, note, _pair_columns(p, st["correction"], task), rows, p)


def _task_scores_section(rep: ComparisonReport, digits: int) -> Section:
    s = rep.task_scores
    rows = [[str(r["task"]), str(r["system"]), cell(r["value"], r["ci_low"], r["ci_high"], digits), str(r["n"])]
            for _, r in s.iterrows()]
    return _section("task-scores", "Scores per task", "", ["task", "system", rep.metric, "n"], rows, s)


def _flips_section(rep: ComparisonReport) -> Section:
    f = rep.flips
    if not rep.binary:
        note = "Flipped items are listed for right/wrong (0/1) metrics only."
        return _section("flips", "Flipped items", note, [], [], f)
    counts = f.groupby(["system", "reference", "change"]).size().unstack(fill_value=0) if not f.empty else None
    summary = "; ".join(f"{a} vs {b}: {row.get('regression', 0)} regressions, {row.get('fix', 0)} fixes"
                        for (a, b), row in (counts.iterrows() if counts is not None else []))
    note = ("regression: the reference (vs) was right and the system wrong; fix: the other way round. "
            + (summary or "No item flipped."))
    if len(f) > MAX_FLIPS:
        note += f" The first {MAX_FLIPS} of {len(f)} are listed (all are in the data)."
    cols = [c for c in ("system", "reference", "task", "id", "change") if c in f.columns]
    rows = [[str(v) for v in r] for r in f[cols].head(MAX_FLIPS).itertuples(index=False)]
    return _section("flips", "Flipped items", note, ["system", "vs", *cols[2:]], rows, f)


def _planner_section(rep: ComparisonReport) -> Section:
    p = rep.planner
    st = rep.settings
    rows = [[str(r["system_a"]), str(r["system_b"]), str(r["n"]), str(r["n_clusters"]), _num(r["discordance"], 4),
             _num(r["sd_diff"], 4), _num(r["icc"], 3), _num(r["design_effect"], 3), _num(r["mde"], 4),
             _num(r["delta"], 4), _num(r["power_at_n"], 3), _num(r["items_needed"]), _num(r["clusters_needed"])]
            for _, r in p.iterrows()]
    note = (f"Minimum detectable effect (two-sided alpha {st['alpha']:g}, power {st['power']:g}) at the observed "
            "size; power of the paired test against each planned difference Δ now, and the items (clusters) needed "
            "to reach the planned power: n = (z_{1-α/2} + z_power)² σ_d² DE / Δ², with σ_d² = q − Δ² from the "
            "observed discordance q for right/wrong metrics and DE = 1 + (m − 1) ICC the design effect of clusters "
            "of m items (Miller 2024, 'Adding error bars to evals').")
    cols = ["system", "vs", "n", "clusters", "discordance", "sd(diff)", "ICC", "design effect", "MDE", "Δ",
            "power now", "items needed", "clusters needed"]
    return _section("planner", "Power and sample size", note, cols, rows, p)


def _gates_section(rep: ComparisonReport) -> Section:
    g = rep.gates
    rows = []
    for _, r in g.iterrows():
        bound = (f"[{_num(r['ci_low'])}, {_num(r['ci_high'])}]" if r["gate"] == "equivalence"
                 else f"> {_num(r['ci_low'])}")
        rows.append(([str(r["task"])] if "task" in g.columns else []) + [
            str(r["system"]), str(r["baseline"]), str(r["gate"]), _num(r["margin"]), _num(r["mean_diff"]), bound,
            _p(r["p_value"]), "holds" if r["holds"] else "fails", str(r["method"])])
    cols = (["task"] if "task" in g.columns else []) + ["system", "baseline", "gate", "margin", "difference",
                                                        "bound", "p", "decision", "method"]
    return _section("gates", "Decision gate", g.attrs.get("verdict", ""), cols, rows, g)


def report_board(rep: ComparisonReport, *, title: str | None = None, digits: int = 4) -> Board:
    """The report as a :class:`~scorebench.leaderboard.board.Board` (sections and provenance)."""
    sections = [_scores_section(rep, digits),
                _pairs_section(rep, digits, "pairs", "Paired comparisons", rep.pairs, False)]
    if rep.gates is not None:
        sections.append(_gates_section(rep))
    if rep.task_scores is not None:
        sections.append(_task_scores_section(rep, digits))
        sections.append(_pairs_section(rep, digits, "task-pairs", "Paired comparisons per task", rep.task_pairs,
                                       True))
    sections += [_flips_section(rep), _planner_section(rep)]
    provenance = tuple((k, str(v)) for k, v in rep.settings.items() if v is not None) + tuple(
        ("run " + k, v) for k, v in rep.sources)
    spec = BoardSpec(path=Path("report.toml"), name="report", title=title or f"Comparison report: {rep.metric}")
    return Board(spec, tuple(sections), provenance)


# --- LaTeX -------------------------------------------------------------------------------

# Symbols without a glyph in the default OT1 text fonts are set in math mode, so the document
# needs no font package beyond a minimal TeX Live (no T1/TS1 fonts, no cm-super).
_TEX = {"\\": r"$\backslash$", "&": r"\&", "%": r"\%", "$": r"$\$$", "#": r"\#", "_": r"\_", "{": r"$\{$",
        "}": r"$\}$", "~": r"$\sim$", "^": r"\^{}", "<": r"$<$", ">": r"$>$", "|": r"$|$",
        "\n": " ", "\r": " "}
_UNICODE = {"↑": r"$\uparrow$", "↓": r"$\downarrow$", "−": "-", "Δ": r"$\Delta$", "α": r"$\alpha$",
            "σ": r"$\sigma$", "²": r"\textsuperscript{2}", "–": "--", "≥": r"$\geq$", "≤": r"$\leq$"}


def _tex(text: Any) -> str:
    out = []
    for ch in str(text):
        if ch in _TEX:
            out.append(_TEX[ch])
        elif ch in _UNICODE:
            out.append(_UNICODE[ch])
        elif ord(ch) < 32 or ord(ch) > 126:
            out.append(f"[U+{ord(ch):04X}]")  # no font assumption: shown as its code point
        else:
            out.append(ch)
    return "".join(out)


def _tex_cell(text: str) -> str:
    """Escape a display cell; trailing significance stars become a superscript."""
    stars = len(text) - len(text.rstrip("*"))
    body = _tex(text[: len(text) - stars] if stars else text)
    return body + (f"$^{{{'*' * stars}}}$" if stars else "")


def render_latex(rep: ComparisonReport, *, title: str | None = None, digits: int = 4) -> str:
    """A standalone LaTeX document (article, booktabs, longtable) of the report."""
    board = report_board(rep, title=title, digits=digits)
    out = [r"\documentclass[10pt]{article}", r"\usepackage[margin=1.5cm,landscape]{geometry}",
           r"\usepackage{booktabs}", r"\usepackage{longtable}",
           r"\begin{document}", r"\section*{" + _tex(board.spec.title) + "}"]
    for section in board.sections:
        out.append(r"\subsection*{" + _tex(section.title) + "}")
        if section.note:
            out.append(r"{\small " + _tex(section.note) + r"\par}")
        if not section.columns:
            continue
        if not section.rows:
            out.append(r"\emph{(none)}\par")
            continue
        spec = "".join("l" if c in ("system", "vs", "task", "id", "test", "detail", "method", "change", "gate",
                                      "baseline", "decision", "better") else "r" for c in section.columns)
        out += [r"{\footnotesize", r"\begin{longtable}{" + spec + "}", r"\toprule",
                " & ".join(_tex(c) for c in section.columns) + r" \\", r"\midrule", r"\endhead"]
        out += [" & ".join(_tex_cell(v) for v in row) + r" \\" for row in section.rows]
        out += [r"\bottomrule", r"\end{longtable}}"]
    out += [r"\subsection*{Provenance}", r"{\footnotesize", r"\begin{longtable}{lp{0.75\textwidth}}", r"\toprule"]
    out += [f"{_tex(k)} & {_tex(v)} " + r"\\" for k, v in board.provenance]
    out += [r"\bottomrule", r"\end{longtable}}", r"\end{document}", ""]
    return "\n".join(out)


def render_report(rep: ComparisonReport, fmt: str, *, title: str | None = None, command: str | None = None) -> str:
    """The report as text in ``fmt`` (``html``, ``markdown`` or ``latex``)."""
    regenerate = command or "scorebench report RUN... -o report.html"
    if fmt == "html":
        return render_html(report_board(rep, title=title), regenerate=regenerate)
    if fmt == "markdown":
        return render_markdown_board(report_board(rep, title=title), regenerate=regenerate)
    if fmt == "latex":
        return render_latex(rep, title=title)
    raise InputError(f"report format: expected html, markdown or latex, got {fmt!r}")


def report_format(path: str | os.PathLike) -> str:
    """The format of a report file from its suffix."""
    suffix = Path(path).suffix.lower()
    if suffix not in REPORT_FORMATS:
        raise InputError(f"{path}: unknown report format {suffix or '(no suffix)'!r}; expected "
                         f"{', '.join(sorted(REPORT_FORMATS))}")
    return REPORT_FORMATS[suffix]


def write_report(rep: ComparisonReport, path: str | os.PathLike, *, title: str | None = None,
                 command: str | None = None) -> Path:
    """Write the report to ``path`` (format from the suffix: .html, .md, .tex), atomically."""
    from scorebench.io.tables import atomic_write

    path = Path(path)
    data = render_report(rep, report_format(path), title=title, command=command).encode("utf-8")
    atomic_write({path: lambda tmp: Path(tmp).write_bytes(data)})
    return path
