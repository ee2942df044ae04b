"""BLAS thread control for the IRT fits: one thread for small problems.

On small response matrices starting BLAS threads costs more than the threads save, so the
EM and scoring loops run single-threaded below a size threshold (``threadpoolctl`` when it
is installed; otherwise nothing changes).
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext

__all__ = ["blas_limit", "SMALL_CELLS"]

#: Problems with at most this many cells (rows x items x quadrature points) run on one BLAS thread.
SMALL_CELLS = 2e7


def blas_limit(cells: float) -> AbstractContextManager:
    """A context manager limiting BLAS to one thread when ``cells <= SMALL_CELLS``.

    Examples
    --------
    >>> with blas_limit(1e3):
    ...     pass
    """
    if cells > SMALL_CELLS:
        return nullcontext()
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover
        return nullcontext()
    return threadpool_limits(1)
