"""Paths the tests share: the repository root and the reference data beside the checkout."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT.parent / "shared" / "reference"
FIXTURES = ROOT / "tests" / "fixtures"
