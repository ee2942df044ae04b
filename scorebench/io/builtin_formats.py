"""The built-in formats that are not a harness's results: table files, TREC files, trec_eval output.

Each is a :class:`~scorebench.io.formats.Format` record naming its functions as
``"module:function"`` text, so registering them imports no reader. The harness formats are
registered by :mod:`scorebench.io.readers`. To add a format: write its reader (and writer)
and add one record here or there.
"""

from __future__ import annotations

from scorebench.io.formats import Format

__all__ = ["FORMAT_RECORDS"]

_TABLE = "scorebench.io.tables"
_ANY = "the table as it is (any kind)"


def _table(name: str, suffixes: tuple[str, ...], files: str, doc: str, *, writes: bool = True,
           reads: bool = True, fallback: tuple[str, ...] = ()) -> Format:
    return Format(
        name=name, family="table", files=files, yields=_ANY if reads else "", doc=doc,
        reader=f"{_TABLE}:read_table" if reads else None, writer=f"{_TABLE}:write_table" if writes else None,
        suffixes=suffixes, fallback_suffixes=fallback, bound=(("format", name),))


#: The built-in formats besides the harnesses' (registered by :func:`scorebench.io.formats.load_formats`).
FORMAT_RECORDS = (
    _table("csv", (".csv",), "comma-separated text with a header row (``.csv``; a ``.txt`` that is not TREC)",
           "CSV; scorebench's own metadata goes to a ``<file>.meta.json`` sidecar", fallback=(".txt",)),
    _table("tsv", (".tsv",), "tab-separated text with a header row (``.tsv``)", "TSV", writes=False),
    _table("parquet", (".parquet", ".pq"), "Apache Parquet (``.parquet``, ``.pq``)",
           "Parquet; metadata in the schema's ``scorebench`` key"),
    _table("jsonl", (".jsonl", ".ndjson"), "JSON lines, one object a row (``.jsonl``, ``.ndjson``)", "JSON lines",
           writes=False),
    _table("json", (".json",), "a JSON array of records, or scorebench's ``{meta, scores}`` object (``.json``)",
           "JSON records; metadata in the ``meta`` object"),
    _table("markdown", (".md",), "a GitHub Markdown table (``.md``), written only", "Markdown table with escaped cells",
           reads=False),
    Format(
        name="trec_run", family="trec", files="TREC run: ``qid Q0 docid rank score tag`` lines (``.run``, or any "
        "name laid out so)", yields="ranking (run)", doc="a TREC run, read as the ranking kind's run table",
        reader=f"{_TABLE}:read_table", detector="scorebench.io.trec:detect_run", suffixes=(".run",),
        bound=(("format", "trec_run"),)),
    Format(
        name="trec_qrels", family="trec", files="TREC qrels: ``qid iteration docid relevance`` lines (``.qrels``, or "
        "any name laid out so)", yields="ranking (qrels)", doc="TREC relevance judgments, the ranking kind's qrels",
        reader=f"{_TABLE}:read_table", detector="scorebench.io.trec:detect_qrels", suffixes=(".qrels",),
        bound=(("format", "trec_qrels"),)),
    Format(
        name="trec_prefs", family="judgments", files="trec_eval preferences (``-R prefs``): ``qid ujg ujsubg docno "
        "rel_level`` lines (any name laid out so)", yields="prefs judgments (qid, jg, jsg, docid, relevance)",
        doc="trec_eval's preference judgments, read by the ranking kind's prefs measures",
        reader="scorebench.io.trec_prefs:read_trec_prefs", detector="scorebench.io.trec_prefs:detect_prefs"),
    Format(
        name="trec_qrels_jg", family="judgments", files="trec_eval qrels with judgment groups (``-R qrels_jg``): "
        "``qid ujg docno rel`` lines; named, never detected (laid out like qrels)",
        yields="qrels by judgment group (qid, jg, docid, relevance)",
        doc="qrels whose second field names the assessor (or a diversity subtopic)",
        reader="scorebench.io.trec_prefs:read_trec_qrels_jg", detector="scorebench.io.trec:detect_qrels", auto=False),
    Format(
        name="trec_qrels_prefs", family="judgments", files="qrels read as preferences (``-R qrels_prefs``): "
        "``qid ujg docno rel`` lines, each judgment group one sub-group; named, never detected (laid out like qrels)",
        yields="prefs judgments (qid, jg, jsg, docid, relevance)",
        doc="qrels as trec_eval's prefs measures read them (the prefs kind's judgments when not a prefs file)",
        reader="scorebench.io.trec_prefs:read_trec_qrels_prefs", auto=False),
    Format(
        name="trec_eval", family="trec_eval", files="the text ``trec_eval -q`` prints (measure, query, value)",
        yields="", doc="scores as trec_eval 10.0 prints them, for scripts that parse its output",
        writer="scorebench.io.trec_eval_output:write_trec_eval", auto=False),
)
