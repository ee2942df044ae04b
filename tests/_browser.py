"""Headless Chromium through Playwright for the page tests (boards, reports): one launcher, one skip rule."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import pytest


def chromium_executable() -> str | None:
    """The first Chromium or Chrome binary on PATH, or None."""
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


def launch_chromium(page: str) -> Iterator[Any]:
    """Yield a started browser for a module-scoped fixture; skip with a message naming ``page``
    (what goes unchecked) when Playwright or a Chromium binary is absent or cannot start."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install "
                                   f"'scorebench[test]'); {page} is not checked in a browser")
    exe = chromium_executable()
    if exe is None:
        pytest.skip(f"Chromium is not installed (Debian: apt-get install -y chromium); {page} is not checked in "
                    "a browser")
    with sync_api.sync_playwright() as p:
        try:
            b = p.chromium.launch(executable_path=exe, args=["--no-sandbox", "--disable-dev-shm-usage"])
        except Exception as exc:  # a browser that cannot start here is an environment problem
            pytest.skip(f"Chromium at {exe} did not start under Playwright: {str(exc)[:200]}")
        yield b
        b.close()
