"""Shared fixtures: the reference-data folder beside the checkout, seeded generators."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT.parent / "shared" / "reference"

# Scripts that regenerate committed reference outputs in their own virtual environments
# (e.g. arena-rank with its pinned numpy and jax); they are run by hand, never collected.
collect_ignore_glob = ["reference/*.py"]


@pytest.fixture
def reference_dir() -> Path:
    """``../shared/reference`` (read in place, never copied); skips when absent."""
    if not REFERENCE.is_dir():
        pytest.skip(f"reference data not found at {REFERENCE}")
    return REFERENCE


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)
