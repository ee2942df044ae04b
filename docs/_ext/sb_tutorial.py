"""``.. runcode::``: a tutorial's code block executed while the site builds.

Every ``runcode`` block of a document runs, in order, in one namespace per document, with the
working directory set to a fresh temporary folder (``REPO`` names the checkout's root). The
page shows the code and what it printed. A block that raises is a build error, so
``sphinx -W`` fails and the tutorial cannot rot. ``:expect-error: ErrorClass`` marks a block
that must raise that error (shown with its one-line message).
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
import traceback
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive, directives

REPO = Path(__file__).resolve().parents[2]
_NAMESPACES: dict[str, dict] = {}
_FOLDERS: dict[str, tempfile.TemporaryDirectory] = {}


class RunCode(Directive):
    has_content = True
    option_spec = {"expect-error": directives.unchanged, "hide-output": directives.flag}

    def run(self) -> list[nodes.Node]:
        env = self.state.document.settings.env
        doc = env.docname
        if doc not in _NAMESPACES:
            _FOLDERS[doc] = tempfile.TemporaryDirectory(prefix="sbdoc-")
            _NAMESPACES[doc] = {"__name__": f"tutorial_{doc.replace('/', '_')}", "REPO": REPO}
        code = "\n".join(self.content)
        out = io.StringIO()
        expected = self.options.get("expect-error")
        here = os.getcwd()
        try:
            os.chdir(_FOLDERS[doc].name)
            with contextlib.redirect_stdout(out):
                exec(compile(code, f"<{doc}:{self.lineno}>", "exec"), _NAMESPACES[doc])
            if expected:
                raise AssertionError(f"the block was expected to raise {expected}")
        except Exception as exc:  # noqa: BLE001 - every failure of a tutorial is reported
            if expected and type(exc).__name__ == expected:
                out.write(f"{type(exc).__name__}: {exc}\n")
            else:
                detail = "".join(traceback.format_exception(exc)[-6:])
                return [self.state.document.reporter.error(
                    f"tutorial code block failed in {doc} (line {self.lineno}):\n{detail}", line=self.lineno)]
        finally:
            os.chdir(here)
        result = [nodes.literal_block(code, code, language="python")]
        text = out.getvalue().rstrip()
        if text and "hide-output" not in self.options:
            block = nodes.literal_block(text, text, language="text")
            block["classes"].append("runcode-output")
            result.append(block)
        return result


def _purge(app, env, docname) -> None:
    _NAMESPACES.pop(docname, None)
    folder = _FOLDERS.pop(docname, None)
    if folder is not None:
        folder.cleanup()


def setup(app):
    app.add_directive("runcode", RunCode)
    app.connect("env-purge-doc", _purge)
    return {"version": "1", "parallel_read_safe": False}
