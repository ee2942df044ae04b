"""``--check``: rebuild boards and compare them with the committed files, number-aware.

A board passes when the set of output files is the same and every file says the same
thing. "The same" is exact for everything but numbers, because the last bits of a float
depend on the BLAS build, the processor's kernels and the thread count (a covariance summed
in another order moves FID by about 1e-7 relative) while the result does not change:

- ``board.csv`` and ``board.json`` (every number of the board, 10 significant digits):
  numbers are equal when ``|new - old| <= ATOL + RTOL * max(|old|, |new|)``
  (:data:`RTOL` = 1e-6, :data:`ATOL` = 1e-12); integers (ranks, bands, counts), text, column
  names, row order and structure must match exactly.
- Rendered files (``README.md``, ``index.html``, ``plots/*.svg``, and the display strings in
  ``board.json``): text must match exactly; a number printed with a decimal point may differ
  by one unit in its last printed digit (a rounding that flipped, e.g. 0.2634 vs 0.2635),
  since the same number is checked at full precision in the CSV/JSON. SVG figures inside the
  HTML are decoded and compared the same way.

Any real change of a result (a different estimate, interval, rank or system) is far above
these tolerances. The report names the board, file, row, column, committed and new value.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import math
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scorebench.core.tolerance import ATOL, RTOL  # defined outside the package: the CLI help imports it alone
from scorebench.leaderboard.board import Board
from scorebench.leaderboard.render import write_board

__all__ = ["BoardDiff", "diff_board", "diff_files", "board_folder_files", "numbers_close", "RTOL", "ATOL"]

_MAX_DETAILS = 12
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")
_SVG_DATA = re.compile(r"data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)")


@dataclass(frozen=True)
class BoardDiff:
    """Differences between a fresh build and the committed outputs of one board."""

    name: str
    out_dir: Path
    missing: tuple[str, ...]
    extra: tuple[str, ...]
    changed: tuple[str, ...]
    details: tuple[str, ...]
    tolerated: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not (self.missing or self.extra or self.changed)

    def summary(self) -> str:
        if self.ok:
            note = (f"; {len(self.tolerated)} file(s) differ only within the numeric tolerance "
                    f"(rtol {RTOL:g}, atol {ATOL:g})" if self.tolerated else "")
            return f"{self.name}: up to date ({self.out_dir}){note}"
        lines = [f"{self.name}: committed outputs in {self.out_dir} differ from a fresh build"]
        lines += [f"  missing: {p}" for p in self.missing]
        lines += [f"  not produced by the build: {p}" for p in self.extra]
        lines += [f"  changed: {p}" for p in self.changed]
        lines += [f"    {d}" for d in self.details]
        return "\n".join(lines)


def board_folder_files(out_dir: Path) -> dict[str, bytes]:
    if not out_dir.is_dir():
        return {}
    files = {}
    for path in sorted(out_dir.rglob("*")):
        rel = path.relative_to(out_dir).as_posix()
        # preview.png: the gallery's screenshot of the page, taken by a browser, not made by the build
        if path.is_file() and not path.name.startswith(".") and rel != "preview.png":
            files[rel] = path.read_bytes()
    return files


def diff_board(board: Board, out_dir: Path) -> BoardDiff:
    """Write ``board`` into a temporary folder and compare it with the files under ``out_dir``.

    A board folder that a killed build left moved aside is put back first (:func:`recover_board`).
    """
    from scorebench.leaderboard.output import recover_board

    recover_board(out_dir)
    with tempfile.TemporaryDirectory(prefix="scorebench-check-") as tmp:
        write_board(board, Path(tmp))
        fresh = board_folder_files(Path(tmp))
    return diff_files(board.spec.name, board_folder_files(out_dir), fresh, out_dir)


def diff_files(name: str, old: dict[str, bytes], new: dict[str, bytes], out_dir: Path) -> BoardDiff:
    """Compare two sets of board files (relative path -> bytes) under the rules above."""
    missing = tuple(sorted(set(new) - set(old)))
    extra = tuple(sorted(set(old) - set(new)))
    changed, tolerated, details = [], [], []
    for path in sorted(set(new) & set(old)):
        if new[path] == old[path]:
            continue
        found = list(_differences(path, old[path], new[path]))
        if found:
            changed.append(path)
            details += [f"{path}: {d}" for d in found[:_MAX_DETAILS]]
            if len(found) > _MAX_DETAILS:
                details.append(f"{path}: ... {len(found) - _MAX_DETAILS} more")
        else:
            tolerated.append(path)
    return BoardDiff(name, out_dir, missing, extra, tuple(changed), tuple(details), tuple(tolerated))


def _differences(path: str, old: bytes, new: bytes) -> Iterator[str]:
    a, b = old.decode("utf-8", "replace"), new.decode("utf-8", "replace")
    if path.endswith(".csv"):
        yield from _csv_differences(a, b)
    elif path.endswith(".json"):
        try:
            yield from _json_differences(json.loads(a), json.loads(b), "")
        except json.JSONDecodeError as exc:
            yield f"not valid JSON ({exc})"
    else:
        yield from _text_differences(_decode_svg_images(a), _decode_svg_images(b))


def numbers_close(a: float, b: float) -> bool:
    """The board tolerance: ``|a - b| <= ATOL + RTOL * max(|a|, |b|)`` (equal infinities too)."""
    if a == b or (math.isnan(a) and math.isnan(b)):
        return True
    return abs(a - b) <= ATOL + RTOL * max(abs(a), abs(b))


def _csv_differences(a: str, b: str) -> Iterator[str]:
    old, new = list(csv.reader(io.StringIO(a))), list(csv.reader(io.StringIO(b)))
    if not old or not new or old[0] != new[0]:
        yield f"header changed: {old[0] if old else []} -> {new[0] if new else []}"
        return
    if len(old) != len(new):
        yield f"{len(old) - 1} rows committed, {len(new) - 1} rebuilt"
    header = old[0]
    for row, (x, y) in enumerate(zip(old[1:], new[1:]), start=1):
        for col, u, v in zip(header, x, y):
            if u != v and not _cells_close(u, v):
                yield f"data row {row}, column {col!r}: committed {u!r}, rebuilt {v!r}"


def _cells_close(u: str, v: str) -> bool:
    try:
        x, y = float(u), float(v)
    except ValueError:
        return False
    integral = all(_NUMBER.fullmatch(s) and "." not in s and "e" not in s.lower() for s in (u, v))
    return not integral and numbers_close(x, y)


def _json_differences(old: Any, new: Any, where: str) -> Iterator[str]:
    if isinstance(old, dict) and isinstance(new, dict):
        if list(old) != list(new):
            yield f"{where or '/'}: keys {list(old)} -> {list(new)}"
            return
        for key in old:
            yield from _json_differences(old[key], new[key], f"{where}/{key}")
    elif isinstance(old, list) and isinstance(new, list):
        if len(old) != len(new):
            yield f"{where}: {len(old)} items committed, {len(new)} rebuilt"
        for i, (x, y) in enumerate(zip(old, new)):
            yield from _json_differences(x, y, f"{where}[{i}]")
    elif isinstance(old, float) and isinstance(new, (int, float)) and not isinstance(new, bool):
        if not numbers_close(float(old), float(new)):
            yield f"{where}: committed {old!r}, rebuilt {new!r}"
    elif isinstance(old, str) and isinstance(new, str):
        if old != new and _text_differs(old, new):
            yield f"{where}: committed {old[:120]!r}, rebuilt {new[:120]!r}"
    elif old != new or type(old) is not type(new):
        yield f"{where}: committed {old!r}, rebuilt {new!r}"


def _decode_svg_images(text: str) -> str:
    return _SVG_DATA.sub(lambda m: "data:image/svg+xml," + base64.b64decode(m.group(1)).decode("utf-8", "replace"),
                         text)


def _text_differences(a: str, b: str) -> Iterator[str]:
    old, new = a.splitlines(), b.splitlines()
    if len(old) != len(new):
        yield f"{len(old)} lines committed, {len(new)} rebuilt"
    for number, (x, y) in enumerate(zip(old, new), start=1):
        if x != y and _text_differs(x, y):
            yield f"line {number}: committed {x[:160]!r}, rebuilt {y[:160]!r}"


def _text_differs(a: str, b: str) -> bool:
    """True unless ``a`` and ``b`` differ only in printed numbers by one unit of the last digit."""
    if _NUMBER.sub("#", a) != _NUMBER.sub("#", b):
        return True
    return not all(u == v or _printed_close(u, v) for u, v in zip(_NUMBER.findall(a), _NUMBER.findall(b)))


def _printed_close(u: str, v: str) -> bool:
    units = [_last_unit(s) for s in (u, v)]
    if all(unit is None for unit in units):
        return False  # two different integers: a rank, a count or a band changed
    return abs(float(u) - float(v)) <= max(unit for unit in units if unit is not None) * (1 + 1e-9) + ATOL


def _last_unit(text: str) -> float | None:
    """One unit of the last printed digit of a number with a decimal point (None: an integer)."""
    mantissa, _, exponent = text.lower().partition("e")
    if "." not in mantissa:
        return None
    decimals = len(mantissa.split(".")[1])
    return 10.0 ** (-decimals + (int(exponent) if exponent else 0))
