"""The reading and writing wing: tables in and out, TREC files, trec_eval output, and the
readers of evaluation harnesses' result files (:mod:`scorebench.io.readers`).

:mod:`.formats` is the one registry of the formats (detection, reading, writing; the CLI
asks it, never looks at a file itself); :mod:`.atomic` writes files all-or-nothing.
:mod:`.tables` reads and writes scorebench tables (CSV, Parquet, JSON lines, Markdown) with
their provenance; :mod:`.trec` / :mod:`.trec_prefs` the TREC run, qrels and preference files;
:mod:`.trec_eval_output` trec_eval's text output; :mod:`.eee` / :mod:`.hf` the Every Eval
Ever and Hugging Face writers. See ``docs/architecture.md``.
"""

from scorebench.io.tables import read_results, read_table, write_table

__all__ = ["read_results", "read_table", "write_table"]
