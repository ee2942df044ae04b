"""A short, grouped summary of skipped tests for the terminal (used by ``conftest.py``).

One line per skip *place* (file:line of the ``pytest.skip`` call): how many tests skipped there
and why, so that a reason that matters ("Chromium is not installed") is visible next to the
hundreds of by-design contract skips without ``-rs``'s one line per reason.
"""

from __future__ import annotations

from pathlib import Path

MAX_LINES = 25
REASON_CHARS = 160


def skip_groups(reports) -> list[tuple[str, int, list[str]]]:
    """``(place, count, distinct reasons in order of appearance)``, most frequent first."""
    groups: dict[str, tuple[list[int], list[str]]] = {}
    for rep in reports:
        longrepr = getattr(rep, "longrepr", None)
        if isinstance(longrepr, tuple) and len(longrepr) == 3:
            path, lineno, reason = longrepr
            name = Path(str(path)).name
            place = f"{name}:{lineno}" if lineno is not None else name
        else:
            place, reason = str(getattr(rep, "nodeid", "?")), str(longrepr)
        reason = " ".join(str(reason).removeprefix("Skipped: ").split())
        count, reasons = groups.setdefault(place, ([0], []))
        count[0] += 1
        if reason not in reasons:
            reasons.append(reason)
    ordered = sorted(groups.items(), key=lambda kv: (-kv[1][0][0], kv[0]))
    return [(place, count[0], reasons) for place, (count, reasons) in ordered]


def _shorten(text: str, limit: int = REASON_CHARS) -> str:
    if len(text) <= limit:
        return text
    return text[: limit - 2].rsplit(" ", 1)[0] + " …"


def summary_lines(reports, max_lines: int = MAX_LINES) -> list[str]:
    """The lines printed at the end of a run with skips (empty list without skips)."""
    groups = skip_groups(reports)
    if not groups:
        return []
    total = sum(count for _, count, _ in groups)
    lines = [f"skipped: {total} test(s) at {len(groups)} place(s) (-rs lists every reason):"]
    for place, count, reasons in groups[:max_lines]:
        more = f" (+{len(reasons) - 1} other reason(s))" if len(reasons) > 1 else ""
        lines.append(f"  {count:4d} x {place}: {_shorten(reasons[0])}{more}")
    if len(groups) > max_lines:
        rest = sum(count for _, count, _ in groups[max_lines:])
        lines.append(f"  {rest:4d} x at {len(groups) - max_lines} other place(s)")
    return lines
