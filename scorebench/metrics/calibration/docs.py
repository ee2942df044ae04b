"""Parameter descriptions shared by the calibration metrics' docstrings (filled in with
:func:`scorebench.core.docstrings.fill_doc`)."""

from __future__ import annotations

__all__ = ["SECTIONS"]

#: Shared numpydoc parameter blocks, by marker name.
SECTIONS = {
    "binary": """
y : array_like, shape (n,)
    Outcomes in {0, 1}.
p : array_like, shape (n,)
    Forecast probabilities of ``y = 1``.
""",
}
