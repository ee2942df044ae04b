"""Shared output step of the board data scripts: an atomic zstd Parquet write."""

from __future__ import annotations

from pathlib import Path

import pandas as pd


def write_parquet(table: pd.DataFrame, out: Path) -> None:
    """Write ``table`` to ``out`` through a temporary file, so a failure leaves no half file."""
    tmp = out.with_suffix(".tmp")
    table.to_parquet(tmp, index=False, compression="zstd")
    tmp.replace(out)
    print(f"wrote {out} ({len(table)} rows)")
