"""``scorebench run``: run a local torch model over data and write its outputs as a table."""

from __future__ import annotations

from pathlib import Path

import click

from scorebench.cli._output import FORMAT_OPTION, emit, output_option


def announce_models() -> None:
    """Name every model file or callable on standard error before it runs."""
    from scorebench.models.extractor import announce_to_stderr

    announce_to_stderr()


SHA256_OPTION = click.option("--sha256", "sha256", default=None,
                             help="Run the model file only if its SHA-256 is this (hex); for module:callable, "
                                  "the module's source file.")
TRUST_OPTION = click.option("--trust-model", "trust_model", is_flag=True, default=False,
                            help="Run the model file or module:callable without a --sha256 pin (a model is "
                                 "code: only for models you trust).")


@click.command("run")
@click.option("--model", "model", required=True,
              help="TorchScript file (model.pt) or module:callable / file.py:callable returning an "
                   "nn.Module; loaded from local files only.")
@click.option("--data", "data", required=True, type=click.Path(exists=True, path_type=Path),
              help=".npy, .npz, a table of numeric columns, or a folder of images.")
@output_option(required=True, help="Table to write (atomically): .csv, .parquet, .json, ...")
@click.option("--device", default="auto", show_default=True,
              help="auto (CUDA when present, else CPU), cpu, cuda or cuda:<index>.")
@click.option("--batch-size", default=64, show_default=True, type=click.IntRange(min=1))
@click.option("--what", "what", type=click.Choice(["features", "spatial", "logits", "probs", "predictions"]),
              default="features", show_default=True,
              help="features -> f0..; spatial -> s0.. (for sfid); logits -> logit_*; probs (softmax) -> p_*; "
                   "predictions -> argmax.")
@click.option("--system", default=None, help="Add a system column with this name (e.g. real).")
@click.option("--amp", is_flag=True, default=False, help="float16 mixed precision on CUDA.")
@SHA256_OPTION
@TRUST_OPTION
@FORMAT_OPTION
def command(model, data, output, device, batch_size, what, system, amp, sha256, trust_model, fmt) -> None:
    """Run --model over --data and write features, logits, probabilities or predictions.

    A model is code: a TorchScript file or module:callable runs with your permissions. A
    model file runs only with --sha256 HEX (its pinned SHA-256) or --trust-model; the file
    or callable about to run is named on standard error first.

    The table carries an ``extractor`` column (a fingerprint of the weights and the
    preprocessing), so tables from different extractors are never compared silently.
    """
    from scorebench.models import features_table

    announce_models()
    table = features_table(model, data, device=device, batch_size=batch_size, output=what, system=system,
                           amp=amp, expected_sha256=sha256, trust=trust_model)
    emit(table, output, fmt)
    click.echo(f"extractor {table.attrs['extractor_name']} ({table.attrs['extractor']}) on "
               f"{table.attrs['device']}", err=True)
