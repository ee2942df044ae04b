"""Torch backend for the E-step matrix products (CUDA when available, else CPU).

Only the two products of size systems x items x nodes move to torch; everything else
(M-step, grids, standard errors) stays in NumPy, so both backends run the same algorithm in
float64 and give the same estimates. torch is imported here only, on first use.
"""

from __future__ import annotations

import numpy as np

from scorebench.core.errors import InputError
from scorebench.irt.quadrature import ResponseOps

__all__ = ["TorchOps"]


class TorchOps(ResponseOps):
    """:class:`ResponseOps` whose products run on a torch device in float64."""

    backend = "torch"

    def __init__(self, values: np.ndarray, device: str = "cuda") -> None:
        try:
            import torch
        except ImportError:  # pragma: no cover - torch is an optional dependency
            raise InputError("device=...: the torch path needs torch (pip install scorebench[torch])") from None
        if device == "cuda" and not torch.cuda.is_available():
            raise InputError("device='cuda' was requested but no CUDA device is available; use device='cpu' "
                             "or device=None (NumPy)")
        super().__init__(values)
        self._torch = torch
        self.device = torch.device(device)
        self._ty = torch.as_tensor(np.asarray(self.y, dtype=np.float64), device=self.device)
        self._tm = None if self.m is None else torch.as_tensor(np.asarray(self.m, dtype=np.float64),
                                                               device=self.device)

    def _tensor_of(self, x: np.ndarray):
        if x is self.y:
            return self._ty
        if x is self.m:
            return self._tm
        return self._torch.as_tensor(np.asarray(x, dtype=np.float64), device=self.device)

    def _left(self, x: np.ndarray, w: np.ndarray) -> np.ndarray:
        tw = self._torch.as_tensor(np.ascontiguousarray(w), device=self.device)
        return (self._tensor_of(x) @ tw).cpu().numpy()

    def _right(self, x: np.ndarray, post: np.ndarray) -> np.ndarray:
        tp = self._torch.as_tensor(np.ascontiguousarray(post), device=self.device)
        return (self._tensor_of(x).T @ tp).cpu().numpy()
