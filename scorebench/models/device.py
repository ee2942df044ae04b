"""Device choice for running models: ``auto`` picks CUDA when present, else the CPU."""

from __future__ import annotations

from typing import Any

from scorebench.core.errors import InputError

__all__ = ["DEVICES", "resolve_device"]

DEVICES = ("auto", "cpu", "cuda")


def resolve_device(spec: Any = "auto") -> Any:
    """Return a ``torch.device`` for ``"auto"``, ``"cpu"``, ``"cuda"`` or ``"cuda:<i>"``.

    ``"auto"`` picks ``cuda`` when a GPU is visible, otherwise ``cpu``. Asking for CUDA on a
    machine without one raises :class:`~scorebench.core.errors.InputError` (no silent fallback).

    Examples
    --------
    >>> resolve_device("cpu").type
    'cpu'
    """
    import torch

    if isinstance(spec, torch.device):
        spec = str(spec)
    if not isinstance(spec, str):
        raise InputError(f"device: expected one of {', '.join(DEVICES)} (or cuda:<index>), got {spec!r}")
    name = spec.strip().lower()
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cpu":
        return torch.device("cpu")
    if name == "cuda" or name.startswith("cuda:"):
        if not torch.cuda.is_available():
            raise InputError(f"device {spec!r} was requested but no CUDA GPU is available "
                             "(use --device auto or cpu)")
        try:
            device = torch.device(name)
        except RuntimeError:
            raise InputError(f"device: could not parse {spec!r}; expected cuda or cuda:<index>") from None
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise InputError(f"device {spec!r}: only {torch.cuda.device_count()} CUDA device(s) present")
        return device
    raise InputError(f"device: expected one of {', '.join(DEVICES)} (or cuda:<index>), got {spec!r}")
