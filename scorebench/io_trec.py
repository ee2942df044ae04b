"""Readers for TREC run and qrels files, the formats ``trec_eval`` reads.

A *run* file has one retrieved document per line, six whitespace-separated fields::

    qid  Q0  docid  rank  score  tag

and a *qrels* file one judgment per line, four fields::

    qid  iteration  docid  relevance

Lines whose first character is ``#`` are comments (as in trec_eval 10.0) and blank lines are
skipped. A malformed line raises :class:`~scorebench.core.errors.InputError` naming the file and
the line number. Both readers return DataFrames in the column conventions of the
``ranking`` table kind (:mod:`scorebench.metrics.ranking`): the run tag becomes the
``system`` column, ids are strings, scores are float64 and relevance is an integer
(or float64 when the file holds non-integer grades).
"""

from __future__ import annotations

import io
import os
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from scorebench.core.errors import InputError

__all__ = ["read_trec_run", "read_trec_qrels", "write_trec_run", "looks_like_trec"]

_RUN_FIELDS = ("qid", "q0", "docid", "rank", "score", "system")
_QRELS_FIELDS = ("qid", "iteration", "docid", "relevance")


def read_trec_run(path: str | os.PathLike) -> pd.DataFrame:
    """Read a TREC run file into a DataFrame ``qid, docid, rank, score, system``.

    Parameters
    ----------
    path : str or path-like
        A file of ``qid Q0 docid rank score tag`` lines (``#`` comment lines allowed).
        As in trec_eval, fields after the tag are ignored and the rank field is not
        interpreted.

    Returns
    -------
    DataFrame
        Columns ``qid`` (str), ``docid`` (str), ``rank`` (int64 when every rank is an
        integer, else the text; the ranking kind ignores it and orders by score), ``score`` (float64) and ``system``
        (the run tag), in file order.

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".run", delete=False) as f:
    ...     _ = f.write("# a comment\\n1 Q0 d1 1 2.5 bm25\\n1 Q0 d2 2 1.0 bm25\\n")
    >>> run = read_trec_run(f.name)
    >>> run[["qid", "docid", "score", "system"]].values.tolist()
    [['1', 'd1', 2.5, 'bm25'], ['1', 'd2', 1.0, 'bm25']]
    >>> os.unlink(f.name)
    """
    frame = _read_fields(path, _RUN_FIELDS, numeric={"score": "number"}, what="run", extra_ok=True)
    rank = pd.to_numeric(frame["rank"], errors="coerce")
    if rank.notna().all() and (rank == rank.round()).all():
        frame["rank"] = rank.to_numpy().astype(np.int64)
    return frame[["qid", "docid", "rank", "score", "system"]]


def read_trec_qrels(path: str | os.PathLike) -> pd.DataFrame:
    """Read a TREC qrels file into a DataFrame ``qid, docid, relevance``.

    Parameters
    ----------
    path : str or path-like
        A file of ``qid iteration docid relevance`` lines (``#`` comment lines allowed).
        Relevance is graded and may be negative (trec_eval reads a negative value as
        "in the pool but not judged").

    Returns
    -------
    DataFrame
        Columns ``qid`` (str), ``docid`` (str) and ``relevance`` (int64, or float64 when
        some grade is not an integer), in file order.

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".qrels", delete=False) as f:
    ...     _ = f.write("1 0 d1 2\\n1 0 d3 0\\n")
    >>> read_trec_qrels(f.name).values.tolist()
    [['1', 'd1', 2], ['1', 'd3', 0]]
    >>> os.unlink(f.name)
    """
    frame = _read_fields(path, _QRELS_FIELDS, numeric={"relevance": "number"}, what="qrels")
    rel = frame["relevance"].to_numpy()
    if rel.size and np.all(rel == np.round(rel)) and np.abs(rel).max() < 2**53:
        frame["relevance"] = rel.astype(np.int64)
    return frame[["qid", "docid", "relevance"]]


def write_trec_run(run: pd.DataFrame, path: str | os.PathLike, *, tag: str = "scorebench") -> None:
    """Write a run DataFrame (``qid``, ``docid``, ``score``, optional ``system``) as TREC lines.

    Documents are written per query by descending score with ranks from 1; the
    ``system`` column (or ``tag``) becomes the run tag. The file is written atomically.
    """
    for col in ("qid", "docid", "score"):
        if col not in run.columns:
            raise InputError(f"write_trec_run: missing column {col!r}")
    df = run.sort_values(["qid", "score", "docid"], ascending=[True, False, False], kind="stable")
    ranks = df.groupby("qid", sort=False).cumcount() + 1
    tags = df["system"].astype(str) if "system" in df.columns else pd.Series(tag, index=df.index)
    lines = (df["qid"].astype(str) + " Q0 " + df["docid"].astype(str) + " " + ranks.astype(str) + " "
             + df["score"].map(repr) + " " + tags)
    target = Path(path)
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_text("\n".join(lines) + ("\n" if len(lines) else ""))
    os.replace(tmp, target)


def looks_like_trec(path: str | os.PathLike) -> str | None:
    """Return ``"run"`` or ``"qrels"`` when the file's first data line has that many fields.

    Used by readers that dispatch on content (files named ``*.run``/``*.qrels`` or
    without a table extension). Returns None when the file looks like neither.
    """
    try:
        with open(path, "rb") as fh:
            for raw in fh:
                line = raw.strip()
                if not line or line.startswith(b"#"):
                    continue
                n = len(line.split())
                return {6: "run", 4: "qrels"}.get(n)
    except (OSError, UnicodeDecodeError):
        return None
    return None


def _read_fields(path: str | os.PathLike, fields: tuple[str, ...], *, numeric: dict[str, str],
                 what: str, extra_ok: bool = False) -> pd.DataFrame:
    """Parse whitespace-separated lines with the C parser; fall back to a line-by-line pass
    (which also locates a malformed line) when that fails or extra fields are present."""
    path = Path(path)
    data = path.read_bytes()
    if data.startswith(b"#") or b"\n#" in data:
        data = b"\n".join(line for line in data.split(b"\n") if not line.startswith(b"#"))
    try:
        # one spare column catches a line with too many fields
        with warnings.catch_warnings():  # lines with 2+ extra fields: the check below or the fallback
            warnings.simplefilter("ignore", pd.errors.ParserWarning)
            frame = pd.read_csv(io.BytesIO(data), sep=r"\s+", header=None, names=[*fields, "_extra"],
                                dtype=str, engine="c", skip_blank_lines=True, na_filter=False, index_col=False)
        if len(frame) and ((frame[fields[-1]] == "").any() or (not extra_ok and (frame["_extra"] != "").any())):
            raise ValueError("short or long line")
        frame = frame[list(fields)]
    except (pd.errors.ParserError, ValueError, UnicodeDecodeError):
        frame = _parse_lines(path, fields, numeric, what, extra_ok)
    for col, expected in numeric.items():
        arr = pd.to_numeric(frame[col], errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        bad = ~np.isfinite(arr)
        if expected == "integer":
            bad |= arr != np.round(arr)
        if bad.any():
            _parse_lines(path, fields, numeric, what, extra_ok)  # raises naming the line
        frame[col] = arr if expected == "number" else arr.astype(np.int64)
    if len(frame) == 0:
        raise InputError(f"{what} file {str(path)!r}: no data lines")
    return frame


def _parse_lines(path: Path, fields: tuple[str, ...], numeric: dict[str, str], what: str,
                 extra_ok: bool) -> pd.DataFrame:
    """Line-by-line parse; raises for the first line that does not fit ``fields``."""
    expected = " ".join(fields)
    rows = []
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, start=1):
            if raw.startswith(b"#") or not raw.strip():
                continue
            try:
                parts = raw.decode("utf-8").split()
            except UnicodeDecodeError:
                raise InputError(f"{what} file {str(path)!r}, line {number}: not valid UTF-8 text") from None
            if len(parts) < len(fields) or (len(parts) > len(fields) and not extra_ok):
                raise InputError(f"{what} file {str(path)!r}, line {number}: expected {len(fields)} "
                                 f"whitespace-separated fields ({expected}), got {len(parts)}: "
                                 f"{raw.decode('utf-8', 'replace').strip()!r}")
            parts = parts[:len(fields)]
            for col, kind in numeric.items():
                value = parts[fields.index(col)]
                try:
                    number_value = float(value)
                except ValueError:
                    number_value = float("nan")
                good = np.isfinite(number_value) and (kind != "integer" or number_value == round(number_value))
                if not good:
                    noun = "an integer" if kind == "integer" else "a finite number"
                    raise InputError(f"{what} file {str(path)!r}, line {number}: field {col!r} must be "
                                     f"{noun}, got {value!r}")
            rows.append(parts)
    return pd.DataFrame(rows, columns=list(fields), dtype=str)
