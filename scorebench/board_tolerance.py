"""Tolerances of ``scorebench leaderboard build --check`` and ``leaderboard diff``.

A module of its own (no imports) so that the command line can print them in its help
without importing the leaderboard package (cold start of ``scorebench --help``).
Numbers may differ by ``|new - old| <= ATOL + RTOL * max(|old|, |new|)``: BLAS builds and
thread counts change the last bits.

Examples
--------
>>> from scorebench.core.tolerance import ATOL, RTOL
>>> RTOL, ATOL
(1e-06, 1e-12)
"""

RTOL = 1e-6
ATOL = 1e-12
