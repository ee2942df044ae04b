"""``scorebench diversity``: intent-aware measures (ndeval's) of a run, per query."""

from __future__ import annotations

from pathlib import Path

import click

from scorebench.cli._input import load_table
from scorebench.cli._output import FORMAT_OPTION, OUTPUT_OPTION, emit
from scorebench.io.formats import detect_format
from scorebench.io.tables import READ_FORMATS, read_table
from scorebench.io.trec_prefs import read_trec_qrels_jg
from scorebench.metrics.ranking.diversity_kind import diversity_scores


@click.command("diversity")
@click.argument("run", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("qrels", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--k", "k", default=20, show_default=True, type=int, help="Cut-off of the @k measures.")
@click.option("--alpha", default=0.5, show_default=True, type=float, help="Redundancy penalty.")
@click.option("--beta", default=0.5, show_default=True, type=float, help="NRBP persistence.")
@OUTPUT_OPTION
@FORMAT_OPTION
def command(run, qrels, k, alpha, beta, output, fmt) -> None:
    """alpha-nDCG, ERR-IA, NRBP, P-IA, AP-IA and S-recall of RUN per query. QRELS: TREC
    diversity qrels (qid subtopic docid rel) or a table with qid, subtopic, docid, relevance."""
    if detect_format(qrels, READ_FORMATS) in ("trec_qrels", "trec_run"):
        judged = read_trec_qrels_jg(qrels).rename(columns={"jg": "subtopic"})
    else:
        judged = read_table(qrels)
    emit(diversity_scores(load_table(run, None, ()), judged, k=k, alpha=alpha, beta=beta), output, fmt)
