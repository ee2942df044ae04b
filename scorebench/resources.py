"""Resource bounds: refuse an allocation that cannot fit before making it.

Hostile or mistyped sizes (``--bootstrap 1000000000000``, ``ece(n_bins=10000000000)``, a
spec's ``n_boot = 100000000000``, a 20000 x 20000 image) must end in one readable error
naming what would be needed, not in a ``MemoryError`` (or the out-of-memory killer) after
minutes of work. Every size check of the package goes through :func:`check_allocation`.
"""

from __future__ import annotations

import os

from scorebench.core.errors import InputError

__all__ = ["available_memory", "check_allocation", "format_bytes", "MAX_IMAGE_PIXELS", "MAX_JSON_DEPTH"]

#: Largest image (width x height) decoded from an untrusted file: 16384 x 16384.
MAX_IMAGE_PIXELS = 16384 * 16384
#: Deepest nesting accepted in a JSON document (deeper ones are refused, not recursed into).
MAX_JSON_DEPTH = 1000


def available_memory() -> int:
    """Bytes of memory available now (``MemAvailable``, else free pages; 2**62 when unknown)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, OSError, ValueError):
        return 2 ** 62


def format_bytes(n: float) -> str:
    """``7.28 TiB``-style text.

    Examples
    --------
    >>> format_bytes(8 * 10**12), format_bytes(512)
    ('7.28 TiB', '512 B')
    """
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if value < 1024 or unit == "PiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.2f} {unit}"
        value /= 1024
    return f"{value:.2f} EiB"  # pragma: no cover


def check_allocation(count: int, itemsize: int, what: str, *, fraction: float = 0.8) -> int:
    """Raise :class:`~scorebench.core.errors.InputError` if ``count * itemsize`` bytes cannot fit.

    Parameters
    ----------
    count : int
        Number of elements (rounds, bins, pixels, ...); Python ints, so no overflow.
    itemsize : int
        Bytes per element (8 for float64).
    what : str
        What the size is, named in the error (e.g. ``"n_boot=1000000000000"``).
    fraction : float
        Share of the currently available memory one allocation may take.

    Returns
    -------
    int
        The bytes needed.

    Examples
    --------
    >>> check_allocation(1000, 8, "n_boot=1000")
    8000
    >>> check_allocation(10**12, 8, "n_boot=1000000000000")
    Traceback (most recent call last):
    ...
    scorebench.core.errors.InputError: n_boot=1000000000000 would need 7.28 TiB of memory, but ...
    """
    needed = int(count) * int(itemsize)
    limit = int(available_memory() * fraction)
    if needed > limit:
        raise InputError(f"{what} would need {format_bytes(needed)} of memory, but only "
                         f"{format_bytes(limit)} can be used now; use a smaller value")
    return needed
