"""Shared fixtures: the reference-data folder beside the checkout, seeded generators."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

# tests/ on sys.path: the shared test helpers (_paths, _skip_summary, _browser, ...) import by name
sys.path.insert(0, str(Path(__file__).parent))
from _paths import REFERENCE, ROOT  # noqa: E402,F401  (one definition of the shared paths)
from _skip_summary import summary_lines  # noqa: E402

# Scripts that regenerate committed reference outputs in their own virtual environments
# (arena-rank with its pinned numpy and jax, lm-eval 0.4.2, Inspect, Every Eval Ever); they are
# run by hand, never collected.
collect_ignore_glob = ["reference/*.py", "fixtures/*.py", "fixtures/*/*.py"]


@pytest.fixture
def reference_dir() -> Path:
    """``../shared/reference`` (read in place, never copied); skips when absent."""
    if not REFERENCE.is_dir():
        pytest.skip(f"reference data not found at {REFERENCE}")
    return REFERENCE


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)



# --- skip summary (tests/_skip_summary.py) ----------------------------------------------------
# pytest prints skips as a bare count and ``-rs`` prints hundreds of lines (the registry contract
# tests skip by design where a property does not apply); this prints one line per skip place.


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    reports = terminalreporter.stats.get("skipped", [])
    chars = config.option.reportchars or ""
    if not reports or "s" in chars or "a" in chars or "A" in chars:
        return  # nothing skipped, or -rs / -ra already lists them
    for line in summary_lines(reports):
        terminalreporter.write_line(line)
