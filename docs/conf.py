"""Sphinx configuration: build with ``python docs/build.py`` (warnings are errors)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(DOCS / "_ext"))

from scorebench._version import __version__  # noqa: E402

project = "scorebench"
author = "the scorebench authors"
copyright = "the scorebench authors"
release = version = __version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "sphinx.ext.napoleon",
    "sb_tutorial",
]
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
autodoc_typehints = "none"
autodoc_member_order = "bysource"
autodoc_default_options = {"members": False}
mathjax_path = "https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-mml-chtml.js"  # loaded by the reader's browser

exclude_patterns = ["_build", "README.md", "architecture.md"]
templates_path: list[str] = []
html_static_path = ["_static"]
nitpicky = False
suppress_warnings = ["ref.python"]  # several public names re-exported under two modules

try:
    import pydata_sphinx_theme  # noqa: F401

    html_theme = "pydata_sphinx_theme"
    html_theme_options = {"navigation_depth": 2, "show_toc_level": 2}
except ImportError:  # the built-in theme keeps the build possible without the docs extra
    html_theme = "alabaster"


def _generate(app) -> None:
    """Write the catalogues from the registries and copy the committed board pages."""
    import sb_catalogue

    sb_catalogue.write_pages(DOCS)
    boards = DOCS / "_static" / "boards"
    if boards.exists():
        shutil.rmtree(boards)
    for page in sorted((ROOT / "leaderboards").glob("*/index.html")):
        target = boards / page.parent.name
        target.mkdir(parents=True, exist_ok=True)
        for f in page.parent.iterdir():
            if f.is_file() and f.suffix in (".html", ".css", ".js", ".png", ".svg", ".csv", ".json"):
                shutil.copy2(f, target / f.name)


def setup(app):
    app.connect("builder-inited", _generate)
