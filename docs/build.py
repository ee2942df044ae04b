"""Build the documentation site offline, warnings as errors: ``python docs/build.py``.

The catalogues are generated from the registries and the tutorials executed while it builds
(a failing tutorial block fails the build). Output: ``docs/_build/html/index.html``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from sphinx.cmd.build import build_main

DOCS = Path(__file__).resolve().parent

if __name__ == "__main__":
    extra = sys.argv[1:]
    sys.exit(build_main(["-W", "--keep-going", "-b", "html", *extra, str(DOCS), str(DOCS / "_build" / "html")]))
