"""The ``mteb`` package's own loader, offline and quiet, for tests that compare against it."""

from __future__ import annotations

import logging
import os
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest


@contextmanager
def mteb_quietly() -> Iterator[Any]:
    """The ``mteb`` module (the test is skipped without it), offline, its warnings and logs silenced."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    mteb = pytest.importorskip("mteb")
    logging.disable(logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield mteb
    finally:
        logging.disable(logging.NOTSET)


def load_mteb_results(results: Path, benchmark: str = "MTEB(eng, v2)") -> Any:
    """``ResultCache.load_results`` of ``results`` (a ``results/`` folder) for ``benchmark``'s tasks."""
    with mteb_quietly() as mteb:
        return mteb.cache.ResultCache(cache_path=results.parent).load_results(
            tasks=benchmark, require_model_meta=False, validate_and_filter=True)
